"""Bottom pane: the run's facts, the T Current readout box and time plots of the chosen variables.

Plots scroll right to left in GraphStep steps (or show the whole run), with a yellow current-time line
and a white dashed capture line on a dark background. A click in a plot asks to seek there.
"""
from __future__ import annotations

import bisect
import math
from collections import OrderedDict
import warnings

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
import shiboken6
from pyqtgraph import functions as fn
import pyqtgraph.graphicsItems.PlotDataItem as _pdi
from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset
from PySide6.QtCore import QLineF, QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen, QRegion, QTransform
from PySide6.QtWidgets import (QDoubleSpinBox, QFormLayout, QFrame, QGraphicsItem, QGraphicsView, QHBoxLayout, QLabel,
                               QScrollArea, QSizePolicy, QVBoxLayout, QWidget)

from solver.runfile import TIME_CHUNK, RunFile
from viewer.ahead_image import AheadImages, view_box_transform
from viewer.channel_blocks import ChannelBlocks
from viewer.run_facts import capture_text
from viewer.steady_label import SteadyLabel
from viewer.time_axis import TimeAxis

CURSOR = "#ffd700"
CAPTURE = "#ffffff"
TRACE_COLORS = ("#4fc3f7", "#81c784", "#ff8a65", "#ba68c8", "#f06292", "#aed581", "#ffb74d", "#90a4ae")
DEFAULT_PLOTS = ("Fx", "Fy", "Fz", "probe_stroke")
DEFAULT_WINDOW = 10.0   # s of run time shown in scrolling mode
AXIS_W = 112            # px of every plot's left axis (the contact lanes' pair names fit, x axes align)
DOWNSAMPLE_PER_PX = 2.0   # samples per pixel drawn (min and max of each half pixel; pyqtgraph's default: 5)
CURSOR_AT = 0.8         # where the yellow line sits in the scrolling window (share of its width)
MIN_PLOT_H = 36         # px of a plot's row at least: more plots than fit scroll (ticks and curve stay readable)
TIME_AXIS_H = 40        # px of the labelled time axis under the last plot
COST_DATA, COST_LINE, COST_BARS, COST_AXIS, COST_LABELLED_AXIS = 1.0, 1.0, 1.5, 0.3, 3.5   # rough relative costs
COST_DRAWN_AXIS = 2.0   # an unlabelled time axis drawing a tick layout it does not keep yet (COST_AXIS: kept)
# of drawing ahead a line's display data, its image, the lane bars, an unlabelled or a labelled axis (~0.5 ms each)
PANEL_STYLE = ("QWidget#facts { background: #0c101c; } QLabel { color: #e1e4eb; } "
               "QLabel[role=key] { color: #8c94aa; } QFrame#readout { border: 1px solid #5a6482; }")


class CursorLine(pg.InfiniteLine):
    """A vertical time line that never takes part in the plot's auto range: moving it each frame does not make
    the view recompute its data bounds (pyqtgraph informs the view of every move of an item otherwise)."""

    def __init__(self, t: float, pen, z: float = 0.0):
        super().__init__(t, angle=90, movable=False, pen=pen)
        if z:
            self.setZValue(z)

    def informViewBoundsChanged(self):
        pass

    def _computeBoundingRect(self):
        """pyqtgraph's bounds, kept while the view's y range, x width and size stay: a vertical line's bounds in
        its own coordinates (the y range along it, a few pixels across) do not depend on where it or the x range
        sits along x (moving it each frame, or scrolling the window, needs no new bounds)."""
        vb = self.getViewBox()
        key = None
        if isinstance(vb, pg.ViewBox):     # (not yet in a view box: pyqtgraph gives the view widget)
            (x0, x1), (y0, y1) = vb.viewRange()
            key = (round(x1 - x0, 9), y0, y1, vb.width(), vb.height()) if self.angle == 90 else \
                (x0, x1, y0, y1, vb.width(), vb.height())
            if key == getattr(self, "_bounds_key", None):
                return self._bounds
        br = super()._computeBoundingRect()
        self._bounds_key = key
        return br


def plot_label(text: str, **kw) -> pg.LabelItem:
    """pg.LabelItem whose text is painted from a pixmap cache: a scroll repaints it without laying out its text
    again (the same pixels)."""
    label = pg.LabelItem(text, **kw)
    label.item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    return label


class TimeCursor:
    """The yellow T Current line of one plot: drawn by its PlotsView over the scene, not a scene item, so moving
    it repaints two thin strips of the view from the view's kept picture (no plot item paints again)."""

    def __init__(self, t: float, pen, plot: pg.PlotItem):
        self._t = float(t)
        self.pen = pen
        self.plot = plot
        self.view: PlotsView | None = None   # set by the view drawing it

    def value(self) -> float:
        return self._t

    def setPos(self, t: float):
        """Move to run time t (the view repaints where it was and where it is)."""
        t = float(t)
        if t != self._t:
            self._t = t
            if self.view is not None:
                self.view.move_cursors([self])

    def place(self, t: float):
        """Move to run time t without telling the view (the caller asks it to repaint, once for all cursors)."""
        self._t = float(t)


