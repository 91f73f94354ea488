"""Numba kernels of the peripheral (IDSS-class) unit: three rigid bodies (passive craft, active craft, guide ring),
six spring-damper-brake legs with stroke stops, ring/ring and petal/ring contacts, soft-capture latches,
petal/petal (side and tip edges as capsules, seed 003 pair 6) and petal/ring-edge (generators against the edge
torus, pair 5) contacts, retraction by the legs and hooks closing; RK4 at a fixed step (docs/peripheral.md).

State s: per body b (0 passive craft, 1 active craft, 2 ring) at 13 b: CoM position (world), quaternion (w, x, y,
z, body to world), CoM velocity (world), angular velocity (body frame); then the dissipated energy and the drive
work (integrated, for the energy balance); then a friction bristle's stretch per contact point slot (S_FT) and a
brake stretch per leg (S_LEGZ), then each leg's rate as the retraction servo measures it (S_LEGV: the leg rate
through a first-order filter, legs.drive_rate_filter). World frame: the passive docking frame at t = 0. The interface faces (seal, then the
structures) touch as a contact pair; hooks close when every hook point is within the seal gap and pull the faces flat.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.peripheral import segment_torus, segment_trapezoid
from solver.core.elements import admittance_rate, position_servo, rate_filter
from solver.core.linear import lu_solve
from solver.core.free_body import (add_force_at, derivative, kinetic_energy, normalize, position_at, rotation_of,
                                   velocity_at)
from solver.friction import bristle_force, return_map, slider_force, slider_return_map

NB = 3
S_DISS, S_WORK = 13 * NB, 13 * NB + 1
# friction bristles (solver/friction.py): one stretch u (3, passive frame) per contact point slot, at S_FT + 3 slot;
# slots: the active ring's rim points (ring/ring), the active interface face's points, the petal points on the other
# ring (active, passive), the petal generators on the other ring's edge (active, passive), the petal edges on the
# other half's plates (active edge x passive plate, passive tip x active plate); then one brake stretch per leg
MAX_GEN = 9                                    # petal generators at most (the slots below are sized for 9)
SL_RR, SL_IF, SL_AP, SL_PP = 0, 48, 96, 96 + 135
SL_AG, SL_PG, SL_AE, SL_PT = 366, 393, 420, 447
N_SLOT = 456
S_FT = 13 * NB + 2
S_LEGZ = S_FT + 3 * N_SLOT                     # leg brake stretches (6)
S_LEGV = S_LEGZ + 6                            # leg rates as the servos measure them (filtered, 6)
S_ADM = S_LEGV + 6                             # the soft-capture admittance's commanded ring offset (6, base frame)
NS = S_ADM + 6

# parameters P
(P_FIXED, P_RIN, P_ROUT, P_BORE_DEPTH, P_K_LEG, P_C_LEG, P_BRAKE, P_KB, P_K_STOP, P_RETRACT, P_EXTEND,
 P_V_RETRACT, P_DELAY, P_DL_RETRACT, P_K_RR, P_C_RR, P_MU_RR, P_KT_RR, P_K_PR, P_C_PR, P_MU_PR, P_KT_PR,
 P_K_LATCH, P_C_LATCH, P_CAPTURE_TOL, P_HOOK_GAP, P_TOL_R, P_CAPTURE_GAP, P_K_PP, P_C_PP, P_MU_PP, P_KT_PP,
 P_GEN_R, P_BRAKE_FREE, P_CB, P_CT_RR, P_CT_PR, P_CT_PP, P_K_IF, P_C_IF, P_MU_IF, P_KT_IF, P_CT_IF, P_IF_RIN,
 P_IF_ROUT, P_PRELOAD, P_CLOSE_TIME, P_SEAL, P_K_SEAL, P_KD, P_CD, P_FD, P_SETTLE_RATE, P_SETTLE_TIME,
 P_SETTLE_MAX, P_ALIGN_ACC, P_TAU_D, P_SC_ON, P_SC_KA, P_SC_CA, P_SC_KL, P_SC_CL, P_SC_KT, P_SC_CT, P_SC_KP,
 P_SC_CP, P_SC_KPR, P_SC_CPR, P_SC_FMAX, P_H0, P_SC_TH) = range(71)
NP = 71

# discrete state Z (Z_LATCHED + i: latch i has caught its striker; soft capture when all three have)
Z_CAPT, Z_TCAPT, Z_RETRACT, Z_TRETRACT, Z_HOOKS, Z_THOOKS, Z_ANCHOR, Z_FIRST, Z_LATCHED = 0, 1, 2, 3, 4, 5, 6, 15, 16
Z_L0, Z_TRDUR = 19, 25   # legs' lengths when the retraction starts (6), the time their brakes' path takes
Z_TMOVE = 26             # the last time a leg's rate exceeded legs.settle_rate (after capture)
Z_LOFF = 27              # each leg's stroke at the handover under active soft capture (its spring's rest from then, 6)
Z_HAND, Z_THAND = 33, 34   # the legs handed over to their springs and brakes (at capture, or under active soft
Z_XC0 = 35                 # capture at the end of the handover path), and when; the admittance's offset at capture (6)
NZ = 41

# contact pairs: ring/ring, active petal k on the passive ring, passive petal k on the active ring, latch k,
# active petal k on passive petal j (at PAIR_PET + 3 k + j), the interface faces (hard-capture faces and seal)
NPAIR = 20
PAIR_RR, PAIR_AP, PAIR_PP, PAIR_LATCH, PAIR_PET, PAIR_IF = 0, 1, 4, 7, 10, 19
# rows of the work array W (seed 003 world rows, solver/contact/kernels.py): the active petals' edges in the passive
# frame, the passive petal plates (constant; centre [16:19] and bounding radius [19] added), a scratch segment, the
# passive and active ring's rounded inner edge (tori), the active petal plates (constant, ring frame), the passive
# petals' tip edges in the ring frame
W_AEDGE, W_PPLATE, W_SEG, W_PCIRC, W_ACIRC, W_APLATE, W_PTIP, NW = 0, 9, 12, 13, 14, 15, 18, 21

TIP_ID = np.arange(3)   # the passive tip edge rows' petal index

IF_REACH = 0.3        # m: the passive structure's plane reaches this far past its interface face's outer radius
HOOK_DAMPING = 0.0    # N*s/m per hook (the seal and the contact damp the closing)
ACTIVE_MIN = 0.05     # N: a pair touches (its record, its contact intervals) while it carries at least this
HOOK_STRETCH = 1e-3   # m: a hook's spring stretch at its preload (the drive closes the hooks this far past contact)
DAMP_RAMP = 1e-4   # m: contact damping ramped in over this depth (a touching point adds no force step)

# events
EV_FIRST, EV_CAPTURE, EV_RETRACT, EV_HOOKS, EV_HARD = 0, 1, 2, 3, 4
ST_OK, ST_NAN, ST_DONE = 0, 1, 2

# channels (order of the run file)
CHANNELS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz",
            "leg_1", "leg_2", "leg_3", "leg_4", "leg_5", "leg_6",
            "leg_1_force", "leg_2_force", "leg_3_force", "leg_4_force", "leg_5_force", "leg_6_force",
            "ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw", "ring_vx", "ring_vy", "ring_vz",
            "cm_vx", "cm_vy", "cm_vz", "latches_engaged", "hooks_closed", "retraction", "hook_gap",
            "hook_gap_min", "interface_tilt", "iface_Fx", "iface_Fy", "iface_Fz", "iface_Mx", "iface_My", "iface_Mz",
            "iface_F", "iface_M", "iface_F_soft", "iface_M_soft", "iface_F_hard", "iface_M_hard", "max_depth", "kinetic_energy", "potential_energy", "dissipated_energy", "drive_work",
            "total_energy", "ring_couple_x", "ring_couple_y", "ring_couple_z")
NCH = len(CHANNELS)
CH = {n: i for i, n in enumerate(CHANNELS)}
C_LEG, C_LEGF, C_RING, C_RV, C_CMV = CH["leg_1"], CH["leg_1_force"], CH["ring_x"], CH["ring_vx"], CH["cm_vx"]
C_LATCH, C_HOOKS, C_RETR, C_GAP, C_DEPTH = (CH[n] for n in ("latches_engaged", "hooks_closed", "retraction", "hook_gap",
                                                            "max_depth"))
C_KE, C_PE, C_DISS, C_WORK, C_TOT = (CH[n] for n in ("kinetic_energy", "potential_energy", "dissipated_energy",
                                                      "drive_work", "total_energy"))

C_GAPMIN, C_TILT, C_IF = CH["hook_gap_min"], CH["interface_tilt"], CH["iface_Fx"]
C_CPL = CH["ring_couple_x"]


@njit(cache=True)
def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def _point(s, R, COM, b, local):
    """World position and velocity of a point given in body b's docking frame."""
    rw = R[b] @ (local - COM[b])
    o = 13 * b
    x = s[o:o + 3] + rw
    w = R[b] @ s[o + 10:o + 13]
    v = s[o + 7:o + 10] + _cross(w, rw)
    return x, v


