"""A third mechanism type assembled from the engine core alone: a probe on a two-joint arm meeting a receiving cone
(the shape of seed 001 ch. VIII's berthing arm). Its model, kernel and type are the first section below (under 200
lines); it runs through the one runner (solver.simulate.run_scenario) into a run file that the viewer opens."""
from __future__ import annotations

import math
import tomllib
from dataclasses import make_dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from solver import mechanisms
from solver.contact import geometry as CG
from solver.contact.kernels import NO, sphere_cone, transform_row
from solver.core import bodies as B
from solver.core.elements import end_stop, hysteresis, slider, spring_damper
from solver.core.energy import kinetic, total
from solver.core.free_body import quaternion
from solver.core.integrator import rk4_update, stage, substeps
from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType, Readouts, SceneSpec
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry
from solver.simulate import BlockKernels, run_model
from solver.wireframe import Wire

# ---- the type: model arrays, one kernel, the runner's Kernels, the MechanismType ------------------------------------
# P: joint spring k, damper c, stop angle, stop k (per joint), brake k, brake limit, contact k, c, head radius, link 2
# length, substeps in contact, capture depth
P_K, P_C, P_LIM, P_KS, P_BK, P_BL, P_CK, P_CC, P_R, P_L2, P_SUB, P_CAPT = 0, 2, 4, 6, 8, 9, 10, 11, 12, 13, 14, 15
NS, NZ = 5, 5         # s: q1 q2 qd1 qd2 dissipated; Z: brake slider, its dissipation, captured, t_capture, touched
CHANNELS = ("joint_1", "joint_2", "head_x", "head_y", "contact_force", "brake_slip", "kinetic_energy",
            "potential_energy", "dissipated_energy", "total_energy")


@njit(cache=True, error_model="numpy")
def evaluate(s, Z, P, JOINT, CONE, KIN, M, W, tau, ds, c):
    """ds/dt of the arm, the contact (c: depth, point, normal, force) and (kinetic, stored) energy."""
    q, qd = s[0:2], s[2:4]
    B.tree_pose(JOINT, q, KIN)
    tau[:] = 0.0
    stored, power = 0.0, 0.0
    for j in range(2):
        f, e = spring_damper(P[P_K + j], P[P_C + j], q[j], qd[j], 0.0)
        fs, es = end_stop(q[j], P[P_LIM + j], P[P_KS + j])
        tau[j] += f + fs
        stored += e + es
        power += P[P_C + j] * qd[j] * qd[j]
    fb, eb = hysteresis(P[P_BK], q[0], Z[0], P[P_BL])          # the shoulder brake: Coulomb slider
    tau[0] -= fb
    stored += eb
    x = np.empty(3)
    for r in range(3):
        x[r] = KIN[1, B.K_ORIGIN + r] + KIN[1, B.K_R + 3 * r] * P[P_L2]
    d, px, py, pz, nx, ny, nz = sphere_cone(x[0], x[1], x[2], P[P_R], CONE, 0)
    c[:] = 0.0
    if d != NO:
        v = np.empty(3)
        B.point_velocity(JOINT, KIN, qd, 1, x, v)
        vn = v[0] * nx + v[1] * ny + v[2] * nz
        fn = max(P[P_CK] * d - P[P_CC] * vn, 0.0)
        c[0], c[1], c[2], c[3], c[4], c[5], c[6] = d, px, py, pz, nx, ny, nz
        c[7], c[8], c[9], c[10] = fn * nx, fn * ny, fn * nz, vn
        B.add_point_force(JOINT, KIN, 1, x, c[7:10], tau)
        stored += 0.5 * P[P_CK] * d * d
        power += (P[P_CK] * d - fn) * vn
    B.tree_mass_matrix(JOINT, KIN, M)
    ke = kinetic(M, qd, 2)
    B.tree_bias(JOINT, KIN, qd, W, ds[2:4])
    for j in range(2):
        tau[j] -= ds[2 + j]
    B.cholesky_factor(M, 2)
    B.cholesky_solve(M, tau, 2, ds[2:4])
    ds[0], ds[1], ds[4] = qd[0], qd[1], power
    return ke, stored


