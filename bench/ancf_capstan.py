"""A cable over a fixed rod pulled at both ends (the capstan): the core's ANCF cable (solver.core.ancf_cable) with a
Hertz contact and the stick-ramp Coulomb law (solver.contact.friction) on a cylinder, one end pulled at constant
speed, the other loaded by a dead weight; the steady sliding tension ratio against e^(mu theta), theta = pi.
Usage: python -m bench.ancf_capstan"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.friction import coulomb_ramp
from solver.core import ancf_cable as A


@njit(cache=True)
def run(q, qd, M, Minv, free, fixi, Le, EA, EI, eta, alpha, Rc, rc, KH, C, mu, vs, T_low, v_pull, h, nsteps, DS, out):
    """Explicit steps; out (nsteps, 2): tension at the pulled end, contact force sum."""
    n1 = q.shape[0]
    Q, acc = np.zeros(q.shape), np.zeros(q.shape)
    afix, reac = np.zeros((fixi.shape[0], 3)), np.zeros((fixi.shape[0], 3))
    T, W = A.gauss_table(Le)
    g0 = np.zeros(3)
    ff = np.empty(3)
    y0 = q[0, 1]
    m_pt = 0.0                                    # mass of a detection point's share of an element
    for a in range(0, M.shape[0], 2):
        for b in range(0, M.shape[0], 2):
            m_pt += M[a, b]
    m_pt /= (n1 - 1) * DS.shape[0]
    for k in range(nsteps):
        t = k * h
        q[0, 1], qd[0, 1] = y0 - v_pull * t, -v_pull
        A.cable_forces_t(q, qd, T, W, Le, EA, EI, eta, 0.0, g0, Q)
        Q[n1 - 1, 1] -= T_low
        fsum = 0.0
        for e in range(n1 - 1):
            for j in range(DS.shape[0]):
                S0, S1, S2, S3 = DS[j, 0], DS[j, 1], DS[j, 2], DS[j, 3]
                x = S0 * q[e, 0] + S1 * q[e, 3] + S2 * q[e + 1, 0] + S3 * q[e + 1, 3]
                y = S0 * q[e, 1] + S1 * q[e, 4] + S2 * q[e + 1, 1] + S3 * q[e + 1, 4]
                d = math.sqrt(x * x + y * y)
                delta = Rc + rc - d
                if delta <= 0.0:
                    continue
                nx, ny = x / d, y / d
                vx = S0 * qd[e, 0] + S1 * qd[e, 3] + S2 * qd[e + 1, 0] + S3 * qd[e + 1, 3]
                vy = S0 * qd[e, 1] + S1 * qd[e, 4] + S2 * qd[e + 1, 1] + S3 * qd[e + 1, 4]
                vz = S0 * qd[e, 2] + S1 * qd[e, 5] + S2 * qd[e + 1, 2] + S3 * qd[e + 1, 5]
                vn = vx * nx + vy * ny
                fn = max(KH * delta * math.sqrt(delta) - C * vn, 0.0)
                v_s = max(vs, mu * fn * h / m_pt)
                coulomb_ramp(fn, vx - vn * nx, vy - vn * ny, vz, mu, v_s, ff)
                F = (fn * nx + ff[0], fn * ny + ff[1], ff[2])
                for dd in range(3):
                    Q[e, dd] += S0 * F[dd]
                    Q[e, 3 + dd] += S1 * F[dd]
                    Q[e + 1, dd] += S2 * F[dd]
                    Q[e + 1, 3 + dd] += S3 * F[dd]
                fsum += fn
        A.accelerations(Q, M, Minv, free, fixi, afix, acc, reac)
        for a in range(n1):
            for c in range(6):
                qd[a, c] = (qd[a, c] + h * acc[a, c]) * (1.0 - alpha * h)
                q[a, c] += h * qd[a, c]
        out[k, 0] = math.sqrt(reac[0, 0] ** 2 + reac[0, 1] ** 2 + reac[0, 2] ** 2)
        out[k, 1] = fsum


def main(mu=0.15, T_low=10.0):
    E, rho, d, Rc, straight, n = 2e8, 7800.0, 0.003, 0.05, 0.25, 30
    rc = d / 2
    Ar, I = math.pi * d * d / 4, math.pi * d ** 4 / 64
    Rw = Rc + rc
    L = 2 * straight + math.pi * Rw
    Le = L / n
    q = np.zeros((n + 1, 6))
    for j in range(n + 1):                          # down the left side, over the rod, down the right side
        s = j * Le
        if s <= straight:
            q[j, 0:3], q[j, 3:6] = (-Rw, -straight + s, 0), (0, 1, 0)
        elif s <= straight + math.pi * Rw:
            a = math.pi - (s - straight) / Rw
            q[j, 0:3], q[j, 3:6] = (Rw * math.cos(a), Rw * math.sin(a), 0), (math.sin(a), -math.cos(a), 0)
        else:
            q[j, 0:3], q[j, 3:6] = (Rw, -(s - straight - math.pi * Rw), 0), (0, -1, 0)
    q[:, 0] *= (Rc + 0.999 * rc) / Rw               # a touch of preload on the rod
    M = A.mass_matrix(n, Le, rho * Ar)
    fixed = np.zeros(2 * n + 2, bool)
    fixed[0] = True                                 # the pulled end: position prescribed
    Minv, free = A.constrained_inverse(M, fixed)
    DS = np.zeros((4, 4))
    for k in range(4):
        A.shape((k + 0.5) / 4, Le, DS[k], np.empty(4), np.empty(4))
    h, T = 1e-5, 1.5
    out = np.zeros((int(T / h), 2))
    Rstar = rc * Rc / (rc + Rc)
    KH = 4 / 3 * 1.1e11 * math.sqrt(Rstar) * 0.01    # a softer Hertz factor (1 % of steel's): the ratio does not
    run(q, np.zeros_like(q), M, Minv, free, np.flatnonzero(fixed), Le, E * Ar, E * I, 1e-5, 2.0, Rc, rc, KH, 5.0, mu,
        1e-3, T_low, 0.05, h, out.shape[0], DS, out)  # depend on it
    tail = out[int(1.0 / h):, 0]
    print(f"capstan: mu {mu}, theta pi, pulled-end tension {tail.mean():.3f} N (+-{tail.std():.3f}) over a "
          f"{T_low} N dead load: ratio {tail.mean() / T_low:.4f}, e^(mu pi) = {math.exp(mu * math.pi):.4f}, "
          f"error {tail.mean() / T_low / math.exp(mu * math.pi) - 1:+.2%}")


if __name__ == "__main__":
    for m in (0.15, 0.3):
        main(m)
