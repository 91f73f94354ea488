"""`dockmnemo export` stopped by Ctrl+C or SIGTERM, and its output path checked: real export processes.

Ctrl+C in a terminal reaches every process of `xvfb-run -a dockmnemo export ...`, the X server too; a small wrapper
in that process group (ignoring the signal, as the user's shell does) records the export's own exit status, which
`xvfb-run` itself hides (it ends by the same signal)."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest

pytestmark = pytest.mark.slow   # real export processes interrupted at several moments

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "sample_runs" / "synthetic_approach.h5"
LONG = ["--clip", "0:12", "--clip", "17:20@0.25", "--title", "Impact", "--size", "480p"]   # 780 frames, ~6 s
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
RECORD = ("import signal, subprocess, sys\n"
          "sigs = (signal.SIGINT, signal.SIGTERM)\n"
          "for s in sigs: signal.signal(s, signal.SIG_IGN)\n"
          "rc = subprocess.call(sys.argv[2:], preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in sigs])\n"
          "open(sys.argv[1], 'w').write(str(rc))\n")

needs_xvfb_run = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs xvfb-run")


def _partial(folder: Path):
    return [p for p in folder.iterdir() if p.name.startswith(".")]


def _wait(moment, folder: Path, t0: float):
    """Until the moment to send the signal: 'setup' (0.8 s after the start: imports, the offscreen diagram being
    laid out), 'render' (the partial video holds encoded frames) or a number of seconds after the start."""
    if moment == "setup" or isinstance(moment, float):
        time.sleep(max(0.0, t0 + (0.8 if moment == "setup" else moment) - time.monotonic()))
        return
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if any(p.stat().st_size > 0 for p in _partial(folder) if p.is_file()):
            return
        time.sleep(0.02)
    raise AssertionError("no frames were encoded within 40 s")


def _interrupt(tmp_path, moment, sig=signal.SIGINT, terminal=True, clip=LONG, env=None):
    """Start an export, send `sig` at `moment` (to the whole `xvfb-run` process group when `terminal`), and return
    (the export's exit status, its stderr, what is left in its output folder, the output)."""
    folder = tmp_path / f"{sig.name}-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    out = folder / "clip.mp4"
    export = [sys.executable, "-m", "app", "export", str(RUN), *clip, "-o", str(out)]
    status_file = folder.with_suffix(".status")
    cmd = ["xvfb-run", "-a", sys.executable, "-c", RECORD, str(status_file), *export] if terminal else export
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env)
    try:
        _wait(moment, folder, t0)
        if terminal:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    status = int(status_file.read_text()) if terminal else p.returncode
    return status, err, sorted(x.name for x in folder.iterdir()), out


def _check_all(tmp_path, plan, env=None):
    """Run every (moment, signal, terminal) of `plan`; all must stop cleanly, nothing left, one line said why."""
    seen, bad = [], []
    for moment, sig, terminal in plan:
        status, err, left, _ = _interrupt(tmp_path, moment, sig, terminal, env=env)
        seen.append((moment, sig.name, "terminal" if terminal else "process", status, left))
        if status != STATUS[sig] or left or "Traceback" in err or "stopped by" not in err:
            bad.append((seen[-1], err[-400:]))
    crashes = sum(1 for s in seen if s[3] < 0)
    assert not bad, f"{len(bad)} of {len(seen)} interrupts not clean ({crashes} crashed): {bad}"


@pytest.mark.gui
@needs_xvfb_run
def test_ctrl_c_in_a_terminal_stops_cleanly(tmp_path):
    """Ctrl+C to `xvfb-run -a dockmnemo export` (its X server stops too): exit 130, no partial file, no crash. Each
    moment once (the render moment is met again by the SIGTERM and X-drawing tests below)."""
    _check_all(tmp_path, [("render", signal.SIGINT, True), ("setup", signal.SIGINT, True)])


@pytest.mark.gui
@needs_xvfb_run
def test_sigterm_and_sigint_to_the_export_alone(tmp_path):
    """SIGTERM (a job killed by CI or a supervisor) exits 143, SIGINT to the export process alone 130: both clean."""
    _check_all(tmp_path, [("render", signal.SIGTERM, False), ("setup", signal.SIGTERM, True),
                          ("render", signal.SIGTERM, True), ("render", signal.SIGINT, False)])


