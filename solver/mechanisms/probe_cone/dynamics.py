"""Docking dynamics kernels (numba): two spacecraft and the probe-cone mechanism of seed 000.

Active subsystem: the active craft (free, 6 DOF) carries the gimballed housing (universal joint, 2 DOF)
and the probe with fictitious bending (2) and torsion (1) joints; minimal coordinates, composite
rigid-body mass matrix (CRBA) with the lateral-damper chains reduced onto the housing rows (eq. 2.4).
Axial damper: separate scalar nut equation (2.1). Passive craft: free rigid body or fixed base.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.kernels import ROLLER
from solver.contact.pairset import PAR_K, PAR_MU, STEP_DV, STEP_SKIP_MAX, pairs_step, steps_within
from solver.core.bodies import cholesky_factor as _cholesky_factor, cholesky_solve as _cholesky_subst
from solver.core.elements import end_stop as _stop, hysteresis as _jenkins, slider as _slide, table as _tab
from solver.core.elements import table_inverse as _tab_inv
from solver.core.appendage import O_DISS as APP_O_DISS, O_KE as APP_O_KE, O_MASS as APP_O_MASS
from solver.core.appendage import O_P as APP_O_P, O_PE as APP_O_PE, O_W as APP_O_W
from solver.core.integrator import substeps
from solver.friction import bristle_force, return_map
from solver.pointer_call import call_status_at, status_address
from solver.core.free_body import euler_accel, inertia_world, normalize, quat_rate_world, quaternion, rotation
from solver.vec3 import add, col, cross, dot, mm, mtv, mv, norm, rot_x, rot_y, rot_z, scl, sub

# ---------------------------------------------------------------- state layout
S_RP, S_QP, S_VP, S_WP = 0, 3, 7, 10          # passive: CoM position, quaternion, CoM velocity, omega (world)
S_RA, S_QA, S_VA, S_WA = 13, 16, 20, 23       # active craft, same layout
S_Q, S_U = 26, 31                              # joints: housing theta1 (y), theta2 (z), bend b1 (y), b2 (z), torsion
S_PHI, S_DPHI, S_EDISS = 36, 37, 38            # nut angle, nut rate, dissipated energy (continuous part)
S_DRV, S_WDRV, S_XL, S_DXL = 39, 40, 41, 42    # drive output angle (nut units), drive work, movable limiter slide
N_FT = 32                                      # contact pairs with a friction bristle state (at most)
S_FT = 43                                      # per pair k: bristle stretch u (3, passive-craft frame) at S_FT + 3 k
NS = S_FT + 3 * N_FT
ND = 11                                        # active-subsystem generalized velocities

# discrete state
Z_SLIP, Z_LAT0, Z_BEND0, Z_TORS, Z_LATCH0, Z_CAPT, Z_EDISS, Z_FIRST, Z_TCAPT, Z_EXT0 = 0, 1, 3, 5, 6, 10, 11, 12, 13, 14
# cyclogram: FrT1 slip, phase (0 approach, 1 captured, 2 retracting, 3 hard dock), drive start time, sensor flags
Z_SLIP1, Z_PHASE, Z_TDRV, Z_SENS_CONE, Z_SENS_BOTTOM, Z_PUSH, Z_RINGS = 18, 19, 20, 21, 22, 23, 24
NZ = 25
PH_APPROACH, PH_CAPTURED, PH_RETRACT, PH_HARD = 0.0, 1.0, 2.0, 3.0
N_CAM = 24                                     # alignment-lever cam table points (nut angle -> lever extension)

# ---------------------------------------------------------------- parameter vector
# One index per name (generated once from the list of names; P_INDEX maps the names the loader uses).
# passive craft: mass, fixed flag, inertia (9), inverse inertia (9), CoM (3)
P_M_P = 0
P_FIXED_P = 1
P_JP0 = 2
P_JP1 = 3
P_JP2 = 4
P_JP3 = 5
P_JP4 = 6
P_JP5 = 7
P_JP6 = 8
P_JP7 = 9
P_JP8 = 10
P_JPI0 = 11
P_JPI1 = 12
P_JPI2 = 13
P_JPI3 = 14
P_JPI4 = 15
P_JPI5 = 16
P_JPI6 = 17
P_JPI7 = 18
P_JPI8 = 19
P_CPX = 20
P_CPY = 21
P_CPZ = 22
# active craft: mass, inertia (9), CoM (3)
P_M_A = 23
P_JA0 = 24
P_JA1 = 25
P_JA2 = 26
P_JA3 = 27
P_JA4 = 28
P_JA5 = 29
P_JA6 = 30
P_JA7 = 31
P_JA8 = 32
P_CAX = 33
P_CAY = 34
P_CAZ = 35
# chain geometry
P_G_OFF = 36
P_L_H = 37
P_L0 = 38
P_STROKE_MAX = 39
P_R_HEAD = 40
# housing and probe masses and inertias
P_M_H = 41
P_D_H = 42
P_I_HX = 43
P_I_HT = 44
P_M_PR = 45
P_A_PR = 46
P_I_PRX = 47
P_I_PRT = 48
# probe bending and torsion joints, hysteresis sliders, stops
P_K_BEND0 = 49
P_C_BEND = 50
P_K_TORS = 51
P_C_TORS = 52
P_HB_K = 53
P_HB_LIM = 54
P_HT_K = 55
P_HT_LIM = 56
P_BEND_MAX = 57
P_K_BEND_STOP = 58
P_TORS_MAX = 59
P_K_TORS_STOP = 60
# axial damper
P_I_NUT = 61
P_I_NUT_TOT = 62
P_K_NUTFR = 63
P_I_FR = 64
P_K_TR = 65
P_T_PRE = 66
P_K_SPRING = 67
P_SPRING_MAX = 68
P_T_IN = 69
P_T_OUT = 70
P_C_D = 71
P_I_MB = 72
P_K_STROKE_STOP = 73
P_V_SCREW = 74
# lateral damper
P_LH_K = 75
P_LH_F0 = 76
P_LH_MU = 77
P_C_LAT = 78
P_PSI_MAX = 79
P_K_CRANK_STOP = 80
# latches, socket and slots, limiter position
P_LATCH_X = 81
P_LATCH_RR = 82
P_LATCH_RE = 83
P_LATCH_RT = 84
P_LATCH_K = 85
P_LATCH_PSI0 = 86
P_X_MOUTH = 87
P_X_STOP = 88
P_R_BORE = 89
P_R_FLOOR = 90
P_TAN_CONE = 91
P_SLOT_HS = 92
P_SLOT_HF = 93
P_SLOT_LEN = 94
P_LIM_X = 95
# cyclogram: drive, first friction brake, spring pushers, hooks
P_DRV_DELAY = 96
P_DRV_SPEED = 97
P_DRV_STALL = 98
P_T1_IN = 99
P_T1_OUT = 100
P_S1_MAX = 101
P_PU_N = 102
P_PU_R = 103
P_PU_STROKE = 104
P_PU_F0 = 105
P_PU_K = 106
P_PU_KC = 107
P_PU_C = 108
P_HOOK_GAP = 109
# movable limiter, contact pair indices, alignment-lever cam table size
P_LIM_MOV = 110
P_LIM_M = 111
P_LIM_F0 = 112
P_LIM_K = 113
P_LIM_STROKE = 114
P_LIM_KSTOP = 115
P_LIM_C = 116
P_PI_HEAD_CONE = 117
P_PI_HEAD_SOCKET = 118
P_PI_BOTTOM = 119
P_CAM_N = 120
P_CAM_X0 = 121                                  # cam table nut angles, N_CAM values
P_CAM_Y0 = 145                                  # cam table lever extensions, N_CAM values
# friction: law (1 elasto-plastic bristle, 0 the library's stick ramp), bristle k_t and c_t per contact pair
P_FT_LAW = 169
P_FT_K0 = 170                                   # bristle stiffness k_t of contact pair k at P_FT_K0 + k, N_FT values
P_FT_C0 = 202                                   # bristle damping c_t of contact pair k at P_FT_C0 + k, N_FT values
P_SUB0 = 234                                    # substeps per step while contact pair k is closed, N_FT values
NP = 266
P_INDEX = {n[2:].lower(): i for n, i in list(globals().items()) if n.startswith("P_") and type(i) is int}
P_INDEX.update({f"cam_{c}{k}": P_INDEX[f"cam_{c}0"] + k for c in "xy" for k in range(N_CAM)})
P_INDEX.update({f"ft_{c}{k}": P_INDEX[f"ft_{c}0"] + k for c in "kc" for k in range(N_FT)})
P_INDEX.update({f"sub{k}": P_SUB0 + k for k in range(N_FT)})

# lateral-chain table LAT rows
L_TYPE, L_ATT, L_BASE, L_RHO, L_ROD, L_EY, L_EZ, L_INERTIA, L_GEAR, L_REST = 0, 1, 4, 7, 8, 9, 10, 11, 12, 13
LAT_W = 14
N_LAT = 4
N_LATCH = 4

# observation vector written by `evaluate`
O_FB, O_MB, O_PE, O_PDISS, O_KE, O_MOM, O_DEPTH, O_SPRING, O_BRAKE, O_FAX = 0, 3, 6, 7, 8, 9, 12, 13, 14, 15
O_LATX, O_LATV, O_LATCH_X, O_LATCH_U, O_KE_BARY, O_MTOT = 16, 20, 24, 28, 32, 33
O_EXT, O_CSTAT, O_CPAIR, O_CDEPTH, O_LATCH_IN, O_LATCH_E = 34, 35, 36, 37, 38, 42
# cyclogram observations: drive rate, chain torque, pusher force, docking-plane gap (max, min), limiter force
O_DRV, O_TAU, O_PUSH, O_GAP, O_GAPMIN, O_LIMF, O_LEVER, O_BRAKE1 = 46, 47, 48, 49, 50, 51, 52, 53
O_LATCH_OUT = 54             # per latch: 1 when an engaged latch's tip has left its slot (released)
NO = 58
# poses: passive dock, active dock, housing, probe (origin at the housing exit), probe_head, limiter
NPOSE = 6
# contact-library bodies (solver.contact.BODIES order) and the chain level each one rides on
B_PASSIVE, B_ACTIVE, B_HOUSING, B_PROBE, B_HEAD, B_LIMITER = 0, 1, 2, 3, 4, 5


@njit(cache=True, error_model="numpy")
def cam_extension(P, phi):
    """Alignment-lever extension 0..1 from the nut angle (cam table, linear, held at the ends)."""
    n = int(P[P_CAM_N])
    if n < 2 or phi <= P[P_CAM_X0]:
        return P[P_CAM_Y0] if n >= 1 else 0.0
    for i in range(1, n):
        x1 = P[P_CAM_X0 + i]
        if phi <= x1:
            x0 = P[P_CAM_X0 + i - 1]
            y0 = P[P_CAM_Y0 + i - 1]
            return y0 + (P[P_CAM_Y0 + i] - y0) * (phi - x0) / (x1 - x0)
    return P[P_CAM_Y0 + n - 1]


@njit(cache=True, error_model="numpy")
def cam_slope(P, phi):
    """d(lever extension)/d(nut angle) of the cam table (0 outside it)."""
    n = int(P[P_CAM_N])
    for i in range(1, n):
        x1 = P[P_CAM_X0 + i]
        x0 = P[P_CAM_X0 + i - 1]
        if x0 < phi <= x1:
            return (P[P_CAM_Y0 + i] - P[P_CAM_Y0 + i - 1]) / (x1 - x0)
    return 0.0


@njit(cache=True, error_model="numpy")
def cam_hold(P, phi):
    """Nut-angle margin about phi within which the cam holds the lever extension at its value at phi (0 on a ramp)."""
    n = int(P[P_CAM_N])
    y = cam_extension(P, phi)
    lo, hi = -math.inf, math.inf
    for i in range(n):
        if P[P_CAM_Y0 + i] != y:                 # breakpoint at another extension: the ramps next to it move the lever
            if P[P_CAM_X0 + i] > phi:
                hi = min(hi, P[P_CAM_X0 + i - 1] if i >= 1 else -math.inf)
            else:
                lo = max(lo, P[P_CAM_X0 + i + 1] if i + 1 < n else math.inf)
    return max(min(hi - phi, phi - lo), 0.0)


@njit(cache=True, error_model="numpy")
def lever_hold_steps(P, phi, dphi, h):
    """Steps n (<= STEP_SKIP_MAX) over which the lever extension certainly stays as it is at phi: n h (2 |dphi| +
    n i_nut STEP_DV) < `cam_hold`, the pairs' bound with the nut's stroke rate (0: not even this step)."""
    return steps_within(cam_hold(P, phi), abs(dphi), P[P_I_NUT] * STEP_DV, h, 0, STEP_SKIP_MAX)


@njit(cache=True, error_model="numpy")
def roller_dp(gprim, j, ext, dext):
    """Housing-frame derivative of roller j's centre with respect to the nut angle (lever swing by the cam)."""
    phi = gprim[j, 4] + ext * (gprim[j, 5] - gprim[j, 4])
    dl = dext * (gprim[j, 5] - gprim[j, 4]) * gprim[j, 3]
    dr = dl * math.cos(phi)
    return (dl * math.sin(phi), dr * gprim[j, 9], dr * gprim[j, 10])


