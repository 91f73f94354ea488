"""The snare's step kernel: three ANCF cables (solver.core.ancf_cable) from the fixed to the rotating ring, the ring
drive, the cable-rod contact (seed 004 eqs. 10-13; friction: the engine's bristle, solver.contact.friction) and the target as a rigid body
on the rig's suspension or free. Explicit symplectic Euler at the scenario's step (docs/snare.md: why)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.friction import advance_stretch, point_bristle, point_open
from solver.core.ancf_cable import (accelerations_into, cable_forces_t, element_bound, gauss_table, kinetic_energy,
                                    shape)
from solver.core.free_body import euler_accel, moment, normalize, point_velocity, quat_rate, rotation_into

NCAB = 3
# P: element count and length, EA, EI, axial damping time, rhoA, cable radius, ring radius, ring spacing h, sensor x,
# rod radius and length, Hertz factor 4/3 E* sqrt(R*), contact damping, mu, bristle stiffness k_t, drive rate, drive end angle,
# target mode (0 suspension, 1 free), translational mass, principal inertia (3), CoM offset, gravity, suspension
# stiffness (3) and damping (3), suspension anchor (3), centred radius, nominal rod-end x, rotating ends' angles (3),
# the suspension's tilt stiffness m g d (N m/rad: hung a distance d above the centre of mass)
(P_N, P_L, P_EA, P_EI, P_ETA, P_RHOA, P_RC, P_RR, P_H, P_XS, P_RROD, P_LROD, P_KH, P_C, P_MU, P_KT, P_OM, P_AMAX,
 P_MODE, P_M, P_I, P_COM, P_G, P_KS, P_CS, P_C0, P_CENT, P_XTIP, P_ROT, P_KR) = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 23, 24, 25, 28, 31, 34, 35, 36, 39)
P_STEP = 40            # the solver step (the friction bristles' stretch advances by it)
P_ALPHA = 41           # mass-proportional damping of the cables' motion (air, the rope's internal friction), 1/s
P_CT = 42              # the friction bristle's damping c_t, N s/m per detection point
P_NG = 43              # Gauss points per element of the stretch and bending forces (3 or 4)
N_P = 44
FLEX_PER_ELEMENT = 4   # points drawn per element of a cable in the run file's flexible parts
NZ = 5                 # Z: captured, t_capture, first contact seen per cable (3)
CHANNELS = ("ring_angle", "motor_torque", "Fx", "Fy", "Fz", "Mx", "My", "Mz", "radial_offset", "target_x",
            "target_y", "target_z", "tilt", "tension_fixed_1", "tension_fixed_2", "tension_fixed_3",
            "tension_rotating_1", "tension_rotating_2", "tension_rotating_3", "contact_force_1", "contact_force_2",
            "contact_force_3", "centred", "cables_in_contact", "kinetic_energy", "strain_energy", "potential_energy",
            "dissipated_energy", "drive_work", "total_energy", "target_offset_y", "target_offset_z")
NCH = len(CHANNELS)


NX = 15                # target (c, v, quaternion, omega), dissipated, drive work


def state_size(n, npe=4):
    """Length of s for n elements per cable and npe detection points per element: cable q and qd, the target's NX,
    then the friction bristles' stretch (3 per detection point, in the target's frame)."""
    return 2 * NCAB * 6 * (n + 1) + NX + 3 * NCAB * n * npe


@njit(cache=True, error_model="numpy")
def ring_drive(P, t):
    """Ring angle alpha(t) = omega t up to the end angle, and its rate."""
    a = P[P_OM] * t
    return (a, P[P_OM]) if a < P[P_AMAX] else (P[P_AMAX], 0.0)


@njit(cache=True, error_model="numpy")
def prescribe_ends(P, t, FIX, q, qd, afix):
    """Ball joints: the fixed ends at FIX (3, 3), the rotating ends on the ring at angle ROT_i + alpha(t)."""
    n = int(P[P_N])
    a, w = ring_drive(P, t)
    for i in range(NCAB):
        th = P[P_ROT + i] + a
        c, s = math.cos(th), math.sin(th)
        q[i, 0, 0:3] = FIX[i]
        qd[i, 0, 0:3] = 0.0
        q[i, n, 0], q[i, n, 1], q[i, n, 2] = -P[P_H], P[P_RR] * c, P[P_RR] * s
        qd[i, n, 0], qd[i, n, 1], qd[i, n, 2] = 0.0, -w * P[P_RR] * s, w * P[P_RR] * c
        afix[i, 0, :] = 0.0
        afix[i, 1, 0], afix[i, 1, 1], afix[i, 1, 2] = 0.0, -w * w * P[P_RR] * c, -w * w * P[P_RR] * s


@njit(cache=True, error_model="numpy")
def evaluate(s, t, P, M, MINV, FREE, FIXI, FIX, DS, T, W, Q, acc, afix, reac, aT, out, R, rhs, v4, ACT):
    """Accelerations of the cables (acc) and of the target (aT: v_dot, omega_dot in body axes), the end reactions
    (reac (3, 2, 3): force of the ring on the cable), per-cable contact summary out (3, 12): |F|, F on the cable
    (3), deepest point (3), its normal (3), depth, approach speed. Returns (strain, gravity + stored, dissipation
    power, drive power, active points, listed in ACT (rows: bristle index, cable, element, point, normal (3), contact
    point from the target's centre (3)) for `advance_bristles`); the bristles' stretch in s is return-mapped (call
    once per step). R (3, 3), rhs (n_free, 3), v4 (4, 3): scratch (no allocation per step)."""
    n = int(P[P_N])
    nq = NCAB * (n + 1) * 6
    q = s[0:nq].reshape((NCAB, n + 1, 6))
    qd = s[nq:2 * nq].reshape((NCAB, n + 1, 6))
    x = s[2 * nq:]
    rotation_into(x[6], x[7], x[8], x[9], R)
    com = P[P_COM]
    ax, ay, az = x[0] - R[0, 0] * com, x[1] - R[1, 0] * com, x[2] - R[2, 0] * com       # adapter face centre
    wb0, wb1, wb2 = x[10], x[11], x[12]
    w0 = R[0, 0] * wb0 + R[0, 1] * wb1 + R[0, 2] * wb2                                   # omega in EE axes
    w1 = R[1, 0] * wb0 + R[1, 1] * wb1 + R[1, 2] * wb2
    w2 = R[2, 0] * wb0 + R[2, 1] * wb1 + R[2, 2] * wb2
    grav, F, Tq, ff = v4[0], v4[1], v4[2], v4[3]
    grav[0], grav[1], grav[2] = -P[P_G], 0.0, 0.0     # the EE axis vertical, pointing up
    F[:] = 0.0
    Tq[:] = 0.0
    U, V, Pd, Pin = 0.0, 0.0, 0.0, 0.0
    rc, rrod, L = P[P_RC], P[P_RROD], P[P_LROD]
    nact = 0
    out[:, :] = 0.0
    npe = DS.shape[0]
    kt = P[P_KT]
    UB = s[2 * nq + NX:]
    Dfree = 0.0
    for i in range(NCAB):
        u, v, p = cable_forces_t(q[i], qd[i], T, W, P[P_L], P[P_EA], P[P_EI], P[P_ETA], P[P_RHOA], grav, Q[i])
        U += u
        V += v
        Pd += p
        if P[P_ALPHA] > 0.0:                     # -alpha M qd on the cable, its power alpha qd^T M qd dissipated
            n2 = M.shape[0]
            Qs, qds = Q[i].reshape((n2, 3)), qd[i].reshape((n2, 3))      # rows over the scalar index
            for a_ in range(n2):
                m0, m1, m2 = 0.0, 0.0, 0.0
                for b_ in range(max(0, a_ - 3), min(n2, a_ + 4)):     # M is banded: 4 x 4 element blocks
                    mab = M[a_, b_]
                    m0 += mab * qds[b_, 0]
                    m1 += mab * qds[b_, 1]
                    m2 += mab * qds[b_, 2]
                Qs[a_, 0] -= P[P_ALPHA] * m0
                Qs[a_, 1] -= P[P_ALPHA] * m1
                Qs[a_, 2] -= P[P_ALPHA] * m2
                Pd += P[P_ALPHA] * (m0 * qds[a_, 0] + m1 * qds[a_, 1] + m2 * qds[a_, 2])
        for e in range(n):
            jb = 3 * ((i * n + e) * npe)                       # the element's first bristle in UB
            mx, my, mz, rho = element_bound(q[i], e, P[P_L])   # cheap test first: the sphere clear of the rod's box
            dx, dy, dz = mx - ax, my - ay, mz - az
            zc = -(R[0, 0] * dx + R[1, 0] * dy + R[2, 0] * dz)
            ty = R[0, 1] * dx + R[1, 1] * dy + R[2, 1] * dz
            tz = R[0, 2] * dx + R[1, 2] * dy + R[2, 2] * dz
            if zc < -rc - rho or zc > L + rc + rho or ty * ty + tz * tz > (rrod + rc + rho) ** 2:
                for k in range(npe):
                    Dfree += point_open(UB, jb + 3 * k, kt)
                continue
            for k in range(npe):
                S0, S1, S2, S3 = DS[k, 0], DS[k, 1], DS[k, 2], DS[k, 3]
                px = S0 * q[i, e, 0] + S1 * q[i, e, 3] + S2 * q[i, e + 1, 0] + S3 * q[i, e + 1, 3]
                py = S0 * q[i, e, 1] + S1 * q[i, e, 4] + S2 * q[i, e + 1, 1] + S3 * q[i, e + 1, 4]
                pz = S0 * q[i, e, 2] + S1 * q[i, e, 5] + S2 * q[i, e + 1, 2] + S3 * q[i, e + 1, 5]
                dx, dy, dz = px - ax, py - ay, pz - az                # the point in the target's frame: R^T d
                tx = R[0, 0] * dx + R[1, 0] * dy + R[2, 0] * dz
                ty = R[0, 1] * dx + R[1, 1] * dy + R[2, 1] * dz
                tz = R[0, 2] * dx + R[1, 2] * dy + R[2, 2] * dz
                zc = -tx                                               # cylindrical frame on the rod axis
                r = math.sqrt(ty * ty + tz * tz)
                if zc < -rc or zc > L + rc or r > rrod + rc:
                    Dfree += point_open(UB, jb + 3 * k, kt)
                    continue
                # the cable's circular section against the rod's rectangular longitudinal section [0, L] x [0, rrod]
                ez = zc - min(max(zc, 0.0), L)
                er = r - min(r, rrod)
                if ez == 0.0 and er == 0.0:                            # centre inside: the nearest face
                    ds_, de_, d0_ = rrod - r, L - zc, zc
                    if ds_ <= de_ and ds_ <= d0_:
                        delta, nz, nr = rc + ds_, 0.0, 1.0
                    elif de_ <= d0_:
                        delta, nz, nr = rc + de_, 1.0, 0.0
                    else:
                        delta, nz, nr = rc + d0_, -1.0, 0.0
                    dist = rc - delta
                else:
                    dist = math.sqrt(ez * ez + er * er)
                    if dist >= rc:
                        Dfree += point_open(UB, jb + 3 * k, kt)
                        continue
                    delta, nz, nr = rc - dist, ez / dist, er / dist
                cy, cz = (ty / r, tz / r) if r > 1e-12 else (1.0, 0.0)
                ntx, nty, ntz = -nz, nr * cy, nr * cz                  # normal from the rod to the cable
                nx = R[0, 0] * ntx + R[0, 1] * nty + R[0, 2] * ntz
                ny = R[1, 0] * ntx + R[1, 1] * nty + R[1, 2] * ntz
                nzw = R[2, 0] * ntx + R[2, 1] * nty + R[2, 2] * ntz
                cx_, cy_, cz_ = px - nx * dist, py - ny * dist, pz - nzw * dist   # contact point on the rod
                rx, ry, rz = cx_ - x[0], cy_ - x[1], cz_ - x[2]
                vrx, vry, vrz = point_velocity(x[3], x[4], x[5], w0, w1, w2, rx, ry, rz)
                vx = S0 * qd[i, e, 0] + S1 * qd[i, e, 3] + S2 * qd[i, e + 1, 0] + S3 * qd[i, e + 1, 3] - vrx
                vy = S0 * qd[i, e, 1] + S1 * qd[i, e, 4] + S2 * qd[i, e + 1, 1] + S3 * qd[i, e + 1, 4] - vry
                vz = S0 * qd[i, e, 2] + S1 * qd[i, e, 5] + S2 * qd[i, e + 1, 2] + S3 * qd[i, e + 1, 5] - vrz
                vn = vx * nx + vy * ny + vz * nzw
                fe = P[P_KH] * delta * math.sqrt(delta)
                fn = max(fe - P[P_C] * vn, 0.0)                         # Hertz + damping, delta_dot = -vn
                # friction: the engine's sticking bristle (solver/friction.py), its stretch per detection point
                ft, e_t, freed, pf = point_bristle(UB, jb + 3 * k, R, (nx, ny, nzw),
                                                   (vx - vn * nx, vy - vn * ny, vz - vn * nzw), fn, P[P_MU], kt,
                                                   P[P_CT])
                a_ = ACT[nact]                           # the stretch advances after the step (advance_bristles)
                a_[0], a_[1], a_[2], a_[3] = jb + 3 * k, i, e, k
                a_[4], a_[5], a_[6], a_[7], a_[8], a_[9] = nx, ny, nzw, cx_ - x[0], cy_ - x[1], cz_ - x[2]
                fx, fy, fz = fn * nx + ft[0], fn * ny + ft[1], fn * nzw + ft[2]   # on the cable
                V += 0.4 * fe * delta + e_t
                Pd += (fn - fe) * (-vn) - pf             # the friction's work: stored (advance_bristles) + lost
                Dfree += freed
                ff[0], ff[1], ff[2] = fx, fy, fz
                for d in range(3):
                    Q[i, e, d] += S0 * ff[d]
                    Q[i, e, 3 + d] += S1 * ff[d]
                    Q[i, e + 1, d] += S2 * ff[d]
                    Q[i, e + 1, 3 + d] += S3 * ff[d]
                F[0] -= fx
                F[1] -= fy
                F[2] -= fz
                t0, t1, t2 = moment(rx, ry, rz, fx, fy, fz)
                Tq[0] -= t0
                Tq[1] -= t1
                Tq[2] -= t2
                nact += 1
                out[i, 1] += fx                          # the run file's pair force: on part_a, the cable
                out[i, 2] += fy
                out[i, 3] += fz
                if delta > out[i, 10]:
                    out[i, 4], out[i, 5], out[i, 6] = cx_, cy_, cz_
                    out[i, 7], out[i, 8], out[i, 9], out[i, 10], out[i, 11] = nx, ny, nzw, delta, -vn
        accelerations_into(Q[i], M, MINV, FREE, FIXI, afix[i], acc[i], reac[i], rhs)
        Pin += reac[i, 1, 0] * qd[i, n, 0] + reac[i, 1, 1] * qd[i, n, 1] + reac[i, 1, 2] * qd[i, n, 2]
        out[i, 0] = math.sqrt(out[i, 1] ** 2 + out[i, 2] ** 2 + out[i, 3] ** 2)
    # the target: contact, suspension (rig) and Euler's equations in body axes
    m = P[P_M]
    for d in range(3):
        if P[P_MODE] < 0.5:
            e_ = x[d] - P[P_C0 + d]
            fs = -P[P_KS + d] * e_ - P[P_CS + d] * x[3 + d]
            V += 0.5 * P[P_KS + d] * e_ * e_
            Pd += P[P_CS + d] * x[3 + d] * x[3 + d]
            F[d] += fs
        aT[d] = F[d] / m
    if P[P_MODE] < 0.5:                          # tilt stiffness: V = k (1 - x_T . e_x), torque k x_T x e_x
        V += P[P_KR] * (1.0 - R[0, 0])
        Tq[1] += P[P_KR] * R[2, 0]
        Tq[2] -= P[P_KR] * R[1, 0]
    tb0 = R[0, 0] * Tq[0] + R[1, 0] * Tq[1] + R[2, 0] * Tq[2]                  # the torque in body axes
    tb1 = R[0, 1] * Tq[0] + R[1, 1] * Tq[1] + R[2, 1] * Tq[2]
    tb2 = R[0, 2] * Tq[0] + R[1, 2] * Tq[1] + R[2, 2] * Tq[2]
    I0, I1, I2 = P[P_I], P[P_I + 1], P[P_I + 2]
    dw = euler_accel((I0, 0.0, 0.0, 0.0, I1, 0.0, 0.0, 0.0, I2), (1.0 / I0, 0.0, 0.0, 0.0, 1.0 / I1, 0.0, 0.0, 0.0,
                     1.0 / I2), (wb0, wb1, wb2), (tb0, tb1, tb2))[0]         # Euler's equations (core free_body)
    aT[3], aT[4], aT[5] = dw[0], dw[1], dw[2]
    x[13] += Dfree                               # energy the bristles' return maps and releases free
    return U, V, Pd, Pin, nact


@njit(cache=True, error_model="numpy")
def _advance(s, P, acc, aT, h):
    """Symplectic Euler: velocities from the accelerations, then positions (cables' free coordinates, the target)."""
    n = int(P[P_N])
    nq = NCAB * (n + 1) * 6
    j = 0
    for i in range(NCAB):
        for k in range(n + 1):
            for c in range(6):
                s[nq + j] += h * acc[i, k, c]
                s[j] += h * s[nq + j]
                j += 1
    x = s[2 * nq:]
    for d in range(3):
        x[3 + d] += h * aT[d]
        x[d] += h * x[3 + d]
        x[10 + d] += h * aT[3 + d]
    dq = quat_rate(x[6], x[7], x[8], x[9], x[10], x[11], x[12])
    for k in range(4):
        x[6 + k] += h * dq[k]
    normalize(x, 6)


@njit(cache=True, error_model="numpy")
def advance_bristles(s, P, DS, ACT, nact, h):
    """The active points' bristle stretch advanced by h times their new tangential sliding velocity (after
    `_advance`: the stretch moves with the positions of the symplectic step); what the friction's work did not store
    is dissipated (x[13])."""
    n = int(P[P_N])
    nq = NCAB * (n + 1) * 6
    qd = s[nq:2 * nq].reshape((NCAB, n + 1, 6))
    x = s[2 * nq:]
    UB = s[2 * nq + NX:]
    R = np.empty((3, 3))
    rotation_into(x[6], x[7], x[8], x[9], R)
    wb0, wb1, wb2 = x[10], x[11], x[12]
    w0 = R[0, 0] * wb0 + R[0, 1] * wb1 + R[0, 2] * wb2
    w1 = R[1, 0] * wb0 + R[1, 1] * wb1 + R[1, 2] * wb2
    w2 = R[2, 0] * wb0 + R[2, 1] * wb1 + R[2, 2] * wb2
    for r in range(nact):
        a = ACT[r]
        i, e, k = int(a[1]), int(a[2]), int(a[3])
        S0, S1, S2, S3 = DS[k, 0], DS[k, 1], DS[k, 2], DS[k, 3]
        rx, ry, rz = a[7], a[8], a[9]
        c, d = qd[i, e], qd[i, e + 1]
        vt = point_velocity(x[3], x[4], x[5], w0, w1, w2, rx, ry, rz)
        vx = S0 * c[0] + S1 * c[3] + S2 * d[0] + S3 * d[3] - vt[0]
        vy = S0 * c[1] + S1 * c[4] + S2 * d[1] + S3 * d[4] - vt[1]
        vz = S0 * c[2] + S1 * c[5] + S2 * d[2] + S3 * d[5] - vt[2]
        x[13] -= advance_stretch(UB, int(a[0]), R, (a[4], a[5], a[6]), (vx, vy, vz), P[P_KT], h)


@njit(cache=True, error_model="numpy")
def kinetic(s, P, M):
    """Kinetic energy of the cables and the target."""
    n = int(P[P_N])
    nq = NCAB * (n + 1) * 6
    qd = s[nq:2 * nq].reshape((NCAB, n + 1, 6))
    x = s[2 * nq:]
    T = 0.0
    for i in range(NCAB):
        T += kinetic_energy(M, qd[i])
    T += 0.5 * P[P_M] * (x[3] ** 2 + x[4] ** 2 + x[5] ** 2)
    T += 0.5 * (P[P_I] * x[10] ** 2 + P[P_I + 1] * x[11] ** 2 + P[P_I + 2] * x[12] ** 2)
    return T


@njit(cache=True, error_model="numpy")
def run_block(s, Z, t, h, n_out, spo, P, M, MINV, FREE, FIXI, FIX, DS, ev, n_ev, prev, o_t, o_ch, o_pos, o_q, o_act,
              o_f, o_p, o_n, o_d, o_vn, o_flex):
    """n_out frames, each recorded (o_flex: the cables' points), then spo steps. (status 0 / 1 diverged, t, rows)."""
    n = int(P[P_N])
    nq = NCAB * (n + 1) * 6
    T, W = gauss_table(P[P_L], int(P[P_NG]))
    Q, acc = np.zeros((NCAB, n + 1, 6)), np.zeros((NCAB, n + 1, 6))
    afix, reac = np.zeros((NCAB, 2, 3)), np.zeros((NCAB, 2, 3))
    aT, out, R = np.zeros(6), np.zeros((NCAB, 12)), np.empty((3, 3))
    Rw, rhs, v4 = np.empty((3, 3)), np.empty((FREE.shape[0], 3)), np.empty((4, 3))
    ACT = np.empty((NCAB * n * DS.shape[0], 10))
    q = s[0:nq].reshape((NCAB, n + 1, 6))
    qd = s[nq:2 * nq].reshape((NCAB, n + 1, 6))
    x = s[2 * nq:]
    k0 = round(t / h)
    FS, d1, d2 = np.empty((FLEX_PER_ELEMENT, 4)), np.empty(4), np.empty(4)
    for k in range(FLEX_PER_ELEMENT):
        shape(k / FLEX_PER_ELEMENT, P[P_L], FS[k], d1, d2)
    for row in range(n_out):
        prescribe_ends(P, t, FIX, q, qd, afix)
        U, V, Pd, Pin, nact = evaluate(s, t, P, M, MINV, FREE, FIXI, FIX, DS, T, W, Q, acc, afix, reac, aT, out, Rw,
                                       rhs, v4, ACT)
        if not math.isfinite(U + x[0] + x[6]):
            return 1, t, row
        Ke = kinetic(s, P, M)
        a, w = ring_drive(P, t)
        rotation_into(x[6], x[7], x[8], x[9], R)
        tip = np.empty(3)
        for d in range(3):
            tip[d] = x[d] - R[d, 0] * (P[P_COM] + P[P_LROD])
        rad = math.sqrt(tip[1] ** 2 + tip[2] ** 2)
        ncab = 0
        for i in range(NCAB):
            on = out[i, 10] > 0.0
            ncab += on
            if on and Z[2 + i] == 0.0 and n_ev[0] < ev.shape[0]:
                ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2], Z[2 + i] = t, 0.0, i, 1.0
                n_ev[0] += 1
            prev[i] = on
        centred = rad < P[P_CENT]
        if Z[0] == 0.0 and centred and ncab > 0:
            Z[0], Z[1] = 1.0, t
            if n_ev[0] < ev.shape[0]:
                ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2] = t, 1.0, -1.0
                n_ev[0] += 1
        # the six-component sensor: the cables' loads on the EE about the sensor point (0 0 xs); the motor torque
        Fs, Ms, tau = np.zeros(3), np.zeros(3), 0.0
        for i in range(NCAB):
            for k in range(2):
                j = 0 if k == 0 else n
                f0, f1, f2 = -reac[i, k, 0], -reac[i, k, 1], -reac[i, k, 2]
                r0, r1, r2 = q[i, j, 0] - P[P_XS], q[i, j, 1], q[i, j, 2]
                Fs[0] += f0
                Fs[1] += f1
                Fs[2] += f2
                Ms[0] += r1 * f2 - r2 * f1
                Ms[1] += r2 * f0 - r0 * f2
                Ms[2] += r0 * f1 - r1 * f0
            tau += q[i, n, 1] * reac[i, 1, 2] - q[i, n, 2] * reac[i, 1, 1]
        o_t[row] = t
        c = o_ch[row]
        c[0], c[1] = math.degrees(a), tau
        c[2], c[3], c[4], c[5], c[6], c[7] = Fs[0], Fs[1], Fs[2], Ms[0], Ms[1], Ms[2]
        c[8], c[9], c[10], c[11] = rad, tip[0] - P[P_XTIP], tip[1], tip[2]
        c[12] = math.degrees(math.acos(min(1.0, max(-1.0, R[0, 0]))))
        for i in range(NCAB):
            c[13 + i] = math.sqrt(reac[i, 0, 0] ** 2 + reac[i, 0, 1] ** 2 + reac[i, 0, 2] ** 2)
            c[16 + i] = math.sqrt(reac[i, 1, 0] ** 2 + reac[i, 1, 1] ** 2 + reac[i, 1, 2] ** 2)
            c[19 + i] = out[i, 0]
        c[22], c[23] = 1.0 if centred else 0.0, ncab
        c[24], c[25], c[26], c[27], c[28] = Ke, U, V, x[13], x[14]
        c[29] = Ke + U + V + x[13] - x[14]
        c[30], c[31] = x[1] - R[1, 0] * P[P_COM], x[2] - R[2, 0] * P[P_COM]      # the adapter face's centre
        o_pos[row, 0, :] = 0.0
        o_q[row, 0, :] = (1.0, 0.0, 0.0, 0.0)
        o_pos[row, 1, :] = (-P[P_H], 0.0, 0.0)
        o_q[row, 1, :] = (math.cos(0.5 * a), math.sin(0.5 * a), 0.0, 0.0)
        for d in range(3):
            o_pos[row, 2, d] = x[d] - R[d, 0] * P[P_COM]
        o_q[row, 2, :] = x[6:10]
        for i in range(NCAB):
            o_act[row, i] = out[i, 10] > 0.0
            o_f[row, i, :] = out[i, 1:4]
            o_p[row, i, :] = out[i, 4:7]
            o_n[row, i, :] = out[i, 7:10]
            o_d[row, i], o_vn[row, i] = out[i, 10], out[i, 11]
            for e in range(n + 1):
                for k in range(FLEX_PER_ELEMENT if e < n else 1):
                    j = e * FLEX_PER_ELEMENT + k
                    if e == n:
                        o_flex[row, i, j, :] = q[i, n, 0:3]
                        continue
                    for d in range(3):
                        o_flex[row, i, j, d] = (FS[k, 0] * q[i, e, d] + FS[k, 1] * q[i, e, 3 + d]
                                                + FS[k, 2] * q[i, e + 1, d] + FS[k, 3] * q[i, e + 1, 3 + d])
        for it in range(spo):
            if it > 0:
                prescribe_ends(P, t, FIX, q, qd, afix)
                U, V, Pd, Pin, nact = evaluate(s, t, P, M, MINV, FREE, FIXI, FIX, DS, T, W, Q, acc, afix, reac, aT,
                                               out, Rw, rhs, v4, ACT)
                for i in range(NCAB):                   # first contact per cable at the solver's rate
                    if out[i, 10] > 0.0 and Z[2 + i] == 0.0 and n_ev[0] < ev.shape[0]:
                        ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2], Z[2 + i] = t, 0.0, i, 1.0
                        n_ev[0] += 1
            x[13] += h * Pd
            x[14] += h * Pin
            _advance(s, P, acc, aT, h)
            advance_bristles(s, P, DS, ACT, nact, h)
            k0 += 1
            t = k0 * h
    return 0, t, n_out
