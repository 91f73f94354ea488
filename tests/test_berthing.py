"""Berthing by a space manipulator (seed 001 ch. VIII, issue 36): the dynamics checks of the arm on the engine core
(momentum with a free base and limp joints, energy with the drives off, closed forms, the mass matrix along a run),
the scripted MRM-1 insertion with 2 mm of lateral error at contact, and a recorded session replayed exactly."""
from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from solver.core import bodies as B
from solver.runfile import RunFile

ROOT = Path(__file__).resolve().parent.parent
RES = ROOT / "resources" / "berthing"
ARM = (RES / "ssrms_mrm1.toml").read_text()


def _scenario(d: Path, name: str, arm: str, body: str) -> Path:
    """A scenario in d on an edited copy of the arm TOML."""
    (d / "arm.toml").write_text(arm)
    p = d / f"{name}.toml"
    p.write_text(f'name = "{name}"\nmechanism = "arm.toml"\n' + body)
    return p


FREE_LIMP = """step = 0.002
output_step = 0.02
duration = 3.0
[initial]
joints_deg = [20.0, 10.0, 40.0, -100.0, -30.0, 15.0, 10.0]
rates_deg_s = [1.0, -2.0, 1.5, 3.0, -2.0, 4.0, 5.0]
standoff = 2.0
[[profile]]
t = 0.0
frame = "joint"
rates = [0, 0, 0, 0, 0, 0, 0]
"""


@pytest.fixture(scope="module")
def lateral_run(tmp_path_factory):
    """The scripted MRM-1 insertion with the receptacle 2 mm off the probe axis (one run for the module)."""
    from solver.simulate import run_scenario
    d = tmp_path_factory.mktemp("berthing")
    return run_scenario(RES / "scenarios" / "mrm1_scripted_lateral_2mm.toml", d / "lateral.h5")


def test_scripted_mrm1_inserts_with_2mm_lateral_error_without_jamming(lateral_run):
    from solver import mechanisms, verdict
    with RunFile(lateral_run) as r:
        assert r.meta.mechanism_type == "berthing"
        assert r.channel("lateral_error")[0] == pytest.approx(0.002, abs=1e-9)
        v = verdict.evaluate(r, verdict.load_criteria(mechanisms.for_run(r).criteria_file))
        assert v.passed, v.report()
        assert 30.0 < r.meta.t_capture < 40.0                       # inserted to the capture depth (35.5 s)
        ins = r.channel("insertion")
        assert ins[-1] > 0.15 and ins.max() < 0.35                   # past the capture depth, short of the bottom
        f = r.channel("contact_force")
        assert 20.0 < f.max() < 1000.0                               # the funnel guided it (335 N), no wedging
        i = int(np.argmax(ins > 0.0))                                 # in the bore: within the 1 mm clearance
        assert np.all(r.channel("lateral_error")[i + 50:] < 0.0012)
        assert "first_contact" in [e.kind for e in r.events]
        assert r.channel("brake_slip").max() == 0.0
        e, w = r.channel("total_energy"), r.channel("drive_work")
        assert np.abs(e).max() < 1e-5 * np.abs(w).max()              # energy balance with drives, contact, brakes


def test_mass_matrix_is_symmetric_positive_definite_along_the_run(lateral_run):
    from solver.mechanisms.berthing.model import load_berthing
    m = load_berthing(RES / "scenarios" / "mrm1_scripted_lateral_2mm.toml")
    n = m.JOINT.shape[0]
    K, M = np.zeros((n, B.NK)), np.zeros((n, n))
    with RunFile(lateral_run) as r:
        q = np.radians(np.column_stack([r.channel(f"joint_{j + 1}") for j in range(7)]))
    for k in range(0, len(q), 60):
        B.tree_pose(m.JOINT, q[k], K)
        B.tree_mass_matrix(m.JOINT, K, M)
        assert np.array_equal(M, M.T)
        ev = np.linalg.eigvalsh(M)
        assert ev.min() > 1.0 and ev.max() / ev.min() < 1e7           # SPD, conditioned (the payload's 8 t)