@njit(cache=True, error_model="numpy")
def brake_limits(P, Z):
    """Slip torques (stroking in, pulled out) of the friction chain: FrT1 while it has stroke left, else FrT2."""
    hi = P[P_T_IN]
    lo = P[P_T_OUT]
    if P[P_S1_MAX] > 0.0:
        if Z[Z_SLIP1] < P[P_S1_MAX] and P[P_T1_IN] < hi:
            hi = P[P_T1_IN]
        if Z[Z_SLIP1] > 0.0 and P[P_T1_OUT] < lo:
            lo = P[P_T1_OUT]
    return hi, lo


@njit(cache=True, error_model="numpy")
def drive_rate(P, Z, tau_el):
    """Drive output rate (nut rad/s) on the equivalent motor's speed-torque line while retracting; the stop
    clutches keep it from turning back (rate >= 0)."""
    if Z[Z_PHASE] != PH_RETRACT:
        return 0.0
    w = P[P_DRV_SPEED] * (1.0 + tau_el / P[P_DRV_STALL])      # load torque on the drive = -tau_el
    return min(max(w, 0.0), 2.0 * P[P_DRV_SPEED])


@njit(cache=True, error_model="numpy")
def limiter_spring(P, xl):
    """Movable-limiter spring guides (preloaded against the front stop) and stops: force along +x_housing
    (toward the joint is compression, force pushes back) and stored energy."""
    f = -(P[P_LIM_F0] + P[P_LIM_K] * xl)
    e = P[P_LIM_F0] * xl + 0.5 * P[P_LIM_K] * xl * xl
    if xl < 0.0:
        f -= P[P_LIM_KSTOP] * xl
        e += 0.5 * P[P_LIM_KSTOP] * xl * xl
    elif xl > P[P_LIM_STROKE]:
        d = xl - P[P_LIM_STROKE]
        f -= P[P_LIM_KSTOP] * d
        e += 0.5 * P[P_LIM_KSTOP] * d * d
    return f, e


@njit(cache=True, error_model="numpy")
def pusher_force(P, gap):
    """Spring pusher on the docking ring: force (>= 0) and stored energy at docking-plane gap `gap`; contact
    stiffness pu_kc until the preload is reached, then the pusher spring."""
    d = P[P_PU_STROKE] - gap
    if d <= 0.0:
        return 0.0, 0.0
    kc, f0, k = P[P_PU_KC], P[P_PU_F0], P[P_PU_K]
    d0 = f0 / (kc - k)                     # where the contact ramp meets the preloaded spring line (kc > k)
    if d <= d0:
        return kc * d, 0.5 * kc * d * d
    return f0 + k * d, 0.5 * kc * d0 * d0 + f0 * (d - d0) + 0.5 * k * (d * d - d0 * d0)


@njit(cache=True, error_model="numpy", inline="always")
def lateral_chain(LAT, k, th1, th2, dth1, dth2):
    """Loop closure of lateral chain k (UPS spring strut or RUS brake crank), housing-base frame.

    Returns (coordinate, rate, H . e1, H . e2, bias h): coordinate rate = H . omega_rel, accel = H . omega_dot + h.
    """
    Ry = rot_y(th1)
    return lateral_chain_rot(LAT, k, Ry, mm(Ry, rot_z(th2)), dth1, dth2)


@njit(cache=True, error_model="numpy", inline="always")
def lateral_chain_rot(LAT, k, Ry, RH, dth1, dth2):
    """`lateral_chain` from the gimbal rotations Ry = rot_y(th1), RH = Ry rot_z(th2) (shared by the 4 chains)."""
    e2 = col(Ry, 2)
    w = add((0.0, dth1, 0.0), scl(e2, dth2))
    al = cross((0.0, dth1, 0.0), scl(e2, dth2))
    r = mv(RH, (LAT[k, L_ATT], LAT[k, L_ATT + 1], LAT[k, L_ATT + 2]))
    ad = cross(w, r)
    add0 = add(cross(al, r), cross(w, cross(w, r)))
    base = (LAT[k, L_BASE], LAT[k, L_BASE + 1], LAT[k, L_BASE + 2])
    if LAT[k, L_TYPE] < 0.5:
        d = sub(r, base)
        ln = norm(d)
        u = scl(d, 1.0 / ln)
        ld = dot(u, ad)
        H = cross(r, u)
        h = dot(u, add0) + (dot(ad, ad) - ld * ld) / ln
        return ln - LAT[k, L_REST], ld, H[1], dot(H, e2), h
    rho, rod = LAT[k, L_RHO], LAT[k, L_ROD]
    u1 = (-1.0, 0.0, 0.0)
    u2 = (0.0, LAT[k, L_EY], LAT[k, L_EZ])
    w0 = sub(base, r)
    A = 2.0 * rho * dot(w0, u1)
    B = 2.0 * rho * dot(w0, u2)
    C = rod * rod - dot(w0, w0) - rho * rho
    R = math.sqrt(A * A + B * B)
    cc = C / R
    if cc > 1.0:
        cc = 1.0
    elif cc < -1.0:
        cc = -1.0
    # A cos psi + B sin psi = C: psi = atan2(B, A) +- acos(C / R), the root nearer 0 (the larger cos psi), trig-free
    sg = math.sqrt(max(1.0 - cc * cc, 0.0))
    if B >= 0.0:
        sg = -sg
    cp = (A * cc - B * sg) / R
    sp = (B * cc + A * sg) / R
    psi = math.atan2(sp, cp)
    nr = add(scl(u1, cp), scl(u2, sp))
    t = add(scl(u1, -sp), scl(u2, cp))
    pin = add(base, scl(nr, rho))
    ww = sub(pin, r)
    den = rho * dot(ww, t)
    H = scl(cross(r, ww), 1.0 / den)
    psid = dot(H, w)
    wd = sub(scl(t, rho * psid), ad)
    h = (-dot(wd, wd) + rho * psid * psid * dot(ww, nr) + dot(ww, add0)) / den
    return psi, psid, H[1], dot(H, e2), h


@njit(cache=True, error_model="numpy", inline="always")
def _gen_force(Q, F, M, p, lvl, rA, pG, pE, e1, e2, f1, f2, f3, hf):
    """Add the generalized force of (force F at point p, moment M) on body level lvl (0 craft, 1 housing, 2 probe,
    3 the head frame: the probe turned further by the end-slope correction, hf = (centre, axes, rates))."""
    for i in range(3):
        Q[i] += F[i]
    mA = add(cross(sub(p, rA), F), M)
    for i in range(3):
        Q[3 + i] += mA[i]
    if lvl >= 1:
        mG = add(cross(sub(p, pG), F), M)
        Q[6] += dot(e1, mG)
        Q[7] += dot(e2, mG)
    if lvl >= 2:
        mE = add(cross(sub(p, pE), F), M)
        Q[8] += dot(f1, mE)
        Q[9] += dot(f2, mE)
        if lvl == 3:
            # a point on the head frame also moves with the end-slope correction gamma_j = 1.5 sin(b_j) - b_j
            # (turns about the head centre: d gamma_j / d b_j = g_j) and its torsion axis is the head's own x
            ph, ay, h3, g1, g2 = hf
            mH = add(cross(sub(p, ph), F), M)
            Q[8] += g1 * dot(ay, mH)
            Q[9] += g2 * dot(f2, mH)
            Q[10] += dot(h3, mH)
        else:
            Q[10] += dot(f3, mE)


@njit(cache=True, error_model="numpy", inline="always")
def _body_jac(JV, JW, b, pc, nc, rA, pG, pE, e1, e2, f1, f2, f3):
    """Jacobian columns (3 x 11) of the CoM velocity and angular velocity of body b."""
    for j in range(6):
        for i in range(3):
            JV[b, i, j] = 0.0
            JW[b, i, j] = 0.0
    for j in range(3):
        JV[b, j, j] = 1.0
        JW[b, j, 3 + j] = 1.0
    d = sub(pc, rA)
    # e_j x d
    JV[b, 1, 3], JV[b, 2, 3] = -d[2], d[1]
    JV[b, 0, 4], JV[b, 2, 4] = d[2], -d[0]
    JV[b, 0, 5], JV[b, 1, 5] = -d[1], d[0]
    axes = (e1, e2, f1, f2, f3)
    for j in range(nc - 6):
        a = axes[j]
        o = pG if j < 2 else pE
        v = cross(a, sub(pc, o))
        for i in range(3):
            JV[b, i, 6 + j] = v[i]
            JW[b, i, 6 + j] = a[i]


