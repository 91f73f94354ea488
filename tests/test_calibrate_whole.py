"""Calibration on whole records (issue 34): the samples the model predicts are fitted, the rest left out and named.
A whole run's retraction parts from itself when the solver's step is halved or a key moves by 1e-4 (docs/
measured-data.md, bench/calibrate_whole.py); here the twins' test, the horizon and the cost on arrays (no run)."""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from solver.measured.calibrate import (HORIZON, STAGE_MIN, Calibration, FitKey, _Residual, _Runs, fit_bounds,
                                       horizon_of, next_stage, write_fitted)
from solver.measured.channel_map import MeasuredSignals
from tests.calibrate_truth import CENTRAL, truth_scenario

BRAKE = "axial_damper.friction_brake_torque_in"
SIGMA = 50.0      # N, the record's noise


def _record():
    t = np.arange(0.0, 10.0, 0.002)
    clean = 2000.0 * np.sin(0.7 * t) + 500.0 * np.cos(3.1 * t)
    noisy = clean + np.random.default_rng(3).normal(0.0, SIGMA, len(t))
    sig = MeasuredSignals(Path("stand.mat"), t, {"Fx": noisy}, {"Fx": "N"})
    return t, clean, _Residual(sig, ["Fx"], {}, 0.0, 10.0, 0.02)


def _run(t, v):
    return {"status": "ok", "time": t, "values": {"Fx": v}}


def test_what_a_twin_parts_from_is_left_out_and_past_the_horizon_everything():
    """A twin 3 sigma off for 0.4 s leaves out that span (and its averaging window), one off for longer than HORIZON
    marks the model's horizon: the record from there is left out; the cost no longer sees either, and its noise level
    counts the kept samples only."""
    t, clean, res = _record()
    bump = np.where((t >= 3.0) & (t < 3.4), 3 * SIGMA, 0.0)
    late = np.where(t >= 6.0, 3 * SIGMA * np.sin(40 * t), 0.0)
    tiny = 0.02 * SIGMA * np.sin(5 * t)                      # a twin within the noise everywhere: nothing left out
    assert res.predictable(_run(t, clean), [_run(t, clean + tiny)]).all()
    res.keep = res.predictable(_run(t, clean), [_run(t, clean + bump), _run(t, clean + late)])
    spans = res.left_out(0.137)
    assert len(spans) == 2, spans
    (a, b), (c, d) = spans
    assert 3.0 < a + 0.0 < 3.137 and 3.537 - 0.1 < b < 3.537 + 0.15, spans          # the bump, in record time
    assert 6.0 < c < 6.137 + 0.05 and d > 10.0, spans                               # the horizon on: all of it
    assert HORIZON <= 10.0 - 6.0 and 5.85 < res.horizon() < 6.0       # the last sample fitted
    base = res(_run(t, clean))
    off = res(_run(t, clean + 20 * bump + 30 * late))       # a candidate wrong only where nothing is fitted
    assert np.allclose(base, off, rtol=0, atol=1e-9)
    kept = res.rows().sum()
    assert 0.5 * len(t) < kept < 0.6 * len(t)
    assert abs(float(base @ base) / res.noise_cost - 1.0) < 0.1    # the truth leaves the noise's cost on what is kept
    coarse = res.smoothed(0.2)
    assert coarse.rows().sum() < kept                       # the 0.2 s windows keep off the left-out spans' edges


def test_the_twin_with_the_step_halved_runs_the_scenario_at_half_its_step(tmp_path):
    """The predictability twins: the same point with the solver's step halved (a variant of the run's cache key)."""
    sp = truth_scenario(tmp_path, {BRAKE: 1.0})
    from solver.measured.calibrate import _read
    sc, mpath, mt = _read(sp)
    fk = fit_bounds(sp, BRAKE)
    runs = _Runs(None, sc, mt, mpath, [fk], ["Fx"], None, None, None, 10, 0.002, 1e-3)
    x = np.array([fk.value])
    assert runs.task(x, 2.0, ("step/2",))["scenario"]["solver"]["step"] == 5e-4
    assert runs.task(x, 2.0)["scenario"]["solver"]["step"] == sc["solver"]["step"]
    assert runs.key(x, ("step/2",)) != runs.key(x) and runs.key(x, ("step/2",))[:1] == runs.key(x)


