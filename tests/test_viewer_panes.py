"""The Qt Playback wrapper, the lazy channel reader and the devices and plots panes on their own."""
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")

from solver.runfile import RunFile  # noqa: E402
from viewer.ahead_image import AheadImages  # noqa: E402
from viewer.channel_blocks import ChannelBlocks  # noqa: E402
from viewer.devices_pane import DevicesPane, fill_fraction, format_value  # noqa: E402
from viewer.playback import Playback  # noqa: E402
from viewer.plots.ahead_plan import scroll_window  # noqa: E402
from viewer.plots.pane import PlotsPane  # noqa: E402


@pytest.fixture
def run(small_run):
    r = RunFile(small_run)
    yield r
    r.close()


def shown_plots(qtbot, run, names=None, scroll_1s=False) -> PlotsPane:
    """A 1200x400 plots pane on screen with `run` (its default plots, or `names`); scroll_1s: a 1 s scrolling window
    moving in 0.05 s GraphSteps."""
    p = PlotsPane()
    qtbot.addWidget(p)
    p.resize(1200, 400)
    p.show()
    p.set_run(run, names=names)
    if scroll_1s:
        p.set_window(1.0)
        p.set_graph_step(0.05)
    return p


def test_playback_signals_once_per_change(qtbot, run):
    pb = Playback()
    frames, playing, speeds = [], [], []
    pb.frameChanged.connect(frames.append)
    pb.playingChanged.connect(playing.append)
    pb.speedChanged.connect(speeds.append)
    pb.set_run(run)
    assert frames == [0]
    pb.seek_frame(0)                      # no change, no signal
    pb.step(3)
    pb.step_graph(1)
    assert frames == [0, 3, 3 + round(pb.graph_step / run.meta.output_step)]
    pb.faster()
    pb.faster()
    assert speeds == [2.0, 4.0]
    with qtbot.waitSignal(pb.frameChanged, timeout=2000):
        pb.play()                         # the QTimer moves the playhead by itself
    assert playing == [True] and pb.frame > frames[-2]
    pb.pause()
    assert playing == [True, False]


def test_playback_stops_at_end_and_announces_it(qtbot, run):
    pb = Playback()
    pb.set_run(run)
    pb.set_speed(16.0)
    pb.seek_time(run.time[-1] - 0.2)
    with qtbot.waitSignal(pb.playingChanged, timeout=3000, check_params_cb=lambda on: not on):
        pb.play()
    assert pb.frame == run.n_frames - 1


def test_channel_blocks_read_by_chunk_and_full_scale(run):
    b = ChannelBlocks(run, block=128)
    fx = run.channel("Fx")
    assert b.value("Fx", 5) == fx[5] and b.value("Fx", 127) == fx[127]
    assert b.reads == 1                   # one block serves both frames
    assert b.value("Fx", 128) == fx[128] and b.reads == 2
    assert math.isnan(b.value("no_such_channel", 3))
    # a bar's range is the channel's stroke; a channel without one has no range (NaN), never the run's max |value|
    assert b.full_scale("axial_spring") == run.channels["axial_spring"].stroke
    assert math.isnan(run.channels["Fx"].stroke) and math.isnan(b.full_scale("Fx"))
    reads = b.reads
    assert b.abs_max("Fx") == np.nanmax(np.abs(fx))   # stored by the writer: no data read
    assert b.reads == reads and run.stored_abs_max("Fx") == np.nanmax(np.abs(fx))
    assert set(b._full) == set()          # nothing loaded whole unless asked
    assert np.array_equal(b.full("Fy"), run.channel("Fy"))


def test_fill_fraction_and_format():
    assert fill_fraction(0.04, 0.08) == 0.5
    assert fill_fraction(-0.2, 0.08) == 1.0
    assert fill_fraction(math.nan, 1.0) == 0.0
    assert fill_fraction(1.0, math.nan) == 0.0
    assert format_value(0.0412, "m") == "+41.2 mm"
    assert format_value(-1234.0, "rpm") == "-1234 rpm"
    assert format_value(math.nan, "m") == "—"


