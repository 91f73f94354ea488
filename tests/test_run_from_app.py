"""Running the solver from the app: scenario dialog, worker process with progress, cancel, kill, re-run from
T Current, live view of the growing file, comparison of two runs. GUI tests drive the window as a person would."""
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QElapsedTimer, QSettings, Qt, QTimer  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from solver.runfile import RunFile  # noqa: E402

SCEN = Path(__file__).resolve().parent.parent / "resources" / "scenarios"


@pytest.fixture
def window(qtbot, tmp_path):
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    s.setValue("runs_dir", str(tmp_path / "runs"))
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    if w.runner.running:
        w.runner.kill()
        qtbot.waitUntil(lambda: not w.runner.running, timeout=10000)


@pytest.fixture(scope="module")
def dialog_window(qapp, request, tmp_path_factory):
    """One window for the module's tests that only fill in its scenario dialog (building a window is their costly
    part); nothing is run on it."""
    from tests.gui_util import module_window
    w = module_window(request, tmp_path_factory)
    w.settings.setValue("runs_dir", str(tmp_path_factory.mktemp("dialog_runs") / "runs"))
    yield w
    w.close()


@pytest.fixture
def dialog_host(dialog_window):
    """The module's dialog window; the scenario dialog a test opened on it is closed after the test."""
    yield dialog_window
    dlg = getattr(dialog_window, "scenario_dialog", None)
    if dlg is not None:
        dlg.done(0)
        dlg.deleteLater()
        dialog_window.scenario_dialog = None


class LoopLatency:
    """Event-loop latency: how late a 10 ms timer fires (logged per phase of the test, not asserted)."""

    def __init__(self):
        self.gaps = []           # (phase, ms late)
        self.phase = "start"
        self.clock = QElapsedTimer()
        self.timer = QTimer(interval=10, timeout=self._tick)
        self.timer.setTimerType(Qt.PreciseTimer)

    def start(self):
        self.clock.start()
        self.last = self.clock.nsecsElapsed()
        self.timer.start()

    def mark(self, phase: str):
        self.phase = phase

    def _tick(self):
        now = self.clock.nsecsElapsed()
        self.gaps.append((self.phase, (now - self.last) / 1e6 - 10.0))
        self.last = now

    def stop(self) -> str:
        self.timer.stop()
        lines = []
        for phase in dict.fromkeys(p for p, _ in self.gaps):
            g = sorted(x for p, x in self.gaps if p == phase)
            lines.append(f"{phase}: {len(g)} ticks, median {statistics.median(g):.1f} ms, "
                         f"p95 {g[int(0.95 * (len(g) - 1))]:.1f} ms, max {g[-1]:.1f} ms late")
        return "event-loop latency (10 ms timer)\n  " + "\n  ".join(lines)


