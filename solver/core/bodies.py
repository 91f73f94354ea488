"""Rigid bodies and joints (numba): a revolute-joint tree on a fixed base, by CRBA and recursive Newton-Euler, and
the Cholesky solve of a mass matrix (every type's minimal-coordinate chain solves with these two functions).

A tree is one float64 array JOINT (n, NJ), parents before children: joint i turns link i about `axis` (link frame)
at `offset` in its parent's link frame (parent -1: the base, world frame); link i has mass, CoM (link frame) and
inertia about its CoM (link frame). The workspace KIN (n, NK) holds a pose: R (9), joint origin, joint axis and CoM
(world). Loads at a point become generalized forces through `add_point_force` (J^T F). A joint may slide instead
(J_PRISMATIC 1: link i moves along `axis` by q, unturned), so a free base is six joints (three slides, three turns).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

J_PARENT, J_AXIS, J_OFFSET, J_MASS, J_COM, J_INERTIA, J_PRISMATIC = 0, 1, 4, 7, 8, 11, 20
NJ = 21
K_R, K_ORIGIN, K_AXIS, K_COM = 0, 9, 12, 15
NK = 18


def joint_row(parent: int, axis, offset, mass: float, com, inertia, prismatic: bool = False) -> list[float]:
    """One JOINT row (plain Python, when a model is packed)."""
    return [float(parent), *map(float, axis), *map(float, offset), float(mass), *map(float, com),
            *(float(x) for row in inertia for x in row), 1.0 if prismatic else 0.0]


def rigid_sum(bodies) -> tuple[float, list[float], list[list[float]]]:
    """Mass, CoM and inertia about the CoM of rigidly joined bodies, each (mass, com, inertia about its com) in one
    frame (plain Python: a payload held by its carrier becomes one link)."""
    m = sum(b[0] for b in bodies)
    c = sum(b[0] * np.asarray(b[1], float) for b in bodies) / m
    inertia = np.zeros((3, 3))
    for mb, cb, ib in bodies:
        d = np.asarray(cb, float) - c
        inertia += np.asarray(ib, float) + mb * ((d @ d) * np.eye(3) - np.outer(d, d))
    return float(m), c.tolist(), inertia.tolist()


@njit(cache=True, error_model="numpy")
def tree_pose(JOINT, q, KIN):
    """World pose of every link of the tree at joint angles q into KIN."""
    for i in range(JOINT.shape[0]):
        p = int(JOINT[i, J_PARENT])
        ax, ay, az = JOINT[i, J_AXIS], JOINT[i, J_AXIS + 1], JOINT[i, J_AXIS + 2]
        slide = JOINT[i, J_PRISMATIC] > 0.5
        c, s = (1.0, 0.0) if slide else (math.cos(q[i]), math.sin(q[i]))
        C = 1.0 - c
        Rj = (c + ax * ax * C, ax * ay * C - az * s, ax * az * C + ay * s,
              ay * ax * C + az * s, c + ay * ay * C, ay * az * C - ax * s,
              az * ax * C - ay * s, az * ay * C + ax * s, c + az * az * C)      # Rodrigues: rotation about the axis
        for r in range(3):
            o = JOINT[i, J_OFFSET + r] + (JOINT[i, J_AXIS + r] * q[i] if slide else 0.0)
            if p >= 0:
                o = KIN[p, K_ORIGIN + r]
                for k in range(3):
                    o += KIN[p, K_R + 3 * r + k] * (JOINT[i, J_OFFSET + k] + (JOINT[i, J_AXIS + k] * q[i] if slide
                                                                              else 0.0))
            KIN[i, K_ORIGIN + r] = o
            for col in range(3):
                v = 0.0
                for k in range(3):
                    pr = KIN[p, K_R + 3 * r + k] if p >= 0 else (1.0 if r == k else 0.0)
                    v += pr * Rj[3 * k + col]
                KIN[i, K_R + 3 * r + col] = v
        for r in range(3):
            a = 0.0
            g = KIN[i, K_ORIGIN + r]
            for k in range(3):
                a += KIN[i, K_R + 3 * r + k] * JOINT[i, J_AXIS + k]
                g += KIN[i, K_R + 3 * r + k] * JOINT[i, J_COM + k]
            KIN[i, K_AXIS + r] = a
            KIN[i, K_COM + r] = g


@njit(cache=True, error_model="numpy", inline="always")
def _ancestor(JOINT, j, i):
    """Whether joint j moves link i (j is i or one of its ancestors)."""
    while i >= 0:
        if i == j:
            return True
        i = int(JOINT[i, J_PARENT])
    return False


@njit(cache=True, error_model="numpy")
def point_velocity(JOINT, KIN, qd, link, x, out):
    """World velocity of the world point x riding on `link`."""
    out[:] = 0.0
    for j in range(JOINT.shape[0]):
        if _ancestor(JOINT, j, link):
            dx, dy, dz = x[0] - KIN[j, K_ORIGIN], x[1] - KIN[j, K_ORIGIN + 1], x[2] - KIN[j, K_ORIGIN + 2]
            zx, zy, zz = KIN[j, K_AXIS], KIN[j, K_AXIS + 1], KIN[j, K_AXIS + 2]
            if JOINT[j, J_PRISMATIC] > 0.5:
                out[0] += zx * qd[j]
                out[1] += zy * qd[j]
                out[2] += zz * qd[j]
                continue
            out[0] += (zy * dz - zz * dy) * qd[j]
            out[1] += (zz * dx - zx * dz) * qd[j]
            out[2] += (zx * dy - zy * dx) * qd[j]


@njit(cache=True, error_model="numpy")
def add_point_force(JOINT, KIN, link, x, f, tau):
    """tau += J^T f of a world force f at the world point x on `link`."""
    for j in range(JOINT.shape[0]):
        if _ancestor(JOINT, j, link):
            if JOINT[j, J_PRISMATIC] > 0.5:
                tau[j] += KIN[j, K_AXIS] * f[0] + KIN[j, K_AXIS + 1] * f[1] + KIN[j, K_AXIS + 2] * f[2]
                continue
            dx, dy, dz = x[0] - KIN[j, K_ORIGIN], x[1] - KIN[j, K_ORIGIN + 1], x[2] - KIN[j, K_ORIGIN + 2]
            tau[j] += (KIN[j, K_AXIS] * (dy * f[2] - dz * f[1]) + KIN[j, K_AXIS + 1] * (dz * f[0] - dx * f[2]) +
                       KIN[j, K_AXIS + 2] * (dx * f[1] - dy * f[0]))


@njit(cache=True, error_model="numpy", inline="always")
def _world_inertia(JOINT, KIN, i, r, c):
    """Entry (r, c) of link i's inertia about its CoM in the world frame, R I R^T."""
    v = 0.0
    for a in range(3):
        for b in range(3):
            v += KIN[i, K_R + 3 * r + a] * JOINT[i, J_INERTIA + 3 * a + b] * KIN[i, K_R + 3 * c + b]
    return v