@njit(cache=True)
def _relative(s, R, COM, a, b):
    """M, c with body b's docking-frame coordinates of a point p of body a's docking frame = M p + c."""
    M = R[b].T @ R[a]
    c = R[b].T @ (s[13 * a:13 * a + 3] - R[a] @ COM[a] - s[13 * b:13 * b + 3]) + COM[b]
    return M, c


@njit(cache=True)
def _contact(s, R, COM, F, T, a, xa, b, n, d, k, c, mu, kt, ct, slot, rec, j, out, ds, full, FT, d2=1e300, k2=0.0,
             side=1.0):
    """Penalty contact of a point of body a at xa, depth d along unit n (from body b into body a): k d + c d'
    (c ramped in over DAMP_RAMP of depth), never pulling; friction by the point's bristle (solver/friction.py, stretch
    at S_FT + 3 slot in the passive frame: sticks below mu F_n). Returns (potential, dissipation rate); accumulates the
    pair's record row j of `rec` (force on a, force-weighted point, deepest normal, depth, normal speed, moment;
    side -1: the force on b and the normal from a into b). With d2: k up to depth d2 (a seal), k2 beyond it."""
    x0, x1, x2 = xa[0], xa[1], xa[2]
    n0, n1, n2 = n[0], n[1], n[2]
    va0, va1, va2 = velocity_at(s, 13 * a, R[a], x0, x1, x2)
    vb0, vb1, vb2 = velocity_at(s, 13 * b, R[b], x0, x1, x2)
    vr0, vr1, vr2 = va0 - vb0, va1 - vb1, va2 - vb2
    vn = vr0 * n0 + vr1 * n1 + vr2 * n2
    if d <= d2:
        fel = k * d
        eel = 0.5 * k * d * d
    else:
        fel = k * d2 + k2 * (d - d2)
        eel = 0.5 * k * d2 * d2 + k * d2 * (d - d2) + 0.5 * k2 * (d - d2) * (d - d2)
    fn = fel - c * min(1.0, d / DAMP_RAMP) * vn    # damping grows over the first DAMP_RAMP of depth: no jump
    if fn < 0.0:
        fn = 0.0
    vt = (vr0 - vn * n0, vr1 - vn * n1, vr2 - vn * n2)
    js = S_FT + 3 * slot
    u = (R[0, 0, 0] * s[js] + R[0, 0, 1] * s[js + 1] + R[0, 0, 2] * s[js + 2],
         R[0, 1, 0] * s[js] + R[0, 1, 1] * s[js + 1] + R[0, 1, 2] * s[js + 2],
         R[0, 2, 0] * s[js] + R[0, 2, 1] * s[js + 1] + R[0, 2, 2] * s[js + 2])
    nt = (n0, n1, n2)
    if full:                                          # a step's start: the stretch return-mapped (solver/friction.py)
        u, freed = return_map(u, nt, mu, fn, kt)
        s[S_DISS] += freed
        for q in range(3):
            s[js + q] = R[0, 0, q] * u[0] + R[0, 1, q] * u[1] + R[0, 2, q] * u[2]
        FT[slot, 0] = 1.0
        FT[slot, 1] = kt
    ft, e_t, p_t = bristle_force(u, nt, vt, fn, mu, kt, ct)
    for q in range(3):
        ds[js + q] = R[0, 0, q] * vt[0] + R[0, 1, q] * vt[1] + R[0, 2, q] * vt[2]
    f0, f1, f2 = fn * n0 + ft[0], fn * n1 + ft[1], fn * n2 + ft[2]
    add_force_at(F, T, a, s, 13 * a, x0, x1, x2, f0, f1, f2)
    add_force_at(F, T, b, s, 13 * b, x0, x1, x2, -f0, -f1, -f2)
    if out and fn > 0.0:
        rec[j, 0] = 1.0
        g0, g1, g2 = side * f0, side * f1, side * f2
        rec[j, 1] += g0
        rec[j, 2] += g1
        rec[j, 3] += g2
        rec[j, 4] += fn * x0
        rec[j, 5] += fn * x1
        rec[j, 6] += fn * x2
        rec[j, 13] += fn
        rec[j, 14] += x1 * g2 - x2 * g1
        rec[j, 15] += x2 * g0 - x0 * g2
        rec[j, 16] += x0 * g1 - x1 * g0
        if d > rec[j, 10]:
            rec[j, 7], rec[j, 8], rec[j, 9] = side * n0, side * n1, side * n2
            rec[j, 10] = d
            rec[j, 11] = vn
    return eel + e_t, (fel - fn) * vn - (ft[0] * vt[0] + ft[1] * vt[1] + ft[2] * vt[2]) - p_t


@njit(cache=True)
def _bore(s, R, COM, F, T, P, a, b, pts, sign, k, c, mu, kt, ct, sl0, rec, j0, pid, out, ds, full, FT):
    """Points `pts` of body a (its frame) against body b's ring face (at x = 0, facing sign * x) and bore edge:
    a point inside the ring's solid corner is pushed out the shorter way (along the face normal or to the axis)."""
    pe = 0.0
    pd = 0.0
    M, c0 = _relative(s, R, COM, a, b)
    for i in range(pts.shape[0]):
        p0, p1, p2 = pts[i, 0], pts[i, 1], pts[i, 2]
        lx = M[0, 0] * p0 + M[0, 1] * p1 + M[0, 2] * p2 + c0[0]
        depth_face = -sign * lx
        if depth_face <= 0.0 or depth_face > P[P_BORE_DEPTH]:
            continue
        ly = M[1, 0] * p0 + M[1, 1] * p1 + M[1, 2] * p2 + c0[1]
        lz = M[2, 0] * p0 + M[2, 1] * p1 + M[2, 2] * p2 + c0[2]
        r = math.sqrt(ly * ly + lz * lz)
        if r <= P[P_RIN] or r >= P[P_ROUT]:
            continue
        xa = _point(s, R, COM, a, pts[i])[0]
        loc = np.array([lx, ly, lz])
        depth_bore = r - P[P_RIN]
        if depth_face <= depth_bore:
            nl = np.array([sign, 0.0, 0.0])
            d = depth_face
        else:
            nl = np.array([0.0, -loc[1] / r, -loc[2] / r])
            d = depth_bore
        e, q = _contact(s, R, COM, F, T, a, xa, b, R[b] @ nl, d, k, c, mu, kt, ct, sl0 + i, rec, j0 + int(pid[i]),
                        out, ds, full, FT)
        pe += e
        pd += q
    return pe, pd


@njit(cache=True)
def _to_world(s, R, COM, b, px, py, pz):
    """World position of a point given in body b's docking frame (scalars in, array out)."""
    x = np.empty(3)
    x[0], x[1], x[2] = position_at(s, 13 * b, R[b], px - COM[b, 0], py - COM[b, 1], pz - COM[b, 2])
    return x


