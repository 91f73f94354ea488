"""Berthing kernels (numba): a 7-joint arm with flexible, servoed, braked drives carrying the payload's probe into the
station's receptacle; the tree by the core's CRBA, the contact by the library's sphere-on-surface parts."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.kernels import ANNULUS, CIRCLE, NO, ROW, sphere_annulus, sphere_circle, sphere_cone, transform_row
from solver.core import bodies as B
from solver.core.control import dls_rates, rotate_to_world
from solver.core.elements import end_stop, hysteresis, rate_servo, slider
from solver.core.energy import kinetic, total
from solver.core.free_body import quaternion
from solver.core.integrator import rk4_update, stage
from solver.friction import bristle_force, return_map
from solver.mechanisms.berthing.model import (D_BK, D_BL, D_C, D_J, D_K, D_KI, D_KP, D_KS, D_RANGE, D_RL, D_TL, DIS,
                                              IN, MODE_JOINT, MODE_OPERATOR, MODE_PAYLOAD, NA, NS, NT, P_ACC, P_BORE,
                                              P_C, P_CAPT, P_CT, P_DRIVES, P_FREE, P_K, P_KT, P_LAM, P_LF, P_LP, P_MU,
                                              P_PF, P_R, P_RA, P_RO, P_SUB, P_WMIN, PAIRS, Q, QD, S_FT, TM, WM, WRK,
                                              ZB, ZBD, ZCAP, ZSH, ZSLIP, ZTC, ZTOUCH)

NPAIR = len(PAIRS)
NCH = 42   # channels (simulate.CHANNELS)


@njit(cache=True, error_model="numpy")
def station_rows(ROWS, RINT, KIN, nb, work):
    """The receptacle's rows in world: as packed (fixed base) or carried by the base body (free base)."""
    pos, rot = np.zeros((1, 3)), np.zeros((1, 3, 3))
    if nb > 0:
        pos[0, :] = KIN[nb - 1, 9:12]
        for r in range(3):
            for c in range(3):
                rot[0, r, c] = KIN[nb - 1, 3 * r + c]
    else:
        rot[0, 0, 0], rot[0, 1, 1], rot[0, 2, 2] = 1.0, 1.0, 1.0
    for j in range(ROWS.shape[0]):
        transform_row(ROWS, RINT, pos, rot, np.zeros(2), work, j)


@njit(cache=True, error_model="numpy")
def bristle_energy(s, P):
    """The friction bristles' stored energy, 0.5 k_t |u|^2 summed over the pairs."""
    e = 0.0
    for j in range(S_FT, S_FT + 3 * NPAIR):
        e += s[j] * s[j]
    return 0.5 * P[P_KT] * e


