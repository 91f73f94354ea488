"""Comparisons drawn over the plots: a second run's channels dashed and the A − B plot; a measured record's channels
dashed and the measured − run plots."""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import Qt

from solver.runfile import RunFile
from viewer import style
from viewer.compare import difference
from viewer.plots.axes import ValueAxis, label_time, style_plot
from viewer.plots.view import plot_label


def ghost_curves(plots: list, names: list[str], run_b: RunFile, offset: float) -> dict[int, pg.PlotDataItem]:
    """Run B's channel dashed in each plot whose channel B has (B's time shifted by `offset` s): plot index ->
    its curve."""
    tb = run_b.time + offset
    out = {}
    for i, (name, plot) in enumerate(zip(names, plots)):
        if name not in run_b.channels:
            continue
        pen = pg.mkPen(style.TRACE_COLORS[i % len(style.TRACE_COLORS)], width=1.5, style=Qt.DashLine)
        c = plot.plot(tb, run_b.channel(name), pen=pen)
        c.setDownsampling(auto=True, method="peak")
        c.setClipToView(True)
        c.setOpacity(0.85)
        out[i] = c
    return out


def difference_plot(glw: pg.GraphicsLayoutWidget, row: int, run: RunFile, run_b: RunFile, name: str, offset: float,
                    blocks, labelled: bool) -> tuple[pg.PlotItem, pg.PlotDataItem, pg.LabelItem]:
    """The plot of A − B of channel `name` on A's frames, at `row` of `glw`: (plot, its curve, its title)."""
    info = run.channels[name]
    d = difference(run, run_b, name, offset, a_values=blocks.full(name))
    return difference_row(glw, row, f"Δ {name} (A − B) [{info.unit}]", run.time, d, style.CAPTURE, labelled)


def difference_row(glw: pg.GraphicsLayoutWidget, row: int, text: str, t, d, color: str,
                   labelled: bool) -> tuple[pg.PlotItem, pg.PlotDataItem, pg.LabelItem]:
    """A difference plot (curve `d` over `t`, a zero line) titled `text` at `row` of `glw`: (plot, curve, title)."""
    plot = glw.addPlot(row=row, col=0, enableMenu=False, axisItems={"left": ValueAxis("left")})   # labels apart
    style_plot(plot)
    title = plot_label(text, color=color, size=style.PLOT_TITLE)
    title.setParentItem(plot.getViewBox())
    title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 0))
    curve = plot.plot(t, d, pen=pg.mkPen(color, width=1), connect="finite")
    curve.setDownsampling(auto=True, method="peak")
    curve.setClipToView(True)
    plot.addItem(pg.InfiniteLine(0.0, angle=0, movable=False, pen=pg.mkPen(style.FRAME, width=1)), ignoreBounds=True)
    vb = plot.getViewBox()
    vb.setMouseEnabled(x=False, y=False)
    vb.enableAutoRange(axis="y")
    vb.setAutoVisible(y=True)
    for ax in ("bottom", "top", "right"):
        plot.getAxis(ax).enableAutoSIPrefix(False)
    label_time(plot, labelled)
    return plot, curve, title


def measured_curves(plots: list, names: list[str], comparison) -> dict[int, pg.PlotDataItem]:
    """A measured record's channel dashed in its run channel's plot, at the record's own rate in run time: plot
    index -> its curve (`comparison`: a solver.measured.Comparison)."""
    out = {}
    for i, (name, plot) in enumerate(zip(names, plots)):
        if name not in comparison.record:
            continue
        pen = pg.mkPen(style.MEASURED, width=1.2, style=Qt.DashLine)
        c = plot.plot(comparison.record_time, comparison.record[name], pen=pen, connect="finite")
        c.setDownsampling(auto=True, method="peak")
        c.setClipToView(True)
        out[i] = c
    return out