@njit(cache=True, error_model="numpy", inline="always")
def _craft_block(M, b, m, I, gyro):
    """The active craft's rows of the (zeroed) mass matrix and bias: at its CoM the Jacobian is [1 0; 0 1], so the
    general CRBA sum reduces to m on the translation diagonal and the world inertia I (same floating-point result)."""
    for i in range(3):
        M[i, i] += m
        b[3 + i] -= gyro[i]
        for j in range(i + 1):
            M[3 + i, 3 + j] += I[3 * j + i]      # the general sum picks I[j, i] (R I R^T need not be bit-symmetric)


@njit(cache=True, error_model="numpy", inline="always")
def _crba_row(M, JV, JW, bd, i, m, jvi, Ijw):
    """Row i of body bd's CRBA term m JV^T JV + JW^T I JW (j <= i). The craft columns of the Jacobian (`_body_jac`) are
    unit vectors (j < 3: JV = e_j, JW = 0) and (e_k x d, e_k) (3 <= j < 6): their exact zero and unit products are
    left out, which leaves every sum bit-identical to the full 3-term dot products."""
    for j in range(min(i + 1, 3)):
        M[i, j] += m * jvi[j]
    for j in range(3, min(i + 1, 6)):
        if j == 3:
            a = JV[bd, 1, j] * jvi[1] + JV[bd, 2, j] * jvi[2]
        elif j == 4:
            a = JV[bd, 0, j] * jvi[0] + JV[bd, 2, j] * jvi[2]
        else:
            a = JV[bd, 0, j] * jvi[0] + JV[bd, 1, j] * jvi[1]
        M[i, j] += m * a + Ijw[j - 3]
    for j in range(6, i + 1):
        M[i, j] += m * (JV[bd, 0, j] * jvi[0] + JV[bd, 1, j] * jvi[1] + JV[bd, 2, j] * jvi[2]) + \
            JW[bd, 0, j] * Ijw[0] + JW[bd, 1, j] * Ijw[1] + JW[bd, 2, j] * Ijw[2]


@njit(cache=True, error_model="numpy", inline="always")
def _body(pos, rot, vel, om, b, o, R, v, w):
    """Pose and velocity of contact-library body b (world frame)."""
    for i in range(3):
        pos[b, i] = o[i]
        vel[b, i] = v[i]
        om[b, i] = w[i]
        for j in range(3):
            rot[b, i, j] = R[3 * i + j]


@njit(cache=True, error_model="numpy", inline="always")
def _bristle(s, ds, Z, P, k, full, RP, n, vt, fn, mu):
    """Elasto-plastic friction bristle of contact pair k: a tangential spring k_t and damper c_t on the stretch u
    (state, passive-craft frame, du/dt = v_t), force capped at mu F_n. On a step's first stage (full) u is
    return-mapped first (normal part dropped, length capped at mu F_n / k_t; the energy that frees goes to
    Z[Z_EDISS]). Returns the tangential force on the active body, the stored 0.5 k_t |u|^2 and k_t u . v_t."""
    kt = P[P_FT_K0 + k]
    j = S_FT + 3 * k
    u = mv(RP, (s[j], s[j + 1], s[j + 2]))
    if full:
        u, freed = return_map(u, n, mu, fn, kt)
        Z[Z_EDISS] += freed
        ul = mtv(RP, u)
        for i in range(3):
            s[j + i] = ul[i]
    ft, e_t, p_t = bristle_force(u, n, vt, fn, mu, kt, P[P_FT_C0 + k])
    du = mtv(RP, vt)
    for i in range(3):
        ds[j + i] = du[i]
    return ft, e_t, p_t


@njit(cache=True, error_model="numpy", inline="always")
def _bristle_open(s, Z, P, k):
    """Contact pair k is open: its bristle relaxes (u = 0, the stored energy is lost)."""
    j = S_FT + 3 * k
    e = s[j] * s[j] + s[j + 1] * s[j + 1] + s[j + 2] * s[j + 2]
    if e > 0.0:
        Z[Z_EDISS] += 0.5 * P[P_FT_K0 + k] * e
        for i in range(3):
            s[j + i] = 0.0


@njit(cache=True, error_model="numpy")
def _latch_energy(k, c, cmax):
    """Latch spring energy at radial interference c; the force stays k*cmax once the latch is fully in."""
    if c <= 0.0:
        return 0.0
    if c <= cmax:
        return 0.5 * k * c * c
    return 0.5 * k * cmax * cmax + k * cmax * (c - cmax)


@njit(cache=True, error_model="numpy", inline="always")
def _contact_load(Q, acc, F, p, lvl, rA, rP, pG, pE, e1, e2, f1, f2, f3, px, hf):
    """Add a contact force F at p on the active chain (level lvl) and its reaction on the passive craft."""
    _gen_force(Q, F, (0.0, 0.0, 0.0), p, lvl, rA, pG, pE, e1, e2, f1, f2, f3, hf)
    mP = cross(sub(p, rP), F)
    mG = cross(sub(p, pG), F)
    for i in range(3):
        acc[i] -= F[i]
        acc[3 + i] -= mP[i]
        acc[6 + i] += F[i]
        acc[9 + i] += mG[i]
    if lvl >= 2:
        acc[12] += dot(F, px)


@njit(cache=True, error_model="numpy")
def _craft_load(Q, acc, F, p, rA, rP):
    """Add a force F at p on the active craft itself (rings, pushers) and its reaction on the passive craft."""
    for i in range(3):
        Q[i] += F[i]
    mA = cross(sub(p, rA), F)
    mP = cross(sub(p, rP), F)
    for i in range(3):
        Q[3 + i] += mA[i]
        acc[i] -= F[i]
        acc[3 + i] -= mP[i]


FREEZE_MASS_MATRIX = True   # numerical option: RK4 stages 2-4 reuse the first stage's mass matrix factor
W_TRIG = 0          # scratch rows W[0:4]: cos, sin of the latch angles; cos, sin of the pusher angles
W_NEAR, W_STEP = 4, 5   # W[4]: contact pairs near within the step (evaluate_pairs_step); W[5, 0]: the step
W_SKIP = 6              # W[6]: steps each contact pair stays left out for (evaluate_pairs_step's skip)
W_M, W_B, W_UD = 17, 28, 29     # W[17:28, :ND]: the active subsystem's mass matrix; W[28]: its right side; W[29]: u_dot
# a rod chain's AW rows (solver/mechanisms/probe_cone/appendage.py): its outputs, the craft's rotation, its parameters
# (AW[AW_AP, 0]: rods n), its RODS rows, then the solver's scratch
AW_OUT, AW_R, AW_AP, AW_RODS = 0, 1, 4, 5


@njit(cache=True, error_model="numpy")
def trig_table(P, W):
    """Fill the constant angle table of `evaluate` (latches, pushers) into the scratch W; once per run_block."""
    for k in range(N_LATCH):
        a = P[P_LATCH_PSI0] + 0.5 * math.pi * k
        W[W_TRIG, k] = math.cos(a)
        W[W_TRIG + 1, k] = math.sin(a)
    npu = int(P[P_PU_N])
    for k in range(npu):
        a = math.pi * (2 * k + 1) / npu
        W[W_TRIG + 2, k] = math.cos(a)
        W[W_TRIG + 3, k] = math.sin(a)