def test_devices_pane_reads_only_device_channels(qtbot, run):
    w = DevicesPane()
    qtbot.addWidget(w)
    w.resize(1400, 240)
    w.show()
    b = ChannelBlocks(run)
    w.set_run(run, b)
    f = run.frame_at(3.0)
    w.show_frame(f)
    assert set(w.values) == set(w.shown_channels())
    assert len(w.values) == 7 + 3 + 4 < len(run.channels)   # probe schematic, axial, lateral
    assert w.bars["axial_damper"] == ["axial_spring", "friction_brake", "axial_magnetic_brake"]  # spring, friction, magnetic
    for n, v in w.values.items():
        assert v == pytest.approx(run.channel_at(n, f))
    img = w.grab().toImage()
    assert img.width() == 1400
    # the lateral bars sit where ChannelInfo.place puts them, seen from the head: 0 deg left (+y), 180 right
    r0, r180 = w.bar_rects["spring_mechanism_2"], w.bar_rects["magnetic_brake_2"]
    r90, r270 = w.bar_rects["spring_mechanism_1"], w.bar_rects["magnetic_brake_1"]
    assert r0.center().x() < r90.center().x() < r180.center().x()
    assert r90.center().y() < r0.center().y() < r270.center().y()




def test_devices_numbers_drawn_without_shaping_look_as_shaped(qtbot, run):
    """The per-frame numbers skip text shaping (faster); the pane's pixels are those of shaped text."""
    from PySide6.QtGui import QFont
    w = DevicesPane()
    qtbot.addWidget(w)
    w.resize(1100, 200)
    w.show()
    w.set_run(run, ChannelBlocks(run))
    unshaped = w._value_font
    assert unshaped.styleStrategy() & QFont.PreferNoShaping
    for t in np.linspace(0.5, run.time[-1] - 0.5, 6):
        w.show_frame(run.frame_at(float(t)))
        w._value_font = unshaped
        fast = w.grab().toImage()
        w._value_font = QFont(w._font)
        shaped = w.grab().toImage()
        assert fast == shaped, f"t = {t:.2f} s"
    w._value_font = unshaped


def test_plot_titles_paint_from_their_cache_with_the_pixels_of_a_direct_paint(qtbot, run):
    """The plots' titles are painted from a pixmap cache (a scroll does not lay their text out again)."""
    from PySide6.QtWidgets import QGraphicsItem
    p = shown_plots(qtbot, run)
    p.show_frame(run.frame_at(3.0))
    assert p.titles and all(t.item.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache for t in p.titles)
    cached = p.glw.grab().toImage()
    for t in p.titles:
        t.item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    direct = p.glw.grab().toImage()
    assert cached == direct


def test_plots_pane_scroll_window_and_readout(qtbot, run):
    assert scroll_window(5.0, 10.0, 0.1, 0.0, 6.0) == (0.0, 10.0)        # shorter run: fixed window
    lo, hi = scroll_window(55.04, 10.0, 0.1, 0.0, 300.0)
    assert (lo, hi) == (pytest.approx(47.0), pytest.approx(57.0))
    assert scroll_window(299.0, 10.0, 0.1, 0.0, 300.0) == (290.0, 300.0)
    p = shown_plots(qtbot, run, ["Fx", "nonexistent", "probe_stroke"])
    assert p.names == ["Fx", "probe_stroke"]
    clicked = []
    p.seekRequested.connect(clicked.append)
    f = run.frame_at(2.5)
    p.show_frame(f)
    assert p.cursors[0].value() == run.time[f] and p.cursors[1].value() == run.time[f]
    assert "2.5000" in p.t_label.text()
    assert "Fx" in p.readout.text() and "probe_stroke" in p.readout.text()
    assert p.values()["Fx"] == pytest.approx(run.channel_at("Fx", f))
    assert len(p.capture_lines) == 2 and p.capture_lines[0].value() == pytest.approx(run.t_capture)
    p.set_scrolling(False)
    assert p.x_range() == (run.time[0], run.time[-1])


