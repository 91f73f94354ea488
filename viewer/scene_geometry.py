"""Pure-numpy helpers of the top pane: body pose matrices, the dynamic plane Ld, force-arrow matrices."""
from __future__ import annotations

import math

import numpy as np

X_AXIS = np.array([1.0, 0.0, 0.0])
LD_EPS = 1e-4  # m: below this lateral offset of gimbal and bending joint the plane Ld is undefined


def cross3(a, b) -> np.ndarray:
    """Cross product of two 3-vectors (np.cross costs ~30 us of argument handling; this is called per frame)."""
    return np.array(_cross(a, b))


def pose_matrices(positions: np.ndarray, quaternions: np.ndarray) -> np.ndarray:
    """4x4 body-to-cone matrices (B, 4, 4) from positions (B, 3) and quaternions (B, 4, w first)."""
    q = np.asarray(quaternions, float)
    q = q / np.sqrt((q * q).sum(axis=-1, keepdims=True))
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


def lateral_direction(gimbal, joint) -> np.ndarray | None:
    """Unit (0, y, z) best fitting the lateral offsets of gimbal and bending joint; None if both on axis.
    The principal axis of the 2x2 scatter in closed form (numpy.linalg.eigh per frame wakes BLAS threads)."""
    ay, az, by, bz = float(gimbal[1]), float(gimbal[2]), float(joint[1]), float(joint[2])
    p, q, r = ay * ay + by * by, ay * az + by * bz, az * az + bz * bz
    if p + r < LD_EPS * LD_EPS:
        return None
    lam = 0.5 * (p + r) + math.hypot(0.5 * (p - r), q)      # the larger eigenvalue
    if q == 0.0:
        ey, ez = (1.0, 0.0) if p >= r else (0.0, 1.0)
    else:
        u, v = (lam - r, q), (q, lam - p)                     # both along the eigenvector: take the longer
        ey, ez = u if u[0] * u[0] + u[1] * u[1] >= v[0] * v[0] + v[1] * v[1] else v
        n = math.hypot(ey, ez)
        ey, ez = ey / n, ez / n
    if ey * (ay + by) + ez * (az + bz) < 0:
        ey, ez = -ey, -ez
    return np.array([0.0, ey, ez])


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


def arrow_elements(point, force, scale: float, max_length: float, width: float) -> tuple | None:
    """The 16 row-major elements of `arrow_matrix` (plain floats: no small-array numpy per frame)."""
    fx, fy, fz = float(force[0]), float(force[1]), float(force[2])
    mag = math.sqrt(fx * fx + fy * fy + fz * fz)
    length = min(mag * scale, max_length)
    if not math.isfinite(length) or length < 1e-6:
        return None
    e1 = (fx / mag, fy / mag, fz / mag)
    helper = (1.0, 0.0, 0.0) if abs(e1[0]) < 0.9 else (0.0, 0.0, 1.0)
    e2 = _cross(e1, helper)
    n2 = math.sqrt(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2])
    e2 = (e2[0] / n2, e2[1] / n2, e2[2] / n2)
    e3 = _cross(e1, e2)
    w = min(width, length)
    px, py, pz = float(point[0]), float(point[1]), float(point[2])
    return (e1[0] * length, e2[0] * w, e3[0] * w, px,
            e1[1] * length, e2[1] * w, e3[1] * w, py,
            e1[2] * length, e2[2] * w, e3[2] * w, pz,
            0.0, 0.0, 0.0, 1.0)


def _cross(a, b) -> tuple:
    """Cross product of two 3-vectors as a tuple of floats."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def arrow_matrix(point, force, scale: float, max_length: float, width: float) -> np.ndarray | None:
    """Matrix taking a unit +x arrow to `point` along `force`, length |force|*scale (clamped); None if ~0."""
    e = arrow_elements(point, force, scale, max_length, width)
    return None if e is None else np.array(e).reshape(4, 4)
