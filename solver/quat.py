"""Quaternion helpers (w, x, y, z), numpy."""
from __future__ import annotations

import numpy as np


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
    w, x, y, z = np.moveaxis(np.asarray(q, float), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def rotate(q, v):
    return np.einsum("...ij,...j->...i", to_matrix(q), v)


def from_axis_angle_many(axes, angles):
    """Quaternions (N, 4) from per-row unit axes (N, 3) and angles (N,)."""
    axes = np.asarray(axes, float)
    axes = axes / np.linalg.norm(axes, axis=-1, keepdims=True)
    h = 0.5 * np.asarray(angles, float)
    return np.concatenate([np.cos(h)[..., None], np.sin(h)[..., None] * axes], axis=-1)
