"""Integrator parts (numba): the classical RK4 stages and the per-contact substep count.

A type's step loop evaluates its derivative at four stages: `stage` forms each stage's state, `rk4_update` the
step; while a contact pair is closed the step is split into the most substeps any closed pair needs (`substeps`,
each pair's count from its stiffness and the step, set when the model is packed).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always")
def substeps(sub, off, c_act, npair, m):
    """The most substeps a closed contact pair needs (sub[off + p] of pair p), at least m."""
    for p in range(npair):
        if c_act[p] == 1 and sub[off + p] > m:
            m = int(sub[off + p])
    return m


@njit(cache=True, error_model="numpy")
def stage(s, k, a, out):
    """out = s + a k (an RK4 stage's state)."""
    for i in range(s.shape[0]):
        out[i] = s[i] + a * k[i]


@njit(cache=True, error_model="numpy")
def rk4_update(s, k1, k2, k3, k4, h):
    """s += h/6 (k1 + 2 k2 + 2 k3 + k4)."""
    for i in range(s.shape[0]):
        s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
