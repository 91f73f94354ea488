"""Pure-numpy helpers of the top pane: body pose matrices, the dynamic plane Ld, force-arrow matrices."""
from __future__ import annotations

import numpy as np

X_AXIS = np.array([1.0, 0.0, 0.0])
LD_EPS = 1e-4  # m: below this lateral offset of gimbal and bending joint the plane Ld is undefined


def cross3(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (np.cross costs ~30 us of argument handling; this is called per frame)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def pose_matrices(positions: np.ndarray, quaternions: np.ndarray) -> np.ndarray:
    """4x4 body-to-cone matrices (B, 4, 4) from positions (B, 3) and quaternions (B, 4, w first)."""
    q = np.asarray(quaternions, float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.zeros(q.shape[:-1] + (4, 4))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - w * z)
    m[..., 0, 2] = 2 * (x * z + w * y)
    m[..., 1, 0] = 2 * (x * y + w * z)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - w * x)
    m[..., 2, 0] = 2 * (x * z - w * y)
    m[..., 2, 1] = 2 * (y * z + w * x)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    m[..., :3, 3] = positions
    m[..., 3, 3] = 1.0
    return m


def lateral_direction(gimbal: np.ndarray, joint: np.ndarray) -> np.ndarray | None:
    """Unit (0, y, z) best fitting the lateral offsets of gimbal and bending joint; None if both on axis."""
    a = np.asarray(gimbal, float)[1:3]
    b = np.asarray(joint, float)[1:3]
    m = np.outer(a, a) + np.outer(b, b)
    if np.trace(m) < LD_EPS * LD_EPS:
        return None
    vals, vecs = np.linalg.eigh(m)
    e = vecs[:, int(np.argmax(vals))]
    s = e @ (a + b)
    if s < 0:
        e = -e
    return np.array([0.0, e[0], e[1]])


def ld_plane(gimbal, joint, reference) -> tuple[np.ndarray, np.ndarray]:
    """(up, normal) of plane Ld through the cone axis, gimbal and bending joint; up signed along reference."""
    ref = np.asarray(reference, float)
    d = lateral_direction(gimbal, joint)
    if d is None:
        d = ref
    elif d @ ref < 0:
        d = -d
    n = cross3(X_AXIS, d)  # normal; the camera looks along d x X = -n with x to the right
    return d, n


def arrow_matrix(point, force, scale: float, max_length: float, width: float) -> np.ndarray | None:
    """Matrix taking a unit +x arrow to `point` along `force`, length |force|*scale (clamped); None if ~0."""
    f = np.asarray(force, float)
    mag = float(np.sqrt(f @ f))
    length = min(mag * scale, max_length)
    if not np.isfinite(length) or length < 1e-6:
        return None
    e1 = f / mag
    helper = X_AXIS if abs(e1[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    e2 = cross3(e1, helper)
    e2 /= np.sqrt(e2 @ e2)
    e3 = cross3(e1, e2)
    w = min(width, length)
    m = np.eye(4)
    m[:3, 0] = e1 * length
    m[:3, 1] = e2 * w
    m[:3, 2] = e3 * w
    m[:3, 3] = point
    return m
