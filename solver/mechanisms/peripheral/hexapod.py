"""Six-leg Gough–Stewart platform between the peripheral unit's base and its guide ring (seed 001 ch. VII).

Leg i joins base point b_i (base frame) to ring point p_i (ring frame). The ring pose is (pos, rot): the
ring origin in the base frame and the rotation matrix ring -> base. Numba kernels over plain arrays:

- `inverse_kinematics`: leg lengths L_i = |pos + rot p_i - b_i| and unit vectors u_i (base toward ring);
- `leg_jacobian`: dL = J [dpos; dphi], rows [u_i, (rot p_i) x u_i], dphi a small rotation in the base frame;
- `ring_wrench`: leg forces f (> 0 pushes the ring away from the base) to the force and the moment about the
  ring origin on the ring, J^T f (virtual work);
- `forward_kinematics`: the pose from six leg lengths, Newton on the loop-closure equations L(pose) = L.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

FK_TOL = 1e-13           # m, largest leg-length residual at which Newton stops
FK_MAX_ITER = 50


@njit(cache=True)
def rotvec_matrix(px, py, pz):
    """Rotation matrix of the rotation vector (px, py, pz) (Rodrigues)."""
    th = math.sqrt(px * px + py * py + pz * pz)
    out = np.eye(3)
    if th < 1e-300:
        return out
    if th < 1e-4:                                     # series: 1 - th^2/6, 1/2 - th^2/24
        s, c1 = 1.0 - th * th / 6.0, 0.5 - th * th / 24.0
    else:
        s, c1 = math.sin(th) / th, (1.0 - math.cos(th)) / (th * th)
    K = np.array([[0.0, -pz, py], [pz, 0.0, -px], [-py, px, 0.0]])
    return out + s * K + c1 * (K @ K)


@njit(cache=True)
def inverse_kinematics(base, ring, pos, rot):
    """Leg lengths (6,) and unit vectors (6, 3) from base to ring for the ring pose (pos, rot)."""
    L = np.empty(6)
    U = np.empty((6, 3))
    for i in range(6):
        v = pos + rot @ ring[i] - base[i]
        n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        L[i] = n
        U[i] = v / n
    return L, U


@njit(cache=True)
def leg_jacobian(base, ring, pos, rot):
    """6x6 Jacobian of the leg lengths in the ring's displacement and small rotation (base frame)."""
    J = np.empty((6, 6))
    for i in range(6):
        r = rot @ ring[i]
        v = pos + r - base[i]
        u = v / math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
        J[i, 0:3] = u
        J[i, 3] = r[1] * u[2] - r[2] * u[1]
        J[i, 4] = r[2] * u[0] - r[0] * u[2]
        J[i, 5] = r[0] * u[1] - r[1] * u[0]
    return J


@njit(cache=True)
def ring_wrench(base, ring, pos, rot, forces):
    """Force (3) and moment about the ring origin (3) on the ring from leg forces (> 0: legs push), base frame."""
    return leg_jacobian(base, ring, pos, rot).T @ forces


@njit(cache=True)
def solve6(A, b):
    """x with A x = b for a 6x6 A, Gaussian elimination with partial pivoting (A, b are not changed)."""
    M = A.copy()
    x = b.copy()
    for k in range(6):
        p = k
        for i in range(k + 1, 6):
            if abs(M[i, k]) > abs(M[p, k]):
                p = i
        if p != k:
            for j in range(6):
                M[k, j], M[p, j] = M[p, j], M[k, j]
            x[k], x[p] = x[p], x[k]
        piv = M[k, k]
        if piv == 0.0:                                # singular: NaN, the caller stops
            x[:] = np.nan
            return x
        for i in range(k + 1, 6):
            f = M[i, k] / piv
            if f != 0.0:
                for j in range(k, 6):
                    M[i, j] -= f * M[k, j]
                x[i] -= f * x[k]
    for k in range(5, -1, -1):
        s = x[k]
        for j in range(k + 1, 6):
            s -= M[k, j] * x[j]
        x[k] = s / M[k, k]
    return x


