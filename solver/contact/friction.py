"""Regularized Coulomb friction (the contact library's stick ramp, as in pairset.evaluate_pairs): a reusable law."""
from __future__ import annotations

import math

from numba import njit


@njit(cache=True, inline="always")
def coulomb_ramp(fn, vx, vy, vz, mu, v_stick, out):
    """Friction force on the sliding side into out (3): -mu fn v_t / |v_t|, linear below the stick speed v_stick
    (v: tangential sliding velocity). Returns the dissipated power (>= 0)."""
    slip = math.sqrt(vx * vx + vy * vy + vz * vz)
    g = mu * fn / (slip if slip > v_stick else v_stick)
    out[0], out[1], out[2] = -g * vx, -g * vy, -g * vz
    return g * slip * slip
