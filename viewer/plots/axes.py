"""The plots' axes and the look every plot shares (grid, fixed-width value axis, no menus or buttons)."""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF

from viewer.time_axis import TimeAxis

AXIS_W = 112            # px of every plot's left axis (the contact lanes' pair names fit, x axes align)


class ValueAxis(TimeAxis):
    """A plot's value axis: on a short plot its tick labels are spaced (1-2-5 steps) so that they never touch."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float):
        levels = super().tickSpacing(minVal, maxVal, size)
        dif = abs(maxVal - minVal)
        if not levels or size <= 0 or not dif:
            return levels
        room = 1.3 * QFontMetricsF(self.style["tickFont"] or self.font()).height()   # px from label to label
        major = levels[0][0]
        if major * size / dif >= room:
            return levels
        while major * size / dif < room:      # the next of 1, 2, 5, 10, 20 …
            p10 = 10.0 ** math.floor(math.log10(major) + 1e-9)
            major = next(m * p10 for m in (2.0, 5.0, 10.0) if m * p10 > major * (1 + 1e-9))
        return [(major, 0.0)]


def style_plot(plot: pg.PlotItem) -> None:
    """No menus or buttons, a faint grid, the AXIS_W value axis, no SI prefixes (no label re-layout on a scroll)."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.getAxis("left").setWidth(AXIS_W)
    plot.getAxis("left").enableAutoSIPrefix(False)


def label_time(plot: pg.PlotItem, labelled: bool) -> None:
    """The time axis under the last row is labelled; the others draw ticks only."""
    if labelled:
        plot.setLabel("bottom", "time", units="s")
    else:
        plot.getAxis("bottom").setStyle(showValues=False)
