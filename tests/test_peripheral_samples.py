"""The bundled peripheral sample runs (sample_runs/peripheral/, bench/make_sample_runs.py): real solver runs of the
type's scenarios, first contact to the hooks closed, each with its verdict."""
from pathlib import Path

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
def test_a_sample_runs_from_first_contact_to_the_hooks_closed(path):
    with RunFile(path) as run:
        assert mechanisms.for_run(run).name == "peripheral" and run.meta.complete
        kinds = [e.kind for e in run.events]
        first = next(e.time for e in run.events if e.kind == "first_contact")
        hooks = next(e.time for e in run.events if e.kind == "hard_dock")
        assert float(run.time[0]) <= first < hooks and abs(float(run.time[-1]) - hooks) < run.meta.output_step + 1e-9
        assert "capture" in kinds and run.channel("hooks_closed")[-1] == 12
        v = evaluate(run)                                      # the type's own criteria
        assert Path(v.criteria_path).parent.name == "peripheral" and v.passed, v.line()


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
