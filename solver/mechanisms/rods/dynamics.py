"""Rod systems on a free spacecraft (seed 002): the step kernel of both formulations on solver.core.planar_chain.

State s: X Y (the craft's c.g., inertial), theta_C, q = [phi.. alpha.. beta..], p = [v_Cx v_Cy Omega phi_dot..
alpha_dot.. beta_dot..], u_C as the text defines it (2), the two variants of Table 1 (2 + 2), control work,
dissipated energy. The reduced formulation keeps alpha, beta (and their rates) out of the state: they are solved
from the 2n quasi-static bending equations at every evaluation (docs/rods.md).
Z: per hinge the clamp flag, its lock time, the last chord angle; deployed (every clamp locked: the run's T capture)
and its time, the clamps' work.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core import planar_chain as PC
from solver.core.bodies import cholesky_factor, cholesky_solve
from solver.core.integrator import rk4_update, stage
from solver.core.linear import lu_solve

# P: craft mass, inertia, attachment x0 y0, formulation (0 general, 1 reduced), clamp tolerance, clamp stiffness and
# damping, clamp rule (0: |angle| < tolerance, 1: the angle crosses zero, 2: crossed, checked at output frames only),
# clamps in use (0/1), lock (0: the spring
# takes hold; 1: plastic, the hinge's rate absorbed at once, momentum kept, then the spring holds)
P_M0, P_J0, P_X0, P_Y0, P_FORM, P_TOL, P_KLOCK, P_NULOCK, P_RULE, P_CLAMPS, P_PLASTIC = range(11)
NP = 11
DIVERGED = 1e8      # |state| beyond it: the step is too long for the stiffest hinge (status 1)


def sizes(n: int) -> tuple[int, int]:
    """(NS, NZ) of a chain of n rods."""
    return 14 + 6 * n, 3 * n + 3


def n_aux(n: int) -> int:
    """Values `evaluate` reports per frame: alpha, beta (2n), hinge angles, rates, moments (3n), rod-end bending
    moments (2n), kinetic and stored energy, dissipation rate, control power (4)."""
    return 7 * n + 4


@njit(cache=True, error_model="numpy")
def controls(TAB, t):
    """X_C, Y_C, M_C at t: the time table TAB (rows t, X, Y, M) held from each row to the next."""
    i = 0
    while i + 1 < TAB.shape[0] and TAB[i + 1, 0] <= t:
        i += 1
    if t < TAB[0, 0]:
        return 0.0, 0.0, 0.0
    return TAB[i, 1], TAB[i, 2], TAB[i, 3]


@njit(cache=True, error_model="numpy")
def evaluate(s, Z, P, RODS, X, Y, MC, M, h, jx, jy, K, D, A, b, x, G, kap, nu, ds, aux):
    """ds/dt of the state at the controls X, Y, MC; aux: the values of `n_aux`. False if a matrix is singular."""
    n = RODS.shape[0]
    nq, nd, nt, nw = 3 * n, 3 * n + 3, n + 3, 2 * n
    IQ, IV = 3, 3 + 3 * n
    IU = IV + nd
    q = s[IQ:IQ + nq]
    p = s[IV:IV + nd]
    for k in range(n):
        locked = Z[k] > 0.5
        kap[k] = P[P_KLOCK] if locked else RODS[k, PC.R_KAPPA]
        nu[k] = P[P_NULOCK] if locked else RODS[k, PC.R_NU]
    PC.chain_stiffness(RODS, kap, nu, K, D)
    reduced = P[P_FORM] > 0.5
    ds[:] = 0.0
    if not reduced:
        ke = PC.chain_mass_bias(q, p, RODS, P[P_X0], P[P_Y0], P[P_M0], P[P_J0], M, h, jx, jy)
        b[0], b[1], b[2] = X - h[0], Y - h[1], MC - h[2]
        for a in range(nq):
            r = -h[3 + a]
            for c in range(nq):
                r -= K[a, c] * q[c] + D[a, c] * p[3 + c]
            b[3 + a] = r
        if not cholesky_factor(M, nd):
            return False
        cholesky_solve(M, b, nd, ds[IV:IV + nd])
        for a in range(nq):
            ds[IQ + a] = p[3 + a]
        for a in range(nw):
            aux[a] = q[n + a]
    else:
        qr = np.zeros(nq)
        pr = np.zeros(nd)
        qr[:n] = q[:n]
        pr[:nt] = p[:nt]
        ke = PC.chain_mass_bias(qr, pr, RODS, P[P_X0], P[P_Y0], P[P_M0], P[P_J0], M, h, jx, jy)
        # G = K_ww^-1 (the bending block over alpha, beta), r_w: the w rows' terms without w
        for c in range(nw):
            for i in range(nw):
                for j in range(nw):
                    A[i, j] = K[n + i, n + j]
                b[i] = 1.0 if i == c else 0.0
            if not lu_solve(A, b, nw, x):
                return False
            for i in range(nw):
                G[i, c] = x[i]
        rw = np.zeros(nw)
        for i in range(nw):
            r = h[nt + i]
            for j in range(n):
                r += K[n + i, j] * q[j] + D[n + i, j] * p[3 + j]
            rw[i] = r
        # C = K_tw G (t rows: only the phi rows have w stiffness)
        C = np.zeros((nt, nw))
        for i in range(n):
            for j in range(nw):
                acc = 0.0
                for l in range(nw):
                    acc += K[i, n + l] * G[l, j]
                C[3 + i, j] = acc
        for i in range(nt):
            for j in range(nt):
                acc = M[i, j]
                for l in range(nw):
                    acc -= C[i, l] * M[nt + l, j]
                A[i, j] = acc
            r = -h[i]
            if i == 0:
                r += X
            elif i == 1:
                r += Y
            elif i == 2:
                r += MC
            else:
                for j in range(n):
                    r -= K[i - 3, j] * q[j] + D[i - 3, j] * p[3 + j]
            for l in range(nw):
                r += C[i, l] * rw[l]
            b[i] = r
        if not lu_solve(A, b, nt, x):
            return False
        for i in range(nt):
            ds[IV + i] = x[i]
        for i in range(nw):       # w = -G (M_wt p_dot + r_w)
            acc = 0.0
            for l in range(nw):
                mw = rw[l]
                for j in range(nt):
                    mw += M[nt + l, j] * x[j]
                acc -= G[i, l] * mw
            aux[i] = acc
        for a in range(n):
            ds[IQ + a] = p[3 + a]
    # hinge angles, rates and moments; rod-end bending moments; energies
    qa = np.zeros(nq)
    pa = np.zeros(nq)
    for a in range(n):
        qa[a], pa[a] = q[a], p[3 + a]
    for a in range(nw):
        qa[n + a] = aux[a]
        pa[n + a] = 0.0 if reduced else p[3 + n + a]
    psi, psid = np.zeros(n), np.zeros(n)
    PC.hinge_angles(qa, pa, n, psi, psid)
    for k in range(n):
        aux[nw + k], aux[nw + n + k] = psi[k], psid[k]
        aux[nw + 2 * n + k] = kap[k] * psi[k] + nu[k] * psid[k]
        e = RODS[k, PC.R_EI] / RODS[k, PC.R_L]
        aux[5 * n + k] = e * (4.0 * qa[n + k] + 2.0 * qa[2 * n + k])
        aux[6 * n + k] = e * (2.0 * qa[n + k] + 4.0 * qa[2 * n + k])
    stored, diss = 0.0, 0.0
    for a in range(nq):
        for c in range(nq):
            stored += 0.5 * qa[a] * K[a, c] * qa[c]
            diss += pa[a] * D[a, c] * pa[c]
    vx, vy, om = p[0], p[1], p[2]
    power = X * vx + Y * vy + MC * om
    aux[7 * n], aux[7 * n + 1], aux[7 * n + 2], aux[7 * n + 3] = ke, stored, diss, power
    th = s[2]
    ds[0] = math.cos(th) * vx - math.sin(th) * vy
    ds[1] = math.sin(th) * vx + math.cos(th) * vy
    ds[2] = om
    ds[IU], ds[IU + 1] = vx + om * s[IU + 1], vy - om * s[IU]              # v = u_dot + Omega z x u (the text)
    ds[IU + 2], ds[IU + 3] = vx - om * s[IU + 2], vy - om * s[IU + 3]      # u_dot = v - Omega u per component
    ds[IU + 4], ds[IU + 5] = vx - om * s[IU + 5], vy + om * s[IU + 4]      # the text's relation, sign flipped
    ds[IU + 6], ds[IU + 7] = power, diss
    return True


@njit(cache=True, error_model="numpy")
def chord_angle(s, n, k):
    """The clamp's angle of hinge k: phi_1 (hinge 0), phi_{k+1} - phi_k."""
    return s[3 + k] - (s[3 + k - 1] if k > 0 else 0.0)


