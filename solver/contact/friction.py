"""The engine's sticking friction law (solver/friction.py's bristle) at a contact point whose stretch is kept in a body's
frame: one call per point and step (a cable's detection point on a rod, any point contact of a flexible part)."""
from __future__ import annotations

from numba import njit

from solver.friction import bristle_force, return_map


@njit(cache=True, error_model="numpy", inline="always")
def point_bristle(U, j, R, n, vt, fn, mu, kt, ct):
    """Friction on the sliding side at a closed point: its stretch U[j:j+3] (in the frame of R, body -> world)
    return-mapped and stored back, and the bristle's force (vt: tangential sliding velocity, world). Returns (force
    (3-tuple, world), stored energy after the map, energy freed by the map, dissipated power). The stretch then
    advances with the step's new velocities (`advance_stretch`), as the positions of a symplectic step do; the power
    returned is the force's on the sliding side (ft . vt, <= 0 when it slides)."""
    u = (R[0, 0] * U[j] + R[0, 1] * U[j + 1] + R[0, 2] * U[j + 2],
         R[1, 0] * U[j] + R[1, 1] * U[j + 1] + R[1, 2] * U[j + 2],
         R[2, 0] * U[j] + R[2, 1] * U[j + 1] + R[2, 2] * U[j + 2])
    u, freed = return_map(u, n, mu, fn, kt)
    ft, e_t, p_t = bristle_force(u, n, vt, fn, mu, kt, ct)
    U[j] = R[0, 0] * u[0] + R[1, 0] * u[1] + R[2, 0] * u[2]
    U[j + 1] = R[0, 1] * u[0] + R[1, 1] * u[1] + R[2, 1] * u[2]
    U[j + 2] = R[0, 2] * u[0] + R[1, 2] * u[1] + R[2, 2] * u[2]
    return ft, e_t, freed, ft[0] * vt[0] + ft[1] * vt[1] + ft[2] * vt[2]


@njit(cache=True, error_model="numpy", inline="always")
def advance_stretch(U, j, R, n, v, kt, h):
    """Stretch U[j:j+3] (frame of R) advanced by h times the tangential part (normal n) of the sliding velocity v;
    returns the stored energy's change (the step's power balance: work ft . vt h = its change + the dissipated)."""
    vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2]
    w0, w1, w2 = h * (v[0] - vn * n[0]), h * (v[1] - vn * n[1]), h * (v[2] - vn * n[2])
    e0 = U[j] * U[j] + U[j + 1] * U[j + 1] + U[j + 2] * U[j + 2]
    U[j] += R[0, 0] * w0 + R[1, 0] * w1 + R[2, 0] * w2
    U[j + 1] += R[0, 1] * w0 + R[1, 1] * w1 + R[2, 1] * w2
    U[j + 2] += R[0, 2] * w0 + R[1, 2] * w1 + R[2, 2] * w2
    return 0.5 * kt * (U[j] * U[j] + U[j + 1] * U[j + 1] + U[j + 2] * U[j + 2] - e0)


@njit(cache=True, error_model="numpy", inline="always")
def point_open(U, j, kt):
    """An open point: its stretch released (set to 0); returns the stored energy that frees (counted dissipated)."""
    e = U[j] * U[j] + U[j + 1] * U[j + 1] + U[j + 2] * U[j + 2]
    if e > 0.0:
        U[j], U[j + 1], U[j + 2] = 0.0, 0.0, 0.0
        return 0.5 * kt * e
    return 0.0