@pytest.mark.gui
@needs_xvfb_run
def test_ctrl_c_when_vtk_draws_through_x(tmp_path):
    """Without EGL (forced here) VTK draws through the X server that Ctrl+C stops: still 130, nothing left (twice:
    where the render is when the X server goes is a race)."""
    env = dict(os.environ, VTK_DEFAULT_OPENGL_WINDOW="vtkXOpenGLRenderWindow")
    _check_all(tmp_path, [("render", signal.SIGINT, True)] * 2, env=env)


@pytest.mark.gui
def test_signal_at_the_end_leaves_the_whole_video_or_nothing(tmp_path):
    """Signals around the time an export finishes: 130 and nothing, or 0 and the whole video; never a part."""
    short = ["--clip", "1:2", "--size", "480p"]   # 30 frames
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "app", "export", str(RUN), *short, "-o", str(tmp_path / "whole.mp4")],
                       cwd=ROOT, capture_output=True, timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0
    for when in (0.8, 0.9, 0.97):
        status, err, left, out = _interrupt(tmp_path, when * took, signal.SIGINT, terminal=False, clip=short)
        if status == 0:
            assert left == ["clip.mp4"]
            with av.open(str(out)) as c:
                assert sum(1 for _ in c.decode(video=0)) == 30
        else:
            assert status == 130 and left == [], (status, left, err[-400:])


@pytest.mark.gui
def test_export_without_any_display_renders(tmp_path):
    """Where EGL works, export needs no X display (nor xvfb-run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = tmp_path / "clip.gif"
    p = subprocess.run([sys.executable, "-m", "app", "export", str(RUN), "--clip", "1:1.5", "--fps", "10",
                        "--size", "480p", "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=env)
    assert p.returncode == 0, p.stderr
    with av.open(str(out)) as c:
        assert sum(1 for _ in c.decode(video=0)) == 5


# ---- the output path -----------------------------------------------------------------------------------------
def _export_here(capsys, *args):
    """`dockmnemo export ARGS` in this process: exit status, stdout, stderr; the signal handlers it set put back."""
    from types import SimpleNamespace

    from app.cli import main
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    capsys.readouterr()
    try:
        status = main(["export", *args])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    out = capsys.readouterr()
    return SimpleNamespace(returncode=status, stdout=out.out, stderr=out.err)


def _setup_paths(tmp):
    (tmp / "notes.txt").write_text("a file, not a folder")
    (tmp / "video.mp4").mkdir()
    (tmp / "frames").mkdir()
    (tmp / "frames" / "README").write_text("the user's own file")


@pytest.mark.parametrize("output, extra, words", [
    ("clip.txt", [], ["-o", "clip.txt: unknown format '.txt'", "accepted: NAME.mp4, NAME.gif, or a folder"]),
    ("clip.png", [], ["PNG frames are written to a folder", "add --format png"]),
    ("notes.txt/clip.mp4", [], ["notes.txt is a file, not a folder"]),
    ("notes.txt/sub/clip.mp4", [], ["notes.txt is a file, not a folder"]),
    ("missing/clip.mp4", [], ["folder", "missing does not exist"]),
    ("video.mp4", [], ["video.mp4: is a folder; give a file name ending in .mp4"]),
    ("frames", [], ["frames: is a folder holding other files"]),
    ("notes.txt", ["--format", "png"], ["notes.txt: is a file; PNG frames are written to a folder"]),
    ("clip.gif", ["--format", "mp4"], ["clip.gif: format mp4 needs a name ending in .mp4"]),
    ("clip.mp4", ["--format", "png"], ["names a MP4 file; PNG frames are written to a folder"]),
])
def test_bad_output_exits_2_naming_it_and_writes_nothing(tmp_path, output, extra, words, capsys):
    """`dockmnemo export` in this process (app.cli.main, as the command calls it: the refusal comes before Qt or a
    frame; test_unwritable_folder_is_named runs the real process)."""
    _setup_paths(tmp_path)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    p = _export_here(capsys, str(RUN), "--clip", "1:1.2", *extra, "-o", str(tmp_path / output))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dockmnemo: error: -o ") and "Errno" not in lines[0], p.stderr
    for w in words:
        assert w in lines[0]
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before


def test_unwritable_folder_is_named():
    p = subprocess.run([sys.executable, "-m", "app", "export", str(RUN), "--clip", "1:1.2", "-o", "/sys/clip.mp4"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip() == ("dockmnemo: error: -o /sys/clip.mp4: cannot write in folder /sys "
                                "(Permission denied)")