def test_free_base_limp_joints_conserve_momentum_and_energy(tmp_path):
    from solver.simulate import run_scenario
    arm = ARM.replace('mode = "fixed"', 'mode = "free"').replace("mass = 370000.0", "mass = 20000.0") \
        .replace("inertia = [1.0e8, 1.3e8, 2.0e8]", "inertia = [2.0e5, 3.0e5, 4.0e5]") \
        .replace("[drives]", '[drives]\nmode = "limp"')
    out = run_scenario(_scenario(tmp_path, "free_limp", arm, FREE_LIMP), tmp_path / "free.h5")
    with RunFile(out) as r:
        p = np.column_stack([r.channel(n) for n in ("p_x", "p_y", "p_z")])
        L = np.column_stack([r.channel(n) for n in ("L_x", "L_y", "L_z")])
        base = r.body_positions("station") if hasattr(r, "body_positions") else None
        ke = r.channel("kinetic_energy")
        assert np.abs(p - p[0]).max() < 1e-9 * np.abs(p).max()          # the base takes the arm's momentum
        assert np.abs(L - L[0]).max() < 1e-9 * np.abs(L).max()
        assert np.linalg.norm(p[0]) > 1.0 and np.linalg.norm(L[0]) > 100.0   # (a real test: the arm moves)
        assert np.abs(ke - ke[0]).max() < 1e-9 * ke[0]                  # no stored energy: kinetic constant
        del base


def test_energy_balance_with_the_drives_off(tmp_path):
    from solver.simulate import run_scenario
    arm = ARM.replace("[drives]", '[drives]\nmode = "off"').replace("gear_c = 3.0e5", "gear_c = 1.0e3")
    body = FREE_LIMP.replace("standoff", "rotor_rates_deg_s = [0, 0, 0, 0, 0, 0, 0]\nstandoff")
    out = run_scenario(_scenario(tmp_path, "drives_off", arm, body), tmp_path / "off.h5")
    with RunFile(out) as r:
        e, ke, u = r.channel("total_energy"), r.channel("kinetic_energy"), r.channel("potential_energy")
        assert r.channel("drive_work").max() == 0.0
        assert u.max() > 10.0                                            # the gears wind up (12 J) and give back
        assert np.abs(e - e[0]).max() < 1e-6 * ke[0]                     # kinetic + gears + dissipated constant
        assert r.channel("dissipated_energy")[-1] > 0.0


def test_one_joint_against_its_closed_form():
    """A rod turning about one joint against a torsional spring: q = q0 cos(sqrt(k / I) t), I = m L^2 / 3."""
    from solver.core.integrator import rk4_update, stage
    m, L, k = 30.0, 2.0, 50.0
    J = np.array([B.joint_row(-1, (0, 0, 1), (0, 0, 0), m, (L / 2, 0, 0), np.diag([1e-9, m * L * L / 12,
                                                                                  m * L * L / 12]))])
    K, M, W = np.zeros((1, B.NK)), np.zeros((1, 1)), np.zeros((1, 15))

    def f(s, ds):
        B.tree_pose(J, s[:1], K)
        B.tree_mass_matrix(J, K, M)
        B.tree_bias(J, K, s[1:], W, ds[1:])
        ds[1] = (-k * s[0] - ds[1]) / M[0, 0]
        ds[0] = s[1]
    s, h = np.array([0.3, 0.0]), 0.01
    k1, k2, k3, k4, st = (np.zeros(2) for _ in range(5))
    for _ in range(200):
        f(s, k1); stage(s, k1, h / 2, st); f(st, k2); stage(s, k2, h / 2, st); f(st, k3); stage(s, k3, h, st)
        f(st, k4); rk4_update(s, k1, k2, k3, k4, h)
    w = math.sqrt(k / (m * L * L / 3))
    assert s[0] == pytest.approx(0.3 * math.cos(w * 2.0), abs=1e-8)
    assert s[1] == pytest.approx(-0.3 * w * math.sin(w * 2.0), abs=1e-8)


