"""The mnemonic diagram in the main window, driven with keys and mouse under Xvfb: all panes show one frame."""
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage, QRegion  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.cli import SYNTHETIC_RUN  # noqa: E402
from tests.gui_util import main_window, make_active, module_window  # noqa: E402
from viewer.diagram import PANES  # noqa: E402
from viewer.playback import EVERY_FRAME  # noqa: E402

DOCS = SYNTHETIC_RUN.parent.parent / "docs"


def make_window(qtbot, settings_path, run=SYNTHETIC_RUN):
    return main_window(qtbot, settings_path, run)


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory):
    """One window on the synthetic run for the module's tests that only drive it (building one is the costly part)."""
    w = module_window(request, tmp_path_factory, SYNTHETIC_RUN)
    yield w, fresh_state(w)
    w.close()


def fresh_state(w) -> dict:
    """What a test may change and a new window shows: playback, loop range, speed, scrolling, panes, plots, sizes."""
    d, pb = w.diagram, w.playback
    return {"frame": pb.frame, "playing": pb.playing, "speed": pb.speed, "loop": pb.loop, "range": pb.loop_range,
            "graph_step": pb.graph_step, "scrolling": d.act_scrolling.isChecked(), "plots": list(d.plots.names),
            "panes": {k: d.pane(k).isVisible() for k in PANES}, "x": d.plots.x_range(),
            "splitter": d.splitter.sizes()}