@njit(cache=True, error_model="numpy", inline="always")
def _column(JOINT, KIN, a, x):
    """Joint a's Jacobian column at the world point x: linear (z x d, or z when it slides) and angular (z or 0)."""
    z0, z1, z2 = KIN[a, K_AXIS], KIN[a, K_AXIS + 1], KIN[a, K_AXIS + 2]
    if JOINT[a, J_PRISMATIC] > 0.5:
        return z0, z1, z2, 0.0, 0.0, 0.0
    d0, d1, d2 = x[0] - KIN[a, K_ORIGIN], x[1] - KIN[a, K_ORIGIN + 1], x[2] - KIN[a, K_ORIGIN + 2]
    return z1 * d2 - z2 * d1, z2 * d0 - z0 * d2, z0 * d1 - z1 * d0, z0, z1, z2


@njit(cache=True, error_model="numpy")
def tree_mass_matrix(JOINT, KIN, M):
    """Composite-rigid-body mass matrix sum_i m_i Jv_i^T Jv_i + Jw_i^T I_i Jw_i (Jacobians at the links' CoMs)."""
    n = JOINT.shape[0]
    M[:n, :n] = 0.0
    Iw = np.empty((3, 3))
    x = np.empty(3)
    for i in range(n):
        m = JOINT[i, J_MASS]
        for r in range(3):
            x[r] = KIN[i, K_COM + r]
            for c in range(3):
                Iw[r, c] = _world_inertia(JOINT, KIN, i, r, c)
        for a in range(n):
            if not _ancestor(JOINT, a, i):
                continue
            va0, va1, va2, za0, za1, za2 = _column(JOINT, KIN, a, x)
            Iz0 = Iw[0, 0] * za0 + Iw[0, 1] * za1 + Iw[0, 2] * za2
            Iz1 = Iw[1, 0] * za0 + Iw[1, 1] * za1 + Iw[1, 2] * za2
            Iz2 = Iw[2, 0] * za0 + Iw[2, 1] * za1 + Iw[2, 2] * za2
            for b in range(a + 1):
                if not _ancestor(JOINT, b, i):
                    continue
                vb0, vb1, vb2, zb0, zb1, zb2 = _column(JOINT, KIN, b, x)
                M[a, b] += m * (va0 * vb0 + va1 * vb1 + va2 * vb2) + Iz0 * zb0 + Iz1 * zb1 + Iz2 * zb2
    for a in range(n):
        for b in range(a):
            M[b, a] = M[a, b]