@njit(cache=True, error_model="numpy", _nrt=False)
def evaluate(s, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw, cst,
             c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, ds, obs, pose, pairs_at, full, app_at, AW):
    """State derivative ds of the whole system; also fills obs (loads, energies), the contact arrays c_*, pose.

    pairs_at: the address of the compiled `pairs_step` (`pairs_step_address`), called through it, not linked:
    `evaluate` compiles while the pair set compiles in another process (solver/warmup.py).
    app_at: 0, or the address of the compiled `appendage.appendage_step` (a rod chain on the active craft; AW: its
    parameters, outputs and scratch, rows AW_*): it solves the active subsystem with the chain (compiled only then).

    W is scratch whose rows W_TRIG.. hold `trig_table(P, W)`. full=True is a step's first RK4 stage: it also sets
    the contact pairs near within the step (W[W_NEAR]). With full=False (stages 2-4) only ds, the contact flags and
    forces (near pairs only) and the step's own observations (latch, pusher, depth status) are computed: energies,
    base loads, poses and contact report rows are left as they are."""
    # ---- passive craft
    qn = math.sqrt(s[3] ** 2 + s[4] ** 2 + s[5] ** 2 + s[6] ** 2)
    RP = rotation(s[3] / qn, s[4] / qn, s[5] / qn, s[6] / qn)
    rP = (s[0], s[1], s[2])
    vP = (s[7], s[8], s[9])
    wP = (s[10], s[11], s[12])
    oP = sub(rP, mv(RP, (P[P_CPX], P[P_CPY], P[P_CPZ])))
    # ---- active craft
    qn = math.sqrt(s[16] ** 2 + s[17] ** 2 + s[18] ** 2 + s[19] ** 2)
    RA = rotation(s[16] / qn, s[17] / qn, s[18] / qn, s[19] / qn)
    rA = (s[13], s[14], s[15])
    vA = (s[20], s[21], s[22])
    wA = (s[23], s[24], s[25])
    oA = sub(rA, mv(RA, (P[P_CAX], P[P_CAY], P[P_CAZ])))
    th1, th2, b1, b2, ps = s[26], s[27], s[28], s[29], s[30]
    dth1, dth2, db1, db2, dps = s[31], s[32], s[33], s[34], s[35]
    phi, dphi = s[36], s[37]
    i_nut = P[P_I_NUT]
    stroke = phi / i_nut
    dstroke = dphi / i_nut
    L0 = P[P_L0]
    L = L0 - stroke
    # ---- central chain kinematics (world)
    ry1, rz2 = rot_y(th1), rot_z(th2)          # gimbal rotations, shared with the lateral chains
    Ry1 = mm(RA, ry1)
    e1 = col(RA, 1)
    e2 = col(Ry1, 2)
    RH = mm(Ry1, rz2)
    f1 = col(RH, 1)
    Rb1 = mm(RH, rot_y(b1))
    f2 = col(Rb1, 2)
    Rb2 = mm(Rb1, rot_z(b2))
    f3 = col(Rb2, 0)
    rxp = rot_x(ps)
    RPr = mm(Rb2, rxp)
    hx = col(RH, 0)
    px = col(RPr, 0)
    pG = add(oA, mv(RA, (P[P_G_OFF], 0.0, 0.0)))
    pE = add(pG, scl(hx, -P[P_L_H]))
    ph = add(pE, scl(px, -L))
    pPc = add(ph, scl(px, P[P_A_PR]))
    pHc = add(pG, scl(hx, -P[P_D_H]))
    # end-slope correction of the head frame (seed 000: A_HS = Rz(dq5) Ry(dq4))
    Rz2 = mm(Rb2, rot_z(1.5 * math.sin(b2) - b2))
    Rzy = mm(Rz2, rot_y(1.5 * math.sin(b1) - b1))
    Rhead = mm(Rzy, rxp)
    wH = add(wA, add(scl(e1, dth1), scl(e2, dth2)))
    wb1 = add(wH, scl(f1, db1))
    wb2 = add(wb1, scl(f2, db2))
    wPr = add(wb2, scl(f3, dps))
    # the head frame's own angular velocity (end-slope correction rates g_j * db_j, torsion about its x axis)
    g1h, g2h = 1.5 * math.cos(b1) - 1.0, 1.5 * math.cos(b2) - 1.0
    ayh, h3h = col(Rz2, 1), col(Rzy, 0)
    wHd = add(add(wb2, scl(f2, g2h * db2)), add(scl(ayh, g1h * db1), scl(h3h, dps)))
    vG = add(vA, cross(wA, sub(pG, rA)))
    vE = add(vG, cross(wH, sub(pE, pG)))
    vh = add(add(vE, cross(wPr, sub(ph, pE))), scl(px, dstroke))
    # velocity-product accelerations
    aG0 = cross(wA, cross(wA, sub(pG, rA)))
    alH0 = add(cross(wA, scl(e1, dth1)), cross(add(wA, scl(e1, dth1)), scl(e2, dth2)))
    dE = sub(pE, pG)
    aE0 = add(aG0, add(cross(alH0, dE), cross(wH, cross(wH, dE))))
    dHc = sub(pHc, pG)
    aH0 = add(aG0, add(cross(alH0, dHc), cross(wH, cross(wH, dHc))))
    alP0 = add(add(alH0, cross(wH, scl(f1, db1))), add(cross(wb1, scl(f2, db2)), cross(wb2, scl(f3, dps))))
    dPc = sub(pPc, pE)
    # the probe CoM slides with the stroke (rheonomic in this chain): d/dt of (omega x d) adds omega x (s' axis)
    aP0 = add(aE0, add(cross(alP0, dPc), cross(wPr, add(cross(wPr, dPc), scl(px, dstroke)))))

    # ---- contacts: the contact library, one call over every pair of the probe-cone unit
    _body(cpos, crot, cvel, cw, B_PASSIVE, oP, RP, add(vP, cross(wP, sub(oP, rP))), wP)
    _body(cpos, crot, cvel, cw, B_ACTIVE, oA, RA, add(vA, cross(wA, sub(oA, rA))), wA)
    _body(cpos, crot, cvel, cw, B_HOUSING, pG, RH, vG, wH)
    _body(cpos, crot, cvel, cw, B_PROBE, pE, RPr, vE, wPr)
    _body(cpos, crot, cvel, cw, B_HEAD, ph, Rhead, vh, wHd)
    hf = (ph, ayh, h3h, g1h, g2h)
    xl, dxl = s[S_XL], s[S_DXL]                 # movable limiter: slide toward the joint (0 when fixed)
    pL = add(pG, scl(hx, P[P_LIM_X] + xl))
    _body(cpos, crot, cvel, cw, B_LIMITER, pL, RH, add(add(vG, cross(wH, sub(pL, pG))), scl(hx, dxl)), wH)
    Q = W[16, 0:ND]
    Q[:] = 0.0
    acc = W[15, 0:13]          # reaction on the passive craft F(3) M(3) about rP; load on the mechanism F(3) M(3)
    acc[:] = 0.0               # about the gimbal centre; axial force on the probe
    pe = 0.0
    pdiss = 0.0
    # latch mechanism: each latch is sprung out; the guide surface (cone wall, socket neck) presses it in
    # (radial interference c with the wall of revolution, potential 0.5 k c^2); behind the shoulder it
    # springs out and stays engaged. The library sees each latch in its own state slot 2 + k: retracted (0)
    # while pressed in (it bears only on the guide wall modelled here), and once engaged at the extension
    # it sprang to (on the slot floor or full), held fixed: the library's latch pairs (slot walls, stops)
    # then act on material points of the head, so their forces stay conservative.
    ext = 1.0
    cmax = P[P_LATCH_RE] - P[P_LATCH_RR]
    kn = gpairs.shape[0]                                     # solver-side pair `latch_neck` after the library's
    c_act[kn] = 0
    c_dep[kn] = 0.0
    c_vn[kn] = 0.0
    for i in range(3):
        c_frc[kn, i] = 0.0
    for k in range(N_LATCH):
        ca, sa = W[W_TRIG, k], W[W_TRIG + 1, k]              # cos, sin of the latch's angle about the head axis
        tip = add(ph, mv(Rhead, (P[P_LATCH_X], P[P_LATCH_RE] * ca, P[P_LATCH_RE] * sa)))
        tl = mtv(RP, sub(tip, oP))
        rho = math.sqrt(tl[1] ** 2 + tl[2] ** 2)
        obs[O_LATCH_X + k] = tl[0]
        cb = rho + P[P_LATCH_RT] - P[P_R_BORE]              # interference with the socket bore
        cf = rho + P[P_LATCH_RT] - P[P_R_FLOOR]             # ... with the slot floor
        free = False
        if full or Z[Z_LATCH0 + k] < 0.5:   # stages 2-4: an engaged latch's slot test changes neither force nor state
            # behind the shoulder and inside its slot (tapered: narrow at the stop) the latch springs out; tested
            # at the tip it would have there (on the floor if it reaches it: a tilted head moves the tip axially)
            rf = P[P_LATCH_RE] - min(max(cf, 0.0), cmax)
            tf = mtv(RP, sub(add(ph, mv(Rhead, (P[P_LATCH_X], rf * ca, rf * sa))), oP))
            deep = P[P_X_STOP] - tf[0]
            hw = P[P_SLOT_HS] + (P[P_SLOT_HF] - P[P_SLOT_HS]) * min(max(deep / P[P_SLOT_LEN], 0.0), 1.0)
            tt = -tf[1] * sa + tf[2] * ca
            free = deep > P[P_LATCH_RT] and abs(tt) + P[P_LATCH_RT] < hw
            obs[O_LATCH_IN + k] = 1.0 if free else 0.0
            # an engaged tip whose centre is in front of the shoulder or beside its slot (inside the wall) has left
            # the slot around the stop or wall faces (one-sided): it is pressed back in by the bore (released)
            obs[O_LATCH_OUT + k] = 1.0 if (deep < 0.0 or abs(tt) > hw) else 0.0
        # energy released when the latch springs from the bore onto the slot floor (absorbed on engagement)
        if full:
            obs[O_LATCH_U + k] = _latch_energy(P[P_LATCH_K], cb, cmax) - _latch_energy(P[P_LATCH_K], cf, cmax)
        cst[2 + k] = Z[Z_EXT0 + k] if Z[Z_LATCH0 + k] > 0.5 else 1.0
        obs[O_LATCH_E + k] = 1.0 - min(max(cf, 0.0), cmax) / cmax
        if rho < 1e-9 or tl[0] > 0.0:
            continue
        slope = 0.0
        if Z[Z_LATCH0 + k] > 0.5 or free:
            c = cf                                          # engaged: rides in its slot, on the floor if it reaches it
        else:
            slope = P[P_TAN_CONE] if tl[0] > P[P_X_MOUTH] else 0.0
            c = cb - slope * (tl[0] - P[P_X_MOUTH])         # pressed in by the cone wall or the socket bore
        if c <= 0.0:
            continue
        fk = P[P_LATCH_K] * min(c, cmax)                  # spring force; constant once fully pressed in
        Fl = (fk * slope, -fk * tl[1] / rho, -fk * tl[2] / rho)
        Fw = mv(RP, Fl)
        _contact_load(Q, acc, Fw, tip, 3, rA, rP, pG, pE, e1, e2, f1, f2, f3, px, hf)
        c_act[kn] = 1
        for i in range(3):
            c_frc[kn, i] += Fw[i]
        if c > c_dep[kn]:
            c_dep[kn] = c
            if full:   # the most pressed latch gives the reported point, normal and closing speed (rate of c)
                fm = norm(Fw)
                vt = sub(add(vh, cross(wHd, sub(tip, ph))), add(vP, cross(wP, sub(tip, rP))))
                for i in range(3):
                    c_pnt[kn, i] = tip[i]
                    c_nrm[kn, i] = Fw[i] / fm
                c_vn[kn] = -dot(vt, Fw) / fm * math.sqrt(1.0 + slope * slope)
        if full:
            pe += _latch_energy(P[P_LATCH_K], c, cmax)
        e_k = 1.0 - min(c, cmax) / cmax
        # the library sees an engaged latch at its extension (a slot wall or stop bears on it) and a latch
        # pressed by the bore as retracted (it bears only on the guide wall modelled here)
        cst[2 + k] = Z[Z_EXT0 + k] if Z[Z_LATCH0 + k] > 0.5 else (e_k if free else 0.0)
        ext = min(ext, e_k)
    obs[O_EXT] = ext                                        # the most pressed latch (output channel)
    cst[0] = ext
    cst[1] = cam_extension(P, phi)                          # alignment levers: cam driven by the nut angle
    obs[O_LEVER] = cst[1]
    hold = lever_hold_steps(P, phi, dphi, W[W_STEP, 0]) if full else 0   # rollers: bounds and skip while the cam holds
    status = call_status_at(pairs_at, (gprim, gpint, gpairs, gppar, cpos, crot, cvel, cw, cst, gwork, c_act, c_dep,
                                       c_pnt, c_nrm, c_frc, c_diag, W[W_NEAR], full, W[W_STEP, 0], W[W_SKIP],
                                       float(hold)))   # pairs_step(...)
    if status != 0 and obs[O_CSTAT] == 0.0:
        obs[O_CSTAT] = 1.0
        obs[O_CPAIR] = c_diag[0]
        obs[O_CDEPTH] = c_diag[1]
    dmax = 0.0
    f_lim = 0.0
    q_roll = 0.0
    bristle = P[P_FT_LAW] > 0.5                # friction law: elasto-plastic bristle (1) or the library's ramp (0)
    for i in range(S_FT, NS):
        ds[i] = 0.0
    for k in range(gpairs.shape[0]):
        c_vn[k] = 0.0
        if c_act[k] == 0:
            if full and bristle:
                _bristle_open(s, Z, P, k)
            continue
        ba = gpint[gpairs[k, 0], 1]
        bb = gpint[gpairs[k, 1], 1]
        p = (c_pnt[k, 0], c_pnt[k, 1], c_pnt[k, 2])
        n = (c_nrm[k, 0], c_nrm[k, 1], c_nrm[k, 2])
        F = (c_frc[k, 0], c_frc[k, 1], c_frc[k, 2])
        va = add((cvel[ba, 0], cvel[ba, 1], cvel[ba, 2]),
                 cross((cw[ba, 0], cw[ba, 1], cw[ba, 2]), sub(p, (cpos[ba, 0], cpos[ba, 1], cpos[ba, 2]))))
        vb = add((cvel[bb, 0], cvel[bb, 1], cvel[bb, 2]),
                 cross((cw[bb, 0], cw[bb, 1], cw[bb, 2]), sub(p, (cpos[bb, 0], cpos[bb, 1], cpos[bb, 2]))))
        ia = gpairs[k, 0]
        roller = gpint[ia, 0] == ROLLER
        dpdphi = (0.0, 0.0, 0.0)
        if roller:
            # the cam swings the lever with the nut: the roller's reaction loads the nut (generalized force
            # F . dp/dphi) and the lever's motion enters the contact's relative velocity
            dpdphi = mv(RH, roller_dp(gprim, ia, cst[1], cam_slope(P, phi)))
            va = add(va, scl(dpdphi, dphi))
        vr = sub(va, vb)
        vn = dot(vr, n)
        fn = dot(F, n)
        vt = sub(vr, scl(n, vn))
        if bristle:                                # the bristle's tangential force replaces the library's ramp
            Ft, e_t, p_t = _bristle(s, ds, Z, P, k, full, RP, n, vt, fn, gppar[k, PAR_MU])
            F = add(scl(n, fn), Ft)
            for i in range(3):
                c_frc[k, i] = F[i]
            pe += e_t
            pdiss -= p_t                           # the stretch's stored power is not dissipated
        if roller:
            q_roll += dot(F, dpdphi)
        d = c_dep[k]
        kk = gppar[k, PAR_K]
        # stored 0.5 k d^2; dissipated = -(F . v_rel) - d/dt(stored), with d' = -v_n
        pe += 0.5 * kk * d * d
        Ft = sub(F, scl(n, fn))
        pdiss += (kk * d - fn) * vn - dot(Ft, vt)
        c_vn[k] = -vn
        if d > dmax:
            dmax = d
        lvl = 3 if ba == B_HEAD else (2 if ba == B_PROBE else (0 if ba == B_ACTIVE else 1))
        if lvl == 0:
            _craft_load(Q, acc, F, p, rA, rP)
        else:
            _contact_load(Q, acc, F, p, lvl, rA, rP, pG, pE, e1, e2, f1, f2, f3, px, hf)
        if ba == B_LIMITER:
            f_lim += dot(F, hx)
    # spring pushers on the active docking ring bear on the passive docking plane
    exP = col(RP, 0)
    gmax = -1e9
    gmin = 1e9
    fpush = 0.0
    npu = int(P[P_PU_N])
    for k in range(npu):
        pa = add(oA, mv(RA, (0.0, P[P_PU_R] * W[W_TRIG + 2, k], P[P_PU_R] * W[W_TRIG + 3, k])))
        gap = dot(sub(pa, oP), exP)
        gmax = max(gmax, gap)
        gmin = min(gmin, gap)
        fk, ek = pusher_force(P, gap)
        if fk > 0.0:
            # guide friction of the plunger as viscous damping on the gap rate (never pulling)
            vg = dot(sub(add(vA, cross(wA, sub(pa, rA))), add(vP, cross(wP, sub(pa, rP)))), exP)
            fd = max(-P[P_PU_C] * vg, -fk)
            pdiss -= fd * vg
            _craft_load(Q, acc, scl(exP, fk + fd), pa, rA, rP)
            pe += ek
            fpush += fk + fd
    obs[O_PUSH] = fpush
    obs[O_GAP] = gmax
    obs[O_GAPMIN] = gmin
    FPs = (acc[0], acc[1], acc[2])
    MPs = (acc[3], acc[4], acc[5])
    Fm = (acc[6], acc[7], acc[8])
    Mm = (acc[9], acc[10], acc[11])
    F_ax = acc[12]

    # probe bending and torsion (stiffness scaled by L(0)/L(t); hysteresis sliders scaled alike)
    kmod = L0 / L
    dVds = 0.0
    for j in range(2):
        bj = s[S_Q + 2 + j]
        dbj = s[S_U + 2 + j]
        fh, eh = _jenkins(P[P_HB_K], bj, Z[Z_BEND0 + j], P[P_HB_LIM])
        fs, es = _stop(bj, P[P_BEND_MAX], P[P_K_BEND_STOP])
        Q[8 + j] += -kmod * (P[P_K_BEND0] * bj + fh) - P[P_C_BEND] * dbj + fs
        pe += kmod * (0.5 * P[P_K_BEND0] * bj * bj + eh) + es
        pdiss += P[P_C_BEND] * dbj * dbj
        dVds += kmod / L * (0.5 * P[P_K_BEND0] * bj * bj + eh)
    fh, eh = _jenkins(P[P_HT_K], ps, Z[Z_TORS], P[P_HT_LIM])
    fs, es = _stop(ps, P[P_TORS_MAX], P[P_K_TORS_STOP])
    Q[10] += -P[P_K_TORS] * ps - fh - P[P_C_TORS] * dps + fs
    pe += 0.5 * P[P_K_TORS] * ps * ps + eh + es
    pdiss += P[P_C_TORS] * dps * dps

    # ---- mass matrix (CRBA over craft, housing, probe) and bias
    M = W[W_M:W_M + ND, 0:ND]
    b = W[W_B, 0:ND]
    fresh_m = full or not FREEZE_MASS_MATRIX     # stages 2-4 may solve with the first stage's Cholesky factor
    if fresh_m:
        M[:, :] = 0.0
    IA = inertia_world(RA, (P[P_JA0], P[P_JA1], P[P_JA2], P[P_JA3], P[P_JA4], P[P_JA5], P[P_JA6], P[P_JA7], P[P_JA8]))
    IH = inertia_world(RH, (P[P_I_HX], 0.0, 0.0, 0.0, P[P_I_HT], 0.0, 0.0, 0.0, P[P_I_HT]))
    IPr = inertia_world(RPr, (P[P_I_PRX], 0.0, 0.0, 0.0, P[P_I_PRT], 0.0, 0.0, 0.0, P[P_I_PRT]))
    _body_jac(JV, JW, 1, pHc, 8, rA, pG, pE, e1, e2, f1, f2, f3)
    _body_jac(JV, JW, 2, pPc, 11, rA, pG, pE, e1, e2, f1, f2, f3)
    for i in range(ND):
        b[i] = Q[i]
    ke = 0.0
    mom = (0.0, 0.0, 0.0)
    for bd in range(3):
        if bd == 0:
            m, I, om, a0, al0, nc = P[P_M_A], IA, wA, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 6
        elif bd == 1:
            m, I, om, a0, al0, nc = P[P_M_H], IH, wH, aH0, alH0, 8
        else:
            m, I, om, a0, al0, nc = P[P_M_PR], IPr, wPr, aP0, alP0, 11
        Iom = mv(I, om)
        gyro = add(mv(I, al0), cross(om, Iom))
        if bd == 0:
            if fresh_m:
                _craft_block(M, b, m, I, gyro)
            else:
                for i in range(3):
                    b[3 + i] -= gyro[i]
        for i in range(nc if bd > 0 else 0):
            jvi = (JV[bd, 0, i], JV[bd, 1, i], JV[bd, 2, i])
            jwi = (JW[bd, 0, i], JW[bd, 1, i], JW[bd, 2, i])
            b[i] -= m * dot(jvi, a0) + dot(jwi, gyro)
            if fresh_m:
                Ijw = mv(I, jwi)
                _crba_row(M, JV, JW, bd, i, m, jvi, Ijw)
        if full:
            vc = vA
            if bd == 1:
                vc = add(vG, cross(wH, dHc))
            elif bd == 2:
                vc = add(vE, cross(wPr, dPc))
            ke += 0.5 * m * dot(vc, vc) + 0.5 * dot(om, Iom)
            mom = add(mom, scl(vc, m))

    # ---- lateral damper chains reduced onto the housing rows (eq. 2.3-2.4)
    RHb = mm(ry1, rz2)
    for k in range(N_LAT):
        x, xd, H1, H2, h = lateral_chain_rot(LAT, k, ry1, RHb, dth1, dth2)
        A = LAT[k, L_INERTIA]
        if fresh_m:
            M[6, 6] += A * H1 * H1
            M[7, 6] += A * H2 * H1
            M[7, 7] += A * H2 * H2
        b[6] -= H1 * A * h
        b[7] -= H2 * A * h
        ke += 0.5 * A * xd * xd
        if LAT[k, L_TYPE] < 0.5:
            ax = abs(x)
            fe, ee = _tab(TLS, ax)
            if x < 0.0:
                fe = -fe
            fh, eh = _jenkins(P[P_LH_K], x, Z[Z_LAT0 + k], P[P_LH_F0] + P[P_LH_MU] * abs(fe))
            f = fe + fh + P[P_C_LAT] * xd
            pe += ee + eh
            pdiss += P[P_C_LAT] * xd * xd
            gen = -f
        else:
            g = LAT[k, L_GEAR]
            tm, em = _tab(TML, g * abs(xd))
            tb = g * tm
            if xd < 0.0:
                tb = -tb
            fs, es = _stop(x, P[P_PSI_MAX], P[P_K_CRANK_STOP])
            pe += es
            pdiss += tb * xd
            gen = -tb + fs
        b[6] += gen * H1
        b[7] += gen * H2
        obs[O_LATX + k] = x
        obs[O_LATV + k] = xd

    # ---- axial damper: nut equation (2.1)
    i_fr = P[P_I_FR]
    xfr = i_fr * (phi - s[S_DRV]) - Z[Z_SLIP] - Z[Z_SLIP1]
    if xfr < 0.0:
        t_el = P[P_K_TR] * xfr
        e_el = 0.5 * P[P_K_TR] * xfr * xfr
    else:
        t_el, e_el = _tab(TAX, xfr)
    t_hi, t_lo = brake_limits(P, Z)
    if t_el > t_hi:
        t_el = t_hi
    elif t_el < -t_lo:
        t_el = -t_lo
    w_drv = drive_rate(P, Z, i_fr * t_el)
    m_fr = i_fr * (t_el + P[P_C_D] * i_fr * (dphi - w_drv))
    g = P[P_I_MB]
    tm, em = _tab(TMA, g * abs(dphi))
    m_mb = g * tm
    if dphi < 0.0:
        m_mb = -m_mb
    f_stop = 0.0
    if stroke > P[P_STROKE_MAX]:
        f_stop = P[P_K_STROKE_STOP] * (stroke - P[P_STROKE_MAX])
        pe += 0.5 * f_stop * (stroke - P[P_STROKE_MAX])
    fr_screw = P[P_K_NUTFR] * abs(F_ax) * math.tanh(dstroke / P[P_V_SCREW])
    m_screw = (F_ax - fr_screw) / i_nut
    ddphi = (m_screw - m_fr - m_mb - (f_stop + dVds) / i_nut + q_roll) / P[P_I_NUT_TOT]
    pe += e_el
    pdiss += P[P_C_D] * (i_fr * (dphi - w_drv)) ** 2 + m_mb * dphi + fr_screw * dstroke
    ke += 0.5 * P[P_I_NUT_TOT] * dphi * dphi
    ds[S_DRV] = w_drv
    ds[S_WDRV] = -m_fr * w_drv                  # power the drive puts into the chain
    obs[O_DRV] = w_drv
    obs[O_TAU] = m_fr
    # movable limiter slide along the housing on its spring guides (separate scalar equation, like the nut)
    if P[P_LIM_MOV] > 0.5:
        fs, es = limiter_spring(P, xl)
        ds[S_XL] = dxl
        ds[S_DXL] = (f_lim + fs - P[P_LIM_C] * dxl) / P[P_LIM_M]
        pe += es
        pdiss += P[P_LIM_C] * dxl * dxl
        ke += 0.5 * P[P_LIM_M] * dxl * dxl
        obs[O_LIMF] = -fs
    else:
        ds[S_XL] = 0.0
        ds[S_DXL] = 0.0
        obs[O_LIMF] = 0.0

    # ---- solve the active subsystem
    ud = W[W_UD, 0:ND]
    if app_at != 0:     # with the rod chain on the active craft (the chain's rows, its loads on the craft's rows)
        if call_status_at(app_at, (s, ds, W, AW)) != 0:     # appendage_step(...): M, b, ud from W
            for i in range(s.shape[0]):
                ds[i] = math.nan
            return
        pdiss += AW[0, APP_O_DISS]
        if full:
            pe += AW[0, APP_O_PE]
            ke += AW[0, APP_O_KE]
            mom = add(mom, (AW[0, APP_O_P], AW[0, APP_O_P + 1], AW[0, APP_O_P + 2]))
    else:
        if fresh_m and not _cholesky_factor(M, ND):     # lower triangle only (the factor reads no other entry)
            for i in range(NS):
                ds[i] = math.nan
            return
        _cholesky_subst(M, b, ND, ud)
    # ---- passive craft
    if P[P_FIXED_P] > 0.5:
        for i in range(13):
            ds[i] = 0.0
    else:
        mP = P[P_M_P]
        IPw = inertia_world(RP, (P[P_JP0], P[P_JP1], P[P_JP2], P[P_JP3], P[P_JP4], P[P_JP5], P[P_JP6], P[P_JP7],
                                 P[P_JP8]))
        IPinv = inertia_world(RP, (P[P_JPI0], P[P_JPI1], P[P_JPI2], P[P_JPI3], P[P_JPI4], P[P_JPI5], P[P_JPI6],
                                   P[P_JPI7], P[P_JPI8]))
        dw, Iw = euler_accel(IPw, IPinv, wP, MPs)           # Euler's equations, world frame (solver/core)
        dq = quat_rate_world(wP, s[3], s[4], s[5], s[6])
        for i in range(3):
            ds[S_RP + i] = vP[i]
            ds[S_VP + i] = FPs[i] / mP
            ds[S_WP + i] = dw[i]
        for i in range(4):
            ds[S_QP + i] = dq[i]
        if full:
            ke += 0.5 * mP * dot(vP, vP) + 0.5 * dot(wP, Iw)
            mom = add(mom, scl(vP, mP))
    dq = quat_rate_world(wA, s[16], s[17], s[18], s[19])
    for i in range(3):
        ds[S_RA + i] = vA[i]
        ds[S_VA + i] = ud[i]
        ds[S_WA + i] = ud[3 + i]
    for i in range(4):
        ds[S_QA + i] = dq[i]
    for i in range(5):
        ds[S_Q + i] = s[S_U + i]
        ds[S_U + i] = ud[6 + i]
    ds[S_PHI] = dphi
    ds[S_DPHI] = ddphi
    ds[S_EDISS] = pdiss
    if not full:
        return

    # ---- loads on the mechanism base (active craft) from the housing and probe balance
    Fb = Fm
    Mb = Mm
    for bd in range(1, 3):
        if bd == 1:
            m, I, om, a0, al0, d, nc = P[P_M_H], IH, wH, aH0, alH0, dHc, 8
            pc = pHc
        else:
            m, I, om, a0, al0, d, nc = P[P_M_PR], IPr, wPr, aP0, alP0, dPc, 11
            pc = pPc
        acc = a0
        alp = al0
        for j in range(nc):
            acc = add(acc, scl((JV[bd, 0, j], JV[bd, 1, j], JV[bd, 2, j]), ud[j]))
            alp = add(alp, scl((JW[bd, 0, j], JW[bd, 1, j], JW[bd, 2, j]), ud[j]))
        Fb = sub(Fb, scl(acc, m))
        Mb = sub(Mb, add(cross(sub(pc, pG), scl(acc, m)), add(mv(I, alp), cross(om, mv(I, om)))))
    Fl = mtv(RA, Fb)
    Ml = mtv(RA, Mb)
    mtot = P[P_M_A] + P[P_M_H] + P[P_M_PR] + (0.0 if P[P_FIXED_P] > 0.5 else P[P_M_P])
    if app_at != 0:
        mtot += AW[0, APP_O_MASS]
    for i in range(3):
        obs[O_FB + i] = Fl[i]
        obs[O_MB + i] = Ml[i]
        obs[O_MOM + i] = mom[i]
    obs[O_PE] = pe
    obs[O_PDISS] = pdiss
    obs[O_KE] = ke
    obs[O_KE_BARY] = ke - 0.5 * dot(mom, mom) / mtot if P[P_FIXED_P] < 0.5 else ke
    obs[O_MTOT] = mtot
    obs[O_DEPTH] = dmax
    obs[O_FAX] = F_ax
    # axial damper device readings (probe metres)
    wind = (t_el - P[P_T_PRE]) / P[P_K_SPRING]
    wind = min(max(wind, 0.0), P[P_SPRING_MAX])
    obs[O_SPRING] = wind / (i_fr * i_nut)
    obs[O_BRAKE] = Z[Z_SLIP] / (i_fr * i_nut)
    obs[O_BRAKE1] = Z[Z_SLIP1] / (i_fr * i_nut)
    # poses
    _pose(pose, 0, oP, RP)
    _pose(pose, 1, oA, RA)
    _pose(pose, 2, pG, RH)
    _pose(pose, 3, pE, RPr)
    _pose(pose, 4, ph, Rhead)
    _pose(pose, 5, pL, RH)
    pose[4, 12:15] = vh
    pose[0, 12:15] = vP
    pose[0, 15:18] = wP


