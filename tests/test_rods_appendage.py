"""Rods on a docking craft (docs/rods.md): solver/core/appendage.py's chain on a free rigid body (momentum, angular
momentum, energy, step halving, the rigid limit) and the probe-cone's [appendage] in a short coupled impact."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from solver import quat
from solver.core import appendage as CA
from solver.core import planar_chain as PC

ROOT = Path(__file__).resolve().parents[1]
WING = ROOT / "resources" / "scenarios" / "central_impact_20t_wing.toml"
RA, E1, E2 = np.array([4.15, 2.25, 0.0]), np.array([0.0, 1.0, 0.0]), np.array([-1.0, 0.0, 0.0])


def _rods(kappa=5.0e4, EI=2.0e4, nu=0.0, n=2):
    R = np.zeros((n, PC.NR))
    R[:, PC.R_L], R[:, PC.R_M], R[:, PC.R_EI], R[:, PC.R_MU] = 3.5, 6.0, EI, 2.0
    R[:, PC.R_KAPPA], R[:, PC.R_NU] = kappa, nu
    return R


class Free:
    """A free rigid body (mass m, inertia Ib in its frame) carrying the chain: the host of `appendage_solve` is its
    own six rows; state y = [x_C, quaternion, v, omega (world), chain q, q_dot]."""

    def __init__(self, RODS, m=2000.0, Ib=np.diag([5e3, 2e4, 2e4]), reduced=False, F=(0, 0, 0), T=(0, 0, 0)):
        self.RODS, self.m, self.Ib, self.reduced = RODS, m, Ib, reduced
        self.F, self.T = np.array(F, float), np.array(T, float)
        n = RODS.shape[0]
        r, c = CA.work_shape(6, n)
        # views typed as the probe-cone's hook passes them (numba compiles appendage_solve once for both)
        self.WK, self.out = np.zeros((r, c + 1))[:, :c], np.zeros(CA.out_size(n))
        self.Mh, self.R = np.zeros((6, 7))[:, :6], np.zeros((3, 4))[:, :3]
        self.rods = np.zeros((n, PC.NR + 1))[:, :PC.NR]
        self.rods[:, :] = RODS

    def rhs(self, y, ra=RA, e1=E1, e2=E2):
        n = self.RODS.shape[0]
        R = quat.to_matrix(y[3:7] / np.linalg.norm(y[3:7]))
        v, w = y[7:10], y[10:13]
        Iw = R @ self.Ib @ R.T
        Mh = self.Mh
        Mh[:, :] = 0.0
        Mh[:3, :3], Mh[3:, 3:] = self.m * np.eye(3), Iw
        self.R[:, :] = R
        bh = np.concatenate([self.F, self.T - np.cross(w, Iw @ w)])
        ud, dx = np.zeros(6), np.zeros(6 * n)
        assert CA.appendage_solve(Mh, bh, 0, self.R, v, w, y[13:], self.rods, ra, e1, e2, self.reduced, ud, dx,
                                  self.out, self.WK)
        return np.concatenate([v, 0.5 * quat.multiply(np.array([0.0, *w]), y[3:7]), ud, dx])

    def run(self, y, h, steps):
        for _ in range(steps):
            k1 = self.rhs(y)
            k2 = self.rhs(y + 0.5 * h * k1)
            k3 = self.rhs(y + 0.5 * h * k2)
            k4 = self.rhs(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y

    def invariants(self, y):
        """Linear momentum, angular momentum about the world origin and energy (kinetic + stored) of body + chain."""
        self.rhs(y)
        R = quat.to_matrix(y[3:7] / np.linalg.norm(y[3:7]))
        v, w = y[7:10], y[10:13]
        Iw = R @ self.Ib @ R.T
        o = self.out
        p = self.m * v + o[CA.O_P:CA.O_P + 3]
        H = np.cross(y[:3], p) + Iw @ w + o[CA.O_H:CA.O_H + 3]
        return p, H, 0.5 * self.m * v @ v + 0.5 * w @ Iw @ w + o[CA.O_KE] + o[CA.O_PE]


def _moving(n=2, general=True):
    y = np.zeros(13 + 6 * n)
    y[3] = 1.0
    y[7:10], y[10:13] = [0.1, -0.05, 0.02], [0.05, -0.1, 0.2]
    y[13:13 + n] = [0.05, -0.1]
    if general:
        y[13 + n:13 + 2 * n] = [0.01, 0.02]
    y[13 + 3 * n:13 + 4 * n] = [0.3, -0.2]
    return y


def test_a_chain_on_a_free_body_keeps_momentum_angular_momentum_and_energy_and_halving_the_step_converges():
    """Free flight, no contact, no damping, a 3-D tumble with every chain coordinate moving: momentum and angular
    momentum of body + chain constant to 1e-8 of their size, energy to 1e-6; halving the RK4 step cuts the energy
    error and the state's difference by RK4's 16x (general form); the reduced form keeps both momenta as well."""
    sys = Free(_rods())
    y0 = _moving()
    p0, H0, E0 = sys.invariants(y0)
    ya, yb, yc = sys.run(y0, 4e-4, 250), sys.run(y0, 2e-4, 500), sys.run(y0, 1e-4, 1000)
    p1, H1, E1 = sys.invariants(yc)
    assert np.abs(p1 - p0).max() < 1e-8 * np.abs(p0).max(), (p1 - p0)
    assert np.abs(H1 - H0).max() < 1e-8 * np.abs(H0).max(), (H1 - H0)
    assert abs(E1 - E0) < 1e-6 * E0, (E1 - E0) / E0
    Ea, Eb = sys.invariants(ya)[2], sys.invariants(yb)[2]
    assert 8.0 < abs(Ea - E0) / abs(Eb - E0) < 64.0 and 8.0 < abs(Eb - E0) / abs(E1 - E0) < 64.0   # RK4: ~ h^4..5
    assert 8.0 < np.abs(ya - yb).max() / np.abs(yb - yc).max() < 32.0
    red = Free(_rods(), reduced=True)
    y0 = _moving(general=False)
    p0, H0, _ = red.invariants(y0)
    p1, H1, _ = red.invariants(red.run(y0, 4e-4, 250))
    assert np.abs(p1 - p0).max() < 1e-9 * np.abs(p0).max() and np.abs(H1 - H0).max() < 1e-9 * np.abs(H0).max()


@pytest.mark.parametrize("reduced", [False, True])
def test_in_plane_the_chain_on_a_3d_body_is_the_rods_types_chain(reduced):
    """A body turned about z, moving in x-y, the chain in its x-y plane (damped hinges, bent rods, every rate): the
    3-D coupling's accelerations are the rods type's planar equations (solver/mechanisms/rods/dynamics.evaluate) to
    1e-12 of their size, in both formulations (the reduced form's solved slopes too); none out of the plane."""
    from solver.mechanisms.rods import dynamics as RD
    n, M0, J0, x0, y0 = 2, 2000.0, 2e4, 4.15, 2.25
    RODS = _rods(nu=50.0)
    RODS[1, PC.R_L], RODS[1, PC.R_M], RODS[1, PC.R_KAPPA] = 3.0, 4.0, 3e4
    th, vx, vy, om = 0.3, 0.1, -0.05, 0.2
    q, qd = np.array([0.05, -0.1, 0.01, 0.02, -0.015, 0.005]), np.array([0.3, -0.2, 0.1, -0.3, 0.2, 0.05])
    if reduced:
        q[n:], qd[n:] = 0.0, 0.0
    P = np.zeros(RD.NP)
    P[RD.P_M0], P[RD.P_J0], P[RD.P_X0], P[RD.P_Y0], P[RD.P_FORM] = M0, J0, x0, y0, float(reduced)
    ns, nz = RD.sizes(n)
    nd, nq, nt, nw = 3 * n + 3, 3 * n, n + 3, 2 * n
    s, iv = np.zeros(ns), 3 + 3 * n
    s[2], s[3:iv], s[iv:iv + 3], s[iv + 3:iv + 3 + nq] = th, q, [vx, vy, om], qd
    ds, aux = np.zeros(ns), np.zeros(RD.n_aux(n))
    assert RD.evaluate(s, np.zeros(nz), P, RODS, 0.0, 0.0, 0.0, np.zeros((nd, nd)), np.zeros(nd), np.zeros(nd),
                       np.zeros(nd), np.zeros((nq, nq)), np.zeros((nq, nq)), np.zeros((nt, nt)), np.zeros(nd),
                       np.zeros(nd), np.zeros((nw, nw)), np.zeros(n), np.zeros(n), ds, aux)
    body = Free(RODS, M0, np.diag([1e4, 1e4, J0]), reduced=reduced)
    c, sn = math.cos(th), math.sin(th)
    y = np.zeros(13 + 2 * nq)
    y[3], y[6] = math.cos(th / 2), math.sin(th / 2)
    y[7:10], y[12], y[13:] = [c * vx - sn * vy, sn * vx + c * vy, 0.0], om, np.concatenate([q, qd])
    dy = body.rhs(y, ra=np.array([x0, y0, 0.0]), e1=np.array([1.0, 0, 0]), e2=np.array([0, 1.0, 0]))
    R = quat.to_matrix(y[3:7])
    a_body = R.T @ dy[7:10] - np.cross([0, 0, om], [vx, vy, 0.0])      # d/dt of the velocity's body components
    ours = np.concatenate([a_body[:2], [dy[12]], dy[13 + nq:13 + nq + (n if reduced else nq)]])
    theirs = ds[iv:iv + 3 + (n if reduced else nq)]
    assert np.abs(ours - theirs).max() < 1e-12 * np.abs(theirs).max(), (ours, theirs)
    assert np.abs(dy[[9, 10, 11]]).max() < 1e-12 * np.abs(theirs).max()
    if reduced:
        assert np.abs(body.out[CA.O_W:CA.O_W + nw] - aux[:nw]).max() < 1e-12


def _rigid_composite(RODS, m, Ib):
    """Mass, CoM (body frame) and inertia about it of the body with the straight chain as rigid masses."""
    pts, ms = [np.zeros(3)], [m]
    r = RA.copy()
    for k in range(RODS.shape[0]):
        l, mk = RODS[k, PC.R_L], RODS[k, PC.R_M]
        for xi, w in zip(PC.GAUSS_X, PC.GAUSS_W):
            pts.append(r + xi * l * E1)
            ms.append(w * mk * l)
        r = r + l * E1
        pts.append(r.copy())
        ms.append(RODS[k, PC.R_MU])
    pts, ms = np.array(pts), np.array(ms)
    M = ms.sum()
    c = (ms[:, None] * pts).sum(0) / M
    d = pts - c
    I = Ib + sum(mi * ((di @ di) * np.eye(3) - np.outer(di, di)) for mi, di in zip(ms[1:], d[1:])) \
        + m * ((d[0] @ d[0]) * np.eye(3) - np.outer(d[0], d[0]))
    return M, c, I


@pytest.mark.parametrize("reduced", [False, True])
def test_stiffer_hinges_and_panels_move_the_body_as_rigid_masses_on_it(reduced):
    """A force and a moment on the body from rest for 0.05 s: with hinges and panels 1000 times stiffer than the wing's
    the body's turn and displacement are the rigid composite's (the chain's masses fixed on the body) within 0.5 % and
    0.05 %, and the gap closes as 1/stiffness (100 times stiffer: > 8 times larger)."""
    m, Ib = 2000.0, np.diag([5e3, 2e4, 2e4])
    F, T = np.array([400.0, 300.0, -200.0]), np.array([50.0, -80.0, 120.0])
    gaps = []
    for scale in (100.0, 1000.0):
        RODS = _rods(kappa=5e4 * scale, EI=2e4 * scale)
        y = np.zeros(13 + 6 * RODS.shape[0])
        y[3] = 1.0
        y = Free(RODS, m, Ib, reduced=reduced, F=F, T=T).run(y, 1e-4, 500)
        M, c, I = _rigid_composite(RODS, m, Ib)
        t = 0.05     # the rigid composite from rest (small angles): turn 1/2 alpha t^2, the body's CoM with it
        th = 0.5 * np.linalg.solve(I, T + np.cross(-c, F)) * t * t
        x = 0.5 * F / M * t * t + np.cross(th, -c)
        gaps.append((np.abs(2.0 * y[4:7] - th).max() / np.abs(th).max(), np.abs(y[:3] - x).max() / np.abs(x).max()))
    assert gaps[1][0] < 5e-3 and gaps[1][1] < 5e-4, gaps
    assert gaps[0][0] > 8.0 * gaps[1][0] and gaps[0][1] > 8.0 * gaps[1][1], gaps


@pytest.fixture(scope="module")
def wing_run(tmp_path_factory):
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    out = run_scenario(WING, tmp_path_factory.mktemp("wing") / "wing.h5", t_end=0.7)
    with RunFile(out) as r:
        yield r


def test_a_central_impact_with_the_wing_runs_coupled_and_writes_its_channels_and_flexible_rods(wing_run):
    """central_impact_20t_wing to 0.7 s (through capture at 0.56 s): the wing's channels and its two rods as flexible
    parts on the active craft, rooted where the scenario says; the contact swings the wing (root moment > 0.2 N*m) and
    the wing's reaction turns the ship (Mz at the base); momentum of both craft, mechanism and
    wing constant, energy balance flat to 5 mJ of 215 J."""
    r = wing_run
    assert math.isfinite(r.t_capture) and abs(r.t_capture - 0.561) < 0.01
    for k in (0, 1):
        assert f"wing_hinge{k}_angle" in r.channels and f"wing_hinge{k}_moment" in r.channels
    assert np.abs(r.channel("wing_M_root1")).max() > 0.2
    assert np.abs(r.channel("Mz")).max() > 1e-4          # central_impact_20t's own: 1.4e-6 (round-off)
    assert [p.name for p in r.flexible_parts] == ["wing_rod1", "wing_rod2"]
    p0 = r.flexible_points("wing_rod1", 0)
    assert np.allclose(p0[0], [9.3, 2.25, 0.0]) and np.allclose(p0[-1], [9.3, 5.75, 0.0], atol=1e-9)
    f = int(np.argmax(np.abs(r.channel("wing_phi1"))))
    phi = np.radians([r.channel_at("wing_phi1", f), r.channel_at("wing_phi2", f)])
    tip = r.flexible_points("wing_rod2", f)[-1]          # chords turned about z from +y: toward -x for phi > 0
    assert np.allclose(tip, [9.3 - 3.5 * np.sin(phi).sum(), 2.25 + 3.5 * np.cos(phi).sum(), 0.0], atol=1e-4)
    assert abs(tip[0] - 9.3) > 1e-4
    mom = np.array([r.channel(f"momentum_{c}") for c in "xyz"])
    assert np.abs(mom - mom[:, :1]).max() < 1e-6 * np.abs(mom[:, 0]).max()
    e = r.channel("total_energy")
    assert np.abs(e - e[0]).max() < 5e-3


def test_a_plain_probe_cone_run_lists_no_appendage_unit():
    """The hook is compiled only for a scenario with an [appendage]: a plain run's kernel units do not name it."""
    from solver.mechanisms.probe_cone.simulate import kernel_units
    from solver.scenario import load_model
    plain = [u[0] for u in kernel_units(load_model(ROOT / "resources" / "scenarios" / "central_impact_20t.toml"))]
    wing = [u[0] for u in kernel_units(load_model(WING))]
    assert "appendage_step" not in plain and "appendage_step" in wing


@pytest.mark.parametrize("old,new,key,problem", [
    ("normal = [0.0, 0.0, 1.0]", "normal = [0.0, 1.0, 1.0]", "appendage.normal", "must be nonzero and at right angles"),
    ('system = "rods_solar_wing"', 'system = "no_such_wing"', "appendage.system", "no rod-system file"),
    ('name = "wing"', 'name = "wing"\nphi = [0.01]', "appendage.phi", "must be a list of 2 numbers"),
    ('name = "wing"', 'name = "wing"\nsprng = 1.0', "appendage.sprng", "unknown key"),
])
def test_a_bad_appendage_is_refused_naming_the_scenario_and_its_key(tmp_path, old, new, key, problem):
    from solver.scenario import ScenarioError, load_model
    text = WING.read_text()
    assert old in text
    p = tmp_path / "bad.toml"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(ScenarioError) as ei:
        load_model(p)
    assert ei.value.path == str(p) and ei.value.key == key and problem in ei.value.problem, str(ei.value)