@njit(cache=True, error_model="numpy")
def evaluate(s, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, ds, c, WR, full):
    """ds/dt, the contact table c (pair: depth, point, normal, force, vn) and (kinetic, stored) energy. On a step's
    first stage (full) each pair's friction bristle is return-mapped (solver/friction.py), an open pair's relaxed;
    the friction's power -F_t.v_t goes to s[DIS] whole (`bristle_energy` moves the stored part in the channels)."""
    n = JOINT.shape[0]
    q, qd = s[Q:Q + n], s[QD:QD + n]
    B.tree_pose(JOINT, q, KIN)
    for i in range(n):
        tau[i] = 0.0
    stored, power, work = 0.0, 0.0, 0.0
    ke = 0.0
    for j in range(NA):
        a = nb + j
        th, wm, integ = s[TM + j], s[WM + j], s[IN + j]
        fs, es = end_stop(q[a], DRV[j, D_RANGE], DRV[j, D_KS])
        tau[a] += fs
        stored += es
        tg = 0.0
        if P[P_DRIVES] < 1.5:                                              # the gear engaged (not limp)
            tg = DRV[j, D_K] * (th - q[a]) + DRV[j, D_C] * (wm - qd[a])      # the gear's torque on the link
            stored += 0.5 * DRV[j, D_K] * (th - q[a]) ** 2
            power += DRV[j, D_C] * (wm - qd[a]) ** 2
        tau[a] += tg
        ts = 0.0
        de = 0.0
        if not brakes and P[P_DRIVES] < 0.5:
            ts = rate_servo(DRV[j, D_KP], DRV[j, D_KI], cmd[j], wm, integ, DRV[j, D_TL])
            de = cmd[j] - wm
            if (ts >= DRV[j, D_TL] and de > 0.0) or (ts <= -DRV[j, D_TL] and de < 0.0):
                de = 0.0                                                   # anti-windup at the torque limit
        tb = 0.0
        if brakes:
            tb, eb = hysteresis(DRV[j, D_BK], th, Z[ZB + j], DRV[j, D_BL])
            stored += eb
        work += ts * wm
        ke += 0.5 * DRV[j, D_J] * wm * wm
        ds[TM + j] = wm
        ds[WM + j] = (ts - tg - tb) / DRV[j, D_J]
        ds[IN + j] = de
    station_rows(ROWS, RINT, KIN, nb, WR)
    last = n - 1
    x, v, vb, f = np.empty(3), np.empty(3), np.zeros(3), np.empty(3)
    Rs = np.eye(3)                                       # the station frame (the bristles' frame) in world
    if nb > 0:
        for r in range(3):
            for cc in range(3):
                Rs[r, cc] = KIN[nb - 1, 3 * r + cc]
    for p in range(NPAIR):
        sp, rw = PAIRS[p]
        for r in range(3):
            x[r] = KIN[last, 9 + r] + KIN[last, 3 * r] * SPH[sp, 0] + KIN[last, 3 * r + 1] * SPH[sp, 1] + \
                KIN[last, 3 * r + 2] * SPH[sp, 2]
        if RINT[rw, 0] == ANNULUS:
            d, px, py, pz, nx, ny, nz = sphere_annulus(x[0], x[1], x[2], SPH[sp, 3], WR, rw)
        elif RINT[rw, 0] == CIRCLE:
            d, px, py, pz, nx, ny, nz = sphere_circle(x[0], x[1], x[2], SPH[sp, 3], WR, rw)
        else:
            d, px, py, pz, nx, ny, nz = sphere_cone(x[0], x[1], x[2], SPH[sp, 3], WR, rw)
        for k in range(11):
            c[p, k] = 0.0
        js = S_FT + 3 * p
        if d == NO:
            ds[js], ds[js + 1], ds[js + 2] = 0.0, 0.0, 0.0
            if full:                                     # an open pair's bristle relaxes: its stored energy is lost
                s[js], s[js + 1], s[js + 2] = 0.0, 0.0, 0.0
            continue
        B.point_velocity(JOINT, KIN, qd, last, x, v)
        if nb > 0:
            B.point_velocity(JOINT, KIN, qd, nb - 1, x, vb)
            v[0], v[1], v[2] = v[0] - vb[0], v[1] - vb[1], v[2] - vb[2]
        vn = v[0] * nx + v[1] * ny + v[2] * nz
        fn = max(P[P_K] * d - P[P_C] * vn, 0.0)
        vt = (v[0] - vn * nx, v[1] - vn * ny, v[2] - vn * nz)
        nv = (nx, ny, nz)
        u = (Rs[0, 0] * s[js] + Rs[0, 1] * s[js + 1] + Rs[0, 2] * s[js + 2],
             Rs[1, 0] * s[js] + Rs[1, 1] * s[js + 1] + Rs[1, 2] * s[js + 2],
             Rs[2, 0] * s[js] + Rs[2, 1] * s[js + 1] + Rs[2, 2] * s[js + 2])
        if full:                                         # a step's start: the stretch return-mapped
            u, _ = return_map(u, nv, P[P_MU], fn, P[P_KT])
            for r in range(3):
                s[js + r] = Rs[0, r] * u[0] + Rs[1, r] * u[1] + Rs[2, r] * u[2]
        ft, _, _ = bristle_force(u, nv, vt, fn, P[P_MU], P[P_KT], P[P_CT])
        for r in range(3):
            ds[js + r] = Rs[0, r] * vt[0] + Rs[1, r] * vt[1] + Rs[2, r] * vt[2]
        f[0], f[1], f[2] = fn * nx + ft[0], fn * ny + ft[1], fn * nz + ft[2]
        c[p, 0], c[p, 1], c[p, 2], c[p, 3], c[p, 4], c[p, 5], c[p, 6] = d, px, py, pz, nx, ny, nz
        c[p, 7], c[p, 8], c[p, 9], c[p, 10] = f[0], f[1], f[2], vn
        B.add_point_force(JOINT, KIN, last, x, f, tau)
        if nb > 0:
            f[0], f[1], f[2] = -f[0], -f[1], -f[2]
            B.add_point_force(JOINT, KIN, nb - 1, x, f, tau)
        stored += 0.5 * P[P_K] * d * d
        power += (P[P_K] * d - fn) * vn - (ft[0] * vt[0] + ft[1] * vt[1] + ft[2] * vt[2])
    if P[P_LF] != 0.0 or P[P_LF + 1] != 0.0 or P[P_LF + 2] != 0.0:   # the applied load on the payload, its work
        for r in range(3):
            x[r] = KIN[last, 9 + r] + KIN[last, 3 * r] * P[P_LP] + KIN[last, 3 * r + 1] * P[P_LP + 1] + \
                KIN[last, 3 * r + 2] * P[P_LP + 2]
            f[r] = P[P_LF + r]
        B.point_velocity(JOINT, KIN, qd, last, x, v)
        B.add_point_force(JOINT, KIN, last, x, f, tau)
        work += f[0] * v[0] + f[1] * v[1] + f[2] * v[2]
    B.tree_mass_matrix(JOINT, KIN, M)
    ke += kinetic(M, qd, n)
    B.tree_bias(JOINT, KIN, qd, W, ds[QD:QD + n])
    for i in range(n):
        tau[i] -= ds[QD + i]
    B.cholesky_factor(M, n)
    B.cholesky_solve(M, tau, n, ds[QD:QD + n])
    for i in range(n):
        ds[Q + i] = qd[i]
    ds[DIS], ds[WRK] = power, work
    return ke, stored


