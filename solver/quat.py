"""Quaternion helpers (w, x, y, z) over numpy arrays, for model building and post-processing (the kernels are
solver.core.free_body's)."""
from __future__ import annotations

import numpy as np

from solver.core.free_body import rotations


def from_axis_angle(axis, angle):
    axis = np.asarray(axis, float)
    angle = np.asarray(angle, float)
    axis = axis / np.linalg.norm(axis)
    h = 0.5 * angle
    return np.concatenate([np.cos(h)[..., None], np.sin(h)[..., None] * axis], axis=-1)


def multiply(a, b):
    aw, ax, ay, az = np.moveaxis(np.asarray(a, float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, float), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def to_matrix(q):
    """Rotation matrices (..., 3, 3) of quaternions (..., 4): the core's kernel (solver.core.free_body.rotations)."""
    q = np.ascontiguousarray(q, dtype=float)
    out = np.empty(q.shape[:-1] + (3, 3))
    rotations(q.reshape(-1, 4), out.reshape(-1, 3, 3))
    return out


def rotate(q, v):
    return np.einsum("...ij,...j->...i", to_matrix(q), v)


def from_axis_angle_many(axes, angles):
    """Quaternions (N, 4) from per-row unit axes (N, 3) and angles (N,)."""
    axes = np.asarray(axes, float)
    axes = axes / np.linalg.norm(axes, axis=-1, keepdims=True)
    h = 0.5 * np.asarray(angles, float)
    return np.concatenate([np.cos(h)[..., None], np.sin(h)[..., None] * axes], axis=-1)