@njit(cache=True)
def _leg(s, R, COM, BASE, RINGP, i):
    """Leg i: its base and ring points (world), the vector between them, its length, and the ring point's velocity
    relative to the base point's (world)."""
    xb = _to_world(s, R, COM, 1, BASE[i, 0], BASE[i, 1], BASE[i, 2])
    xp = _to_world(s, R, COM, 2, RINGP[i, 0], RINGP[i, 1], RINGP[i, 2])
    vb0, vb1, vb2 = velocity_at(s, 13, R[1], xb[0], xb[1], xb[2])
    vp0, vp1, vp2 = velocity_at(s, 26, R[2], xp[0], xp[1], xp[2])
    d0, d1, d2 = xp[0] - xb[0], xp[1] - xb[1], xp[2] - xb[2]
    L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    return xb, xp, d0, d1, d2, L, vp0 - vb0, vp1 - vb1, vp2 - vb2


@njit(cache=True)
def _edge(s, R, COM, F, T, P, a, b, GEN, GID, W, circ, k, c, mu, kt, ct, sl0, rec, j0, out, ds, full, FT):
    """Petal generators `GEN` of body a (mid-surface segments, radius P_GEN_R) against body b's rounded ring inner edge
    (torus row `circ` of W in b's frame: its tube tangent to the face and to the bore; seed 003 pair 5 as
    `segment_torus`). A whole torus, no wedge: its depth is continuous everywhere (a conservative contact); the
    face and the bore beyond the rounding are `_bore`'s."""
    pe = 0.0
    pd = 0.0
    M, c0 = _relative(s, R, COM, a, b)
    r = P[P_GEN_R]
    Rc, reach = W[circ, 9], W[circ, 10] + r
    ax = W[circ, 3]                                # the edge's axis is +x or -x of b's frame
    for i in range(GEN.shape[0]):
        for e in range(2):
            p0, p1, p2 = GEN[i, 3 * e], GEN[i, 3 * e + 1], GEN[i, 3 * e + 2]
            for q in range(3):
                W[W_SEG, 3 * e + q] = M[q, 0] * p0 + M[q, 1] * p1 + M[q, 2] * p2 + c0[q]
        x0, x1 = ax * (W[W_SEG, 0] - W[circ, 0]), ax * (W[W_SEG, 3] - W[circ, 0])
        if (x0 > reach and x1 > reach) or (x0 < -reach and x1 < -reach):
            continue                               # wholly ahead of the face or behind it: farther than reach
        r0 = math.sqrt(W[W_SEG, 1] ** 2 + W[W_SEG, 2] ** 2)
        r1 = math.sqrt(W[W_SEG, 4] ** 2 + W[W_SEG, 5] ** 2)
        if r0 < Rc - reach and r1 < Rc - reach:
            continue                               # the distance from the axis is convex along a segment
        W[W_SEG, 6] = r
        d, qx, qy, qz, nx, ny, nz = segment_torus(W, W_SEG, circ)
        if d <= 0.0:
            continue
        e_, q_ = _contact_in_b(s, R, COM, F, T, a, b, d, qx, qy, qz, nx, ny, nz, k, c, mu, kt, ct, sl0 + i, rec,
                               j0 + int(GID[i]), out, ds, full, FT)
        pe += e_
        pd += q_
    return pe, pd


@njit(cache=True)
def _contact_in_b(s, R, COM, F, T, a, b, d, qx, qy, qz, nx, ny, nz, k, c, mu, kt, ct, slot, rec, j, out, ds, full,
                  FT, side=1.0):
    """`_contact` of a pair routine's result given in body b's frame (point q, unit normal n, depth d; side as
    `_contact`'s)."""
    xa = _to_world(s, R, COM, b, qx, qy, qz)
    n = np.empty(3)
    for q in range(3):
        n[q] = R[b, q, 0] * nx + R[b, q, 1] * ny + R[b, q, 2] * nz
    return _contact(s, R, COM, F, T, a, xa, b, n, d, k, c, mu, kt, ct, slot, rec, j, out, ds, full, FT, 1e300, 0.0,
                    side)


@njit(cache=True)
def _edges_plates(s, R, COM, P, a, b, EDGE, EID, W, w0, wp, F, T, rec, out, sl0, ds, full, FT):
    """Petal edges EDGE of body a (mid-surface lines, radius half the thickness; rows W[w0:]) against body b's petal
    plates (rows W[wp:wp + 3], b's frame) by `segment_trapezoid`; records at PAIR_PET + 3 active + passive petal."""
    pe = 0.0
    pd = 0.0
    M, c0 = _relative(s, R, COM, a, b)
    k, c, mu, kt, ct = P[P_K_PP], P[P_C_PP], P[P_MU_PP], P[P_KT_PP], P[P_CT_PP]
    for i in range(EDGE.shape[0]):
        ia = w0 + i
        for e in range(2):
            p0, p1, p2 = EDGE[i, 3 * e], EDGE[i, 3 * e + 1], EDGE[i, 3 * e + 2]
            for q in range(3):
                W[ia, 3 * e + q] = M[q, 0] * p0 + M[q, 1] * p1 + M[q, 2] * p2 + c0[q]
        W[ia, 6] = P[P_GEN_R]
        ha = 0.5 * math.sqrt((W[ia, 3] - W[ia, 0]) ** 2 + (W[ia, 4] - W[ia, 1]) ** 2 + (W[ia, 5] - W[ia, 2]) ** 2)
        for j in range(3):
            ib = wp + j
            reach = ha + W[ib, 19] + W[ia, 6] + W[ib, 15]
            dc = 0.0
            for q in range(3):
                dc += (0.5 * (W[ia, q] + W[ia, 3 + q]) - W[ib, 16 + q]) ** 2
            if dc > reach * reach:
                continue
            d, qx, qy, qz, nx, ny, nz = segment_trapezoid(W, ia, ib)
            if d <= 0.0:
                continue
            jr = PAIR_PET + (3 * int(EID[i]) + j if a == 2 else 3 * j + int(EID[i]))
            # a passive tip on an active plate: the pair records the force on the active petal (side -1)
            e_, q_ = _contact_in_b(s, R, COM, F, T, a, b, d, qx, qy, qz, nx, ny, nz, k, c, mu, kt, ct, sl0 + 3 * i + j,
                                   rec, jr, out, ds, full, FT, -1.0 if a == 0 else 1.0)
            pe += e_
            pd += q_
    return pe, pd


@njit(cache=True)
def _petal_petal(s, R, COM, F, T, P, AEDGE, AEID, PTIP, W, rec, out, ds, full, FT):
    """Petal on petal (seed 003 pair 6 as `segment_trapezoid`): the active petals' side and tip edges against the
    passive plates, and the passive petals' tip edges against the active plates (the side edges' crossings are
    the first set's already)."""
    pe, pd = _edges_plates(s, R, COM, P, 2, 0, AEDGE, AEID, W, W_AEDGE, W_PPLATE, F, T, rec, out, SL_AE, ds, full, FT)
    e, q = _edges_plates(s, R, COM, P, 0, 2, PTIP, TIP_ID, W, W_PTIP, W_APLATE, F, T, rec, out, SL_PT, ds, full, FT)
    return pe + e, pd + q


