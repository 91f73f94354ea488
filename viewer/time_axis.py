"""An axis that keeps the drawings of its last ranges: scrolling in whole GraphSteps repeats the same tick
layout shifted by whole tick spacings, so a time axis without labels draws each layout once (not on every scroll);
`prepare` draws a range ahead of time (the next scroll step, the y range it will bring)."""
from __future__ import annotations

import math
from collections import OrderedDict
from contextlib import contextmanager

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPicture

from viewer.ahead_image import AheadImages, sole_view
from viewer.plots.pg_internals import tick_settings

KEEP = 64   # drawings kept per axis
KEEP_IMAGES = 32   # of those, as images, for a time axis (~150 kB each: the ticks and grid lines over a view box):
                   # a scroll cycles through the phases of the tick spacing (20 for a 10 s window in 0.1 s steps)


class TimeAxis(pg.AxisItem):
    """pg.AxisItem whose drawing (ticks, grid, labels) is reused for a range it drew before: the key is the
    range's phase within the major tick spacing, its width and the item's size (and the range itself when
    tick labels are shown)."""

    def __init__(self, orientation: str = "bottom", **kw):
        super().__init__(orientation, **kw)
        self._drawn: OrderedDict = OrderedDict()
        self._box_key = self._box = None
        self._sizes_key = self._sizes_val = None
        self._levels_memo: dict = {}
        self.ahead = AheadImages(keep=KEEP_IMAGES if orientation in ("top", "bottom") else 4)   # drawings as
        # images (a value axis' y ranges seldom come back)

    def boundingRect(self):
        """pyqtgraph's bounds (the axis and, with a grid, its view), kept while neither's geometry changes: Qt
        asks for them for every strip it repaints (e.g. the moving time cursor)."""
        view = self.linkedView()
        key = (self.geometry(), None if view is None else view.geometry(), self.grid,
               self.style["hideOverlappingLabels"], self.style["tickLength"])
        if key != self._box_key:
            self._box, self._box_key = super().boundingRect(), key
        return self._box

    def _sizes(self):
        """(width, height of the axis, grid size or (-1, -1)), kept while the axis' and its view's geometry stay."""
        view = self.linkedView()
        key = (self.geometry(), None if view is None else view.geometry(), self.grid)
        if key != self._sizes_key:
            bounds = self.mapRectFromParent(self.geometry())
            grid = None if view is None or self.grid is False else view.mapRectToItem(self, view.boundingRect())
            grid = (-1.0, -1.0) if grid is None else tuple(round(v, 4) for v in grid.getRect())   # (where the grid
            # lines run: axes sharing drawings may sit apart from their views by different fractions of a pixel)
            self._sizes_val, self._sizes_key = (bounds.width(), bounds.height(), grid), key
        return self._sizes_val

    def _levels(self, r0: float, r1: float, length: float):
        """pyqtgraph's tickSpacing (it depends on the range's width and the axis length only), remembered."""
        key = (r1 - r0, length, *tick_settings(self), self.style["maxTickLevel"])
        hit = self._levels_memo.get(key)
        if hit is None:
            if len(self._levels_memo) > 64:
                self._levels_memo.clear()
            hit = self._levels_memo[key] = self.tickSpacing(r0, r1, length)
        return hit

    def _key(self):
        width, height, grid = self._sizes()
        r0, r1 = (float(x) for x in self.range)
        dif = r1 - r0
        length = width if self.orientation in ("top", "bottom") else height
        if not (math.isfinite(dif) and dif > 0 and length > 0):
            return None
        levels = self._levels(r0, r1, length)
        if not levels:
            return None
        major = levels[0][0]
        phase = r0 / major - math.floor(r0 / major)
        where = round(r0, 9) if self.style["showValues"] else None
        return (round(phase, 6) % 1.0, round(dif, 9), round(width, 1), round(height, 1),
                grid, where, self.grid)

    def _draw(self) -> QPicture:
        pic = QPicture()
        painter = QPainter(pic)
        try:
            if self.style["tickFont"]:
                painter.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(painter)
            if specs is not None:
                self.drawPicture(painter, *specs)
        finally:
            painter.end()
        return pic

    def _keep(self, key, pic):
        self._drawn[key] = pic
        while len(self._drawn) > KEEP:
            self._drawn.popitem(last=False)

    def prepare(self, rng) -> bool:
        """Draw the axis for the range `rng` ahead of time (e.g. the next scroll step), keeping what is shown;
        True if a drawing was made. Not for an axis whose SI prefix follows the range."""
        if self.autoSIPrefix or self.linkedView() is None:
            return False
        with self._at(rng):
            key = self._key()
            if key is None:
                return False
            pic = self._drawn.get(key)
            drew = pic is None
            if drew:
                pic = self._draw()
                self._keep(key, pic)
            return self._rasterize(pic) or drew

    def has_drawing(self, rng) -> bool:
        """Whether the axis (or one sharing its drawings) keeps a drawing of the range `rng`: `prepare` then at most
        plays it into an image."""
        with self._at(rng):
            key = self._key()
        return key is not None and key in self._drawn

    @contextmanager
    def _at(self, rng):
        """The axis set to the range `rng` for drawing ahead; what it shows is set back after."""
        shown = self.range
        self.range = [float(rng[0]), float(rng[1])]
        try:
            yield
        finally:
            self.range = shown

    def share_drawings(self, store: OrderedDict):
        """Keep the drawings in `store`, shared with axes built alike (same style, pens and font): a drawing's key
        holds the range, the axis' size and its grid's, not the style."""
        self._drawn = store

    def _rasterize(self, pic: QPicture) -> bool:
        """Play an axis' drawing into an image, as it paints in its view; True if made now. Unlabelled, its lines
        are drawn once each (blending the image gives the same pixels); labelled, only as an item-cached axis
        (the cache draws it as an image too)."""
        view = sole_view(self)
        if view is None or (self.style["showValues"] and self.cacheMode() != self.CacheMode.DeviceCoordinateCache):
            return False
        t = self.sceneTransform() * view.viewportTransform()   # (item to viewport: the paint's transform)
        return self.ahead.make(pic, t, t.mapRect(QRectF(pic.boundingRect()).united(self.boundingRect())), pic.play)

    def paint(self, p, opt, widget):
        if self.picture is None:
            key = self._key()
            pic = self._drawn.get(key) if key is not None else None
            if pic is None:
                pic = self._draw()
                if key is not None:
                    self._keep(key, pic)
            self.picture = pic
        if self.ahead.show(p, self.picture):   # (the view's transform, or the item cache's: whole px apart)
            return
        self.picture.play(p)

    def _forget(self):
        if hasattr(self, "_drawn"):
            self.ahead.clear()
            self._drawn.clear()
            self._levels_memo.clear()
            self._sizes_key = None

    def setStyle(self, **kw):
        self._forget()
        return super().setStyle(**kw)

    def setGrid(self, grid):
        self._forget()
        return super().setGrid(grid)

    def setPen(self, *a, **kw):
        self._forget()
        return super().setPen(*a, **kw)

    def setTextPen(self, *a, **kw):
        self._forget()
        return super().setTextPen(*a, **kw)

    def setTickPen(self, *a, **kw):
        self._forget()
        return super().setTickPen(*a, **kw)

    def setTickFont(self, font):
        self._forget()
        return super().setTickFont(font)

    def resizeEvent(self, ev=None):
        self._forget()
        return super().resizeEvent(ev)

    def setTicks(self, ticks):
        self._forget()
        return super().setTicks(ticks)

    def setTickSpacing(self, *a, **kw):
        self._forget()
        return super().setTickSpacing(*a, **kw)

    def setScale(self, scale=None):
        self._forget()
        return super().setScale(scale)

    def setLogMode(self, *a, **kw):
        self._forget()
        return super().setLogMode(*a, **kw)

    def setTickDensity(self, density=1.0):
        self._forget()
        return super().setTickDensity(density)
