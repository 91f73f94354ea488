"""Capture verdict: pass and fail cases on the hand-built known-contacts run, criteria errors, `dockmnemo info`."""
import math
import subprocess
import sys

from pathlib import Path

import numpy as np
import pytest

from solver.runfile import RunFile
from tests import contact_run
from viewer.capture_verdict import DEFAULT_CRITERIA, FAIL, NA, PASS, CriteriaError, evaluate, load_criteria

T = np.arange(contact_run.N) * contact_run.DT
ROOT = Path(__file__).resolve().parent.parent


def verdict_of(tmp_path, name="run.h5", criteria=None, **kw):
    with RunFile(contact_run.make(tmp_path / name, **kw)) as r:
        return evaluate(r, criteria)


def status(v, name):
    return next(c for c in v.checks if c.name == name).status


def test_default_criteria_file_reads_and_is_commented():
    c = load_criteria()
    assert c.by_time == 5.0 and c.base_loads["Fx"] == 10000.0 and c.strokes["probe_stroke"] == (-0.005, 0.43)
    assert c.release_channel == "latches_engaged" and c.release_drop == 0.5
    text = DEFAULT_CRITERIA.read_text()
    numbered = [ln for ln in text.splitlines() if "=" in ln and not ln.lstrip().startswith("#")
                and any(ch.isdigit() for ch in ln.split("=")[1].split("#")[0])]
    assert numbered and all("assumed" in ln for ln in numbered), "every number says it is assumed"


def test_known_run_passes(tmp_path):
    v = verdict_of(tmp_path)
    assert v.passed
    assert [c.status for c in v.checks] == [PASS, PASS, PASS, PASS]
    assert v.line() == ("PASS: captured at 1.500 s; peak base loads within limits; damper strokes within range; "
                        "no latch release")
    rep = v.report()
    assert "NO CHANNEL" not in rep.upper() or "N/A" in rep
    assert "crank_angle_1" in rep and "N/A" in rep                     # the run has no crank channels


def test_late_capture_fails(tmp_path):
    v = verdict_of(tmp_path, t_capture=3.2)
    assert v.passed and status(v, "capture") == PASS                   # 3.2 s is within the default 5 s
    crit = load_criteria()
    crit.by_time = 3.0
    with RunFile(tmp_path / "run.h5") as r:
        v = evaluate(r, crit)
    assert status(v, "capture") == FAIL
    assert v.line().startswith("FAIL: captured at 3.200 s > 3 s")


def test_no_capture_fails_and_latches_are_not_judged(tmp_path):
    v = verdict_of(tmp_path, t_capture=math.nan)
    assert not v.passed and status(v, "capture") == FAIL and status(v, "release") == NA
    assert v.line().startswith("FAIL: no capture")


def test_peak_base_load_over_the_limit_fails(tmp_path):
    fx = np.zeros(contact_run.N)
    fx[2345] = -12500.0
    v = verdict_of(tmp_path, overrides={"Fx": fx})
    assert not v.passed and status(v, "base_loads") == FAIL
    assert v.line() == ("FAIL: peak |Fx| 12.50 kN > 10.00 kN at 2.345 s; captured at 1.500 s; damper strokes "
                        "within range; no latch release")


def test_stroke_out_of_range_fails(tmp_path):
    stroke = np.clip((T - 1.0) * 0.3, 0, 0.44)
    v = verdict_of(tmp_path, overrides={"probe_stroke": stroke})
    assert status(v, "strokes") == FAIL and not v.passed
    assert "probe_stroke 0.44 > 0.43 m at 2.467 s" in v.line()
    lateral = 0.03 * np.sin(2 * np.pi * T)
    v = verdict_of(tmp_path, "lat.h5", overrides={"spring_mechanism_1": -lateral})
    assert "spring_mechanism_1 0.03 > 0.026 m at 0.750 s and -0.03 < -0.026 m at 0.250 s" in v.line()


def test_latch_release_after_capture_fails(tmp_path):
    lat = np.where(T >= 1.5, 4.0, 0.0)
    lat[T >= 3.2] = 3.0
    v = verdict_of(tmp_path, overrides={"latches_engaged": lat})
    assert status(v, "release") == FAIL and not v.passed
    assert "latch release at 3.200 s (latches_engaged 4 -> 3)" in v.line()
    lat[T >= 3.2] = 3.6                                                 # within release_drop: not a release
    assert verdict_of(tmp_path, "ok.h5", overrides={"latches_engaged": lat}).passed


def test_missing_channels_are_na_not_fail(tmp_path):
    crit = load_criteria()
    crit.base_loads = {"F_nonexistent": 1.0}
    crit.strokes = {"stroke_nonexistent": (0.0, 1.0)}
    crit.release_channel = "no_such_channel"
    with RunFile(contact_run.make(tmp_path / "run.h5")) as r:
        v = evaluate(r, crit)
    assert [c.status for c in v.checks] == [PASS, NA, NA, NA] and v.passed