@njit(cache=True, error_model="numpy")
def point_jacobian(JOINT, KIN, link, x, Jac):
    """Jac (6, n): the world velocity (rows 0-2) and angular velocity (3-5) of the point x on `link` per joint rate."""
    for j in range(JOINT.shape[0]):
        for r in range(6):
            Jac[r, j] = 0.0
        if _ancestor(JOINT, j, link):
            Jac[0, j], Jac[1, j], Jac[2, j], Jac[3, j], Jac[4, j], Jac[5, j] = _column(JOINT, KIN, j, x)


@njit(cache=True, error_model="numpy")
def add_body_moment(JOINT, KIN, link, mom, tau):
    """tau += Jw^T m of a world moment m on `link`."""
    for j in range(JOINT.shape[0]):
        if _ancestor(JOINT, j, link) and JOINT[j, J_PRISMATIC] < 0.5:
            tau[j] += KIN[j, K_AXIS] * mom[0] + KIN[j, K_AXIS + 1] * mom[1] + KIN[j, K_AXIS + 2] * mom[2]


@njit(cache=True, error_model="numpy")
def tree_momentum(JOINT, KIN, qd, out):
    """Linear momentum (out[0:3]) and angular momentum about the world origin (out[3:6]) of the tree's links."""
    out[:] = 0.0
    v = np.empty(3)
    for i in range(JOINT.shape[0]):
        m = JOINT[i, J_MASS]
        c = KIN[i, K_COM:K_COM + 3]
        point_velocity(JOINT, KIN, qd, i, c, v)
        w0, w1, w2 = 0.0, 0.0, 0.0
        for j in range(i + 1):
            if _ancestor(JOINT, j, i) and JOINT[j, J_PRISMATIC] < 0.5:
                w0 += KIN[j, K_AXIS] * qd[j]
                w1 += KIN[j, K_AXIS + 1] * qd[j]
                w2 += KIN[j, K_AXIS + 2] * qd[j]
        out[0] += m * v[0]
        out[1] += m * v[1]
        out[2] += m * v[2]
        out[3] += m * (c[1] * v[2] - c[2] * v[1])
        out[4] += m * (c[2] * v[0] - c[0] * v[2])
        out[5] += m * (c[0] * v[1] - c[1] * v[0])
        for r in range(3):
            out[3 + r] += _world_inertia(JOINT, KIN, i, r, 0) * w0 + _world_inertia(JOINT, KIN, i, r, 1) * w1 + \
                _world_inertia(JOINT, KIN, i, r, 2) * w2


