"""A full disk (a write failing with EFBIG: RLIMIT_FSIZE, SIGXFSZ ignored as Python does) leaves nothing new behind:
`run` (exit 5), `campaign` (exit 5, the rows before kept, a re-run cleans up and finishes), `validate --report`
(exit 5); stale temporary files of killed seals are removed. Real processes, real failing writes."""
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.runfile import RunFile, seal_incomplete

ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "resources" / "scenarios" / "expert_existing.toml"
PERIPHERAL = ROOT / "resources" / "peripheral" / "scenarios" / "central_impact_10t.toml"


def limited(limit: int):
    """preexec_fn: files this process writes may not grow past `limit` bytes (a write past it fails: EFBIG)."""
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return pre


def app(*args, limit=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limited(limit) if limit else None)


def app_here(capsys, *args):
    """`dockmnemo ARGS` in this process (app.cli.main, as the command calls it), for what no limit applies to."""
    from types import SimpleNamespace

    from app.cli import main
    capsys.readouterr()
    status = main([*map(str, args)])
    out = capsys.readouterr()
    return SimpleNamespace(returncode=status, stdout=out.out, stderr=out.err)


def _without_hdf5_free_noise(err: str) -> str:
    """stderr less h5py's tracebacks of HDF5's failed writes met again while a file on the full disk is freed (printed
    by h5py's deallocs, not by dockmnemo: its own line says the failure once)."""
    lines, out, i = err.splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("Traceback") and i + 1 < len(lines) and "h5py/_objects.pyx" in lines[i + 1]:
            i += 1
            while i < len(lines) and (lines[i].startswith(" ") or lines[i].startswith("RuntimeError: Can't decrement")
                                      or lines[i].startswith(", filename")):
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


@pytest.fixture(scope="module", autouse=True)
def _kernels_compiled(tmp_path_factory):
    """Both types' kernels in numba's cache before a limited process runs (its cache files would hit the limit): a
    short run of each type whose units the cache lacks (the session's warm-up has compiled them)."""
    from tests.cold_compile import units_cached
    d = tmp_path_factory.mktemp("warm")
    for scenario in (s for s in (EXPERT, PERIPHERAL) if not units_cached(s)):
        r = app("run", scenario, "-o", d / f"{scenario.stem}.h5", "--t-end", "0.05", timeout=900)
        assert r.returncode == 0, r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [EXPERT, PERIPHERAL], ids=["probe_cone", "peripheral"])
@pytest.mark.parametrize("limit", [60_000, 400_000], ids=["creating", "writing"])
def test_run_on_a_full_disk_exits_5_and_leaves_nothing(tmp_path, scenario, limit):
    """The file fails while it is made (60 kB) or while frames are written, before it is put in place: exit 5, one
    line naming the file and the cause, no `.h5.creating` (old main: an unreadable .creating stayed), an older run
    file at the path untouched."""
    out = tmp_path / "r.h5"
    out.write_bytes(b"an older run")
    r = app("run", scenario, "-o", out, "--t-end", "60", limit=limit)
    assert r.returncode == 5, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dockmnemo: error: {out}: writing the run file failed: File too large"), r.stderr
    assert "Traceback" not in r.stderr or limit < 100_000   # (HDF5 prints its failed metadata writes as it makes
                                                            # the file: noise before the line, left alone)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.h5"] and out.read_bytes() == b"an older run"


CAMPAIGN = """
name = "full"
base_scenario = "central_impact_20t.toml"
t_end = 0.5
sampling = "lhs"
count = 4
seed = 3
keep = "all"

[[parameter]]
name = "closing_speed"
key = "initial.closing_speed"
min = 0.05
max = 0.2
"""


def _children(pid: int) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def _campaign(tmp_path, keep: str) -> tuple[list[str], Path]:
    f = tmp_path / "full.toml"
    f.write_text(CAMPAIGN.replace('keep = "all"', f'keep = "{keep}"'))
    d = tmp_path / "dir"
    return [sys.executable, "-m", "app", "campaign", str(f), "--out", str(d), "--workers", "1"], d


