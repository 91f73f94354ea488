"""The probe-cone pair set: one numba call per step evaluates every pair and its contact force."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core.free_body import point_velocity, rotations as quat_to_rot  # noqa: F401 (quat_to_rot: the API's)

from .kernels import (ANNULUS, CIRCLE, CONE, FACE, LATCH_TIP, NO, ROLLER, ROW, SPHERE, effective_kind, pair_eval,
                      sphere_annulus, sphere_circle, sphere_cone, sphere_face, transform_row, transform_rows)

# pair table columns (int64): active primitive, first passive primitive, passive count, exclusion
PAIR_A, PAIR_B0, PAIR_NB, PAIR_EXCLUDE = 0, 1, 2, 3
# pair parameters (float64): normal stiffness N/m, damping N*s/m, Coulomb mu, stick slip speed m/s,
# max admissible depth m, passive bounding sphere centre (passive body frame) and radius, active radius;
# meridian bound of a coaxial passive set (surfaces of revolution): axis origin and unit direction (passive
# body frame), a capsule in the (axial x, radius rho) half-plane: segment (x0, r0)-(x1, r1) and its
# half-thickness (< 0: no meridian bound for this pair), and the line of its one-sided surface (cone wall or
# annulus: a point and the free-side unit normal in the half-plane; normal 0 if all its rows are bounded)
PAR_K, PAR_C, PAR_MU, PAR_VSLIP, PAR_DMAX, PAR_BX, PAR_BY, PAR_BZ, PAR_BR = range(9)
PAR_MO, PAR_MA, PAR_MSEG, PAR_MT, PAR_MSIDE = 10, 13, 16, 20, 21
N_PAR = 25

STATUS_OK = 0
STATUS_DEPTH_EXCEEDED = 1
# per-step broad phase (`evaluate_pairs_step`), numerical, not physical: a pair whose bounds stay STEP_PAD apart
# is skipped for the rest of the step while h (2 v + STEP_DV) < STEP_PAD (v: relative speed at the step start;
# STEP_DV: velocity change allowed within one step). At h = 0.25 ms any v < 9.5 m/s qualifies.
STEP_PAD = 0.005     # m
STEP_DV = 1.0        # m/s
ROW_NEED = ROW       # work column: bit 1 row used by a near pair (mapped at every stage), bit 2 mapped at this stage
STEP_SKIP_MAX = 64   # most steps a pair found apart is left out for (`evaluate_pairs_step` with `skip`)


@njit(cache=True, inline="always")
def _bound_radius(w, kind, j):
    """Centre and radius of a sphere bounding world row j (active primitives only)."""
    if kind == 0:                                     # sphere
        return w[j, 0], w[j, 1], w[j, 2], w[j, 3]
    if kind == 1:                                     # segment
        hx, hy, hz = 0.5 * (w[j, 3] - w[j, 0]), 0.5 * (w[j, 4] - w[j, 1]), 0.5 * (w[j, 5] - w[j, 2])
        return (w[j, 0] + hx, w[j, 1] + hy, w[j, 2] + hz,
                math.sqrt(hx * hx + hy * hy + hz * hz) + w[j, 6])
    if kind == 2:                                     # circle / torus
        return w[j, 0], w[j, 1], w[j, 2], w[j, 9] + w[j, 10]
    if kind == 3:                                     # cone
        xm = 0.5 * (w[j, 9] + w[j, 11])
        hx = 0.5 * abs(w[j, 11] - w[j, 9])
        rm = max(w[j, 10], w[j, 12])
        return (w[j, 0] + xm * w[j, 3], w[j, 1] + xm * w[j, 4], w[j, 2] + xm * w[j, 5],
                math.sqrt(hx * hx + rm * rm) + w[j, 15])
    return 0.0, 0.0, 0.0, 1e300


@njit(cache=True, inline="always")
def _meridian_d2(ppar, k, rot, pos, bb, ax, ay, az, ar):
    """(squared distance in the (x, rho) half-plane about pair k's coaxial passive set from a sphere's centre to
    the capsule's segment, reach = ar + half-thickness + admissible depth); the distance is -1 when the centre is
    behind the set's one-sided surface (any depth counts as penetration there)."""
    dx, dy, dz = ax - pos[bb, 0], ay - pos[bb, 1], az - pos[bb, 2]
    qx = rot[bb, 0, 0] * dx + rot[bb, 1, 0] * dy + rot[bb, 2, 0] * dz - ppar[k, PAR_MO]
    qy = rot[bb, 0, 1] * dx + rot[bb, 1, 1] * dy + rot[bb, 2, 1] * dz - ppar[k, PAR_MO + 1]
    qz = rot[bb, 0, 2] * dx + rot[bb, 1, 2] * dy + rot[bb, 2, 2] * dz - ppar[k, PAR_MO + 2]
    x = qx * ppar[k, PAR_MA] + qy * ppar[k, PAR_MA + 1] + qz * ppar[k, PAR_MA + 2]
    rho = math.sqrt(max(qx * qx + qy * qy + qz * qz - x * x, 0.0))
    reach = ar + ppar[k, PAR_MT] + ppar[k, PAR_DMAX]
    if (x - ppar[k, PAR_MSIDE]) * ppar[k, PAR_MSIDE + 2] + (rho - ppar[k, PAR_MSIDE + 1]) * ppar[k, PAR_MSIDE + 3] < 0.0:
        return -1.0, reach
    x0, r0 = ppar[k, PAR_MSEG], ppar[k, PAR_MSEG + 1]
    ex, er = ppar[k, PAR_MSEG + 2] - x0, ppar[k, PAR_MSEG + 3] - r0
    ee = ex * ex + er * er
    t = 0.0
    if ee > 0.0:
        t = min(1.0, max(0.0, ((x - x0) * ex + (rho - r0) * er) / ee))
    return (x - x0 - t * ex) ** 2 + (rho - r0 - t * er) ** 2, reach


@njit(cache=True, inline="always")
def _meridian_apart(ppar, k, rot, pos, bb, ax, ay, az, ar):
    """True if a sphere (world centre, radius ar) cannot touch pair k's coaxial passive set: it is on the free
    side of the set's one-sided surface and its distance in the (x, rho) half-plane about the set's axis (never
    more than the 3-D distance) exceeds ar + the capsule's half-thickness + the admissible depth. Behind the
    surface it is never culled."""
    d2, reach = _meridian_d2(ppar, k, rot, pos, bb, ax, ay, az, ar)
    return d2 > reach * reach


@njit(cache=True, inline="always")
def _meridian_margin(ppar, k, rot, pos, bb, ax, ay, az, ar):
    """How far a sphere (world centre, radius ar) on the free side of pair k's coaxial passive set is beyond the
    reach of `_meridian_apart` (<= 0: not apart; -1 behind the one-sided surface)."""
    d2, reach = _meridian_d2(ppar, k, rot, pos, bb, ax, ay, az, ar)
    if d2 < 0.0:
        return -1.0
    return math.sqrt(d2) - reach


@njit(cache=True, _nrt=False)
def evaluate_pairs(prim, pint, pairs, ppar, pos, rot, vel, omega, state, work,
                   active, depth, point, normal, force, diag):
    """Evaluate all contact pairs for one step; returns STATUS_OK or STATUS_DEPTH_EXCEEDED.

    Inputs (world frame): pos (B,3) body origins, rot (B,3,3) body-to-world rotations, vel (B,3)
    origin velocities, omega (B,3) angular velocities, state = [latch_extension, lever_extension]
    in 0..1. Geometry (prim, pint, pairs, ppar, work) comes from `ContactGeometry`. Outputs per pair
    k: active[k] (uint8), depth[k] (m), point[k] (on the passive surface), normal[k] (unit, passive ->
    active), force[k] (on the active body at point; the passive body gets -force[k]). On an
    excessive depth it stops, writes diag = [pair index, depth] and returns STATUS_DEPTH_EXCEEDED.
    """
    transform_rows(prim, pint, pos, rot, state, work)
    return _pair_loop(prim, pint, pairs, ppar, pos, rot, vel, omega, work, active, depth, point, normal, force, diag,
                      active, 0)


@njit(cache=True)
def evaluate_pairs_step(prim, pint, pairs, ppar, pos, rot, vel, omega, state, work,
                        active, depth, point, normal, force, diag, near, first, h, skip=None, hold=0.0):
    """`evaluate_pairs` with its broad phase shared by the stages of one integration step of length h.

    first=True (the step's first stage) maps every row and sets near[k]: 1 if pair k's bounds come within STEP_PAD
    or its active row depends on `state` (latches, rollers), else 2 if its relative speed is too high for the pad
    (h (2 v + STEP_DV) >= STEP_PAD), else 0; it evaluates the pairs with near[k] == 1 (the others are apart now).
    Later stages map the rows of the pairs with near[k] != 0 and evaluate those pairs (the others are apart: outputs
    0), with the same results as evaluate_pairs.

    skip (per pair, kept between steps, zeros at the start): a pair found apart by a margin g that its relative speed
    v cannot cover in n steps, n h (2 v + n STEP_DV) < g, is left out of the next n - 1 first stages too (skip[k]
    counts them down); its rows are then not mapped at all.

    hold: steps (this one included) over which the caller knows the lever state (state[1]) stays as it is; with
    hold >= 1 the roller pairs get the bound tests of the other pairs, left out for at most hold steps."""
    if skip is None:                                  # no pair left out of a later step: a fresh zero table
        if first:
            transform_rows(prim, pint, pos, rot, state, work)
        return pairs_step(prim, pint, pairs, ppar, pos, rot, vel, omega, state, work, active, depth, point, normal,
                          force, diag, near, first, h, np.zeros(pairs.shape[0]), float(hold))
    return pairs_step(prim, pint, pairs, ppar, pos, rot, vel, omega, state, work, active, depth, point, normal, force,
                      diag, near, first, h, skip, float(hold))


@njit(cache=True, _nrt=False)
def pairs_step(prim, pint, pairs, ppar, pos, rot, vel, omega, state, work,
               active, depth, point, normal, force, diag, near, first, h, skip, hold):
    """`evaluate_pairs_step` with its skip table (the solver's call: one compiled unit, no allocation)."""
    if first:
        for j in range(prim.shape[0]):
            work[j, ROW_NEED] = 0.0
        for k in range(pairs.shape[0]):               # active rows of the pairs due for their bound test
            if skip[k] <= 0.0:
                ia = pairs[k, PAIR_A]
                if work[ia, ROW_NEED] == 0.0:
                    transform_row(prim, pint, pos, rot, state, work, ia)
                    work[ia, ROW_NEED] = 2.0
        for k in range(pairs.shape[0]):
            ia = pairs[k, PAIR_A]
            b0 = pairs[k, PAIR_B0]
            if skip[k] > 0.0:
                skip[k] -= 1.0
                n = 0
            else:
                n, ns = _step_near_steps(pint, pairs, ppar, pos, rot, vel, omega, work, k, h, hold)
                skip[k] = ns - 1.0
            near[k] = n
            if n != 0:                                # set bit 1 (0 -> 1, 2 -> 3)
                if work[ia, ROW_NEED] == 0.0 or work[ia, ROW_NEED] == 2.0:
                    work[ia, ROW_NEED] += 1.0
                for jb in range(b0, b0 + pairs[k, PAIR_NB]):
                    if work[jb, ROW_NEED] == 0.0 or work[jb, ROW_NEED] == 2.0:
                        work[jb, ROW_NEED] += 1.0
        for j in range(prim.shape[0]):                # rows of near pairs not mapped yet; keep bit 1 for later stages
            w = work[j, ROW_NEED]
            if w == 1.0:
                transform_row(prim, pint, pos, rot, state, work, j)
            elif w == 2.0:
                work[j, ROW_NEED] = 0.0
            elif w == 3.0:
                work[j, ROW_NEED] = 1.0
    else:
        for j in range(prim.shape[0]):
            if work[j, ROW_NEED] != 0.0:
                transform_row(prim, pint, pos, rot, state, work, j)
    return _pair_loop(prim, pint, pairs, ppar, pos, rot, vel, omega, work, active, depth, point, normal, force, diag,
                      near, 1 if first else 2)


@njit(cache=True, inline="always")
def _step_near_steps(pint, pairs, ppar, pos, rot, vel, omega, work, k, h, hold):
    """near[k] of `pairs_step` (1 may touch within the step, 2 apart now but too fast to skip, 0 apart) and, for a
    pair apart (0), the steps n >= 1 it stays apart: n h (2 v + n STEP_DV) < margin
    (n <= hold for a roller)."""
    ia = pairs[k, PAIR_A]
    b0 = pairs[k, PAIR_B0]
    kind = pint[ia, 0]
    if kind == LATCH_TIP or (kind == ROLLER and hold < 1.0):   # rows that move with the latch / lever state
        return 1, 0
    ka = effective_kind(kind)
    bb = pint[b0, 1]
    ba = pint[ia, 1]
    ax, ay, az, ar = _bound_radius(work, ka, ia)
    # apart by the pad: then also apart for the pair loop's own (unpadded) tests
    pr = ar + STEP_PAD
    lx, ly, lz = ppar[k, PAR_BX], ppar[k, PAR_BY], ppar[k, PAR_BZ]
    bx = rot[bb, 0, 0] * lx + rot[bb, 0, 1] * ly + rot[bb, 0, 2] * lz + pos[bb, 0]
    by = rot[bb, 1, 0] * lx + rot[bb, 1, 1] * ly + rot[bb, 1, 2] * lz + pos[bb, 1]
    bz = rot[bb, 2, 0] * lx + rot[bb, 2, 1] * ly + rot[bb, 2, 2] * lz + pos[bb, 2]
    reach = pr + ppar[k, PAR_BR]
    d2 = (ax - bx) ** 2 + (ay - by) ** 2 + (az - bz) ** 2
    apart = d2 > reach * reach or (
        ppar[k, PAR_MT] >= 0.0 and _meridian_apart(ppar, k, rot, pos, bb, ax, ay, az, pr))
    if not apart:
        return 1, 0
    # relative speed of the active bound's centre in the passive body's frame
    va = point_velocity(vel[ba, 0], vel[ba, 1], vel[ba, 2], omega[ba, 0], omega[ba, 1], omega[ba, 2],
                        ax - pos[ba, 0], ay - pos[ba, 1], az - pos[ba, 2])
    vb = point_velocity(vel[bb, 0], vel[bb, 1], vel[bb, 2], omega[bb, 0], omega[bb, 1], omega[bb, 2],
                        ax - pos[bb, 0], ay - pos[bb, 1], az - pos[bb, 2])
    vx, vy, vz = va[0] - vb[0], va[1] - vb[1], va[2] - vb[2]
    v = math.sqrt(vx * vx + vy * vy + vz * vz)
    if h * (2.0 * v + STEP_DV) >= STEP_PAD:
        return 2, 0
    # margin beyond the unpadded bounds: the larger of the sphere test's and the meridian test's
    g = math.sqrt(d2) - (ar + ppar[k, PAR_BR])
    if ppar[k, PAR_MT] >= 0.0:
        g = max(g, _meridian_margin(ppar, k, rot, pos, bb, ax, ay, az, ar))
    nmax = STEP_SKIP_MAX if kind != ROLLER else min(STEP_SKIP_MAX, int(hold))
    return 0, steps_within(g, v, STEP_DV, h, 1, nmax)


@njit(cache=True, inline="always")
def steps_within(margin, speed, dv, h, n, nmax):
    """From n steps (known to hold) up to nmax: the most steps m with m h (2 speed + m dv) < margin, the distance
    covered at `speed` with its change bounded by dv per step, both ways."""
    while n < nmax and (n + 1) * h * (2.0 * speed + (n + 1) * dv) < margin:
        n += 1
    return n


@njit(cache=True, _nrt=False)
def _pair_loop(prim, pint, pairs, ppar, pos, rot, vel, omega, work, active, depth, point, normal, force, diag,
               near, mode):
    """The pair loop of `evaluate_pairs` over world rows; mode 1 (a step's first stage) leaves the pairs with
    near[k] != 1 apart, mode 2 (later stages) those with near[k] == 0, mode 0 tests every pair."""
    for k in range(pairs.shape[0]):
        active[k] = 0
        depth[k] = 0.0
        for c in range(3):
            point[k, c] = 0.0
            normal[k, c] = 0.0
            force[k, c] = 0.0
        if (mode == 1 and near[k] != 1) or (mode == 2 and near[k] == 0):
            continue
        ex = pairs[k, PAIR_EXCLUDE]
        if ex >= 0 and active[ex] != 0:               # incompatible with a contact found already
            continue
        ia = pairs[k, PAIR_A]
        b0 = pairs[k, PAIR_B0]
        ka = effective_kind(pint[ia, 0])
        bb = pint[b0, 1]
        # quick may-touch test: active bounding sphere against the passive set's bounding sphere
        ax, ay, az, ar = _bound_radius(work, ka, ia)
        lx, ly, lz = ppar[k, PAR_BX], ppar[k, PAR_BY], ppar[k, PAR_BZ]
        bx = rot[bb, 0, 0] * lx + rot[bb, 0, 1] * ly + rot[bb, 0, 2] * lz + pos[bb, 0]
        by = rot[bb, 1, 0] * lx + rot[bb, 1, 1] * ly + rot[bb, 1, 2] * lz + pos[bb, 1]
        bz = rot[bb, 2, 0] * lx + rot[bb, 2, 1] * ly + rot[bb, 2, 2] * lz + pos[bb, 2]
        reach = ar + ppar[k, PAR_BR]
        if (ax - bx) ** 2 + (ay - by) ** 2 + (az - bz) ** 2 > reach * reach:
            continue
        if ppar[k, PAR_MT] >= 0.0 and _meridian_apart(ppar, k, rot, pos, bb, ax, ay, az, ar):
            continue
        best = NO
        bpx = bpy = bpz = bnx = bny = bnz = 0.0
        for jb in range(b0, b0 + pairs[k, PAIR_NB]):
            kb = pint[jb, 0]
            if ka == SPHERE:                          # the common case, dispatched here so it is inlined
                cx, cy, cz, r = work[ia, 0], work[ia, 1], work[ia, 2], work[ia, 3]
                if kb == CONE:
                    d, px, py, pz, nx, ny, nz = sphere_cone(cx, cy, cz, r, work, jb)
                elif kb == FACE:
                    d, px, py, pz, nx, ny, nz = sphere_face(cx, cy, cz, r, work, jb)
                elif kb == CIRCLE:
                    d, px, py, pz, nx, ny, nz = sphere_circle(cx, cy, cz, r, work, jb)
                elif kb == ANNULUS:
                    d, px, py, pz, nx, ny, nz = sphere_annulus(cx, cy, cz, r, work, jb)
                else:
                    d, px, py, pz, nx, ny, nz = pair_eval(work, ka, ia, effective_kind(kb), jb)
            else:
                d, px, py, pz, nx, ny, nz = pair_eval(work, ka, ia, effective_kind(kb), jb)
            if d > best:
                best, bpx, bpy, bpz, bnx, bny, bnz = d, px, py, pz, nx, ny, nz
        if best <= 0.0:
            continue
        if best > ppar[k, PAR_DMAX]:
            diag[0] = k
            diag[1] = best
            return 1
        active[k] = 1
        depth[k] = best
        point[k, 0], point[k, 1], point[k, 2] = bpx, bpy, bpz
        normal[k, 0], normal[k, 1], normal[k, 2] = bnx, bny, bnz
        # relative velocity of the active body's material point against the passive one
        ba = pint[ia, 1]
        va = point_velocity(vel[ba, 0], vel[ba, 1], vel[ba, 2], omega[ba, 0], omega[ba, 1], omega[ba, 2],
                            bpx - pos[ba, 0], bpy - pos[ba, 1], bpz - pos[ba, 2])
        vb = point_velocity(vel[bb, 0], vel[bb, 1], vel[bb, 2], omega[bb, 0], omega[bb, 1], omega[bb, 2],
                            bpx - pos[bb, 0], bpy - pos[bb, 1], bpz - pos[bb, 2])
        vx, vy, vz = va[0] - vb[0], va[1] - vb[1], va[2] - vb[2]
        vn = vx * bnx + vy * bny + vz * bnz          # > 0: separating
        fn = ppar[k, PAR_K] * best - ppar[k, PAR_C] * vn
        if fn < 0.0:                                  # no pulling force
            fn = 0.0
        tx, ty, tz = vx - vn * bnx, vy - vn * bny, vz - vn * bnz
        slip = math.sqrt(tx * tx + ty * ty + tz * tz)
        vs = ppar[k, PAR_VSLIP]
        g = ppar[k, PAR_MU] * fn / (slip if slip > vs else vs)   # linear ramp below the slip speed
        force[k, 0] = fn * bnx - g * tx
        force[k, 1] = fn * bny - g * ty
        force[k, 2] = fn * bnz - g * tz
    return 0


class ContactAbort(RuntimeError):
    """Penetration beyond the admissible maximum: the run stops (003 premise 5)."""

    def __init__(self, pair: str, depth: float, depth_max: float):
        self.pair, self.depth, self.depth_max = pair, float(depth), float(depth_max)
        super().__init__(f"contact pair {pair!r}: penetration {depth * 1e3:.3f} mm exceeds the admissible "
                         f"{depth_max * 1e3:.3f} mm; check the initial conditions and the part geometry")


def raise_on_status(status: int, diag: np.ndarray, geometry) -> None:
    """Raise ContactAbort naming the pair and depth if `evaluate_pairs` returned a failure status."""
    if status == STATUS_OK:
        return
    k = int(diag[0])
    raise ContactAbort(geometry.pair_names[k], float(diag[1]), float(geometry.ppar[k, PAR_DMAX]))


class PairSetOutput:
    """Preallocated per-pair outputs of `evaluate_pairs`."""

    def __init__(self, n_pairs: int):
        self.active = np.zeros(n_pairs, np.uint8)
        self.depth = np.zeros(n_pairs)
        self.point = np.zeros((n_pairs, 3))
        self.normal = np.zeros((n_pairs, 3))
        self.force = np.zeros((n_pairs, 3))
        self.diag = np.zeros(2)


def evaluate(geometry, pos, rot, vel, omega, state, out: PairSetOutput | None = None, kernel=None):
    """Python convenience: run the kernel once and raise ContactAbort on an excessive depth."""
    out = out or PairSetOutput(len(geometry.pair_names))
    fn = kernel or evaluate_pairs
    status = fn(geometry.prim, geometry.pint, geometry.pairs, geometry.ppar, pos, rot, vel, omega,
                np.asarray(state, float), geometry.work, out.active, out.depth, out.point, out.normal,
                out.force, out.diag)
    raise_on_status(status, out.diag, geometry)
    return out
