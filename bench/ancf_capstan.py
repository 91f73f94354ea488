"""A cable over a fixed rod pulled at both ends (the capstan): the core's ANCF cable (solver.core.ancf_cable) with a
Hertz contact and the engine's sticking friction (the bristle, solver.contact.friction) on a cylinder, one end pulled at constant
speed, the other loaded by a dead weight; the steady sliding tension ratio against e^(mu theta), theta = pi.
Usage: python -m bench.ancf_capstan"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.contact.friction import advance_stretch, point_bristle, point_open
from solver.core import ancf_cable as A


@njit(cache=True)
def run(q, qd, M, Minv, free, fixi, Le, EA, EI, eta, alpha, Rc, rc, KH, C, mu, kt, ct, T_low, v_pull, T_high, h,
        nsteps, DS, out):
    """Explicit steps, end 0 pulled at v_pull (or, with no fixed index, loaded by T_high); out (nsteps, 4): tension
    at end 0, contact force sum, y of end 0 and of the other end."""
    n1 = q.shape[0]
    Q, acc = np.zeros(q.shape), np.zeros(q.shape)
    afix, reac = np.zeros((fixi.shape[0], 3)), np.zeros((fixi.shape[0], 3))
    T, W = A.gauss_table(Le)
    g0 = np.zeros(3)
    y0 = q[0, 1]
    UB, I3 = np.zeros(3 * (n1 - 1) * DS.shape[0]), np.eye(3)     # the bristles' stretch per detection point
    ACT = np.zeros(((n1 - 1) * DS.shape[0], 5))                    # closed points: bristle index, e, point, normal
    for k in range(nsteps):
        t = k * h
        if fixi.shape[0] > 0:
            q[0, 1], qd[0, 1] = y0 - v_pull * t, -v_pull
        A.cable_forces_t(q, qd, T, W, Le, EA, EI, eta, 0.0, g0, Q)
        Q[n1 - 1, 1] -= T_low
        Q[0, 1] -= T_high
        fsum = 0.0
        nact = 0
        for e in range(n1 - 1):
            for j in range(DS.shape[0]):
                S0, S1, S2, S3 = DS[j, 0], DS[j, 1], DS[j, 2], DS[j, 3]
                x = S0 * q[e, 0] + S1 * q[e, 3] + S2 * q[e + 1, 0] + S3 * q[e + 1, 3]
                y = S0 * q[e, 1] + S1 * q[e, 4] + S2 * q[e + 1, 1] + S3 * q[e + 1, 4]
                d = math.sqrt(x * x + y * y)
                delta = Rc + rc - d
                jb = 3 * (e * DS.shape[0] + j)
                if delta <= 0.0:
                    point_open(UB, jb, kt)
                    continue
                nx, ny = x / d, y / d
                vx = S0 * qd[e, 0] + S1 * qd[e, 3] + S2 * qd[e + 1, 0] + S3 * qd[e + 1, 3]
                vy = S0 * qd[e, 1] + S1 * qd[e, 4] + S2 * qd[e + 1, 1] + S3 * qd[e + 1, 4]
                vz = S0 * qd[e, 2] + S1 * qd[e, 5] + S2 * qd[e + 1, 2] + S3 * qd[e + 1, 5]
                vn = vx * nx + vy * ny
                fn = max(KH * delta * math.sqrt(delta) - C * vn, 0.0)
                ff = point_bristle(UB, jb, I3, (nx, ny, 0.0), (vx - vn * nx, vy - vn * ny, vz), fn, mu, kt, ct)[0]
                ACT[nact, 0], ACT[nact, 1], ACT[nact, 2], ACT[nact, 3], ACT[nact, 4] = jb, e, j, nx, ny
                nact += 1
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
        for r in range(nact):                     # the stretch moves with the step's new velocities
            e, j = int(ACT[r, 1]), int(ACT[r, 2])
            S0, S1, S2, S3 = DS[j, 0], DS[j, 1], DS[j, 2], DS[j, 3]
            v = (S0 * qd[e, 0] + S1 * qd[e, 3] + S2 * qd[e + 1, 0] + S3 * qd[e + 1, 3],
                 S0 * qd[e, 1] + S1 * qd[e, 4] + S2 * qd[e + 1, 1] + S3 * qd[e + 1, 4],
                 S0 * qd[e, 2] + S1 * qd[e, 5] + S2 * qd[e + 1, 2] + S3 * qd[e + 1, 5])
            advance_stretch(UB, int(ACT[r, 0]), I3, (ACT[r, 3], ACT[r, 4], 0.0), v, kt, h)
        out[k, 0] = math.sqrt(reac[0, 0] ** 2 + reac[0, 1] ** 2 + reac[0, 2] ** 2) if fixi.shape[0] > 0 else T_high
        out[k, 1] = fsum
        out[k, 2], out[k, 3] = q[0, 1], q[n1 - 1, 1]


def capstan(mu=0.15, T_low=10.0, v_pull=0.05, T_high=0.0, T=1.5, n=30, kt=1e5, ct=2.0):
    """The cable over the rod (theta = pi): end 0 pulled at v_pull, or (T_high > 0) free and loaded by T_high; the
    other end loaded by T_low. Returns out (steps, 4) of `run` and the step."""
    E, rho, d, Rc, straight = 2e8, 7800.0, 0.003, 0.05, 0.25
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
    fixed[0] = T_high <= 0.0                        # the pulled end: position prescribed
    Minv, free = A.constrained_inverse(M, fixed)
    DS = np.zeros((4, 4))
    for k in range(4):
        A.shape((k + 0.5) / 4, Le, DS[k], np.empty(4), np.empty(4))
    h = 1e-5
    out = np.zeros((int(round(T / h)), 4))
    Rstar = rc * Rc / (rc + Rc)
    KH = 4 / 3 * 1.1e11 * math.sqrt(Rstar) * 0.01    # a softer Hertz factor (1 % of steel's): the ratio does not
    run(q, np.zeros_like(q), M, Minv, free, np.flatnonzero(fixed), Le, E * Ar, E * I, 1e-5, 2.0, Rc, rc, KH, 5.0, mu,
        kt, ct, T_low, v_pull, T_high, h, out.shape[0], DS, out)  # depend on it
    return out, h


def main(mu=0.15, T_low=10.0):
    out, h = capstan(mu, T_low)
    tail = out[int(1.0 / h):, 0]
    print(f"capstan: mu {mu}, theta pi, pulled-end tension {tail.mean():.3f} N (+-{tail.std():.3f}) over a "
          f"{T_low} N dead load: ratio {tail.mean() / T_low:.4f}, e^(mu pi) = {math.exp(mu * math.pi):.4f}, "
          f"error {tail.mean() / T_low / math.exp(mu * math.pi) - 1:+.2%}")
    st, h = capstan(mu, T_low, T_high=1.3 * T_low, T=2.0)
    a, b = int(1.0 / h), len(st) - 1
    print(f"stick: {1.3 * T_low:.1f} N against {T_low} N (ratio 1.3 < e^(mu pi)), end 0 moves "
          f"{(st[b, 2] - st[a, 2]) * 1e6:+.2f} um from 1 to 2 s (mean creep {(st[b, 2] - st[a, 2]) * 1e6:+.3f} um/s)")


if __name__ == "__main__":
    for m in (0.15, 0.3):
        main(m)
