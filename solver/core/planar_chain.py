"""A planar chain of inextensible elastic rods on a free rigid body (numba): the d'Alembert-Lagrange mass matrix and
velocity terms, the hinge and bending stiffness, and the rods' deflection lines (seed 002, docs/rods.md).

Coordinates: the body's velocity (v_x, v_y) and rate Omega in its own axes, then per rod k the chord angle phi_k (from
the body's x axis) and the end slopes alpha_k, beta_k of its bending line against the chord, eta(s) = H1 alpha + H2
beta (cubic Hermite). p = [v_x v_y Omega phi_dot.. alpha_dot.. beta_dot..] (3n + 3). RODS (n, NR): length, mass per
length, EI, node mass at the rod's far end, hinge stiffness and damping at its near end (hinge k-1).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core.bodies import cholesky_factor, cholesky_solve

R_L, R_M, R_EI, R_MU, R_KAPPA, R_NU = 0, 1, 2, 3, 4, 5
NR = 6
# Gauss-Legendre, 4 points on [0, 1]: exact for the degree-6 integrands of a cubic bending line
GAUSS_X = np.array([0.5 - 0.5 * 0.8611363115940526, 0.5 - 0.5 * 0.3399810435848563,
                    0.5 + 0.5 * 0.3399810435848563, 0.5 + 0.5 * 0.8611363115940526])
GAUSS_W = np.array([0.5 * 0.3478548451374538, 0.5 * 0.6521451548625461,
                    0.5 * 0.6521451548625461, 0.5 * 0.3478548451374538])


@njit(cache=True, error_model="numpy", inline="always")
def hermite(xi, l):
    """Shape functions of the bending line for the end slopes: H1 (alpha), H2 (beta), metres per radian."""
    return l * (xi - 2.0 * xi * xi + xi * xi * xi), l * (xi * xi * xi - xi * xi)


@njit(cache=True, error_model="numpy")
def _add_point(w, jx, jy, bx, by, nd, M, h):
    """M += w J^T J, h += w J^T b of one mass point (J: 2 x nd columns jx, jy; b its velocity-term acceleration)."""
    for a in range(nd):
        if jx[a] == 0.0 and jy[a] == 0.0:
            continue
        h[a] += w * (jx[a] * bx + jy[a] * by)
        for b in range(nd):
            M[a, b] += w * (jx[a] * jx[b] + jy[a] * jy[b])


@njit(cache=True, error_model="numpy", inline="always")
def next_rod_root(rx, ry, rdx, rdy, qx, qy, l, c, s, phd):
    """The next rod's root from this one's (chord l at angle cos c, sin s, rate phd): position, velocity relative to
    the body and the centripetal part of its acceleration."""
    return (rx + l * c, ry + l * s, rdx + phd * (-l * s), rdy + phd * (l * c), qx - phd * phd * l * c,
            qy - phd * phd * l * s)


@njit(cache=True, error_model="numpy", inline="always")
def rod_point(q, pr, o, RODS, k, c, s, xi, node, rx, ry, rdx, rdy, qx, qy, jx, jy):
    """Point xi of rod k (the far node's mass point if node): its position, velocity relative to the body and the
    velocity-squared part of its relative acceleration (body axes; node k-1 at rx, ry moving at rdx, rdy with qx, qy);
    its Jacobian columns over the rod rates pr[o:] into jx[o:], jy[o:] (chord cos, sin c, s)."""
    n = RODS.shape[0]
    l = RODS[k, R_L]
    al, be = q[n + k], q[2 * n + k]
    phd, ald, bed = pr[o + k], pr[o + n + k], pr[o + 2 * n + k]
    H1, H2 = hermite(xi, l)
    if node:
        H1, H2 = 0.0, 0.0
    sl = xi * l
    eta, etad = H1 * al + H2 * be, H1 * ald + H2 * bed
    px, py = rx + sl * c - eta * s, ry + sl * s + eta * c          # the point
    for j in range(k):
        lj, cj, sj = RODS[j, R_L], math.cos(q[j]), math.sin(q[j])
        jx[o + j], jy[o + j] = -lj * sj, lj * cj
    jx[o + k], jy[o + k] = -sl * s - eta * c, sl * c - eta * s     # d/dphi_k (s n - eta e)
    jx[o + n + k], jy[o + n + k] = -H1 * s, H1 * c
    jx[o + 2 * n + k], jy[o + 2 * n + k] = -H2 * s, H2 * c
    vrx = rdx + phd * (-sl * s - eta * c) - etad * s
    vry = rdy + phd * (sl * c - eta * s) + etad * c
    ax = qx - phd * phd * (sl * c - eta * s) - 2.0 * phd * etad * c
    ay = qy - phd * phd * (sl * s + eta * c) - 2.0 * phd * etad * s
    return px, py, vrx, vry, ax, ay


@njit(cache=True, error_model="numpy")
def chain_mass_bias(q, p, RODS, x0, y0, M0, J0, M, h, jx, jy):
    """Mass matrix M (nd x nd) and velocity terms h (sum of m J^T (J_dot p + Omega z x V)) at angles q = [phi..
    alpha.. beta..] and velocities p; returns the kinetic energy. jx, jy: scratch (nd)."""
    n = RODS.shape[0]
    nd = 3 * n + 3
    M[:, :] = 0.0
    h[:] = 0.0
    vx, vy, om = p[0], p[1], p[2]
    M[0, 0] += M0
    M[1, 1] += M0
    M[2, 2] += J0
    h[0] += M0 * (-om * vy)
    h[1] += M0 * (om * vx)
    rx, ry = x0, y0            # node k-1 position (body axes)
    rdx, rdy = 0.0, 0.0        # its velocity relative to the body
    qx, qy = 0.0, 0.0          # its relative acceleration's velocity-squared part
    for k in range(n):
        l, m = RODS[k, R_L], RODS[k, R_M]
        ph, phd = q[k], p[3 + k]
        c, s = math.cos(ph), math.sin(ph)
        for g in range(GAUSS_X.shape[0] + 1):
            if g < GAUSS_X.shape[0]:
                xi, w = GAUSS_X[g], GAUSS_W[g] * m * l
            else:
                xi, w = 1.0, RODS[k, R_MU]           # the node mass at the rod's far end
            jx[:] = 0.0
            jy[:] = 0.0
            jx[0], jy[1] = 1.0, 1.0
            px, py, vrx, vry, ax, ay = rod_point(q, p, 3, RODS, k, c, s, xi, g == GAUSS_X.shape[0], rx, ry, rdx, rdy,
                                                 qx, qy, jx, jy)
            jx[2], jy[2] = -py, px
            # moving axes: Omega z x v + 2 Omega z x v_rel - Omega^2 r
            bx = ax - om * vy - 2.0 * om * vry - om * om * px
            by = ay + om * vx + 2.0 * om * vrx - om * om * py
            _add_point(w, jx, jy, bx, by, nd, M, h)
        rx, ry, rdx, rdy, qx, qy = next_rod_root(rx, ry, rdx, rdy, qx, qy, l, c, s, phd)
    ke = 0.0
    for a in range(nd):
        for b in range(nd):
            ke += 0.5 * p[a] * M[a, b] * p[b]
    return ke


@njit(cache=True, error_model="numpy")
def chain_stiffness(RODS, kappa, nu, K, D):
    """Stiffness K and damping D over [phi.. alpha.. beta..] (3n x 3n): hinge k-1 (kappa[k], nu[k] of rod k) on
    psi = phi_k + alpha_k - phi_{k-1} - beta_{k-1} (the body's phi_0 = beta_0 = 0), and each rod's bending
    (EI/l) [[4, 2], [2, 4]] on (alpha_k, beta_k)."""
    n = RODS.shape[0]
    K[:, :] = 0.0
    D[:, :] = 0.0
    sel = np.zeros(3 * n)
    for k in range(n):
        sel[:] = 0.0
        sel[k], sel[n + k] = 1.0, 1.0
        if k > 0:
            sel[k - 1], sel[2 * n + k - 1] = -1.0, -1.0
        for a in range(3 * n):
            for b in range(3 * n):
                K[a, b] += kappa[k] * sel[a] * sel[b]
                D[a, b] += nu[k] * sel[a] * sel[b]
        e = RODS[k, R_EI] / RODS[k, R_L]
        i, j = n + k, 2 * n + k
        K[i, i] += 4.0 * e
        K[j, j] += 4.0 * e
        K[i, j] += 2.0 * e
        K[j, i] += 2.0 * e


@njit(cache=True, error_model="numpy")
def hinge_angles(q, pd, n, psi, psid):
    """Hinge angles psi_k (k = 0..n-1, hinge k between rod k and rod k+1, hinge 0 on the body) and their rates."""
    for k in range(n):
        psi[k] = q[k] + q[n + k]
        psid[k] = pd[k] + pd[n + k]
        if k > 0:
            psi[k] -= q[k - 1] + q[2 * n + k - 1]
            psid[k] -= pd[k - 1] + pd[2 * n + k - 1]


@njit(cache=True, error_model="numpy")
def deflection_lines(PHI, AL, BE, RODS, x0, y0, out):
    """Deflection line points (K, n, P, 3) in body axes of K frames of chord angles PHI and end slopes AL, BE (K, n):
    P points per rod from its near node to its far node."""
    K, n, P = out.shape[0], out.shape[1], out.shape[2]
    for f in range(K):
        rx, ry = x0, y0
        for k in range(n):
            l = RODS[k, R_L]
            c, s = math.cos(PHI[f, k]), math.sin(PHI[f, k])
            for i in range(P):
                xi = i / (P - 1)
                H1, H2 = hermite(xi, l)
                eta = H1 * AL[f, k] + H2 * BE[f, k]
                out[f, k, i, 0] = rx + xi * l * c - eta * s
                out[f, k, i, 1] = ry + xi * l * s + eta * c
                out[f, k, i, 2] = 0.0
            rx += l * c
            ry += l * s


@njit(cache=True, error_model="numpy")
def plastic_lock(M, g, p, nd):
    """Velocity jump of a plastic lock of the rate g.p (a constraint impulse, so momentum is kept): p -= M^-1 g
    (g.p) / (g.M^-1 g); M (nd x nd, symmetric positive definite) is overwritten by its Cholesky factor."""
    if not cholesky_factor(M, nd):
        return False
    y = np.zeros(nd)
    cholesky_solve(M, g, nd, y)
    gp, gy = 0.0, 0.0
    for a in range(nd):
        gp += g[a] * p[a]
        gy += g[a] * y[a]
    for a in range(nd):
        p[a] -= y[a] * gp / gy
    return True
