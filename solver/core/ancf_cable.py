"""3D ANCF cable element (Gerstmayr & Shabana 2006; seed 004 eqs. 1-9): nodes with position r and slope r_s, Hermite
cubic shapes, Green axial strain 1/2(r_s.r_s - 1), curvature |r_s x r_ss| / |r_s|^3, stretch and bending (no torsion).

A cable of n elements has n + 1 nodes, its coordinates q (n + 1, 6): r at 0:3, r_s at 3:6. The mass matrix is
M_scalar (x) I3 with M_scalar (2n + 2, 2n + 2) over the scalar index 2 j (node j's r) and 2 j + 1 (its r_s), so one
scalar matrix serves the three directions. End constraints (ball joint, clamp, prescribed motion) fix scalar indices.
All kernels are pure functions over float64 arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# 4-point Gauss-Legendre on [0, 1]: exact for the mass matrix (degree 6) and the stretch terms
GAUSS_X = np.array([0.0694318442029737, 0.3300094782075719, 0.6699905217924281, 0.9305681557970263])
GAUSS_W = np.array([0.1739274225687269, 0.3260725774312731, 0.3260725774312731, 0.1739274225687269])


@njit(cache=True, inline="always")
def shape(xi, L, S, Ss, Sss):
    """Hermite shape functions S1..S4 at xi in [0, 1] (seed 004 eq. 5) and their first and second s-derivatives."""
    x2, x3 = xi * xi, xi * xi * xi
    S[0], S[1], S[2], S[3] = 1.0 - 3.0 * x2 + 2.0 * x3, L * (xi - 2.0 * x2 + x3), 3.0 * x2 - 2.0 * x3, L * (x3 - x2)
    Ss[0], Ss[1] = (-6.0 * xi + 6.0 * x2) / L, 1.0 - 4.0 * xi + 3.0 * x2
    Ss[2], Ss[3] = (6.0 * xi - 6.0 * x2) / L, 3.0 * x2 - 2.0 * xi
    Sss[0], Sss[1] = (-6.0 + 12.0 * xi) / (L * L), (-4.0 + 6.0 * xi) / L
    Sss[2], Sss[3] = (6.0 - 12.0 * xi) / (L * L), (6.0 * xi - 2.0) / L


@njit(cache=True)
def mass_matrix(n, L, rhoA):
    """Scalar consistent mass matrix (2n + 2, 2n + 2) of n elements of length L: rhoA int S^T S ds (seed 004 eq. 6)."""
    M = np.zeros((2 * n + 2, 2 * n + 2))
    S, Ss, Sss = np.empty(4), np.empty(4), np.empty(4)
    for e in range(n):
        for g in range(4):
            shape(GAUSS_X[g], L, S, Ss, Sss)
            w = GAUSS_W[g] * L * rhoA
            for a in range(4):
                for b in range(4):
                    M[2 * e + a, 2 * e + b] += w * S[a] * S[b]
    return M


@njit(cache=True)
def gravity_weights(n, L, rhoA):
    """rhoA int S ds per scalar index: the generalized weight of the cable is this times g per direction."""
    G = np.zeros(2 * n + 2)
    for e in range(n):
        G[2 * e] += rhoA * L / 2.0
        G[2 * e + 1] += rhoA * L * L / 12.0
        G[2 * e + 2] += rhoA * L / 2.0
        G[2 * e + 3] -= rhoA * L * L / 12.0
    return G


GAUSS3_X = np.array([0.1127016653792583, 0.5, 0.8872983346207417])
GAUSS3_W = np.array([5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0])


@njit(cache=True)
def gauss_table(L, ng=4):
    """Shape functions and their s-derivatives at the ng (3 or 4) Gauss points of an element of length L: (ng, 3,
    4), and the weights times L (ng,)."""
    X, G = (GAUSS3_X, GAUSS3_W) if ng == 3 else (GAUSS_X, GAUSS_W)
    T, W = np.empty((ng, 3, 4)), np.empty(ng)
    for g in range(ng):
        shape(X[g], L, T[g, 0], T[g, 1], T[g, 2])
        W[g] = G[g] * L
    return T, W


@njit(cache=True, error_model="numpy", fastmath=True)
def element_forces(q, qd, e, T, W, EA, EI, eta, Q):
    """Add element e's elastic forces -dU/dq (stretch and bending, seed 004 eqs. 7-9) and axial Kelvin-Voigt damping
    (eta: strain-rate time constant, s) into Q (n + 1, 6); T, W from gauss_table. Returns (strain energy, damping
    power)."""
    U, P = 0.0, 0.0
    # the element's coordinates and its force accumulators in locals (one load and one store each; same arithmetic)
    x00, x01, x02, x03, x04, x05 = q[e, 0], q[e, 1], q[e, 2], q[e, 3], q[e, 4], q[e, 5]
    x10, x11, x12, x13, x14, x15 = q[e + 1, 0], q[e + 1, 1], q[e + 1, 2], q[e + 1, 3], q[e + 1, 4], q[e + 1, 5]
    v00, v01, v02, v03, v04, v05 = qd[e, 0], qd[e, 1], qd[e, 2], qd[e, 3], qd[e, 4], qd[e, 5]
    v10, v11, v12, v13, v14, v15 = qd[e + 1, 0], qd[e + 1, 1], qd[e + 1, 2], qd[e + 1, 3], qd[e + 1, 4], qd[e + 1, 5]
    g00, g01, g02, g03, g04, g05 = Q[e, 0], Q[e, 1], Q[e, 2], Q[e, 3], Q[e, 4], Q[e, 5]
    g10, g11, g12, g13, g14, g15 = Q[e + 1, 0], Q[e + 1, 1], Q[e + 1, 2], Q[e + 1, 3], Q[e + 1, 4], Q[e + 1, 5]
    for g in range(W.shape[0]):
        w = W[g]
        s0, s1, s2, s3 = T[g, 1, 0], T[g, 1, 1], T[g, 1, 2], T[g, 1, 3]
        b0_, b1_, b2_, b3_ = T[g, 2, 0], T[g, 2, 1], T[g, 2, 2], T[g, 2, 3]
        a0 = s0 * x00 + s1 * x03 + s2 * x10 + s3 * x13
        a1 = s0 * x01 + s1 * x04 + s2 * x11 + s3 * x14
        a2 = s0 * x02 + s1 * x05 + s2 * x12 + s3 * x15
        b0 = b0_ * x00 + b1_ * x03 + b2_ * x10 + b3_ * x13
        b1 = b0_ * x01 + b1_ * x04 + b2_ * x11 + b3_ * x14
        b2 = b0_ * x02 + b1_ * x05 + b2_ * x12 + b3_ * x15
        ad0 = s0 * v00 + s1 * v03 + s2 * v10 + s3 * v13
        ad1 = s0 * v01 + s1 * v04 + s2 * v11 + s3 * v14
        ad2 = s0 * v02 + s1 * v05 + s2 * v12 + s3 * v15
        gg = a0 * a0 + a1 * a1 + a2 * a2
        eps = 0.5 * (gg - 1.0)
        epsd = a0 * ad0 + a1 * ad1 + a2 * ad2
        c0, c1, c2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
        f = c0 * c0 + c1 * c1 + c2 * c2
        gb = max(gg, 0.25)                       # bending's |r_s|^2 kept from 0 (a cable crushed to half length)
        g3 = gb * gb * gb
        U += w * 0.5 * (EA * eps * eps + EI * f / g3)
        P += w * EA * eta * epsd * epsd
        # dU/da = EA eps a + EI (b x c) / g^3 - 3 EI f a / g^4 (Green strain, kappa^2 = f / g^3); dU/db = EI (c x a) / g^3
        na = w * (EA * (eps + eta * epsd) - (3.0 * EI * f / (g3 * gb) if gg > 0.25 else 0.0))
        kb = w * EI / g3
        fa0 = na * a0 + kb * (b1 * c2 - b2 * c1)
        fa1 = na * a1 + kb * (b2 * c0 - b0 * c2)
        fa2 = na * a2 + kb * (b0 * c1 - b1 * c0)
        fb0, fb1, fb2 = kb * (c1 * a2 - c2 * a1), kb * (c2 * a0 - c0 * a2), kb * (c0 * a1 - c1 * a0)
        g00 -= s0 * fa0 + b0_ * fb0
        g01 -= s0 * fa1 + b0_ * fb1
        g02 -= s0 * fa2 + b0_ * fb2
        g03 -= s1 * fa0 + b1_ * fb0
        g04 -= s1 * fa1 + b1_ * fb1
        g05 -= s1 * fa2 + b1_ * fb2
        g10 -= s2 * fa0 + b2_ * fb0
        g11 -= s2 * fa1 + b2_ * fb1
        g12 -= s2 * fa2 + b2_ * fb2
        g13 -= s3 * fa0 + b3_ * fb0
        g14 -= s3 * fa1 + b3_ * fb1
        g15 -= s3 * fa2 + b3_ * fb2
    Q[e, 0], Q[e, 1], Q[e, 2], Q[e, 3], Q[e, 4], Q[e, 5] = g00, g01, g02, g03, g04, g05
    Q[e + 1, 0], Q[e + 1, 1], Q[e + 1, 2], Q[e + 1, 3], Q[e + 1, 4], Q[e + 1, 5] = g10, g11, g12, g13, g14, g15
    return U, P


@njit(cache=True)
def cable_forces(q, qd, L, EA, EI, eta, rhoA, grav, Q, ng=4):
    """Generalized forces of a whole cable into Q (zeroed first): elastic, axial damping, gravity (grav: 3-vector),
    with ng Gauss points per element. Returns (strain energy, gravity potential, damping power)."""
    T, W = gauss_table(L, ng)
    return cable_forces_t(q, qd, T, W, L, EA, EI, eta, rhoA, grav, Q)


@njit(cache=True, error_model="numpy")
def cable_forces_t(q, qd, T, W, L, EA, EI, eta, rhoA, grav, Q):
    """cable_forces with the element's Gauss table (T, W) given (the step loop's form)."""
    n = q.shape[0] - 1
    Q[:, :] = 0.0
    U, P = 0.0, 0.0
    for e in range(n):
        u, p = element_forces(q, qd, e, T, W, EA, EI, eta, Q)
        U += u
        P += p
    V = 0.0
    for e in range(n):                            # gravity: rhoA g int S ds per node coordinate
        for d in range(3):
            w0, w1 = rhoA * L / 2.0 * grav[d], rhoA * L * L / 12.0 * grav[d]
            Q[e, d] += w0
            Q[e, 3 + d] += w1
            Q[e + 1, d] += w0
            Q[e + 1, 3 + d] -= w1
            V -= w0 * (q[e, d] + q[e + 1, d]) + w1 * (q[e, 3 + d] - q[e + 1, 3 + d])
    return U, V, P


@njit(cache=True)
def point(q, e, xi, L, r):
    """Position (or, given qd, velocity) on element e at xi into r: r = S q_e."""
    S, Ss, Sss = np.empty(4), np.empty(4), np.empty(4)
    shape(xi, L, S, Ss, Sss)
    for d in range(3):
        r[d] = S[0] * q[e, d] + S[1] * q[e, 3 + d] + S[2] * q[e + 1, d] + S[3] * q[e + 1, 3 + d]


@njit(cache=True, error_model="numpy", inline="always")
def element_bound(q, e, L):
    """A sphere holding all of element e: the cubic lies in the hull of its Bezier points r0, r0 + L/3 r_s0,
    r1 - L/3 r_s1, r1; returns its centre (the chord's middle) and radius (a cheap test before contact detection)."""
    l3 = L / 3.0
    mx, my, mz = 0.5 * (q[e, 0] + q[e + 1, 0]), 0.5 * (q[e, 1] + q[e + 1, 1]), 0.5 * (q[e, 2] + q[e + 1, 2])
    b0x, b0y, b0z = q[e, 0] - mx, q[e, 1] - my, q[e, 2] - mz
    b1x, b1y, b1z = b0x + l3 * q[e, 3], b0y + l3 * q[e, 4], b0z + l3 * q[e, 5]
    b2x, b2y, b2z = -b0x - l3 * q[e + 1, 3], -b0y - l3 * q[e + 1, 4], -b0z - l3 * q[e + 1, 5]
    rho = math.sqrt(max(b0x * b0x + b0y * b0y + b0z * b0z, b1x * b1x + b1y * b1y + b1z * b1z,
                        b2x * b2x + b2y * b2y + b2z * b2z))
    return mx, my, mz, rho


@njit(cache=True)
def add_point_force(e, xi, L, F, Q):
    """Generalized force S^T F of a point force F (3) on element e at xi (seed 004 eq. 13) added into Q."""
    S, Ss, Sss = np.empty(4), np.empty(4), np.empty(4)
    shape(xi, L, S, Ss, Sss)
    for d in range(3):
        Q[e, d] += S[0] * F[d]
        Q[e, 3 + d] += S[1] * F[d]
        Q[e + 1, d] += S[2] * F[d]
        Q[e + 1, 3 + d] += S[3] * F[d]


def constrained_inverse(M, fixed):
    """Inverse of the free block of the scalar mass matrix (fixed: bool per scalar index), for the explicit step."""
    free = np.flatnonzero(~np.asarray(fixed, bool))
    return np.linalg.inv(M[np.ix_(free, free)]), free


@njit(cache=True)
def accelerations(Q, M, Minv, free, fixed_idx, afix, acc, reaction):
    """Accelerations of the free coordinates of M (x) I3 under forces Q with prescribed accelerations afix of the
    fixed scalar indices; the constraint reactions (force the support puts on the cable) of the fixed ones."""
    accelerations_into(Q, M, Minv, free, fixed_idx, afix, acc, reaction, np.empty((free.shape[0], 3)))


@njit(cache=True, error_model="numpy", fastmath=True)
def accelerations_into(Q, M, Minv, free, fixed_idx, afix, acc, reaction, rhs):
    """accelerations without allocating (rhs: scratch (n_free, 3)); Q and acc (n + 1, 6) C-contiguous, read as
    (2n + 2, 3) rows over the scalar index (node j's r is row 2 j, its r_s row 2 j + 1)."""
    nf, nx, n2 = free.shape[0], fixed_idx.shape[0], M.shape[0]
    Qs, As = Q.reshape((n2, 3)), acc.reshape((n2, 3))
    for i in range(nf):
        j = free[i]
        for d in range(3):
            v = Qs[j, d]
            for k in range(nx):
                v -= M[j, fixed_idx[k]] * afix[k, d]
            rhs[i, d] = v
    for i in range(nf):
        s0, s1, s2 = 0.0, 0.0, 0.0
        for k in range(nf):
            mk = Minv[i, k]
            s0 += mk * rhs[k, 0]
            s1 += mk * rhs[k, 1]
            s2 += mk * rhs[k, 2]
        j = free[i]
        As[j, 0], As[j, 1], As[j, 2] = s0, s1, s2
    for k in range(nx):
        j = fixed_idx[k]
        As[j, 0], As[j, 1], As[j, 2] = afix[k, 0], afix[k, 1], afix[k, 2]
    for k in range(nx):
        j = fixed_idx[k]
        for d in range(3):
            s = -Qs[j, d]
            for i in range(max(0, j - 3), min(n2, j + 4)):      # M is banded (4 x 4 element blocks)
                s += M[j, i] * As[i, d]
            reaction[k, d] = s


@njit(cache=True)
def kinetic_energy(M, qd):
    """1/2 qd^T (M (x) I3) qd."""
    n2 = M.shape[0]
    T = 0.0
    for d in range(3):
        for i in range(n2):
            vi = qd[i // 2, 3 * (i % 2) + d]
            for j in range(n2):
                T += 0.5 * vi * M[i, j] * qd[j // 2, 3 * (j % 2) + d]
    return T


@njit(cache=True)
def static_equilibrium(q, L, EA, EI, rhoA, grav, fixed, Fend, tol, iters, ng=4):
    """Newton on the free coordinates (finite-difference tangent) for a cable at rest under gravity and an end force
    Fend (3) on the last node; fixed: bool (2n + 2) scalar indices held (all three directions); ng Gauss points.
    Returns |residual|."""
    n1 = q.shape[0]
    nd = 6 * n1
    idx = np.empty(nd, np.int64)
    m = 0
    for j in range(n1):
        for i in range(2):
            if not fixed[2 * j + i]:
                for d in range(3):
                    idx[m] = 6 * j + 3 * i + d
                    m += 1
    Q, Q2, qd = np.zeros((n1, 6)), np.zeros((n1, 6)), np.zeros((n1, 6))
    R, K = np.empty(m), np.empty((m, m))
    res = 0.0
    for it in range(iters):
        cable_forces(q, qd, L, EA, EI, 0.0, rhoA, grav, Q, ng)
        for d in range(3):
            Q[n1 - 1, d] += Fend[d]
        res = 0.0
        for a in range(m):
            R[a] = Q[idx[a] // 6, idx[a] % 6]
            res = max(res, abs(R[a]))
        if res < tol:
            break
        for b in range(m):
            jb, cb = idx[b] // 6, idx[b] % 6
            h = 1e-7 * max(1.0, abs(q[jb, cb]))
            q[jb, cb] += h
            cable_forces(q, qd, L, EA, EI, 0.0, rhoA, grav, Q2, ng)
            q[jb, cb] -= h
            for d in range(3):
                Q2[n1 - 1, d] += Fend[d]
            for a in range(m):
                K[a, b] = -(Q2[idx[a] // 6, idx[a] % 6] - R[a]) / h
        dx = np.linalg.solve(K, R)
        for a in range(m):
            q[idx[a] // 6, idx[a] % 6] += dx[a]
    return res


def straight(n, p0, p1):
    """Nodes (n + 1, 6) of a straight unstrained cable from p0 to p1."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    q = np.zeros((n + 1, 6))
    t = (p1 - p0) / np.linalg.norm(p1 - p0)
    for j in range(n + 1):
        q[j, 0:3] = p0 + (p1 - p0) * j / n
        q[j, 3:6] = t
    return q


def max_frequency(M, fixed, L, EA, EI, q):
    """Highest natural frequency (rad/s) of the constrained cable linearized at q (finite differences): the
    explicit step's stability bound is 2 / omega_max."""
    n1 = q.shape[0]
    free3 = [6 * (j // 2) + 3 * (j % 2) + d for j in range(2 * n1) if not fixed[j] for d in range(3)]
    Q0, Q1, qd = np.zeros((n1, 6)), np.zeros((n1, 6)), np.zeros((n1, 6))
    g0 = np.zeros(3)
    cable_forces(q, qd, L, EA, EI, 0.0, 0.0, g0, Q0)
    K = np.zeros((len(free3), len(free3)))
    for b, ib in enumerate(free3):
        qq = q.copy()
        h = 1e-7
        qq.flat[ib] += h
        cable_forces(qq, qd, L, EA, EI, 0.0, 0.0, g0, Q1)
        K[:, b] = -(Q1.flat[free3] - Q0.flat[free3]) / h
    M3 = np.zeros_like(K)
    for a, ia in enumerate(free3):
        for b, ib in enumerate(free3):
            ja, jb = 2 * (ia // 6) + (ia % 6) // 3, 2 * (ib // 6) + (ib % 6) // 3
            if ia % 3 == ib % 3:
                M3[a, b] = M[ja, jb]
    w2 = np.linalg.eigvals(np.linalg.solve(M3, 0.5 * (K + K.T)))
    return math.sqrt(max(w2.real.max(), 0.0))


@njit(cache=True)
def symplectic_step(q, qd, M, Minv, free, fixed_idx, afix, L, EA, EI, eta, rhoA, grav, h, Q, acc, reaction):
    """One explicit symplectic-Euler step of a cable whose fixed coordinates move with prescribed accelerations:
    qd += h a(q, qd); q += h qd. Returns (strain energy, gravity potential, damping power) at the step's start."""
    T, W = gauss_table(L)
    return symplectic_step_t(q, qd, M, Minv, free, fixed_idx, afix, T, W, L, EA, EI, eta, rhoA, grav, h, Q, acc,
                             reaction, np.empty((free.shape[0], 3)))


@njit(cache=True)
def symplectic_step_t(q, qd, M, Minv, free, fixed_idx, afix, T, W, L, EA, EI, eta, rhoA, grav, h, Q, acc, reaction,
                      rhs):
    """symplectic_step with the Gauss table (T, W) and the scratch rhs (n_free, 3) given (the step loop's form)."""
    U, V, P = cable_forces_t(q, qd, T, W, L, EA, EI, eta, rhoA, grav, Q)
    accelerations_into(Q, M, Minv, free, fixed_idx, afix, acc, reaction, rhs)
    for j in range(q.shape[0]):
        for c in range(6):
            qd[j, c] += h * acc[j, c]
            q[j, c] += h * qd[j, c]
    return U, V, P


@njit(cache=True)
def run_free(q, qd, M, Minv, free, fixed_idx, L, EA, EI, eta, rhoA, grav, h, nsteps, E):
    """nsteps steps of a cable with fixed supports; E (nsteps, 4): kinetic, strain, gravity potential, dissipated."""
    Q, acc = np.zeros(q.shape), np.zeros(q.shape)
    afix, reaction = np.zeros((fixed_idx.shape[0], 3)), np.zeros((fixed_idx.shape[0], 3))
    GT, GW = gauss_table(L)
    rhs = np.empty((free.shape[0], 3))
    W = 0.0
    for k in range(nsteps):
        T = kinetic_energy(M, qd)
        U, V, P = symplectic_step_t(q, qd, M, Minv, free, fixed_idx, afix, GT, GW, L, EA, EI, eta, rhoA, grav, h, Q,
                                    acc, reaction, rhs)
        E[k, 0], E[k, 1], E[k, 2], E[k, 3] = T, U, V, W
        W += h * P


@njit(cache=True)
def relax(q, M, Minv, free, fixed_idx, L, EA, EI, rhoA, grav, h, nsteps, tau, ng=4):
    """Dynamic relaxation to a stable static shape (ng Gauss points, as the run's): the motion damped by qd *=
    exp(-h / tau) each step, fixed coordinates held; returns the largest free generalized force left (N)."""
    qd, Q, acc = np.zeros(q.shape), np.zeros(q.shape), np.zeros(q.shape)
    afix, reaction = np.zeros((fixed_idx.shape[0], 3)), np.zeros((fixed_idx.shape[0], 3))
    f = math.exp(-h / tau)
    T, W = gauss_table(L, ng)
    rhs = np.empty((free.shape[0], 3))
    for k in range(nsteps):
        symplectic_step_t(q, qd, M, Minv, free, fixed_idx, afix, T, W, L, EA, EI, 0.0, rhoA, grav, h, Q, acc, reaction,
                          rhs)
        for j in range(q.shape[0]):
            for c in range(6):
                qd[j, c] *= f
    cable_forces(q, qd, L, EA, EI, 0.0, rhoA, grav, Q, ng)
    res = 0.0
    for i in range(free.shape[0]):
        j = free[i]
        for d in range(3):
            res = max(res, abs(Q[j // 2, 3 * (j % 2) + d]))
    return res