@njit(cache=True, error_model="numpy")
def tree_bias(JOINT, KIN, qd, W, bias):
    """Velocity-product generalized forces C(q, qd) qd by recursive Newton-Euler at zero joint acceleration (no
    gravity in orbit). W (n, 15) is scratch: omega, origin and CoM accelerations, force, moment about the origin."""
    n = JOINT.shape[0]
    for i in range(n):
        p = int(JOINT[i, J_PARENT])
        qr = 0.0 if JOINT[i, J_PRISMATIC] > 0.5 else qd[i]      # a slide turns nothing
        for r in range(3):
            W[i, r] = (W[p, r] if p >= 0 else 0.0) + KIN[i, K_AXIS + r] * qr
        # origin acceleration: a_p + alpha_p x d + w_p x (w_p x d) with alpha from the products w_p x z qd
        for r in range(3):
            W[i, 3 + r] = 0.0
        if p >= 0:
            d = KIN[i, K_ORIGIN:K_ORIGIN + 3] - KIN[p, K_ORIGIN:K_ORIGIN + 3]
            wp = W[p, 0:3]
            al = W[p, 12:15]
            wd = (wp[1] * d[2] - wp[2] * d[1], wp[2] * d[0] - wp[0] * d[2], wp[0] * d[1] - wp[1] * d[0])
            for r in range(3):
                W[i, 3 + r] = W[p, 3 + r] + (al[(r + 1) % 3] * d[(r + 2) % 3] - al[(r + 2) % 3] * d[(r + 1) % 3]) + \
                    (wp[(r + 1) % 3] * wd[(r + 2) % 3] - wp[(r + 2) % 3] * wd[(r + 1) % 3])
            if JOINT[i, J_PRISMATIC] > 0.5:       # Coriolis of a slide: 2 w_p x z qd
                z = KIN[i, K_AXIS:K_AXIS + 3]
                for r in range(3):
                    W[i, 3 + r] += 2.0 * qd[i] * (wp[(r + 1) % 3] * z[(r + 2) % 3] - wp[(r + 2) % 3] * z[(r + 1) % 3])
        wp0 = W[p, 0] if p >= 0 else 0.0
        wp1 = W[p, 1] if p >= 0 else 0.0
        wp2 = W[p, 2] if p >= 0 else 0.0
        z = KIN[i, K_AXIS:K_AXIS + 3]
        ap = (W[p, 12], W[p, 13], W[p, 14]) if p >= 0 else (0.0, 0.0, 0.0)
        al = ((wp1 * z[2] - wp2 * z[1]) * qr + ap[0], (wp2 * z[0] - wp0 * z[2]) * qr + ap[1],
              (wp0 * z[1] - wp1 * z[0]) * qr + ap[2])
        W[i, 12], W[i, 13], W[i, 14] = al
        w = W[i, 0:3]
        c = KIN[i, K_COM:K_COM + 3] - KIN[i, K_ORIGIN:K_ORIGIN + 3]
        wc = (w[1] * c[2] - w[2] * c[1], w[2] * c[0] - w[0] * c[2], w[0] * c[1] - w[1] * c[0])
        m = JOINT[i, J_MASS]
        F = (m * (W[i, 3] + al[1] * c[2] - al[2] * c[1] + w[1] * wc[2] - w[2] * wc[1]),
             m * (W[i, 4] + al[2] * c[0] - al[0] * c[2] + w[2] * wc[0] - w[0] * wc[2]),
             m * (W[i, 5] + al[0] * c[1] - al[1] * c[0] + w[0] * wc[1] - w[1] * wc[0]))
        Ia = [0.0, 0.0, 0.0]
        Iw = [0.0, 0.0, 0.0]
        for r in range(3):
            for k in range(3):
                Ir = _world_inertia(JOINT, KIN, i, r, k)
                Ia[r] += Ir * al[k]
                Iw[r] += Ir * w[k]
        N = (Ia[0] + w[1] * Iw[2] - w[2] * Iw[1], Ia[1] + w[2] * Iw[0] - w[0] * Iw[2],
             Ia[2] + w[0] * Iw[1] - w[1] * Iw[0])
        W[i, 6], W[i, 7], W[i, 8] = F
        W[i, 9] = N[0] + c[1] * F[2] - c[2] * F[1]
        W[i, 10] = N[1] + c[2] * F[0] - c[0] * F[2]
        W[i, 11] = N[2] + c[0] * F[1] - c[1] * F[0]
    for i in range(n - 1, -1, -1):   # children's loads onto their parents, moments moved to the parent's origin
        f = 6 if JOINT[i, J_PRISMATIC] > 0.5 else 9      # a slide takes the force, a turn the moment
        bias[i] = KIN[i, K_AXIS] * W[i, f] + KIN[i, K_AXIS + 1] * W[i, f + 1] + KIN[i, K_AXIS + 2] * W[i, f + 2]
        p = int(JOINT[i, J_PARENT])
        if p >= 0:
            d = KIN[i, K_ORIGIN:K_ORIGIN + 3] - KIN[p, K_ORIGIN:K_ORIGIN + 3]
            W[p, 6] += W[i, 6]
            W[p, 7] += W[i, 7]
            W[p, 8] += W[i, 8]
            W[p, 9] += W[i, 9] + d[1] * W[i, 8] - d[2] * W[i, 7]
            W[p, 10] += W[i, 10] + d[2] * W[i, 6] - d[0] * W[i, 8]
            W[p, 11] += W[i, 11] + d[0] * W[i, 7] - d[1] * W[i, 6]


@njit(cache=True, error_model="numpy", inline="always")
def cholesky_factor(M, n):
    """Overwrite the lower triangle of M (symmetric positive definite) by its Cholesky factor; False if not SPD."""
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= M[j, k] * M[j, k]
        if s <= 0.0:
            return False
        d = math.sqrt(s)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    return True


@njit(cache=True, error_model="numpy", inline="always")
def cholesky_solve(M, b, n, x):
    """Solve L L^T x = b with the Cholesky factor L in the lower triangle of M."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= M[i, k] * x[k]
        x[i] = s / M[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= M[k, i] * x[k]
        x[i] = s / M[i, i]
