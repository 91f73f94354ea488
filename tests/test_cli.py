"""`dockmnemo info` on good and corrupt files, as a user runs it (subprocess)."""
import subprocess
import sys

from app.cli import DEFAULT_RUN, build_parser


def _run(*args):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120)


def test_info_prints_summary(small_run):
    p = _run("info", str(small_run))
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


def test_bundled_sample_run_is_valid():
    p = _run("info", str(DEFAULT_RUN), "--channels")
    assert p.returncode == 0, p.stderr
    assert "[axial_damper]" in p.stdout


def test_help_lists_commands():
    text = build_parser().format_help()
    assert "view" in text and "info" in text and "examples" in text
