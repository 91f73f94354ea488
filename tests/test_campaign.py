"""Campaigns on Dask: a 10-run campaign equals the same runs one by one, resume after a kill, keep policies,
bad campaign files, the success/fail table, rerun."""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from solver import campaign as C
from solver.runfile import RunFile
from solver.simulate import SolverDiverged, run_scenario
from tests.cli_here import cli_here

pytestmark = pytest.mark.slow   # Dask campaigns of real solver runs

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

# 1 s central impacts (head already in the cone): capture or not by 1 s, and with a 0.1 mm penetration limit
# some runs stop on "contact penetration exceeded" (diverged rows)
T20 = """
name = "t20"
base_scenario = "central_impact_20t.toml"
t_end = 1.0
sampling = "lhs"
count = 20
seed = 3
keep = "failures"

[[parameter]]
name = "closing_speed"
key = "initial.closing_speed"
min = 0.05
max = 0.2

[[parameter]]
name = "lateral_miss_y"
key = "initial.lateral_miss[0]"
min = -0.03
max = 0.03

[[parameter]]
name = "depth_limit"
key = "overrides.max_depth"
unit = "m"
values = [0.0001, 0.05]
"""


def campaign_file(tmp: Path, text=T20, name="t20.toml", **subs) -> Path:
    for k, v in subs.items():
        text = text.replace(k, v)
    p = tmp / name
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def client():
    c = C.local_client(2)
    yield c
    c.close()
    c.cluster.close()


N = 10   # runs of the module's campaign (T20 at this count: passed, not captured and diverged rows among them)


@pytest.fixture(scope="module")
def t20(tmp_path_factory, client):
    tmp = tmp_path_factory.mktemp("campaign")
    f = campaign_file(tmp, **{"count = 20": f"count = {N}"})
    res = C.run_campaign(f, tmp / "dir", client=client)
    return f, tmp / "dir", res


def test_campaign_equals_runs_one_by_one(t20, tmp_path):
    f, d, res = t20
    assert res.n_run == N and res.n_before == 0 and not res.cancelled
    s = C.read_summary(d)
    c = C.load_campaign(f)
    assert list(s.index) == list(range(N)) and s.n_planned == N and s.variant == "existing"
    assert {"diverged", "ok"} <= set(s.status), "the campaign covers failed and finished runs"
    assert 0 < s.captured.sum() < N
    assert len(set(s.worker)) == 2, "both workers ran tasks"
    for i in range(N):
        sc = c.scenario(i)
        assert sc["initial"]["closing_speed"] == c.samples()[i, 0] == s.column("closing_speed")[i]
        assert sc["initial"]["lateral_miss"][0] == s.column("lateral_miss_y")[i]
        sp = tmp_path / f"one_{i}.toml"
        sp.write_text(C.dump_toml(sc))
        assert tomllib.loads(sp.read_text()) == sc
        status, msg = "ok", ""
        try:
            run_scenario(sp, tmp_path / f"one_{i}.h5", t_end=1.0)
        except SolverDiverged as exc:
            status, msg = "diverged", str(exc)
        with RunFile(tmp_path / f"one_{i}.h5") as r:
            one = C.summarise_run(r, c.criteria)
        assert s.status[i] == status
        assert s.message[i] == msg.replace(f"one_{i}.toml", f"run_{i:05d}.toml")
        if status == "diverged":
            assert "contact penetration exceeded" in s.message[i] and not s.passed[i]
        else:
            assert s.passed[i] == one["passed"] and s.verdict[i] == one["verdict"]
        assert s.captured[i] == one["captured"]
        for k, v in one["outputs"].items():
            if k != "wall_time":
                got = s.column(k)[i]
                assert (math.isnan(v) and math.isnan(got)) or got == v, (i, k, got, v)
    assert np.all(s.column("wall_time") > 0)


