"""`dockmnemo run` on bad input (clear message, exit 2, nothing written); the per-frame state and branch runs;
a growing run read while it is written; a killed writer's file sealed."""
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from solver.runfile import RunFile, seal_incomplete
from solver.simulate import RunCancelled, run_scenario, start_from_run

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios"


def _cli(*args):
    """`dockmnemo run ARGS` in this process (tests/cli_here.py; test_growing_run... runs the real process)."""
    from tests.cli_here import cli_here
    return cli_here("run", *args)


def _variant(tmp_path, name, old, new):
    p = tmp_path / name
    text = (SCEN / "lateral_miss_7t.toml").read_text()
    assert old in text
    p.write_text(text.replace(old, new))
    return p


@pytest.mark.parametrize("old,new,expect", [
    ("mass = 7200.0", "mass = -7200.0", "active_craft.mass: -7200 is outside the allowed range [1, 1e+07]"),
    ("closing_speed = 0.25", "closing_speed = nan", "initial.closing_speed: must be finite"),
    ("closing_speed = 0.25", "", "initial.closing_speed: missing"),
    ('mechanism = "existing"', 'mechanism = "variant_9"', "mechanism: no mechanism file"),
])
def test_cli_bad_input_names_file_and_key_and_writes_nothing(tmp_path, old, new, expect):
    bad = _variant(tmp_path, "bad.toml", old, new)
    out = tmp_path / "never.h5"
    r = _cli(bad, "-o", out, "--t-end", "0.1")
    assert r.returncode == 2
    assert r.stderr.startswith("dockmnemo: error: ") and "bad.toml" in r.stderr and expect in r.stderr
    assert not out.exists()


def test_cli_output_step_must_be_a_multiple_of_the_step(tmp_path):
    out = tmp_path / "never.h5"
    r = _cli(SCEN / "lateral_miss_7t.toml", "-o", out, "--t-end", "0.1", "--output-step", "0.0003")
    assert r.returncode == 2 and "output_step: 0.0003 must be a positive multiple of the solver step" in r.stderr
    assert not out.exists()
    r = _cli(SCEN / "lateral_miss_7t.toml", "-o", out, "--t-end", "0.1", "--output-step", "0.01")
    assert r.returncode == 0
    with RunFile(out) as run:
        assert run.n_frames == 11 and abs(float(run.time[-1]) - 0.1) < 1e-9


def test_cli_branch_needs_a_time_and_a_run_with_state(tmp_path):
    r = _cli(SCEN / "lateral_miss_7t.toml", "-o", tmp_path / "x.h5", "--from", ROOT / "sample_runs" /
             "synthetic_approach.h5", "--at", "1.0")
    assert r.returncode == 2 and "/state: run has no stored solver state" in r.stderr
    assert not (tmp_path / "x.h5").exists()


def test_branch_with_same_parameters_reproduces_the_run(tmp_path):
    a = RunFile(run_scenario(SCEN / "lateral_miss_7t.toml", tmp_path / "a.h5", t_end=2.5))
    from solver.mechanisms.probe_cone import dynamics as D
    assert a.state_sizes == {"s": D.NS, "Z": D.NZ, "contact_prev": len(a.contact_pairs)}
    k = a.frame_at(1.3)
    b = RunFile(run_scenario(SCEN / "lateral_miss_7t.toml", tmp_path / "b.h5", t_end=2.5,
                             start=start_from_run(a.path, k)))
    assert b.time[0] == a.time[k] and b.n_frames == a.n_frames - k
    for ch in ("Fx", "Fy", "probe_stroke", "head_y", "total_energy"):
        np.testing.assert_array_equal(b.channel(ch), a.channel(ch, k))
    np.testing.assert_array_equal(b.poses(b.n_frames - 1)[0], a.poses(a.n_frames - 1)[0])
    assert b.events[0].kind == "phase" and "branch from a.h5" in b.events[0].text
    assert "branch of a.h5" in b.meta.comment


def test_cancel_keeps_a_truncated_incomplete_run(tmp_path):
    calls = []
    with pytest.raises(RunCancelled, match="cancelled at t = 2.0000 s"):
        run_scenario(SCEN / "central_impact_20t.toml", tmp_path / "c.h5", t_end=10.0,
                     cancel=lambda: calls.append(1) or len(calls) >= 2)
    r = RunFile(tmp_path / "c.h5")
    assert not r.live and not r.meta.complete and r.n_frames == 2000
    assert r.events[-1].kind == "diagnostic"


def test_growing_run_is_readable_and_refreshes(tmp_path):
    out = tmp_path / "g.h5"
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", str(SCEN / "central_impact_20t.toml"), "-o",
                             str(out), "--t-end", "3.5", "--progress-lines"], stdout=subprocess.PIPE, cwd=ROOT)
    run, seen = None, []
    for line in proc.stdout:                      # the worker's writer runs in another process
        if not line.startswith(b"PROGRESS"):
            continue
        if run is None:
            run = RunFile(out)                    # opened while the writer holds it (SWMR)
        else:
            run.refresh()
        seen.append((run.live, run.n_frames))
        assert len(run.channel("Fx")) == run.n_frames == len(run.time)
        run.poses(run.n_frames - 1)
    assert proc.wait() == 0
    assert all(live for live, _ in seen) and seen[0][1] >= 1000
    assert [n for _, n in seen] == sorted(n for _, n in seen) and seen[-1][1] > seen[0][1]
    run.close()
    final = RunFile(out)
    assert not final.live and final.meta.complete and final.n_frames == 3501


def test_seal_a_file_left_by_a_killed_writer(tmp_path):
    out = tmp_path / "k.h5"
    code = (f"import sys, os; sys.path.insert(0, {str(ROOT)!r})\n"
            "from solver.simulate import run_scenario\n"
            f"def p(t, T):\n    (t >= 1.99) and os._exit(9)\n"
            f"run_scenario({str(SCEN / 'central_impact_20t.toml')!r}, {str(out)!r}, progress=p, t_end=10.0, live=True)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT)
    assert r.returncode == 9
    with pytest.raises(OSError):
        h5py.File(out, "r")                   # the writer's flags are still set
    assert RunFile(out).live                  # ... but the reader takes what was flushed
    seal_incomplete(out, "worker process killed")
    run = RunFile(out)
    assert not run.live and not run.meta.complete and run.n_frames == 2000
    assert run.events[-1].text.endswith("worker process killed")
    assert run.state_at(1999) is not None


def test_growing_run_caught_between_a_state_row_and_its_frame_entry(tmp_path):
    out = run_scenario(SCEN / "central_impact_20t.toml", tmp_path / "s.h5", t_end=1.2)
    with h5py.File(out, "r+") as f:                # the writer adds a state row first, its /state/frame last
        n = f["state/frame"].shape[0]
        for name, d in f["state"].items():
            if name != "frame":
                d.resize(n + 1, axis=0)
    with pytest.raises(Exception, match="one row per /state/frame"):
        RunFile(out)                                # a finished file must be consistent
    run = RunFile(out, partial=True)                # a growing one: only rows that /state/frame names
    assert run.state_at(run.n_frames - 1)[0] == 1000
    run.close()
    with h5py.File(out, "r+") as f:                # ... and the other way round (a reader's stale view)
        f["state/frame"].resize(n + 2, axis=0)
        f["state/frame"][n:] = [2000, 3000]
    assert RunFile(out, partial=True).state_at(10 ** 6)[0] == 1000
