"""Seed 002's equations derived with sympy from the kinematics the seed states, against the engine's planar chain.

Kinetic energy of the craft (M0, J0) and n rods (chord angle phi_k, bending line eta = H1 alpha_k + H2 beta_k, node
masses mu_k) in the craft's moving axes; the craft's rows by the Boltzmann-Hamel equations of its quasi-velocities
(v_Cx, v_Cy, Omega), the rods' by Lagrange's equations. Prints the mass matrix and the velocity terms' largest
difference from solver.core.planar_chain.chain_mass_bias at random states (docs/rods.md).

    python -m bench.rods_sympy [n]
"""
from __future__ import annotations

import sys

import numpy as np
import sympy as sp


def derive(n: int):
    """(p symbols, q symbols, M (sympy), h (sympy), parameter symbols): M p_dot + h = Q of n rods."""
    t, s = sp.symbols("t s", real=True)
    M0, J0, x0, y0 = sp.symbols("M0 J0 x0 y0", positive=True)
    L = sp.symbols(f"l1:{n + 1}", positive=True)
    m = sp.symbols(f"m1:{n + 1}", positive=True)
    mu = sp.symbols(f"mu1:{n + 1}", positive=True)
    vx, vy, Om = (sp.Function(x)(t) for x in ("vx", "vy", "Omega"))
    phi = [sp.Function(f"phi{k}")(t) for k in range(1, n + 1)]
    al = [sp.Function(f"alpha{k}")(t) for k in range(1, n + 1)]
    be = [sp.Function(f"beta{k}")(t) for k in range(1, n + 1)]
    T = sp.Rational(1, 2) * M0 * (vx ** 2 + vy ** 2) + sp.Rational(1, 2) * J0 * Om ** 2
    r = sp.Matrix([x0, y0])
    for k in range(n):
        e = sp.Matrix([sp.cos(phi[k]), sp.sin(phi[k])])
        nv = sp.Matrix([-sp.sin(phi[k]), sp.cos(phi[k])])
        xi = s / L[k]
        eta = L[k] * (al[k] * (xi - 2 * xi ** 2 + xi ** 3) + be[k] * (xi ** 3 - xi ** 2))
        for rho, w, integral in ((r + s * e + eta * nv, m[k], True), (r + L[k] * e, mu[k], False)):
            rd = rho.diff(t)
            V = sp.Matrix([vx - Om * rho[1] + rd[0], vy + Om * rho[0] + rd[1]])
            dT = sp.Rational(1, 2) * w * (V[0] ** 2 + V[1] ** 2)
            T += sp.integrate(sp.expand(dT), (s, 0, L[k])) if integral else dT
        r = r + L[k] * e
    q = [*phi, *al, *be]
    qd = [x.diff(t) for x in q]
    pv = [vx, vy, Om, *qd]
    # symbols in place of the functions and their derivatives
    P = sp.symbols(f"p0:{3 * n + 3}")
    Pd = sp.symbols(f"pd0:{3 * n + 3}")
    Q = sp.symbols(f"q0:{3 * n}")
    sub = {}
    for i, x in enumerate(pv):
        sub[x.diff(t)] = Pd[i]
    for i, x in enumerate(q):
        sub[x.diff(t)] = P[3 + i]
    for i, x in enumerate(pv[:3]):
        sub[x] = P[i]
    for i, x in enumerate(q):
        sub[x] = Q[i]

    def S(expr):
        return expr.subs(sub)   # derivatives first (dict order), then the functions

    dT = [T.diff(x) for x in pv]
    eqs = [sp.diff(dT[0], t) - Om * dT[1], sp.diff(dT[1], t) + Om * dT[0],     # Boltzmann-Hamel, moving axes
           sp.diff(dT[2], t) + vx * dT[1] - vy * dT[0]]
    eqs += [sp.diff(dT[3 + i], t) - T.diff(q[i]) for i in range(3 * n)]      # Lagrange, relative coordinates
    eqs = [S(e) for e in eqs]
    Mm = sp.Matrix([[e.diff(Pd[j]) for j in range(3 * n + 3)] for e in eqs])
    h = sp.Matrix([e.subs({x: 0 for x in Pd}) for e in eqs])
    return P, Q, Mm, h, (M0, J0, x0, y0, L, m, mu)


def compare(n: int = 1, trials: int = 5, seed: int = 2) -> tuple[float, float]:
    """Largest |M - M_engine| / |M| and |h - h_engine| / |h| over random states."""
    from solver.core import planar_chain as PC
    P, Q, Mm, h, (M0, J0, x0, y0, L, m, mu) = derive(n)
    rng = np.random.default_rng(seed)
    RODS = np.zeros((n, PC.NR))
    RODS[:, PC.R_L], RODS[:, PC.R_M], RODS[:, PC.R_MU] = rng.uniform(1, 3, n), rng.uniform(0.3, 2, n), \
        rng.uniform(0.2, 1, n)
    par = {M0: 122.5, J0: 10.0, x0: 0.35, y0: 0.35}
    par.update({L[k]: RODS[k, PC.R_L] for k in range(n)})
    par.update({m[k]: RODS[k, PC.R_M] for k in range(n)})
    par.update({mu[k]: RODS[k, PC.R_MU] for k in range(n)})
    fM = sp.lambdify([P, Q], Mm.subs(par), "numpy")
    fh = sp.lambdify([P, Q], h.subs(par), "numpy")
    dm = dh = 0.0
    nd = 3 * n + 3
    for _ in range(trials):
        p, q = rng.normal(size=nd), np.concatenate([rng.uniform(-3, 3, n), rng.uniform(-0.4, 0.4, 2 * n)])
        Me, he = np.zeros((nd, nd)), np.zeros(nd)
        PC.chain_mass_bias(q, p, RODS, 0.35, 0.35, 122.5, 10.0, Me, he, np.zeros(nd), np.zeros(nd))
        Ms, hs = np.array(fM(p, q), float), np.array(fh(p, q), float).ravel()
        dm = max(dm, np.abs(Ms - Me).max() / np.abs(Ms).max())
        dh = max(dh, np.abs(hs - he).max() / np.abs(hs).max())
    return dm, dh


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    dm, dh = compare(n)
    print(f"n = {n}: mass matrix max relative difference {dm:.1e}, velocity terms {dh:.1e}")