@njit(cache=True)
def forward_kinematics(base, ring, lengths, pos0, rot0, tol=FK_TOL, max_iter=FK_MAX_ITER):
    """Ring pose (pos, rot) with leg lengths `lengths`, by Newton from (pos0, rot0); also the Newton steps
    taken (-1 if not converged: singular or out of reach) and the largest leg-length residual."""
    pos = pos0.copy()
    rot = rot0.copy()
    for it in range(max_iter + 1):
        L, _ = inverse_kinematics(base, ring, pos, rot)
        res = L - lengths
        err = np.abs(res).max()
        if err <= tol:
            return pos, rot, it, err
        if it == max_iter or not math.isfinite(err):
            break
        d = solve6(leg_jacobian(base, ring, pos, rot), -res)
        pos = pos + d[0:3]
        rot = rotvec_matrix(d[3], d[4], d[5]) @ rot
        # re-orthonormalise (polar factor by one Newton step): keeps rot a rotation over long iterations
        rot = 1.5 * rot - 0.5 * rot @ rot.T @ rot
    L, _ = inverse_kinematics(base, ring, pos, rot)
    return pos, rot, -1, np.abs(L - lengths).max()


# ------------------------------------------------------------------------------------------------
# layout from the TOML [hexapod] table
# ------------------------------------------------------------------------------------------------

@dataclass
class Hexapod:
    """Leg attachment points (base frame, ring frame), leg length range and the ring's neutral pose."""
    base: np.ndarray          # (6, 3)
    ring: np.ndarray          # (6, 3)
    length_min: np.ndarray    # (6,)
    length_max: np.ndarray    # (6,)
    home_pos: np.ndarray      # (3,) ring origin in the base frame at the neutral (ready-to-capture) pose
    home_rot: np.ndarray      # (3, 3)

    def lengths(self, pos, rot):
        """Leg lengths at a ring pose."""
        return inverse_kinematics(self.base, self.ring, np.asarray(pos, float), np.asarray(rot, float))[0]

    def pose(self, lengths, pos0=None, rot0=None):
        """Ring pose from leg lengths (Newton from the given pose, else from the neutral pose)."""
        p0 = self.home_pos if pos0 is None else np.asarray(pos0, float)
        r0 = self.home_rot if rot0 is None else np.asarray(rot0, float)
        return forward_kinematics(self.base, self.ring, np.asarray(lengths, float), p0, r0)


def _number(h, key, source, low, low_open=True):
    """h[key] as a float above `low` (or at least `low`), else a ValueError naming the file and the key."""
    v = h.get(key)
    if v is None:
        raise ValueError(f"{source}: hexapod.{key}: missing")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{source}: hexapod.{key}: must be a finite number, not {v!r}")
    if v < low or (low_open and v == low):
        raise ValueError(f"{source}: hexapod.{key}: must be {'>' if low_open else '>='} {low:g} (got {v:g})")
    return float(v)


