"""The plots pane for reports and inspection (issue 32): y axes with 3 labelled ticks and units on every plot at
1280x720, 1366x768 and 1920x1080, legends never under data, several channels per plot (chooser, dropped channels),
strips resized by their borders, XY plots, hover and measuring cursors, the measured overlay's colours, values and
difference scale, CSV times, figure_spec. Geometry and ticks are read from the widgets and pyqtgraph items."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QMouseEvent, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from solver.measured.compare import Comparison  # noqa: E402
from solver.runfile import RunFile  # noqa: E402
from tests.gui_util import main_window  # noqa: E402
from viewer import style  # noqa: E402

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "sample_runs" / "expert_existing.h5"
SEVEN = ["Fx", "Fy", "Fz", "Mx", "My", "Mz", "probe_stroke"]
SIZES = [(1280, 720), (1366, 768), (1920, 1080)]


def labelled_ticks(axis) -> list[str]:
    """The tick labels pyqtgraph draws on `axis` as it is now (labels sticking out of the axis are dropped)."""
    img = QImage(8, 8, QImage.Format_ARGB32)
    p = QPainter(img)
    try:
        p.setFont(axis.style["tickFont"] or axis.font())
        specs = axis.generateDrawSpecs(p)
    finally:
        p.end()
    return [] if specs is None else [text for _, _, text in specs[2]]


def time_plots(pane) -> list:
    """Every plot on the time axis: the channels' and the difference plots (as the old main kept them too)."""
    return pane.plots + [p for p in (pane.diff_plot, *(p for p, _ in pane.measured_diff_plots.values())) if p]


def plot_units(pane) -> list[str]:
    """The unit of each of time_plots: its (first) channel's."""
    units = pane.run.channels
    first = [g[0] for g in pane.groups] if hasattr(pane, "groups") else list(pane.names)
    diff = [pane.diff_name] if pane.diff_plot is not None else []
    return [units[n].unit for n in first + diff + list(pane.measured_diff_plots)]


def axis_problems(pane, check_units: bool = True) -> list[str]:
    """Plots whose y axis shows fewer than 3 labelled ticks, or a label without the plot's unit."""
    out = []
    units = plot_units(pane)
    for k, plot in enumerate(time_plots(pane)):
        ticks = labelled_ticks(plot.getAxis("left"))
        unit = units[k] if check_units else ""
        if len(ticks) < 3 or (unit and not all(t.endswith(f" {unit}") for t in ticks)):
            out.append(f"plot {k} ({pane.titles[k].text[:40]}): ticks {ticks}")
    return out