@njit(cache=True, error_model="numpy")
def run_block(s, Z, t, h, n_out, spo, P, JOINT, CONE, ev, n_ev, prev, o_t, o_ch, o_pos, o_q, o_act, o_f, o_p, o_n,
              o_d, o_vn):
    """n_out frames, each recorded, then spo steps (RK4, per-contact substeps). (status 0, t, rows)."""
    KIN, M, W = np.zeros((2, B.NK)), np.zeros((2, 2)), np.zeros((2, 15))
    tau, c, st = np.zeros(2), np.zeros(11), np.zeros(NS)
    k1, k2, k3, k4 = np.zeros(NS), np.zeros(NS), np.zeros(NS), np.zeros(NS)
    act = np.zeros(1, np.int64)            # contact closed now: the substeps' switch, from the state alone
    k0 = round(t / h)
    for row in range(n_out):
        ke, stored = evaluate(s, Z, P, JOINT, CONE, KIN, M, W, tau, k1, c)
        on = c[0] > 0.0
        if on and Z[4] == 0.0 and n_ev[0] < ev.shape[0]:
            ev[n_ev[0], 0], ev[n_ev[0], 1], ev[n_ev[0], 2], Z[4] = t, 0.0, 0.0, 1.0
            n_ev[0] += 1
        act[0] = prev[0] = on
        if Z[2] == 0.0 and c[0] > P[P_CAPT]:
            Z[2], Z[3] = 1.0, t
        o_t[row] = t
        o_ch[row, 0], o_ch[row, 1] = math.degrees(s[0]), math.degrees(s[1])
        o_ch[row, 2], o_ch[row, 3] = KIN[1, 9] + KIN[1, 0] * P[P_L2], KIN[1, 10] + KIN[1, 3] * P[P_L2]
        o_ch[row, 4], o_ch[row, 5] = math.sqrt(c[7] ** 2 + c[8] ** 2 + c[9] ** 2), s[0] - Z[0]
        o_ch[row, 6], o_ch[row, 7], o_ch[row, 8] = ke, stored, s[4] + Z[1]
        o_ch[row, 9] = total(ke, stored, s[4] + Z[1], 0.0)
        o_pos[row, 0, :] = 0.0
        o_q[row, 0, :] = (1.0, 0.0, 0.0, 0.0)
        for b in range(2):
            o_pos[row, b + 1, :] = KIN[b, 9:12]
            o_q[row, b + 1, :] = quaternion(KIN[b, 0:9])
        o_act[row, 0], o_d[row, 0], o_vn[row, 0] = on, c[0], c[10]
        o_p[row, 0, :], o_n[row, 0, :], o_f[row, 0, :] = c[1:4], c[4:7], c[7:10]
        for it in range(spo):
            m = substeps(P, P_SUB, act, 1, 1)
            hh = h / m
            for _ in range(m):
                evaluate(s, Z, P, JOINT, CONE, KIN, M, W, tau, k1, c)
                stage(s, k1, 0.5 * hh, st)
                evaluate(st, Z, P, JOINT, CONE, KIN, M, W, tau, k2, c)
                stage(s, k2, 0.5 * hh, st)
                evaluate(st, Z, P, JOINT, CONE, KIN, M, W, tau, k3, c)
                stage(s, k3, hh, st)
                evaluate(st, Z, P, JOINT, CONE, KIN, M, W, tau, k4, c)
                rk4_update(s, k1, k2, k3, k4, hh)
            z, e = slider(P[P_BK], s[0], Z[0], P[P_BL])
            Z[0], Z[1] = z, Z[1] + e
            act[0] = c[0] > 0.0
            k0 += 1
            t = k0 * h
    return 0, t, n_out


ArmModel = make_dataclass("ArmModel", [*"name comment text P JOINT CONE s0 Z0 step output_step duration links cone".split(),
                                       ("variant", str, "two_joint"), ("mechanism_type", str, "arm_probe")])