def test_time_axis_reused_drawings_match_a_fresh_axis(qtbot):
    """Scrolling in GraphSteps: the time axis reuses drawings of earlier ranges, and every frame it shows is
    pixel for pixel what pyqtgraph's own axis draws for that range (ticks, grid, labels)."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsItem

    from viewer.time_axis import TimeAxis

    def layout(axis):
        glw = pg.GraphicsLayoutWidget()
        glw.resize(700, 160)
        plot = glw.addPlot(axisItems={"bottom": axis})
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.getAxis("bottom").setCacheMode(QGraphicsItem.DeviceCoordinateCache)
        plot.getAxis("bottom").setStyle(maxTickLevel=1, maxTextLevel=1, showValues=axis.orientation == "bottom")
        plot.setYRange(-1, 1, padding=0)
        qtbot.addWidget(glw)
        glw.show()
        return glw, plot

    for labelled in (False, True):
        mine, theirs = TimeAxis("bottom"), pg.AxisItem("bottom")
        (ga, pa), (gb, pb_) = layout(mine), layout(theirs)
        for ax in (mine, theirs):
            ax.setStyle(showValues=labelled)
        reused = 0
        for k in list(range(0, 45)) + list(range(20, 0, -3)):   # forward over 4.5 s, then back (reuses)
            before = len(mine._drawn)
            for p in (pa, pb_):
                p.setXRange(0.1 * k, 0.1 * k + 10.0, padding=0)
            qtbot.wait(1)
            img_a, img_b = ga.grab().toImage(), gb.grab().toImage()
            reused += len(mine._drawn) == before and mine.picture is not None
            assert img_a == img_b, (labelled, k)
        assert reused > 0 if not labelled else True


def test_axis_drawn_ahead_matches_a_fresh_axis(qtbot):
    """An axis drawn ahead for a range (the next scroll step, the y range it brings) is shown from that drawing
    when the view gets there, pixel for pixel what pyqtgraph's own axis draws: labelled time and value axes."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsItem

    from viewer.time_axis import TimeAxis

    def layout(bottom, left):
        glw = pg.GraphicsLayoutWidget()
        glw.resize(700, 160)
        plot = glw.addPlot(axisItems={"bottom": bottom, "left": left})
        plot.showGrid(x=True, y=True, alpha=0.15)
        for name in ("bottom", "left"):
            ax = plot.getAxis(name)
            ax.setCacheMode(QGraphicsItem.DeviceCoordinateCache)
            ax.setStyle(maxTickLevel=1, maxTextLevel=1)
            ax.enableAutoSIPrefix(False)
        plot.getAxis("left").setWidth(112)
        plot.setRange(xRange=(0.0, 10.0), yRange=(-1.0, 1.0), padding=0)
        qtbot.addWidget(glw)
        glw.show()
        return glw, plot

    mine_b, mine_l = TimeAxis("bottom"), TimeAxis("left")
    (ga, pa), (gb, pb_) = layout(mine_b, mine_l), layout(pg.AxisItem("bottom"), pg.AxisItem("left"))
    qtbot.wait(1)
    shown = 0
    for k in range(1, 12):
        x, y = (0.1 * k, 0.1 * k + 10.0), (-1.0 - 0.37 * k, 1.0 + 0.05 * k * k)
        assert mine_b.prepare(x) and mine_l.prepare(y)          # new ranges: drawn now
        assert not mine_b.prepare(x)                             # ... once
        drawn = len(mine_b._drawn), len(mine_l._drawn)
        for p in (pa, pb_):
            p.setRange(xRange=x, yRange=y, padding=0)
        qtbot.wait(1)
        img_a, img_b = ga.grab().toImage(), gb.grab().toImage()
        shown += (len(mine_b._drawn), len(mine_l._drawn)) == drawn   # shown from the drawings made ahead
        assert img_a == img_b, k
    assert shown == 11