@njit(cache=True, error_model="numpy", inline="always")
def _pose(pose, i, p, R):
    for j in range(3):
        pose[i, j] = p[j]
    for j in range(9):
        pose[i, 3 + j] = R[j]


# ---------------------------------------------------------------- discrete updates (hysteresis sliders)
@njit(cache=True, error_model="numpy")
def brake_slip(s, Z, P, TAX):
    """Return-map the friction brakes (FrT1 with its limited stroke, then FrT2); returns the dissipated energy."""
    diss = 0.0
    i_fr = P[P_I_FR]
    for _ in range(2):
        xfr = i_fr * (s[S_PHI] - s[S_DRV]) - Z[Z_SLIP] - Z[Z_SLIP1]
        t_el = P[P_K_TR] * xfr if xfr < 0.0 else _tab(TAX, xfr)[0]
        hi, lo = brake_limits(P, Z)
        first = P[P_S1_MAX] > 0.0
        if t_el > hi:
            d = xfr - _tab_inv(TAX, hi)
            if first and Z[Z_SLIP1] < P[P_S1_MAX] and hi == P[P_T1_IN]:
                d = min(d, P[P_S1_MAX] - Z[Z_SLIP1])
                Z[Z_SLIP1] += d
            else:
                Z[Z_SLIP] += d
            diss += hi * d
        elif t_el < -lo:
            d = -lo / P[P_K_TR] - xfr
            if first and Z[Z_SLIP1] > 0.0 and lo == P[P_T1_OUT]:
                d = min(d, Z[Z_SLIP1])
                Z[Z_SLIP1] -= d
            else:
                Z[Z_SLIP] -= d
            diss += lo * d
        else:
            break
    return diss


