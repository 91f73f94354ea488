"""The one friction law of every contact and brake: the elasto-plastic bristle (a sticking Coulomb law), numba.

A bristle is a tangential spring k_t and damper c_t on a stretch u that follows the relative sliding velocity
(du/dt = v_t), its force capped at mu F_n. Below mu F_n it holds the parts still (creep only by the damper's
relaxation, none at rest); at mu F_n it slides with F_t = mu F_n. At a step's start the stretch is return-mapped
(`return_map`): its normal part dropped and its length capped at mu F_n / k_t; the stored energy that frees is
dissipated. A scalar bristle (`slider_return_map`, `slider_force`) is the Coulomb brake of a prismatic joint.
Vectors are 3-tuples (solver.vec3); the caller keeps u in its state (in a frame of its choice) and integrates v_t.
"""
from __future__ import annotations

from numba import njit

from solver.vec3 import dot, norm, scl, sub


@njit(cache=True, error_model="numpy", inline="always")
def return_map(u, n, mu, fn, kt):
    """Stretch u with its part along the unit normal n dropped and its length capped at mu fn / kt; and the energy
    that frees (0.5 k_t (|u|^2 - |u_new|^2), to be counted dissipated)."""
    ut = sub(u, scl(n, dot(u, n)))
    a = norm(ut)
    lim = mu * fn / kt
    if a > lim:
        ut = scl(ut, lim / a)
    return ut, 0.5 * kt * (dot(u, u) - dot(ut, ut))


@njit(cache=True, error_model="numpy", inline="always")
def bristle_force(u, n, vt, fn, mu, kt, ct):
    """Tangential force -k_t u_t - c_t v_t capped at mu fn (on the body whose sliding velocity is vt), the stored
    energy 0.5 k_t |u|^2 and its rate k_t u . v_t (the part of the force's power that is stored, not dissipated)."""
    ut = sub(u, scl(n, dot(u, n)))
    ft = sub(scl(ut, -kt), scl(vt, ct))
    f = norm(ft)
    cap = mu * fn
    if f > cap:
        ft = scl(ft, cap / f)
    return ft, 0.5 * kt * dot(u, u), kt * dot(u, vt)


@njit(cache=True, error_model="numpy", inline="always")
def slider_return_map(z, lim, kt):
    """Scalar stretch z capped at |z| <= lim / k_t; and the energy that frees."""
    zl = lim / kt if kt > 0.0 else 0.0
    zn = min(zl, max(-zl, z))
    return zn, 0.5 * kt * (z * z - zn * zn)


@njit(cache=True, error_model="numpy", inline="always")
def slider_force(z, v, lim, kt, ct):
    """Force -k_t z - c_t v capped at lim (on the part moving at v), stored 0.5 k_t z^2 and its rate k_t z v."""
    f = -kt * z - ct * v
    if f > lim:
        f = lim
    elif f < -lim:
        f = -lim
    return f, 0.5 * kt * z * z, kt * z * v