def test_the_left_out_spans_are_said_and_written_into_the_fitted_file(tmp_path):
    fk = fit_bounds(CENTRAL, BRAKE)
    cal = Calibration([fk], np.array([fk.value]), np.array([2.04]), np.array([0.01]), 0.137, [], [], 40, 1.0,
                      "converged", left_out=[(8.137, 8.477), (20.447, 38.29)])
    line = cal.left_out_line()
    assert "8.14-8.48 s, 20.45-38.29 s of the record (18.2 s)" in line and "step halved" in line, line
    out, mech = write_fitted(CENTRAL, cal, tmp_path / "fit.toml", tmp_path / "stand.mat")
    for text in (out.read_text(), mech.read_text()):
        assert "# left out of the fit: 8.14-8.48 s, 20.45-38.29 s" in text
    assert tomllib.loads(mech.read_text())["axial_damper"]["friction_brake_torque_in"] == 2.04


def test_past_a_horizon_the_fit_goes_in_stages_from_the_record_s_start():
    """The whole 3-key run (bench/calibrate_kept.py): from a wrong basin to the truth the cost is one basin on the
    record's first 8 s and has a ridge from 10 s on, so the global phase takes a quarter of the start's horizon, each
    stage twice the last, the last all the fit predicts; a record the model predicts to its end has no stages."""
    tq = np.arange(0.0, 40.0, 0.002)
    keep = tq <= 14.33                       # the start's twins: the horizon at 14.33 s
    first = next_stage(tq, keep)
    assert abs(first - 14.33 / 4) < 0.01
    assert abs(next_stage(tq, keep, first) - 2 * first) < 1e-9
    assert next_stage(tq, keep, 2 * first) == np.inf          # 14.3 s reaches the horizon: all the twins keep
    assert next_stage(tq, tq <= 5.0) == STAGE_MIN               # never under STAGE_MIN
    assert next_stage(tq, tq <= 1.5) == np.inf                  # too short to stage
    gaps = (tq < 3.0) | (tq > 3.4)                              # left out inside, and a tail under HORIZON: no horizon
    assert horizon_of(tq, gaps) == np.inf and next_stage(tq, gaps) == np.inf
    tail = tq <= 40.0 - 0.6 * HORIZON
    assert horizon_of(tq, tail) == np.inf and horizon_of(tq, tq <= 20.0) == 20.0


def test_a_stage_s_shorter_runs_do_not_serve_a_longer_one(tmp_path):
    """A run asked for to 4 s serves a stage ending at 2 s but not one ending at 8 s (it would be held at its 4 s
    value from there: the cost of a different record); runs are cached with the end asked for."""
    sp = truth_scenario(tmp_path, {BRAKE: 1.0})
    from solver.measured.calibrate import _read
    sc, mpath, mt = _read(sp)
    fk = fit_bounds(sp, BRAKE)
    runs = _Runs(None, sc, mt, mpath, [fk], ["Fx"], None, None, None, 10, 0.002, 1e-3)
    x = np.array([fk.value])
    t = np.arange(0.0, 4.0, 0.002)
    runs.cache[runs.key(x)] = {"status": "ok", "time": t, "values": {"Fx": t}, "t_req": 4.0}
    assert runs.has(runs.key(x), 2.0) and runs.has(runs.key(x), 4.0) and not runs.has(runs.key(x), 8.0)
    assert runs.get([x], 2.0)[0]["t_req"] == 4.0         # served from the cache (no client here to run it)