@pytest.fixture(scope="module")
def scheduler():
    """A Dask cluster in this process (one worker thread) the re-runs use by --scheduler: the same command in this
    process (the full disk's own runs are real, limited processes), without a cluster of processes started each."""
    from distributed import LocalCluster
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _rerun_finishes(cmd, d, scheduler, capsys):
    """The campaign command again (in this process, on `scheduler`): exit 0, all four rows finished, no .tmp."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        r = app_here(capsys, *cmd[3:-2], "--scheduler", scheduler)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert r.returncode == 0, r.stderr
    from solver.campaign import read_summary
    s = read_summary(d)
    assert len(s) == 4 and not list(d.rglob("*.tmp")) and s.status.count("ok") == 4
    return s


@pytest.mark.slow
def test_campaign_on_a_full_disk_exits_5_keeps_rows_and_a_rerun_finishes(tmp_path, scheduler, capsys):
    """Once the first row is stored the campaign process alone cannot write past 50 kB (its kept run copies fail; its
    worker, started before, can): exit 5 naming the file, the bar at the count reached, no .tmp left; the same command
    again finishes the campaign (old main: exit 2, 16/16, 2 MB of .tmp files that a re-run did not remove)."""
    cmd, d = _campaign(tmp_path, "all")
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 300
    while not list((d / "rows").glob("*.json")):   # a run finished: the worker is running, the next rows to come
        assert p.poll() is None and time.monotonic() < end, p.communicate()
        time.sleep(0.01)
    resource.prlimit(p.pid, resource.RLIMIT_FSIZE, (50_000, 50_000))   # (Python ignores SIGXFSZ: EFBIG)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 5, err
    lines = err.strip().splitlines()
    assert "writing failed: File too large" in lines[-1] and re.search(r"runs/\.?run_0000[1-3]\.h5", lines[-1]), err
    assert "the finished rows are kept" in lines[-1] and "Traceback" not in _without_hdf5_free_noise(err)
    bar = [line for line in lines if line.startswith("campaign full [")][-1]
    assert "4.0/4.0" not in bar, bar
    assert not list(d.rglob("*.tmp")) and not list((d / "runs").glob("*.h5"))[1:]
    s = _rerun_finishes(cmd, d, scheduler, capsys)
    assert all(s.run_path(i) is not None and s.run_path(i).is_file() for i in s.index)


@pytest.mark.slow
def test_campaign_whose_worker_cannot_write_its_run_exits_5_and_stores_no_row(tmp_path, scheduler, capsys):
    """The worker's own temporary run file fails (every process limited to 200 kB; a run file is ~0.9 MB): exit 5 naming
    the worker and its file, no row stored as a finished run, a re-run finishes all four (old main: exit 0, `4 of 4
    runs finished ... error 4`, the rows said "OSError: File too large" and a re-run ran nothing)."""
    cmd, d = _campaign(tmp_path, "summary")
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=limited(200_000))
    assert r.returncode == 5, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert "could not write" in last and "run_0000" in last and "File too large" in last, r.stderr
    assert "worker " in last and "the finished rows are kept" in last, last
    assert not list((d / "rows").glob("*.json")) if (d / "rows").is_dir() else True
    _rerun_finishes(cmd, d, scheduler, capsys)


@pytest.fixture(scope="module")
def stand_record(tmp_path_factory):
    from tests.test_measured_import import base_loads, stand_columns, write_csv
    t, F, M, s = base_loads(n=2000)
    return write_csv(tmp_path_factory.mktemp("rec") / "stand.csv", stand_columns(t, F, M, s))


def test_validate_report_on_a_full_disk_leaves_no_truncated_html(tmp_path, stand_record, capsys):
    """The report fails past 50 kB: exit 5, nothing in the folder (old main: a truncated HTML stayed)."""
    from tests.measured_truth import EXAMPLE_MAP
    report = tmp_path / "out" / "r.html"
    report.parent.mkdir()
    r = app("validate", ROOT / "sample_runs" / "central_impact_20t.h5", stand_record, "--map", EXAMPLE_MAP,
            "--report", report, limit=50_000)
    assert r.returncode == 5, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"dockmnemo: error: {report}: /: cannot be written (File too "
                                                        f"large)"), r.stderr
    assert list(report.parent.iterdir()) == []
    r = app_here(capsys, "validate", ROOT / "sample_runs" / "central_impact_20t.h5", stand_record, "--map",
                 EXAMPLE_MAP, "--report", report)
    assert r.returncode == 0 and report.read_text().rstrip().endswith("</html>")


def test_validate_report_into_a_missing_directory_is_refused(tmp_path, stand_record, capsys):
    """Exit 2 naming the directory; it is not created (old main created /nonexistent/dir)."""
    from tests.measured_truth import EXAMPLE_MAP
    report = tmp_path / "no" / "such" / "r.html"
    r = app_here(capsys, "validate", ROOT / "sample_runs" / "central_impact_20t.h5", stand_record, "--map",
                 EXAMPLE_MAP, "--report", report)
    assert r.returncode == 2 and f"the directory {report.parent} does not exist" in r.stderr, r.stderr
    assert not (tmp_path / "no").exists() and r.stdout == ""


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_seal_removes_the_temporary_files_of_killed_seals(tmp_path, small_run):
    """`x.h5.sealing-PID` of a dead PID goes with the next seal; one of a live process stays (old main: kept)."""
    run = tmp_path / "x.h5"
    shutil.copyfile(small_run, run)
    stale = tmp_path / f"x.h5.sealing-{_dead_pid()}"
    stale.write_bytes(b"\x89HDF half")
    live = tmp_path / f"x.h5.sealing-{os.getppid()}"
    live.write_bytes(b"\x89HDF being written")
    seal_incomplete(run, "a test")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x.h5", live.name])
    with RunFile(run) as r:
        assert not r.meta.complete and r.events[-1].text.endswith("a test")


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path):
    """solver.atomic: an exception while writing leaves the target as it was and no temporary file."""
    from solver.atomic import replacing, write_text
    target = write_text(tmp_path / "t.txt", "old")
    with pytest.raises(RuntimeError):
        with replacing(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]