@njit(cache=True, error_model="numpy")
def command(k, s, Z, h, step, PROF, CMD, P, JOINT, DRV, SPH, nb, KIN, Jac, out):
    """Joint-rate commands at step k from the active profile row (or the operator's CMD): payload-frame rates, shaped
    by the command accelerations (Z, advanced when `step`), through the damped-least-squares Jacobian at the probe
    head. Returns (brakes, manipulability, mode, the values asked for)."""
    n = JOINT.shape[0]
    i = 0
    while i + 1 < PROF.shape[0] and PROF[i + 1, 0] <= k:
        i += 1
    mode, brakes = int(PROF[i, 1]), PROF[i, 9] > 0.5
    vals = PROF[i, 2:9]
    if i > 0 and k < PROF[i, 0] + PROF[i, 10] and PROF[i - 1, 1] == PROF[i, 1]:     # ramp from the previous values
        a = (k - PROF[i, 0]) / PROF[i, 10]
        vals = (1.0 - a) * PROF[i - 1, 2:9] + a * PROF[i, 2:9]
    elif i == 0 and k < PROF[0, 10]:
        vals = (k / PROF[0, 10]) * PROF[0, 2:9]
    if mode == MODE_OPERATOR:
        mode, brakes, vals = int(CMD[0]), CMD[8] > 0.5, CMD[1:8]
    B.tree_pose(JOINT, s[Q:Q + n], KIN)
    last = n - 1
    w = 0.0
    for j in range(NA):
        out[j] = 0.0
    sh = np.zeros(6)
    if mode == MODE_PAYLOAD and not brakes:
        for r in range(6):
            lim = P[P_ACC + (r // 3)] * h
            sh[r] = min(max(vals[r], Z[ZSH + r] - lim), Z[ZSH + r] + lim)
    if step:
        for r in range(6):
            Z[ZSH + r] = sh[r]
    if brakes:
        return brakes, w, mode, vals
    if mode == MODE_JOINT:
        for j in range(NA):
            out[j] = vals[j]
    else:                                   # the probe frame's rates -> world: R_last R_pf v
        Rpf = P[P_PF:P_PF + 9]
        Rw, vw, head = np.empty(9), np.empty(6), np.empty(3)
        for r in range(3):
            head[r] = KIN[last, 9 + r]
            for cc in range(3):
                Rw[3 * r + cc] = KIN[last, 3 * r] * Rpf[cc] + KIN[last, 3 * r + 1] * Rpf[3 + cc] + \
                    KIN[last, 3 * r + 2] * Rpf[6 + cc]
                head[r] += KIN[last, 3 * r + cc] * SPH[0, cc]
        rotate_to_world(Rw, sh[0:3], vw[0:3])
        rotate_to_world(Rw, sh[3:6], vw[3:6])
        B.point_jacobian(JOINT, KIN, last, head, Jac)
        w = dls_rates(np.ascontiguousarray(Jac[:, nb:n]), vw, P[P_LAM], P[P_WMIN], out)
    for j in range(NA):
        lim = DRV[j, D_RL]
        out[j] = min(max(out[j], -lim), lim)
    return brakes, w, mode, vals


@njit(cache=True, error_model="numpy")
def probe_state(KIN, last, SPH, P, out):
    """Probe head's insertion past the bore entry, lateral offset from the receptacle axis (m) and tilt (deg)."""
    ax, ay, az = P[P_RA], P[P_RA + 1], P[P_RA + 2]
    h = np.empty(3)
    for r in range(3):
        h[r] = KIN[last, 9 + r] + KIN[last, 3 * r] * SPH[0, 0] + KIN[last, 3 * r + 1] * SPH[0, 1] + \
            KIN[last, 3 * r + 2] * SPH[0, 2] - P[P_RO + r]
    x = h[0] * ax + h[1] * ay + h[2] * az
    lx, ly, lz = h[0] - x * ax, h[1] - x * ay, h[2] - x * az
    Rpf = P[P_PF:P_PF + 9]
    dx = KIN[last, 0] * Rpf[0] + KIN[last, 1] * Rpf[3] + KIN[last, 2] * Rpf[6]
    dy = KIN[last, 3] * Rpf[0] + KIN[last, 4] * Rpf[3] + KIN[last, 5] * Rpf[6]
    dz = KIN[last, 6] * Rpf[0] + KIN[last, 7] * Rpf[3] + KIN[last, 8] * Rpf[6]
    cth = min(1.0, max(-1.0, dx * ax + dy * ay + dz * az))
    out[0], out[1], out[2] = x - P[P_BORE], math.sqrt(lx * lx + ly * ly + lz * lz), math.degrees(math.acos(cth))


@njit(cache=True, error_model="numpy")
def run_block(s, Z, t, h, n_out, spo, P, JOINT, DRV, SPH, ROWS, RINT, PROF, CMD, nb, ev, n_ev, prev, o_t, o_ch,
              o_pos, o_q, o_act, o_f, o_p, o_n, o_d, o_vn):
    """n_out frames, each recorded, then spo RK4 steps (substeps while the probe touches). (status, t, rows)."""
    n = JOINT.shape[0]
    KIN, M, W = np.zeros((n, B.NK)), np.zeros((n, n)), np.zeros((n, 15))
    tau, c, st = np.zeros(n), np.zeros((NPAIR, 11)), np.zeros(NS)
    k1, k2, k3, k4 = np.zeros(NS), np.zeros(NS), np.zeros(NS), np.zeros(NS)
    WR, Jac, cmd, pr, mom = np.zeros((ROWS.shape[0], ROW)), np.zeros((6, n)), np.zeros(NA), np.zeros(3), np.zeros(6)
    k0 = round(t / h)
    for row in range(n_out):
        brakes, wman, mode, vals = command(k0, s, Z, h, False, PROF, CMD, P, JOINT, DRV, SPH, nb, KIN, Jac, cmd)
        ke, stored = evaluate(s, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, k1, c, WR,
                              False)
        if not np.isfinite(ke):
            return 1, t, row
        on = False
        ftot = np.zeros(3)
        for p in range(NPAIR):
            if c[p, 0] > 0.0:
                on = True
                ftot[0] += c[p, 7]
                ftot[1] += c[p, 8]
                ftot[2] += c[p, 9]
                if Z[ZTOUCH + p] == 0.0 and n_ev[0] < ev.shape[0]:
                    ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2], Z[ZTOUCH + p] = t, 0.0, p, 1.0
                    n_ev[0] += 1
            prev[p] = c[p, 0] > 0.0
        probe_state(KIN, n - 1, SPH, P, pr)
        if Z[ZCAP] == 0.0 and pr[0] > P[P_CAPT]:
            Z[ZCAP], Z[ZTC] = 1.0, t
            if n_ev[0] < ev.shape[0]:
                ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2] = t, 1.0, -1.0
                n_ev[0] += 1
        o_t[row] = t
        ch = o_ch[row]
        for j in range(NA):
            a = nb + j
            ch[j] = math.degrees(s[Q + a])
            ch[NA + j] = DRV[j, D_K] * (s[TM + j] - s[Q + a]) + DRV[j, D_C] * (s[WM + j] - s[QD + a])
        fa = ftot[0] * P[P_RA] + ftot[1] * P[P_RA + 1] + ftot[2] * P[P_RA + 2]
        fmag = math.sqrt(ftot[0] ** 2 + ftot[1] ** 2 + ftot[2] ** 2)
        ch[14], ch[15], ch[16] = fmag, fa, math.sqrt(max(fmag * fmag - fa * fa, 0.0))
        ch[17], ch[18], ch[19] = pr[0], pr[1], pr[2]
        ch[20] = Z[ZSLIP]
        ch[21], ch[22], ch[23] = float(mode), 1.0 if brakes else 0.0, wman
        for j in range(NA):
            ch[24 + j] = vals[j]
        eb = bristle_energy(s, P)
        ch[31], ch[32], ch[33] = ke, stored + eb, s[DIS] + Z[ZBD] - eb
        ch[34], ch[35] = s[WRK], total(ke, stored, s[DIS] + Z[ZBD], s[WRK])
        B.tree_momentum(JOINT, KIN, s[QD:QD + n], mom)
        for r in range(6):
            ch[36 + r] = mom[r]
        o_pos[row, 0, :] = 0.0
        o_q[row, 0, :] = (1.0, 0.0, 0.0, 0.0)
        if nb > 0:
            o_pos[row, 0, :] = KIN[nb - 1, 9:12]
            o_q[row, 0, :] = quaternion(KIN[nb - 1, 0:9])
        for j in range(NA):
            o_pos[row, j + 1, :] = KIN[nb + j, 9:12]
            o_q[row, j + 1, :] = quaternion(KIN[nb + j, 0:9])
        for p in range(NPAIR):
            o_act[row, p], o_d[row, p], o_vn[row, p] = c[p, 0] > 0.0, max(c[p, 0], 0.0), c[p, 10]
            o_p[row, p, :], o_n[row, p, :], o_f[row, p, :] = c[p, 1:4], c[p, 4:7], c[p, 7:10]
        for it in range(spo):
            brakes, wman, mode, vals = command(k0, s, Z, h, True, PROF, CMD, P, JOINT, DRV, SPH, nb, KIN, Jac, cmd)
            m = 1
            for p in range(NPAIR):
                if prev[p]:
                    m = int(P[P_SUB])
            hh = h / m
            for _ in range(m):
                evaluate(s, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, k1, c, WR, True)
                stage(s, k1, 0.5 * hh, st)
                evaluate(st, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, k2, c, WR, False)
                stage(s, k2, 0.5 * hh, st)
                evaluate(st, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, k3, c, WR, False)
                stage(s, k3, hh, st)
                evaluate(st, Z, cmd, brakes, P, JOINT, DRV, SPH, ROWS, RINT, nb, KIN, M, W, tau, k4, c, WR, False)
                rk4_update(s, k1, k2, k3, k4, hh)
            for j in range(NA):                  # brakes: return-mapped sliders (released: they follow the rotor)
                if brakes:
                    z, e = slider(DRV[j, D_BK], s[TM + j], Z[ZB + j], DRV[j, D_BL])
                    Z[ZSLIP] += abs(z - Z[ZB + j])
                    Z[ZB + j], Z[ZBD] = z, Z[ZBD] + e
                else:
                    Z[ZB + j] = s[TM + j]
            for p in range(NPAIR):               # the last stage's contacts: the next step's substeps
                prev[p] = c[p, 0] > 0.0
            k0 += 1
            t = k0 * h
        if not np.isfinite(s[0]):
            return 1, t, row + 1
    return 0, t, n_out
