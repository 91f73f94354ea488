"""An appendage on a rigid body (numba): a planar chain of elastic rods (solver.core.planar_chain) in a plane of a body
that moves in 3-D, coupled both ways with the body's rows of a host's equations of motion (docs/rods.md).

The host solves M u_dot = b; its rows ib..ib+5 are the body's CoM velocity and angular velocity (world). The chain's
points move at v + omega x d + R E rho_dot (d from the body's CoM, E = [e1 e2] the chain's plane axes in the body's
frame): d'Alembert over [u, rod rates] adds sum m J^T J and sum m J^T (omega x (omega x d) + 2 omega x R E rho_dot +
R E rho_ddot_vel) to the host's rows and the chain's own. Formulations as the rods type's: general (every rod rate
dynamic) or reduced (quasi-static bending: alpha, beta solved from the bending rows, seed 002's reduced form).
Chain state x = [q (3n): phi.. alpha.. beta.., q_dot (3n)]; in the reduced form alpha, beta and their rates stay 0.
"""
from __future__ import annotations

import math

from numba import njit

from solver.core import planar_chain as PC
from solver.core.linear import lu_solve

# out: kinetic and stored energy, dissipation rate, linear momentum (3), angular momentum about the body's CoM (3),
# chain mass, then alpha.. beta.. (2n), hinge angles (n), hinge moments (n), bending moments at rod roots, tips (n, n)
O_KE, O_PE, O_DISS, O_P, O_H, O_MASS, O_W = 0, 1, 2, 3, 6, 9, 10


def out_size(n: int) -> int:
    """Length of `out` for a chain of n rods."""
    return O_W + 6 * n


def work_shape(nh: int, n: int) -> tuple[int, int]:
    """The scratch WK of `appendage_solve` for a host of nh rows and a chain of n rods."""
    nd = 6 + 3 * n
    N = nh + 3 * n
    rows = N + 2 + nd + 1 + 6 * n + 2 * n + n + 8 + 2 * n
    return rows, max(N, nd, 2 * n + 1)


@njit(cache=True, error_model="numpy")
def _column(a, d0, d1, d2, jx, jy, E1, E2):
    """Column a of a chain point's velocity Jacobian: the body's translation (0-2), its rotation e_a x d (3-5), a rod
    coordinate in the chain's plane (6-)."""
    if a < 3:
        return 1.0 if a == 0 else 0.0, 1.0 if a == 1 else 0.0, 1.0 if a == 2 else 0.0
    if a == 3:
        return 0.0, -d2, d1
    if a == 4:
        return d2, 0.0, -d0
    if a == 5:
        return -d1, d0, 0.0
    x, y = jx[a - 6], jy[a - 6]
    return x * E1[0] + y * E2[0], x * E1[1] + y * E2[1], x * E1[2] + y * E2[2]


