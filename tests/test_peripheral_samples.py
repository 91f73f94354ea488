"""The bundled peripheral sample runs (sample_runs/peripheral/, bench/make_sample_runs.py): real solver runs of the
type's scenarios, first contact to the hooks closed, each with its verdict."""
from pathlib import Path

import numpy as np

import pytest

from solver import mechanisms
from solver.runfile import RunFile
from solver.verdict import evaluate

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "sample_runs" / "peripheral").glob("*.h5"))
SCENARIOS = ROOT / "resources" / "peripheral" / "scenarios"


def test_there_are_three_or_more_each_of_a_bundled_scenario():
    assert len(SAMPLES) >= 3
    assert {p.stem for p in SAMPLES} <= {p.stem for p in SCENARIOS.glob("*.toml")}


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_sample_runs_from_first_contact_and_is_flat_at_hard_dock_when_it_gets_there(path):
    """From the stored poses (bench/peripheral_checks.py), not the hook flag: at hooks closed the interface is within
    the seal gap all round and tilted <= 0.5 deg, at hard dock flat; the planes never overlap by more than the seal's
    and the structures' compression (1.5 mm); the verdict reads the solver's per-step extrema."""
    from bench.peripheral_checks import interface_at
    with RunFile(path) as run:
        assert mechanisms.for_run(run).name == "peripheral" and run.meta.complete
        kinds = [e.kind for e in run.events]
        first = next(e.time for e in run.events if e.kind == "first_contact")
        assert float(run.time[0]) <= first and "capture" in kinds
        assert run.extrema("hook_gap_min")[0] > -0.0015                      # never through the passive plane
        v = evaluate(run)                                      # the type's own criteria
        assert Path(v.criteria_path).parent.name == "peripheral" and "solver steps" in v.report()
        if "hard_dock" not in kinds:
            assert not v.passed
            return
        hooks = next(e.time for e in run.events if e.kind == "phase" and e.text.startswith("hooks closed"))
        hard = next(e.time for e in run.events if e.kind == "hard_dock")
        assert first < hooks < hard and abs(float(run.time[-1]) - hard) < run.meta.output_step + 1e-9
        i = int(np.searchsorted(run.time, hooks - 1e-9))
        tilt, g0, g1 = interface_at(run, i)
        assert tilt <= 0.5 and -0.0015 < g0 <= g1 < 0.0025, (tilt, g0, g1)    # the next frame after the 2 mm test
        tilt, g0, g1 = interface_at(run, run.n_frames - 1)
        assert tilt < 0.01 and -0.0015 < g0 <= g1 < 0.0, (tilt, g0, g1)       # pulled flat onto the structures
        assert run.channel("hooks_closed")[-1] == 12


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_a_samples_device_channels_carry_the_ranges_the_type_declares(path):
    """The leg strokes' and leg forces' gauge ranges as solver/mechanisms/peripheral/simulate.channel_infos declares
    them (the samples written before the leg-force range showed the gauges hatched 'no range'; fails on old main)."""
    import math
    with RunFile(path) as run:
        for k in range(1, 7):
            force, stroke = run.channels[f"leg_{k}_force"].stroke, run.channels[f"leg_{k}"].stroke
            assert math.isfinite(force) and force >= run.stored_abs_max(f"leg_{k}_force"), (k, force)
            assert math.isfinite(stroke) and stroke > 0.0


@pytest.mark.parametrize("stem", ["idss_envelope", "expert_envelope_corner", "nominal_10t"])
def test_the_envelope_corner_and_nominal_samples_close_their_hooks_flat_and_pass(stem):
    """Issue 33's must-show, from the stored poses: each reaches hooks closed with tilt <= 0.5 deg and the interface
    within the seal gap all round, then hard dock, and its verdict (the interface loads at the solver's rate, each
    phase against its IDD limit) passes; the sample is of the shipped mechanism file (regenerate it when that changes).
    (The expert corner FAILed on main: aligning its 7.35 deg tilt in 11.7 s, the craft met the seal at 6.94 kN.)"""
    from bench.peripheral_checks import interface_at
    with RunFile(ROOT / "sample_runs" / "peripheral" / f"{stem}.h5") as run:
        mech = run.parameters_toml.split("# mechanism ", 1)[1].split("\n", 1)[1]
        assert mech.strip() == (ROOT / "resources" / "peripheral" / "peripheral_idss.toml").read_text().strip()
        hooks = next(e.time for e in run.events if e.kind == "phase" and e.text.startswith("hooks closed"))
        assert any(e.kind == "hard_dock" for e in run.events)
        tilt, g0, g1 = interface_at(run, int(np.searchsorted(run.time, hooks - 1e-9)))
        assert tilt <= 0.5 and 0.0 < g0 <= g1 < 0.0025, (tilt, g0, g1)
        v = evaluate(run)
        assert v.passed and "solver steps" in v.report(), v.line()