def test_steady_label_relays_out_only_when_its_hints_change(qtbot):
    """A steady label reports its text's size hints; grow-only hints never shrink; ignored hints never change."""
    from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

    from viewer.steady_label import SteadyLabel

    w = QWidget()
    row = QHBoxLayout(w)
    plain, grow = SteadyLabel(QLabel("Fx 1.0 N")), SteadyLabel(QLabel("Fx 1.0 N"), grow_only=True)
    ignored_label = QLabel("a")
    ignored_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
    ignored = SteadyLabel(ignored_label)
    for lab in (plain, grow, ignored):
        row.addWidget(lab, 1)
    qtbot.addWidget(w)
    w.resize(900, 60)
    w.show()
    qtbot.waitExposed(w)
    short = plain.sizeHint().width()
    for lab in (plain, grow, ignored):
        lab.setText("Fx -1234.5 N")
    assert plain.sizeHint().width() > short and grow.sizeHint().width() == plain.sizeHint().width()
    assert ignored.sizeHint() == ignored_label.__class__("a").sizeHint()
    for lab in (plain, grow):
        lab.setText("Fx 2 N")
    assert plain.sizeHint().width() < short and grow.sizeHint().width() > short
    qtbot.wait(20)
    assert plain.text() == "Fx 2 N" and plain.label.width() == plain.width() and grow.label.width() == grow.width()


@pytest.mark.parametrize("size", [(300, 150), (410, 160), (700, 220)])
def test_lateral_devices_never_overlap(qtbot, size):
    """Six lateral devices of a solver run (45°-apart places, two sharing a place) keep apart in a flat pane."""
    from pathlib import Path

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFontMetrics
    path = Path(__file__).resolve().parent.parent / "sample_runs" / "central_impact_20t.h5"
    run = RunFile(path)
    w = DevicesPane()
    qtbot.addWidget(w)
    w.set_run(run, ChannelBlocks(run))
    items = w.around_layout(w.bars["lateral_damper"], QRectF(0, 0, *size), QFontMetrics(w._font))
    assert len(items) == len(w.bars["lateral_damper"]) >= 6
    rects = [r for _, _, label, _, box in items for r in (label, box)]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b), (size, a, b)
    run.close()


