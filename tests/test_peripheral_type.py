"""The peripheral (IDSS-class) mechanism type end to end (issue 26, first slice): `dockmnemo run` on its
scenarios, the physics checks on the central impact (energy balance, zero lateral loads, capture, hooks closed),
bad input refused with `file: key: problem`, and the run opened in the viewer with its ring, legs and six leg bars."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from solver import mechanisms
from solver.runfile import RunFile
from solver.scenario import ScenarioError, load_model

ROOT = Path(__file__).resolve().parent.parent
PERIPHERAL = ROOT / "resources" / "peripheral"
CENTRAL = PERIPHERAL / "scenarios" / "central_impact_10t.toml"
ENVELOPE = PERIPHERAL / "scenarios" / "idss_envelope.toml"
LEGS = [f"leg_{k}" for k in range(1, 7)]


@pytest.fixture(scope="module")
def central_run(tmp_path_factory) -> Path:
    """The central impact from first contact to hard dock, run once per session (tests/peripheral_runs.py)."""
    from tests.peripheral_runs import central_run as shared
    return shared(tmp_path_factory)


@pytest.mark.slow
def test_central_impact_balances_energy_and_gives_no_lateral_loads(central_run):
    with RunFile(central_run) as r:
        ke0 = r.channel("kinetic_energy")[0]
        e = r.channel("total_energy")
        m_active = 10000.0 + 35.0                                       # craft and guide ring
        assert ke0 == pytest.approx(0.5 * m_active * 4e5 / (4e5 + m_active) * 0.1 ** 2, rel=1e-9)   # CoM frame
        assert np.max(np.abs(e - e[0])) < 1e-3 * ke0                                       # < 0.1 % of KE0
        assert r.channel("dissipated_energy")[-1] > 0.5 * ke0 and r.channel("drive_work")[-1] > 0
        fx = np.max(np.abs(r.channel("Fx")))
        assert 500.0 < fx < 3900.0                                     # within the IDSS soft-capture load
        for name in ("Fy", "Fz"):
            assert np.max(np.abs(r.channel(name))) < 1e-9 * fx, name
        for name in ("Mx", "My", "Mz"):
            assert np.max(np.abs(r.channel(name))) < 1e-9 * fx * 1.0, name   # N*m against N over a 1 m lever
        strokes = np.array([r.channel(n) for n in LEGS])
        assert np.ptp(strokes, axis=0).max() < 1e-9                    # six legs stroke alike


@pytest.mark.slow
def test_step_halving_changes_the_peak_base_force_by_less_than_2_percent(central_run, tmp_path):
    from solver.simulate import run_scenario
    text = CENTRAL.read_text().replace('"../peripheral_idss.toml"', f'"{PERIPHERAL / "peripheral_idss.toml"}"')
    half = tmp_path / "half.toml"
    half.write_text(text.replace("step = 5.0e-4", "step = 2.5e-4"))
    out = run_scenario(half, tmp_path / "half.h5", t_end=1.0)
    with RunFile(central_run) as a, RunFile(out) as b:
        fa, fb = np.abs(a.channel("Fx")).max(), np.abs(b.channel("Fx")).max()
    assert abs(fa - fb) < 0.02 * fa


@pytest.mark.slow
def test_central_impact_captures_retracts_and_closes_the_hooks(central_run):
    with RunFile(central_run) as r:
        assert r.meta.mechanism_type == "peripheral" and mechanisms.for_run(r).name == "peripheral"
        kinds = [e.kind for e in r.events]
        assert kinds.index("capture") < kinds.index("phase") < kinds.index("hard_dock")
        assert 0.04 < r.t_capture < 0.2                       # faces 5 mm apart at 0.1 m/s, then pressed together
        assert r.channel("latches_engaged")[-1] == 3 and r.channel("hooks_closed")[-1] == 12
        assert abs(r.channel("hook_gap")[-1]) < 0.003 and r.meta.complete
        assert r.channel("leg_1")[-1] == pytest.approx(-r.channel("retraction")[-1], abs=2e-3)
        assert "ring_ring" in r.contact_pairs and any(e.pair == "ring_ring" for e in r.events)
        from solver.verdict import evaluate, load_criteria
        v = evaluate(r, load_criteria(mechanisms.for_run(r).criteria_file))
        assert v.passed, v.report()


@pytest.mark.slow
def test_the_bundled_central_sample_is_this_solvers_run(central_run):
    """sample_runs/peripheral/central_impact_10t.h5 (bench/make_sample_runs.py: 20 ms frames of the 5 ms run) holds
    this run's frames bit for bit: the samples other tests read are of this solver (regenerate them when it changes)."""
    with RunFile(central_run) as r, RunFile(ROOT / "sample_runs" / "peripheral" / "central_impact_10t.h5") as s:
        k = int(round(s.meta.output_step / r.meta.output_step))
        keep = np.arange(0, r.n_frames, k)
        keep = keep if keep[-1] == r.n_frames - 1 else np.append(keep, r.n_frames - 1)
        assert k == 4 and s.n_frames == len(keep) and s.t_final == r.t_final
        for name in r.channels:
            np.testing.assert_array_equal(np.asarray(s.channel(name)), np.asarray(r.channel(name))[keep], name)
        assert [(e.time, e.kind, e.text) for e in s.events] == [(e.time, e.kind, e.text) for e in r.events]