def title_problems(pane) -> list[str]:
    """Plots whose title (legend) box holds a drawn data point of any of their curves."""
    out = []
    for k, plot in enumerate(time_plots(pane)):
        vb = plot.getViewBox()
        box = pane.titles[k].item.sceneBoundingRect()
        (x0, x1), _ = vb.viewRange()
        for item in plot.listDataItems():
            x, y = item.xData, item.yData
            if x is None or not len(x):
                continue
            sel = (x >= x0) & (x <= x1) & np.isfinite(y)
            for xi, yi in zip(x[sel][::max(1, sel.sum() // 4000)], y[sel][::max(1, sel.sum() // 4000)]):
                pt = vb.mapViewToScene(QPointF(float(xi), float(yi)))
                if box.contains(pt):
                    out.append(f"plot {k}: data ({xi:.3f}, {yi:.4g}) under its title {box}")
                    break
    return out


def noisy_comparison(run: RunFile, names: list[str], sigma: dict[str, float], seed: int = 3) -> Comparison:
    """A measured record = the run's channels + white noise of `sigma` per channel, on the run's frames."""
    rng = np.random.default_rng(seed)
    t = np.asarray(run.time, float)
    runs = {n: run.channel(n) for n in names}
    meas = {n: runs[n] + rng.normal(0.0, sigma[n], len(t)) for n in names}
    return Comparison(0.0, t, runs, meas, {n: run.channels[n].unit for n in names}, auto=False, record_time=t,
                      record=dict(meas))


@pytest.fixture(scope="module")
def expert():
    r = RunFile(EXPERT)
    yield r
    r.close()


@pytest.fixture
def pane(qtbot, expert):
    from viewer.plots.pane import PlotsPane
    p = PlotsPane()
    qtbot.addWidget(p)
    p.resize(1200, 520)
    p.show()
    qtbot.waitExposed(p)
    p.set_run(expert)
    return p


# ---- y axes and titles at the three screen sizes -------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_plot_has_three_labelled_ticks_with_units_and_its_title_over_no_data(qtbot, tmp_path, size,
                                                                                    artifacts):
    """Fails on the old main: the probe-cone plots showed one tick ("0") and no unit; in whole-run mode (W) the
    titles sat on the data."""
    w = main_window(qtbot, tmp_path / "settings.ini", EXPERT, size=size, activate=False)
    pane, run = w.diagram.plots, w.run
    w.playback.seek_time(8.0)
    problems = {}
    for layout in ("default", "seven", "seven_whole_run", "measured_difference"):
        if layout == "seven":
            pane.set_plotted(SEVEN)
        elif layout == "seven_whole_run":
            w.diagram.act_scrolling.setChecked(False)                    # W
        elif layout == "measured_difference":
            names = ["Fx", "probe_stroke"]
            pane.set_plotted(names)
            pane.set_measured(noisy_comparison(run, names, {"Fx": 15.0, "probe_stroke": 2e-4}), diff=True)
        qtbot.wait(150)
        w.grab_image().save(str(artifacts / f"plots_{layout}_{size[0]}x{size[1]}.png"))
        problems[layout] = axis_problems(pane) + title_problems(pane)
    assert problems == dict.fromkeys(problems, [])
    assert w.size().toTuple() == size


def test_ticks_stay_readable_on_the_smallest_strip_of_every_mechanism_channel(pane, qtbot, expert):
    """Every channel of the run alone in a strip at MIN_PLOT_H: 3 labelled ticks (fails on the old main: 1)."""
    from viewer.plots.pane import MIN_PLOT_H
    names = list(expert.channels)[:40]
    pane.set_plotted(names)
    qtbot.wait(100)
    assert min(p.getViewBox().height() for p in pane.plots) <= MIN_PLOT_H
    bad = axis_problems(pane)
    flat = [n for n in names if np.nanmax(expert.channel(n)) == np.nanmin(expert.channel(n))]
    assert bad == [] or all(any(n in b for n in flat) for b in bad), bad


# ---- several channels per plot, legend, chooser, dropped channels ------------------------------------------
def test_several_channels_in_one_plot_with_a_legend(pane, qtbot, expert):
    pane.set_groups([["Fx", "Fy", "Fz"], ["probe_stroke"]])
    qtbot.wait(50)
    assert len(pane.plots) == 2 and pane.names == ["Fx", "Fy", "Fz", "probe_stroke"]
    assert [len(p.listDataItems()) for p in pane.plots] == [3, 1]
    legend = pane.legend_texts(0)
    assert all(f"{n} [N]" in legend for n in ("Fx", "Fy", "Fz"))
    pens = [c.opts["pen"].color().name() for c in pane.curves]
    assert len(set(pens)) == 4 and pens == [pane.color_of(n) for n in pane.names]
    pane.show_frame(expert.frame_at(5.0))
    for n, c in zip(pane.names, pens):                       # the T Current box names each in its curve's colour
        assert f"color:{c}'>{n}" in pane.readout.text()
    np.testing.assert_array_equal(pane.curves[1].yData, pane.blocks.window("Fy", *pane.loaded_span()))


def test_a_channel_dropped_onto_a_plot_joins_it_or_is_refused_naming_the_units(pane, qtbot, expert):
    from viewer.variable_chooser import CHANNEL_MIME, ChannelTree, VariableChooser
    pane.set_plotted(["Fx", "probe_stroke"])
    qtbot.wait(50)

    def drop(name: str, plot: int | None):
        vp = pane.glw.viewport()
        if plot is None:
            pos = QPointF(vp.width() / 2, vp.height() - 3)
        else:
            pos = QPointF(pane.glw.mapFromScene(pane.plots[plot].getViewBox().sceneBoundingRect().center()))
        dlg = VariableChooser(expert, pane.names, None, pane.groups)
        tree: ChannelTree = dlg.tree
        md = tree.mimeData([dlg.items[name]])                 # what a drag from the chooser carries
        assert bytes(md.data(CHANNEL_MIME)).decode() == name
        enter = QDragEnterEvent(pos.toPoint(), Qt.CopyAction, md, Qt.LeftButton, Qt.NoModifier)
        QApplication.sendEvent(vp, enter)
        assert enter.isAccepted()                              # the plots take a dragged channel
        # (Qt delivers a Drop only to the target of a running QDrag, whose exec() blocks: the drop is handed to the
        # pane's event filter, the viewport's first, as Qt would)
        ev = QDropEvent(pos, Qt.CopyAction, md, Qt.LeftButton, Qt.NoModifier)
        pane.eventFilter(vp, ev)
        dlg.deleteLater()

    drop("Fy", 0)
    assert pane.groups == [["Fx", "Fy"], ["probe_stroke"]]
    with qtbot.waitSignal(pane.refused, timeout=1000) as sig:
        drop("Mx", 1)                                          # N·m onto a plot in m
    assert sig.args[0] == "Mx [N*m] cannot share a plot with probe_stroke [m]: one unit per plot"
    assert pane.groups == [["Fx", "Fy"], ["probe_stroke"]]
    drop("Mx", None)                                           # under the plots: a plot of its own
    assert pane.groups == [["Fx", "Fy"], ["probe_stroke"], ["Mx"]]


def test_the_chooser_puts_channels_with_the_same_plot_number_in_one_plot(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "settings.ini", EXPERT, activate=False)
    w.diagram.plots.set_plotted(["Fx", "Fy", "probe_stroke"])
    dlg = w.choose_variables()
    assert [dlg.items[n].text(3) for n in ("Fx", "Fy", "probe_stroke")] == ["1", "2", "3"]
    dlg.set_plot("Fy", 1)
    dlg.items["Fz"].setCheckState(0, Qt.Checked)
    dlg.set_plot("Fz", 1)
    dlg.accept()
    assert w.diagram.plots.groups == [["Fx", "Fy", "Fz"], ["probe_stroke"]]


# ---- resizable strips ---------------------------------------------------------------------------------
def test_dragging_the_border_between_two_plots_resizes_them(pane, qtbot):
    pane.set_plotted(["Fx", "Fy", "probe_stroke"])
    qtbot.wait(100)
    before = pane.strip_heights()
    vp = pane.glw.viewport()
    y = (pane.glw.mapFromScene(pane.plots[0].sceneBoundingRect().bottomLeft()).y()
         + pane.glw.mapFromScene(pane.plots[1].sceneBoundingRect().topLeft()).y()) / 2
    x = vp.width() / 2

    def mouse(kind, yy, buttons):
        ev = QMouseEvent(kind, QPointF(x, yy), QPointF(vp.mapToGlobal(QPoint(int(x), int(yy)))),
                         Qt.LeftButton if kind != QMouseEvent.Type.MouseMove else Qt.NoButton, buttons, Qt.NoModifier)
        QApplication.sendEvent(vp, ev)
    mouse(QMouseEvent.Type.MouseMove, y, Qt.NoButton)
    assert vp.cursor().shape() == Qt.SplitVCursor
    mouse(QMouseEvent.Type.MouseButtonPress, y, Qt.LeftButton)
    mouse(QMouseEvent.Type.MouseMove, y + 40, Qt.LeftButton)
    mouse(QMouseEvent.Type.MouseButtonRelease, y + 40, Qt.NoButton)
    qtbot.wait(50)
    after = pane.strip_heights()
    assert after[0] == pytest.approx(before[0] + 40, abs=3) and after[1] == pytest.approx(before[1] - 40, abs=3)
    assert after[2] == pytest.approx(before[2], abs=2)
    assert pane.glw.ci.layout.rowCount() >= 3 and axis_problems(pane, check_units=False) == []


# ---- XY plot ------------------------------------------------------------------------------------------
def test_xy_plot_draws_force_against_stroke_over_the_shown_interval_with_the_current_point(pane, qtbot, expert):
    pane.set_scrolling(False)                                  # the whole run (0..398 s)
    pane.zoom_time(20.0 / (pane.x_range()[1] - pane.x_range()[0]), 0.0)   # 0..20 s: docking, capture, stroke
    assert pane.add_xy("probe_stroke", "head_axial_force")
    pane.show_frame(expert.frame_at(8.0))
    qtbot.wait(50)
    xy = pane.xy_plots[0]
    a, b = np.searchsorted(expert.time, pane.x_range()[0]), np.searchsorted(expert.time, pane.x_range()[1], "right")
    assert b - a == 201                                        # 0..20 s at 0.1 s
    x, y = xy.values()
    np.testing.assert_array_equal(x, expert.channel("probe_stroke")[a:b])
    np.testing.assert_array_equal(y, expert.channel("head_axial_force")[a:b])
    px, py = xy.point.getData()
    f = expert.frame_at(8.0)
    assert (px[0], py[0]) == (expert.channel("probe_stroke")[f], expert.channel("head_axial_force")[f])
    area = 0.5 * abs(np.sum(x[:-1] * y[1:] - x[1:] * y[:-1]))   # a loop (energy dissipated), not a line
    assert area > 0.05 * np.ptp(x) * np.ptp(y)
    assert len(labelled_ticks(xy.plot.getAxis("left"))) >= 3 and len(labelled_ticks(xy.plot.getAxis("bottom"))) >= 3
    assert all(t.endswith(" m") for t in labelled_ticks(xy.plot.getAxis("bottom")))
    assert pane.figure_spec()["xy"] == [("probe_stroke", "head_axial_force")]


# ---- cursors ------------------------------------------------------------------------------------------
def test_hover_shows_a_line_in_every_plot_and_the_values_beside_the_mouse(pane, qtbot, expert):
    pane.set_groups([["Fx", "Fy"], ["probe_stroke"]])
    pane.set_scrolling(False)
    qtbot.wait(50)
    vb = pane.plots[0].getViewBox()
    centre = vb.sceneBoundingRect().center()
    t = float(vb.mapSceneToView(centre).x())
    vp, at = pane.glw.viewport(), QPointF(pane.glw.mapFromScene(centre))
    # the move the mouse makes, sent to the viewport (the suite's workers share one X display: a window of another
    # test may lie over this one, and a warped pointer would move over that window instead)
    QApplication.sendEvent(vp, QMouseEvent(QMouseEvent.Type.MouseMove, at, vp.mapToGlobal(at), Qt.NoButton,
                                           Qt.NoButton, Qt.NoModifier))
    qtbot.waitUntil(lambda: pane.cursors_ab.hover_t is not None, timeout=2000)
    assert pane.cursors_ab.hover_t == pytest.approx(t, abs=2 * (vb.viewRange()[0][1] - vb.viewRange()[0][0]) / vb.width())
    assert all(h.isVisible() and h.value() == pane.cursors_ab.hover_t for h in pane.cursors_ab.hover_lines)
    assert len(pane.cursors_ab.hover_lines) == 2
    text = pane.cursors_ab.hover_text.textItem.toPlainText()
    th = pane.cursors_ab.hover_t
    from viewer.numbers import value_text
    assert f"Fx {value_text(pane.value_at_time('Fx', th), 'N')}" in text
    assert f"Fy {value_text(pane.value_at_time('Fy', th), 'N')}" in text


def test_measuring_cursors_in_every_plot_give_dt_dy_and_slope(pane, qtbot, expert):
    pane.set_groups([["Fx", "Fy"], ["probe_stroke"]])
    pane.set_scrolling(False)
    pane.set_measuring(True)
    assert all(a.isVisible() and b.isVisible() for a, b in pane.cursors_ab.lines) and len(pane.cursors_ab.lines) == 2
    pane.cursors_ab.set_times(4.0, 9.0)
    lines = pane.measure_readout()
    assert lines[:2] == ["A 4.0000 s  B 9.0000 s", "Δt 5.0000 s"]
    i4, i9 = expert.frame_at(4.0), expert.frame_at(9.0)
    s = expert.channel("probe_stroke")
    dy = s[i9] - s[i4]
    from viewer.numbers import value_text
    assert f"probe_stroke: ΔY {value_text(dy, 'm')}, slope {value_text(dy / 5.0, 'm/s')}" in lines
    assert pane.facts.measure.isVisibleTo(pane.facts) and "Δt 5.0000 s" in pane.facts.measure.text()
    pane.cursors_ab.lines[1][0].setValue(6.0)                  # A dragged in the second plot: moves in the first
    assert pane.cursors_ab.lines[0][0].value() == 6.0 and pane.measure_readout()[1] == "Δt 3.0000 s"
    pane.set_measuring(False)
    assert not pane.facts.measure.isVisibleTo(pane.facts) and not pane.cursors_ab.lines[0][0].isVisible()


# ---- measured overlay -----------------------------------------------------------------------------------
def test_measured_overlay_colours_values_and_difference_scale(pane, qtbot, expert):
    """Fails on the old main: the difference plots used the measured pink and autoscaled the noise; the T Current
    box showed no measured or difference value."""
    from viewer.numbers import value_text
    names = ["Fx", "probe_stroke"]
    sigma = {"Fx": 15.0, "probe_stroke": 2e-4}
    m = noisy_comparison(expert, names, sigma)
    pane.set_plotted(names)
    pane.set_measured(m, diff=True)
    f = expert.frame_at(6.0)
    pane.show_frame(f)
    qtbot.wait(100)
    for name in names:
        plot, curve = pane.measured_diff_plots[name]
        color = curve.opts["pen"].color().name()
        assert color != style.MEASURED and color not in style.TRACE_COLORS and color == style.DIFFERENCE
        row = next(r for r in pane.diff_rows if r.plot is plot)
        assert row.noise == pytest.approx(sigma[name], rel=0.15)          # the noise level marked: ± it
        assert f"noise ±{value_text(row.noise, m.units[name])}" in row.title.text
        y0, y1 = plot.getViewBox().viewRange()[1]
        assert min(-y0, y1) >= max(4 * row.noise, 0.02 * np.nanmax(np.abs(expert.channel(name))))
        assert len(labelled_ticks(plot.getAxis("left"))) >= 3
    text = pane.readout.text()
    for name in names:
        unit = expert.channels[name].unit
        v, mv = expert.channel(name)[f], m.measured[name][f]
        assert value_text(mv, unit).replace(" ", "&nbsp;") in text
        assert value_text(mv - v, unit, signed=True).replace(" ", "&nbsp;") in text
    assert "measured" in pane.legend_texts(0)


# ---- CSV, figure spec ------------------------------------------------------------------------------------
def test_csv_times_have_no_float_noise(qtbot, small_run, tmp_path):
    """Fails on the old main: 2.5300000000000002."""
    from viewer.plots.export import export_csv
    from viewer.plots.pane import PlotsPane
    run = RunFile(small_run)
    assert repr(float(run.time[253])) == "2.5300000000000002"
    p = PlotsPane()
    qtbot.addWidget(p)
    p.resize(900, 400)
    p.show()
    p.set_run(run, names=["Fx"])
    p.set_scrolling(False)
    with open(export_csv(p, tmp_path / "shown.csv")) as fh:
        rows = list(csv.reader(fh))
    times = [r[0] for r in rows[1:]]
    assert times[253] == "2.53" and times[:3] == ["0.0", "0.01", "0.02"]
    assert all(len(t.split(".")[1]) <= 2 for t in times)
    np.testing.assert_array_equal([float(t) for t in times], np.round(run.time, 6))
    run.close()


def test_figure_spec_describes_what_is_shown(pane, qtbot):
    pane.set_groups([["Fx", "Fy"], ["probe_stroke"]])
    pane.add_xy("probe_stroke", "Fx")
    pane.set_scrolling(False)
    spec = pane.figure_spec()
    assert spec == {"plots": [["Fx", "Fy"], ["probe_stroke"]], "xy": [("probe_stroke", "Fx")],
                    "t": pane.x_range()}
    assert isinstance(spec["t"][0], float) and math.isclose(spec["t"][1], float(pane.run.time[-1]))


def test_the_a_minus_b_plot_has_its_scale_its_noise_band_and_3_labelled_ticks(pane, qtbot, expert):
    """Run B (the modified dampers) against A: the A − B plot in the difference colour, ≥ 3 labelled ticks with
    units, its legend over no data (fails on the old main: the capture white, one tick)."""
    b = RunFile(ROOT / "sample_runs" / "expert_modified_dampers.h5")
    try:
        pane.set_plotted(["Fx", "probe_stroke"])
        pane.set_compare(b, 0.0, "probe_stroke")
        pane.set_scrolling(False)
        qtbot.wait(100)
        assert pane.diff_plot is not None
        assert pane.diff_curve.opts["pen"].color().name() not in (style.CAPTURE, style.MEASURED)
        assert axis_problems(pane) == [] and title_problems(pane) == []
        assert "B: expert_modified_dampers" in pane.legend_texts(0)
    finally:
        pane.set_compare(None)
        b.close()


# ---- a floor on the y span: solver noise reads as ~0 ---------------------------------------------------------
def test_a_channel_of_solver_noise_reads_as_about_zero_not_as_a_signal(qtbot):
    """The peripheral central impact's Fy and Fz (~1e-13 N) span at least 2 % of the run's largest force
    (resources/plot_scale.toml), ticks in whole newtons; Fx keeps its fitted range. Fails on the old main: ticks
    at 5e-13 N, the noise filling the plot."""
    from viewer.plots.pane import PlotsPane
    run = RunFile(ROOT / "sample_runs" / "peripheral" / "central_impact_10t.h5")
    p = PlotsPane()
    qtbot.addWidget(p)
    p.resize(1000, 600)
    p.show()
    qtbot.waitExposed(p)
    p.set_run(run)
    p.set_plotted(["Fx", "Fy", "Fz"])
    qtbot.wait(100)
    fx_max = run.stored_abs_max("Fx")
    assert fx_max > 1000.0
    for k, name in enumerate(["Fy", "Fz"]):
        lo, hi = p.plots[k + 1].getViewBox().viewRange()[1]
        assert hi - lo >= 0.02 * fx_max, (name, lo, hi)
        assert lo < 0.0 < hi
        ticks = labelled_ticks(p.plots[k + 1].getAxis("left"))
        assert len(ticks) >= 3 and "0 N" in ticks and not any("e-" in t for t in ticks), (name, ticks)
    lo, hi = p.plots[0].getViewBox().viewRange()[1]
    assert hi - lo < 3.0 * fx_max                       # a signal's plot is fitted to it, not widened
    p.set_run(None)
    run.close()


def test_a_device_with_its_own_range_is_floored_by_it_not_by_its_units_largest(pane, qtbot, expert):
    """spring_mechanism_1 (range 26 mm, a few mm of motion) is floored at 2 % of its own range, not at 2 % of the
    largest metre channel (~1 m): its plot follows its motion with 3 labelled ticks. Fails on the old main: a
    19.7 mm span at least (the berthing type's 1 mm lateral error read flat, two ticks)."""
    from viewer.plots.yscale import scale_rules, unit_spans
    pane.set_plotted(["spring_mechanism_1"])
    pane.show_frame(expert.frame_at(12.0))
    qtbot.wait(50)
    lo, hi = pane.plots[0].getViewBox().viewRange()[1]
    assert hi - lo < unit_spans(expert, expert.stored_abs_max)["m"], (lo, hi)
    assert len(labelled_ticks(pane.plots[0].getAxis("left"))) >= 3
    from viewer.plots.yscale import channel_span
    assert channel_span(expert, "spring_mechanism_1", unit_spans(expert, expert.stored_abs_max)) == \
        pytest.approx(scale_rules()[0] * expert.channels["spring_mechanism_1"].stroke)


def test_no_time_line_crosses_a_plots_legend(pane, qtbot, expert):
    """Capture line, hover line, measuring cursors and the T Current cursor placed at the legend's middle stop
    under the legend's strip. Fails on the old main: the white dashed capture line crossed "Fx [N]"."""
    import pyqtgraph as pg
    pane.set_groups([["Fx", "Fy"], ["probe_stroke"]])
    pane.cursors_ab.set_on(True, pane.x_range())
    qtbot.wait(50)
    crossed = []
    for i, plot in enumerate(pane.plots):
        vb, box = plot.getViewBox(), pane.titles[i].item.sceneBoundingRect()
        t = vb.mapSceneToView(box.center()).x()
        lines = [ln for item in plot.items for ln in (getattr(item, "lines", None) or (item,))
                 if isinstance(ln, pg.InfiniteLine) and ln.angle == 90]
        assert pane.capture_lines[i] in lines and len(lines) >= 4
        for ln in lines:
            ln.setVisible(True)
            ln.setValue(t)
        pane.cursors[i].setPos(t)
        qtbot.wait(30)
        pane._fit_y()
        for ln in lines:
            r = ln.mapRectToScene(ln.boundingRect())
            if r.height() > 0 and r.intersects(box):
                crossed.append(f"plot {i}: {type(ln).__name__} {r.getRect()} crosses its legend {box.getRect()}")
        vt = pane.glw.viewportTransform()
        vbox = vt.mapRect(box)
        for c, x, top, bottom, left, right in pane.glw._cursor_lines([pane.cursors[i]]):
            if vbox.left() <= x <= vbox.right() and top < vbox.bottom() - 0.5:
                crossed.append(f"plot {i}: T Current at x {x:.0f} from y {top:.0f}, legend to {vbox.bottom():.0f}")
    assert crossed == []