@njit(cache=True, error_model="numpy")
def _plastic(s, P, RODS, k, M, hv, jx, jy, reduced):
    """Plastic lock of hinge k: its rate psi_dot absorbed by an internal impulse (momentum kept); the kinetic energy
    lost is added to the dissipated energy."""
    n = RODS.shape[0]
    nq, nd, nt = 3 * n, 3 * n + 3, n + 3
    IQ, IV = 3, 3 + 3 * n
    q, p = s[IQ:IQ + nq].copy(), s[IV:IV + nd].copy()
    if reduced:
        q[n:], p[nt:] = 0.0, 0.0
    ke0 = PC.chain_mass_bias(q, p, RODS, P[P_X0], P[P_Y0], P[P_M0], P[P_J0], M, hv, jx, jy)
    m = nt if reduced else nd
    A = M[:m, :m].copy()
    g = np.zeros(m)
    g[3 + k] = 1.0
    if not reduced:
        g[3 + n + k] = 1.0
    if k > 0:
        g[3 + k - 1] = -1.0
        if not reduced:
            g[3 + 2 * n + k - 1] = -1.0
    pm = p[:m].copy()
    PC.plastic_lock(A, g, pm, m)
    s[IV:IV + m] = pm
    p[:m] = pm
    ke1 = PC.chain_mass_bias(q, p, RODS, P[P_X0], P[P_Y0], P[P_M0], P[P_J0], M, hv, jx, jy)
    s[IV + nd + 7] += ke0 - ke1