class PlotsView(pg.GraphicsLayoutWidget):
    """The plots' view: draws the time cursors over the scene and keeps a copy of what the scene painted, so a
    cursor move repaints two strips a few pixels wide from that copy (no plot item paints again)."""

    STRIP = 3   # px either side of a cursor's x repainted when it moves (its line is 1.5 px wide)

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.cursors: list[TimeCursor] = []
        self._shot: QImage | None = None   # the scene as last painted (no cursors), viewport pixels
        self._valid = QRegion()            # the parts of _shot that hold it
        self._strips = QRegion()           # viewport parts asked to repaint for cursor moves only
        self._drawn: dict = {}             # id(cursor) -> viewport x it was drawn at
        self.held: dict | None = None      # while the scene is changed ahead of its pixels (see hold): id(view box)
                                           # -> (its items' scene transform, its box in the viewport) as painted
        self._update_mode = None
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)   # a plain background: filled on a scroll,
                                                                   # cheaper than copying pyqtgraph's cached one

    def set_cursors(self, cursors: list[TimeCursor]):
        """The time cursors to draw (each over its plot's view box)."""
        for c in self.cursors:
            c.view = None
        self.cursors = list(cursors)
        for c in self.cursors:
            c.view = self
        self._drawn = {}
        self.viewport().update()

    def _cursor_lines(self, cursors=None):
        """(cursor, viewport x, top, bottom, left, right of its view box) of each cursor (default: all) whose plot
        is shown."""
        out = []
        vt = self.viewportTransform()
        scene = self.scene()
        for c in self.cursors if cursors is None else cursors:
            plot = c.plot
            if plot.scene() is not scene or not plot.isVisible():
                continue
            st, box = self.view_box_place(plot.getViewBox())
            x = (st * vt).map(QPointF(c.value(), 0.0)).x()
            if math.isfinite(x):
                out.append((c, x, box.top(), box.bottom(), box.left(), box.right()))
        return out

    def view_box_place(self, vb) -> tuple[QTransform, QRectF]:
        """(scene transform of the view box's items, its box in the viewport: what it clips them to) as its pixels
        show it (held, see hold)."""
        held = self.held.get(id(vb)) if self.held is not None else None
        if held is not None:
            return held
        if vb._matrixNeedsUpdate:
            vb.updateMatrix()
        return vb.childGroup.sceneTransform(), self.viewportTransform().mapRect(vb.mapRectToScene(vb.rect()))

    def hold(self) -> bool:
        """Keep the pixels as painted while the scene changes under them (the next scroll step, applied a frame
        ahead): the cursors move over the kept picture with the transforms it was painted with, and scene changes
        repaint nothing until `release`. False (nothing held) without a kept picture of the whole view."""
        vp = self.viewport()
        shown = vp.visibleRegion()     # (the part not scrolled out of the plots pane's scroll area)
        if self.held is not None or self._shot is None or shown.isEmpty() or not shown.subtracted(self._valid).isEmpty():
            return False
        self.held = {id(c.plot.getViewBox()): self.view_box_place(c.plot.getViewBox()) for c in self.cursors}
        self._update_mode = self.viewportUpdateMode()
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.NoViewportUpdate)
        return True

    def release(self):
        """Show the scene as it is now (the whole view repaints)."""
        if self.held is None:
            return
        self.held = None
        self.setViewportUpdateMode(self._update_mode)
        self.viewport().update()

    def _strip(self, x: float) -> QRect:
        return QRect(int(math.floor(x)) - self.STRIP, 0, 2 * self.STRIP + 2, self.viewport().height())

    def move_cursors(self, cursors: list[TimeCursor] | None = None):
        """Ask to repaint the strips of the cursors (default: all) that moved: where they were drawn and where
        they are now."""
        region = QRegion()
        now = set()
        for c, x, *_ in self._cursor_lines(cursors):
            now.add(id(c))
            old = self._drawn.get(id(c))
            if old != x:
                region += self._strip(x)
                if old is not None:
                    region += self._strip(old)
        for c in self.cursors if cursors is None else cursors:   # (hidden now: where it was drawn)
            old = self._drawn.get(id(c))
            if id(c) not in now and old is not None:
                region += self._strip(old)
        if not region.isEmpty():
            self._strips += region
            self.viewport().update(region)

    def resizeEvent(self, ev):
        self._shot, self._valid = None, QRegion()
        super().resizeEvent(ev)

    def paintEvent(self, ev):
        region = ev.region()
        strips, self._strips = self._strips, QRegion()
        vp = self.viewport()
        p = None
        if (self._shot is not None and (region.subtracted(strips).isEmpty() or self.held is not None)
                and region.subtracted(self._valid).isEmpty()):
            p = QPainter(vp)                         # only cursor moves (or held): the scene is as in the copy
            p.setClipRegion(region)
            p.drawImage(QPoint(0, 0), self._shot)
        else:
            self.scene().prepareForPaint()           # (pyqtgraph's GraphicsView.paintEvent)
            QGraphicsView.paintEvent(self, ev)
            p = QPainter(vp)
            self._keep(region, p)
        try:
            self._drawn = {}
            for c, x, top, bottom, left, right in self._cursor_lines():
                self._drawn[id(c)] = x
                if left - 1 <= x <= right + 1:
                    p.setPen(c.pen)
                    p.drawLine(QLineF(x, math.ceil(top), x, math.ceil(bottom) - 1))   # (the rows the box touches)
        finally:
            p.end()

    def _keep(self, region: QRegion, p: QPainter):
        """Copy what the scene just painted in `region` from the window's backing store (when painting there,
        not into a grab) to _shot."""
        vp = self.viewport()
        store = vp.backingStore()
        img = store.paintDevice() if store is not None else None
        dev = p.paintEngine().paintDevice() if p.paintEngine() is not None else None
        if (not isinstance(img, QImage) or dev is None
                or shiboken6.getCppPointer(dev)[0] != shiboken6.getCppPointer(img)[0]):
            return
        dpr = img.devicePixelRatio()
        size = QSize(round(vp.width() * dpr), round(vp.height() * dpr))
        if self._shot is None or self._shot.size() != size or self._shot.format() != img.format():
            self._shot = QImage(size, img.format())
            self._shot.setDevicePixelRatio(dpr)
            self._valid = QRegion()
        at = vp.mapTo(vp.window(), QPoint(0, 0))
        q = QPainter(self._shot)
        try:
            q.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            for r in region:
                src = QRect(round((at.x() + r.x()) * dpr), round((at.y() + r.y()) * dpr),
                            round(r.width() * dpr), round(r.height() * dpr))
                q.drawImage(QRectF(r), img, QRectF(src))
        finally:
            q.end()
        self._valid += region


class TraceCurve(pg.PlotCurveItem):
    """A plotted line that can be drawn ahead (`rasterize`) for the transform it will be painted with; that paint
    shows the image. An opaque, 1 px, not antialiased line only (its pixels are the same either way)."""

    def __init__(self, *args, **kw):
        self.ahead = AheadImages(keep=3)   # the shown range's line, the next one's
        self._ahead_pen = None             # the pen they are drawn with
        super().__init__(*args, **kw)

    def _opaque_line(self) -> bool:
        o = self.opts
        pen = o["pen"]
        return (o["fillLevel"] is None and o["shadowPen"] is None and not o["stepMode"] and o["compositionMode"] is None
                and not o["antialias"] and self._exportOpts is False and pen is not None and pen.isCosmetic()
                and pen.widthF() <= 1.0 and pen.style() == Qt.PenStyle.SolidLine and pen.color().alpha() == 255)

    def rasterize(self, path, transform: QTransform, clip: QRectF) -> bool:
        """Draw `path` with the painter transform `transform` (item to viewport), clipped to `clip` (its view box
        in the viewport: a line is cut where the view box cuts it), into an image; True if drawn now."""
        if not self._opaque_line():
            return False
        pen = QPen(self.opts["pen"])
        if pen != self._ahead_pen:
            self.ahead.clear()
            self._ahead_pen = pen

        def draw(q: QPainter):
            q.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            q.setPen(pen)
            q.drawPath(path)
        return self.ahead.make(path, transform, clip, draw, clip)

    def paint(self, p, opt, widget):
        if (self.path is not None and self._opaque_line() and self.opts["pen"] == self._ahead_pen
                and self.ahead.show(p, self.path)):
            return
        super().paint(p, opt, widget)