def test_a_slide_and_a_turn_give_the_cart_and_rod_closed_forms():
    """Slide x then turn z, a rod on it: M = [[m, -m c sin q], [., I + m c^2]], bias = (-m c cos q qd^2, 0)."""
    m, c, I = 12.0, 0.7, 1.9
    J = np.array([B.joint_row(-1, (1, 0, 0), (0, 0, 0), 0.0, (0, 0, 0), np.zeros((3, 3)), prismatic=True),
                  B.joint_row(0, (0, 0, 1), (0, 0, 0), m, (c, 0, 0), np.diag([0.1, I, I]))])
    q, qd = np.array([0.4, 0.8]), np.array([0.3, -1.3])
    K, M = np.zeros((2, B.NK)), np.zeros((2, 2))
    B.tree_pose(J, q, K)
    assert K[1, B.K_ORIGIN] == pytest.approx(0.4)
    B.tree_mass_matrix(J, K, M)
    assert M == pytest.approx(np.array([[m, -m * c * math.sin(0.8)], [-m * c * math.sin(0.8), I + m * c * c]]),
                              rel=1e-13)
    bias = np.zeros(2)
    B.tree_bias(J, K, qd, np.zeros((2, 15)), bias)
    assert bias == pytest.approx([-m * c * math.cos(0.8) * qd[1] ** 2, 0.0], abs=1e-12)


def test_damped_least_squares_rates_track_and_stay_bounded_at_a_singular_pose():
    from solver.core.control import dls_rates
    Jac = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    out = np.zeros(3)
    w = dls_rates(Jac, np.array([0.2, -0.4]), 0.3, 0.01, out)
    assert w > 0.01 and Jac @ out == pytest.approx([0.2, -0.4], abs=1e-14)        # far from singular: exact
    Js = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0 + 1e-9]])
    w = dls_rates(Js, np.array([0.0, 1.0]), 0.3, 0.01, out)
    assert w < 1e-8 and np.abs(out).max() < 10.0                                   # singular: damped, bounded


def test_a_recorded_operator_session_replays_to_the_same_frames(tmp_path):
    """An operator drives through the plain OperatorLink (no Qt) while the session runs unlocked from wall time;
    the run file's recorded commands replay from the scenario to identical frames."""
    from solver.mechanisms.berthing.model import load_berthing
    from solver.mechanisms.berthing.simulate import OperatorLink, replay_session, run_berthing
    sc = RES / "scenarios" / "mrm1_operator.toml"
    m = load_berthing(sc)
    link = OperatorLink(0.03, math.radians(0.3), speed=2.0)
    done = []
    th = threading.Thread(target=lambda: done.append(run_berthing(m, sc, tmp_path / "session.h5", link=link,
                                                                  t_end=3.0)))
    th.start()
    t0 = time.perf_counter()
    while link.t < 0.1 and time.perf_counter() - t0 < 60:      # the session runs (its kernels loaded)
        time.sleep(0.01)
    for defl in ([1, 0, 0, 0, 0, 0], [1, 0.5, 0, 0, 0, -1], [0, 0, -1, 1, 0, 0]):
        link.set(defl)
        time.sleep(0.25)
    th.join(60)
    assert done and math.isfinite(link.rt_factor) and link.headroom > 1.0
    again = replay_session(done[0], sc, tmp_path / "replay.h5")
    with RunFile(done[0]) as a, RunFile(again) as b:
        assert a.n_frames == b.n_frames == 151
        assert len(np.unique(a.channel("cmd_1"))) >= 2                  # the operator's inputs changed
        for name in ("joint_4", "insertion", "lateral_error", "tau_2", "total_energy"):
            assert np.array_equal(a.channel(name), b.channel(name)), name


STICK = """step = 0.002
output_step = 0.01
duration = {t}
[initial]
joints_deg = [20.0, 10.0, 40.0, -100.0, -30.0, 15.0, 10.0]
standoff = -0.6
[[profile]]
t = 0.0
frame = "joint"
rates = [0, 0, 0, 0, 0, 0, 0]
[load]
force = [{f[0]!r}, {f[1]!r}, {f[2]!r}]
"""


def _pressed_on_the_bore_bottom(d: Path, ratio: float, t_end: float) -> tuple[Path, float]:
    """The limp arm's probe head on the bore bottom under 500 N along the axis plus ratio * mu * 500 N across it
    (a well-damped contact, so the normal load settles); the run file and mu."""
    from solver.mechanisms.berthing.model import P_MU, P_RA, load_berthing
    from solver.simulate import run_scenario
    arm = ARM.replace("[drives]", '[drives]\nmode = "limp"').replace("c = 2.0e3 ", "c = 1.5e5 ")
    p = _scenario(d, "stick", arm, STICK.format(t=t_end, f=(0.0, 0.0, 0.0)))
    m = load_berthing(p)
    ax = m.P[P_RA:P_RA + 3]
    across = np.cross(ax, (0.0, 0.0, 1.0))
    f = 500.0 * ax + ratio * m.P[P_MU] * 500.0 * across / np.linalg.norm(across)
    p = _scenario(d, "stick", arm, STICK.format(t=t_end, f=tuple(float(x) for x in f)))
    return run_scenario(p, d / f"stick_{ratio}.h5"), float(m.P[P_MU])


