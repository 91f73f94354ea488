"""Comparisons drawn over the plots: a second run's channels dashed and the A − B plot; a measured record's channels
dashed and the measured − run plots. A difference plot has a scale floor and its noise level marked, so solver or
sensor noise is not autoscaled into what looks like a signal."""
from __future__ import annotations

import math

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import Qt

from solver.runfile import RunFile
from viewer import style
from viewer.compare import difference
from viewer.numbers import value_text
from viewer.plots.axes import ValueAxis, label_time, style_plot
from viewer.plots.view import plot_label

SCALE_FLOOR = 0.02   # a difference plot spans at least ± this fraction of its channel's largest |value|
NOISE_SPAN = 4.0     # ... and at least ± this many noise levels


def noise_level(d: np.ndarray) -> float:
    """The white-noise level (standard deviation) of a difference: 1.4826 × the median absolute first difference
    over √2 (robust against steps and peaks); 0 without finite samples."""
    d = np.asarray(d, float)
    dd = np.diff(d[np.isfinite(d)])
    if dd.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(dd - np.median(dd))) / math.sqrt(2.0))


class DifferenceRow:
    """A difference plot: its curve, zero line, noise band ±noise and the half-range it shows at least."""

    def __init__(self, plot, curve, title, noise: float, floor: float, unit: str):
        self.plot, self.curve, self.title = plot, curve, title
        self.noise, self.floor, self.unit = noise, floor, unit


def ghost_curves(plots: list, names: list[str], plot_of: list[int], run_b: RunFile, offset: float,
                 colors: list[str]) -> dict[str, pg.PlotDataItem]:
    """Run B's channels dashed in their plots (B's time shifted by `offset` s), each in its channel's colour:
    channel -> its curve."""
    tb = run_b.time + offset
    out = {}
    for name, i, color in zip(names, plot_of, colors):
        if name not in run_b.channels:
            continue
        pen = pg.mkPen(color, width=1.5, style=Qt.DashLine)
        c = plots[i].plot(tb, run_b.channel(name), pen=pen)
        c.setDownsampling(auto=True, method="peak")
        c.setClipToView(True)
        c.setOpacity(0.85)
        out[name] = c
    return out


def difference_plot(glw: pg.GraphicsLayoutWidget, row: int, run: RunFile, run_b: RunFile, name: str, offset: float,
                    blocks, labelled: bool) -> DifferenceRow:
    """The plot of A − B of channel `name` on A's frames, at `row` of `glw`."""
    info = run.channels[name]
    d = difference(run, run_b, name, offset, a_values=blocks.full(name))
    return difference_row(glw, row, f"Δ {name} (A − B) [{info.unit}]", run.time, d, info.unit,
                          blocks.abs_max(name), labelled)


def difference_row(glw: pg.GraphicsLayoutWidget, row: int, text: str, t, d, unit: str, full_scale: float,
                   labelled: bool) -> DifferenceRow:
    """A difference plot (curve `d` over `t`, a zero line, the noise band) titled `text` at `row` of `glw`; its y
    range (fitted by the pane) spans at least ±max(SCALE_FLOOR × `full_scale`, NOISE_SPAN × noise)."""
    plot = glw.addPlot(row=row, col=0, enableMenu=False, axisItems={"left": ValueAxis("left", unit)})
    style_plot(plot)
    noise = noise_level(d)
    floor = max(SCALE_FLOOR * full_scale if math.isfinite(full_scale) else 0.0, NOISE_SPAN * noise)
    title = plot_label(f"{text}   <span style='color:{style.KEY_TEXT}'>noise ±{value_text(noise, unit)}</span>",
                       color=style.DIFFERENCE, size=style.PLOT_TITLE, tight=True)
    title.setParentItem(plot.getViewBox())
    title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 1))
    band = pg.LinearRegionItem((-noise, noise), orientation="horizontal", movable=False,
                               brush=pg.mkBrush(*style.NOISE_BAND), pen=pg.mkPen(None))
    band.setZValue(-10)
    plot.addItem(band, ignoreBounds=True)
    curve = plot.plot(t, d, pen=pg.mkPen(style.DIFFERENCE, width=1), connect="finite")
    curve.setDownsampling(auto=True, method="peak")
    curve.setClipToView(True)
    plot.addItem(pg.InfiniteLine(0.0, angle=0, movable=False, pen=pg.mkPen(style.FRAME, width=1)), ignoreBounds=True)
    vb = plot.getViewBox()
    vb.setMouseEnabled(x=False, y=False)
    vb.disableAutoRange(axis="y")        # fitted by the pane: the floor, the noise band, 3 labelled ticks
    for ax in ("bottom", "top", "right"):
        plot.getAxis(ax).enableAutoSIPrefix(False)
    label_time(plot, labelled)
    return DifferenceRow(plot, curve, title, noise, floor, unit)


def measured_curves(plots: list, names: list[str], plot_of: list[int], comparison) -> dict[str, pg.PlotDataItem]:
    """A measured record's channels dashed in their run channels' plots, at the record's own rate in run time:
    channel -> its curve (`comparison`: a solver.measured.Comparison)."""
    out = {}
    for name, i in zip(names, plot_of):
        if name not in comparison.record:
            continue
        pen = pg.mkPen(style.MEASURED, width=1.2, style=Qt.DashLine)
        c = plots[i].plot(comparison.record_time, comparison.record[name], pen=pen, connect="finite")
        c.setDownsampling(auto=True, method="peak")
        c.setClipToView(True)
        out[name] = c
    return out