class Trace(pg.PlotDataItem):
    """A plotted channel whose display data (clipped to the x range, peak-downsampled) is remembered per x range:
    the next scroll step's is made ahead (`prepare`), so a scroll only shows it. Same data as pyqtgraph makes;
    any case this does not cover (other modes, y clipping by dynamicRangeLimit) goes to pyqtgraph."""

    KEEP = 4   # x ranges remembered

    def __init__(self, *args, **kw):
        self._shown: dict = {}   # (x0, x1, ds, dataset id) -> (display PlotDataset, the dataset)
        self._shown_key = None   # the key of what _datasetDisplay holds
        self._dx = None          # (dataset, its mean sample spacing)
        self._paths: dict = {}   # key of _shown -> (the curve's QPainterPath made ahead, connect, skipFiniteCheck)
        self._given = None       # (the curve's x, y arrays, their bounds) set by viewRangeChanged
        made, _pdi.PlotCurveItem = _pdi.PlotCurveItem, TraceCurve   # (its line: a TraceCurve)
        try:
            super().__init__(*args, **kw)
        finally:
            _pdi.PlotCurveItem = made
        self.curve.dataBounds = self._curve_bounds   # (the curve's boundingRect asks after every scroll)

    def _plain(self) -> bool:
        o = self.opts
        d = self._dataset
        return (d is not None and o["clipToView"] and o["autoDownsample"] and o["downsampleMethod"] == "peak"
                and not (o["fftMode"] or o["derivativeMode"] or o["phasemapMode"] or o["subtractMeanMode"])
                and True not in o["logMode"] and not isinstance(o["connect"], np.ndarray)
                and d.x.dtype != bool and d.y.dtype != bool and len(d.x) > 1)

    def _ds(self, x0: float, x1: float, vb) -> int:
        """pyqtgraph's auto-downsampling factor for this x range (without its hysteresis step)."""
        d = self._dataset
        if self._dx is None or self._dx[0] is not d:
            x = d.x if d.xAllFinite else d.x[np.isfinite(d.x)]
            self._dx = (d, float(x[-1] - x[0]) / (len(x) - 1) if len(x) > 1 else None)
        dx = self._dx[1]
        ds = self.opts["downsample"] if isinstance(self.opts["downsample"], int) else 1
        width = vb.width()
        if dx is not None and dx != 0.0 and width != 0.0:
            f = max(1.0, abs((x1 - x0) / dx / (width * self.opts["autoDownsampleFactor"])))
            if math.isfinite(f):
                ds = int(f)
        return ds

    def _display(self, x0: float, x1: float, ds: int):
        key = (x0, x1, ds, id(self._dataset))
        out = self._shown.get(key)
        if out is None:
            x, y = self._dataset.x, self._dataset.y
            n = len(x)
            a = min(max(bisect.bisect_left(x, x0) - ds, 0), n)
            b = min(max(bisect.bisect_left(x, x1) + ds, a), n)
            x, y = x[a:b], y[a:b]
            if ds > 1:
                m = len(x) // ds
                xs = np.empty((m, 2))
                st = ds // 2
                xs[:] = x[st:st + m * ds:ds, np.newaxis]
                ys = np.empty((m, 2))
                y2 = y[:m * ds].reshape((m, ds))
                ys[:, 0] = y2.max(axis=1)
                ys[:, 1] = y2.min(axis=1)
                x, y = xs.reshape(m * 2), ys.reshape(m * 2)
            out = PlotDataset(x, y, self._dataset.xAllFinite, self._dataset.yAllFinite, None)
            if len(self._shown) >= self.KEEP:
                old = next(iter(self._shown))
                self._shown.pop(old)
                self._paths.pop(old, None)
            self._shown[key] = (out, self._dataset, (_bounds(x), _bounds(y)))   # (the dataset stays alive: its
            return out, key                                                     # id stays its own)
        return out[0], key

    def _curve_bounds(self, ax, frac=1.0, orthoRange=None):
        """The curve's dataBounds: those of the display data, measured when it was made (ahead, see prepare),
        for the data the fast scroll path gave it; pyqtgraph's otherwise."""
        c, g = self.curve, self._given
        if (g is not None and frac >= 1.0 and orthoRange is None and g[0] is c.xData and g[1] is c.yData
                and c.opts["fillLevel"] is None and (c.opts["pen"] is None or c.opts["pen"].isCosmetic())
                and (c.opts["shadowPen"] is None or c.opts["shadowPen"].isCosmetic())):
            return g[2][ax]
        return type(c).dataBounds(c, ax, frac, orthoRange)

    def _y_clipped(self, rect) -> bool:
        """Whether pyqtgraph's dynamicRangeLimit would clip the y values for this view rectangle."""
        limit = self.opts["dynamicRangeLimit"]
        if limit is None:
            return False
        data = self._dataset.dataRect()
        h = rect.height()
        return (data is not None and h > 0 and not data.bottom() < rect.top() and not data.top() > rect.bottom()
                and data.height() > 2 * self.opts["dynamicRangeHyst"] * limit * h)

    def prepare(self, x0: float, x1: float, exact: bool = False):
        """Make the display data of the x range [x0, x1] ahead (the view keeps its width); unless `exact` (the
        view gets the range itself), also for the range an x-linked view gets from its link, x0 + w * ((x1 - x0)
        / w) with w its width on screen (pyqtgraph's arithmetic)."""
        vb = self.getViewBox()
        if vb is None or not self._plain() or vb.autoRangeEnabled()[0]:
            return
        g = None if exact else vb.screenGeometry()
        ends = {x1}
        if g is not None and g.width() > 0:
            ends.add(x0 + g.width() * ((x1 - x0) / g.width()))
        for end in ends:
            ds = self._ds(x0, end, vb)
            if math.isclose(ds, self._adsLastValue, rel_tol=0.01):
                ds = self._adsLastValue
            data, key = self._display(x0, end, ds)
            if key not in self._paths and not self.curve.opts["stepMode"] and len(data.x):
                connect, skip = self._curve_connect(data)
                self._paths[key] = (fn.arrayToQPath(data.x, data.y, connect=connect, finiteCheck=not skip),
                                    connect, skip)

    def rasterize_ahead(self, x0: float, x1: float, y: tuple[float, float] | None, view: QGraphicsView) -> bool:
        """Draw the line of x range [x0, x1] made ahead (`prepare`) as `view` will paint it once its view box
        shows that x range and the y range `y` (None: the one it has); True if drawn now."""
        c = self.curve
        placed = view_box_transform(c, self.getViewBox(), (x0, x1), y, view) if isinstance(c, TraceCurve) else None
        if placed is None:
            return False
        done = False
        for key, made in list(self._paths.items()):
            if key[0] == x0 and math.isclose(key[1], x1, rel_tol=1e-12) and key[3] == id(self._dataset):
                done |= c.rasterize(made[0], *placed)
        return done

    def _curve_connect(self, data) -> tuple:
        """The connect and skipFiniteCheck options updateItems gives the curve for this display data."""
        connect, skip = self.opts["connect"], self.opts["skipFiniteCheck"]
        if isinstance(connect, str) and connect == "auto":
            connect, skip = ("all", True) if data.containsNonfinite is False else ("finite", False)
        return connect, skip

    def updateItems(self, styleUpdate: bool = True):
        """pyqtgraph's; the curve gets the path made ahead for this display data (see prepare)."""
        super().updateItems(styleUpdate)
        made = self._paths.get(self._shown_key) if self._shown_key is not None else None
        c = self.curve
        if made is not None and c.path is None and (c.opts["connect"], c.opts["skipFiniteCheck"]) == made[1:]:
            c.path = made[0]

    def viewRangeChanged(self, vb=None, ranges=None, changed=None):
        """pyqtgraph's; an x range change of a plain curve gives the curve the display data (and the path made
        ahead) directly: pyqtgraph's updateItems sets every style option of the curve again on each scroll."""
        if changed is None or not changed[0] or changed[1] or not self._fast_range_ok():
            return super().viewRangeChanged(vb, ranges, changed)
        self.setProperty("xViewRangeWasChanged", True)
        self._datasetDisplay = None
        data = self._getDisplayDataset()
        c = self.curve
        if data is None or self._shown_key is None or self._curve_connect(data) != (c.opts["connect"],
                                                                                     c.opts["skipFiniteCheck"]):
            return self.updateItems(styleUpdate=False)
        if c.xData is data.x and c.yData is data.y:
            return
        c.yData, c.xData = data.y.view(np.ndarray), data.x.view(np.ndarray)   # (PlotCurveItem.updateData)
        shown = self._shown.get(self._shown_key)
        self._given = (c.xData, c.yData, shown[2]) if shown is not None and shown[0] is data else None
        c.invalidateBounds()
        c.prepareGeometryChange()
        c.informViewBoundsChanged()
        made = self._paths.get(self._shown_key)
        c.path = made[0] if made is not None else None
        c.fillPath = c._fillPathList = c._mouseShape = None
        c._lineSegmentsRendered = False
        c.update()
        c.sigPlotChanged.emit(c)

    def _fast_range_ok(self) -> bool:
        """Whether an x range change only changes the curve's data (a plain line: no symbols, fill, steps)."""
        o, c = self.opts, self.curve
        return (self._plain() and o["pen"] is not None and o["symbol"] is None and o["fillLevel"] is None
                and not c.opts["stepMode"] and c.isVisible() and len(c.xData if c.xData is not None else ()) > 0
                and not (self.getViewBox() is None or self.getViewBox().autoRangeEnabled()[0]))

    def _getDisplayDataset(self):
        vb = self.getViewBox()
        if vb is None or not self._plain() or vb.autoRangeEnabled()[0]:
            self._shown_key = None
            return super()._getDisplayDataset()
        rect = vb.viewRect()
        if self._y_clipped(rect):
            self._shown_key = None
            return super()._getDisplayDataset()
        ds = self._ds(rect.left(), rect.right(), vb)
        if math.isclose(ds, self._adsLastValue, rel_tol=0.01):
            ds = self._adsLastValue
        self._adsLastValue = ds
        key = (rect.left(), rect.right(), ds, id(self._dataset))
        if self._datasetDisplay is None or key != self._shown_key:
            self._datasetDisplay, self._shown_key = self._display(rect.left(), rect.right(), ds)
        self.setProperty("xViewRangeWasChanged", False)
        self.setProperty("yViewRangeWasChanged", False)
        return self._datasetDisplay

    def setData(self, *args, **kw):
        self._shown, self._shown_key, self._paths = {}, None, {}    # (also called by PlotDataItem.__init__)
        return super().setData(*args, **kw)


