"""Rate resolution (numba): joint rates for a commanded point velocity through the damped-least-squares Jacobian
inverse, the damping growing as the manipulability measure falls near a singular pose (Nakamura & Hanafusa)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core.bodies import cholesky_factor, cholesky_solve


@njit(cache=True, error_model="numpy")
def dls_rates(Jac, v, lam_max, w_min, out):
    """out = Jac^T (Jac Jac^T + lam^2 I)^-1 v, lam^2 = lam_max^2 (1 - w/w_min)^2 when the manipulability
    w = sqrt(det Jac Jac^T) is below w_min (else 0). Returns w."""
    m, n = Jac.shape
    A = np.empty((m, m))
    for r in range(m):
        for c in range(m):
            s = 0.0
            for k in range(n):
                s += Jac[r, k] * Jac[c, k]
            A[r, c] = s
    L = A.copy()
    ok = cholesky_factor(L, m)
    w = 1.0
    if ok:
        for r in range(m):
            w *= L[r, r]
    else:
        w = 0.0
    lam2 = 0.0
    if w < w_min:
        lam2 = lam_max * lam_max * (1.0 - w / w_min) ** 2
    for r in range(m):
        A[r, r] += lam2
    if not cholesky_factor(A, m):
        out[:n] = 0.0
        return w
    y = np.empty(m)
    cholesky_solve(A, v, m, y)
    for k in range(n):
        s = 0.0
        for r in range(m):
            s += Jac[r, k] * y[r]
        out[k] = s
    return w


@njit(cache=True, error_model="numpy")
def rotate_to_world(R9, a, out):
    """out = R a of a 3-vector a given in a frame whose rotation R (row-major 9) maps it to world."""
    for r in range(3):
        out[r] = R9[3 * r] * a[0] + R9[3 * r + 1] * a[1] + R9[3 * r + 2] * a[2]
    return math.sqrt(out[0] ** 2 + out[1] ** 2 + out[2] ** 2)