def _type(qtbot, edit, text):
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_edit_run_progress_cancel_rerun_and_open(window, qtbot, artifacts):
    w = window
    runs = Path(w.runs_dir())
    dlg = w.new_run_dialog(SCEN / "central_impact_20t.toml")
    qtbot.waitExposed(dlg)
    _type(qtbot, dlg.field("initial", "closing_speed"), "0.2")       # edit a parameter
    _type(qtbot, dlg.t_end_edit, "300")   # long enough that Cancel comes first on a fast, idle machine
    qtbot.waitUntil(lambda: dlg.run_button.isEnabled(), timeout=3000)
    assert "valid" in dlg.message.text()
    lat = LoopLatency()
    lat.start()
    t_click = time.perf_counter()
    lat.mark("worker starting (no run shown yet)")
    qtbot.mouseClick(dlg.run_button, Qt.LeftButton)
    assert w.runner.running
    w.runner.started.connect(lambda _: lat.mark("first progress and first open of the growing file"))
    # progress: the bar moves and the panes follow the growing file
    qtbot.waitUntil(lambda: w.run_bar.value() > 0 and w.run is not None and w.run.live, timeout=90000)
    first_progress = time.perf_counter() - t_click
    qtbot.wait(20)
    lat.mark("following the running solver (refreshes)")
    n1 = w.playback.n_frames
    assert "ETA" in w.run_label.text() and w.run_bar.isVisible()
    qtbot.waitUntil(lambda: w.playback.n_frames > n1, timeout=30000)   # a live refresh (in steps) has ended
    assert w.playback.frame == w.playback.n_frames - 1      # following the end of the run
    assert w.diagram.plots.curves[0].xData[-1] == pytest.approx(w.run.time[w.playback.frame])
    grab = w.grab_image()
    assert grab.save(str(artifacts / "run_live.png"))
    qtbot.wait(1500)                                        # keep following for a while
    # cancel: the worker stops after its block and leaves a truncated file marked incomplete
    lat.mark("cancel until the worker ends; then the saved run opens")
    qtbot.mouseClick(w.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.runner.running, timeout=30000)
    log = lat.stop()
    log += "\nlive view updates (kind, frames, ms): " + ", ".join(f"{k} {n} {1e3 * dt:.0f}" for k, n, dt in w.live_timings)
    log += f"\nfirst progress {first_progress:.1f} s after Run (worker start-up: Python, numba cache load)"
    print("\n" + log)
    (artifacts / "run_latency.txt").write_text(log + "\n")
    assert "cancelled" in w.last_run_message
    cancelled = w.run
    assert not cancelled.live and not cancelled.meta.complete
    assert 0.5 < cancelled.t_final < 300.0
    assert any(e.kind == "diagnostic" and "cancelled" in e.text for e in cancelled.events)
    assert w.recent_runs()[0] == str(cancelled.path.resolve())
    assert (runs / cancelled.path.name.replace(".h5", ".scenario.toml")).is_file()
    assert "closing_speed = 0.2" in (runs / cancelled.path.name.replace(".h5", ".scenario.toml")).read_text()
    # re-run from T Current with a changed damper parameter, to the end
    w.playback.seek_time(0.5)
    t_branch = w.playback.t_current
    dlg2 = w.rerun_dialog()
    qtbot.waitExposed(dlg2)
    assert not dlg2.group_boxes["Initial conditions"].isEnabled()
    _type(qtbot, dlg2.field("axial_damper", "friction_brake_torque_in"), "3.5")
    _type(qtbot, dlg2.t_end_edit, "1.5")
    qtbot.waitUntil(lambda: dlg2.run_button.isEnabled(), timeout=3000)
    qtbot.mouseClick(dlg2.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.runner.running, timeout=90000)
    assert w.last_run_message == "finished", w.last_run_message
    branch = w.run
    assert branch.meta.complete and "_branch_" in branch.path.name
    assert branch.time[0] == pytest.approx(t_branch) and branch.t_final == pytest.approx(1.5, abs=2e-3)
    assert w.recent_runs()[:2] == [str(branch.path.resolve()), str(cancelled.path.resolve())]
    mech = runs / branch.path.name.replace(".h5", ".scenario.mechanism.toml")
    assert "friction_brake_torque_in = 3.5" in mech.read_text()
    # the branch starts from the stored state: at the branch frame the poses equal the source run's
    src = RunFile(cancelled.path)
    k = src.frame_at(t_branch)
    np.testing.assert_array_equal(branch.poses(0)[0], src.poses(k)[0])
    src.close()
    # open the result again from the recent-runs menu, as a person would
    w.recent_menu.actions()[1].trigger()
    assert w.run.path == cancelled.path.resolve() or w.run.path == cancelled.path


def test_killed_worker_leaves_a_sealed_incomplete_run(window, qtbot):
    w = window
    w.start_run(SCEN / "lateral_miss_7t.toml", Path(w.runs_dir()) / "killed.h5", 15.0)
    qtbot.waitUntil(lambda: (w.run is not None and w.run.live and w.run.n_frames >= 1000) or not w.runner.running,
                    timeout=90000)
    assert w.runner.running, (w.last_run_message, w.runner.stderr)
    w.runner.kill()
    qtbot.waitUntil(lambda: not w.runner.running, timeout=10000)
    assert "killed" in w.last_run_message and "marked incomplete" in w.last_run_message
    r = w.run
    assert r.path.name == "killed.h5" and not r.live and not r.meta.complete and r.n_frames >= 1000
    assert r.events[-1].kind == "diagnostic" and "killed" in r.events[-1].text
    import h5py
    with h5py.File(r.path, "r") as f:   # an ordinary closed HDF5 file again (no SWMR flags left)
        assert f["time"].shape[0] == r.n_frames


@pytest.mark.parametrize("field,text,expect", [
    (("active_craft", "mass", None), "-20000", "active_craft.mass: -20000 is outside the allowed range"),
    (("active_craft", "mass", None), "nan", "active_craft.mass: must be finite"),
    (("initial", "closing_speed", None), "", "initial.closing_speed: missing"),
    (("initial", "lateral_miss", 1), "", "lateral miss z: missing"),
    (("axial_damper", "spring_stiffness", None), "abc", "'abc' is not a number"),
])
def test_bad_input_in_dialog_starts_nothing(dialog_host, qtbot, field, text, expect):
    w = dialog_host
    dlg = w.new_run_dialog(SCEN / "lateral_miss_7t.toml")
    qtbot.waitExposed(dlg)
    edit = dlg.field(*field)
    edit.selectAll()
    qtbot.keyClicks(edit, text) if text else qtbot.keyClick(edit, Qt.Key_Delete)
    qtbot.waitUntil(lambda: expect in dlg.message.text(), timeout=3000)
    assert not dlg.run_button.isEnabled()
    assert edit.styleSheet()   # the field is marked
    dlg.accept()               # even forced, nothing starts and the dialog stays
    assert dlg.isVisible() and not w.runner.running and not Path(w.runs_dir()).exists()


