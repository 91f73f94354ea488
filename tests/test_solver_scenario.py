"""Scenario validation: bad inputs are refused with a ScenarioError naming the file and key."""
from __future__ import annotations

import pytest

from solver.runfile import RunFile
from solver.mechanisms.probe_cone.simulate import channel_infos
from solver.simulate import run_scenario
from solver.scenario import ScenarioError, load_model
from tests.test_solver_helpers import SCEN, variant
from tests.synthetic_run import channels_spec


@pytest.mark.parametrize("subs,extra,key,words", [
    ({"closing_speed": "-0.1"}, "", "initial.closing_speed", "outside"),
    ({"mass": "\"heavy\""}, "", "passive_craft.mass", "number"),
    ({"step": "5.0e-3", "output_step": "1.0e-2"}, "", "solver.step", "too large"),
    ({"step": "3.0e-4"}, "", "solver.step", "divide"),
    ({"mechanism": "\"nonexistent\""}, "", "mechanism", "no mechanism file"),
    ({"lateral_miss": "[0.1]"}, "", "initial.lateral_miss", "list of 2"),
    ({}, "[overrides]\nwarp_drive = 1\n", "overrides.warp_drive", "unknown"),
])
def test_bad_inputs_refused(tmp_path, subs, extra, key, words):
    sc = variant(tmp_path, "central_impact_20t.toml", subs, extra)
    with pytest.raises(ScenarioError) as ei:
        load_model(sc)
    assert ei.value.key == key and words in str(ei.value) and sc.name in str(ei.value)


def test_inertia_checks(tmp_path):
    sc = variant(tmp_path, "central_impact_20t.toml", {"inertia": "[[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]"})
    with pytest.raises(ScenarioError, match="symmetric"):
        load_model(sc)


def test_every_scenario_loads_and_channels_match_the_viewer():
    names = {c.name for c in channels_spec({"spring_stroke": 0.1, "stroke_max": 0.4, "lateral_spring_stroke": 0.03,
                                           "magnetic_brake_rate_max": 1, "active_mass": 1.0})}
    for p in sorted(SCEN.glob("*.toml")):
        if p.name == "synthetic_approach.toml":
            continue
        m = load_model(p)
        ours = {c.name for c in channel_infos(m)}
        assert names <= ours, names - ours


def test_run_file_layout(tmp_path):
    r = RunFile(run_scenario(SCEN / "central_impact_20t.toml", tmp_path / "a.h5", t_end=0.05))
    assert r.bodies == ["passive_craft", "active_craft", "housing", "probe", "probe_head", "limiter"]
    lib = [f"latch_slot_{k}" for k in range(1, 5)] + [f"latch_stop_{k}" for k in range(1, 5)] + \
        [f"load_pad_{k}" for k in range(1, 7)] + [f"roller_{k}" for k in range(1, 4)]
    assert set(r.contact_pairs) == {"head_cone", "head_socket", "head_socket_bottom", "limiter_cone", "limiter_edge",
                                    "ring_ring", "latch_neck", *lib}
    for name in r.contact_pairs:                     # every pair's full state is stored
        d = r.contact_detail(name)
        assert {"normal", "depth", "normal_speed"} <= set(d), name
    assert r.n_frames == 51 and r.meta.output_step == 1e-3
    assert r.channels["spring_mechanism_1"].place == 90.0


def test_step_check_includes_the_latch_friction_ramp(tmp_path):
    """With the old friction ramp (`friction = "ramp"`), the latches' stick ramp on the probe torsion scales with the
    drive's pull: a 4x stronger drive makes the 1 ms step too large for RK4 stability (decay rate * step > 2; the
    elastic contact rates do not depend on it). The bristle law's sticking modes do not depend on it either."""
    from tests.test_solver_helpers import ROOT
    ramp = '[overrides]\nfriction = "ramp"\n'
    base = load_model(variant(tmp_path, "expert_existing.toml", {}, ramp))
    assert base.step == 1e-3 and base.omega_max * base.step <= 1.0 and 1.0 < base.decay_max * base.step <= 2.0
    mech = (ROOT / "resources" / "mechanisms" / "existing.toml").read_text()
    strong = mech.replace("stall_force = 5000.0 ", "stall_force = 20000.0 ")
    assert strong != mech
    (tmp_path / "strong.mechanism.toml").write_text(strong)
    bristle = load_model(variant(tmp_path, "expert_existing.toml", {"mechanism": "\"strong.mechanism.toml\""}))
    assert bristle.decay_max * bristle.step < 1.0
    sc = variant(tmp_path, "expert_existing.toml", {"mechanism": "\"strong.mechanism.toml\""}, ramp)
    with pytest.raises(ScenarioError) as ei:
        load_model(sc)
    assert ei.value.key == "solver.step" and "too large for the fastest decay" in str(ei.value)