@njit(cache=True)
def _face_points(s, R, COM, F, T, P, a, PTS, rin, rout, depth_max, k, c, mu, kt, ct, sl0, rec, j, out, ds, full, FT,
                 seal=0.0, k_seal=0.0):
    """Points PTS of body a's face (its frame) against the passive craft's face at x = 0 over the annulus [rin, rout]
    (with P_TOL_R): a point behind it is pushed out the shortest way, along the face normal or across the annulus'
    rims while less than depth_max deep (the ring's solid), along the normal at any depth when depth_max <= 0 (the
    interface structure: the planes cannot pass each other). With `seal`: a seal of that height and total stiffness
    k_seal on the face, compressed before the structures meet (k behind it)."""
    pe = 0.0
    pd = 0.0
    M, c0 = _relative(s, R, COM, a, 0)
    for i in range(PTS.shape[0]):
        p0, p1, p2 = PTS[i, 0], PTS[i, 1], PTS[i, 2]
        lx = M[0, 0] * p0 + M[0, 1] * p1 + M[0, 2] * p2 + c0[0]
        if lx >= seal:
            continue
        ly = M[1, 0] * p0 + M[1, 1] * p1 + M[1, 2] * p2 + c0[1]
        lz = M[2, 0] * p0 + M[2, 1] * p1 + M[2, 2] * p2 + c0[2]
        r = math.sqrt(ly * ly + lz * lz)
        d_in, d_out = r - (rin - P[P_TOL_R]), rout + P[P_TOL_R] - r
        if d_in <= 0.0 or d_out <= 0.0 or (depth_max > 0.0 and -lx >= depth_max):
            continue
        xa = _to_world(s, R, COM, a, p0, p1, p2)
        d = seal - lx
        m0, m1, m2 = 1.0, 0.0, 0.0
        if depth_max > 0.0:
            if d_in < d:
                d = d_in
                m0, m1, m2 = 0.0, -ly / r, -lz / r
            if d_out < d:
                d = d_out
                m0, m1, m2 = 0.0, ly / r, lz / r
        nw = np.empty(3)
        for q in range(3):
            nw[q] = R[0, q, 0] * m0 + R[0, q, 1] * m1 + R[0, q, 2] * m2
        if seal > 0.0:
            e, q = _contact(s, R, COM, F, T, a, xa, 0, nw, d, k_seal, c, mu, kt, ct, sl0 + i, rec, j, out, ds, full,
                            FT, seal, k)
        else:
            e, q = _contact(s, R, COM, F, T, a, xa, 0, nw, d, k, c, mu, kt, ct, sl0 + i, rec, j, out, ds, full, FT)
        pe += e
        pd += q
    return pe, pd