@njit(cache=True, error_model="numpy")
def appendage_mass_bias(R, v, w, q, qd, RODS, ra, e1, e2, Mc, hc, jx, jy, out):
    """Mass matrix Mc (nd x nd, nd = 6 + 3n) and velocity terms hc over [v, omega (world), rod rates] of the chain on
    a body turned by R (body to world) at CoM velocity v and rate w; ra, e1, e2: its root and plane axes in the body's
    frame (root from the CoM). out[O_KE], out[O_P:O_P+3], out[O_H:O_H+3], out[O_MASS]: the chain's own."""
    n = RODS.shape[0]
    nd = 6 + 3 * n
    Mc[:, :] = 0.0
    hc[:] = 0.0
    E1 = (R[0, 0] * e1[0] + R[0, 1] * e1[1] + R[0, 2] * e1[2], R[1, 0] * e1[0] + R[1, 1] * e1[1] + R[1, 2] * e1[2],
          R[2, 0] * e1[0] + R[2, 1] * e1[1] + R[2, 2] * e1[2])
    E2 = (R[0, 0] * e2[0] + R[0, 1] * e2[1] + R[0, 2] * e2[2], R[1, 0] * e2[0] + R[1, 1] * e2[1] + R[1, 2] * e2[2],
          R[2, 0] * e2[0] + R[2, 1] * e2[1] + R[2, 2] * e2[2])
    A0 = (R[0, 0] * ra[0] + R[0, 1] * ra[1] + R[0, 2] * ra[2], R[1, 0] * ra[0] + R[1, 1] * ra[1] + R[1, 2] * ra[2],
          R[2, 0] * ra[0] + R[2, 1] * ra[1] + R[2, 2] * ra[2])
    ke, mass = 0.0, 0.0
    P0, P1, P2, H0, H1, H2 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    rx, ry, rdx, rdy, qx, qy = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    ng = PC.GAUSS_X.shape[0]
    for k in range(n):
        l, m = RODS[k, PC.R_L], RODS[k, PC.R_M]
        ph, phd = q[k], qd[k]
        c, s = math.cos(ph), math.sin(ph)
        for g in range(ng + 1):
            if g < ng:
                xi, wt = PC.GAUSS_X[g], PC.GAUSS_W[g] * m * l
            else:
                xi, wt = 1.0, RODS[k, PC.R_MU]
            jx[:] = 0.0
            jy[:] = 0.0
            px, py, vrx, vry, ax, ay = PC.rod_point(q, qd, 0, RODS, k, c, s, xi, g == ng, rx, ry, rdx, rdy, qx, qy,
                                                    jx, jy)
            d0 = A0[0] + px * E1[0] + py * E2[0]
            d1 = A0[1] + px * E1[1] + py * E2[1]
            d2 = A0[2] + px * E1[2] + py * E2[2]
            u0, u1, u2 = vrx * E1[0] + vry * E2[0], vrx * E1[1] + vry * E2[1], vrx * E1[2] + vry * E2[2]
            # omega x d, and the velocity-squared acceleration omega x (omega x d) + 2 omega x u + R E a_rel
            c0, c1, c2 = w[1] * d2 - w[2] * d1, w[2] * d0 - w[0] * d2, w[0] * d1 - w[1] * d0
            b0 = w[1] * c2 - w[2] * c1 + 2.0 * (w[1] * u2 - w[2] * u1) + ax * E1[0] + ay * E2[0]
            b1 = w[2] * c0 - w[0] * c2 + 2.0 * (w[2] * u0 - w[0] * u2) + ax * E1[1] + ay * E2[1]
            b2 = w[0] * c1 - w[1] * c0 + 2.0 * (w[0] * u1 - w[1] * u0) + ax * E1[2] + ay * E2[2]
            V0, V1, V2 = v[0] + c0 + u0, v[1] + c1 + u1, v[2] + c2 + u2
            ke += 0.5 * wt * (V0 * V0 + V1 * V1 + V2 * V2)
            mass += wt
            P0 += wt * V0
            P1 += wt * V1
            P2 += wt * V2
            H0 += wt * (d1 * V2 - d2 * V1)
            H1 += wt * (d2 * V0 - d0 * V2)
            H2 += wt * (d0 * V1 - d1 * V0)
            # J (3 x nd): identity, e_j x d (omega_j), R E (jx, jy) (rod rates)
            for a in range(nd):
                if a >= 6 and jx[a - 6] == 0.0 and jy[a - 6] == 0.0:
                    continue
                ja0, ja1, ja2 = _column(a, d0, d1, d2, jx, jy, E1, E2)
                hc[a] += wt * (ja0 * b0 + ja1 * b1 + ja2 * b2)
                for e in range(a + 1):
                    je0, je1, je2 = _column(e, d0, d1, d2, jx, jy, E1, E2)
                    Mc[a, e] += wt * (ja0 * je0 + ja1 * je1 + ja2 * je2)
        rx, ry, rdx, rdy, qx, qy = PC.next_rod_root(rx, ry, rdx, rdy, qx, qy, l, c, s, phd)
    for a in range(nd):
        for e in range(a):
            Mc[e, a] = Mc[a, e]
    out[O_KE], out[O_MASS] = ke, mass
    out[O_P], out[O_P + 1], out[O_P + 2] = P0, P1, P2
    out[O_H], out[O_H + 1], out[O_H + 2] = H0, H1, H2