def load_arm(spath: Path):
    """A scenario and its arm TOML packed into arrays (link lengths, masses, joint springs, cone, contact)."""
    sc = tomllib.loads(spath.read_text())
    mtext = (spath.parent / sc["mechanism"]).read_text()
    a = tomllib.loads(mtext)
    L, m = a["arm"]["lengths"], a["arm"]["masses"]
    rows = [B.joint_row(i - 1, (0, 0, 1), (0, 0, 0) if i == 0 else (L[0], 0, 0), m[i], (L[i] / 2, 0, 0),
                        np.diag([1e-3, m[i] * L[i] ** 2 / 12, m[i] * L[i] ** 2 / 12])) for i in range(2)]
    j, cn, ct = a["joints"], a["receiving_cone"], a["contact"]
    P = np.array([*j["k"], *j["c"], *np.radians(j["stops_deg"]), *j["k_stop"], j["brake_k"], j["brake_limit"],
                  ct["k"], ct["c"], a["probe_head"]["radius"], L[1], ct["substeps"], ct["capture_depth"]], float)
    kind, row = CG.cone_row(cn["origin"], (1, 0, 0), 0.0, cn["r_entry"], cn["depth"], cn["r_bottom"], side=1)
    CONE = np.zeros((1, row.shape[0]))
    transform_row(np.array([row]), np.array([[kind, 0, 0, 0]], np.int64), np.zeros((1, 3)), np.eye(3)[None],
                  np.zeros(2), CONE, 0)
    s0 = np.zeros(NS)
    s0[0:4] = [*np.radians(sc["initial"]["joints_deg"]), *np.radians(sc["initial"]["rates_deg_s"])]
    Z0 = np.array([s0[0], 0.0, 0.0, 0.0, 0.0])      # the brake holds the initial pose
    return ArmModel(sc["name"], sc.get("comment", ""), mtext, P, np.array(rows), CONE, s0, Z0, sc["step"],
                    sc["output_step"], sc["duration"], tuple(L), (cn["origin"], cn["r_entry"], cn["depth"],
                                                                   cn["r_bottom"]))


def run_arm(m, scenario_path, out_path, **options):
    """Channels, bodies, parts and the contact pair of an arm run, its kernel through the one runner."""
    C = ChannelInfo
    chans = [C("joint_1", "deg", "shoulder joint", "mechanism", math.degrees(m.P[P_LIM])),
             C("joint_2", "deg", "elbow joint", "mechanism", math.degrees(m.P[P_LIM + 1])),
             C("head_x", "m", "probe head x", "kinematics"), C("head_y", "m", "probe head y", "kinematics"),
             C("contact_force", "N", "head on cone", "contact_forces"),
             C("brake_slip", "rad", "shoulder brake elastic deflection", "mechanism"),
             *(C(n, "J", n.replace("_", " "), "energy") for n in CHANNELS[6:])]
    origin, r0, depth, r1 = m.cone
    parts = [PartGeometry(f"arm_{i + 1}", f"link_{i + 1}", *Wire().polyline([(0, 0, 0), (m.links[i], 0, 0)]).build(),
                          "arm") for i in range(2)]
    parts.append(PartGeometry("probe_head", "link_2", *Wire().sphere(m.P[P_R], (m.links[1], 0, 0)).build(),
                              "probe_head"))
    parts.append(PartGeometry("receiving_cone", "base",
                              *Wire().frustum(0.0, r0, depth, r1).transformed(np.eye(3), origin).build(), "cone"))
    pairs = [ContactPairInfo("head_cone", "probe_head", "receiving_cone", "probe head on the receiving cone")]
    bodies = ["base", "link_1", "link_2"]
    sizes = {"s": NS, "Z": NZ}
    kernels = partial(BlockKernels, run_block, m, (m.P, m.JOINT, m.CONE),
                      shapes=(len(CHANNELS), 3, 1), events={0: ("first_contact", "first contact: {pair}")},
                      pairs=pairs, capture=(2, 3))
    return run_model(m, scenario_path, out_path, kernels, ("arm_probe", "dockmnemo core test arm 1"), chans, bodies,
                     pairs, parts, sizes, **options)


ARM = MechanismType(
    name="arm_probe", title="probe on a two-joint arm (engine-core test)", variants=("two_joint",),
    run_variants=("two_joint",), model_builder=load_arm, runner=run_arm, state_sizes=lambda: {"s": NS, "Z": NZ},
    part_colors={"arm": (0.84, 0.96, 0.84), "cone": (0.78, 0.84, 0.92), "probe_head": (1.0, 0.0, 1.0)},
    scene=SceneSpec("arm plane", None, ("link_2",)),
    layout=DeviceLayout(None, (BarGroup("joints", ("arm joints",), channels=("joint_1", "joint_2")),)),
    readouts_before=Readouts("HEAD", ("head_x", "head_y"), ("joint_1", "joint_2")), default_plots=("contact_force",))


