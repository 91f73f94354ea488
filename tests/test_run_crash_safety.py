"""A `dockmnemo run` killed at any moment keeps every frame flushed before the kill, readable by `info` (which seals
it as incomplete, with its events); a cancelled run shows where it stopped; --t-end holds whatever the output step."""
import contextlib
import io
import math
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest

from app.cli import main
from solver.runfile import RunFile
from tests.test_solver_helpers import variant

EXPERT_CAPTURE = 5.982   # s, expert_existing's T capture (dockmnemo info of a whole run of today's model)

ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "resources" / "scenarios" / "expert_existing.toml"   # first contact 1.8 s, capture 5.96 s,
                                                                       # hard dock ~327 s: ~10 s of wall time
MARGIN = 3.0   # s of wall time (2 x solver.runfile.FLUSH_INTERVAL + 1): frames shown this long before a kill are kept
BAR_T = re.compile(r"\]\s+[\d.]+%\s+([\d.]+)/")


class BarRun:
    """`dockmnemo run` with its progress bar on a terminal (pty): the simulated times it showed, and when."""

    def __init__(self, out, *args, scenario=EXPERT, one_core=False):
        """`one_core`: the run (solver and writer thread) on one core, so it lasts several seconds of wall time."""
        master, slave = pty.openpty()
        pin = (lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})) if one_core else None
        self.proc = subprocess.Popen([sys.executable, "-m", "app", "run", str(scenario), "-o", str(out), *args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT,
                                     preexec_fn=pin)
        os.close(slave)
        self.master, self.shown, self.text = master, [], ""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        rest = ""
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:          # the child's side closed
                break
            if not data:
                break
            self.text += data.decode("utf-8", "replace")
            *done, rest = re.split(r"[\r\n]", rest + data.decode("utf-8", "replace"))
            now = time.monotonic()   # a bar line counts once the next one starts: never earlier than it was shown
            self.shown += [(now, float(m.group(1))) for m in map(BAR_T.search, done) if m]

    def wait_for(self, cond, timeout=60.0):
        end = time.monotonic() + timeout
        while not cond():
            assert self.proc.poll() is None, f"the run ended before the kill:\n{self.text}"
            assert time.monotonic() < end, f"timed out:\n{self.text}"
            time.sleep(0.005)

    def t_shown(self) -> float:
        return self.shown[-1][1] if self.shown else -1.0

    def durable(self, now: float) -> float:
        """The simulated time the bar showed at least MARGIN s before `now` (-1 if none): frames the file has."""
        return max((t for when, t in self.shown if when <= now - MARGIN), default=-1.0)

    def kill(self) -> float:
        """SIGKILL; `durable` at the kill."""
        assert self.proc.poll() is None
        self.proc.send_signal(signal.SIGKILL)
        t_kill = time.monotonic()
        assert self.proc.wait() == -signal.SIGKILL
        self.reader.join(5)
        os.close(self.master)
        return self.durable(t_kill)


def info(path):
    """`dockmnemo info PATH` in this process (app.cli.main, as the command calls it): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["info", str(path)])
    return SimpleNamespace(returncode=status, stdout=out.getvalue(), stderr=err.getvalue())


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["file_appears", "mid_run", "near_the_end"])
def test_a_killed_run_keeps_its_flushed_frames_and_events(tmp_path, moment, request):
    out = tmp_path / "k.h5"
    t_end = "160" if moment == "near_the_end" else "320"  # before the drive starts / the hard dock; on one core
    run = BarRun(out, "--t-end", t_end, one_core=moment != "file_appears")   # (~50x real time) mid_run outlasts
                                                                               # 13 s + MARGIN
    if moment == "file_appears":          # put in place by its first flush (about 1 s into the run)
        run.wait_for(out.exists)
    elif moment == "mid_run":             # frames to 13 s (past capture) must be in the file
        run.wait_for(lambda: run.durable(time.monotonic()) >= 13.0)
    else:
        # past its first flush (about a second in: on a quiet machine 25 s of 40 came before it, and the file was
        # still k.h5.creating) with 30 s of 160 left (~0.6 s of wall time); durable may be -1 if fast
        run.wait_for(lambda: out.exists() and run.t_shown() >= 130.0)
    durable = run.kill()
    assert moment != "mid_run" or durable >= 13.0, run.shown

    r = info(out)
    assert r.returncode == 0, r.stderr
    assert "INCOMPLETE run" in r.stdout and "sealed as an incomplete run" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.h5"]   # no temporary file left
    with h5py.File(out, "r") as f:         # sealed: an ordinary closed HDF5 file
        assert not f.attrs["complete"]
    k = RunFile(out)                       # validated on open: time finite and increasing, shapes agree
    assert not k.live and not k.meta.complete and k.n_frames >= 1
    assert k.time[0] == 0.0 and np.all(np.diff(k.time) > 0) and k.t_final == k.time[-1]
    assert k.time[-1] >= durable - 1e-3, (k.time[-1], durable)
    k.check_poses()
    kinds = [e.kind for e in k.events]
    assert k.events[-1].kind == "diagnostic" and k.events[-1].text.endswith("its writer was killed")
    if moment != "file_appears":           # the events logged while it ran, contact intervals from its frames
        assert {"first_contact", "sensor", "capture", "contact_begin", "contact_end"} <= set(kinds)
        assert k.t_capture == pytest.approx(EXPERT_CAPTURE, abs=1e-3)
        assert all(e.time <= k.t_final for e in k.events)
    assert info(out).returncode == 0       # a second look reads the sealed file as it is
    if moment == "mid_run":                # the frames are those of a run that was not killed (12 s, complete)
        with RunFile(request.getfixturevalue("killed_runs")("close")) as a:
            assert a.meta.complete
            n = a.n_frames
            assert n == 12001 and k.n_frames > n
            np.testing.assert_array_equal(k.time[:n], a.time)
            for ch in ("Fx", "probe_stroke", "head_x", "total_energy"):
                np.testing.assert_array_equal(k.channel(ch, 0, n), a.channel(ch))
            np.testing.assert_array_equal(k.contact_force("latch_neck", 0, n), a.contact_force("latch_neck"))
    k.close()


@pytest.mark.slow
def test_a_run_killed_while_its_file_is_created_leaves_the_older_file(tmp_path, small_run):
    out = tmp_path / "k.h5"
    shutil.copy(small_run, out)
    before = out.stat().st_mtime_ns
    with RunFile(out) as old:
        n_old = old.n_frames
    run = BarRun(out)
    run.wait_for(lambda: out.with_name("k.h5.creating").exists() or out.stat().st_mtime_ns != before)
    run.kill()
    r = info(out)
    assert r.returncode == 0, r.stderr
    with RunFile(out) as k:
        assert k.n_frames == n_old and k.meta.variant == "synthetic"


@pytest.mark.slow
def test_cancel_shows_where_the_run_stopped(tmp_path):
    out = tmp_path / "c.h5"
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", str(EXPERT), "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 60
    while not out.exists():                # written for about a second
        assert proc.poll() is None and time.monotonic() < end
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)        # Ctrl+C
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, err
    bar = [line for line in err.splitlines() if line.startswith("run expert_existing.toml")][-1]
    m = re.search(r"\]\s+([\d.]+)%\s+([\d.]+)/900\.0 s .* cancelled at ([\d.]+) s$", bar)
    assert m, bar
    assert float(m.group(1)) < 100.0 and float(m.group(2)) == pytest.approx(float(m.group(3)), abs=0.05)
    assert "cancelled at t = " in err and "marked incomplete" in err
    with RunFile(out) as c:
        assert not c.meta.complete and c.t_final == pytest.approx(float(m.group(3)), abs=0.01)
        assert float(m.group(3)) < 900.0 and c.events[-1].text.startswith("expert_existing.toml: cancelled at t =")


def test_an_output_step_longer_than_the_run_is_refused(tmp_path, capsys):
    out = tmp_path / "o.h5"
    assert main(["run", str(EXPERT), "--t-end", "0.3", "--output-step", "1e9", "-o", str(out)]) == 2
    assert f"{EXPERT}: --output-step: 1e+09 s must not exceed the run's length (0.3 s" in capsys.readouterr().err
    assert not out.exists() and not out.with_name("o.h5.creating").exists()


def bar_run_to_the_end(out, *args, scenario=EXPERT) -> str:
    """`dockmnemo run SCENARIO ARGS` to its end, exit 0; what its bar showed."""
    run = BarRun(out, *args, scenario=scenario)
    assert run.proc.wait(timeout=120) == 0, run.text
    run.reader.join(5)
    os.close(run.master)
    return run.text


@pytest.mark.slow
def test_t_end_holds_whatever_the_output_step(tmp_path):
    """Hard dock ends a run (the bar says so, not 100 %); a run whose last frame comes just before the hard dock,
    at --t-end, stops there: the hard dock inside its last output step is not simulated. The 20 t central impact
    with its drive 2 s after capture at 30 mm/s (a test override, as tests/test_solver_cyclogram), so hard dock comes
    at ~18 s of its 30."""
    fast = variant(tmp_path, "central_impact_20t.toml", {},
                   "[overrides]\ndrive_delay = 2.0\nretraction_speed = 0.03\n")
    text = bar_run_to_the_end(tmp_path / "a.h5", "--output-step", "1.0", scenario=fast)
    with RunFile(tmp_path / "a.h5") as a:
        t_dock = [e.time for e in a.events if e.kind == "hard_dock"][0]
        assert a.meta.complete and a.t_final == t_dock < 30.0
    assert re.search(rf"\]\s+[\d.]+%\s+{t_dock:.1f}/30\.0 s .* done at {t_dock:.3f} s \(hard dock\)", text), text
    assert "100.0%" not in text
    t_end = math.floor(t_dock) if t_dock > math.floor(t_dock) else t_dock - 1.0
    text = bar_run_to_the_end(tmp_path / "t.h5", "--t-end", f"{t_end:g}", "--output-step", "1.0", scenario=fast)
    assert re.search(rf"\]\s+100\.0%\s+{t_end:.1f}/{t_end:.1f} s .* done at {t_end:.3f} s$", text.strip()), text
    with RunFile(tmp_path / "t.h5") as r:
        assert r.meta.complete and r.time[-1] == t_end and r.n_frames == int(t_end) + 1
        assert "hard_dock" not in [e.kind for e in r.events]


def killed_while_finishing(out, killed_in: str):
    """A 12 s run whose process dies as RunWriter.`killed_in` starts, or ends ("after_<name>"): a kill at that
    moment of `finish`."""
    name = killed_in.removeprefix("after_")
    after = f"f = getattr(RunWriter, {name!r}); " if name != killed_in else "f = lambda *a, **k: None; "
    code = (f"import os, sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "from solver.runfile import RunWriter\n"
            "from solver.simulate import run_scenario\n"
            f"{after}setattr(RunWriter, {name!r}, lambda *a, **k: (f(*a, **k), os._exit(9)))\n"
            f"run_scenario({str(EXPERT)!r}, {str(out)!r}, t_end=12.0)\n")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 9


@pytest.fixture(scope="module")
def killed_runs(tmp_path_factory):
    """killed_runs(killed_in): the run of killed_while_finishing, made once for the module (tests read copies)."""
    made = {}

    def get(killed_in: str) -> Path:
        if killed_in not in made:
            made[killed_in] = tmp_path_factory.mktemp(f"killed{killed_in}") / "f.h5"
            killed_while_finishing(made[killed_in], killed_in)
        return made[killed_in]
    return get


def copy_of_killed(killed_runs, killed_in: str, out: Path) -> Path:
    """A copy at `out` of the module's run killed in `killed_in` (as it was left: sealed by nobody yet)."""
    src = killed_runs(killed_in)
    assert sorted(p.name for p in src.parent.iterdir()) == ["f.h5"]
    shutil.copyfile(src, out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("killed_in,complete", [("_write_events", False), ("after__write_events", False),
                                                ("close", True)])
def test_a_run_killed_while_it_finishes(tmp_path, killed_in, complete, killed_runs):
    """Killed before or after writing its events, not flushed (kept incomplete, events from its log, contact
    statistics from its frames), or after marking itself complete (kept complete)."""
    out = copy_of_killed(killed_runs, killed_in, tmp_path / "f.h5")
    r = info(out)
    assert r.returncode == 0, r.stderr
    assert ("INCOMPLETE run" in r.stdout) != complete
    with RunFile(out) as k:
        assert k.n_frames == 12001 and k.meta.complete == complete and k.t_capture == pytest.approx(EXPERT_CAPTURE, abs=1e-3)
        kinds = [e.kind for e in k.events]
        assert {"first_contact", "capture", "contact_begin", "contact_end"} <= set(kinds)
        assert (kinds[-1] == "diagnostic") != complete
        assert k.contact_statistics() is not None and len(k.contact_statistics()[0]) == kinds.count("contact_begin")


@pytest.mark.gui
@pytest.mark.slow
def test_the_viewer_opens_a_killed_run_sealed_as_incomplete(qtbot, tmp_path, artifacts, killed_runs):
    pytest.importorskip("PySide6")
    from tests.gui_util import main_window
    out = copy_of_killed(killed_runs, "_write_events", tmp_path / "killed.h5")
    w = main_window(qtbot, tmp_path / "settings.ini")
    assert w.open_run(out), w.last_error          # File → Open: sealed, then opened like any closed run
    qtbot.waitUntil(lambda: w.diagram.analysed, timeout=10000)
    run = w.run
    assert not run.live and not run.meta.complete and run.n_frames == 12001
    assert run.events[-1].text.endswith("its writer was killed")
    assert "capture" in [e.kind for e in run.events]
    with h5py.File(out, "r") as f:                 # an ordinary closed file now
        assert f["time"].shape == (12001,)
    assert w.diagram.plots.fact_labels["T Final"].text() == "12.000 s (incomplete)"
    w.playback.seek_frame(run.n_frames - 1)
    assert w.grab_image().save(str(artifacts / "killed_run_sealed.png"))
