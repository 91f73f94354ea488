"""Contact lanes under the plots: one lane per contact pair, each contact interval a bar on the time axis
coloured by its peak normal force; a yellow T Current line and the dashed capture line as in the plots."""
from __future__ import annotations

import math
import re

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QLinearGradient, QPainter, QPicture
from PySide6.QtWidgets import QGraphicsItem
from pyqtgraph.graphicsItems.GraphicsWidgetAnchor import GraphicsWidgetAnchor

from solver.contact_events import EventTable
from viewer.ahead_image import AheadImages, sole_view, view_box_transform
from viewer.plots.axes import AXIS_W
from viewer.plots.pg_internals import bar_drawing
from viewer.plots.view import CursorLine, TimeCursor
from viewer import style
from viewer.numbers import force_text
from viewer.time_axis import TimeAxis

LANE_PX = 15          # height of one lane
SCALE_W, SCALE_H = 64, 7   # px of the force scale's colour ramp
MAX_EMPTY_LANES = 8   # up to this many pairs every pair gets a lane; beyond it, only the pairs that touch,
                      # and pairs numbered alike (name_1, name_2, ...) share one lane
AXIS_PX = 34          # the time axis under the lanes
LABEL_CHARS = 20      # lane names have at most this many characters (the left axis is AXIS_W px wide)
FORCE_COLORS = style.FORCE_SCALE   # low .. high peak force


def pair_title(label: str, pair: str, chars: int) -> str:
    """A contact pair as a lane or the events dock names it in at most `chars` characters: its label, else its
    run-file name in words (petal_ring_1 -> "petal ring 1"), else the label cut."""
    for text in (label, pair.replace("_", " ")):
        if len(text) <= chars:
            return text
    return label[:chars - 1].rstrip(" ,") + "\u2026"


def force_colormap() -> pg.ColorMap:
    return pg.ColorMap(np.linspace(0.0, 1.0, len(FORCE_COLORS)), FORCE_COLORS)


def lane_key(pair: str) -> str:
    """The lane a pair shares with its numbered siblings: pad_3 -> pad."""
    return re.sub(r"_\d+$", "", pair)


def _small_font() -> QFont:
    f = QFont()
    f.setPointSizeF(style.SMALL_PT)
    return f


