"""The plots' axes and the look every plot shares (grid, fixed-width value axis with units, no menus or buttons)."""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

from viewer import style
from viewer.plots.yfit import nice_steps
from viewer.time_axis import TimeAxis

AXIS_W = 112            # px of every plot's left axis (the contact lanes' pair names fit, x axes align)
LABEL_GAP = 4           # px at least between two tick labels
TIME_STRIP_H = 40       # px of the time strip under scrolling plots (as the last plot's labelled time axis)


_TICK_FONT: list = []


def tick_font() -> QFont:
    """The plots' tick label font (style.TICK_PT)."""
    if not _TICK_FONT:
        f = QFont()
        f.setPointSizeF(style.TICK_PT)
        _TICK_FONT.append(f)
    return QFont(_TICK_FONT[0])


_DEFAULT_PX: list = []   # label_px of the tick font (measured once)


def label_px(font: QFont | None = None) -> float:
    """A tick label's height as pyqtgraph measures it (0.8 of the text's bounding box)."""
    if font is None or font == tick_font():
        if not _DEFAULT_PX:
            _DEFAULT_PX.append(0.8 * QFontMetricsF(tick_font()).height())
        return _DEFAULT_PX[0]
    return 0.8 * QFontMetricsF(font).height()


def label_room(font: QFont | None = None) -> float:
    """px from one tick label to the next at least."""
    return label_px(font) + LABEL_GAP


def label_width(unit: str, font: QFont | None = None) -> float:
    """px a horizontal value axis keeps from one label to the next: a wide label ("-0.88 unit") and gaps."""
    return QFontMetricsF(font or tick_font()).horizontalAdvance(f"-0.88 {unit}".strip()) + 2 * LABEL_GAP


class ValueAxis(TimeAxis):
    """A plot's value axis: one level of 1-2-5 ticks at least `label_room` px apart (the y ranges the plots fit make
    room for 3 of them, see yfit.readable_range), each label with the plot's unit."""

    def __init__(self, orientation: str = "left", unit: str = "", **kw):
        super().__init__(orientation, **kw)
        self.unit = unit
        self.setStyle(tickFont=tick_font())

    def set_unit(self, unit: str):
        if unit != self.unit:
            self.unit = unit
            self._forget()
            self.picture = None
            self.update()

    def tickSpacing(self, minVal: float, maxVal: float, size: float):
        dif = abs(maxVal - minVal)
        if not (dif > 0 and size > 0 and math.isfinite(dif)):
            return super().tickSpacing(minVal, maxVal, size)
        room = self.room()
        major = next(m for m in nice_steps(dif * room / size) if m * size / dif >= room * (1 - 1e-9))
        return [(major, 0.0)]

    def room(self) -> float:
        """px from one tick label to the next at least: a label's height on a vertical axis, the width of a
        typical label on a horizontal one."""
        font = self.style["tickFont"]
        if self.orientation in ("left", "right"):
            return label_room(font)
        return label_width(self.unit, font)

    def _levels(self, r0: float, r1: float, length: float):
        return self.tickSpacing(r0, r1, length)   # (cheap; no memo keyed by the width alone)

    def tickStrings(self, values, scale, spacing):
        texts = super().tickStrings(values, scale, spacing)
        return [f"{t} {self.unit}" if self.unit else t for t in texts]


def style_plot(plot: pg.PlotItem) -> None:
    """No menus or buttons, a faint grid, the AXIS_W value axis, no SI prefixes (no label re-layout on a scroll)."""
    plot.setMenuEnabled(False)
    plot.hideButtons()
    plot.showGrid(x=True, y=True, alpha=0.15)
    plot.getAxis("left").setWidth(AXIS_W)
    plot.getAxis("left").enableAutoSIPrefix(False)
    plot.getAxis("bottom").setStyle(tickFont=tick_font())


def label_time(plot: pg.PlotItem, labelled: bool) -> None:
    """The time axis under the last row is labelled; the others draw ticks only."""
    if labelled:
        plot.setLabel("bottom", "time", units="s")
    else:
        plot.getAxis("bottom").setStyle(showValues=False)


class TimeStrip(pg.GraphicsLayoutWidget):
    """A labelled time axis of its own under the plots' scroll area, on a plot's view box (`follow`): where the plots
    scroll, the last plot's labelled time axis is out of sight, this one is not."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setBackground(style.BACKGROUND)
        self.setFixedHeight(TIME_STRIP_H)
        self.axis = pg.AxisItem("bottom")
        self.axis.setStyle(tickFont=tick_font())
        self.axis.enableAutoSIPrefix(False)
        self.axis.setLabel("time", units="s")
        self.ci.setContentsMargins(0, 0, 0, 0)
        self.ci.addItem(self.axis, row=0, col=0)
        self.view = None
        self.setVisible(False)

    def follow(self, vb, glw):
        """Show the time of view box `vb` (in view `glw`), aligned under it; None: hidden."""
        if vb is not self.view:
            if self.view is not None:
                self.axis.unlinkFromView()
                try:
                    self.view.sigResized.disconnect(self._align)
                except (RuntimeError, TypeError):   # (the view box is gone already)
                    pass
            self.view, self._glw = vb, glw
            if vb is not None:
                self.axis.linkToView(vb)
                vb.sigResized.connect(self._align)
        self.setVisible(vb is not None)
        self._align()

    def _align(self, *_):
        """The axis as wide as the view box and right under it."""
        vb, glw, parent = getattr(self, "view", None), getattr(self, "_glw", None), self.parentWidget()
        if vb is None or glw is None or parent is None:
            return
        box = vb.sceneBoundingRect()
        left = max(glw.mapTo(parent, glw.mapFromScene(box.topLeft())).x() - self.x(), 0)
        self.ci.setContentsMargins(left, 0, max(self.width() - left - round(box.width()), 0), 0)

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._align()