def test_berthing_contact_sticks_below_mu_n_and_slides_at_mu_n(tmp_path):
    """The engine's one friction law on the probe: under half of mu F_n across the bore bottom the head stays put for
    10 s (creep < 0.1 mm); at twice mu F_n it slides with F_t / F_n = mu. Energy balances with the bristles."""
    out, mu = _pressed_on_the_bore_bottom(tmp_path, 0.5, 10.0)
    with RunFile(out) as r:
        t, x = r.time, r.contact_point("head_bottom")
        assert r.contact_active("head_bottom")[1:].all()
        assert np.linalg.norm(x[t >= 1.0] - x[t >= 1.0][0], axis=1).max() < 3e-5   # the elastic stick's swing
        assert np.linalg.norm(x[-1] - x[t >= 5.0][0]) < 5e-6                      # no creep once it has settled
        assert r.channel("lateral_error").max() < 1e-4                             # < 0.1 mm in 10 s
        e = r.channel("total_energy")
        assert np.abs(e - e[0]).max() < 1e-6
    out, mu = _pressed_on_the_bore_bottom(tmp_path, 2.0, 0.24)
    with RunFile(out) as r:
        f, nrm = r.contact_force("head_bottom"), r.contact_detail("head_bottom")["normal"]
        sliding = (r.time >= 0.04) & (r.channel("lateral_error") < 0.0009)          # before the bore wall
        f, nrm = f[sliding].astype(float), nrm[sliding].astype(float)
        fn = np.einsum("ij,ij->i", f, nrm)
        ft = np.linalg.norm(f - fn[:, None] * nrm, axis=1)
        assert sliding.sum() >= 15 and fn.min() > 200.0
        assert ft / fn == pytest.approx(mu, rel=0.02)
        assert r.channel("lateral_error")[-1] > 5e-4                               # it moved


@pytest.mark.parametrize("edit, key", [
    (("lateral_error = [0.0, 0.0]", "lateral_error = [0.0]"), "initial.lateral_error"),
    (('frame = "joint"', 'frame = "tool"'), "profile[2].frame"),
    (("t = 36.0", "t = 0.0"), "profile[1].t"),
])
def test_bad_scenario_input_names_the_file_and_key(tmp_path, edit, key):
    from solver.mechanisms.berthing.model import load_berthing
    from solver.scenario import ScenarioError
    text = "\n".join(x for x in (RES / "scenarios" / "mrm1_scripted.toml").read_text().splitlines()
                     if not x.startswith(("name =", "mechanism =")))
    p = _scenario(tmp_path, "bad", ARM, text.replace(*edit))
    with pytest.raises(ScenarioError) as ei:
        load_berthing(p)
    assert f"bad.toml: {key}" in str(ei.value)


def test_bad_arm_input_names_the_file_and_key(tmp_path):
    from solver.mechanisms.berthing.model import load_berthing
    from solver.scenario import ScenarioError
    p = _scenario(tmp_path, "s", ARM.replace('mode = "fixed"', 'mode = "floating"'), FREE_LIMP)
    with pytest.raises(ScenarioError, match=r"arm.toml: base.mode: expected \"fixed\" or \"free\""):
        load_berthing(p)


def test_run_model_compiles_the_listed_unit_before_the_kernels_start(tmp_path):
    """Berthing lists its kernel unit and run_model loads or compiles it (solver.warmup) before the kernels (an operator
    session's wall clock) start: in a fresh process the step loop is in the dispatcher when BerthingKernels is made,
    and the run then needs no other overload."""
    from tests.compile_spy import compiled_before_kernels
    seen = compiled_before_kernels("solver.mechanisms.berthing.simulate", "BerthingKernels", "run_berthing",
                                   RES / "scenarios" / "mrm1_operator.toml", tmp_path / "op.h5", 0.1)
    assert seen == ["[True]", "True"], seen