class ForceScale(pg.GraphicsObject, GraphicsWidgetAnchor):
    """The lanes' colour scale: "peak normal force 0 [colour ramp] 2.33 kN", a gradient through FORCE_COLORS
    (anchored at the bottom right, in the time axis' label row: under the lanes, never over a bar)."""

    def __init__(self):
        pg.GraphicsObject.__init__(self)
        GraphicsWidgetAnchor.__init__(self)
        self.text = ""              # what it says, as plain text ("peak normal force 0 … 2.33 kN", "no contacts")
        self._parts: tuple = ()     # (prefix, max text) when a scale is shown
        self._prefixes: tuple = ()  # the prefix and shorter ones, for a narrow pane (see fit)
        self._font = _small_font()
        self._fm = QFontMetricsF(self._font)
        self._rect = QRectF()

    def set_scale(self, prefix: str, max_text: str, shorter: tuple[str, ...] = ()):
        """The scale from 0 to `max_text`, after `prefix` (or the first of `shorter` prefixes that `fit` picks)."""
        self._prefixes = (prefix,) + tuple(shorter)
        self._set_parts(prefix, max_text)

    def _set_parts(self, prefix: str, max_text: str):
        self.prepareGeometryChange()
        self._parts = (prefix, max_text)
        self.text = f"{prefix}0 … {max_text}"
        self._layout()

    def fit(self, width: float):
        """Take the longest prefix with which the scale is at most `width` px wide (the shortest if none is)."""
        if not self._parts:
            return
        fm, top = self._fm, self._parts[1]
        rest = fm.horizontalAdvance("0 ") + SCALE_W + fm.horizontalAdvance(" " + top) + 2
        prefix = next((q for q in self._prefixes if fm.horizontalAdvance(q) + rest <= width), self._prefixes[-1])
        if prefix != self._parts[0]:
            self._set_parts(prefix, top)

    def setText(self, text: str):
        """A note instead of a scale ("no contacts", or "" for none)."""
        self.prepareGeometryChange()
        self._parts = ()
        self.text = text
        self._layout()

    def _layout(self):
        fm = self._fm
        if self._parts:
            prefix, top = self._parts
            w = fm.horizontalAdvance(prefix + "0 ") + SCALE_W + fm.horizontalAdvance(" " + top)
        else:
            w = fm.horizontalAdvance(self.text)
        self._rect = QRectF(0, 0, w + 2, fm.height())
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def ramp_rect(self) -> QRectF:
        """Where the colour ramp is drawn (item coordinates); empty when no scale is shown."""
        if not self._parts:
            return QRectF()
        x = self._fm.horizontalAdvance(self._parts[0] + "0 ")
        return QRectF(x, (self._rect.height() - SCALE_H) / 2, SCALE_W, SCALE_H)

    def paint(self, p: QPainter, *args):
        p.setFont(self._font)
        base = self._fm.ascent()
        key = QColor(style.KEY_TEXT)
        if not self._parts:
            p.setPen(key)
            p.drawText(QPointF(0, base), self.text)
            return
        prefix, top = self._parts
        p.setPen(key)
        p.drawText(QPointF(0, base), prefix)
        x = self._fm.horizontalAdvance(prefix)
        p.setPen(QColor(*FORCE_COLORS[0]))
        p.drawText(QPointF(x, base), "0")
        ramp = self.ramp_rect()
        grad = QLinearGradient(ramp.topLeft(), ramp.topRight())
        for k, c in enumerate(FORCE_COLORS):
            grad.setColorAt(k / (len(FORCE_COLORS) - 1), QColor(*c))
        p.fillRect(ramp, grad)
        p.setPen(QColor(*FORCE_COLORS[-1]))
        p.drawText(QPointF(ramp.right() + self._fm.horizontalAdvance(" "), base), top)


class LaneBars(pg.BarGraphItem):
    """Contact-interval bars that paint only the bars inside the shown time span (a scrolling window shows
    a few of a long run's hundreds of events); drawn through a QPicture like pyqtgraph's own bars."""

    def __init__(self, **opts):
        super().__init__(**opts)
        self._left = np.asarray(opts["x0"], float)
        self._right = np.asarray(opts["x1"], float)
        self._drawn: dict = {}        # the bars drawn (indices) -> their drawing: a scroll step mostly shows the
                                      # same bars, the next step's are drawn ahead (prepare)
        self.ahead = AheadImages(keep=3)   # drawings as images for the view's transform of a range
        self._ahead_range: dict = {}       # id(drawing) -> the x range its image was made for (cut at its ends)

    def _picture(self, lo: float, hi: float, pixel: float) -> tuple[QPicture, bool]:
        """The drawing of the bars in [lo, hi] (pixel: the view's x units per pixel); True if made now."""
        pad = 4.0 * pixel                                   # a cosmetic 1 px outline just outside still shows
        which = np.flatnonzero((self._right >= lo - pad) & (self._left <= hi + pad))
        key = which.tobytes()
        pic = self._drawn.get(key)
        if pic is not None:
            return pic, False
        rects, pens, brushes = bar_drawing(self)
        pic = QPicture()
        pp = QPainter(pic)
        for i in which:
            pp.setPen(pens[i])
            pp.setBrush(brushes[i])
            pp.drawRect(rects[i])
        pp.end()
        if len(self._drawn) >= 4:
            self._drawn.pop(next(iter(self._drawn)))
        self._drawn[key] = pic
        return pic, True

    def prepare(self, rng) -> bool:
        """Draw the bars of the x range `rng` ahead (the next scroll step; the view keeps its width), as a
        picture and as the image the view will paint (opaque bars: the same pixels)."""
        vb = self.getViewBox()
        if vb is None or vb.width() <= 0:
            return False
        pic, made = self._picture(float(rng[0]), float(rng[1]), (rng[1] - rng[0]) / vb.width())
        view = sole_view(self)
        placed = view_box_transform(self, vb, rng, None, view) if view is not None else None
        if placed is None:
            return made
        drawn = self.ahead.make(pic, placed[0], placed[1], pic.play, placed[1])
        if drawn:
            self._ahead_range[id(pic)] = (float(rng[0]), float(rng[1]))
        return drawn or made

    def paint(self, p, *args):
        vb = self.getViewBox()
        if vb is None:
            return super().paint(p, *args)
        (lo, hi), _ = vb.viewRange()
        pic = self._picture(lo, hi, self.pixelWidth() or 0.0)[0]
        made_for = self._ahead_range.get(id(pic))   # an image cut to another range's view box (the same bars,
        same = made_for is not None and all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)   # moved by whole
                                            for a, b in zip(made_for, (lo, hi)))                # pixels) is not shown
        if not (same and self.ahead.show(p, pic)):
            pic.play(p)