@njit(cache=True, error_model="numpy")
def post_step(s, Z, P, LAT, TLS, TAX):
    """Friction-brake slip and hysteresis-slider updates after an explicit step; adds their dissipation."""
    diss = brake_slip(s, Z, P, TAX)
    L = P[P_L0] - s[S_PHI] / P[P_I_NUT]
    kmod = P[P_L0] / L
    for j in range(2):
        zn, d = _slide(P[P_HB_K], s[S_Q + 2 + j], Z[Z_BEND0 + j], P[P_HB_LIM])
        Z[Z_BEND0 + j] = zn
        diss += kmod * d
    zn, d = _slide(P[P_HT_K], s[S_Q + 4], Z[Z_TORS], P[P_HT_LIM])
    Z[Z_TORS] = zn
    diss += d
    ry = rot_y(s[S_Q])
    RHb = mm(ry, rot_z(s[S_Q + 1]))
    for k in range(2):
        x, xd, H1, H2, h = lateral_chain_rot(LAT, k, ry, RHb, 0.0, 0.0)
        fe = _tab(TLS, abs(x))[0]
        zn, d = _slide(P[P_LH_K], x, Z[Z_LAT0 + k], P[P_LH_F0] + P[P_LH_MU] * fe)
        Z[Z_LAT0 + k] = zn
        diss += d
    Z[Z_EDISS] += diss