# ---- the tests -------------------------------------------------------------------------------------------------------
ARM_TOML = """mechanism_type = "arm_probe"
[arm]
lengths = [1.0, 0.8]
masses = [20.0, 10.0]
[joints]          # springs pull the arm to q = 0, where the head would sit inside the cone: it meets the cone
k = [50.0, 50.0]
c = [2.0, 2.0]
stops_deg = [90.0, 90.0]
k_stop = [5e4, 5e4]
brake_k = 2000.0
brake_limit = 5.0
[probe_head]
radius = 0.02
[receiving_cone]
origin = [1.6, 0.0, 0.0]
r_entry = 0.25
depth = 0.25
r_bottom = 0.03
[contact]
k = 1e5
c = 200.0
substeps = 4
capture_depth = 0.001
"""
SCENARIO = """name = "arm_meets_cone"
comment = "two-joint arm carries the probe head into the receiving cone (engine-core test)"
mechanism = "arm.toml"
step = 0.001
output_step = 0.01
duration = 3.0
[initial]
joints_deg = [-25.0, 60.0]
rates_deg_s = [0.0, 0.0]
"""


@pytest.fixture(scope="module")
def arm_run(tmp_path_factory):
    """The arm type registered, its scenario run through solver.simulate.run_scenario (module scope: one run)."""
    from solver.simulate import run_scenario
    d = tmp_path_factory.mktemp("arm")
    (d / "arm.toml").write_text(ARM_TOML)
    (d / "arm_meets_cone.toml").write_text(SCENARIO)
    mechanisms.register(ARM)
    try:
        yield d / "arm_meets_cone.toml", run_scenario(d / "arm_meets_cone.toml", d / "arm.h5")
    finally:
        mechanisms.unregister(ARM.name)


def test_the_type_is_assembled_from_core_parts_in_well_under_200_lines():
    src = Path(__file__).read_text().split("# ---- the tests")[0].split("# ---- the type")[1]
    assert len(src.strip().splitlines()) < 170
    assert "solver.mechanisms." not in src.replace("solver.mechanisms.base", "")   # no other type's code


def test_the_arm_runs_through_the_one_runner_into_a_run_file(arm_run):
    from solver.runfile import RunFile
    _, out = arm_run
    with RunFile(out) as r:
        assert r.meta.mechanism_type == "arm_probe" and r.n_frames == 301
        f = r.channel("contact_force")
        assert f.max() > 1.0                                      # the head met the cone
        assert math.isfinite(r.meta.t_capture)                    # and went in over the capture depth
        assert [e.kind for e in r.events].count("first_contact") == 1
        e = r.channel("total_energy")
        e0 = r.channel("potential_energy")[0]                     # springs wound up at the start (32.2 J)
        assert e0 > 30.0
        assert np.abs(e - e[0]).max() < 1e-3 * e0                 # energy balance (2.7e-4): core bodies, elements, RK4
        assert np.abs(e[:15] - e[0]).max() < 1e-7 * e0            # before contact (1.7e-7 J, the brake): M, C consistent
        assert r.channel("dissipated_energy")[-1] > 0.1 * e0      # dampers, contact and the brake took energy


def test_a_branch_of_the_arm_run_replays_to_the_same_frames(arm_run, tmp_path):
    """Branching is the runner's: a branch from frame 150 continues the original run exactly."""
    from solver.runfile import RunFile
    from solver.simulate import run_scenario, start_from_run
    scenario, out = arm_run
    mechanisms.register(ARM)
    try:
        b = run_scenario(scenario, tmp_path / "branch.h5", start=start_from_run(out, 150))
    finally:
        mechanisms.unregister(ARM.name)
    with RunFile(out) as r, RunFile(b) as rb:
        assert rb.n_frames == 151
        for name in ("joint_1", "joint_2", "total_energy"):
            assert np.array_equal(rb.channel(name), r.channel(name)[150:])


@pytest.mark.gui
def test_the_viewer_opens_the_arm_run_as_its_type_says(qtbot, tmp_path, arm_run, artifacts):
    from tests.gui_util import main_window
    _, out = arm_run
    mechanisms.register(ARM)
    try:
        w = main_window(qtbot, tmp_path / "s.ini", out)
        w.playback.seek_time(2.0)
        qtbot.wait(50)
        assert w.diagram.devices.bars == {"joints": ["joint_1", "joint_2"]}
        assert w.run.meta.mechanism_type == "arm_probe"
        w.grab_image().save(str(artifacts / "engine_core_arm_window.png"))
    finally:
        mechanisms.unregister(ARM.name)