@njit(cache=True)
def evaluate(s, Z, t, P, COM, MASS, INERT, INVI, BASE, RINGP, LN, RIM, APET, APID, PPET, PPID, LATCH, STRIKER,
             HOOK, AGEN, AGID, PGEN, PGID, AEDGE, AEID, PTIP, W, IFP, FT, ds, ch, rec, out, full):
    """Derivative ds of state s at time t; with `out`, the channels ch and the pairs' records rec. `full`: a step's
    start, where the friction bristles and leg brakes are return-mapped (s changes) and FT marks the slots touched."""
    R = np.zeros((NB, 3, 3))
    for b in range(NB):
        rotation_of(s, 13 * b, R[b])
    F = np.zeros((NB, 3))
    T = np.zeros((NB, 3))
    if out:
        rec[:, :] = 0.0
    if full:
        FT[:, 0] = 0.0
    pe = 0.0
    pd = 0.0
    # legs: spring about the commanded length, damper, brake (a scalar bristle: sticks), stroke stops
    fbase = np.zeros(3)
    mbase = np.zeros(3)
    obase = s[13:16] - R[1] @ COM[1]   # active docking frame origin (world)
    # compliant until soft capture, braked from then (the brake a sticking slider); from the retraction on, each leg
    # is driven along its path from its length at the start to the common retracted length (then held there) by a
    # force-limited servo (legs.drive_stiffness, drive_damping, drive_force), the springs' rest length shortened along
    # the same smooth path: the legs follow it, aligning the craft, unless a load above the brake level holds them back
    # (the servo's and the rest length's work are the drive's)
    brake = P[P_BRAKE] if Z[Z_HAND] > 0.5 else P[P_BRAKE_FREE]
    driven = Z[Z_RETRACT] > 0.5
    tr = min(t - Z[Z_TRETRACT], Z[Z_TRDUR])
    on_path = driven and t - Z[Z_TRETRACT] < Z[Z_TRDUR]
    # the springs' rest length shortened by `retract` along the same smooth path (3u^2 - 2u^3), at its rate dL0
    u = (tr / Z[Z_TRDUR] if Z[Z_TRDUR] > 0.0 else 1.0) if driven else 0.0
    retract = P[P_DL_RETRACT] * u * u * (3.0 - 2.0 * u)
    dL0 = P[P_DL_RETRACT] * 6.0 * u * (1.0 - u) / Z[Z_TRDUR] if on_path else 0.0
    active_sc = P[P_SC_ON] > 0.5 and Z[Z_HAND] < 0.5   # until the handover the legs' actuators are the controller's
    for i in range(6):
        xb, xp, d0, d1, d2, L, w0, w1, w2 = _leg(s, R, COM, BASE, RINGP, i)
        u0, u1, u2 = d0 / L, d1 / L, d2 / L
        Ld = w0 * u0 + w1 * u1 + w2 * u2
        stroke = L - LN[i]
        ext = stroke + retract          # spring extension about the commanded length LN - retract
        if P[P_SC_ON] > 0.5 and Z[Z_HAND] > 0.5:     # the springs take over at the strokes the actuators left them at,
            ext -= Z[Z_LOFF + i] * (1.0 - u * u * (3.0 - 2.0 * u))   # their rest moved back along the retraction path
            if on_path:
                ds[S_WORK] = ds[S_WORK] + P[P_K_LEG] * ext * Z[Z_LOFF + i] * 6.0 * u * (1.0 - u) / Z[Z_TRDUR]
        f = 0.0 if active_sc else P[P_K_LEG] * ext + P[P_C_LEG] * Ld
        jz = S_LEGZ + i
        if P[P_TAU_D] > 0.0:            # the servo's rate estimate follows the leg rate (filtered)
            ds[S_LEGV + i] = rate_filter(s[S_LEGV + i], Ld, P[P_TAU_D])
        if driven:
            # smooth path (3u^2 - 2u^3): it starts and ends at rest, so the faces meet without an impact
            dl_i = LN[i] - P[P_DL_RETRACT] - Z[Z_L0 + i]
            lcmd = Z[Z_L0 + i] + dl_i * u * u * (3.0 - 2.0 * u)
            vcmd = dl_i * 6.0 * u * (1.0 - u) / Z[Z_TRDUR] if on_path else 0.0
            vs = s[S_LEGV + i] if P[P_TAU_D] > 0.0 else Ld       # the leg rate as the servo measures it
            fb = position_servo(P[P_KD], P[P_CD], P[P_FD], L - lcmd, vs - vcmd)
            if full and s[jz] != 0.0:                 # the brake's stretch is released to the drive
                s[S_DISS] += 0.5 * P[P_KB] * s[jz] * s[jz]
                s[jz] = 0.0
            ds[jz] = 0.0
            ds[S_WORK] = ds[S_WORK] - fb * Ld
            pe += 0.5 * P[P_K_LEG] * ext * ext
            pd += P[P_C_LEG] * Ld * Ld
        else:
            if full:
                z, freed = slider_return_map(s[jz], brake, P[P_KB])
                s[jz] = z
                s[S_DISS] += freed
            fs, e_b, p_b = slider_force(s[jz], Ld, brake, P[P_KB], P[P_CB])
            fb = -fs                    # tension +: the brake resists the leg's rate
            ds[jz] = Ld
            if active_sc:
                pe += e_b
                pd += fb * Ld - p_b
            else:
                pe += 0.5 * P[P_K_LEG] * ext * ext + e_b
                pd += P[P_C_LEG] * Ld * Ld + fb * Ld - p_b
        f += fb
        if dL0 > 0.0:                   # the drive shortens the rest length: its power into the legs is k ext dL0
            ds[S_WORK] = ds[S_WORK] + P[P_K_LEG] * ext * dL0
        if stroke > P[P_EXTEND]:
            x = stroke - P[P_EXTEND]
            f += P[P_K_STOP] * x
            pe += 0.5 * P[P_K_STOP] * x * x
        elif stroke < -P[P_RETRACT]:
            x = stroke + P[P_RETRACT]
            f += P[P_K_STOP] * x
            pe += 0.5 * P[P_K_STOP] * x * x
        add_force_at(F, T, 2, s, 26, xp[0], xp[1], xp[2], -f * u0, -f * u1, -f * u2)
        add_force_at(F, T, 1, s, 13, xb[0], xb[1], xb[2], f * u0, f * u1, f * u2)
        if out:
            fbase += f * np.array([u0, u1, u2])
            mbase += _cross(xb - obase, f * np.array([u0, u1, u2]))
            ch[C_LEG + i] = stroke
            ch[C_LEGF + i] = f
    F2 = F[2].copy()                  # the legs' load on the ring (the load cells measure the rest)
    T2 = T[2].copy()
    # ring face on ring face: rim points of the active face against the passive annulus (and its solid)
    nr = RIM.shape[0]
    e, q = _face_points(s, R, COM, F, T, P, 2, RIM, P[P_RIN], P[P_ROUT], P[P_BORE_DEPTH], P[P_K_RR] / nr,
                        P[P_C_RR] / nr, P[P_MU_RR], P[P_KT_RR] / nr, P[P_CT_RR] / nr, SL_RR, rec, PAIR_RR, out, ds,
                        full, FT)
    pe += e
    pd += q
    # the interface structures (hard-capture faces, seal): the active face's points against the passive face
    ni = IFP.shape[0]
    # (the passive structure is one plane from its ring's bore outward, IF_REACH past its interface face: a lateral
    # offset of the active craft does not let its face pass beside the passive one)
    e, q = _face_points(s, R, COM, F, T, P, 1, IFP, P[P_RIN], P[P_IF_ROUT] + IF_REACH, 0.0, P[P_K_IF] / ni,
                        P[P_C_IF] / ni,
                        P[P_MU_IF], P[P_KT_IF] / ni, P[P_CT_IF] / ni, SL_IF, rec, PAIR_IF, out, ds, full, FT,
                        P[P_SEAL], P[P_K_SEAL] / ni)
    pe += e
    pd += q
    # petals in the other ring's bore
    kp, cp, mp, ktp, ctp = P[P_K_PR], P[P_C_PR], P[P_MU_PR], P[P_KT_PR], P[P_CT_PR]
    e, q = _bore(s, R, COM, F, T, P, 2, 0, APET, 1.0, kp, cp, mp, ktp, ctp, SL_AP, rec, PAIR_AP, APID, out, ds, full,
                 FT)
    pe += e
    pd += q
    e, q = _bore(s, R, COM, F, T, P, 0, 2, PPET, -1.0, kp, cp, mp, ktp, ctp, SL_PP, rec, PAIR_PP, PPID, out, ds, full,
                 FT)
    pe += e
    pd += q
    # petal generators on the other ring's inner edge (torus), petal edges on the other half's petal edges
    e, q = _edge(s, R, COM, F, T, P, 2, 0, AGEN, AGID, W, W_PCIRC, kp, cp, mp, ktp, ctp, SL_AG, rec, PAIR_AP, out, ds,
                 full, FT)
    pe += e
    pd += q
    e, q = _edge(s, R, COM, F, T, P, 0, 2, PGEN, PGID, W, W_ACIRC, kp, cp, mp, ktp, ctp, SL_PG, rec, PAIR_PP, out, ds,
                 full, FT)
    pe += e
    pd += q
    e, q = _petal_petal(s, R, COM, F, T, P, AEDGE, AEID, PTIP, W, rec, out, ds, full, FT)
    pe += e
    pd += q
    # latches: a latch that has caught its striker holds the ring's latch point against separation from its anchor
    # on the passive craft (the anchor follows an approach, `_discrete`); after soft capture also across the axis,
    # the anchor moving from where it caught to the striker's seat over the retraction delay (the ring centred).
    # Each latch is its own pair record (one force at its point: the three carry the latches' couple)
    nl = 0
    for i in range(3):
        if Z[Z_LATCHED + i] < 0.5:
            continue
        xl, vl = _point(s, R, COM, 2, LATCH[i])
        anchor = Z[Z_ANCHOR + 3 * i:Z_ANCHOR + 3 * i + 3].copy()
        a1 = a2 = 0.0                                # the anchor's lateral rate (passive frame)
        if Z[Z_CAPT] > 0.5:                          # the jaw centres its striker: the anchor moves smoothly from
            u = 1.0 if P[P_DELAY] <= 0.0 else min(1.0, (t - Z[Z_TCAPT]) / P[P_DELAY])   # where it caught to the
            sm, dsm = u * u * (3.0 - 2.0 * u), (6.0 * u * (1.0 - u) / P[P_DELAY] if u < 1.0 else 0.0)  # seat
            a1, a2 = (STRIKER[i, 1] - anchor[1]) * dsm, (STRIKER[i, 2] - anchor[2]) * dsm
            anchor[1] += (STRIKER[i, 1] - anchor[1]) * sm
            anchor[2] += (STRIKER[i, 2] - anchor[2]) * sm
        xs, vs_ = _point(s, R, COM, 0, anchor)
        e = R[0].T @ (xs - xl)                       # passive frame: anchor minus latch point
        ed = R[0].T @ (vs_ - vl)
        if e[0] > 0.0:
            e[0] = 0.0                               # the latch point is past its anchor (approach): free
            ed[0] = 0.0
        if Z[Z_CAPT] < 0.5:
            e[1] = e[2] = ed[1] = ed[2] = 0.0        # before soft capture the pin slides in the latch's jaw
        f = P[P_K_LATCH] * e + P[P_C_LATCH] * ed
        f[0] = min(f[0], 0.0)                        # a latch never pushes the ring away from the passive face
        fw = R[0] @ f
        add_force_at(F, T, 2, s, 26, xl[0], xl[1], xl[2], fw[0], fw[1], fw[2])
        add_force_at(F, T, 0, s, 0, xl[0], xl[1], xl[2], -fw[0], -fw[1], -fw[2])
        # (at the latch point: the pair's force and moment balance)
        pe += 0.5 * P[P_K_LATCH] * (e @ e)
        pd += f @ ed - P[P_K_LATCH] * (e @ ed)        # the latch's work on the bodies less its stored energy's rate
        ds[S_WORK] = ds[S_WORK] + P[P_K_LATCH] * (e[1] * a1 + e[2] * a2)   # the centring drive's work
        nl += 1
        if out:
            j = PAIR_LATCH + i
            fm = math.sqrt(fw @ fw)
            if fm > 0.0:
                rec[j, 0] = 1.0
            rec[j, 1:4] = fw
            rec[j, 4:7] = xl
            rec[j, 13] = 1.0
            rec[j, 7:10] = fw / (fm + 1e-300)
            rec[j, 14:17] = _cross(xl, fw)
    if active_sc:   # after capture the offset goes back to neutral along a smooth path (soft_capture.handover_time)
        uh = min(1.0, (t - Z[Z_TCAPT]) / P[P_SC_TH]) if Z[Z_CAPT] > 0.5 and P[P_SC_TH] > 0.0 else -1.0
        _soft_capture(s, Z, R, COM, P, BASE, RINGP, F, T, F2, T2, ds, ch, out, fbase, mbase, obase, uh)
    # hooks: closed, each pulls the active interface face onto the passive one at its point: a stiff hook spring
    # (preload / HOOK_STRETCH) whose seat the hook drive moves from the closing gap to HOOK_STRETCH past contact over
    # the closing time, its force capped at the preload (the interface contact takes it: an internal load)
    if Z[Z_HOOKS] > 0.5:
        u = 1.0 if P[P_CLOSE_TIME] <= 0.0 else min(1.0, (t - Z[Z_THOOKS]) / P[P_CLOSE_TIME])
        seat = P[P_HOOK_GAP] - u * u * (3.0 - 2.0 * u) * (P[P_HOOK_GAP] + HOOK_STRETCH)    # smooth, from rest
        kh = P[P_PRELOAD] / HOOK_STRETCH
        oP = s[0:3] - R[0] @ COM[0]
        for i in range(HOOK.shape[0]):
            x = _to_world(s, R, COM, 1, HOOK[i, 0], HOOK[i, 1], HOOK[i, 2])
            gi = R[0, 0, 0] * (x[0] - oP[0]) + R[0, 1, 0] * (x[1] - oP[1]) + R[0, 2, 0] * (x[2] - oP[2])
            va0, va1, va2 = velocity_at(s, 13, R[1], x[0], x[1], x[2])
            vb0, vb1, vb2 = velocity_at(s, 0, R[0], x[0], x[1], x[2])
            vg = R[0, 0, 0] * (va0 - vb0) + R[0, 1, 0] * (va1 - vb1) + R[0, 2, 0] * (va2 - vb2)
            fh = 0.0
            if gi > seat:                             # the hook spring and its damper (critical on 10 t), pulling only
                fh = min(P[P_PRELOAD], max(0.0, kh * (gi - seat) + HOOK_DAMPING * vg))
            g0, g1, g2 = -fh * R[0, 0, 0], -fh * R[0, 1, 0], -fh * R[0, 2, 0]
            add_force_at(F, T, 1, s, 13, x[0], x[1], x[2], g0, g1, g2)
            add_force_at(F, T, 0, s, 0, x[0], x[1], x[2], -g0, -g1, -g2)
            ds[S_WORK] = ds[S_WORK] + g0 * (va0 - vb0) + g1 * (va1 - vb1) + g2 * (va2 - vb2)
    # rigid-body derivatives
    ke = 0.0
    mom = np.zeros(3)
    mtot = 0.0
    for b in range(NB):
        o = 13 * b
        if b == 0 and P[P_FIXED] > 0.5:
            ke += kinetic_energy(MASS[b], INERT[b], s[o + 7:o + 10], s[o + 10:o + 13])
            for k in range(13):
                ds[o + k] = 0.0
            continue
        mom += MASS[b] * s[o + 7:o + 10]
        mtot += MASS[b]
        ke += derivative(s, o, MASS[b], INERT[b], INVI[b], R[b], F[b], T[b], ds)     # Newton-Euler (solver/core)
    ds[S_DISS] = pd
    if P[P_FIXED] < 0.5:
        ke -= 0.5 * (mom @ mom) / mtot     # kinetic energy in the centre-of-mass frame
    if out:
        fl = R[1].T @ fbase                # on the base, active docking frame
        ml = R[1].T @ mbase
        for k in range(3):
            ch[k] = fl[k]
            ch[3 + k] = ml[k]
        # the interface loads: everything the active half puts on the passive craft, about the passive interface
        # centre (its docking frame origin), in its docking frame
        oP = s[0:3] - R[0] @ COM[0]
        fi = R[0].T @ F[0]
        mi = R[0].T @ (T[0] + _cross(s[0:3] - oP, F[0]))
        for k in range(3):
            ch[C_IF + k] = fi[k]
            ch[C_IF + 3 + k] = mi[k]
        ch[C_IF + 6] = math.sqrt(fi @ fi)
        ch[C_IF + 7] = math.sqrt(mi @ mi)
        # the same by phase (the IDD's soft- and hard-capture limits): soft until the hooks close, hard from then
        hard = 2 if Z[Z_HOOKS] > 0.5 else 0
        ch[C_IF + 8], ch[C_IF + 9], ch[C_IF + 10], ch[C_IF + 11] = 0.0, 0.0, 0.0, 0.0
        ch[C_IF + 8 + hard] = ch[C_IF + 6]
        ch[C_IF + 9 + hard] = ch[C_IF + 7]
        # ring pose and velocity relative to the passive ring (passive docking frame)
        xr = s[26:29]
        rel = R[0].T @ (xr - oP)
        Rrel = R[0].T @ R[2]
        vrel = R[0].T @ (_point(s, R, COM, 2, COM[2])[1] - _point(s, R, COM, 0, rel)[1])
        for k in range(3):
            ch[C_RING + k] = rel[k]
            ch[C_RV + k] = vrel[k]
        ch[C_RING + 3] = math.degrees(math.atan2(Rrel[2, 1], Rrel[2, 2]))          # roll about x
        ch[C_RING + 4] = math.degrees(-math.asin(max(-1.0, min(1.0, Rrel[2, 0]))))  # pitch about y
        ch[C_RING + 5] = math.degrees(math.atan2(Rrel[1, 0], Rrel[0, 0]))          # yaw about z
        va = R[0].T @ (s[20:23] - s[7:10])
        for k in range(3):
            ch[C_CMV + k] = va[k]
        ch[C_LATCH] = nl
        ch[C_HOOKS] = 12.0 if Z[Z_HOOKS] > 0.5 else 0.0
        ch[C_RETR] = retract
        gmax, gmin = hook_gaps(s, R, COM, HOOK)
        ch[C_GAP] = gmax
        ch[C_GAPMIN] = gmin
        ch[C_TILT] = math.degrees(math.acos(max(-1.0, min(1.0, R[0, 0, 0] * R[1, 0, 0] + R[0, 1, 0] * R[1, 1, 0]
                                                       + R[0, 2, 0] * R[1, 2, 0]))))
        md = 0.0
        for j in range(NPAIR):
            if j < PAIR_LATCH or j >= PAIR_LATCH + 3:
                md = max(md, rec[j, 10])
        ch[C_DEPTH] = md
        ch[C_KE] = ke
        ch[C_PE] = pe
        ch[C_DISS] = s[S_DISS]
        ch[C_WORK] = s[S_WORK]
        ch[C_TOT] = ke + pe + s[S_DISS] - s[S_WORK]
        c0 = c1 = c2 = 0.0                # the ring's pairs' couples along their forces (world frame)
        for j in range(NPAIR):
            if rec[j, 13] > 0.0 and (j < PAIR_LATCH or j >= PAIR_LATCH + 3):
                ff = rec[j, 1] ** 2 + rec[j, 2] ** 2 + rec[j, 3] ** 2
                if j < PAIR_IF and ff > 1e-18:   # a passive petal's pair acts on the ring as its part b
                    w = (rec[j, 1] * rec[j, 14] + rec[j, 2] * rec[j, 15] + rec[j, 3] * rec[j, 16]) / ff
                    w = -w if PAIR_PP <= j < PAIR_PP + 3 else w
                    c0, c1, c2 = c0 + w * rec[j, 1], c1 + w * rec[j, 2], c2 + w * rec[j, 3]
                _central_axis_point(rec, j)
        ch[C_CPL], ch[C_CPL + 1], ch[C_CPL + 2] = c0, c1, c2