def _bounds(d: np.ndarray) -> tuple:
    """Finite min and max of d as pyqtgraph's PlotCurveItem.dataBounds measures them ((None, None): none)."""
    if len(d) == 0:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # all-NaN: handled below
        b = float(np.nanmin(d)), float(np.nanmax(d))
    if math.isinf(b[0]) or math.isinf(b[1]):
        d = d[np.isfinite(d)]
        if len(d) == 0:
            return None, None
        b = float(d.min()), float(d.max())
    return b


def default_plots(run: RunFile) -> list[str]:
    """Base loads and probe stroke if the run has them, else its first four channels."""
    chosen = [n for n in DEFAULT_PLOTS if n in run.channels]
    return chosen or list(run.channels)[:4]


def scroll_window(t: float, width: float, graph_step: float, t0: float, t1: float) -> tuple[float, float]:
    """The scrolling x range: moves in whole GraphSteps so the traces shift right to left by GraphStep."""
    if t1 - t0 <= width:
        return t0, t0 + width
    left = t - CURSOR_AT * width
    left = math.floor(left / graph_step) * graph_step if graph_step > 0 else left
    left = min(max(left, t0), t1 - width)
    return left, left + width


def visible_bounds(t: np.ndarray, y: np.ndarray, x0: float, x1: float) -> tuple[float, float] | None:
    """Finite min and max of y over the samples with x0 <= t <= x1 (what pyqtgraph's visible-only auto range
    measures), None when there are none."""
    a, b = np.searchsorted(t, x0, side="left"), np.searchsorted(t, x1, side="right")
    seg = y[a:b]
    if seg.size == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # all-NaN: handled below
        lo, hi = float(np.nanmin(seg)), float(np.nanmax(seg))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        seg = seg[np.isfinite(seg)]
        if seg.size == 0:
            return None
        lo, hi = float(seg.min()), float(seg.max())
    return lo, hi


def fmt(v: float, unit: str = "") -> str:
    if not math.isfinite(v):
        return "—"
    a = abs(v)
    s = f"{v:.1f}" if a >= 1000 else f"{v:.2f}" if a >= 10 else f"{v:.4f}"
    return f"{s} {unit}".rstrip()


