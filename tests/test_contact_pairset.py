"""The probe-cone pair set: poses in, contacts and forces out; force law, abort, frames, TOML data."""
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from solver import quat
from solver.contact import BODIES, ContactAbort, evaluate, load, quat_to_rot
from solver.contact.geometry import DEFAULT_TOML
from solver.contact.pairset import PAR_C, PAR_K, PAR_MU, PAR_VSLIP

ROOT = Path(__file__).resolve().parent.parent
B = {n: i for i, n in enumerate(BODIES)}
CFG = tomllib.loads(DEFAULT_TOML.read_text())
R0, D, RS = 0.40, 0.45, 0.07
ALPHA = math.atan2(R0 - RS, D)
EX = np.array([1.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def geo():
    return load()


def poses(head=(-0.5, 0, 0), gimbal=(0.05, 0, 0), active=(0.0, 0, 0), housing_rot=np.eye(3)):
    """Body poses at hard dock by default: gimbal 5 cm behind the docking plane, head at the bottom."""
    nb = len(BODIES)
    pos, rot = np.zeros((nb, 3)), np.tile(np.eye(3), (nb, 1, 1))
    pos[B["active_craft"]] = active
    pos[B["housing"]] = gimbal
    rot[B["housing"]] = housing_rot
    pos[B["limiter"]] = np.asarray(gimbal) + housing_rot @ [CFG["limiter"]["back_rim_x_in_housing"], 0, 0]
    rot[B["limiter"]] = housing_rot
    pos[B["probe_head"]] = head
    pos[B["probe"]] = np.asarray(head) + [0.5, 0, 0]
    return pos, rot, np.zeros((nb, 3)), np.zeros((nb, 3))


def cone_radius(x):
    return RS + (x + D) * math.tan(ALPHA)


def head_on_cone(depth, x=-0.2, psi=0.4):
    """Head centre whose sphere sinks `depth` into the cone wall with its foot at abscissa x."""
    u = np.array([0.0, math.cos(psi), math.sin(psi)])
    n = math.sin(ALPHA) * EX - math.cos(ALPHA) * u
    foot = x * EX + cone_radius(x) * u
    return foot + (0.05 - depth) * n, n, foot


def active_pairs(geo, out):
    return {geo.pair_names[k] for k in np.flatnonzero(out.active)}


def test_head_resting_on_cone_static_force(geo):
    c, n, foot = head_on_cone(0.002)
    pos, rot, vel, om = poses(head=c)
    out = evaluate(geo, pos, rot, vel, om, [0.0, 0.0])
    assert active_pairs(geo, out) == {"head_cone"}
    k = geo.pair_index("head_cone")
    assert out.depth[k] == pytest.approx(0.002, abs=1e-12)
    np.testing.assert_allclose(out.point[k], foot, atol=1e-12)
    np.testing.assert_allclose(out.force[k], geo.ppar[k, PAR_K] * 0.002 * n, rtol=1e-12)


def test_damping_and_no_pulling_force(geo):
    c, n, _ = head_on_cone(0.001)
    k = geo.pair_index("head_cone")
    kk, cc = geo.ppar[k, PAR_K], geo.ppar[k, PAR_C]
    pos, rot, vel, om = poses(head=c)
    vel[B["probe_head"]] = -0.2 * n                          # approaching
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    np.testing.assert_allclose(out.force[k], (kk * 0.001 + cc * 0.2) * n, rtol=1e-12)
    vel[B["probe_head"]] = 2.0 * n                           # separating fast: k d - c v < 0 -> 0
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    assert out.active[k] == 1 and np.all(out.force[k] == 0.0)


def test_coulomb_friction_and_stick_ramp(geo):
    c, n, _ = head_on_cone(0.001)
    k = geo.pair_index("head_cone")
    fn = geo.ppar[k, PAR_K] * 0.001
    mu, vs = geo.ppar[k, PAR_MU], geo.ppar[k, PAR_VSLIP]
    t = np.cross(n, [0.0, 0.0, 1.0])
    t /= np.linalg.norm(t)
    pos, rot, vel, om = poses(head=c)
    for speed, expect in ((0.05, mu * fn), (0.25 * vs, mu * fn * 0.25)):
        vel[B["probe_head"]] = speed * t
        out = evaluate(geo, pos, rot, vel, om, [0, 0])
        f = out.force[k]
        assert f @ n == pytest.approx(fn, rel=1e-12)
        ft = f - (f @ n) * n
        np.testing.assert_allclose(ft, -expect * t, atol=1e-9)
    # sliding produced by the passive craft's rotation: the contact point's velocity counts
    vel[:] = 0.0
    om[B["passive_craft"]] = [0.3, 0.0, 0.0]
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    vp = np.cross(om[0], out.point[k])
    ft = out.force[k] - (out.force[k] @ n) * n
    assert ft @ vp > 0                                       # friction drags the head along


def test_excessive_penetration_aborts_with_pair_and_depth(geo):
    c, _, _ = head_on_cone(0.012)
    pos, rot, vel, om = poses(head=c)
    with pytest.raises(ContactAbort, match=r"head_cone.*12\.000 mm.*10\.000 mm") as ei:
        evaluate(geo, pos, rot, vel, om, [0, 0])
    assert ei.value.pair == "head_cone" and ei.value.depth == pytest.approx(0.012)


def test_head_in_socket_bottom_and_bore(geo):
    pos, rot, vel, om = poses(head=(-0.502, 0.022, 0.0))
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    assert active_pairs(geo, out) == {"head_socket", "head_socket_bottom"}
    assert out.depth[geo.pair_index("head_socket_bottom")] == pytest.approx(0.002)
    assert out.depth[geo.pair_index("head_socket")] == pytest.approx(0.002)
    np.testing.assert_allclose(out.normal[geo.pair_index("head_socket")], [0, -1, 0], atol=1e-12)


def test_head_on_socket_mouth_edge(geo):
    # the centre in the edge's wedge: between the cone and bore normals, 5.1 cm from the rounding
    tube = CFG["socket"]["mouth_edge_radius"]
    m = np.array([math.sin(ALPHA / 2), -math.cos(ALPHA / 2)])
    # fillet centre of the junction (as the loader computes it)
    mc, mb = np.array([math.sin(ALPHA), -math.cos(ALPHA)]), np.array([0.0, -1.0])
    fc = np.array([-D, RS]) - tube * (mc + mb) / (1 + mc @ mb)
    cm = fc + (0.05 + tube - 0.0015) * m
    pos, rot, vel, om = poses(head=(cm[0], cm[1], 0.0))
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    assert active_pairs(geo, out) == {"head_socket"}
    k = geo.pair_index("head_socket")
    assert out.depth[k] == pytest.approx(0.0015, abs=1e-12)
    np.testing.assert_allclose(out.normal[k], [m[0], m[1], 0.0], atol=1e-12)


def test_latches_on_stops_after_retraction(geo):
    la, sl = CFG["latches"], CFG["socket_slots"]
    x_stop = -D - sl["stop_below_mouth"]
    head_x = x_stop - la["tip_x"] - la["tip_sphere_radius"] + 0.0007
    pos, rot, vel, om = poses(head=(head_x, 0, 0))
    out = evaluate(geo, pos, rot, vel, om, [1.0, 0.0])
    assert active_pairs(geo, out) == {f"latch_stop_{k}" for k in range(1, 5)}
    for k in range(1, 5):
        i = geo.pair_index(f"latch_stop_{k}")
        assert out.depth[i] == pytest.approx(0.0007, abs=1e-12)
        np.testing.assert_allclose(out.normal[i], -EX)
    # retracted latches pass the stops
    out = evaluate(geo, pos, rot, vel, om, [0.0, 0.0])
    assert not out.active.any()


def test_latch_rolls_into_slot_wall(geo):
    # head rolled about the probe axis: each latch tip presses on one tapered side wall
    la = CFG["latches"]
    pos, rot, vel, om = poses(head=(-0.49, 0, 0))
    out = evaluate(geo, pos, rot, vel, om, [1.0, 0.0])
    assert not out.active.any()
    rot[B["probe_head"]] = quat.to_matrix(quat.from_axis_angle([1, 0, 0], math.radians(4.0)))
    out = evaluate(geo, pos, rot, vel, om, [1.0, 0.0])
    names = active_pairs(geo, out)
    assert names == {f"latch_slot_{k}" for k in range(1, 5)}
    for k in range(1, 5):
        i = geo.pair_index(f"latch_slot_{k}")
        psi = math.radians(la["first_angle"]) + (k - 1) * math.pi / 2
        tangential = np.array([0.0, -math.sin(psi), math.cos(psi)])
        assert out.normal[i] @ tangential < -0.9           # wall pushes the tip back (negative roll)
    depths = out.depth[[geo.pair_index(f"latch_slot_{k}") for k in range(1, 5)]]
    np.testing.assert_allclose(depths, depths[0], rtol=1e-9)


def test_lateral_offset_brings_load_pads_to_cone_first(geo):
    # (a swing about the gimbal alone cannot: the pads' reach from the gimbal, 0.349 m, is less than the
    # cone's distance from it, 0.352 m, with these dimensions: the pads clear the cone by 6 mm at hard dock)
    for dy in np.arange(0.0, 0.05, 0.0005):
        pos, rot, vel, om = poses(gimbal=(0.05, dy, 0.0))
        pos[B["limiter"]] += [0, dy, 0]
        out = evaluate(geo, pos, rot, vel, om, [0, 0])
        names = active_pairs(geo, out)
        if names:
            break
    assert names and names <= {"limiter_cone"} | {f"load_pad_{k}" for k in range(1, 7)}
    assert 0.005 < dy < 0.009
    assert all(out.depth[geo.pair_index(k)] < 0.0005 for k in names)
    k = geo.pair_index("load_pad_1")                         # the pad at psi = 0 faces +y
    assert out.active[k] and out.normal[k][1] < 0


def test_rollers_clear_at_hard_dock_and_touch_when_offset(geo):
    pos, rot, vel, om = poses()
    out = evaluate(geo, pos, rot, vel, om, [0.0, 1.0])
    assert not out.active.any()
    pos[B["housing"]] += [0.0, 0.0081, 0.0]                  # 4 mm clearance / cos(alpha) + 1 mm
    out = evaluate(geo, pos, rot, vel, om, [0.0, 1.0])
    assert "roller_1" in active_pairs(geo, out)              # the roller at psi = 0 points to +y
    i = geo.pair_index("roller_1")
    assert 0.0 < out.depth[i] < 0.003
    np.testing.assert_allclose(out.normal[i], [math.sin(ALPHA), -math.cos(ALPHA), 0.0], atol=1e-4)


def test_ring_contact_tilted_active_craft(geo):
    g = math.radians(0.3)
    R = quat.to_matrix(quat.from_axis_angle([0, 1, 0], g))
    pos, rot, vel, om = poses()
    rot[B["active_craft"]] = R
    out = evaluate(geo, pos, rot, vel, om, [0, 0])
    i = geo.pair_index("ring_ring")
    rm = 0.5 * (CFG["docking_ring"]["inner_radius"] + CFG["docking_ring"]["outer_radius"])
    assert out.active[i] and out.depth[i] == pytest.approx(rm * math.sin(g), rel=1e-9)
    np.testing.assert_allclose(out.normal[i], EX)


def test_pair_set_is_invariant_under_a_common_rigid_motion(geo):
    c, _, _ = head_on_cone(0.001, x=-0.3, psi=2.0)
    pos, rot, vel, om = poses(head=c, active=(0.0, 0.0, 0.0))
    rot[B["active_craft"]] = quat.to_matrix(quat.from_axis_angle([0, 1, 0], math.radians(0.2)))
    vel[B["probe_head"]] = [-0.1, 0.02, 0.0]
    om[B["active_craft"]] = [0.01, 0.02, -0.03]
    a = evaluate(geo, pos, rot, vel, om, [0.0, 1.0])
    A0 = {k: v.copy() for k, v in vars(a).items()}
    G = quat.to_matrix(quat.from_axis_angle([0.2, 0.9, -0.3], 1.1))
    T = np.array([3.0, -1.0, 2.0])
    b = evaluate(geo, pos @ G.T + T, G @ rot, vel @ G.T, om @ G.T, [0.0, 1.0])
    assert A0["active"].sum() >= 2
    np.testing.assert_array_equal(b.active, A0["active"])
    np.testing.assert_allclose(b.depth, A0["depth"], atol=1e-12)
    act = A0["active"] == 1
    np.testing.assert_allclose(b.point[act], A0["point"][act] @ G.T + T, atol=1e-12)
    np.testing.assert_allclose(b.normal, A0["normal"] @ G.T, atol=1e-12)
    np.testing.assert_allclose(b.force, A0["force"] @ G.T, atol=1e-6)


def test_quat_to_rot_matches_rodrigues():
    """The pair set's rotations (the core's free_body.rotations) against Rodrigues' formula of the same axis-angles."""
    axes = np.random.default_rng(0).normal(size=(6, 3))
    angles = np.linspace(0, 3, 6)
    q = quat.from_axis_angle_many(axes, angles)
    out = np.zeros((6, 3, 3))
    quat_to_rot(q, out)
    for a, th, R in zip(axes / np.linalg.norm(axes, axis=1, keepdims=True), angles, out):
        K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        np.testing.assert_allclose(R, np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K, atol=1e-15)


def test_movable_limiter_variant_rides_on_limiter_body():
    g = load(movable_limiter=True)
    for name in ("limiter", "limiter_rim", "load_pad_1"):
        assert BODIES[g.pint[g.prim_names.index(name), 1]] == "limiter"
    assert {p.body for p in g.parts if p.name in ("limiter", "load_pads")} == {"limiter"}
    g0 = load()
    assert BODIES[g0.pint[g0.prim_names.index("limiter"), 1]] == "housing"


def test_wireframes_and_pair_records(geo):
    names = {p.name for p in geo.parts}
    for p in geo.parts:
        assert p.body in BODIES
        assert p.points.shape[1] == 3 and np.isfinite(p.points).all()
        assert p.lines.dtype == np.int32 and p.lines.max() < len(p.points)
    for info in geo.pair_info:
        assert info.part_a in names and info.part_b in names
    assert [i.name for i in geo.pair_info] == geo.pair_names
    cone = next(p for p in geo.parts if p.name == "receiving_cone")
    r = np.hypot(cone.points[:, 1], cone.points[:, 2])
    on_cone = cone.points[:, 0] < -1e-9
    np.testing.assert_allclose(r[on_cone], [cone_radius(x) for x in cone.points[on_cone, 0]], atol=1e-12)


def test_toml_numbers_commented_and_consistent_with_synthetic_scenario():
    for line in DEFAULT_TOML.read_text().splitlines():
        if re.match(r"^\s*\w+\s*=\s*[-\d\[]", line):
            assert "#" in line and re.search(r"assumed|seed \d{3}", line), line
    syn = tomllib.loads((ROOT / "resources/scenarios/synthetic_approach.toml").read_text())["geometry"]
    assert CFG["receiving_cone"]["entrance_radius"] == syn["cone_entrance_radius"]
    assert CFG["receiving_cone"]["depth"] == syn["cone_depth"]
    assert CFG["socket"]["radius"] == syn["socket_radius"]
    assert CFG["socket"]["depth"] == syn["socket_depth"]
    assert CFG["probe_head"]["radius"] == syn["head_radius"]
    assert [CFG["limiter"]["radius_front"], CFG["limiter"]["radius_back"]] == syn["limiter_radius"]
    assert CFG["limiter"]["length"] == syn["limiter_length"]
    assert CFG["alignment_lever"]["roller_radius"] == syn["roller_radius"]
    assert CFG["housing"]["gimbal_offset"] == syn["gimbal_offset"]


def test_meridian_culling_never_changes_a_contact(geo):
    """The broad phase's (x, rho) capsule only skips pairs that cannot touch: over random poses near and inside
    the cone (heads, housings, tilts, latch and lever states) the outputs equal those with the capsules off."""
    from solver.contact.pairset import PAR_MT, PairSetOutput, evaluate_pairs
    off = geo.ppar.copy()
    off[:, PAR_MT] = -1.0
    assert (geo.ppar[:, PAR_MT] >= 0).sum() >= 15          # cone, socket, ring pairs have a capsule
    rng = np.random.default_rng(7)
    touching = 0
    for _ in range(3000):
        x = rng.uniform(-0.6, 0.25)
        r = rng.uniform(0.0, 1.1) * (cone_radius(min(x, 0.0)) if x < 0 else 0.45)
        u = rng.uniform(0, 2 * math.pi)
        head = np.array([x, r * math.cos(u), r * math.sin(u)])
        axis = rng.normal(size=3)
        Rh = np.asarray(quat.to_matrix(quat.from_axis_angle(axis / np.linalg.norm(axis), rng.normal(scale=0.12))))
        gimbal = head + Rh @ [rng.uniform(0.3, 0.9), 0, 0]
        pos, rot, vel, om = poses(head=head, gimbal=gimbal, housing_rot=Rh)
        rot[B["probe_head"]] = rot[B["probe"]] = Rh
        vel[:] = rng.normal(scale=0.1, size=vel.shape)
        state = rng.uniform(0, 1, size=2 + 4)
        outs = []
        for ppar in (geo.ppar, off):
            o = PairSetOutput(len(geo.pair_names))
            st = evaluate_pairs(geo.prim, geo.pint, geo.pairs, ppar, pos, rot, vel, om, state, geo.work, o.active,
                                o.depth, o.point, o.normal, o.force, o.diag)
            outs.append((st, o))
        (s1, a), (s2, b) = outs
        assert s1 == s2
        if s1 == 0:
            for f in ("active", "depth", "point", "normal", "force"):
                np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
            touching += int(a.active.any())
        else:
            np.testing.assert_array_equal(a.diag, b.diag)
    assert touching > 100                                   # the sample does hit the surfaces
