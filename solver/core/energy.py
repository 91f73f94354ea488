"""Energy bookkeeping (numba): kinetic energy of a generalized-coordinate system and the balance every type
records (kinetic + stored + dissipated - work done by drives = constant)."""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def kinetic(M, qd, n):
    """0.5 qd^T M qd (M symmetric, full)."""
    e = 0.0
    for i in range(n):
        for j in range(n):
            e += qd[i] * M[i, j] * qd[j]
    return 0.5 * e


@njit(cache=True, error_model="numpy")
def total(kinetic_energy, stored, dissipated, work):
    """The balance a run's total_energy channel shows: constant when the bookkeeping is complete."""
    return kinetic_energy + stored + dissipated - work