@njit(cache=True, error_model="numpy")
def run_block(s, Z, t, h, n_out, spo, P, RODS, TAB, ev, n_ev, prev, o_t, o_ch, o_pos, o_q, o_act, o_f, o_p, o_n,
              o_d, o_vn):
    """n_out frames, each recorded, then spo RK4 steps (controls held over a step at its midpoint). Status 0, or 1
    on a singular matrix or a non-finite state."""
    n = RODS.shape[0]
    nq, nd, nt, nw = 3 * n, 3 * n + 3, n + 3, 2 * n
    ns = s.shape[0]
    IQ, IV = 3, 3 + 3 * n
    IU = IV + nd
    M, hv, jx, jy = np.zeros((nd, nd)), np.zeros(nd), np.zeros(nd), np.zeros(nd)
    K, D, A, b, x = np.zeros((nq, nq)), np.zeros((nq, nq)), np.zeros((nt, nt)), np.zeros(nd), np.zeros(nd)
    G, kap, nu = np.zeros((nw, nw)), np.zeros(n), np.zeros(n)
    k1, k2, k3, k4, st = np.zeros(ns), np.zeros(ns), np.zeros(ns), np.zeros(ns), np.zeros(ns)
    aux = np.zeros(7 * n + 4)
    k0 = round(t / h)
    for row in range(n_out):
        X, Y, MC = controls(TAB, t)
        if not evaluate(s, Z, P, RODS, X, Y, MC, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k1, aux):
            return 1, t, row
        o_t[row] = t
        th = s[2]
        c = 0
        for v in (s[IU], s[IU + 1], math.degrees(th), s[IV], s[IV + 1], math.degrees(s[IV + 2])):
            o_ch[row, c] = v
            c += 1
        for k in range(n):
            o_ch[row, c + k] = math.degrees(s[IQ + k])
            o_ch[row, c + n + k] = math.degrees(aux[k])
            o_ch[row, c + 2 * n + k] = math.degrees(aux[n + k])
        c += 3 * n
        for k in range(n):
            o_ch[row, c + k] = math.degrees(aux[nw + k])                 # hinge angle
            o_ch[row, c + n + k] = aux[nw + 2 * n + k]                   # hinge moment
            o_ch[row, c + 2 * n + k] = aux[5 * n + k]                    # bending moment at the rod's root
            o_ch[row, c + 3 * n + k] = aux[6 * n + k]                    # and at its tip
            o_ch[row, c + 4 * n + k] = Z[k]                              # clamp locked
        c += 5 * n
        ke, stored = aux[7 * n], aux[7 * n + 1]
        work, diss = s[IU + 6] + Z[3 * n + 2], s[IU + 7]
        o_ch[row, c], o_ch[row, c + 1], o_ch[row, c + 2] = ke, stored, diss
        o_ch[row, c + 3], o_ch[row, c + 4] = work, ke + stored + diss - work
        for j in range(4):   # the variants of Table 1 (an integral that may grow without bound: NaN past 1e6 m)
            o_ch[row, c + 5 + j] = s[IU + 2 + j] if abs(s[IU + 2 + j]) < 1e6 else math.nan
        o_ch[row, c + 9], o_ch[row, c + 10], o_ch[row, c + 11] = X, Y, MC
        o_pos[row, 0, 0], o_pos[row, 0, 1], o_pos[row, 0, 2] = s[0], s[1], 0.0
        o_q[row, 0, 0], o_q[row, 0, 1], o_q[row, 0, 2], o_q[row, 0, 3] = math.cos(th / 2), 0.0, 0.0, math.sin(th / 2)
        for it in range(spo):
            X, Y, MC = controls(TAB, t + 0.5 * h)
            ok = evaluate(s, Z, P, RODS, X, Y, MC, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k1, aux)
            stage(s, k1, 0.5 * h, st)
            ok &= evaluate(st, Z, P, RODS, X, Y, MC, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k2, aux)
            stage(s, k2, 0.5 * h, st)
            ok &= evaluate(st, Z, P, RODS, X, Y, MC, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k3, aux)
            stage(s, k3, h, st)
            ok &= evaluate(st, Z, P, RODS, X, Y, MC, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k4, aux)
            rk4_update(s, k1, k2, k3, k4, h)
            k0 += 1
            t = k0 * h
            if not ok or not np.all(np.abs(s[:IU]) < DIVERGED):
                return 1, t, row + 1
            if P[P_CLAMPS] > 0.5 and (P[P_RULE] < 1.5 or it == spo - 1):   # rule 2: at output frames only
                for k in range(n):
                    a = chord_angle(s, n, k)
                    if Z[k] < 0.5 and (abs(a) < P[P_TOL] if P[P_RULE] < 0.5 else a * Z[2 * n + k] <= 0.0):
                        # the clamp's spring takes hold at the hinge's present angle: the stored energy's jump is
                        # work done on the system by the clamp (the balance stays flat)
                        evaluate(s, Z, P, RODS, 0.0, 0.0, 0.0, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k1, aux)
                        before = aux[7 * n + 1]
                        Z[k], Z[n + k] = 1.0, t
                        if P[P_PLASTIC] > 0.5:
                            _plastic(s, P, RODS, k, M, hv, jx, jy, reduced=P[P_FORM] > 0.5)
                        evaluate(s, Z, P, RODS, 0.0, 0.0, 0.0, M, hv, jx, jy, K, D, A, b, x, G, kap, nu, k1, aux)
                        Z[3 * n + 2] += aux[7 * n + 1] - before
                        if n_ev[0] < ev.shape[0]:
                            ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2] = t, float(k), -1.0
                            n_ev[0] += 1
                    Z[2 * n + k] = a
                if Z[3 * n] < 0.5:    # deployed: every clamp locked (the run's T capture)
                    all_locked = True
                    for k in range(n):
                        all_locked &= Z[k] > 0.5
                    if all_locked:
                        Z[3 * n], Z[3 * n + 1] = 1.0, t
    return 0, t, n_out
