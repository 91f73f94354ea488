"""The free rigid body (numba): pose from a unit quaternion, point position and velocity, a force at a point, the
Newton-Euler derivative with the gyroscopic term, quaternion kinematics and its normalisation, energy and momenta.

State layout of one body at offset o of a state vector s (NX = 13 values):
    s[o + X : o + X + 3]   CoM position, world frame
    s[o + Q : o + Q + 4]   unit quaternion (w, x, y, z), body to world (p_world = R p_body)
    s[o + V : o + V + 3]   CoM velocity, world frame
    s[o + W : o + W + 3]   angular velocity, body frame (`derivative`, `velocity_at`); `quat_rate_world` and
                           `euler_accel` with world-frame tuples serve types that keep omega in the world frame
Inertia about the CoM is given in the body frame (I, its inverse Iinv; `inertia_world` rotates it). Forces and
torques accumulate in the world frame, torques about the CoM. Every type's rigid bodies use these kernels. The
array kernels (numpy products) keep numba's default error model, as their callers do, so a run compiles numpy's
products once (with the callers' own).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.vec3 import cross, mm, mv

X, Q, V, W, NX = 0, 3, 7, 10, 13


# ---------------------------------------------------------------- layout-free kernels (scalars and tuples)
@njit(cache=True, error_model="numpy")
def rotation(qw, qx, qy, qz):
    """Rotation matrix (row-major 9-tuple) of a unit quaternion (w, x, y, z)."""
    return (1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
            2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
            2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy))


@njit(cache=True, error_model="numpy")
def rotation_into(qw, qx, qy, qz, R):
    """The rotation matrix of a unit quaternion written into R (3, 3)."""
    r = rotation(qw, qx, qy, qz)
    R[0, 0], R[0, 1], R[0, 2] = r[0], r[1], r[2]
    R[1, 0], R[1, 1], R[1, 2] = r[3], r[4], r[5]
    R[2, 0], R[2, 1], R[2, 2] = r[6], r[7], r[8]


@njit(cache=True, error_model="numpy")
def rotations(q, out):
    """Rotation matrices out (B, 3, 3) of unit quaternions q (B, 4)."""
    for b in range(q.shape[0]):
        rotation_into(q[b, 0], q[b, 1], q[b, 2], q[b, 3], out[b])


@njit(cache=True, error_model="numpy")
def quaternion(R):
    """Unit quaternion (w, x, y, z) of a rotation matrix (row-major 9-tuple), Shepperd's method."""
    tr = R[0] + R[4] + R[8]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        return (0.25 * s, (R[7] - R[5]) / s, (R[2] - R[6]) / s, (R[3] - R[1]) / s)
    if R[0] > R[4] and R[0] > R[8]:
        s = math.sqrt(1.0 + R[0] - R[4] - R[8]) * 2.0
        return ((R[7] - R[5]) / s, 0.25 * s, (R[1] + R[3]) / s, (R[2] + R[6]) / s)
    if R[4] > R[8]:
        s = math.sqrt(1.0 + R[4] - R[0] - R[8]) * 2.0
        return ((R[2] - R[6]) / s, (R[1] + R[3]) / s, 0.25 * s, (R[5] + R[7]) / s)
    s = math.sqrt(1.0 + R[8] - R[0] - R[4]) * 2.0
    return ((R[3] - R[1]) / s, (R[2] + R[6]) / s, (R[5] + R[7]) / s, 0.25 * s)


@njit(cache=True, error_model="numpy")
def inertia_world(R, I):
    """R I R^T (9-tuples): a body-frame inertia (or its inverse) in the world frame."""
    return mm(mm(R, I), (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]))


@njit(cache=True, error_model="numpy")
def point_velocity(v0, v1, v2, w0, w1, w2, r0, r1, r2):
    """Velocity v + w x r of a material point at r from the CoM (v, w, r in one frame, w the world rate)."""
    return v0 + w1 * r2 - w2 * r1, v1 + w2 * r0 - w0 * r2, v2 + w0 * r1 - w1 * r0


@njit(cache=True, error_model="numpy")
def moment(r0, r1, r2, f0, f1, f2):
    """Moment r x f of a force f at r from the CoM."""
    return r1 * f2 - r2 * f1, r2 * f0 - r0 * f2, r0 * f1 - r1 * f0


@njit(cache=True, error_model="numpy")
def quat_rate(qw, qx, qy, qz, w0, w1, w2):
    """dq/dt = q (0, w) / 2 for a body-frame angular velocity w."""
    return (0.5 * (-qx * w0 - qy * w1 - qz * w2), 0.5 * (qw * w0 + qy * w2 - qz * w1),
            0.5 * (qw * w1 - qx * w2 + qz * w0), 0.5 * (qw * w2 + qx * w1 - qy * w0))


@njit(cache=True, error_model="numpy")
def quat_rate_world(w, q0, q1, q2, q3):
    """dq/dt = (0, w) q / 2 for a world-frame angular velocity w (3-tuple)."""
    return (0.5 * (-w[0] * q1 - w[1] * q2 - w[2] * q3),
            0.5 * (w[0] * q0 + w[1] * q3 - w[2] * q2),
            0.5 * (-w[0] * q3 + w[1] * q0 + w[2] * q1),
            0.5 * (w[0] * q2 - w[1] * q1 + w[2] * q0))


