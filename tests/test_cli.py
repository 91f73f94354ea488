"""`dockmnemo info` on good and corrupt files, as a user runs it (a subprocess where the process matters: a corrupt
file's exit, the progress bar, a pipe closed early; the rest in this process, tests/cli_here.py)."""
import subprocess
import sys

from app.cli import DEFAULT_RUN, build_parser
from tests.cli_here import cli_here


def _run(*args):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120)


def test_info_prints_summary(small_run):
    p = cli_here("info", small_run)
    assert p.returncode == 0, p.stderr
    for key in ("variant", "comment", "Run Date", "duration", "601 frames", "T capture", "T Final",
                "channels", "contact pairs", "events", "capture"):
        assert key in p.stdout, key


def test_info_on_corrupt_file_exits_2_with_one_line(tmp_path, small_run):
    bad = tmp_path / "corrupt.h5"
    bad.write_bytes(small_run.read_bytes()[:3000])
    p = _run("info", str(bad))
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    assert str(bad) in lines[0] and lines[0].startswith("dockmnemo: error:")


def test_info_checks_every_pose(tmp_path, small_run):
    """The viewer checks poses as it reads them; `info` reads them all and names the first bad frame."""
    import h5py
    import numpy as np
    bad = tmp_path / "nan_pose.h5"
    bad.write_bytes(small_run.read_bytes())
    with h5py.File(bad, "r+") as f:
        q = f["bodies/quaternion"][()]
        q[300, 2, 1] = np.nan
        f["bodies/quaternion"][:] = q
    p = cli_here("info", bad)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"dockmnemo: error: {bad}: /bodies/quaternion: NaN or inf at frame 300"


def test_bundled_sample_run_is_valid():
    p = cli_here("info", DEFAULT_RUN, "--channels")
    assert p.returncode == 0, p.stderr
    assert "[axial_damper]" in p.stdout


def test_help_lists_commands():
    text = build_parser().format_help()
    assert "view" in text and "info" in text and "examples" in text


def test_run_writes_a_run_file_with_progress(tmp_path):
    """`dockmnemo run` simulates a scenario, prints a progress bar on stderr, and `info` reads the result."""
    from tests.test_solver_helpers import SCEN
    out = tmp_path / "ci.h5"
    p = _run("run", str(SCEN / "central_impact_20t.toml"), "--out", str(out), "--t-end", "0.3")
    assert p.returncode == 0, p.stderr
    assert "run central_impact_20t.toml [" in p.stderr and "100.0%" in p.stderr
    q = cli_here("info", out)
    assert q.returncode == 0 and "301 frames" in q.stdout and "latch_neck" in q.stdout


def test_run_bad_scenario_exits_2_naming_file_and_key(tmp_path):
    from tests.test_solver_helpers import variant
    sc = variant(tmp_path, "central_impact_20t.toml", {"closing_speed": "-0.2"})
    p = cli_here("run", sc, "--out", tmp_path / "x.h5")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    assert lines[0].startswith("dockmnemo: error:") and sc.name in lines[0] and "initial.closing_speed" in lines[0]
    assert not (tmp_path / "x.h5").exists()


def test_run_divergence_keeps_partial_file(tmp_path):
    from solver.runfile import RunFile
    from tests.test_solver_helpers import variant
    sc = variant(tmp_path, "central_impact_20t.toml", {}, "[overrides]\nmax_depth = 1.0e-5\n")
    out = tmp_path / "div.h5"
    p = cli_here("run", sc, "--out", out, "--t-end", "2.0")
    assert p.returncode == 3   # 0 done, 2 bad input, 3 diverged, 4 cancelled
    assert "diverged" in p.stderr and "head_socket_bottom" in p.stderr and str(out) in p.stderr
    r = RunFile(out)
    assert not r.meta.complete and r.events[-1].kind == "diagnostic"


def test_info_piped_into_head_exits_cleanly():
    p = subprocess.run(f"'{sys.executable}' -m app info '{DEFAULT_RUN}' | head -2; exit ${{PIPESTATUS[0]}}",
                       shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stdout.splitlines()) == 2