def test_unknown_variant_in_dialog(dialog_host, qtbot, tmp_path):
    bad = tmp_path / "bad_variant.toml"
    bad.write_text((SCEN / "lateral_miss_7t.toml").read_text().replace('mechanism = "existing"',
                                                                       'mechanism = "variant_9"'))
    dlg = dialog_host.new_run_dialog(bad)
    qtbot.waitExposed(dlg)
    assert "mechanism: no mechanism file" in dlg.message.text() and "variant_9" in dlg.message.text()
    assert not dlg.run_button.isEnabled()
    mech = tmp_path / "modified.mechanism.toml"
    mech.write_text((SCEN.parent / "mechanisms" / "existing.toml").read_text()
                    .replace('variant = "existing"', 'variant = "telescopic_probe"'))
    bad.write_text(bad.read_text().replace('"variant_9"', '"modified.mechanism.toml"'))
    dlg.load_scenario(bad)
    assert dlg.validate() is False
    assert "'telescopic_probe': must be one of existing, modified_dampers, movable_limiter" in dlg.message.text()


def test_dialog_saves_toml_that_the_cli_accepts(dialog_host, qtbot, tmp_path, capsys):
    import signal

    from app.cli import main
    dlg = dialog_host.new_run_dialog(SCEN / "central_impact_20t.toml")
    _type(qtbot, dlg.field("lateral_damper", "spring_damping"), "800")
    _type(qtbot, dlg.field("overrides", "head_friction", None), "0.3")
    path = dlg.save_as(tmp_path / "edited.toml")
    text = path.read_text()
    assert 'mechanism = "edited.mechanism.toml"' in text and "head_friction = 0.3" in text
    assert "# kg (seed 000)" in text            # comments kept
    assert "spring_damping = 800.0" in (tmp_path / "edited.mechanism.toml").read_text()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:                                        # `dockmnemo run` in this process, as the command calls it
        status = main(["run", str(path), "-o", str(tmp_path / "e.h5"), "--t-end", "0.05"])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert status == 0, capsys.readouterr().err
    assert RunFile(tmp_path / "e.h5").meta.complete


def test_comparison_ghost_dashed_curves_and_difference(window, qtbot, tmp_path, artifacts):
    from solver.simulate import run_scenario
    a = run_scenario(SCEN / "lateral_miss_7t.toml", tmp_path / "lateral_miss.h5", t_end=3.0)
    b = run_scenario(SCEN / "central_impact_20t.toml", tmp_path / "central.h5", t_end=3.0)
    w = window
    assert w.open_run(a)
    w.diagram.plots.set_plotted(["Fx", "Fy", "probe_stroke", "head_y"])
    assert w.compare_with(b, align="first_contact", diff="probe_stroke")
    d = w.diagram
    ra, rb = w.run, d.compare_run
    from viewer.compare import first_contact_time
    assert d.compare_offset == pytest.approx(first_contact_time(ra) - first_contact_time(rb))
    plots = d.plots
    assert len(plots.ghost_curves) == 4 and plots.diff_plot is not None
    assert plots.ghost_curves[0].opts["pen"].style() == Qt.DashLine
    np.testing.assert_allclose(plots.ghost_curves[0].xData, rb.time + d.compare_offset)
    diff = plots.difference_values()
    i = ra.frame_at(2.0)
    j = rb.frame_at(2.0 - d.compare_offset)
    assert diff[i] == pytest.approx(ra.channel_at("probe_stroke", i) - rb.channel_at("probe_stroke", j), abs=2e-3)
    w.playback.seek_time(2.0)
    j = rb.frame_at(w.playback.t_current - d.compare_offset + 1e-9)
    assert d.scene.ghost_frame() == j
    pos_b, _ = rb.poses(j)
    np.testing.assert_allclose(d.scene.ghost_matrix("probe_head")[:3, 3], pos_b[rb.bodies.index("probe_head")])
    qtbot.wait(100)
    img = w.grab_image()
    path = artifacts / "compare_runs.png"
    assert img.save(str(path))
    # t = 0 alignment moves the ghost curves back; clearing removes them
    w.set_compare_alignment("t0")
    assert d.compare_offset == 0.0
    np.testing.assert_allclose(plots.ghost_curves[0].xData, rb.time)
    w.compare_with(None)
    assert not plots.ghost_curves and plots.diff_plot is None and d.scene.ghost_frame() == -1