@pytest.mark.slow
def test_fx_rings_after_capture_at_the_braked_legs_closed_form(central_run):
    """The ~1 Hz, +-500 N Fx after the central capture is the 10 t craft on the six stuck leg brakes: frequency and
    damping ratio of k = sum (brake_stiffness + stiffness) u_x^2, c = sum (brake_damping + damping) u_x^2 on the
    reduced mass (closed form 0.970 Hz, zeta 0.037; measured 0.962 Hz, 0.038), not the servo, hooks or frames."""
    import tomllib
    from scipy.signal import find_peaks
    legs = tomllib.loads((PERIPHERAL / "peripheral_idss.toml").read_text())["legs"]
    with RunFile(central_run) as r:
        t, fx = np.asarray(r.time), np.asarray(r.channel("Fx"))
        t_retract = next(e.time for e in r.events if e.kind == "phase" and e.text.startswith("retraction"))
        names = list(r.bodies)
        pos, _ = r.poses(r.frame_at(3.0))
        d = [pos[names.index(f"leg_{k}_upper")] - pos[names.index(f"leg_{k}_lower")] for k in range(1, 7)]
        ux = [v[0] / np.linalg.norm(v) for v in d]
    k = (legs["brake_stiffness"] + legs["stiffness"]) * np.sum(np.square(ux))
    c = (legs["brake_damping"] + legs["damping"]) * np.sum(np.square(ux))
    m = 10000.0 * 400035.0 / 410035.0                        # the craft on the station with the latched ring
    f0, zeta0 = math.sqrt(k / m) / (2 * math.pi), c / (2 * math.sqrt(k * m))
    sel = (t > 1.5) & (t < t_retract - 0.1)                  # braked, the brakes stuck, before the retraction
    x = fx[sel] - fx[sel].mean()
    crossings = t[sel][1:][np.sign(x[1:]) != np.sign(x[:-1])]
    f = 0.5 / np.mean(np.diff(crossings))
    amps = np.abs(x[find_peaks(np.abs(x))[0]])
    zeta = np.mean(np.log(amps[:-1] / amps[1:])) / math.pi
    assert 300.0 < amps[0] < 700.0 and len(crossings) >= 6
    assert f == pytest.approx(f0, rel=0.03) and zeta == pytest.approx(zeta0, rel=0.15), (f, f0, zeta, zeta0)


@pytest.mark.slow
def test_dockmnemo_run_on_the_envelope_case(tmp_path):
    """The same CLI as the probe-cone (app.cli.main, in this process): the loader dispatches on the mechanism file's
    `mechanism_type`."""
    from tests.cli_here import cli_here
    out = tmp_path / "env.h5"
    p = cli_here("run", ENVELOPE, "--out", out, "--t-end", "1.0")
    assert p.returncode == 0, p.stderr
    with RunFile(out) as r:
        assert r.meta.mechanism_type == "peripheral" and r.t_final == pytest.approx(1.0)
        assert {"ring_ring", "petal_ring_1", "latch_1", "interface"} <= set(r.contact_pairs)
        assert r.channel("ring_y")[0] == pytest.approx(0.10, abs=1e-3)   # the 0.10 m miss at t = 0
        first = next(e.time for e in r.events if e.kind == "first_contact")
        assert r.channel("ring_y")[r.frame_at(first)] == pytest.approx(0.10, abs=2e-3)   # ... and at first contact


