"""Speed work keeps the model's numbers: the closed-form craft block equals the general CRBA sum bit for bit, and
bench/compare_runs.py finds identical runs identical and a changed one changed."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from solver.core.free_body import inertia_world
from solver.mechanisms.probe_cone import dynamics as D
from solver.simulate import run_scenario
from solver.vec3 import add, cross, mv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.compare_runs import compare  # noqa: E402

pytestmark = pytest.mark.slow   # the skip-table equivalence runs take 10-30 s each


def _general_craft(m, I, om):
    """The general CRBA sum of `evaluate` for the craft (Jacobian at its CoM), in the same operation order."""
    JV = np.zeros((3, 6))
    JW = np.zeros((3, 6))
    for j in range(3):
        JV[j, j] = 1.0
        JW[j, 3 + j] = 1.0
    d = (0.0, 0.0, 0.0)
    JV[1, 3], JV[2, 3] = -d[2], d[1]
    JV[0, 4], JV[2, 4] = d[2], -d[0]
    JV[0, 5], JV[1, 5] = -d[1], d[0]
    M, b = np.zeros((6, 6)), np.arange(6.0) - 2.5
    a0 = al0 = (0.0, 0.0, 0.0)
    gyro = add(mv(I, al0), cross(om, mv(I, om)))
    for i in range(6):
        jvi, jwi = tuple(JV[:, i]), tuple(JW[:, i])
        b[i] -= m * (jvi[0] * a0[0] + jvi[1] * a0[1] + jvi[2] * a0[2]) + \
            (jwi[0] * gyro[0] + jwi[1] * gyro[1] + jwi[2] * gyro[2])
        Ijw = mv(I, jwi)
        for j in range(i + 1):
            M[i, j] += m * (JV[0, j] * jvi[0] + JV[1, j] * jvi[1] + JV[2, j] * jvi[2]) + \
                JW[0, j] * Ijw[0] + JW[1, j] * Ijw[1] + JW[2, j] * Ijw[2]
    return M, b, gyro


def test_craft_block_is_the_general_sum_bit_for_bit():
    rng = np.random.default_rng(4)
    for _ in range(200):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        R = (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z),
             1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x),
             1 - 2 * (x * x + y * y))
        J = np.diag(rng.uniform(1e4, 2e5, 3)) + np.triu(rng.normal(0, 3e3, (3, 3)), 1)
        J = J + np.triu(J, 1).T
        I = inertia_world(R, tuple(J.ravel()))
        om = tuple(rng.normal(0, 0.05, 3))
        m = float(rng.uniform(5e3, 3e4))
        M_ref, b_ref, gyro = _general_craft(m, I, om)
        M, b = np.zeros((6, 6)), np.arange(6.0) - 2.5
        D._craft_block(M, b, m, I, gyro)
        assert np.array_equal(M, M_ref) and np.array_equal(b, b_ref)


def test_compare_runs_identical_and_changed(tmp_path):
    scen = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    run_scenario(scen, a, t_end=0.05)
    run_scenario(scen, b, t_end=0.05)
    worst, rows, problems = compare(a, b)
    assert worst == 0.0 and not problems and len(rows) > 100
    c = tmp_path / "c.h5"
    shutil.copy(b, c)
    with h5py.File(c, "r+") as f:
        f["channels/Fx"][10] += 1e-6 * max(1.0, np.abs(f["channels/Fx"][:]).max())
    worst, rows, problems = compare(a, c)
    assert dict(rows)["channels/Fx"] > 0 and worst == dict(rows)["channels/Fx"]


def test_crba_rows_are_the_general_sum_bit_for_bit():
    """`_crba_row` leaves out the craft columns' exact zero and unit products: same bits as the full sums."""
    rng = np.random.default_rng(11)
    for _ in range(100):
        JV, JW = np.zeros((3, 3, D.ND)), np.zeros((3, 3, D.ND))
        ax = [tuple(v / np.linalg.norm(v)) for v in rng.normal(size=(5, 3))]
        rA, pG, pE = (tuple(rng.normal(scale=s, size=3)) for s in (5.0, 1.0, 1.0))
        for bd, nc in ((1, 8), (2, 11)):
            D._body_jac(JV, JW, bd, tuple(rng.normal(size=3)), nc, rA, pG, pE, *ax)
            A = rng.normal(size=(3, 3))
            I = tuple((A @ A.T + np.eye(3)).ravel())
            m = float(rng.uniform(1.0, 100.0))
            M, M_ref = rng.normal(size=(D.ND, D.ND)), None
            M_ref = M.copy()
            for i in range(nc):
                jvi = (JV[bd, 0, i], JV[bd, 1, i], JV[bd, 2, i])
                Ijw = mv(I, (JW[bd, 0, i], JW[bd, 1, i], JW[bd, 2, i]))
                D._crba_row(M, JV, JW, bd, i, m, jvi, Ijw)
                for j in range(i + 1):
                    M_ref[i, j] += m * (JV[bd, 0, j] * jvi[0] + JV[bd, 1, j] * jvi[1] + JV[bd, 2, j] * jvi[2]) + \
                        JW[bd, 0, j] * Ijw[0] + JW[bd, 1, j] * Ijw[1] + JW[bd, 2, j] * Ijw[2]
            assert np.array_equal(M, M_ref)