@njit(cache=True, error_model="numpy")
def normalize(s, o):
    """Scale the quaternion at s[o:o + 4] back to unit length (after an integration step)."""
    qn = math.sqrt(s[o] ** 2 + s[o + 1] ** 2 + s[o + 2] ** 2 + s[o + 3] ** 2)
    for k in range(4):
        s[o + k] /= qn


@njit(cache=True, error_model="numpy")
def euler_accel(Iw, Iinv, w, m):
    """Angular acceleration Iinv (m - w x Iw w) with all in one frame (9-tuple inertias, 3-tuples): the body frame
    with the body's inertia (Euler's equations) or the world frame with `inertia_world`; returns it and Iw w."""
    a = mv(Iw, w)
    c = cross(w, a)
    return mv(Iinv, (m[0] - c[0], m[1] - c[1], m[2] - c[2])), a


# ---------------------------------------------------------------- kernels over the state layout (omega: body frame)
@njit(cache=True, error_model="numpy")
def rotation_of(s, o, R):
    """R (3, 3) of the body at offset o."""
    rotation_into(s[o + Q], s[o + Q + 1], s[o + Q + 2], s[o + Q + 3], R)


@njit(cache=True, error_model="numpy")
def position_at(s, o, R, p0, p1, p2):
    """World position of the material point at p (body frame, from the CoM) of the body at offset o."""
    return (s[o] + R[0, 0] * p0 + R[0, 1] * p1 + R[0, 2] * p2, s[o + 1] + R[1, 0] * p0 + R[1, 1] * p1 + R[1, 2] * p2,
            s[o + 2] + R[2, 0] * p0 + R[2, 1] * p1 + R[2, 2] * p2)


@njit(cache=True, error_model="numpy")
def velocity_at(s, o, R, x0, x1, x2):
    """World velocity of the body's material point now at world point x (R: its rotation)."""
    wb0, wb1, wb2 = s[o + W], s[o + W + 1], s[o + W + 2]
    w0 = R[0, 0] * wb0 + R[0, 1] * wb1 + R[0, 2] * wb2
    w1 = R[1, 0] * wb0 + R[1, 1] * wb1 + R[1, 2] * wb2
    w2 = R[2, 0] * wb0 + R[2, 1] * wb1 + R[2, 2] * wb2
    return point_velocity(s[o + V], s[o + V + 1], s[o + V + 2], w0, w1, w2, x0 - s[o], x1 - s[o + 1], x2 - s[o + 2])


@njit(cache=True, error_model="numpy")
def add_force_at(F, T, b, s, o, x0, x1, x2, f0, f1, f2):
    """Add a world force f at world point x to row b of the accumulators F, T (force, torque about the CoM)."""
    t0, t1, t2 = moment(x0 - s[o], x1 - s[o + 1], x2 - s[o + 2], f0, f1, f2)
    F[b, 0] += f0
    F[b, 1] += f1
    F[b, 2] += f2
    T[b, 0] += t0
    T[b, 1] += t1
    T[b, 2] += t2


@njit(cache=True)
def kinetic_energy(m, I, v, w):
    """m v.v / 2 + w.I w / 2 (v world, w body frame, I body frame)."""
    return 0.5 * m * (v @ v) + 0.5 * (w @ (I @ w))


@njit(cache=True)
def euler_rate(I, Iinv, R, T, w):
    """Euler's equations in the body frame: dw/dt = Iinv (R^T T - w x I w) for a world torque T about the CoM and
    a body-frame rate w (arrays); returns dw/dt and I w."""
    Iw = I @ w
    wx = np.empty(3)
    wx[0], wx[1], wx[2] = w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2], w[0] * Iw[1] - w[1] * Iw[0]
    return Iinv @ (R.T @ T - wx), Iw


@njit(cache=True)
def derivative(s, o, m, I, Iinv, R, F, T, ds):
    """ds[o:o + 13] of a free body under world force F and torque T about its CoM (Newton-Euler, body-frame Euler's
    equations with the gyroscopic term); returns its kinetic energy."""
    v = s[o + V:o + V + 3]
    w = s[o + W:o + W + 3]
    ds[o:o + 3] = v
    d = quat_rate(s[o + Q], s[o + Q + 1], s[o + Q + 2], s[o + Q + 3], w[0], w[1], w[2])
    for k in range(4):
        ds[o + Q + k] = d[k]
    ds[o + V:o + V + 3] = F / m
    dw, Iw = euler_rate(I, Iinv, R, T, w)
    ds[o + W:o + W + 3] = dw
    return 0.5 * m * (v @ v) + 0.5 * (w @ Iw)


@njit(cache=True)
def momenta(s, o, m, I, R):
    """Linear momentum and angular momentum about the world origin (world frame) of the body at offset o."""
    Iw = I @ s[o + W:o + W + 3]
    h = R @ Iw
    p0, p1, p2 = m * s[o + V], m * s[o + V + 1], m * s[o + V + 2]
    c = moment(s[o], s[o + 1], s[o + 2], p0, p1, p2)
    return (p0, p1, p2), (c[0] + h[0], c[1] + h[1], c[2] + h[2])