class ContactLanes(pg.PlotItem):
    """Lanes of contact intervals on the shared time axis (x-linked to the plots by the plots pane)."""

    def __init__(self):
        super().__init__(axisItems={"bottom": TimeAxis("bottom")})   # scrolls reuse its tick drawings
        self.setMenuEnabled(False)
        self.hideButtons()
        self.showGrid(x=True, y=False, alpha=0.15)
        left = self.getAxis("left")
        left.setWidth(AXIS_W)
        left.setStyle(tickLength=0, tickFont=_small_font())
        left.setTextPen(style.LANE_TEXT)
        left.setTicks([[]])
        for ax in ("left", "bottom", "top", "right"):   # hidden ones too: their label is re-laid out on every scroll
            self.getAxis(ax).enableAutoSIPrefix(False)
        self.getAxis("bottom").setStyle(maxTickLevel=1, maxTextLevel=1)
        self.setLabel("bottom", "time", units="s")
        left.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # the lane names: blitted on a scroll
        vb = self.getViewBox()
        vb.setMouseEnabled(x=False, y=False)
        vb.setDefaultPadding(0.0)
        self.table: EventTable | None = None
        self.pairs: list[str] = []
        self.lanes: list[str] = []                  # lane keys, top to bottom
        self.names: list[str] = []                  # each lane's name as shown (see pair_title)
        self._lane_index: dict[str, int] = {}       # pair -> lane
        self.max_force = 0.0
        self.cmap = force_colormap()
        self.bars: LaneBars | None = None
        self.cursor = TimeCursor(0.0, pg.mkPen(style.CURSOR, width=1.5), self)   # drawn by the plots pane's view
        self.capture = CursorLine(0.0, pg.mkPen(style.CAPTURE, width=1, style=Qt.DashLine))
        self.capture.setVisible(False)
        self.addItem(self.capture, ignoreBounds=True)
        self.force_legend = ForceScale()     # right of the time axis' label, under the lanes
        self.force_legend.setParentItem(self)
        self.force_legend.anchor(itemPos=(1, 1), parentPos=(1, 1), offset=(-4, -1))
        self.geometryChanged.connect(self._fit_legend)
        self.time = np.zeros(1)
        style.observe(self.apply_theme)

    def apply_theme(self):
        """View → Theme: the lane names', T Current's and capture line's colours (style.observe calls it)."""
        self.getAxis("left").setTextPen(style.LANE_TEXT)
        self.cursor.pen = pg.mkPen(style.CURSOR, width=1.5)
        self.capture.setPen(pg.mkPen(style.CAPTURE, width=1, style=Qt.DashLine))
        self.force_legend.update()
        self.update()

    def height_px(self) -> int:
        """Height the lanes want in the plots pane: one lane per pair plus the time axis (and its force scale)."""
        return LANE_PX * max(len(self.lanes), 1) + AXIS_PX

    def set_events(self, table: EventTable | None, run=None):
        """Show a run's contact events (None clears)."""
        vb = self.getViewBox()
        if self.bars is not None:
            self.removeItem(self.bars)
            self.bars = None
        self.table = table
        self.pairs = list(table.pairs) if table is not None else []
        grouped = table is not None and len(table) and len(self.pairs) > MAX_EMPTY_LANES
        if grouped:
            touched = sorted(set(int(i) for i in table.pair_index))   # many pairs: only the pairs that touch
            self.pairs = [table.pairs[i] for i in touched]
        keys = [lane_key(p) if grouped else p for p in self.pairs]
        self.lanes = list(dict.fromkeys(keys))
        self._lane_index = {p: self.lanes.index(k) for p, k in zip(self.pairs, keys)}
        lane = np.zeros(0, int)
        if table is not None and len(table):
            lane = np.array([self._lane_index[table.pairs[int(i)]] for i in table.pair_index], int)
        self.time = run.time if run is not None else np.zeros(1)
        n = max(len(self.lanes), 1)
        vb.setYRange(0, n, padding=0)
        labels = {}
        for p, k in zip(self.pairs, keys):
            text = table.labels.get(p, p)
            text = re.sub(r"\s+\d+$", "", text) if k != p else text
            labels.setdefault(k, pair_title(text, k, LABEL_CHARS))
        self.getAxis("left").setTicks([[(n - 1 - i + 0.5, labels[k]) for i, k in enumerate(self.lanes)]])
        self.names = [labels[k] for k in self.lanes]
        tc = run.t_capture if run is not None else math.nan
        self.capture.setVisible(math.isfinite(tc))
        if math.isfinite(tc):
            self.capture.setPos(tc)
        if table is None or len(table) == 0:
            self.max_force = 0.0
            self.force_legend.setText("no contacts" if table is not None else "")
            return
        self.max_force = float(np.nanmax(table.peak_force)) if len(table) else 0.0
        colors = self.colors()
        brushes = [pg.mkBrush(*c) for c in colors]
        pens = [pg.mkPen(*c, width=1) for c in colors]          # cosmetic: a 1 ms contact is still 1 px wide
        y0 = n - 1 - lane + 0.18
        self.bars = LaneBars(x0=table.start, x1=np.maximum(table.end, table.start), y0=y0, height=0.64,
                              brushes=brushes, pens=pens)
        self.addItem(self.bars)
        approx = "≈ recomputed from frames: " if table.approximate else ""   # see EventTable.describe
        self.force_legend.set_scale(f"{approx}peak normal force ", force_text(self.max_force),
                                    (f"{approx}peak force ", f"{approx}peak ", approx, ""))
        self._fit_legend()

    def _fit_legend(self):
        """The force scale keeps right of the time axis' label "time (s)": shorter words where the pane is narrow."""
        label = self.getAxis("bottom").label
        right = label.mapRectToItem(self, label.boundingRect()).right() if label.isVisible() else 0.0
        self.force_legend.fit(self.width() - right - 12)

    def colors(self) -> list[tuple[int, int, int]]:
        """RGB of each event's bar (by its peak normal force relative to the run's largest)."""
        if self.table is None or len(self.table) == 0:
            return []
        frac = self.table.peak_force / self.max_force if self.max_force > 0 else np.zeros(len(self.table))
        rgba = self.cmap.map(np.clip(np.nan_to_num(frac), 0, 1), mode="byte")
        return [tuple(int(c) for c in row[:3]) for row in rgba]

    def lane_of(self, pair: str) -> float:
        """Centre y of a pair's lane (view coordinates)."""
        return len(self.lanes) - 1 - self._lane_index[pair] + 0.5

    def prepare(self, rng) -> bool:
        """Draw the bars of the x range `rng` ahead (PlotsPane: the next scroll step)."""
        return self.bars is not None and self.bars.isVisible() and self.bars.prepare(rng)

    def show_frame(self, frame: int):
        if len(self.time) > 1 or self.table is not None:
            self.cursor.setPos(float(self.time[min(max(int(frame), 0), len(self.time) - 1)]))