def test_keep_policy_and_rerun(t20, tmp_path):
    _, d, _ = t20
    s = C.read_summary(d)
    for k, i in enumerate(s.index):
        failed = s.status[k] != "ok" or not s.passed[k]
        assert (s.run_path(i) is not None) == failed, i
    assert sorted(p.name for p in (d / "runs").iterdir()) == [f"run_{i:05d}.h5" for i in s.index
                                                            if s.run_path(i) is not None]
    assert not (d / "rows").exists(), "the journal is folded into summary.h5 once the campaign is complete"
    # a kept diverged run re-simulates to the same partial run (rerun returns it)
    i = next(i for k, i in enumerate(s.index) if s.status[k] == "diverged")
    out = C.rerun(s, i, tmp_path / "again.h5")
    with RunFile(s.run_path(i)) as a, RunFile(out) as b:
        assert not b.meta.complete and a.n_frames == b.n_frames
        for n in ("Fx", "probe_stroke", "head_x"):
            assert np.array_equal(a.channel(n), b.channel(n))
    # a cancelled re-run of a finished run stops with RunCancelled and a file marked incomplete
    from solver.simulate import RunCancelled
    j = next(i for k, i in enumerate(s.index) if s.status[k] == "ok")
    with pytest.raises(RunCancelled):
        C.rerun(s, j, tmp_path / "cancelled.h5", cancel=lambda: True)
    with RunFile(tmp_path / "cancelled.h5") as c:
        assert not c.meta.complete and c.n_frames > 0
    # the policies themselves
    assert C.keep_run("all", "ok", True, 0.1, 0.8) and not C.keep_run("summary", "diverged", False, 2.0, 0.8)
    assert C.keep_run("failures", "ok", False, 0.1, 0.8) and not C.keep_run("failures", "ok", True, 0.95, 0.8)
    assert C.keep_run("failures_and_extremes", "ok", True, 0.95, 0.8)
    assert not C.keep_run("failures_and_extremes", "ok", True, 0.5, 0.8)


def test_summary_h5_is_a_plain_table(t20):
    import h5py
    _, d, _ = t20
    with h5py.File(d / "summary.h5", "r") as f:
        assert f.attrs["format"] == "dockmnemo-campaign-summary" and f.attrs["n_done"] == N
        assert list(f["index"][()]) == list(range(N))
        assert f["outputs/peak_base_force"].attrs["unit"] == "N"
        assert f["parameters/closing_speed"].attrs["key"] == "initial.closing_speed"
        assert "peak_head_cone" in f["outputs"] and len(f["status"]) == N


def test_table_cli(t20):
    _, d, _ = t20
    for cmd in (["campaign", "--table", str(d)], ["info", str(d)]):
        p = cli_here(*cmd)
        assert p.returncode == 0, p.stderr
        assert f"finished {N} of {N}" in p.stdout and "diverged" in p.stdout
        assert "contact penetration exceeded" in p.stdout and "captured at" in p.stdout
        assert len([ln for ln in p.stdout.splitlines() if ln.lstrip()[:1].isdigit()]) >= N
        assert "failure reasons" in p.stdout and "diverged: penetration" in p.stdout
    s = C.read_summary(d)
    known = re.compile(r"^(not captured|captured late|latch release|base load \w+ over limit|stroke \w+ out of range|"
                       r"diverged: (penetration \w+|NaN state)|error: \w+)$")
    for k, i in enumerate(s.index):
        why = s.reasons(int(i))
        assert (why == []) == (s.status[k] == "ok" and bool(s.passed[k])), (i, s.verdict[k], why)
        assert all(known.match(w) for w in why), (i, s.verdict[k], s.message[k], why)
    counts = s.failure_counts()
    assert sum(len(v) for k, v in counts.items() if k.startswith("diverged")) == s.status.count("diverged")
    p = cli_here("campaign", "--table", d / "runs")
    assert p.returncode == 2 and "not a campaign directory (no campaign.toml)" in p.stderr


def test_a_directory_of_an_older_version_still_gives_its_table(t20, tmp_path):
    """A key this version no longer knows, in the directory's stored base scenario: the table is printed as that
    version ran it; a re-run of one of its runs is refused naming the file and the key (exit 2)."""
    import shutil
    _, d, _ = t20
    old = tmp_path / "old"
    shutil.copytree(d, old, ignore=shutil.ignore_patterns("runs"))
    base = old / json.loads((old / "manifest.json").read_text())["base_copy"]
    base.write_text(base.read_text() + "\n[overrides]\nremoved_in_a_later_version = 1.0\n"
                    if "[overrides]" not in base.read_text() else
                    base.read_text().replace("[overrides]", "[overrides]\nremoved_in_a_later_version = 1.0", 1))
    p = cli_here("campaign", "--table", old)
    assert p.returncode == 0, p.stderr
    assert f"finished {N} of {N}" in p.stdout and "failure reasons" in p.stdout
    p = cli_here("campaign-rerun", old, "0", "-o", tmp_path / "r0.h5")
    assert p.returncode == 2 and "removed_in_a_later_version" in p.stderr and base.name in p.stderr, p.stderr
    assert not (tmp_path / "r0.h5").exists()