# ---------------------------------------------------------------- output channels
CHANNELS = ("head_x head_y head_z head_vx head_vy head_vz probe_pitch probe_yaw cm_vx cm_vy cm_vz "
            "rate_x rate_y rate_z att_roll att_pitch att_yaw Fx Fy Fz Mx My Mz axial_spring friction_brake "
            "axial_magnetic_brake spring_mechanism_1 spring_mechanism_2 magnetic_brake_1 magnetic_brake_2 "
            "housing_angle_y housing_angle_z probe_bend_y probe_bend_z probe_torsion probe_stroke "
            "head_offset_y head_offset_z head_near_socket lever_extension kinetic_energy potential_energy "
            "dissipated_energy total_energy head_axial_force latches_engaged max_depth momentum_x momentum_y "
            "momentum_z crank_angle_1 crank_angle_2 nut_rate latch_extension "
            "drive_rate drive_work retraction pusher_force dock_gap XLimD limiter_spring_force friction_brake_1 "
            "chain_torque cyclogram_phase").split()
NCH = len(CHANNELS)
RAD = 180.0 / math.pi
RPM = 60.0 / (2.0 * math.pi)


@njit(cache=True, error_model="numpy", inline="always")
def _rel_pose(pose, i, RP, oP):
    """Position and rotation of pose row i in the receiving-cone (passive docking) frame."""
    p = (pose[i, 0], pose[i, 1], pose[i, 2])
    R = (pose[i, 3], pose[i, 4], pose[i, 5], pose[i, 6], pose[i, 7], pose[i, 8], pose[i, 9], pose[i, 10],
         pose[i, 11])
    RPT = (RP[0], RP[3], RP[6], RP[1], RP[4], RP[7], RP[2], RP[5], RP[8])
    return mtv(RP, sub(p, oP)), mm(RPT, R)


@njit(cache=True, error_model="numpy")
def record(row, t, s, Z, P, obs, c_act, c_dep, c_pnt, c_nrm, c_frc, c_vn, pose, out_t, out_ch, out_pos, out_q,
           out_act, out_f, out_p, out_n, out_d, out_vn, LAT):
    """Write one output frame: channels, body poses and contact records, all in the receiving-cone frame."""
    RP = (pose[0, 3], pose[0, 4], pose[0, 5], pose[0, 6], pose[0, 7], pose[0, 8], pose[0, 9], pose[0, 10],
          pose[0, 11])
    oP = (pose[0, 0], pose[0, 1], pose[0, 2])
    vP = (pose[0, 12], pose[0, 13], pose[0, 14])
    wP = (pose[0, 15], pose[0, 16], pose[0, 17])
    out_t[row] = t
    bodies = (0, 1, 2, 3, 4, 5)
    for bi in range(6):
        p, R = _rel_pose(pose, bodies[bi], RP, oP)
        q = quaternion(R)
        for j in range(3):
            out_pos[row, bi, j] = p[j]
        for j in range(4):
            out_q[row, bi, j] = q[j]
    ph_w = (pose[4, 0], pose[4, 1], pose[4, 2])
    head, _ = _rel_pose(pose, 4, RP, oP)
    vh_w = (pose[4, 12], pose[4, 13], pose[4, 14])
    vrel_h = mtv(RP, sub(vh_w, add(vP, cross(wP, sub(ph_w, (s[0], s[1], s[2]))))))
    _, Rpr = _rel_pose(pose, 3, RP, oP)
    ax = (-Rpr[0], -Rpr[3], -Rpr[6])
    rA = (s[13], s[14], s[15])
    rP = (s[0], s[1], s[2])
    vcm = mtv(RP, sub((s[20], s[21], s[22]), add(vP, cross(wP, sub(rA, rP)))))
    wrel = mtv(RP, sub((s[23], s[24], s[25]), wP))
    _, Rrel = _rel_pose(pose, 1, RP, oP)
    roll = math.atan2(Rrel[7], Rrel[8])
    pitch = math.asin(max(-1.0, min(1.0, -Rrel[6])))
    yaw = math.atan2(Rrel[3], Rrel[0])
    # head offset from the housing axis, in the housing frame
    pG = (pose[2, 0], pose[2, 1], pose[2, 2])
    RH = (pose[2, 3], pose[2, 4], pose[2, 5], pose[2, 6], pose[2, 7], pose[2, 8], pose[2, 9], pose[2, 10],
          pose[2, 11])
    hoff = mtv(RH, sub(ph_w, pG))
    lat_on = 0.0
    for k in range(N_LATCH):
        lat_on += Z[Z_LATCH0 + k]
    diss = s[S_EDISS] + Z[Z_EDISS]
    near = 1.0 if (head[0] < P[P_X_MOUTH] + 0.15 or lat_on > 0.0) else 0.0
    v = out_ch[row]
    v[0], v[1], v[2] = head[0], head[1], head[2]
    v[3], v[4], v[5] = vrel_h[0], vrel_h[1], vrel_h[2]
    v[6] = math.atan2(ax[2], -ax[0]) * RAD
    v[7] = math.atan2(ax[1], -ax[0]) * RAD
    v[8], v[9], v[10] = vcm[0], vcm[1], vcm[2]
    v[11], v[12], v[13] = wrel[0] * RAD, wrel[1] * RAD, wrel[2] * RAD
    v[14], v[15], v[16] = roll * RAD, pitch * RAD, yaw * RAD
    for j in range(6):
        v[17 + j] = obs[O_FB + j]
    v[23] = obs[O_SPRING]
    v[24] = obs[O_BRAKE]
    v[25] = P[P_I_MB] * s[S_DPHI] * RPM
    v[26] = obs[O_LATX + 0]
    v[27] = obs[O_LATX + 1]
    v[28] = LAT[2, L_GEAR] * obs[O_LATV + 2] * RPM
    v[29] = LAT[3, L_GEAR] * obs[O_LATV + 3] * RPM
    v[30] = s[S_Q] * RAD
    v[31] = s[S_Q + 1] * RAD
    v[32] = s[S_Q + 2] * RAD
    v[33] = s[S_Q + 3] * RAD
    v[34] = s[S_Q + 4] * RAD
    v[35] = s[S_PHI] / P[P_I_NUT]
    v[36] = hoff[1]
    v[37] = hoff[2]
    v[38] = near
    v[39] = obs[O_LEVER]
    v[40] = obs[O_KE_BARY]
    v[41] = obs[O_PE]
    v[42] = diss
    v[43] = obs[O_KE_BARY] + obs[O_PE] + diss - s[S_WDRV]     # the drive's work is the energy put in
    v[44] = obs[O_FAX]
    v[45] = lat_on
    v[46] = obs[O_DEPTH]
    v[47], v[48], v[49] = obs[O_MOM], obs[O_MOM + 1], obs[O_MOM + 2]
    v[50] = obs[O_LATX + 2] * RAD
    v[51] = obs[O_LATX + 3] * RAD
    v[52] = s[S_DPHI] * RPM
    v[53] = obs[O_EXT]
    v[54] = obs[O_DRV] / P[P_I_NUT]
    v[55] = s[S_WDRV]
    v[56] = s[S_DRV] / P[P_I_NUT]
    v[57] = obs[O_PUSH]
    v[58] = obs[O_GAP]
    v[59] = s[S_XL]
    v[60] = obs[O_LIMF]
    v[61] = obs[O_BRAKE1]
    v[62] = obs[O_TAU]
    v[63] = Z[Z_PHASE]
    for p in range(c_act.shape[0]):
        out_act[row, p] = c_act[p]
        if c_act[p] == 0:                          # apart: every record 0 (the run file skips all-zero chunks)
            for j in range(3):
                out_f[row, p, j] = 0.0
                out_p[row, p, j] = 0.0
                out_n[row, p, j] = 0.0
            out_d[row, p] = 0.0
            out_vn[row, p] = 0.0
            continue
        f = mtv(RP, (c_frc[p, 0], c_frc[p, 1], c_frc[p, 2]))
        pt = mtv(RP, sub((c_pnt[p, 0], c_pnt[p, 1], c_pnt[p, 2]), oP))
        nn = mtv(RP, (c_nrm[p, 0], c_nrm[p, 1], c_nrm[p, 2]))
        for j in range(3):
            out_f[row, p, j] = f[j]
            out_p[row, p, j] = pt[j]
            out_n[row, p, j] = nn[j]
        out_d[row, p] = c_dep[p]
        out_vn[row, p] = c_vn[p]


# ---------------------------------------------------------------- integration
EV_FIRST, EV_BEGIN, EV_END, EV_CAPTURE, EV_DIAG = 0, 1, 2, 3, 4
EV_SENSOR, EV_PHASE, EV_HARD = 5, 6, 7         # head sensor tripped (pair = sensor), cyclogram phase, hooks closed
EV_RELEASE = 8                                  # an engaged latch left its slot (pair = latch index)
SENSOR_CONE, SENSOR_BOTTOM = 0, 1              # head sensors 24 (contact with the cone), 25 (socket bottom)
PHASE_DRIVE, PHASE_PUSHERS = 2, 10             # retraction started; spring pushers touched the passive plane
ST_OK, ST_NAN, ST_DEPTH, ST_EVFULL = 0, 1, 2, 3
ST_DONE = 4                                    # hard dock: the terminal event of the cyclogram


@njit(cache=True, error_model="numpy", inline="always")
def _event(ev, n_ev, t, kind, code):
    if n_ev[0] < ev.shape[0]:
        ev[n_ev[0], 0] = t
        ev[n_ev[0], 1] = kind
        ev[n_ev[0], 2] = code
        n_ev[0] += 1