def test_step_broad_phase_gives_the_contacts_of_the_full_pair_loop():
    """`evaluate_pairs_step`: pairs found apart at a step's first stage are skipped there and at its later stages (poses
    moved as far as the step's motion) with the outputs of `evaluate_pairs`; a fast pair is never skipped."""
    from solver.contact import BODIES, load
    from solver.contact.pairset import PairSetOutput, evaluate_pairs, evaluate_pairs_step
    from solver.contact.kernels import LATCH_TIP, ROLLER
    geo = load()
    nb, npair, h = len(BODIES), len(geo.pair_names), 2.5e-4
    rng = np.random.default_rng(5)
    skipped = touching = 0
    near = np.zeros(npair)
    for _ in range(2000):
        pos = rng.normal(scale=0.05, size=(nb, 3))
        x = rng.uniform(-0.6, 0.2)
        pos[4] = (x, *rng.normal(scale=0.15, size=2))           # probe head near or in the cone
        pos[2] = pos[3] = pos[5] = pos[4] + (rng.uniform(0.3, 0.9), 0.0, 0.0)
        rot = np.tile(np.eye(3), (nb, 1, 1))
        vel = rng.normal(scale=0.5, size=(nb, 3))
        om = rng.normal(scale=0.5, size=(nb, 3))
        state = rng.uniform(0, 1, size=6)
        o = PairSetOutput(npair)
        args = (geo.prim, geo.pint, geo.pairs, geo.ppar)
        s0 = evaluate_pairs_step(*args, pos, rot, vel, om, state, geo.work, o.active, o.depth, o.point, o.normal,
                                 o.force, o.diag, near, True, h)
        r = PairSetOutput(npair)
        assert s0 == evaluate_pairs(*args, pos, rot, vel, om, state, geo.work, r.active, r.depth, r.point, r.normal,
                                    r.force, r.diag)
        if s0 != 0:
            continue
        for f in ("active", "depth", "point", "normal", "force"):
            np.testing.assert_array_equal(getattr(o, f), getattr(r, f))
        kinds = geo.pint[geo.pairs[:, 0], 0]
        assert all(near[k] for k in range(npair) if kinds[k] in (LATCH_TIP, ROLLER))
        skipped += int((near == 0).sum())
        frac = rng.uniform(0.0, 1.0)
        pos2 = pos + vel * h * frac * 1.5 + rng.normal(scale=1e-5, size=pos.shape)
        a, b = PairSetOutput(npair), PairSetOutput(npair)
        sa = evaluate_pairs_step(*args, pos2, rot, vel, om, state, geo.work, a.active, a.depth, a.point, a.normal,
                                 a.force, a.diag, near, False, h)
        sb = evaluate_pairs(*args, pos2, rot, vel, om, state, geo.work, b.active, b.depth, b.point, b.normal,
                            b.force, b.diag)
        assert sa == sb
        for f in ("active", "depth", "point", "normal", "force"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        touching += int(b.active.any())
    assert skipped > 1000 and touching > 20                 # the sample skips pairs and does hit surfaces
    vel = np.zeros((nb, 3))
    vel[1] = 50.0                                            # 50 m/s: too fast for the pad, nothing skipped
    o = PairSetOutput(npair)
    evaluate_pairs_step(geo.prim, geo.pint, geo.pairs, geo.ppar, pos, rot, vel, np.zeros((nb, 3)), state, geo.work,
                        o.active, o.depth, o.point, o.normal, o.force, o.diag, near, True, h)
    assert near[[k for k in range(npair) if geo.pint[geo.pairs[k, 1], 1] == 0 and
                 geo.pint[geo.pairs[k, 0], 1] == 1]].all()


def test_output_step_records_the_same_states_at_fewer_frames(tmp_path):
    """A coarser output step changes no number: its frames are the 1 ms run's frames at the same times."""
    from solver.scenario import ScenarioError
    scen = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    run_scenario(scen, a, t_end=0.4)
    run_scenario(scen, b, t_end=0.4, output_step=0.005)
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        assert fb.attrs["output_step"] == 0.005 and fb["time"].shape[0] == 81
        np.testing.assert_array_equal(fb["time"][:], fa["time"][::5])
        for name in ("channels/Fx", "channels/total_energy", "bodies/position", "contacts/latch_neck/force"):
            np.testing.assert_array_equal(fb[name][:], fa[name][::5])
    for bad in (0.0007, -0.01, float("nan")):
        try:
            run_scenario(scen, tmp_path / "c.h5", t_end=0.1, output_step=bad)
        except ScenarioError as exc:
            assert "output_step" in str(exc)
        else:
            raise AssertionError(f"output_step {bad} accepted")


def _stepped_pair_sets(geo, rng, h, state_hi, hold=()):
    """300 random motions of 12 steps at constant velocity, each step from a first stage: yields (step output, full
    loop output, near, skip) after checking that the step's near pairs (near == 1) equal `evaluate_pairs`."""
    from solver.contact import BODIES
    from solver.contact.pairset import PairSetOutput, evaluate_pairs, evaluate_pairs_step
    nb, npair = len(BODIES), len(geo.pair_names)
    args = (geo.prim, geo.pint, geo.pairs, geo.ppar)
    for _ in range(300):
        pos = rng.normal(scale=0.05, size=(nb, 3))
        x = rng.uniform(-0.6, 0.2)
        pos[4] = (x, *rng.normal(scale=0.15, size=2))
        pos[2] = pos[3] = pos[5] = pos[4] + (rng.uniform(0.3, 0.9), 0.0, 0.0)
        rot = np.tile(np.eye(3), (nb, 1, 1))
        vel = rng.normal(scale=0.5, size=(nb, 3))
        om = np.zeros((nb, 3))
        state = rng.uniform(0, state_hi, size=6)
        near, skip = np.zeros(npair), np.zeros(npair)
        o = PairSetOutput(npair)
        for n in range(12):
            p = pos + vel * h * n
            so = evaluate_pairs_step(*args, p, rot, vel, om, state, geo.work, o.active, o.depth, o.point, o.normal,
                                     o.force, o.diag, near, True, h, skip, *hold)
            r = PairSetOutput(npair)
            sr = evaluate_pairs(*args, p, rot, vel, om, state, geo.work, r.active, r.depth, r.point, r.normal,
                                r.force, r.diag)
            assert so == sr
            if so != 0:
                break
            for f in ("active", "depth", "point", "normal", "force"):
                np.testing.assert_array_equal(getattr(o, f)[near == 1], getattr(r, f)[near == 1])
            assert not r.active[near == 0].any()
            yield o, r, near, skip


def test_multi_step_skip_gives_the_contacts_of_the_full_pair_loop():
    """`evaluate_pairs_step(..., skip)`: a pair left out for n steps (skip counts them down) is apart at every later
    step's first stage within that motion: the outputs equal `evaluate_pairs` at the moved poses."""
    from solver.contact import load
    held = touching = 0
    for _, r, _, skip in _stepped_pair_sets(load(), np.random.default_rng(7), 2.5e-4, 1.0):
        held += int((skip > 0).sum())
        touching += int(r.active.any())
    assert held > 1000 and touching > 20


def test_lever_hold_keeps_the_cam_extension():
    """`cam_hold` is 0 on a cam ramp and elsewhere the extension is the same over phi +- the margin (and changes just
    beyond it); `lever_hold_steps` allows no step on a ramp or when the nut turns too fast for the margin."""
    from solver.scenario import load_model
    m = load_model(ROOT / "resources" / "scenarios" / "central_impact_20t.toml")
    P = m.P
    n = int(P[D.P_CAM_N])
    xs, ys = P[D.P_CAM_X0:D.P_CAM_X0 + n], P[D.P_CAM_Y0:D.P_CAM_Y0 + n]
    assert n >= 3 and ys[0] == ys[1] and ys[1] != ys[2]             # a flat start, then ramps
    rng = np.random.default_rng(3)
    flat = ramp = 0
    for phi in rng.uniform(xs[0] - 20.0, xs[-1] + 20.0, 4000):
        g = D.cam_hold(P, phi)
        y = D.cam_extension(P, phi)
        if g == 0.0:
            ramp += 1
            assert D.lever_hold_steps(P, phi, 0.0, 5e-4) == 0
            continue
        flat += 1
        for q in np.linspace(phi - 0.999 * g, phi + 0.999 * g, 9) if np.isfinite(g) else (phi - 1e3, phi + 1e3):
            assert D.cam_extension(P, q) == y
        if np.isfinite(g) and phi + g < xs[-1]:
            assert D.cam_extension(P, phi + g + 1e-6) != y or D.cam_extension(P, phi - g - 1e-6) != y
    assert flat > 100 and ramp > 100
    h, a = 5e-4, P[D.P_I_NUT] * 1.0                                # pairset.STEP_DV = 1 m/s of stroke rate per step
    phi = xs[1] - 10.0                                             # 10 rad before the first ramp
    n = D.lever_hold_steps(P, phi, 0.0, h)
    assert n >= 1 and n * h * n * a < 10.0 <= (n + 1) * h * (n + 1) * a
    assert D.lever_hold_steps(P, phi, 10.0 / (2 * h), h) == 0      # would reach the ramp within a step


def test_roller_pairs_skipped_while_the_lever_is_held_give_the_contacts_of_the_full_pair_loop():
    """`evaluate_pairs_step(..., skip, hold)`: roller pairs found apart are left out for at most `hold` steps, and at
    every step within that motion (lever state unchanged) the outputs equal `evaluate_pairs` at the moved poses."""
    from solver.contact import load
    from solver.contact.kernels import ROLLER
    geo, hold = load(), 6
    rollers = geo.pint[geo.pairs[:, 0], 0] == ROLLER
    left_out = touching = 0
    for _, r, near, skip in _stepped_pair_sets(geo, np.random.default_rng(11), 5e-4, 1.2, (float(hold),)):
        assert (skip[rollers] <= hold - 1).all()
        left_out += int((near[rollers] == 0).sum())
        touching += int(r.active[rollers].any())
    assert left_out > 1000 and touching > 5


def test_crank_closure_without_trig_keeps_the_loop_closed_on_the_root_nearer_zero():
    """`lateral_chain` (RUS brake crank, closed without atan2/acos): the crank pin lies at the rod length from the
    housing attachment, psi is the closure root nearer 0 and its rate equals the finite difference of psi."""
    import math
    from solver.scenario import load_model
    from solver.vec3 import mm, mv, rot_y, rot_z
    m = load_model(ROOT / "resources" / "scenarios" / "central_impact_20t.toml")
    LAT = m.LAT
    cranks = [k for k in range(D.N_LAT) if LAT[k, D.L_TYPE] > 0.5]
    assert cranks
    rng = np.random.default_rng(2)
    closed = 0
    for _ in range(300):
        th1, th2 = rng.uniform(-0.2, 0.2, 2)
        d1, d2 = rng.normal(scale=0.3, size=2)
        for k in cranks:
            psi, psid, _, _, _ = D.lateral_chain(LAT, k, th1, th2, d1, d2)
            rho, rod = LAT[k, D.L_RHO], LAT[k, D.L_ROD]
            u1, u2 = np.array([-1.0, 0.0, 0.0]), np.array([0.0, LAT[k, D.L_EY], LAT[k, D.L_EZ]])
            base = LAT[k, D.L_BASE:D.L_BASE + 3]
            r = np.array(mv(mm(rot_y(th1), rot_z(th2)), tuple(LAT[k, D.L_ATT:D.L_ATT + 3])))
            w0 = base - r
            A, B, C = 2 * rho * w0 @ u1, 2 * rho * w0 @ u2, rod * rod - w0 @ w0 - rho * rho
            ph0 = math.atan2(B, A)
            if abs(C) < math.hypot(A, B):                   # the loop closes: pin at the rod length
                closed += 1
                pin = base + rho * (math.cos(psi) * u1 + math.sin(psi) * u2)
                assert abs(np.linalg.norm(pin - r) - rod) < 1e-12 * rod
            ac = math.acos(min(max(C / math.hypot(A, B), -1.0), 1.0))   # the atan2/acos form it replaces
            p1, p2 = math.remainder(ph0 + ac, 2 * math.pi), math.remainder(ph0 - ac, 2 * math.pi)
            assert abs(psi - (p1 if abs(p1) < abs(p2) else p2)) < 1e-12
            if abs(C) < 0.95 * math.hypot(A, B):            # away from the closure's dead points: rate
                e = 1e-6
                fd = (D.lateral_chain(LAT, k, th1 + e * d1, th2 + e * d2, 0.0, 0.0)[0]
                      - D.lateral_chain(LAT, k, th1 - e * d1, th2 - e * d2, 0.0, 0.0)[0]) / (2 * e)
                assert abs(fd - psid) < 1e-6 * (1.0 + abs(psid))
    assert closed > 100
