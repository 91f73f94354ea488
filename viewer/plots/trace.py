"""A plotted channel (`Trace`) and its line (`TraceCurve`): display data remembered per x range and the next
scroll step's made ahead, so a scroll only shows them; the line drawn ahead as an image, the lines of a plot's
overlaid channels into one image (`PlotLines`)."""
from __future__ import annotations

import bisect
import math
import warnings

import numpy as np
import shiboken6
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsView

from viewer.ahead_image import AheadImages, sole_view, view_box_transform
from viewer.plots.pg_internals import DataItemHooks, curve_class, exporting, give_curve_data


class TraceCurve(pg.PlotCurveItem):
    """A plotted line that can be drawn ahead (`rasterize`) for the transform it will be painted with; that paint
    shows the image. An opaque, 1 px, not antialiased line only (its pixels are the same either way)."""

    def __init__(self, *args, **kw):
        self.ahead = AheadImages(keep=3)   # the shown range's line, the next one's
        self._ahead_pen = None             # the pen they are drawn with
        self.lines: PlotLines | None = None   # the plot's lines drawn together (several channels in one plot)
        super().__init__(*args, **kw)

    def _opaque_line(self) -> bool:
        o = self.opts
        pen = o["pen"]
        return (o["fillLevel"] is None and o["shadowPen"] is None and not o["stepMode"] and o["compositionMode"] is None
                and not o["antialias"] and not exporting(self) and pen is not None and pen.isCosmetic()
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
        if self.lines is not None and self.lines.paint(p, self):
            return
        if (self.path is not None and self._opaque_line() and self.opts["pen"] == self._ahead_pen
                and self.ahead.show(p, self.path)):
            return
        super().paint(p, opt, widget)


class PlotLines:
    """The lines of one plot's channels drawn ahead into one image: the first curve's paint blends it, the others
    (painted next, in the same paint) draw nothing. Opaque 1 px lines drawn in paint order give the same pixels
    as one image per line, at a third of the pixels blended for three channels in a plot (one image per plot)."""

    def __init__(self, curves: list[TraceCurve]):
        self.curves = list(curves)
        self.ahead = AheadImages(keep=3)   # content: the first curve's path; the others' paths in _made
        self._made: dict = {}              # id(first path) -> (every curve's path, their pens)
        self._shown = None                 # (paint serial, id(painter), paths) of the image's last paint
        for c in self.curves:
            c.lines = self

    def release(self):
        for c in self.curves:
            c.lines = None
        self.curves = []

    def _line_pens(self) -> tuple:
        return tuple(QPen(c.opts["pen"]) for c in self.curves)

    def rasterize(self, paths: list, transform: QTransform, clip: QRectF) -> bool:
        """Draw every curve's `paths` (their order) under `transform` into one image clipped to `clip`; True if
        drawn now. Only opaque lines (TraceCurve._opaque_line)."""
        if not all(c._opaque_line() for c in self.curves) or len(paths) != len(self.curves):
            return False
        pens = self._line_pens()
        if self._made and next(iter(self._made.values()))[1] != pens:
            self.ahead.clear()
            self._made.clear()

        def draw(q: QPainter):
            q.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            for path, pen in zip(paths, pens):
                q.setPen(pen)
                q.drawPath(path)
        done = self.ahead.make(paths[0], transform, clip, draw, clip)
        if done:
            self._made[id(paths[0])] = (tuple(paths), pens)
            for k in [k for k in self._made if not self.ahead.holds_id(k)]:
                self._made.pop(k)
        return done

    def paint(self, p: QPainter, curve: TraceCurve) -> bool:
        """Paint `curve`'s line from the plot's image; True if it is drawn (by this paint or the first curve's)."""
        view = sole_view(curve)
        serial = getattr(view, "paint_serial", None)
        if curve is not self.curves[0]:
            s = self._shown
            k = self.curves.index(curve) if s is not None else -1
            return s is not None and s[0] == serial and s[1] == _painter_id(p) and s[2][k] is curve.path
        self._shown = None
        paths = tuple(c.path for c in self.curves)
        made = self._made.get(id(paths[0])) if paths[0] is not None else None
        if (serial is None or made is None or any(a is not b for a, b in zip(made[0], paths))
                or not all(c.isVisible() and c._opaque_line() for c in self.curves) or made[1] != self._line_pens()
                or not self.ahead.show(p, paths[0])):
            return False
        self._shown = (serial, _painter_id(p), paths)
        return True


class Trace(DataItemHooks):
    """A plotted channel whose display data (clipped to the x range, peak-downsampled) is remembered per x range:
    the next scroll step's is made ahead (`prepare`), so a scroll only shows it. Same data as pyqtgraph makes;
    any case this does not cover (other modes, y clipping by dynamicRangeLimit) goes to pyqtgraph."""

    KEEP = 4   # x ranges remembered

    def __init__(self, *args, **kw):
        self._shown: dict = {}   # (x0, x1, ds, dataset id) -> (display PlotDataset, the dataset)
        self._shown_key = None   # the key of what shown_dataset holds
        self._dx = None          # (dataset, its mean sample spacing)
        self._paths: dict = {}   # key of _shown -> (the curve's QPainterPath made ahead, connect, skipFiniteCheck)
        self._given = None       # (the curve's x, y arrays, their bounds) set by viewRangeChanged
        with curve_class(TraceCurve):   # (its line: a TraceCurve)
            super().__init__(*args, **kw)
        self.curve.dataBounds = self._curve_bounds   # (the curve's boundingRect asks after every scroll)

    def _plain(self) -> bool:
        o = self.opts
        d = self.dataset()
        return (d is not None and o["clipToView"] and o["autoDownsample"] and o["downsampleMethod"] == "peak"
                and not (o["fftMode"] or o["derivativeMode"] or o["phasemapMode"] or o["subtractMeanMode"])
                and True not in o["logMode"] and not isinstance(o["connect"], np.ndarray)
                and d.x.dtype != bool and d.y.dtype != bool and len(d.x) > 1)

    def _ds(self, x0: float, x1: float, vb) -> int:
        """pyqtgraph's auto-downsampling factor for this x range (without its hysteresis step)."""
        d = self.dataset()
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
        key = (x0, x1, ds, id(self.dataset()))
        out = self._shown.get(key)
        if out is None:
            x, y = self.dataset().x, self.dataset().y
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
            out = PlotDataset(x, y, self.dataset().xAllFinite, self.dataset().yAllFinite, None)
            if len(self._shown) >= self.KEEP:
                old = next(iter(self._shown))
                self._shown.pop(old)
                self._paths.pop(old, None)
            self._shown[key] = (out, self.dataset(), (finite_bounds(x), finite_bounds(y)))   # (the dataset stays alive: its
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
        data = self.dataset().dataRect()
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
            if math.isclose(ds, self.last_downsample, rel_tol=0.01):
                ds = self.last_downsample
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
            if key[0] == x0 and math.isclose(key[1], x1, rel_tol=1e-12) and key[3] == id(self.dataset()):
                done |= c.rasterize(made[0], *placed)
        return done

    def made_paths(self, x0: float, x1: float) -> list:
        """The lines of x range [x0, x1] made ahead (`prepare`: that range, and the one an x link gives)."""
        return [made[0] for key, made in self._paths.items()
                if key[0] == x0 and math.isclose(key[1], x1, rel_tol=1e-12) and key[3] == id(self.dataset())]

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
        self.shown_dataset = None
        data = self.display_dataset()
        c = self.curve
        if data is None or self._shown_key is None or self._curve_connect(data) != (c.opts["connect"],
                                                                                     c.opts["skipFiniteCheck"]):
            return self.updateItems(styleUpdate=False)
        if c.xData is data.x and c.yData is data.y:
            return
        x, y = data.x.view(np.ndarray), data.y.view(np.ndarray)
        shown = self._shown.get(self._shown_key)
        self._given = (x, y, shown[2]) if shown is not None and shown[0] is data else None
        made = self._paths.get(self._shown_key)
        give_curve_data(c, x, y, made[0] if made is not None else None)   # (PlotCurveItem.updateData)

    def _fast_range_ok(self) -> bool:
        """Whether an x range change only changes the curve's data (a plain line: no symbols, fill, steps)."""
        o, c = self.opts, self.curve
        return (self._plain() and o["pen"] is not None and o["symbol"] is None and o["fillLevel"] is None
                and not c.opts["stepMode"] and c.isVisible() and len(c.xData if c.xData is not None else ()) > 0
                and not (self.getViewBox() is None or self.getViewBox().autoRangeEnabled()[0]))

    def display_dataset(self):
        vb = self.getViewBox()
        if vb is None or not self._plain() or vb.autoRangeEnabled()[0]:
            self._shown_key = None
            return self.pyqtgraph_display_dataset()
        rect = vb.viewRect()
        if self._y_clipped(rect):
            self._shown_key = None
            return self.pyqtgraph_display_dataset()
        ds = self._ds(rect.left(), rect.right(), vb)
        if math.isclose(ds, self.last_downsample, rel_tol=0.01):
            ds = self.last_downsample
        self.last_downsample = ds
        key = (rect.left(), rect.right(), ds, id(self.dataset()))
        if self.shown_dataset is None or key != self._shown_key:
            self.shown_dataset, self._shown_key = self._display(rect.left(), rect.right(), ds)
        self.setProperty("xViewRangeWasChanged", False)
        self.setProperty("yViewRangeWasChanged", False)
        return self.shown_dataset

    def setData(self, *args, **kw):
        self._shown, self._shown_key, self._paths = {}, None, {}    # (also called by PlotDataItem.__init__)
        return super().setData(*args, **kw)


def finite_bounds(d: np.ndarray) -> tuple:
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


def _painter_id(p: QPainter) -> int:
    """The painter's C++ object (its Python wrapper may differ between the items' paint calls)."""
    return shiboken6.getCppPointer(p)[0]


def rasterize_plot_ahead(traces: list[Trace], x0: float, x1: float, y, view: QGraphicsView) -> bool:
    """Draw the lines of x range [x0, x1] of a plot's traces (made ahead, `Trace.prepare`) into the plot's one image
    (`PlotLines`) as `view` will paint them at that x range and y range `y`; True if drawn now."""
    lines = traces[0].curve.lines if traces and isinstance(traces[0].curve, TraceCurve) else None
    if lines is None or [t.curve for t in traces] != lines.curves:
        return False
    placed = [view_box_transform(t.curve, t.getViewBox(), (x0, x1), y, view) for t in traces]
    if placed[0] is None or any(q is None or q[0] != placed[0][0] for q in placed):
        return False
    made = [t.made_paths(x0, x1) for t in traces]
    if not made[0] or any(len(m) != len(made[0]) for m in made):
        return False
    done = False
    for paths in zip(*made):
        done |= lines.rasterize(list(paths), *placed[0])
    return done