@njit(cache=True)
def _soft_capture(s, Z, R, COM, P, BASE, RINGP, F, T, F2, T2, ds, ch, out, fbase, mbase, obase, uh):
    """Active soft capture (NDS-class): the ring's measured load (all but the legs') drives an admittance per axis
    (c x' + k x = load) whose offset the actuators follow (capped); after capture (uh in [0, 1]) the offset's path."""
    R1 = R[1]
    Rt = R1.T
    wf = Rt @ (F[2] - F2)                                   # measured load on the ring (base frame)
    wm = Rt @ (T[2] - T2)
    o1 = s[13:16] - R1 @ COM[1]
    x2 = s[26:29]
    p = Rt @ (x2 - o1)
    p[0] += P[P_H0]                                         # offset from the neutral pose (the ring at -h0)
    v1 = velocity_at(s, 13, R1, x2[0], x2[1], x2[2])
    v = Rt @ (s[33:36] - np.array([v1[0], v1[1], v1[2]]))   # the ring's rate relative to the base (base frame)
    Rr = Rt @ R[2]
    th = np.array([0.5 * (Rr[2, 1] - Rr[1, 2]), 0.5 * (Rr[0, 2] - Rr[2, 0]), 0.5 * (Rr[1, 0] - Rr[0, 1])])
    om = Rr @ s[36:39] - s[23:26]
    wa = np.empty(6)
    for q in range(6):
        if q == 0:
            k, c = P[P_SC_KA], P[P_SC_CA]
        elif q < 3:
            k, c = P[P_SC_KL], P[P_SC_CL]
        else:
            k, c = P[P_SC_KT], P[P_SC_CT]
        w = wf[q] if q < 3 else wm[q - 3]
        xc = s[S_ADM + q]
        if uh >= 0.0:                 # handover: from its value at capture to neutral, smooth (3u^2 - 2u^3)
            rate = -Z[Z_XC0 + q] * 6.0 * uh * (1.0 - uh) / P[P_SC_TH]
        else:
            rate = admittance_rate(w, k, c, xc)
        ds[S_ADM + q] = rate
        if q < 3:
            wa[q] = P[P_SC_KP] * (xc - p[q]) + P[P_SC_CP] * (rate - v[q])
        else:
            wa[q] = P[P_SC_KPR] * (xc - th[q - 3]) + P[P_SC_CPR] * (rate - om[q - 3])
    A = np.empty((6, 6))
    U = np.empty((6, 3))
    XP = np.empty((6, 3))
    XB = np.empty((6, 3))
    LD = np.empty(6)
    for i in range(6):
        xb, xp, d0, d1, d2, L, w0, w1, w2 = _leg(s, R, COM, BASE, RINGP, i)
        ub = Rt @ np.array([d0 / L, d1 / L, d2 / L])          # base frame; a leg's tension f pulls the ring by -f u
        rb = Rt @ (xp - x2)
        mb = _cross(rb, ub)
        for q in range(3):
            A[q, i] = -ub[q]
            A[3 + q, i] = -mb[q]
            U[i, q] = d0 / L if q == 0 else (d1 / L if q == 1 else d2 / L)
            XP[i, q] = xp[q]
            XB[i, q] = xb[q]
        LD[i] = (w0 * d0 + w1 * d1 + w2 * d2) / L
    f = np.zeros(6)
    lu_solve(A, wa, 6, f)             # (A and wa are this call's own: overwritten)
    for i in range(6):
        fi = min(P[P_SC_FMAX], max(-P[P_SC_FMAX], f[i]))
        add_force_at(F, T, 2, s, 26, XP[i, 0], XP[i, 1], XP[i, 2], -fi * U[i, 0], -fi * U[i, 1], -fi * U[i, 2])
        add_force_at(F, T, 1, s, 13, XB[i, 0], XB[i, 1], XB[i, 2], fi * U[i, 0], fi * U[i, 1], fi * U[i, 2])
        ds[S_WORK] = ds[S_WORK] - fi * LD[i]
        if out:
            fbase += fi * U[i]
            mbase += _cross(XB[i] - obase, fi * U[i])
            ch[C_LEGF + i] += fi


