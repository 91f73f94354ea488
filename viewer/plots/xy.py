"""XY plots: one channel against another over the time plots' shown interval, the point at T Current marked (force
against stroke: a damper's hysteresis loop)."""
from __future__ import annotations

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg

from viewer import style
from viewer.plots.axes import ValueAxis, label_px, label_room, label_width, style_plot
from viewer.plots.view import plot_label
from viewer.plots.yfit import readable_range

XY_AXIS_W = 80       # px of an XY plot's left axis (no lane names to fit: narrower than the time plots')
MIN_W = XY_AXIS_W + 180   # px of the XY column at least: 3 labels of its horizontal axis
MAX_POINTS = 20000   # samples drawn at most (a longer interval is decimated by a stride: no peak method for XY)


class XYPlot:
    """One XY plot in `glw` at `row`: chy (vertical) against chx (horizontal)."""

    def __init__(self, glw: pg.GraphicsLayoutWidget, row: int, run, chx: str, chy: str, color: str):
        self.chx, self.chy = chx, chy
        ux, uy = run.channels[chx].unit, run.channels[chy].unit
        self.plot = glw.addPlot(row=row, col=0, enableMenu=False,
                                axisItems={"left": ValueAxis("left", uy), "bottom": ValueAxis("bottom", ux)})
        style_plot(self.plot)
        self.plot.getAxis("left").setWidth(XY_AXIS_W)
        self.plot.setLabel("bottom", f"{chx} [{ux}]" if ux else chx)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.title = plot_label(f"{chy} [{uy}]" if uy else chy, color=color, size=style.PLOT_TITLE,
                                tight=True)   # (x: the bottom axis' label; a long title is cut by a narrow plot)
        self.title.setParentItem(self.plot.getViewBox())
        self.title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 1))
        self.curve = self.plot.plot([], [], pen=pg.mkPen(color, width=1))
        self.point = pg.ScatterPlotItem([], [], size=9, pen=pg.mkPen(style.BACKGROUND), brush=pg.mkBrush(style.CURSOR))
        self.point.setZValue(10)
        self.plot.addItem(self.point)
        vb = self.plot.getViewBox()
        vb.setMouseEnabled(x=False, y=False)
        vb.disableAutoRange()
        vb.sigResized.connect(lambda _vb: self.fit())
        self.x = self.y = np.empty(0)

    def set_data(self, x: np.ndarray, y: np.ndarray):
        """The interval's samples (decimated to MAX_POINTS by a stride); ranges fitted with 3 labelled ticks."""
        step = max(1, len(x) // MAX_POINTS)
        self.x, self.y = np.asarray(x[::step], float), np.asarray(y[::step], float)
        self.curve.setData(self.x, self.y, connect="finite")
        self.fit()

    def fit(self):
        vb = self.plot.getViewBox()
        ok = np.isfinite(self.x) & np.isfinite(self.y)
        if not ok.any():
            return
        x0, x1 = float(self.x[ok].min()), float(self.x[ok].max())
        y0, y1 = float(self.y[ok].min()), float(self.y[ok].max())
        text, room = label_px(), label_room()
        top = self.title.item.boundingRect().height() + 2
        yr = readable_range(y0, y1, vb.height(), text, top, room)
        xr = readable_range(x0, x1, vb.width(), label_width(self.plot.getAxis("bottom").unit), 0.0,
                            label_width(self.plot.getAxis("bottom").unit))   # (labels side by side)
        vb.setRange(xRange=xr, yRange=yr, padding=0.0)

    def mark(self, x: float, y: float):
        """The point at T Current."""
        self.point.setData([x], [y])

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """The curve as drawn (x, y)."""
        return np.asarray(self.curve.xData), np.asarray(self.curve.yData)
