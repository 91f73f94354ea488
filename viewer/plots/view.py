"""The plots' view (`PlotsView`) and the time lines it shows: the yellow T Current cursors it draws over the scene
from a kept picture, and scene lines (`CursorLine`) that never take part in auto range."""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QLineF, QPoint, QPointF, QRect, QRectF, QSize
from PySide6.QtGui import QImage, QPainter, QRegion, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView

from viewer.plots.pg_internals import LineBoundsHook, set_line_span, settle_matrix


class CursorLine(LineBoundsHook):
    """A vertical time line that never takes part in the plot's auto range: moving it each frame does not make
    the view recompute its data bounds (pyqtgraph informs the view of every move of an item otherwise)."""

    def __init__(self, t: float, pen, z: float = 0.0):
        super().__init__(t, angle=90, movable=False, pen=pen)
        if z:
            self.setZValue(z)

    def informViewBoundsChanged(self):
        pass

    def compute_bounds(self):
        """pyqtgraph's bounds, kept while the view's y range, x width and size stay: a vertical line's bounds in
        its own coordinates (the y range along it, a few pixels across) do not depend on where it or the x range
        sits along x (moving it each frame, or scrolling the window, needs no new bounds)."""
        vb = self.getViewBox()
        key = None
        if isinstance(vb, pg.ViewBox):     # (not yet in a view box: pyqtgraph gives the view widget)
            (x0, x1), (y0, y1) = vb.viewRange()
            key = (round(x1 - x0, 9), y0, y1, vb.width(), vb.height(), self.span) if self.angle == 90 else \
                (x0, x1, y0, y1, vb.width(), vb.height(), self.span)
            if key == getattr(self, "_bounds_key", None):
                return self.last_bounds()
        br = self.pyqtgraph_bounds()
        self._bounds_key = key
        return br


def plot_label(text: str, tight: bool = False, **kw) -> pg.LabelItem:
    """pg.LabelItem whose text is painted from a pixmap cache: a scroll repaints it without laying out its text
    again (the same pixels); `tight`: no margin around the text (a plot's legend: the strip kept free of data)."""
    label = pg.LabelItem(text, **kw)
    label.item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    if tight:
        label.item.document().setDocumentMargin(0)
        label.setText(text, **{k: v for k, v in kw.items() if k in ("color", "size", "bold", "italic")})
    return label


def keep_legend_clear(plot: pg.PlotItem, top_px: float) -> None:
    """The plot's vertical lines (capture, hover, measuring cursors, loop range edges) stop under the strip of
    `top_px` px at the top of its view box that holds its legend: no line crosses the legend's text."""
    vb = plot.getViewBox()
    h = vb.height()
    top = 1.0 if h <= 0 else max(0.0, 1.0 - top_px / h)
    for item in plot.items:                 # (vb.addedItems leaves out items added with ignoreBounds)
        for ln in item.lines if isinstance(item, pg.LinearRegionItem) else (item,):
            if isinstance(ln, pg.InfiniteLine) and ln.angle == 90 and ln.span != (0.0, top):
                set_line_span(ln, 0.0, top)


class TimeCursor:
    """The yellow T Current line of one plot: drawn by its PlotsView over the scene, not a scene item, so moving
    it repaints two thin strips of the view from the view's kept picture (no plot item paints again)."""

    def __init__(self, t: float, pen, plot: pg.PlotItem):
        self._t = float(t)
        self.pen = pen
        self.plot = plot
        self.view: PlotsView | None = None   # set by the view drawing it
        self.top_px = 0.0                    # px at the top of its view box it leaves free (its plot's legend)

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
        self.paint_serial = 0              # counts the scene's paints (plot items tell one paint from the next)
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
                out.append((c, x, box.top() + c.top_px, box.bottom(), box.left(), box.right()))
        return out

    def view_box_place(self, vb) -> tuple[QTransform, QRectF]:
        """(scene transform of the view box's items, its box in the viewport: what it clips them to) as its pixels
        show it (held, see hold)."""
        held = self.held.get(id(vb)) if self.held is not None else None
        if held is not None:
            return held
        settle_matrix(vb)
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
        seen = region.intersected(vp.visibleRegion())   # (scrolled out of the plots pane: never painted, not kept)
        p = None
        if (self._shot is not None and (seen.subtracted(strips).isEmpty() or self.held is not None)
                and seen.subtracted(self._valid).isEmpty()):
            p = QPainter(vp)                         # only cursor moves (or held): the scene is as in the copy
            p.setClipRegion(region)
            p.drawImage(QPoint(0, 0), self._shot)
        else:
            self.paint_serial += 1
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