@pytest.fixture
def new_window(qtbot, tmp_path):
    """A window of its own, for the tests of what the screen shows pixel by pixel (no pointer left over a plot)."""
    return make_window(qtbot, tmp_path / "settings.ini")


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window set back to how a new window shows the run (checked, so no test sees another's state)."""
    w, fresh = shared_window
    d, pb = w.diagram, w.playback
    pb.pause()
    pb.set_loop(False)
    pb.set_loop_range(None, None)
    pb.set_speed(fresh["speed"])
    pb.set_graph_step(fresh["graph_step"])
    d.act_scrolling.setChecked(fresh["scrolling"])
    for k, on in fresh["panes"].items():
        d.set_pane_visible(k, on)
    d.plots.set_plotted(fresh["plots"])
    d.splitter.setSizes(fresh["splitter"])
    pb.seek_frame(fresh["frame"])
    make_active(qtbot, w)
    QApplication.processEvents()
    assert fresh_state(w) == fresh
    return w


def head_index(run):
    return run.bodies.index("probe_head")


def assert_panes_in_sync(w):
    """Model time, yellow lines, readouts, transport label, devices values and the scene's probe pose agree."""
    d, run, pb = w.diagram, w.run, w.playback
    f = pb.frame
    t = float(run.time[f])
    assert pb.t_current == t
    # bottom pane: yellow line in every plot at T Current, readout box and values at this frame
    assert d.plots.frame == f
    assert all(c.value() == pytest.approx(t) for c in d.plots.cursors)
    assert f"{t:.4f}" in d.plots.t_label.text()
    for name, v in d.plots.values().items():
        assert v == pytest.approx(run.channel_at(name, f), nan_ok=True)
    lo, hi = d.plots.x_range()
    assert lo <= t <= hi, "the yellow line is inside the shown time window"
    # transport bar
    assert f"{t:.4f}" in d.time_text() and f"frame {f + 1}/{run.n_frames}" in d.time_text()
    assert d.slider.value() == f
    # middle pane
    assert d.devices.frame == f
    for name in d.devices.bar_names() + ["probe_stroke"]:
        assert d.devices.value(name) == pytest.approx(run.channel_at(name, f), nan_ok=True)
    # top pane: the probe head actor sits where the run file puts the head at this frame
    scene = d.scene
    assert scene.current_frame == f
    pos, _ = run.poses(f)
    np.testing.assert_allclose(scene.part_matrix("probe_head")[:3, 3], pos[head_index(run)], atol=1e-9)
    assert f"{t:8.3f}" in scene.time_text()


def test_open_shows_frame_zero_in_all_panes(window):
    d = window.diagram
    assert d.run is window.run and window.playback.frame == 0
    assert d.plots.names == ["Fx", "Fy", "Fz", "probe_stroke"]
    assert set(d.devices.bars["axial_damper"]) == {"axial_spring", "friction_brake", "axial_magnetic_brake"}
    assert d.devices.bars["lateral_damper"][0] == "spring_mechanism_2"  # placed at 0 deg, first by placement
    assert_panes_in_sync(window)


def test_keys_step_graphstep_home_end(window, qtbot):
    pb, run = window.playback, window.run
    qtbot.keyClick(window, Qt.Key_Right)
    assert pb.frame == 1
    assert_panes_in_sync(window)
    qtbot.keyClick(window, Qt.Key_Right, Qt.ShiftModifier)
    assert pb.t_current == pytest.approx(run.time[1] + pb.graph_step)
    assert_panes_in_sync(window)
    qtbot.keyClick(window, Qt.Key_Left, Qt.ShiftModifier)
    qtbot.keyClick(window, Qt.Key_Left)
    assert pb.frame == 0
    qtbot.keyClick(window, Qt.Key_End)
    assert pb.frame == run.n_frames - 1
    assert_panes_in_sync(window)
    qtbot.keyClick(window, Qt.Key_Home)
    assert pb.frame == 0
    assert_panes_in_sync(window)


def test_space_plays_and_pauses(window, qtbot):
    pb = window.playback
    pb.set_speed(4.0)
    qtbot.keyClick(window, Qt.Key_Space)
    assert pb.playing and window.diagram.act_play.isChecked()
    qtbot.waitUntil(lambda: pb.frame > 50, timeout=5000)
    qtbot.keyClick(window, Qt.Key_Space)
    assert not pb.playing
    f = pb.frame
    qtbot.wait(100)
    assert pb.frame == f, "paused playback does not move"
    assert_panes_in_sync(window)


def test_speed_keys_combo_and_real_time_advance(window, qtbot):
    pb, d = window.playback, window.diagram
    qtbot.keyClick(window, Qt.Key_Equal)
    assert pb.speed == 2.0 and d.speed_combo.currentText() == "2x"
    qtbot.keyClick(window, Qt.Key_Minus)
    qtbot.keyClick(window, Qt.Key_Minus)
    assert pb.speed == 0.5 and d.speed_combo.currentText() == "1/2x"
    pb.set_speed(8.0)
    assert d.speed_combo.currentText() == "8x"
    pb.play()
    pb._timer.stop()          # drive the clock by hand: 0.1 s of wall time at 8x is 0.8 s of run time
    t0 = pb.t_current
    pb.advance(0.1)
    assert pb.t_current == pytest.approx(t0 + 0.8, abs=window.run.meta.output_step)
    assert_panes_in_sync(window)
    i = d.speed_combo.findData(EVERY_FRAME)
    d.speed_combo.setCurrentIndex(i)
    d.speed_combo.activated.emit(i)
    assert pb.speed == EVERY_FRAME
    f = pb.frame
    pb.advance(0.1)
    assert pb.frame == f + 1
    pb.pause()


def click_plot_at_time(qtbot, plots, t, plot_index=0):
    vb = plots.plots[plot_index].getViewBox()
    scene_pt = vb.mapViewToScene(QPointF(t, 0))
    scene_pt.setY(vb.sceneBoundingRect().center().y())
    view_pt = plots.glw.mapFromScene(scene_pt)
    qtbot.mouseClick(plots.glw.viewport(), Qt.LeftButton, pos=QPoint(view_pt.x(), view_pt.y()))
    return view_pt


def test_click_in_plot_seeks_all_panes(window, qtbot):
    pb, plots, run = window.playback, window.diagram.plots, window.run
    lo, hi = plots.x_range()
    target = lo + 0.63 * (hi - lo)
    view_pt = click_plot_at_time(qtbot, plots, target, plot_index=2)
    px = (hi - lo) / plots.plots[2].getViewBox().width()   # run time per pixel
    assert abs(pb.t_current - target) <= 2 * px + run.meta.output_step
    assert_panes_in_sync(window)
    # the yellow line is drawn where the user clicked
    line_x = plots.glw.mapFromScene(plots.plots[2].getViewBox().mapViewToScene(
        QPointF(plots.cursors[2].value(), 0))).x()
    assert abs(line_x - view_pt.x()) <= 2


def rgb(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    return a[:, :img.width() * 4].reshape(img.height(), img.width(), 4)[..., 2::-1].copy()   # (BGRA bytes)


def on_screen(view) -> np.ndarray:
    """What the window shows of a graphics view's viewport: its part of the window's backing store, RGB rows (from
    its top down to where the plots' scroll area cuts it)."""
    vp = view.viewport()
    seen = vp.visibleRegion().boundingRect()
    assert seen.top() == 0
    at = vp.mapTo(vp.window(), QPoint(0, 0))
    return rgb(vp.backingStore().paintDevice().copy(QRect(at, seen.size())))


def yellow(px: np.ndarray) -> np.ndarray:
    return (px[..., 0] > 230) & (px[..., 1] > 190) & (px[..., 2] < 60)


def test_yellow_lines_on_screen_show_the_model_frame(new_window):
    """While playing (cursor moves and scrolls), the screen shows the yellow line at T Current in every plot and
    in the contact lanes; where it was a few frames before, the screen shows what a fresh drawing of the plots
    shows there (a move repaints only thin strips, from the view's copy of the plots)."""
    window = new_window
    pb, plots = window.playback, window.diagram.plots
    view = plots.glw
    pb.seek_time(7.4)          # the line moves right until 8 s, then the window scrolls under it
    pb.play()
    pb._timer.stop()
    old = {}
    checked = scrolled = 0
    for k in range(60):
        shown = plots.x_range()
        pb.advance(1 / 60)
        QApplication.processEvents()
        scrolled += plots.x_range() != shown
        px = on_screen(view)
        assert len(view.cursors) == len(plots.plots) + 1       # the plots and the lanes
        for i, c in enumerate(view.cursors):
            assert c.value() == pytest.approx(float(window.run.time[pb.frame]))
            st, _ = view.view_box_place(c.plot.getViewBox())   # (as its pixels show it: see the next test)
            x = view.viewportTransform().map(st.map(QPointF(c.value(), 0))).x()
            box = view.viewportTransform().mapRect(c.plot.getViewBox().sceneBoundingRect())
            top = box.top() + c.top_px                         # (the line stops under its plot's legend strip)
            rows = slice(math.ceil(top) + 1, min(math.floor(box.bottom()) - 1, len(px)))
            if rows.stop - rows.start < 10:                    # (scrolled out of the plots' pane)
                continue
            col = int(math.floor(x))
            assert yellow(px[rows, col - 1:col + 2]).any(axis=1).mean() > 0.95, (k, i, x)
            if c.plot in plots.plots and i in old and abs(old[i] - x) > 8:
                cols = slice(int(math.floor(old[i])) - 3, int(math.floor(old[i])) + 4)
                fresh = rgb(view.viewport().grab().toImage())
                assert not yellow(px[rows, cols]).any(), (k, i)
                np.testing.assert_array_equal(px[rows, cols], fresh[rows, cols][:len(px)])
                checked += 1
            if i not in old or abs(old[i] - x) > 8:
                old[i] = x
    pb.pause()
    assert checked > 0 and scrolled > 0



def test_a_scroll_step_applied_a_frame_ahead_shows_the_pixels_of_a_direct_scroll(new_window):
    """While playing, the frame before a scroll step applies the step's x range and keeps its own pixels; the screen
    then equals that frame drawn directly, and at the step it equals a fresh drawing of the new range."""
    window = new_window
    pb, plots = window.playback, window.diagram.plots
    view = plots.glw
    pb.seek_time(7.4)
    pb.play()
    pb._timer.stop()
    held = presented = 0
    drop, ahead = True, False                   # drop the next held frame; the last frame was held (not dropped)
    for _ in range(150):
        shown = plots.x_range()
        pb.advance(1 / 60)
        QApplication.processEvents()
        if plots._early is not None:            # a held frame: the state is the next step's, the pixels this one's
            assert plots.x_range() == shown != plots._xrange
            ahead = not drop
            if drop:                            # its pixels against this frame drawn without the step ahead
                kept = on_screen(view)
                plots._drop_early()
                QApplication.processEvents()
                assert plots._early is None and plots._xrange == shown
                np.testing.assert_array_equal(kept, on_screen(view))
                held += 1
                drop = False
        elif plots.x_range() != shown:          # a step: shown as a fresh drawing of the new range shows it
            px = on_screen(view)
            view._shot = None
            view.viewport().repaint()
            np.testing.assert_array_equal(px, on_screen(view))
            if ahead:
                presented += 1
                drop = True
            ahead = False
    assert held >= 2 and presented >= 2
    pb.pause()
    assert plots._early is None

def test_scrolling_window_moves_in_graphsteps_and_whole_run(window, qtbot):
    pb, plots, run = window.playback, window.diagram.plots, window.run
    pb.seek_time(20.0)
    lo, hi = plots.x_range()
    assert hi - lo == pytest.approx(plots.window)
    assert lo < 20.0 < hi
    assert (lo / pb.graph_step) == pytest.approx(round(lo / pb.graph_step), abs=1e-6)
    pb.step_graph(1)
    lo2, _ = plots.x_range()
    assert lo2 == pytest.approx(lo + pb.graph_step)   # traces shift right to left by one GraphStep
    qtbot.keyClick(window, Qt.Key_W)
    assert not window.diagram.act_scrolling.isChecked()
    assert plots.x_range() == (pytest.approx(run.time[0]), pytest.approx(run.time[-1]))
    assert_panes_in_sync(window)


def test_loop_range_keys(window, qtbot):
    pb, d = window.playback, window.diagram
    pb.seek_time(2.0)
    qtbot.keyClick(window, Qt.Key_I)
    pb.seek_time(3.0)
    qtbot.keyClick(window, Qt.Key_O)
    assert pb.loop_range == (window.run.frame_at(2.0), window.run.frame_at(3.0))
    assert all(r.isVisible() for r in d.plots.ranges)
    assert d.plots.ranges[0].getRegion() == (pytest.approx(2.0), pytest.approx(3.0))
    qtbot.keyClick(window, Qt.Key_L)
    assert pb.loop and d.loop_button.isChecked() and "2.00" in d.loop_button.text()
    pb.play()
    pb._timer.stop()
    for _ in range(30):
        pb.advance(0.1)
        assert 2.0 - 1e-9 <= pb.t_current <= 3.0 + 1e-9
    assert pb.playing
    pb.pause()
    qtbot.keyClick(window, Qt.Key_L, Qt.ShiftModifier)
    assert pb.loop_range is None and not d.plots.ranges[0].isVisible()


def test_devices_pane_bars_fill_red_and_blue(window, qtbot):
    d, run = window.diagram, window.run
    spring = run.channel("axial_spring")
    brake = run.channel("magnetic_brake_2")
    f = int(np.argmax(spring >= run.channels["axial_spring"].stroke - 1e-12))   # spring fully compressed
    neg = int(np.argmin(brake))                                                  # most negative brake rate
    for frame, name, colour in ((f, "axial_spring", "red"), (neg, "magnetic_brake_2", "blue")):
        window.playback.seek_frame(frame)
        img = d.devices.grab().toImage()
        r = d.devices.bar_rects[name]
        frac = min(abs(run.channel_at(name, frame)) / d.devices.scales[name], 1.0)
        x = int(r.left() + 3)
        c = QColor(img.pixel(x, int(r.center().y())))
        if colour == "red":
            assert c.red() > 180 and c.blue() < 80, c.name()
        else:
            assert c.blue() > 180 and c.red() < 100, c.name()
        # beyond the filled share the bar is empty (dark)
        if frac < 0.9:
            e = QColor(img.pixel(int(r.left() + r.width() * (frac + 0.05)), int(r.top() + 3)))
            assert max(e.red(), e.green(), e.blue()) < 80, e.name()
    assert_panes_in_sync(window)


def assert_plots_hold_x_range(d):
    """Every curve holds the loaded frames, and they cover the plots' x range."""
    run = d.run
    a, b = d.plots.loaded_span()
    lo, hi = d.plots.x_range()
    assert run.time[a] <= lo + 1e-9 and run.time[b - 1] >= min(hi, run.time[-1]) - 1e-9
    for name, c in zip(d.plots.names, d.plots.curves):
        np.testing.assert_array_equal(c.xData, run.time[a:b])
        np.testing.assert_array_equal(c.yData, run.channel(name, a, b))


def test_only_plotted_channels_are_loaded_and_blocks_are_reused(window, qtbot):
    d = window.diagram
    assert set(d.blocks._full) <= set(d.plots.names)   # no channel is read whole; plots read the frames around the x range
    assert_plots_hold_x_range(d)
    reads = d.blocks.reads
    for f in range(100, 400):        # stepping inside one chunk re-reads nothing
        window.playback.seek_frame(f)
    assert d.blocks.reads == reads


def test_variable_chooser_and_settings_restore(qtbot, tmp_path):
    ini = tmp_path / "settings.ini"
    w = make_window(qtbot, ini)
    dlg = w.choose_variables()
    dlg.search.setText("magnetic")
    shown = [n for n, it in dlg.items.items() if not it.isHidden()]
    assert set(shown) == {"axial_magnetic_brake", "magnetic_brake_1", "magnetic_brake_2"}
    dlg.items["magnetic_brake_1"].setCheckState(0, Qt.Checked)
    dlg.items["Fy"].setCheckState(0, Qt.Unchecked)
    dlg.accept()
    assert w.diagram.plots.names == ["Fx", "Fz", "probe_stroke", "magnetic_brake_1"]
    assert set(w.diagram.blocks._full) <= set(w.diagram.plots.names)
    assert_plots_hold_x_range(w.diagram)
    w.toggle_plot("Fx", False)
    w.playback.set_speed(0.25)
    w.diagram.act_scrolling.setChecked(False)
    w.diagram.set_pane_visible("devices", False)
    w.diagram.splitter.setSizes([300, 150, 500])
    sizes = w.diagram.splitter.sizes()
    w.close()
    w2 = make_window(qtbot, ini)
    assert w2.diagram.plots.names == ["Fz", "probe_stroke", "magnetic_brake_1"]
    assert w2.playback.speed == 0.25 and w2.diagram.speed_combo.currentText() == "1/4x"
    assert not w2.diagram.act_scrolling.isChecked()
    assert w2.diagram.devices.isHidden() and not w2.diagram.pane_actions["devices"].isChecked()
    new = w2.diagram.splitter.sizes()
    assert abs(new[0] - sizes[0]) <= 4 and abs(new[2] - sizes[2]) <= 4 and new[1] == 0
    assert_panes_in_sync(w2)


def test_bad_file_keeps_diagram_running(window, qtbot, tmp_path):
    window.playback.seek_time(5.0)
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    assert not window.open_run(bad)
    window.error_box.accept()
    qtbot.keyClick(window, Qt.Key_Right)
    assert window.playback.t_current == pytest.approx(5.0 + window.run.meta.output_step)
    assert_panes_in_sync(window)


def test_small_run_opens_and_syncs(qtbot, tmp_path, small_run):
    w = make_window(qtbot, tmp_path / "s.ini", small_run)
    assert w.run.n_frames == 601
    w.playback.seek_time(1.7)
    assert_panes_in_sync(w)
    lo, hi = w.diagram.plots.x_range()
    assert (lo, hi) == (pytest.approx(0.0), pytest.approx(10.0))   # a run shorter than the window


def test_screenshots(window, qtbot, artifacts):
    """Save each pane and the whole window (VTK scene composed in) for people to look at."""
    d, pb = window.diagram, window.playback
    pb.seek_time(2.62)           # after capture: limiter on the cone, spring fully compressed, brake slipping
    qtbot.wait(50)
    shots = {
        "pane_devices.png": d.devices.grab().toImage(),
        "pane_plots.png": d.plots.grab().toImage(),
        "pane_scene.png": d.scene.grab_image(),
        "main_window.png": window.grab_image(),
    }
    for name, img in shots.items():
        path = artifacts / name
        assert img.save(str(path)), name
        assert path.stat().st_size > 5000
    img = shots["main_window.png"]
    # the VTK part is not black: the composed window holds the scene's own pixels
    top = d.scene.mapTo(window, QPoint(d.scene.width() // 2, d.scene.height() // 2))
    assert shots["pane_scene.png"].width() > 100
    lit = sum(QColor(img.pixel(x, top.y())).lightness() > 60 for x in range(0, img.width(), 2))
    assert lit > 3
    assert math.isfinite(pb.t_current)


def test_hidden_panes_skip_frames_and_catch_up_when_shown(window):
    """A hidden scene or plots pane does no per-frame work; shown again it shows T Current."""
    d, pb = window.diagram, window.playback
    pb.seek_time(2.0)
    shown = d.scene.current_frame
    d.set_pane_visible("scene", False)
    d.set_pane_visible("plots", False)
    pb.seek_time(6.0)
    assert d.scene.current_frame == shown and d.plots.frame != pb.frame   # skipped while hidden
    assert d.devices.frame == pb.frame                                     # (the devices pane is cheap: kept)
    d.set_pane_visible("scene", True)
    d.set_pane_visible("plots", True)
    assert_panes_in_sync(window)


def test_the_scene_renders_in_its_thread_and_its_view_paints_after_the_other_panes(window, qtbot):
    """While playing, the scene renders in the render thread and its view is painted after the devices pane and
    the plots (the render runs meanwhile), without painting the widgets behind it; all panes show the frame."""
    from PySide6.QtCore import QEvent, QObject

    d, pb = window.diagram, window.playback
    view = d.scene.vtk_widget
    order = []

    class Paints(QObject):
        def eventFilter(self, obj, ev):
            if ev.type() == QEvent.Type.Paint:
                order.append((obj, QRegion(ev.region())))
            return False

    spy = Paints()
    pb.seek_time(1.0)
    QApplication.processEvents()
    pb.play()
    pb._timer.stop()          # noqa: SLF001  (one display tick at a time)
    before = view.thread_renders
    QApplication.instance().installEventFilter(spy)
    try:
        for _ in range(5):
            order.clear()
            pb.advance(1 / 60)
            QApplication.processEvents()
            objs = [o for o, _ in order]
            assert view in objs and d.devices in objs, objs
            assert objs.index(view) > objs.index(d.devices), [type(o).__name__ for o in objs]
            for o, region in order:   # the widgets behind the view paint nothing there
                if o is not view and o.isAncestorOf(view):
                    assert region.intersected(QRect(view.mapTo(o, QPoint(0, 0)), view.size())).isEmpty(), o
    finally:
        QApplication.instance().removeEventFilter(spy)
    assert view.thread_renders >= before + 5
    pb.pause()
    assert_panes_in_sync(window)