class PlotsPane(QWidget):
    """Facts + readout box on the left; x-linked plots of the chosen channels on the right."""

    seekRequested = Signal(float)       # run time the user clicked in a plot
    graphStepEdited = Signal(float)     # GraphStep typed in the facts panel
    plotsChanged = Signal(list)         # the plotted channel names

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.names: list[str] = []
        self.frame = 0
        self.t_current = 0.0
        self.scrolling = True
        self.window = DEFAULT_WINDOW
        self.graph_step = 0.1
        self.plots: list[pg.PlotItem] = []
        self.curves: list[pg.PlotDataItem] = []
        self.cursors: list[TimeCursor] = []
        self.capture_lines: list[pg.InfiniteLine] = []
        self.ranges: list[pg.LinearRegionItem] = []
        self.titles: list[pg.LabelItem] = []
        self.loop_range_t: tuple[float, float] | None = None
        self._xrange: tuple[float, float] | None = None
        self._early: tuple[float, float] | None = None   # the x range still shown while the next scroll step's is
        self.playing = False                             # applied a frame ahead (see _scroll_ahead)
        self._span: tuple[int, int] | None = None   # frames the curves hold (see _load_span)
        self.footer: pg.PlotItem | None = None   # e.g. the contact lanes: below the plots, same time axis
        self.footer_visible = True
        self.compare_run: RunFile | None = None  # run B drawn dashed on this run's time axis (t_A = t_B + offset)
        self.compare_offset = 0.0
        self.diff_name: str | None = None
        self.ghost_curves: list[pg.PlotDataItem] = []
        self._ghost_of: dict[int, pg.PlotDataItem] = {}   # plot index -> run B's dashed curve in it
        self._yfit: list = []                            # per plot: the y range last fitted (see _fit_y)
        self._ymemo: dict = {}                           # y ranges measured (see _y_range)
        self._next: tuple[float, float] | None = None    # the next scroll step's x range (see _prepare_next)
        self._pending: list = []                         # (cost, drawing ahead) still to do for it
        self._stride = 1                                 # frames between the last two frames shown
        self._direct = False                             # the last scroll set each view's range (_scroll_views)
        self.diff_plot: pg.PlotItem | None = None
        self.diff_curve: pg.PlotDataItem | None = None

        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self._build_facts())
        self.glw = PlotsView()
        self.glw.setBackground("#0c101c")
        self.glw.ci.setSpacing(2)
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        self.plots_scroll = _scroll_area(self.glw, "#0c101c")   # plots keep MIN_PLOT_H; more scroll
        self.rows_scroll = True       # False (a video: nothing can scroll): the plots share the pane's height
        lay.addWidget(self.plots_scroll, 1)

    # ---- left panel -----------------------------------------------------------------------
    def _build_facts(self) -> QWidget:
        w = QWidget(objectName="facts")
        w.setAttribute(Qt.WA_StyledBackground)
        w.setStyleSheet(PANEL_STYLE)
        w.setFixedWidth(270)
        v = QVBoxLayout(w)
        v.setContentsMargins(8, 6, 8, 6)
        form_box = QWidget(objectName="facts")
        form = QFormLayout(form_box)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(2)
        self.graph_step_box = QDoubleSpinBox(decimals=3, minimum=0.001, maximum=60.0, singleStep=0.05, suffix=" s")
        self.graph_step_box.setValue(self.graph_step)
        self.graph_step_box.setKeyboardTracking(False)
        self.graph_step_box.setFocusPolicy(Qt.ClickFocus)
        self.graph_step_box.valueChanged.connect(self.graphStepEdited.emit)
        self.fact_labels: dict[str, QLabel] = {}

        def key(text):
            lab = QLabel(text)
            lab.setProperty("role", "key")
            return lab

        form.addRow(key("GraphStep"), self.graph_step_box)
        for k in ("Run Date", "Comment", "T capture", "T Final", "Verdict"):
            lab = self.fact_labels[k] = QLabel("—")
            lab.setWordWrap(True)
            lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
            form.addRow(key(k), lab)
        v.addWidget(_scroll_area(form_box, "#0c101c"), 1)   # a long comment or verdict scrolls; the box stays whole
        box = QFrame(objectName="readout")
        bl = QVBoxLayout(box)
        bl.setContentsMargins(6, 4, 6, 4)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.Monospace)
        mono.setPointSizeF(9.0)
        self.t_label = QLabel("T Current  —")
        tf = QFont(mono)
        tf.setBold(True)
        tf.setPointSizeF(10.0)
        self.t_label.setFont(tf)
        self.t_label.setStyleSheet(f"color: {CURSOR};")
        self.readout = QLabel("")
        self.readout.setFont(mono)
        self.readout.setTextFormat(Qt.RichText)
        self.readout.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.readout.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.t_label, self.readout = SteadyLabel(self.t_label), SteadyLabel(self.readout)   # new text each frame
        bl.addWidget(self.t_label)
        bl.addWidget(self.readout, 1)
        v.addWidget(box)
        return w

    def _size_rows(self):
        """Room for every plotted value in the readout box and for MIN_PLOT_H per plot (the plots scroll)."""
        lines = len(self.names)
        self.readout.setMinimumHeight(lines * self.readout.label.fontMetrics().lineSpacing() + 2 if lines else 0)
        rows = lines + (1 if self._diff_shown() else 0)
        footer = self.glw.ci.layout.rowMinimumHeight(rows) if self._footer_shown() else 0
        self.glw.setMinimumHeight(rows * MIN_PLOT_H + max(footer, 0) + TIME_AXIS_H if rows and self.rows_scroll else 0)

    def set_rows_scroll(self, on: bool):
        """Whether plots keep MIN_PLOT_H and scroll where they do not fit (off: they share the pane's height)."""
        self.rows_scroll = bool(on)
        self._size_footer()
        self._size_rows()

    def set_verdict(self, line: str, passed: bool | None, report: str = ""):
        """The capture verdict line (PASS green, FAIL red; None: could not be evaluated)."""
        lab = self.fact_labels["Verdict"]
        color = {True: "#66dd77", False: "#ff5a4a", None: "#8c94aa"}[passed]
        lab.setText(line or "—")
        lab.setStyleSheet(f"color: {color};" + (" font-weight: bold;" if passed is False else ""))
        lab.setToolTip(f"<pre>{report}</pre>" if report else "")

    def verdict_text(self) -> str:
        return self.fact_labels["Verdict"].text()

    # ---- run and variables ----------------------------------------------------------------
    def set_run(self, run: RunFile | None, blocks: ChannelBlocks | None = None, names: list[str] | None = None):
        """Attach a run and plot `names` (default: base loads and probe stroke)."""
        self.run = run
        self.blocks = blocks or (ChannelBlocks(run) if run is not None else None)
        if run is None:
            for k in self.fact_labels.values():
                k.setText("—")
            self.set_plotted([])
            return
        m = run.meta
        self.fact_labels["Run Date"].setText(m.run_date.replace("T", " ") or "—")
        self.fact_labels["Comment"].setText(m.comment or "—")
        self.fact_labels["T capture"].setText(capture_text(run))
        self.fact_labels["T Final"].setText(f"{run.t_final:.3f} s" + ("" if m.complete or run.live else " (incomplete)"))
        self.frame = 0
        self.t_current = float(run.time[0])
        self.set_plotted(names if names is not None else default_plots(run))

    def set_plotted(self, names: list[str]):
        """Rebuild the plots for these channels (unknown names are dropped); loads only these channels."""
        run = self.run
        names = [n for n in dict.fromkeys(names) if run is not None and n in run.channels]
        for old in self.names:
            if old not in names and self.blocks is not None:
                self.blocks.drop_full(old)
        self.names = names
        self.glw.ci.clear()
        for r in range(self.glw.ci.layout.rowCount()):
            self.glw.ci.layout.setRowFixedHeight(r, -1)      # a footer row's fixed height must not stay
            self.glw.ci.layout.setRowStretchFactor(r, 1)
        self.plots, self.curves, self.cursors, self.capture_lines, self.ranges = [], [], [], [], []
        self.titles = []
        self.ghost_curves, self.diff_plot, self.diff_curve = [], None, None
        self._ghost_of, self._yfit, self._ymemo = {}, [], {}
        self._next, self._pending = None, []
        self._xrange, self._early = None, None
        self.glw.release()
        self._span = None
        if run is None:
            self._update_readout()
            self.plotsChanged.emit(list(self.names))
            return
        first = None
        for i, name in enumerate(names):
            info = run.channels[name]
            plot = self.glw.addPlot(row=i, col=0, enableMenu=False,   # (no context menus built)
                                    axisItems={"bottom": TimeAxis("bottom"), "left": ValueAxis("left")})
                                    # scrolls reuse tick drawings; the next step's are drawn ahead (_prepare_next)
            plot.setMenuEnabled(False)
            plot.hideButtons()
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.getAxis("left").setWidth(AXIS_W)
            plot.getAxis("left").enableAutoSIPrefix(False)
            color = TRACE_COLORS[i % len(TRACE_COLORS)]
            title = plot_label(f"{name} [{info.unit}]" if info.unit else name, color=color, size="8pt")
            title.setParentItem(plot.getViewBox())
            title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 0))
            self.titles.append(title)
            for ax in ("left", "bottom"):
                plot.getAxis(ax).setStyle(maxTickLevel=1, maxTextLevel=1)   # major and minor ticks: half the work
            plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # a scroll mostly
            # keeps the y range: its text and grid are blitted (the time axes, curves change with every scroll)
            for ax in ("bottom", "top", "right"):   # no label re-layout on every scroll (hidden axes too)
                plot.getAxis(ax).enableAutoSIPrefix(False)
            if i < len(names) - 1 or self._footer_shown() or self._diff_shown():
                plot.getAxis("bottom").setStyle(showValues=False)
            else:
                plot.setLabel("bottom", "time", units="s")
            curve = Trace(pen=pg.mkPen(color, width=1))   # data: the frames around the x range (_load_span)
            plot.addItem(curve)
            curve.opts["autoDownsampleFactor"] = DOWNSAMPLE_PER_PX
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            curve.setSkipFiniteCheck(True)
            vb = plot.getViewBox()
            vb.setMouseEnabled(x=False, y=False)
            vb.disableAutoRange(axis="y")        # the y range is fitted to the shown data by _fit_y (cheaper)
            vb.sigResized.connect(lambda _vb, k=i: self._fit_y(k))
            self._yfit.append(None)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            if math.isfinite(run.t_capture):
                cap = CursorLine(run.t_capture, pg.mkPen(CAPTURE, width=1, style=Qt.DashLine))
                plot.addItem(cap, ignoreBounds=True)
                self.capture_lines.append(cap)
            region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 255, 255, 22),
                                         pen=pg.mkPen(255, 255, 255, 60))
            region.setZValue(-10)
            region.setVisible(False)
            plot.addItem(region, ignoreBounds=True)
            self.ranges.append(region)
            self.cursors.append(TimeCursor(self.t_current, pg.mkPen(CURSOR, width=1.5), plot))
            self.plots.append(plot)
            self.curves.append(curve)
        shared = OrderedDict()   # the plots' unlabelled time axes are built alike: they share their tick drawings
        for a in (p.getAxis("bottom") for p in self.plots):
            if isinstance(a, TimeAxis) and not a.style["showValues"]:
                a.share_drawings(shared)
        first = self._add_compare(first)
        self._add_footer(first)
        footer_cursor = getattr(self.footer, "cursor", None) if self._footer_shown() else None
        self.glw.set_cursors(self.cursors + ([footer_cursor] if isinstance(footer_cursor, TimeCursor) else []))
        self.set_loop_range_time(self.loop_range_t)
        self._apply_xrange(force=True)
        self._fit_y()
        self._size_rows()
        self._update_readout()
        self.plotsChanged.emit(list(self.names))

    # ---- footer (contact lanes) -----------------------------------------------------------
    def set_footer(self, item: pg.PlotItem | None):
        """Put a plot item (the contact lanes) under the plots, x-linked to them; it keeps its own height."""
        self.footer = item
        self.set_plotted(self.names)

    def set_footer_visible(self, on: bool):
        self.footer_visible = bool(on)
        self.set_plotted(self.names)

    def footer_changed(self):
        """The footer's wanted height changed (e.g. the lanes got a run's events): size its row again."""
        self._size_footer()

    def _footer_shown(self) -> bool:
        return self.footer is not None and self.footer_visible and self.run is not None

    def _add_footer(self, first):
        if not self._footer_shown():
            if self.footer is not None:
                self.footer.setVisible(False)
            return
        f = self.footer
        f.setVisible(True)
        row = len(self.names) + (1 if self._diff_shown() else 0)
        self.glw.addItem(f, row=row, col=0)
        self._size_footer()
        self.glw.ci.layout.setRowStretchFactor(row, 0)
        f.setXLink(first if first is not None else None)

    def _size_footer(self):
        """The footer keeps its wanted height, but at most half the pane's height; where the plots' MIN_PLOT_H do
        not fit beside it, the pane scrolls and the footer gets all its wanted height."""
        if not self._footer_shown():
            return
        want = self.footer.height_px() if hasattr(self.footer, "height_px") else 80
        row = len(self.names) + (1 if self._diff_shown() else 0)
        visible = self.plots_scroll.height()
        height = min(want, visible // 2)
        if self.rows_scroll and row * MIN_PLOT_H + TIME_AXIS_H + height > visible:   # the pane scrolls anyway:
            height = want                                                              # lanes at their height
        self.glw.ci.layout.setRowFixedHeight(row, max(30, height))
        self._size_rows()

    def resizeEvent(self, e):
        self._drop_early()
        super().resizeEvent(e)
        self._size_footer()

    # ---- comparison with a second run (dashed curves, difference plot) --------------------
    def set_compare(self, run_b: RunFile | None, offset: float = 0.0, diff_name: str | None = None):
        """Draw run B's plotted channels dashed (B shifted by `offset` s) and A − B of `diff_name` below."""
        self.compare_run, self.compare_offset, self.diff_name = run_b, float(offset), diff_name
        self.set_plotted(self.names)

    def _diff_shown(self) -> bool:
        return (self.compare_run is not None and self.run is not None and self.diff_name is not None
                and self.diff_name in self.run.channels and self.diff_name in self.compare_run.channels)

    def _add_compare(self, first):
        """Dashed B curves in each plot that B has; the difference plot as the last row. Returns the x master."""
        b = self.compare_run
        if b is None or self.run is None:
            return first
        from viewer.compare import difference
        tb = b.time + self.compare_offset
        for i, (name, plot) in enumerate(zip(self.names, self.plots)):
            if name not in b.channels:
                continue
            pen = pg.mkPen(TRACE_COLORS[i % len(TRACE_COLORS)], width=1.5, style=Qt.DashLine)
            c = plot.plot(tb, b.channel(name), pen=pen)
            c.setDownsampling(auto=True, method="peak")
            c.setClipToView(True)
            c.setOpacity(0.85)
            self.ghost_curves.append(c)
            self._ghost_of[i] = c
        if not self._diff_shown():
            return first
        name = self.diff_name
        info = self.run.channels[name]
        plot = self.diff_plot = self.glw.addPlot(row=len(self.names), col=0, enableMenu=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=True, y=True, alpha=0.15)
        plot.getAxis("left").setWidth(AXIS_W)
        plot.getAxis("left").enableAutoSIPrefix(False)
        title = plot_label(f"Δ {name} (A − B) [{info.unit}]", color="#ffffff", size="8pt")
        title.setParentItem(plot.getViewBox())
        title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 0))
        self.titles.append(title)
        d = difference(self.run, b, name, self.compare_offset, a_values=self.blocks.full(name))
        self.diff_curve = plot.plot(self.run.time, d, pen=pg.mkPen("#ffffff", width=1), connect="finite")
        self.diff_curve.setDownsampling(auto=True, method="peak")
        self.diff_curve.setClipToView(True)
        plot.addItem(pg.InfiniteLine(0.0, angle=0, movable=False, pen=pg.mkPen("#5a6482", width=1)), ignoreBounds=True)
        vb = plot.getViewBox()
        vb.setMouseEnabled(x=False, y=False)
        vb.enableAutoRange(axis="y")
        vb.setAutoVisible(y=True)
        for ax in ("bottom", "top", "right"):
            plot.getAxis(ax).enableAutoSIPrefix(False)
        if self._footer_shown():
            plot.getAxis("bottom").setStyle(showValues=False)
        else:
            plot.setLabel("bottom", "time", units="s")
        self.cursors.append(TimeCursor(self.t_current, pg.mkPen(CURSOR, width=1.5), plot))
        if first is None:
            return plot
        plot.setXLink(first)
        return first

    def difference_values(self) -> np.ndarray | None:
        """The difference curve's data (A − B on A's frames), None without one."""
        return None if self.diff_curve is None else np.asarray(self.diff_curve.yData)

    # ---- a run still being written ---------------------------------------------------------
    def refresh_live(self, blocks: ChannelBlocks):
        """The run grew: read the plotted frames around the x range again (layout kept)."""
        for _ in self.refresh_live_steps(blocks):
            pass
        self._apply_xrange(force=True)

    def refresh_live_steps(self, blocks: ChannelBlocks, frame: int | None = None):
        """`refresh_live` in steps (a generator, one curve per step), loading the frames around the x range
        that `frame` (default: the shown one) will have; showing that frame then only moves the x range."""
        self.blocks = blocks
        self.fact_labels["T Final"].setText(f"{self.run.t_final:.3f} s (running)")
        self.fact_labels["T capture"].setText(capture_text(self.run))   # (known as soon as the solver has it)
        if not self.curves:
            return
        t = float(self.run.time[self.frame if frame is None else min(int(frame), self.run.n_frames - 1)])
        a, b = self._span_for(self._range_at(t))
        data = self.run.time[a:b]
        for name, curve in zip(self.names, self.curves):
            curve.setData(data, blocks.window(name, a, b))
            yield
        self._span = (a, b)
        self._fit_y()
    # ---- time -----------------------------------------------------------------------------
    def set_graph_step(self, seconds: float):
        self.graph_step = float(seconds)
        if abs(self.graph_step_box.value() - seconds) > 1e-9:
            self.graph_step_box.blockSignals(True)
            self.graph_step_box.setValue(seconds)
            self.graph_step_box.blockSignals(False)
        self._apply_xrange(force=True)

    def set_scrolling(self, on: bool):
        """Scrolling window (True) or the whole run (False)."""
        self.scrolling = bool(on)
        self._apply_xrange(force=True)

    def set_window(self, seconds: float):
        self.window = max(float(seconds), 1e-3)
        self._apply_xrange(force=True)

    def set_loop_range_time(self, rng: tuple[float, float] | None):
        """Shade the loop range (run times) in every plot, or hide it for None."""
        self.loop_range_t = rng
        for reg in self.ranges:
            reg.setVisible(rng is not None)
            if rng is not None:
                reg.setRegion(rng)

    def show_frame(self, frame: int):
        """Move the yellow line and the readouts to this frame; scroll the window if needed."""
        if self.run is None:
            return
        if int(frame) > self.frame:
            self._stride = int(frame) - self.frame   # frames per shown frame (playing: the speed's skip)
        self.frame = int(frame)
        self.t_current = float(self.run.time[self.frame])
        for c in self.cursors:
            c.place(self.t_current)
        shown = self.x_range()
        self._apply_xrange()
        self.glw.move_cursors(self.cursors)
        self._update_readout()
        if self.x_range() == shown:     # not in a frame that scrolls (it has enough to draw)
            self._prepare_next()
            self._scroll_ahead()

    def set_playing(self, on: bool):
        """Playing or not (while playing, a scroll step is applied a frame ahead); a pause shows the step's range
        the paused frame belongs to."""
        self.playing = bool(on)
        if not self.playing:
            self._drop_early()

    def _drop_early(self):
        """Back to the x range of the frame shown, if the next step's was applied ahead."""
        if self._early is not None:
            self._early = None
            self.glw.release()
            self._apply_xrange()

    def x_range(self) -> tuple[float, float] | None:
        """The x range shown."""
        return self._early if self._early is not None else self._xrange

    def _scroll_ahead(self):
        """While playing, when the next frame starts a scroll step whose drawings are all made (_prepare_next),
        apply its x range now and keep this frame's pixels (PlotsView.hold): that frame only paints. Pixels and
        cursors are those of the frame shown; anything else than the next frames drops it (_apply_xrange)."""
        if (not self.playing or not self.scrolling or self._early is not None or self._pending
                or self._xrange is None or self._x_master() is None):
            return
        nf = self.frame + max(self._stride, 1)
        if nf >= self.run.n_frames:
            return
        nxt = self._range_at(float(self.run.time[nf]))
        if nxt == self._xrange or nxt != self._next or not self.glw.hold():
            return
        self._early = self._xrange
        self._load_span(nxt)
        self._set_xrange(nxt)

    def _x_master(self):
        if self.plots:
            return self.plots[0]
        return self.diff_plot or (self.footer if self._footer_shown() else None)

    def _apply_xrange(self, force: bool = False):
        if self.run is None or self._x_master() is None:
            return
        rng = self._range_at(self.t_current)
        if self._early is not None:                # the next step's range applied ahead (_scroll_ahead)
            if not force and rng == self._early:   # still the shown step: its pixels are kept
                return
            self._early = None
            self.glw.release()
            if not force and rng == self._xrange:  # the step applied ahead: shown now
                return
        loaded = self._load_span(rng)
        if force or rng != self._xrange:
            self._set_xrange(rng, force)
        elif loaded:
            self._fit_y()
            self._settle_views()

    def _set_xrange(self, rng: tuple[float, float], force: bool = False):
        self._xrange = rng
        self._direct = not force and self._scroll_views(rng)
        if not self._direct:
            self._x_master().setXRange(*rng, padding=0)
        self._fit_y()
        self._settle_views()

    def _x_views(self) -> list:
        """The view boxes on the shared time axis: the plots, the difference plot, the footer."""
        return [p.getViewBox() for p in
                self.plots + [p for p in (self.diff_plot, self.footer if self._footer_shown() else None) if p]]

    def _scroll_views(self, rng: tuple[float, float]) -> bool:
        """Give every x-linked view the x range `rng` in one pass, as their links would (same range, same
        signals to their items and axes) without each view passing the change on to the others; False (nothing
        done) when a view is not a plain follower of the master (auto range, limits, other screen width)."""
        views = self._x_views()
        master = self._x_master().getViewBox()
        g = master.sceneBoundingRect()
        x0, x1 = float(rng[0]), float(rng[1])
        for vb in views:
            st = vb.state
            lo, hi = st["limits"]["xLimits"]
            if (st["autoRange"][0] is not False or st["aspectLocked"] is not False or st["xInverted"]
                    or (lo is not None and x0 < lo) or (hi is not None and x1 > hi)
                    or st["limits"]["xRange"] != [None, None]
                    or (vb is not master and vb.linkedView(0) is not master)):
                return False
            r = vb.sceneBoundingRect()
            if abs(r.left() - g.left()) > 1e-6 or abs(r.width() - g.width()) > 1e-6:
                return False
        changed = []
        for vb in views:
            vb.blockLink(True)
        try:
            for vb in views:
                st = vb.state
                if st["viewRange"][0] == [x0, x1] and st["targetRange"][0] == [x0, x1]:
                    continue
                vb._viewPixelSizeCache = None
                st["targetRange"][0] = [x0, x1]
                st["viewRange"] = [[x0, x1], st["viewRange"][1][:]]
                vb._matrixNeedsUpdate = True
                vb.update()
                changed.append(vb)
            for vb in changed:     # (pyqtgraph's updateViewRange and setRange, for an x change)
                vb.sigXRangeChanged.emit(vb, (x0, x1))
                vb.sigRangeChanged.emit(vb, vb.state["viewRange"], [True, False])
                vb.sigStateChanged.emit(vb)
        finally:
            for vb in views:
                vb.blockLink(False)
        return True

    def _settle_views(self):
        """Apply the new ranges to the views' transforms now: done in the paint (pyqtgraph's default), the
        curves' geometry changes there and Qt paints the plots a second time on the next event-loop turn."""
        for vb in self._x_views():
            vb.prepareForPaint()

    def _fit_y(self, which: int | None = None):
        """Each plot's y range: its curves' data inside the x range, padded as pyqtgraph's auto range pads
        (a cosmetic pen's pixel margin, then the view's suggested padding); set only when it changes."""
        if self._xrange is None:
            return
        for i, plot in enumerate(self.plots):
            if which is not None and i != which:
                continue
            key = self._y_range(i, self._xrange)
            if key is not None and key != self._yfit[i]:
                self._yfit[i] = key
                plot.getViewBox().setRange(yRange=key, padding=0.0)

    def _y_range(self, i: int, xrange: tuple[float, float]) -> tuple[float, float] | None:
        """Plot i's fitted y range for this x range (None: no finite data in it); remembered for the curves' data
        (the next scroll step's range, fitted ahead by _prepare_next, is not measured again when it is shown)."""
        curves = [c for c in (self.curves[i], self._ghost_of.get(i)) if c is not None]
        key = (i, tuple(xrange), self.plots[i].getViewBox().height(),
               tuple((id(c.xData), id(c.yData), c.isVisible()) for c in curves))
        hit = self._ymemo.get(key)
        if hit is not None:
            return hit[0]
        y = self._measure_y(i, xrange)
        if len(self._ymemo) >= 32:
            self._ymemo.clear()
        self._ymemo[key] = (y, [(c.xData, c.yData) for c in curves])   # (the arrays stay alive: ids stay theirs)
        return y

    def _measure_y(self, i: int, xrange: tuple[float, float]) -> tuple[float, float] | None:
        x0, x1 = xrange
        spans = []
        for c in (self.curves[i], self._ghost_of.get(i)):
            if c is not None and c.isVisible() and c.xData is not None and len(c.xData):
                b = visible_bounds(c.xData, c.yData, x0, x1)
                if b is not None:
                    spans.append((b, c.curve.pixelPadding()))
        if not spans:
            return None
        lo, hi = min(b[0] for b, _ in spans), max(b[1] for b, _ in spans)
        vb = self.plots[i].getViewBox()
        h = vb.height()
        if h > 0:
            px = (hi - lo) / h
            lo, hi = min(lo, *(b[0] - p * px for b, p in spans)), max(hi, *(b[1] + p * px for b, p in spans))
        wp = (hi - lo) * vb.suggestPadding(1)
        return lo - wp, hi + wp

    def _prepare_next(self):
        """While playing in a scrolling window, make the next GraphStep's drawings ahead, spread evenly (by their
        rough cost) over the frames left before that step: each line's display data and image, the lane bars, the
        value axes whose range the step changes, the time axes. The scroll then only shows them."""
        if not self.scrolling or self._xrange is None or self.graph_step <= 0:
            self._pending = []
            return
        x0, x1 = self._xrange
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        nxt = scroll_window(x0 + CURSOR_AT * (x1 - x0) + 1.5 * self.graph_step, self.window, self.graph_step, t0, t1)
        if nxt == self._xrange:
            self._pending = []
            return
        if nxt != self._next:
            self._next = nxt
            traces = [(i, c) for i, c in enumerate(self.curves) if isinstance(c, Trace)]
            todo = [(COST_DATA, lambda c=c: c.prepare(*nxt, exact=self._direct)) for _, c in traces]   # display
            todo += [(COST_LINE, lambda i=i, c=c: c.rasterize_ahead(*nxt, self._y_range(i, nxt), self.glw))  # data,
                     for i, c in traces]                                                            # then images
            if self._footer_shown() and callable(getattr(self.footer, "prepare", None)):
                todo.append((COST_BARS, lambda f=self.footer: f.prepare(nxt)))              # (the contact lanes' bars)
            for i, p in enumerate(self.plots):
                y = self._y_range(i, nxt)
                if y is not None and y != self._yfit[i]:
                    todo.append((COST_LABELLED_AXIS, lambda a=p.getAxis("left"), y=y: a.prepare(y)))
            bottoms = [p.getAxis("bottom") for p in self.plots]
            if self._footer_shown():
                bottoms.append(self.footer.getAxis("bottom"))
            todo += [(COST_AXIS if a.has_drawing(nxt) else COST_LABELLED_AXIS if a.style["showValues"] else
                      COST_DRAWN_AXIS, lambda a=a: a.prepare(nxt)) for a in bottoms]
            self._pending = todo
        # frames still to be shown before the step: the step comes when the time passes x0 + GraphStep + the
        # cursor's place in the window
        due = int(np.searchsorted(self.run.time, x0 + self.graph_step + CURSOR_AT * (x1 - x0), side="left"))
        stride = max(self._stride, 1)
        if self.playing and self.scrolling:   # this frame and the next ones before the last one, which applies
            left = (due - self.frame - 1) // (stride + 1)    # the step's range ahead (_scroll_ahead); the frames
        else:                                                # played vary by one (counted long)
            left = (due - self.frame) // stride
        share = sum(c for c, _ in self._pending) / max(1, left)
        done = 0.0
        while self._pending and (done == 0.0 or done + self._pending[0][0] <= share + 1e-9):
            cost, make = self._pending.pop(0)
            done += cost
            make()

    def _range_at(self, t: float) -> tuple[float, float]:
        """The x range at run time t: the scrolling window, or the whole run."""
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        return scroll_window(t, self.window, self.graph_step, t0, t1) if self.scrolling else (t0, t1)

    def _span_for(self, rng: tuple[float, float]) -> tuple[int, int]:
        """Frames to load for an x range: those in it plus a window either side (all frames when not scrolling)."""
        run = self.run
        n = run.n_frames
        if not self.scrolling:
            return 0, n
        a = max(int(np.searchsorted(run.time, rng[0], side="left")) - 1, 0)
        b = min(int(np.searchsorted(run.time, rng[1], side="right")) + 1, n)
        margin = max(b - a, TIME_CHUNK)
        return max(a - margin, 0) // TIME_CHUNK * TIME_CHUNK, min(b + margin, n)

    def _load_span(self, rng: tuple[float, float]):
        """Give the curves the frames of the x range plus a window either side (the whole run when not
        scrolling); read again only when the x range leaves the frames loaded."""
        run = self.run
        n = run.n_frames
        a = max(int(np.searchsorted(run.time, rng[0], side="left")) - 1, 0)
        b = min(int(np.searchsorted(run.time, rng[1], side="right")) + 1, n)
        if self._span is not None and self._span[0] <= a and b <= self._span[1]:
            return False
        a, b = self._span_for(rng)
        self._span = (a, b)
        t = run.time[a:b]
        for name, curve in zip(self.names, self.curves):
            curve.setData(t, self.blocks.window(name, a, b))
        return True

    def loaded_span(self) -> tuple[int, int] | None:
        """Frames [a, b) the curves hold (the x range and a margin; all frames when not scrolling)."""
        return self._span

    def values(self) -> dict[str, float]:
        """The plotted channels' values at the shown frame (what the readout box prints)."""
        if self.run is None:
            return {}
        return {n: self.blocks.value(n, self.frame) for n in self.names}

    def _update_readout(self):
        if self.run is None:
            self.t_label.setText("T Current  —")
            self.readout.setText("")
            return
        self.t_label.setText(f"T Current  {self.t_current:10.4f} s")
        rows = []
        for i, (n, v) in enumerate(self.values().items()):
            col = TRACE_COLORS[i % len(TRACE_COLORS)]
            name, value = (f"{n:<14}", f" {fmt(v, self.run.channels[n].unit):>14}")   # (&nbsp; in texts, not tags)
            rows.append(f"<span style='color:{col}'>{name.replace(' ', '&nbsp;')}</span>{value.replace(' ', '&nbsp;')}")
        self.readout.setText("<br>".join(rows))

    # ---- seeking by click -----------------------------------------------------------------
    def _on_click(self, ev):
        if ev.button() != Qt.LeftButton or self.run is None:
            return
        pos = ev.scenePos()
        self._drop_early()   # (the view boxes map as the pixels show them)
        for plot in self.plots + ([self.footer] if self._footer_shown() else []):
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(pos):
                t = float(vb.mapSceneToView(pos).x())
                ev.accept()
                self.seekRequested.emit(t)
                return

    def cursor_scene_x(self, i: int = 0) -> float:
        """Scene x of the yellow line in plot i (what the user sees; used by tests)."""
        st, _ = self.glw.view_box_place(self.plots[i].getViewBox())
        return float(st.map(QPointF(self.cursors[i].value(), 0.0)).x())


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


def _scroll_area(content: QWidget, background: str) -> QScrollArea:
    """`content` filling a frameless vertical scroll area on `background` (a scroll bar only if it does not fit)."""
    area = QScrollArea(widgetResizable=True, frameShape=QFrame.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    area.setWidget(content)
    area.setStyleSheet(f"QScrollArea, QScrollArea > QWidget {{ background: {background}; }}")
    return area


def plot_color(i: int) -> QColor:
    return QColor(TRACE_COLORS[i % len(TRACE_COLORS)])