@njit(cache=True)
def _central_axis_point(rec, j):
    """The pair's point: on the central axis of its wrench (force F, moment M about the origin: F x M / |F|^2) at the
    force-weighted centroid's place along F, so that point x force gives the pair's moment (but for a couple along
    F); the centroid itself while the force is nil."""
    w = rec[j, 13]
    c0, c1, c2 = rec[j, 4] / w, rec[j, 5] / w, rec[j, 6] / w
    f0, f1, f2 = rec[j, 1], rec[j, 2], rec[j, 3]
    ff = f0 * f0 + f1 * f1 + f2 * f2
    if ff <= 1e-18:
        rec[j, 4], rec[j, 5], rec[j, 6] = c0, c1, c2
        return
    m0, m1, m2 = rec[j, 14], rec[j, 15], rec[j, 16]
    a = (c0 * f0 + c1 * f1 + c2 * f2) / ff
    rec[j, 4] = (f1 * m2 - f2 * m1) / ff + a * f0
    rec[j, 5] = (f2 * m0 - f0 * m2) / ff + a * f1
    rec[j, 6] = (f0 * m1 - f1 * m0) / ff + a * f2


@njit(cache=True)
def hook_gaps(s, R, COM, HOOK):
    """Largest and smallest distance of the active interface face's hook points ahead of the passive interface plane
    (negative: through it)."""
    g = -1e9
    gm = 1e9
    for i in range(HOOK.shape[0]):
        x = _point(s, R, COM, 1, HOOK[i])[0]
        loc = R[0].T @ (x - s[0:3]) + COM[0]
        g = max(g, loc[0])
        gm = min(gm, loc[0])
    return g, gm


@njit(cache=True)
def _faces_touch(s, R, COM, P, RIM):
    """True when a rim point of the active ring face is on or behind the passive face, over the passive annulus."""
    M, c0 = _relative(s, R, COM, 2, 0)
    for i in range(RIM.shape[0]):
        p0, p1, p2 = RIM[i, 0], RIM[i, 1], RIM[i, 2]
        if M[0, 0] * p0 + M[0, 1] * p1 + M[0, 2] * p2 + c0[0] > 0.0:
            continue
        ly = M[1, 0] * p0 + M[1, 1] * p1 + M[1, 2] * p2 + c0[1]
        lz = M[2, 0] * p0 + M[2, 1] * p1 + M[2, 2] * p2 + c0[2]
        r = math.sqrt(ly * ly + lz * lz)
        if P[P_RIN] - P[P_TOL_R] <= r <= P[P_ROUT] + P[P_TOL_R]:
            return True
    return False


@njit(cache=True)
def _settled(s, Z, t, P, R, COM, BASE, RINGP):
    """Retraction may start: the delay after capture is over and every leg's rate has stayed below legs.settle_rate
    for legs.settle_time (the relative motion attenuated), or legs.settle_max after capture has passed."""
    for i in range(6):
        d0, d1, d2, L, w0, w1, w2 = _leg(s, R, COM, BASE, RINGP, i)[2:]
        if abs(w0 * d0 + w1 * d1 + w2 * d2) > P[P_SETTLE_RATE] * L:
            Z[Z_TMOVE] = t
    if Z[Z_HAND] < 0.5 or t < Z[Z_THAND] + P[P_DELAY]:
        return False
    return t - max(Z[Z_TMOVE], Z[Z_THAND]) >= P[P_SETTLE_TIME] or t >= Z[Z_THAND] + P[P_SETTLE_MAX]