@njit(cache=True, error_model="numpy")
def cyclogram(t, Z, P, c_act, obs, ev, n_ev):
    """Sequencing by the head sensors (cone, socket bottom, capture), drive start after capture, pushers,
    hooks closing when the docking planes meet. Returns True at hard dock (the terminal event)."""
    cone = c_act[int(P[P_PI_HEAD_CONE])] > 0 or c_act[int(P[P_PI_HEAD_SOCKET])] > 0 \
        or c_act[c_act.shape[0] - 1] > 0                     # latch noses on the guide wall (latch_neck)
    if Z[Z_SENS_CONE] < 0.5 and cone:
        Z[Z_SENS_CONE] = 1.0
        _event(ev, n_ev, t, EV_SENSOR, SENSOR_CONE)
    if Z[Z_SENS_BOTTOM] < 0.5 and c_act[int(P[P_PI_BOTTOM])] > 0:
        Z[Z_SENS_BOTTOM] = 1.0
        _event(ev, n_ev, t, EV_SENSOR, SENSOR_BOTTOM)
    if Z[Z_PHASE] == PH_APPROACH and Z[Z_CAPT] > 0.5:
        Z[Z_PHASE] = PH_CAPTURED
        Z[Z_TDRV] = t + P[P_DRV_DELAY]
    if Z[Z_PHASE] == PH_CAPTURED and t >= Z[Z_TDRV] and P[P_DRV_SPEED] > 0.0:
        Z[Z_PHASE] = PH_RETRACT
        _event(ev, n_ev, t, EV_PHASE, PHASE_DRIVE)
    if Z[Z_PUSH] < 0.5 and obs[O_PUSH] > 0.0:
        Z[Z_PUSH] = 1.0
        _event(ev, n_ev, t, EV_PHASE, PHASE_PUSHERS)
    if Z[Z_PHASE] == PH_RETRACT and obs[O_GAP] <= P[P_HOOK_GAP]:
        Z[Z_PHASE] = PH_HARD
        _event(ev, n_ev, t, EV_HARD, -1)
        return True
    return False


def run_block(s, Z, t0, h, n_out, spo, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, c_diag,
              prev_act, ev, n_ev, out_t, out_ch, out_pos, out_q, out_act, out_f, out_p, out_n, out_d, out_vn,
              appendage=None):
    """Advance n_out output frames of spo RK4 steps each; record frames and events. Returns (status, t, rows).

    Python: it allocates the scratch and calls the compiled step loop `_steps` (one compiled unit less).
    appendage: None, or (address of `appendage_step`, AW) of a rod chain on the active craft."""
    app_at, AW = appendage if appendage is not None else (0, np.zeros((1, 1)))
    W = np.zeros((30, max(16, gpairs.shape[0])))
    trig_table(P, W)
    W[W_STEP, 0] = h
    JV = np.zeros((3, 3, ND))
    JW = np.zeros((3, 3, ND))
    nb = 6
    npair = gpairs.shape[0]
    cpos = np.zeros((nb, 3))
    crot = np.zeros((nb, 3, 3))
    cvel = np.zeros((nb, 3))
    cw = np.zeros((nb, 3))
    cst = np.zeros(2 + N_LATCH)
    c_act = np.zeros(npair + 1, np.uint8)       # library pairs, then the solver's latch_neck
    c_dep = np.zeros(npair + 1)
    c_pnt = np.zeros((npair + 1, 3))
    c_nrm = np.zeros((npair + 1, 3))
    c_frc = np.zeros((npair + 1, 3))
    c_vn = np.zeros(npair + 1)
    obs = np.zeros(NO)
    pose = np.zeros((NPOSE, 18))
    k1 = np.zeros(s.shape[0])
    k2 = np.zeros(s.shape[0])
    k3 = np.zeros(s.shape[0])
    k4 = np.zeros(s.shape[0])
    st = np.zeros(s.shape[0])
    return _steps(s, Z, float(t0), float(h), int(n_out), int(spo), P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs,
                  gppar, gwork, c_diag, prev_act, ev, n_ev, out_t, out_ch, out_pos, out_q, out_act, out_f, out_p, out_n,
                  out_d, out_vn, W, JV, JW, cpos, crot, cvel, cw, cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_vn, obs,
                  pose, k1, k2, k3, k4, st,
                  pairs_step_address(gprim, gpint, gpairs, gppar, cpos, crot, cvel, cw, cst, gwork, c_act, c_dep, c_pnt,
                                     c_nrm, c_frc, c_diag, W[W_NEAR], True, float(h), W[W_SKIP], 0.0),
                  app_at, AW)


@njit(cache=True, error_model="numpy", inline="always")
def _record_appendage(row, s, AW, out_ch):
    """The rod chain's channels after the probe-cone's: chord angles, then its `out` values from the end slopes on."""
    n = int(AW[AW_AP, 0])
    for j in range(n):
        out_ch[row, NCH + j] = s[NS + j]
    for j in range(6 * n):
        out_ch[row, NCH + n + j] = AW[AW_OUT, APP_O_W + j]


def pairs_step_address(*args) -> int:
    """The address of `pairs_step` compiled for these arguments (those `evaluate` passes it: its `pairs_at`)."""
    import numba
    return status_address(pairs_step, tuple(numba.typeof(a) for a in args))


@njit(cache=True, error_model="numpy", _nrt=False, nogil=True)   # nogil: the run-file writer thread works meanwhile
def _steps(s, Z, t0, h, n_out, spo, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, c_diag,
           prev_act, ev, n_ev, out_t, out_ch, out_pos, out_q, out_act, out_f, out_p, out_n, out_d, out_vn,
           W, JV, JW, cpos, crot, cvel, cw, cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_vn, obs, pose, k1, k2, k3, k4, st,
           pairs_at, app_at, AW):
    """The step loop of `run_block` over its scratch arrays, without reference counting (no allocation here)."""
    npair = gpairs.shape[0]
    ns = s.shape[0]     # NS, and a rod chain's state after it (app_at != 0)
    t = t0
    k0 = round(t0 / h)   # time = (global step index) * h: the same for any grouping of steps into calls
    for row in range(n_out):
        for it in range(spo):
            # `evaluate`'s stage flag as run-time bools (it >= 0 always holds): a literal True / False would
            # compile `evaluate` and the pair set twice, once per value
            first = it >= 0
            later = not first
            obs[O_CSTAT] = 0.0
            evaluate(s, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw, cst,
                     c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k1, obs, pose, pairs_at, first, app_at,
                     AW)
            ok = True
            for i in range(ns):
                if not math.isfinite(s[i]) or not math.isfinite(k1[i]):
                    ok = False
            if not ok:
                return ST_NAN, t, row
            if obs[O_CSTAT] != 0.0:
                return ST_DEPTH, t, row
            # latch engagement behind the socket shoulder; capture when all latches are engaged
            changed = False
            for k in range(N_LATCH):
                if Z[Z_LATCH0 + k] < 0.5 and obs[O_LATCH_IN + k] > 0.5:
                    Z[Z_LATCH0 + k] = 1.0
                    Z[Z_EXT0 + k] = obs[O_LATCH_E + k]     # from now on a rigid tip on the head, at this extension
                    Z[Z_EDISS] += obs[O_LATCH_U + k]     # the pressed latch springs out: its energy is absorbed
                    changed = True
                elif Z[Z_LATCH0 + k] > 0.5 and obs[O_LATCH_OUT + k] > 0.5:
                    Z[Z_LATCH0 + k] = 0.0                # released: the bore presses it in again; the spring
                    Z[Z_EDISS] -= obs[O_LATCH_U + k]     # energy that takes is the energy absorbed on engagement
                    changed = True
                    _event(ev, n_ev, t, EV_RELEASE, k)
            if changed:
                nl = 0.0
                for k in range(N_LATCH):
                    nl += Z[Z_LATCH0 + k]
                if nl > N_LATCH - 0.5 and Z[Z_CAPT] < 0.5:
                    Z[Z_CAPT] = 1.0
                    Z[Z_TCAPT] = t
                    _event(ev, n_ev, t, EV_CAPTURE, -1)
                evaluate(s, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw,
                         cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k1, obs, pose,
                         pairs_at, first, app_at, AW)
                if obs[O_CSTAT] != 0.0:
                    return ST_DEPTH, t, row
            for p in range(npair + 1):
                a = c_act[p]
                if a != prev_act[p]:
                    if a == 1 and Z[Z_FIRST] < 0.5:
                        Z[Z_FIRST] = 1.0
                        _event(ev, n_ev, t, EV_FIRST, p)
                    _event(ev, n_ev, t, EV_BEGIN if a == 1 else EV_END, p)
                    prev_act[p] = a
            if cyclogram(t, Z, P, c_act, obs, ev, n_ev):
                record(row, t, s, Z, P, obs, c_act, c_dep, c_pnt, c_nrm, c_frc, c_vn, pose, out_t, out_ch, out_pos,
                       out_q, out_act, out_f, out_p, out_n, out_d, out_vn, LAT)
                if app_at != 0:
                    _record_appendage(row, s, AW, out_ch)
                return ST_DONE, t, row + 1
            if it == 0:
                record(row, t, s, Z, P, obs, c_act, c_dep, c_pnt, c_nrm, c_frc, c_vn, pose, out_t, out_ch, out_pos,
                       out_q, out_act, out_f, out_p, out_n, out_d, out_vn, LAT)
                if app_at != 0:
                    _record_appendage(row, s, AW, out_ch)
            # classical RK4 (k1 above), in m equal substeps while a contact pair that needs them is closed (at the
            # step start, or at a later stage: then the step is taken again from its start in substeps); a substep
            # starts with a stage-2-4 evaluation (matrix factor, near pairs, bristle return map: the step start's)
            m = substeps(P, P_SUB0, c_act, npair, 1)
            sub = 0
            while sub < m:
                hs = h / m
                if sub > 0:
                    evaluate(s, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel,
                             cw, cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k1, obs, pose,
                             pairs_at, later, app_at, AW)
                    if obs[O_CSTAT] != 0.0:
                        return ST_DEPTH, t, row
                for i in range(ns):
                    st[i] = s[i] + 0.5 * hs * k1[i]
                evaluate(st, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw,
                         cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k2, obs, pose,
                         pairs_at, later, app_at, AW)
                mm = substeps(P, P_SUB0, c_act, npair, m)
                for i in range(ns):
                    st[i] = s[i] + 0.5 * hs * k2[i]
                evaluate(st, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw,
                         cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k3, obs, pose,
                         pairs_at, later, app_at, AW)
                mm = substeps(P, P_SUB0, c_act, npair, mm)
                for i in range(ns):
                    st[i] = s[i] + hs * k3[i]
                evaluate(st, Z, P, LAT, TLS, TAX, TMA, TML, gprim, gpint, gpairs, gppar, gwork, cpos, crot, cvel, cw,
                         cst, c_act, c_dep, c_pnt, c_nrm, c_frc, c_diag, c_vn, W, JV, JW, k4, obs, pose,
                         pairs_at, later, app_at, AW)
                mm = substeps(P, P_SUB0, c_act, npair, mm)
                if obs[O_CSTAT] != 0.0:
                    return ST_DEPTH, t, row
                if sub == 0 and mm > m:              # closed within the step: again from its start (s, k1 as they were)
                    m = mm
                    continue
                for i in range(ns):
                    s[i] += hs / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
                for q0 in (S_QP, S_QA):
                    normalize(s, q0)
                post_step(s, Z, P, LAT, TLS, TAX)
                sub += 1
            t = (k0 + row * spo + it + 1) * h
    return ST_OK, t, n_out