def test_resume_after_kill_runs_exactly_the_missing(tmp_path, client):
    """A campaign process killed mid-run (the client and its workers); the same command again (in this process, on
    the module's cluster by --scheduler: its start is not what is checked) runs exactly the missing rows."""
    f = campaign_file(tmp_path, **{"count = 20": "count = 10", "t_end = 1.0": "t_end = 1.5"})
    d = tmp_path / "dir"
    cmd = [PY, "-m", "app", "campaign", str(f), "--out", str(d), "--workers", "1"]
    p = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t0 = time.time()
    while len(list((d / "rows").glob("run_*.json"))) < 3:
        assert p.poll() is None, p.communicate()
        assert time.time() - t0 < 300, "campaign made no progress"
        time.sleep(0.1)
    os.killpg(p.pid, signal.SIGKILL)             # the client and its workers, mid-run
    p.communicate()
    first = C.read_summary(d)
    n_first = len(first)
    assert 3 <= n_first < 10
    (d / "rows" / ".run_00009.json.123.tmp").write_text('{"index": 9, "stat')   # a half-written row
    (d / "summary.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)           # a table cut short
    p = cli_here(*cmd[3:-2], "--scheduler", client.scheduler.address)
    assert p.returncode == 0, p.stderr
    assert f"{n_first} of 10 runs done, running the {10 - n_first} missing" in p.stderr
    s = C.read_summary(d)
    assert list(s.index) == list(range(10)) and len(s) == 10
    sessions = {}
    for i, sess in zip(s.index, s.session):
        sessions.setdefault(sess, set()).add(int(i))
    assert len(sessions) == 2
    old = set(int(i) for i in first.index)
    new = next(v for v in sessions.values() if v != old)
    assert new == set(range(10)) - old, "the restart ran exactly the missing runs"
    assert not list(d.glob(".*.tmp")) and not (d / "rows").exists()


def test_directory_refuses_another_campaign(t20, tmp_path):
    f, d, _ = t20
    other = campaign_file(tmp_path, **{"seed = 3": "seed = 4"})
    with pytest.raises(C.CampaignError, match="holds a different campaign"):
        C.run_campaign(other, d)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x.txt").write_text("x")
    with pytest.raises(C.CampaignError, match="not empty and holds no campaign.toml"):
        C.run_campaign(f, tmp_path / "busy")
    res = C.run_campaign(f, d)                     # the same campaign again: nothing left to run
    assert res.n_run == 0 and res.n_before == N


@pytest.mark.parametrize("subs, key, problem", [
    ({'t_end = 1.0\n': ""}, "t_end", "missing"),
    ({"sampling = \"lhs\"": "sampling = \"sobol\""}, "sampling", "must be one of grid, lhs, random"),
    ({"seed = 3\n": ""}, "seed", "lhs sampling needs an integer seed"),
    ({"keep = \"failures\"": "keep = \"some\""}, "keep", "must be one of summary"),
    ({"initial.lateral_miss[0]": "initial.lateral_miss[2]"}, "parameter[1] (lateral_miss_y).key",
     "is not a list with an element [2]"),
    ({"initial.closing_speed": "initial.closing_sped"}, "parameter[0] (closing_speed).key", "no key"),
    ({"max = 0.2": "max = 0.01"}, "parameter[0] (closing_speed).max", "below min"),
    ({"max = 0.2": "max = 2.0"}, "parameter", "highest corner of the envelope, parameter 'closing_speed'"),
    ({"central_impact_20t.toml": "nowhere.toml"}, "base_scenario", "no scenario 'nowhere.toml'"),
    ({"count = 20": "count = 20\ncolour = 3"}, "colour", "unknown key"),
    ({"name = \"lateral_miss_y\"": "name = \"peak_base_force\""}, "parameter[1].name", "summary output column"),
    ({"count = 20": "count = 0"}, "count", "outside the allowed range"),
])
def test_bad_campaign_files_say_file_key_problem(tmp_path, subs, key, problem):
    f = campaign_file(tmp_path, **subs)
    with pytest.raises(C.CampaignError) as ei:
        C.load_campaign(f)
    e = ei.value
    assert e.path == str(f) and e.key == key and problem in e.problem, str(e)
    assert str(e).startswith(f"{f}: {key}: ")


def test_cli_bad_campaign_exit_2(tmp_path):
    f = campaign_file(tmp_path, **{"t_end = 1.0\n": ""})
    p = cli_here("campaign", f, "--out", tmp_path / "d")
    assert p.returncode == 2 and f"{f}: t_end: missing" in p.stderr and not (tmp_path / "d").exists()
    # the refusal leaves Python's own handlers: Ctrl+C in an in-process caller is a KeyboardInterrupt again
    from app.cli import main
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    assert main(["campaign", str(f), "--out", str(tmp_path / "d")]) == 2
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_samples_deterministic_lhs_stratified_and_grid(tmp_path):
    f = campaign_file(tmp_path)
    a, b = C.load_campaign(f).samples(), C.load_campaign(f).samples()
    assert np.array_equal(a, b)
    strata = np.floor((a[:, 0] - 0.05) / 0.15 * 20).astype(int)      # one run in each twentieth of the range
    assert sorted(strata) == list(range(20))
    assert sorted(a[:, 2]) == [0.0001] * 10 + [0.05] * 10
    r = C.load_campaign(campaign_file(tmp_path, name="r.toml", **{"\"lhs\"": "\"random\""})).samples()
    assert not np.array_equal(r, a) and np.all((r[:, 0] >= 0.05) & (r[:, 0] <= 0.2))
    g = campaign_file(tmp_path, name="g.toml", **{"\"lhs\"": "\"grid\"", "count = 20\n": "", "seed = 3\n": "",
                                                   "min = 0.05\n": "min = 0.05\nlevels = 3\n",
                                                   "min = -0.03\n": "min = -0.03\nlevels = 2\n"})
    c = C.load_campaign(g)
    assert c.count == 12 and c.samples()[:, 0].tolist()[:4] == [0.05] * 4
    assert sorted(set(c.samples()[:, 0])) == [0.05, 0.125, 0.2]


def test_failing_task_becomes_a_row():
    task = {"index": 7, "scenario_text": "name = \"x\"\nmechanism = \"nonexistent\"\n", "t_end": 1.0,
            "criteria": C.load_criteria(), "keep": "all", "extreme_fraction": 0.8}
    row = C.run_task(task)
    assert row["status"] == "error" and "mechanism" in row["message"] and "run_00007.toml" in row["message"]
    assert row["run_bytes"] is None and not row["passed"]


def test_shipped_campaign_files_load():
    for f in sorted((ROOT / "resources" / "campaigns").glob("*.toml")):
        if f.name.endswith("criteria.toml"):
            continue
        c = C.load_campaign(f)
        assert c.count >= 16 and c.samples().shape == (c.count, len(c.parameters))
    nom = C.load_campaign(ROOT / "resources" / "campaigns" / "nominal_envelope.toml")
    exp = C.load_campaign(ROOT / "resources" / "campaigns" / "expert_envelope.toml")
    for a, b in zip(nom.specs, exp.specs):
        if a.param.name != "closing_speed":
            assert math.isclose(a.hi, 0.3 * b.hi) and math.isclose(a.lo, 0.3 * b.lo), a.param.name
    assert json.loads(json.dumps(nom.outputs()))


def test_scheduler_address(client, tmp_path):
    f = campaign_file(tmp_path, **{"count = 20": "count = 3", "keep = \"failures\"": "keep = \"all\""})
    res = C.run_campaign(f, tmp_path / "d", scheduler=client.scheduler.address)   # an existing cluster by address
    s = C.read_summary(tmp_path / "d")
    assert res.n_run == 3 and len(s) == 3 and all(s.run_path(i) is not None for i in range(3))
    assert client.status == "running", "a cluster given by address is left running"