@njit(cache=True)
def _discrete(s, Z, t, P, COM, RIM, LATCH, STRIKER, HOOK, BASE, RINGP, LN, ev, n_ev):
    """Latches catching (each on its own while the ring faces touch, once its striker is within the capture
    tolerance: across the axis `engage_travel`, along it `capture_gap`; a caught latch's anchor follows the ring's
    approach), soft capture (all three caught), retraction start, hooks closing (every hook point within the seal gap
    of the passive face) and hard dock (the preload reached)."""
    R = np.zeros((NB, 3, 3))
    for b in range(NB):
        rotation_of(s, 13 * b, R[b])
    status = ST_OK
    for i in range(3):
        if Z[Z_LATCHED + i] > 0.5:
            xl = _point(s, R, COM, 2, LATCH[i])[0]
            px = (R[0].T @ (xl - s[0:3]) + COM[0])[0]
            if px < Z[Z_ANCHOR + 3 * i]:
                Z[Z_ANCHOR + 3 * i] = px                              # a latch lets the ring approach
    if Z[Z_CAPT] < 0.5:
        n = 0
        touch = _faces_touch(s, R, COM, P, RIM)
        for i in range(3):
            if Z[Z_LATCHED + i] > 0.5:
                n += 1
                continue
            if not touch:
                continue
            if Z[Z_FIRST] < 0.5:                                     # first contact is logged before a capture
                Z[Z_FIRST] = 1.0
                _event(ev, n_ev, t, EV_FIRST, PAIR_RR)
            xl = _point(s, R, COM, 2, LATCH[i])[0]
            p = R[0].T @ (xl - s[0:3]) + COM[0]                     # passive frame
            d = p - STRIKER[i]
            if d[0] <= P[P_CAPTURE_GAP] and math.sqrt(d[1] ** 2 + d[2] ** 2) <= P[P_CAPTURE_TOL]:
                Z[Z_LATCHED + i] = 1.0
                Z[Z_ANCHOR + 3 * i:Z_ANCHOR + 3 * i + 3] = p
                n += 1
        if n == 3:
            Z[Z_CAPT] = 1.0
            Z[Z_TCAPT] = t
            if P[P_SC_ON] < 0.5:                                    # passive legs: braked from capture
                Z[Z_HAND] = 1.0
                Z[Z_THAND] = t
            Z[Z_XC0:Z_XC0 + 6] = s[S_ADM:S_ADM + 6]                 # the handover path's start
            for i in range(3):                                       # held across the axis from here
                xl = _point(s, R, COM, 2, LATCH[i])[0]
                Z[Z_ANCHOR + 3 * i + 1:Z_ANCHOR + 3 * i + 3] = (R[0].T @ (xl - s[0:3]) + COM[0])[1:3]
            _event(ev, n_ev, t, EV_CAPTURE, 0)
    elif Z[Z_HAND] < 0.5:      # active soft capture hands the legs over to their springs and brakes at the end of
        if t >= Z[Z_TCAPT] + P[P_SC_TH]:      # the handover path (the ring back near neutral)
            for i in range(6):
                xb = _to_world(s, R, COM, 1, BASE[i, 0], BASE[i, 1], BASE[i, 2])
                xp = _to_world(s, R, COM, 2, RINGP[i, 0], RINGP[i, 1], RINGP[i, 2])
                d0, d1, d2 = xp[0] - xb[0], xp[1] - xb[1], xp[2] - xb[2]
                Z[Z_LOFF + i] = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - LN[i]   # the springs' rest from here
            Z[Z_HAND] = 1.0
            Z[Z_THAND] = t
    elif Z[Z_RETRACT] < 0.5 and _settled(s, Z, t, P, R, COM, BASE, RINGP):
        Z[Z_RETRACT] = 1.0
        Z[Z_TRETRACT] = t
        dmax = 0.0
        for i in range(6):                   # each leg's path: from its length now to the common retracted length
            xb = _to_world(s, R, COM, 1, BASE[i, 0], BASE[i, 1], BASE[i, 2])
            xp = _to_world(s, R, COM, 2, RINGP[i, 0], RINGP[i, 1], RINGP[i, 2])
            Z[Z_L0 + i] = math.sqrt((xp[0] - xb[0]) ** 2 + (xp[1] - xb[1]) ** 2 + (xp[2] - xb[2]) ** 2)
            dmax = max(dmax, abs(LN[i] - P[P_DL_RETRACT] - Z[Z_L0 + i]))
        Z[Z_TRDUR] = 1.5 * dmax / P[P_V_RETRACT]      # the smooth path's top rate is the retraction speed
        if P[P_ALIGN_ACC] > 0.0:                      # ... and its top angular acceleration aligning the craft's
            c = R[0][0, 0] * R[1][0, 0] + R[0][1, 0] * R[1][1, 0] + R[0][2, 0] * R[1][2, 0]   # tilt, the limit
            Z[Z_TRDUR] = max(Z[Z_TRDUR], math.sqrt(6.0 * math.acos(min(1.0, c)) / P[P_ALIGN_ACC]))
        _event(ev, n_ev, t, EV_RETRACT, 0)
    elif Z[Z_RETRACT] > 0.5 and Z[Z_HOOKS] < 0.5 and hook_gaps(s, R, COM, HOOK)[0] <= P[P_HOOK_GAP]:
        Z[Z_HOOKS] = 1.0
        Z[Z_THOOKS] = t
        _event(ev, n_ev, t, EV_HOOKS, 0)
    elif Z[Z_HOOKS] > 0.5 and t >= Z[Z_THOOKS] + P[P_CLOSE_TIME]:
        _event(ev, n_ev, t, EV_HARD, 0)
        status = ST_DONE
    return status


@njit(cache=True)
def _event(ev, n_ev, t, kind, idx):
    k = n_ev[0]
    if k < ev.shape[0]:
        ev[k, 0] = t
        ev[k, 1] = kind
        ev[k, 2] = idx
        n_ev[0] = k + 1


@njit(cache=True)
def _relax_open(s, FT):
    """Bristles of the slots no contact touched at the step's start relax (u = 0, their stored energy dissipated)."""
    for i in range(N_SLOT):
        if FT[i, 0] > 0.5:
            continue
        j = S_FT + 3 * i
        e = s[j] * s[j] + s[j + 1] * s[j + 1] + s[j + 2] * s[j + 2]
        if e > 0.0:
            s[S_DISS] += 0.5 * FT[i, 1] * e
            s[j] = s[j + 1] = s[j + 2] = 0.0


@njit(cache=True)
def run_block(s, Z, t, h, n_out, spo, P, COM, MASS, INERT, INVI, BASE, RINGP, LN, RIM, APET, APID, PPET, PPID, LATCH,
              STRIKER, HOOK, AGEN, AGID, PGEN, PGID, AEDGE, AEID, PTIP, W, IFP, FT, ev, n_ev, prev, ext, o_t, o_ch,
              o_pos, o_q, o_act, o_f, o_p, o_n, o_d, o_vn):
    """Integrate `spo` RK4 steps per frame, `n_out` frames (spo = 0: record one frame only); every step's start is
    evaluated with its channels, whose extrema go to `ext` (rows min, time of min, max, time of max), and first
    contact is found there."""
    k1 = np.zeros(NS)
    k2 = np.zeros(NS)
    k3 = np.zeros(NS)
    k4 = np.zeros(NS)
    ch = np.zeros(NCH)
    rec = np.zeros((NPAIR, 17))
    dummy = np.zeros((NPAIR, 17))
    dch = np.zeros(NCH)
    g = (P, COM, MASS, INERT, INVI, BASE, RINGP, LN, RIM, APET, APID, PPET, PPID, LATCH, STRIKER, HOOK, AGEN, AGID,
         PGEN, PGID, AEDGE, AEID, PTIP, W, IFP, FT)
    status = ST_OK
    for row in range(n_out):
        for it in range(max(spo, 1)):
            k1[:] = 0.0
            evaluate(s, Z, t, *g, k1, ch, rec, True, True)
            _relax_open(s, FT)
            for c in range(NCH):
                if ch[c] < ext[0, c]:
                    ext[0, c] = ch[c]
                    ext[1, c] = t
                if ch[c] > ext[2, c]:
                    ext[2, c] = ch[c]
                    ext[3, c] = t
            for j in range(NPAIR):                    # a pair carrying less than ACTIVE_MIN is apart (no 0.0 N
                if rec[j, 0] > 0.5 and rec[j, 1] ** 2 + rec[j, 2] ** 2 + rec[j, 3] ** 2 < ACTIVE_MIN ** 2:  # contacts)
                    rec[j, :] = 0.0
                if rec[j, 0] > 0.5 and Z[Z_FIRST] < 0.5 and (j < PAIR_LATCH or j >= PAIR_LATCH + 3):
                    Z[Z_FIRST] = 1.0
                    _event(ev, n_ev, t, EV_FIRST, j)
            if it == 0:
                o_t[row] = t
                o_ch[row, :] = ch
                R = np.zeros((3, 3))
                for b in range(NB):
                    rotation_of(s, 13 * b, R)
                    o_pos[row, b, :] = s[13 * b:13 * b + 3] - R @ COM[b]
                    o_q[row, b, :] = s[13 * b + 3:13 * b + 7]
                for j in range(NPAIR):
                    a = rec[j, 0] > 0.5
                    o_act[row, j] = 1 if a else 0
                    o_f[row, j, :] = rec[j, 1:4]
                    o_p[row, j, :] = rec[j, 4:7]
                    o_n[row, j, :] = rec[j, 7:10]
                    o_d[row, j] = rec[j, 10]
                    o_vn[row, j] = rec[j, 11]
                    prev[j] = 1 if a else 0
            if spo == 0:
                return status, t, row + 1
            k2[:] = 0.0
            evaluate(s + 0.5 * h * k1, Z, t + 0.5 * h, *g, k2, dch, dummy, False, False)
            k3[:] = 0.0
            evaluate(s + 0.5 * h * k2, Z, t + 0.5 * h, *g, k3, dch, dummy, False, False)
            k4[:] = 0.0
            evaluate(s + h * k3, Z, t + h, *g, k4, dch, dummy, False, False)
            s += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            t += h
            for b in range(NB):
                normalize(s, 13 * b + 3)
            ok = True
            for k in range(NS):
                if not math.isfinite(s[k]):
                    ok = False
            if not ok:
                return ST_NAN, t, row + 1
            status = _discrete(s, Z, t, P, COM, RIM, LATCH, STRIKER, HOOK, BASE, RINGP, LN, ev, n_ev)
            if status != ST_OK:
                return status, t, row + 1
    return status, t, n_out