def test_leg_strokes_are_named_so_in_the_verdict(tmp_path):
    p = tmp_path / "legs.toml"
    p.write_text("[leg_strokes]\nprobe_stroke = [-0.005, 0.43]\n")
    v = verdict_of(tmp_path, criteria=load_criteria(p))
    assert status(v, "strokes") == PASS and "leg strokes within range" in v.line()
    p.write_text("[leg_strokes]\nprobe_stroke = [0.0, 0.01]\n")
    v = verdict_of(tmp_path, name="run2.h5", criteria=load_criteria(p))
    assert status(v, "strokes") == FAIL


def test_generic_sections_and_a_type_without_strokes_or_release(tmp_path):
    """[strokes] and [release] with the file's [titles]; a criteria file with neither has no such checks at all (a
    rods or snare verdict line says nothing of damper strokes or latches)."""
    p = tmp_path / "own.toml"
    p.write_text('[titles]\nstrokes = "hinge travel"\nrelease = "grip loss"\n[base_loads]\nFx = 1e4\n[strokes]\nprobe_stroke = [-0.005, 0.43]\n'
                 '[release]\nchannel = "latches_engaged"\n')
    v = verdict_of(tmp_path, criteria=load_criteria(p))
    assert v.line() == "PASS: captured at 1.500 s; peak base loads within limits; hinge travel within range; no grip loss"
    p.write_text("[capture]\nby_time = 5.0\n[base_loads]\nFx = 1e4\n")
    v = verdict_of(tmp_path, name="run2.h5", criteria=load_criteria(p))
    assert [c.name for c in v.checks] == ["capture", "base_loads"]
    assert v.line() == "PASS: captured at 1.500 s; peak base loads within limits"
    rods = load_criteria(ROOT / "resources" / "rods" / "criteria.toml")
    assert not rods.strokes and not rods.release_channel


@pytest.mark.parametrize("text, key, problem", [
    ("[capture]\nby_time = 'soon'\n", "capture.by_time", "expected a finite number"),
    ("[capture]\nby_time = -1.0\n", "capture.by_time", "must be a positive time"),
    ("[base_loads]\nFx = 0\n", "base_loads.Fx", "limit must be positive"),
    ("[damper_strokes]\nprobe_stroke = [0.4]\n", "damper_strokes.probe_stroke", "expected [min, max]"),
    ("[damper_strokes]\nprobe_stroke = [0.4, 0.1]\n", "damper_strokes.probe_stroke", "is not below max"),
    ("[latch]\nchannel = 'x'\n", "latch", "unknown section"),
    ("[damper_strokes]\nprobe_stroke = [0.0, 0.4]\n[leg_strokes]\nleg_1 = [0.0, 0.1]\n", "leg_strokes",
     "not both"),
    ("[capture\n", "/", "not valid TOML"),
    ("[strokes]\nprobe_stroke = [0.0, 0.4]\n[damper_strokes]\nx = [0.0, 0.1]\n", "damper_strokes", "not both"),
    ("[release]\nchanel = 'latches_engaged'\n", "release.chanel", "unknown key"),
    ("[latches]\nchannel = 3\n", "latches.channel", "expected a channel name"),
])
def test_bad_criteria_name_file_key_and_problem(tmp_path, text, key, problem):
    p = tmp_path / "criteria.toml"
    p.write_text(text)
    with pytest.raises(CriteriaError) as e:
        load_criteria(p)
    assert str(e.value).startswith(f"{p}: {key}: ") and problem in str(e.value)


def _info(*args):
    return subprocess.run([sys.executable, "-m", "app", "info", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_info_prints_the_verdict(tmp_path):
    run = contact_run.make(tmp_path / "run.h5")
    p = _info(run)
    assert p.returncode == 0, p.stderr
    assert ("capture verdict  PASS: captured at 1.500 s; peak base loads within limits; damper strokes within "
            "range; no latch release") in p.stdout
    strict = tmp_path / "strict.toml"
    strict.write_text("[base_loads]\nFx = 1000.0   # N (assumed)\n")
    p = _info(run, "--criteria", strict)
    assert p.returncode == 0, p.stderr
    with RunFile(run) as r:
        fx = np.abs(r.channel("Fx"))
    assert f"capture verdict  FAIL: peak |Fx| {fx.max() / 1000:.2f} kN > 1.00 kN at {T[fx.argmax()]:.3f} s" in p.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[base_loads]\nFx = 'x'\n")
    p = _info(run, "--criteria", bad)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"dockmnemo: error: {bad}: base_loads.Fx: expected a finite number, found 'x'"