def test_the_first_run_compiles_what_it_says_and_nothing_else(tmp_path):
    """The warm-up's unit (compiled with "compiling solver kernels, first run only") is the one the run calls: after a
    run the step loop holds that one specialization, so nothing compiles silently behind the bar."""
    from solver.mechanisms.peripheral import dynamics as D
    from solver.mechanisms.peripheral.simulate import kernel_units
    from solver.simulate import run_scenario
    from solver.warmup import compile_kernels
    m = load_model(CENTRAL)
    compile_kernels(m)
    run_scenario(CENTRAL, tmp_path / "p.h5", t_end=0.05)
    (_, disp, sig), = kernel_units(m)
    assert disp is D.run_block and list(D.run_block.signatures) == [sig]


def test_a_peripheral_run_goes_through_the_one_runner(tmp_path, monkeypatch):
    """Its kernels are a BlockKernels driven by solver.simulate.run_kernels (events, capture, snapshots, cancel, live
    view in one place; main had its own block loop)."""
    import solver.simulate as S
    seen, run_kernels = [], S.run_kernels
    monkeypatch.setattr(S, "run_kernels", lambda w, k, *a, **kw: seen.append(k) or run_kernels(w, k, *a, **kw))
    S.run_scenario(CENTRAL, tmp_path / "p.h5", t_end=0.1)
    assert len(seen) == 1 and isinstance(seen[0], S.BlockKernels)
    with RunFile(tmp_path / "p.h5") as r:
        assert r.extrema_step() == 5e-4 and r.t_capture < 0.1 and r.meta.complete


def test_the_type_names_what_its_model_writes():
    pt = mechanisms.mechanism_type("peripheral")
    m = load_model(CENTRAL)
    assert m.mechanism_type == "peripheral" and pt.build_model(CENTRAL).name == m.name
    names = {c.name for c in pt.channels(m)}
    lay = pt.device_layout()
    shown = [n for g in lay.groups for n in g.channels] + list(lay.sketch.channels) + list(pt.default_plots)
    assert [n for n in shown + list(pt.readout_channels()) if n not in names] == []
    assert {c.name: c.stroke for c in pt.channels(m) if c.name in LEGS} == {n: 0.08 for n in LEGS}
    assert pt.criteria_file.is_file() and sorted(p.name for p in pt.scenarios_dir.glob("*.toml")) == [
        "central_impact_10t.toml", "expert_envelope_corner.toml", "idss_envelope.toml", "nominal_10t.toml",
        "stand_fixed_base.toml"]
    assert type(load_model(ROOT / "resources" / "scenarios" / "central_impact_20t.toml")).__name__ == "Model"


def test_a_mechanism_file_without_a_type_is_a_probe_cone_one(tmp_path):
    """The one dispatch: a file naming no mechanism_type goes to the probe-cone loader, which names what it lacks;
    one naming an unknown type is refused naming the known ones."""
    path = _edited(tmp_path, mechanism_edit=lambda t: t.replace('mechanism_type = "peripheral"', ""))
    with pytest.raises(ScenarioError, match="mech.toml: variant: None: must be one of existing"):
        load_model(path)
    path = _edited(tmp_path, mechanism_edit=lambda t: t.replace('mechanism_type = "peripheral"',
                                                                'mechanism_type = "apas"'))
    with pytest.raises(ScenarioError) as ei:
        load_model(path)
    assert str(ei.value) == (f"{path}: mechanism: its mechanism_type: unknown mechanism type 'apas' "
                             f"(known: probe_cone, peripheral, rods, snare, berthing)")


def _edited(tmp_path, scenario_edit=None, mechanism_edit=None) -> Path:
    mech = (PERIPHERAL / "peripheral_idss.toml").read_text()
    if mechanism_edit:
        mech = mechanism_edit(mech)
    (tmp_path / "mech.toml").write_text(mech)
    sc = CENTRAL.read_text().replace('mechanism = "../peripheral_idss.toml"', 'mechanism = "mech.toml"')
    if scenario_edit:
        sc = scenario_edit(sc)
    path = tmp_path / "sc.toml"
    path.write_text(sc)
    return path