def test_scrolled_curves_show_what_pyqtgraph_gives(qtbot, run):
    """Scrolling in GraphSteps (each curve gets its display data and path directly), every curve holds the data
    pyqtgraph's own update gives for the shown x range, and its path draws those points."""
    p = shown_plots(qtbot, run, ["Fx", "probe_stroke"], scroll_1s=True)
    t = np.asarray(run.time)
    shown = set()
    for f in range(0, len(t), max(1, len(t) // 60)):
        p.show_frame(f)
        qtbot.wait(0)
        shown.add(p.x_range())
        for c in p.curves:
            assert c._fast_range_ok()                      # (scrolls took the direct way)
            x, y, path = c.curve.xData, c.curve.yData, c.curve.getPath()
            c.updateItems(styleUpdate=False)               # pyqtgraph's way, from the same display data
            np.testing.assert_array_equal(x, c.curve.xData)
            np.testing.assert_array_equal(y, c.curve.yData)
            assert path.elementCount() == len(x)
            if len(x):
                e = path.elementAt(len(x) - 1)
                assert (e.x, e.y) == (pytest.approx(x[-1]), pytest.approx(y[-1]))
    assert len(shown) > 5



def test_unlabelled_time_axes_share_drawings_that_match_their_own(qtbot, run):
    """The plots' unlabelled time axes, built alike, keep one store of tick drawings: one axis' drawing is used by
    the other for the same key, and it paints there as the other's own drawing does."""
    from PySide6.QtGui import QImage, QPainter
    p = shown_plots(qtbot, run, ["Fx", "Fy", "probe_stroke"], scroll_1s=True)
    a, b = [plot.getAxis("bottom") for plot in p.plots if not plot.getAxis("bottom").style["showValues"]]
    assert a._drawn is b._drawn

    def played(axis, pic) -> QImage:
        r = axis.boundingRect().toAlignedRect()
        img = QImage(r.size(), QImage.Format_ARGB32_Premultiplied)
        img.fill(0)
        q = QPainter(img)
        q.translate(-r.x(), -r.y())
        pic.play(q)
        q.end()
        return img

    t = np.asarray(run.time)
    shared = 0
    for f in range(len(t) // 4, len(t), max(1, len(t) // 60)):
        p.show_frame(f)
        p.glw.viewport().grab()                 # (the axes paint: the first one draws, the other reuses)
        if a._key() == b._key():
            assert a.picture is b.picture and a.picture is a._drawn[a._key()]
            assert played(b, a._draw()) == played(b, b._draw()), f
            shared += 1
    assert shared > 20


def test_overlaid_lines_are_drawn_ahead_into_one_image_per_plot(qtbot, run):
    """Channels overlaid in one plot: their lines of the next scroll step are drawn ahead into one image (old main:
    one image per line, a plot's whole view box each), shown by the scroll pixel for pixel as a fresh drawing."""
    p = shown_plots(qtbot, run, ["Fx", "Fy", "probe_stroke"], scroll_1s=True)
    p.set_groups([["Fx", "Fy"], ["probe_stroke"]])
    qtbot.wait(1)
    lines = p._plot_lines
    assert len(lines) == 1 and lines[0].curves == [c.curve for c in p.curves[:2]]
    t = np.asarray(run.time)
    shown = compared = 0
    for f in range(len(t) // 4, len(t), max(1, len(t) // 300)):
        x = p.x_range()
        p.show_frame(f)
        qtbot.wait(0)
        if p.x_range() == x:
            continue
        pair = [c.curve for c in p.curves[:2]]
        if not lines[0].ahead.holds(pair[0].path):
            continue
        assert not any(c.ahead.holds(c.path) for c in pair)           # no image of its own: the plot's one
        ahead = p.glw.viewport().grab().toImage()
        shown += lines[0]._shown is not None
        kept = lines[0].ahead
        lines[0].ahead = AheadImages()
        fresh = p.glw.viewport().grab().toImage()
        lines[0].ahead = kept
        assert ahead == fresh, f
        compared += 1
    assert compared > 5 and shown == compared


def test_lines_and_axes_drawn_ahead_match_a_fresh_drawing(qtbot, run):
    """While playing, each scroll step's lines and axes are drawn ahead into images (in the frames before it);
    the scroll shows those images, pixel for pixel what pyqtgraph draws for that range and y range."""
    p = shown_plots(qtbot, run, ["Fx", "Fy", "probe_stroke"], scroll_1s=True)
    qtbot.wait(1)
    t = np.asarray(run.time)
    lines = shown_axes = compared = 0
    for f in range(len(t) // 4, len(t), max(1, len(t) // 400)):
        x = p.x_range()
        p.show_frame(f)
        qtbot.wait(0)
        if p.x_range() == x:
            continue
        curves = [c.curve for c in p.curves]
        axes = [plot.getAxis(n) for plot in p.plots for n in ("bottom", "left")]
        used = [c.path is not None and c.ahead.holds(c.path) for c in curves]
        lines += sum(used)
        shown_axes += sum(a.picture is not None and a.ahead.holds(a.picture) for a in axes)
        if any(used):
            ahead = p.glw.viewport().grab().toImage()
            kept = [item.ahead for item in curves + axes]
            for item in curves + axes:
                item.ahead = AheadImages()
            fresh = p.glw.viewport().grab().toImage()
            for item, k in zip(curves + axes, kept):
                item.ahead = k
            assert ahead == fresh, f
            compared += 1
    assert compared > 5 and lines > 10 and shown_axes > 10