@njit(cache=True, error_model="numpy")
def appendage_solve(Mh, bh, ib, R, v, w, x, RODS, ra, e1, e2, reduced, ud, dx, out, WK):
    """Solve the host's M u_dot = b (Mh: its lower triangle; the body's rows from ib) together with the chain
    (state x, derivative dx); ud: the host's accelerations; out: energies, momenta and the chain's outputs (`out`
    layout above). WK: scratch of `work_shape`. False if the coupled matrix is singular."""
    n = RODS.shape[0]
    nh = Mh.shape[0]
    nq, nd = 3 * n, 6 + 3 * n
    nt = n if reduced else nq
    N = nh + nt
    A = WK[0:N, 0:N]
    r, sol = WK[N, 0:N], WK[N + 1, 0:N]
    i0 = N + 2
    Mc, hc = WK[i0:i0 + nd, 0:nd], WK[i0 + nd, 0:nd]
    i0 += nd + 1
    K, D = WK[i0:i0 + nq, 0:nq], WK[i0 + nq:i0 + 2 * nq, 0:nq]
    i0 += 2 * nq
    G = WK[i0:i0 + 2 * n, 0:2 * n]
    i0 += 2 * n
    C = WK[i0:i0 + n, 0:2 * n]
    i0 += n
    jx, jy, qe, qde = WK[i0, 0:nq], WK[i0 + 1, 0:nq], WK[i0 + 2, 0:nq], WK[i0 + 3, 0:nq]
    kap, nu, rw, tb = WK[i0 + 4, 0:n], WK[i0 + 5, 0:n], WK[i0 + 6, 0:2 * n], WK[i0 + 7, 0:2 * n + 1]
    for a in range(nq):
        qe[a] = x[a] if (not reduced or a < n) else 0.0
        qde[a] = x[nq + a] if (not reduced or a < n) else 0.0
    appendage_mass_bias(R, v, w, qe, qde, RODS, ra, e1, e2, Mc, hc, jx, jy, out)
    for k in range(n):
        kap[k], nu[k] = RODS[k, PC.R_KAPPA], RODS[k, PC.R_NU]
    PC.chain_stiffness(RODS, kap, nu, K, D)
    for i in range(nh):
        for j in range(nh):
            A[i, j] = Mh[i, j] if j <= i else Mh[j, i]
        r[i] = bh[i]
    for i in range(N):
        for j in range(nh, N):
            A[i, j] = 0.0
            A[j, i] = 0.0
    for i in range(6):
        for j in range(6):
            A[ib + i, ib + j] += Mc[i, j]
        r[ib + i] -= hc[i]
        for c in range(nt):
            A[ib + i, nh + c] = Mc[i, 6 + c]
    if not reduced:
        for a in range(nq):
            for j in range(6):
                A[nh + a, ib + j] = Mc[6 + a, j]
            f = -hc[6 + a]
            for c in range(nq):
                A[nh + a, nh + c] = Mc[6 + a, 6 + c]
                f -= K[a, c] * x[c] + D[a, c] * x[nq + c]
            r[nh + a] = f
    else:
        # the bending rows w = (alpha, beta): K_ww w = -(M_w. a + r_w); G = K_ww^-1, C = K_phi,w G (seed 002 reduced)
        nw = 2 * n
        for c in range(nw):
            for i in range(nw):
                for j in range(nw):
                    WK[i0 + 8 + i, j] = K[n + i, n + j]
                tb[i] = 1.0 if i == c else 0.0
            if not lu_solve(WK[i0 + 8:i0 + 8 + nw, 0:nw], tb, nw, sol):
                return False
            for i in range(nw):
                G[i, c] = sol[i]
        for i in range(nw):
            f = hc[6 + n + i]
            for j in range(n):
                f += K[n + i, j] * x[j] + D[n + i, j] * x[nq + j]
            rw[i] = f
        for a in range(n):
            for j in range(nw):
                acc = 0.0
                for m in range(nw):
                    acc += K[a, n + m] * G[m, j]
                C[a, j] = acc
        for a in range(n):
            for j in range(6):
                acc = Mc[6 + a, j]
                for m in range(nw):
                    acc -= C[a, m] * Mc[6 + n + m, j]
                A[nh + a, ib + j] = acc
            for c in range(n):
                acc = Mc[6 + a, 6 + c]
                for m in range(nw):
                    acc -= C[a, m] * Mc[6 + n + m, 6 + c]
                A[nh + a, nh + c] = acc
            f = -hc[6 + a]
            for j in range(n):
                f -= K[a, j] * x[j] + D[a, j] * x[nq + j]
            for m in range(nw):
                f += C[a, m] * rw[m]
            r[nh + a] = f
    if not lu_solve(A, r, N, sol):
        return False
    for i in range(nh):
        ud[i] = sol[i]
    for a in range(nq):
        dx[a] = x[nq + a] if (not reduced or a < n) else 0.0
        dx[nq + a] = sol[nh + a] if a < nt else 0.0
    if reduced:     # w = -G (M_w. [a; phi_ddot] + r_w)
        for i in range(2 * n):
            acc = 0.0
            for m in range(2 * n):
                mw = rw[m]
                for j in range(6):
                    mw += Mc[6 + n + m, j] * sol[ib + j]
                for c in range(n):
                    mw += Mc[6 + n + m, 6 + c] * sol[nh + c]
                acc -= G[i, m] * mw
            qe[n + i] = acc
    outputs(qe, qde, RODS, kap, nu, K, D, out)
    return True


@njit(cache=True, error_model="numpy")
def outputs(q, qd, RODS, kap, nu, K, D, out):
    """The chain's stored energy, dissipation rate, end slopes, hinge angles and moments, rod-end bending moments
    into out (q, qd: every coordinate, the reduced form's solved slopes in q and zero rates)."""
    n = RODS.shape[0]
    nq = 3 * n
    stored, diss = 0.0, 0.0
    for a in range(nq):
        for c in range(nq):
            stored += 0.5 * q[a] * K[a, c] * q[c]
            diss += qd[a] * D[a, c] * qd[c]
    out[O_PE], out[O_DISS] = stored, diss
    for a in range(2 * n):
        out[O_W + a] = q[n + a]
    PC.hinge_angles(q, qd, n, out[O_W + 2 * n:O_W + 3 * n], out[O_W + 3 * n:O_W + 4 * n])
    for k in range(n):
        out[O_W + 3 * n + k] = kap[k] * out[O_W + 2 * n + k] + nu[k] * out[O_W + 3 * n + k]
        e = RODS[k, PC.R_EI] / RODS[k, PC.R_L]
        out[O_W + 4 * n + k] = e * (4.0 * q[n + k] + 2.0 * q[2 * n + k])
        out[O_W + 5 * n + k] = e * (2.0 * q[n + k] + 4.0 * q[2 * n + k])