@pytest.mark.parametrize("where, edit, key, problem", [
    ("mechanism", lambda t: t.replace("stiffness = 4.0e3", "stifness = 4.0e3"), "legs.stifness",
     "unknown key (did you mean stiffness?)"),
    ("mechanism", lambda t: t.replace("face_outer_radius = 0.60", "face_outer_radius = 0.40"),
     "guide_ring.face_outer_radius", "must be larger than face_inner_radius"),
    ("mechanism", lambda t: t.replace("stroke_retract = 0.08", "stroke_retract = 0.05"), "interface.offset",
     "retracting the ring to it shortens the legs"),
    ("mechanism", lambda t: t.replace("neutral_height = 0.30", "neutral_height = -0.30"), "hexapod.neutral_height",
     "outside the allowed range"),
    ("scenario", lambda t: t.replace("face_gap = 0.005", "face_gap = -1.0"), "initial.face_gap",
     "outside the allowed range"),
    ("scenario", lambda t: t.replace("step = 5.0e-4", "step = 1.0e-3"), "solver.step",
     "too large for the guide ring: omega*step = 1.1 (<= 1), decay*step = 1.29 (<= 2); at most 0.000911 s"),
    ("scenario", lambda t: t.replace("face_gap = 0.005", "head_start_x = -0.4"), "initial.head_start_x",
     "unknown key (known here: "),
])
def test_bad_input_is_refused_naming_file_and_key(tmp_path, where, edit, key, problem):
    path = _edited(tmp_path, **{f"{where}_edit": edit})
    with pytest.raises(ScenarioError) as ei:
        load_model(path)
    f = path if where == "scenario" else tmp_path / "mech.toml"
    assert str(ei.value).startswith(f"{f}: {key}: ") and problem in str(ei.value), str(ei.value)


@pytest.mark.slow
@pytest.mark.gui
def test_the_run_opens_with_its_ring_legs_and_six_leg_bars(qtbot, tmp_path, central_run, artifacts):
    from tests.gui_util import label_texts, main_window
    w = main_window(qtbot, tmp_path / "s.ini", central_run)
    d = w.diagram
    w.playback.seek_time(0.1)
    qtbot.wait(100)
    dv = d.devices
    assert dv.bars["legs"] == LEGS and dv.bars["capture"] == ["latches_engaged", "hooks_closed"]
    texts = {shown for shown, *_ in dv.label_rects()}
    assert {"plane x-y", "latches and hooks"} <= texts and not any("probe" in t for t in texts)
    for k in range(1, 7):          # leg-force bars have a range (the spring at the stroke's end + the brake)
        assert dv.scales[f"leg_{k}_force"] > 0
    for name in LEGS:
        assert dv.value(name) == pytest.approx(w.run.channel_at(name, w.playback.frame))
    labels = "\n".join(label_texts(d.scene))
    assert "RING rel. PASSIVE RING" in labels and "HEAD rel. CONE" not in labels
    from tests.layout_check import cut_texts
    assert cut_texts(d.scene) == []          # the readout columns widen for the ring's longer names
    w.grab_image().save(str(artifacts / "peripheral_window_contact.png"))
    w.playback.seek_time(10.0)     # retracting (from 6.4 s, once the motion settled): the legs shortened
    qtbot.wait(100)
    assert dv.value("leg_1") < -0.035   # 0.06 m commanded; the 4e3 N/m legs trail it by ~18 mm
    w.grab_image().save(str(artifacts / "peripheral_window_retraction.png"))
    dv.grab().save(str(artifacts / "peripheral_devices.png"))


def test_a_peripheral_run_compiles_its_listed_unit_before_the_kernels_start(tmp_path):
    """run_peripheral loads or compiles the type's kernel unit (solver.warmup, with its cache lock) before the writer
    and the kernels start: in a fresh process the step loop is in its dispatcher when PeripheralKernels is made."""
    from tests.compile_spy import compiled_before_kernels
    seen = compiled_before_kernels("solver.mechanisms.peripheral.simulate", "PeripheralKernels", "run_peripheral",
                                   CENTRAL, tmp_path / "p.h5", 0.01)
    assert seen == ["[True]", "True"], seen