def hexapod_layout(cfg: dict, source: str = "peripheral geometry") -> Hexapod:
    """The 6-6 layout of a [hexapod] table: base pairs at 0/120/240 deg, ring pairs between them; axis +x.

    Leg 2k runs from base point 120k + half_base to ring point 120k + 60 - half_ring, leg 2k + 1 from base point
    120(k + 1) - half_base to ring point 120k + 60 + half_ring (angles about +x from +y). Bad values raise
    ValueError('source: hexapod.key: problem')."""
    h = cfg.get("hexapod")
    if not isinstance(h, dict):
        raise ValueError(f"{source}: hexapod: missing table [hexapod]")
    rb, rr = _number(h, "base_radius", source, 0.0), _number(h, "ring_radius", source, 0.0)
    hb = _number(h, "base_half_angle", source, 0.0, low_open=False)
    hr = _number(h, "ring_half_angle", source, 0.0, low_open=False)
    if hb + hr >= 60.0:
        raise ValueError(f"{source}: hexapod.base_half_angle, ring_half_angle: their sum must be < 60 deg (got "
                         f"{hb + hr:g}): the legs would stand parallel to the axis or cross")
    x0 = _number(h, "neutral_height", source, 0.0)
    retract = _number(h, "stroke_retract", source, 0.0, low_open=False)
    extend = _number(h, "stroke_extend", source, 0.0, low_open=False)
    base, ring = [], []
    for k in range(3):
        for s in (1.0, -1.0):
            ab = math.radians(120.0 * k + hb) if s > 0 else math.radians(120.0 * (k + 1) - hb)
            ar = math.radians(120.0 * k + 60.0 - s * hr)
            base.append((0.0, rb * math.cos(ab), rb * math.sin(ab)))
            ring.append((0.0, rr * math.cos(ar), rr * math.sin(ar)))
    base, ring = np.array(base), np.array(ring)
    home_pos, home_rot = np.array([x0, 0.0, 0.0]), np.eye(3)
    L0 = inverse_kinematics(base, ring, home_pos, home_rot)[0]
    if retract >= L0[0]:
        raise ValueError(f"{source}: hexapod.stroke_retract: must be shorter than the neutral leg length "
                         f"{L0[0]:.4g} m (got {retract:g})")
    return Hexapod(base, ring, L0 - retract, L0 + extend, home_pos, home_rot)


# ------------------------------------------------------------------------------------------------
# the stroke space: conditioning and clearance over every leg-length set the stops allow
# ------------------------------------------------------------------------------------------------

@dataclass
class StrokeSpace:
    """Over sampled leg-length sets within the stops: the Jacobian's condition number (rotation columns times the ring
    radius, so both halves are in metres), the ring points' least height above the base plane, the failures."""
    condition: np.ndarray     # (n,) for the poses that assembled
    clearance: np.ndarray     # (n,) m, min over the ring points of their height above the base plane
    heights: np.ndarray       # (n,) m, the ring origin's height
    not_assembled: int        # leg-length sets forward kinematics found no pose for


def stroke_space(hexa: Hexapod, n: int = 4000, seed: int = 0) -> StrokeSpace:
    """Sample the box of leg lengths [length_min, length_max]^6: its 64 corners, then uniform sets (FK from the
    neutral pose, continued from the nearest assembled pose when that fails)."""
    rng = np.random.default_rng(seed)
    lo, hi = hexa.length_min, hexa.length_max
    corners = np.array([[(hi if (k >> i) & 1 else lo)[i] for i in range(6)] for k in range(64)])
    sets = np.concatenate([corners, lo + (hi - lo) * rng.random((n, 6))])
    scale = float(np.linalg.norm(hexa.ring[0]))
    cond, clear, height, bad = [], [], [], 0
    for L in sets:
        pos, rot, it, _ = forward_kinematics(hexa.base, hexa.ring, L, hexa.home_pos, hexa.home_rot)
        if it < 0:
            mid = 0.5 * (lo + hi)             # continue along the straight path from the neutral lengths
            pos, rot = hexa.home_pos.copy(), hexa.home_rot.copy()
            for f in np.linspace(0.1, 1.0, 10):
                pos, rot, it, _ = forward_kinematics(hexa.base, hexa.ring, mid + f * (L - mid), pos, rot)
                if it < 0:
                    break
        if it < 0:
            bad += 1
            continue
        J = leg_jacobian(hexa.base, hexa.ring, pos, rot).copy()
        J[:, 3:] /= scale
        cond.append(np.linalg.cond(J))
        pts = pos + hexa.ring @ rot.T
        clear.append(float(pts[:, 0].min()))
        height.append(float(pos[0]))
    return StrokeSpace(np.array(cond), np.array(clear), np.array(height), bad)
