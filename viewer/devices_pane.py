"""Middle pane: the docking mechanism's devices drawn schematically at the current frame (QPainter).

Left: probe and housing (points 1 head centre, 2 bending joint, 3 mechanism joint). Centre: axial damper
bars. Right: lateral damper bars placed as seen from the probe head. Red = positive, blue = negative.
"""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QPen, QPixmap, QStaticText, QTransform
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from solver.runfile import RunFile
from viewer import style
from viewer.channel_blocks import ChannelBlocks

BACKGROUND = QColor(style.BACKGROUND)
FRAME = QColor(style.FRAME)
TEXT = QColor(style.TEXT)
DIM = QColor(style.KEY_TEXT)
POSITIVE = QColor(*style.POSITIVE)
NEGATIVE = QColor(*style.NEGATIVE)
PROBE = QColor(*style.PROBE)
HOUSING = QColor(*style.HOUSING)
BAR_BACKGROUND = QColor(*style.BAR_BACKGROUND)
FULL = QColor(*style.FULL_SCALE)    # outline of a bar at or beyond its full scale
NO_RANGE = "no range"               # on a bar whose channel has no range in the file: its value, never a fill
NO_RANGE_HATCH = QColor(*style.NO_RANGE_HATCH)  # hatching of a bar without a range (its "no range" shows where the value leaves room)
ANGLE_GAINS = (10.0, 5.0, 2.0, 1.0)  # angles are drawn magnified by the largest gain that keeps the run in view
PROBE_W = 300   # px the probe and housing box wants (its numbers take 178), up to 40 % of the pane
AXIAL_BAR_MIN_W = 90   # px of an axial bar beside its name (its value: "+0.000 rpm")
_MARK_R = 9   # px: half the size of a numbered point's image (its ring has radius 7 and a 1.5 px pen)

TITLES = (("probe and housing (1 head, 2 bending joint, 3 mechanism joint)", "probe and housing"),   # long to
          ("axial damper",), ("lateral damper (view from the probe head)", "lateral damper"))       # short
PROBE_CHANNELS = ("head_offset_y", "head_offset_z", "probe_bend_y", "probe_bend_z",
                  "housing_angle_y", "housing_angle_z", "probe_stroke")


def _device_order(name: str) -> tuple[int, str]:
    n = name.lower()
    for rank, key in enumerate(("spring", "friction", "magnetic", "xlimd", "lim")):
        if key in n:
            return rank, n
    return 9, n


def fill_fraction(value: float, full_scale: float) -> float:
    """Share of a bar to fill: |value| / full scale, clamped to [0, 1]; 0 for NaN."""
    if not math.isfinite(value) or not (full_scale > 0):
        return 0.0
    return min(abs(value) / full_scale, 1.0)


def range_text(full_scale: float, unit: str) -> str:
    """A bar's range as written by its name ("range 30.00 deg"), or "no range" (the file gives the channel none)."""
    return f"range {format_value(full_scale, unit).lstrip('+')}" if full_scale > 0 else NO_RANGE


def format_value(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "—"
    if unit == "m":
        return f"{value * 1000:+.1f} mm"
    a = abs(value)
    s = f"{value:+.0f}" if a >= 100 else f"{value:+.2f}" if a >= 1 else f"{value:+.3f}"
    return f"{s} {unit}".rstrip()



def _octant_step(x: float) -> int:
    """-1, 0 or +1: the grid column/row of a direction cosine (cos 22.5° splits the octants)."""
    return 0 if abs(x) < 0.3827 else (1 if x > 0 else -1)


def _shortened(fm: QFontMetrics, variants: tuple[str, ...], width: float) -> str:
    """The first of `variants` (long to short) that fits `width`, else the last one elided in the middle."""
    return next((t for t in variants if fm.horizontalAdvance(t) <= width),
                fm.elidedText(variants[-1], Qt.ElideMiddle, int(width)))


def _column_tops(heights: dict[int, float], top: float, bottom: float) -> dict[int, float]:
    """Top of each row's stack in one grid column: row -1 at the top, 1 at the bottom, 0 centred; pushed
    apart (downwards first) where they would overlap."""
    out: dict[int, float] = {}
    if -1 in heights:
        out[-1] = top
    if 0 in heights:
        out[0] = max((top + bottom - heights[0]) / 2, out[-1] + heights[-1] if -1 in out else top)
    if 1 in heights:
        below = out[0] + heights[0] if 0 in out else (out[-1] + heights[-1] if -1 in out else top)
        out[1] = max(bottom - heights[1], below)
    return out

class DevicesPane(QWidget):
    """The state of the axial and lateral dampers, probe and housing at the shown frame."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAttribute(Qt.WA_OpaquePaintEvent)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumHeight(180)
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.frame = 0
        self.axial: list[str] = []
        self.lateral: list[str] = []
        self.values: dict[str, float] = {}
        self.scales: dict[str, float] = {}
        self.bar_rects: dict[str, QRectF] = {}
        self.max_angle = 0.0   # deg, largest housing + bending angle in the run (sets the drawing gain)
        self.angle_gain = 1.0  # where each device bar was last painted (widget pixels)
        self._font = QFont(self.font())
        self._font.setPointSizeF(style.PANE_PT)
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        self._value_font = QFont(self._font)   # the per-frame numbers (digits, signs, units) need no text shaping:
        self._value_font.setStyleStrategy(QFont.PreferNoShaping)   # the same pixels, drawn faster
        self._static: QPixmap | None = None   # frames, titles, names and scales: painted once per run and size
        self._static_key = None
        self._layer = "static"             # what _paint_probe_view draws: "static" or "dynamic"
        # what the per-frame layer draws, laid out with the static layer (see _paint_dynamic)
        self._bar_items: list[tuple[str, QRectF, float, float, float, str]] = []  # name, rect, scale, right, base, unit
        self._probe_texts: list[tuple[str, float, float, str]] = []   # channel, right edge, baseline, unit
        self._probe_bands: list[tuple[QRectF, str]] = []
        self._stroke_full = 1.0
        self._fm = QFontMetricsF(self._font)
        self._advance: dict[str, float] = {}       # text -> width (bounded; value texts repeat)
        self._static_texts: dict[str, QStaticText] = {}
        self._marks: dict[tuple, QPixmap] = {}      # the probe view's numbered points (see _mark)
        self._placed: list[tuple] = []              # static texts as laid out: shown, full, rect, font, flags, box
        self._area = QRectF()                       # the box of the part being painted
        self._lateral_full: dict[str, str] = {}     # lateral device -> its whole label (name and place)
        self._plane_labels: dict[str, str] = {}     # probe view axis -> its label, as short as its band needs
        self._pens = dict(axis=QPen(FRAME, 1, Qt.DotLine), housing=QPen(HOUSING, 5, Qt.SolidLine, Qt.RoundCap),
                          probe=QPen(PROBE, 2.5, Qt.SolidLine, Qt.RoundCap), ring_h=QPen(HOUSING, 1.5),
                          ring_p=QPen(PROBE, 1.5), outline=QPen(TEXT, 1), full=QPen(FULL, 1))

    def set_run(self, run: RunFile | None, blocks: ChannelBlocks | None = None):
        """Attach a run; finds its device channels and their full-scale ranges."""
        self.run = run
        self.blocks = blocks or (ChannelBlocks(run) if run is not None else None)
        self.values = {}
        if run is None:
            self.axial, self.lateral, self.scales = [], [], {}
            self.update()
            return
        groups = run.groups()
        self.axial = sorted(groups.get("axial_damper", []), key=_device_order)
        self.lateral = sorted(groups.get("lateral_damper", []),
                              key=lambda n: (run.channels[n].place if math.isfinite(run.channels[n].place) else 1e9, n))
        self.scales = {n: self.blocks.full_scale(n) for n in self.axial + self.lateral}   # NaN: no range
        self.max_angle = max((sum(self.blocks.abs_max(f"{k}_{a}") for k in ("housing_angle", "probe_bend")
                                  if f"{k}_{a}" in run.channels) for a in "yz"), default=0.0)
        self.show_frame(0)

    def shown_channels(self) -> list[str]:
        return [n for n in PROBE_CHANNELS if self.run and n in self.run.channels] + self.axial + self.lateral

    def show_frame(self, frame: int):
        """Read the few device channels at this frame and repaint."""
        self.frame = int(frame)
        if self.run is not None:
            self.values = self.blocks.values(self.shown_channels(), self.frame)
        self.update()

    def value(self, name: str) -> float:
        return self.values.get(name, math.nan)

    # ---- painting -------------------------------------------------------------------------
    def paintEvent(self, _e):
        """Blit the static layer (drawn once per run and size), then draw what changes with the frame."""
        p = QPainter(self)
        if self.run is None:
            p.fillRect(self.rect(), BACKGROUND)
            p.setFont(self._font)
            p.setPen(DIM)
            p.drawText(self.rect(), Qt.AlignCenter, "devices: no run open")
            return
        dpr = self.devicePixelRatioF()
        key = (self.width(), self.height(), dpr, id(self.run), tuple(self.scales.items()), self.max_angle)
        if self._static is None or key != self._static_key:
            pix = QPixmap(round(self.width() * dpr), round(self.height() * dpr))
            pix.setDevicePixelRatio(dpr)
            self._static_key = key
            self._bar_items, self._probe_texts, self._probe_bands = [], [], []
            sp = QPainter(pix)
            self._paint_static(sp)
            sp.end()
            self._static = pix
        p.drawPixmap(0, 0, self._static)
        self._paint_dynamic(p)
        p.end()

    def _paint_dynamic(self, p: QPainter):
        """Per frame: the probe views, the probe numbers, and the bars' fills, outlines and values."""
        values, nan = self.values, math.nan
        self._layer = "dynamic"
        p.setFont(self._value_font)
        p.setRenderHint(QPainter.Antialiasing)
        for band, axis in self._probe_bands:
            self._paint_probe_view(p, band, axis)
        p.setPen(TEXT)
        for name, right, base, unit in self._probe_texts:
            self._text_left_of(p, right, base, format_value(values.get(name, nan), unit))
        p.setRenderHint(QPainter.Antialiasing, False)   # axis-aligned rectangles: no edge blending needed
        pos, neg, plain, full, texts, notes = [], [], [], [], [], []
        for name, r, scale, right, base, unit in self._bar_items:
            v = values.get(name, nan)
            frac = fill_fraction(v, scale)
            if frac > 0:
                (pos if v > 0 else neg).append(QRectF(r.left(), r.top(), r.width() * frac, r.height()))
            (plain if frac < 1.0 else full).append(r)
            text = format_value(v, unit)
            texts.append((right, base, text))
            if not scale > 0 and self._adv(NO_RANGE) + self._adv(text) + 8 <= right - r.left() - 4:
                notes.append(QPointF(r.left() + 4, base))
        p.setPen(Qt.NoPen)
        for rects, colour in ((pos, POSITIVE), (neg, NEGATIVE)):
            if rects:
                p.setBrush(colour)
                p.drawRects(rects)
        p.setBrush(Qt.NoBrush)
        for rects, pen in ((plain, self._pens["outline"]), (full, self._pens["full"])):
            if rects:
                p.setPen(pen)
                p.drawRects(rects)
        p.setPen(TEXT)
        for right, base, text in texts:
            self._text_left_of(p, right, base, text)
        if notes:
            p.setPen(DIM)
            for at in notes:
                p.drawText(at, NO_RANGE)
        p.setRenderHint(QPainter.Antialiasing, True)

    def _text_left_of(self, p: QPainter, right: float, baseline: float, text: str):
        """Draw `text` ending at x = right on this baseline (as drawText right-aligned in a rect, no layout)."""
        p.drawText(QPointF(right - self._adv(text), baseline), text)

    def _adv(self, text: str) -> float:
        """Width of `text` in the value font (remembered; value texts repeat)."""
        adv = self._advance.get(text)
        if adv is None:
            if len(self._advance) > 4096:
                self._advance.clear()
            adv = self._advance[text] = self._fm.horizontalAdvance(text)
        return adv

    def _mark(self, num: str) -> QPixmap:
        """A numbered point (ring and number) drawn once (per device pixel ratio), painted each frame as an image."""
        key = (num, self.devicePixelRatioF())
        pix = self._marks.get(key)
        if pix is None:
            dpr = key[1]
            size = 2 * _MARK_R
            pix = QPixmap(round(size * dpr), round(size * dpr))
            pix.setDevicePixelRatio(dpr)
            pix.fill(Qt.transparent)
            q = QPainter(pix)
            q.setRenderHint(QPainter.Antialiasing)
            q.setFont(self._font)
            c = QPointF(_MARK_R, _MARK_R)
            q.setBrush(BACKGROUND)
            q.setPen(self._pens["ring_p" if num == "1" else "ring_h"])
            q.drawEllipse(c, 7, 7)
            q.setPen(TEXT)
            q.drawText(QRectF(c.x() - 7, c.y() - 7, 14, 14), Qt.AlignCenter, num)
            q.end()
            self._marks[key] = pix
        return pix

    def _fit_text(self, p: QPainter, rect: QRectF, flags, text: str, shown: str | None = None, short: str = ""):
        """drawText(rect, flags, text) where a one-line text too wide for `rect` is replaced by `short` or elided
        (the full text is then its tooltip; `shown`: already shortened); recorded for label_rects."""
        flags = int(flags)
        if shown is None:
            shown = text if flags & Qt.TextWordWrap else _shortened(QFontMetrics(p.font()), (text, short or text),
                                                                    rect.width())
        p.drawText(rect, flags, shown)
        self._placed.append((shown, text, QRectF(rect), QFont(p.font()), flags, QRectF(self._area)))

    def label_rects(self) -> list[tuple]:
        """The pane's names and titles as laid out at its size: (text shown, full text, rect, font, QPainter flags,
        the box it belongs in); a shown text cut from its full text has the full text as tooltip (see full_text_at)."""
        if self.run is not None and (self._static_key is None
                                     or self._static_key[:2] != (self.width(), self.height())):
            self.repaint()
        return list(self._placed)

    def full_text_at(self, pos: QPointF) -> str:
        """The whole text of a shortened label at this point ("" where no label is shortened)."""
        for shown, full, rect, *_ in self._placed:
            if shown != full and rect.contains(pos):
                return full
        return ""

    def event(self, ev):
        if ev.type() == QEvent.ToolTip:
            full = self.full_text_at(QPointF(ev.pos()))
            if full:
                QToolTip.showText(ev.globalPos(), full, self)
            else:
                QToolTip.hideText()
                ev.ignore()
            return True
        return super().event(ev)

    def _static_text(self, text: str) -> QStaticText:
        st = self._static_texts.get(text)
        if st is None:
            st = self._static_texts[text] = QStaticText(text)
            st.setTextFormat(Qt.PlainText)
            st.prepare(QTransform(), self._font)
        return st

    def _paint_static(self, p: QPainter):
        """What changes only with the run and the size: frames, titles, names, scales, bar backgrounds, the
        craft's axes; it also lays out what _paint_dynamic draws each frame."""
        self._layer = "static"
        p.setRenderHint(QPainter.Antialiasing)
        p.setFont(self._font)
        w, h = self.width(), self.height()
        probe = max(0.30, min(PROBE_W / max(w, 1), 0.40))   # the probe's numbers and drawing need PROBE_W px
        parts = (probe, 0.63 - probe, 0.37)
        x = 0.0
        rects = []
        for f in parts:
            rects.append(QRectF(x + 4, 4, w * f - 8, h - 8))
            x += w * f
        p.fillRect(self.rect(), BACKGROUND)
        self._placed = []
        bold = QFontMetricsF(self._bold)
        titles = [next((t for t in variants if bold.horizontalAdvance(t) <= r.width() - 12), variants[-1])
                  for r, variants in zip(rects, TITLES)]          # the longest title that fits on one line
        wrap = Qt.AlignTop | Qt.AlignLeft | Qt.TextWordWrap    # (else the shortest, wrapped)
        title_h = max(bold.boundingRect(r.adjusted(6, 2, -6, 0), wrap, t).height() for r, t in zip(rects, titles))
        for r, title in zip(rects, titles):
            p.setPen(QPen(FRAME, 1))
            p.drawRect(r)
            p.setFont(self._bold)
            p.setPen(TEXT)
            self._area = QRectF(r)
            self._fit_text(p, QRectF(r.left() + 6, r.top() + 2, r.width() - 12, title_h), wrap, title)
            p.setFont(self._font)
        body = [r.adjusted(6, title_h + 5, -6, -4) for r in rects]
        for r, paint, part in zip(rects, (self._paint_probe, self._paint_axial, self._paint_lateral), body):
            self._area = QRectF(r)      # the box a part's texts keep to (see label_rects)
            paint(p, part)

    @property
    def _static_layer(self) -> bool:
        return self._layer == "static"

    def _bar(self, p: QPainter, r: QRectF, name: str):
        """One device rectangle (static layer): its dark background; the frame layer fills it from the left
        edge by |value|/range (red +, blue -), outlines it (yellow at full scale) and writes the value. A channel
        without a range gets "no range" written on it and no fill."""
        self.bar_rects[name] = QRectF(r)
        p.setRenderHint(QPainter.Antialiasing, False)
        p.fillRect(r, BAR_BACKGROUND)
        p.setRenderHint(QPainter.Antialiasing, True)
        t = r.adjusted(4, 0, -4, 0)
        scale = self.scales.get(name, math.nan)
        if not scale > 0:
            p.fillRect(r, QBrush(NO_RANGE_HATCH, Qt.BDiagPattern))
        self._bar_items.append((name, QRectF(r), scale, t.right(), self._vcenter_baseline(t),
                                self.run.channels[name].unit))

    def _vcenter_baseline(self, r: QRectF) -> float:
        """Baseline of one line of text centred vertically in `r` (as drawText with AlignVCenter)."""
        fm = self._fm
        return r.top() + (r.height() - fm.height()) / 2 + fm.ascent()

    def _label(self, name: str) -> str:
        return name

    def _paint_axial(self, p: QPainter, r: QRectF):
        n = len(self.axial)
        if not n:
            p.setPen(DIM)
            p.drawText(r, Qt.AlignCenter, "no axial damper channels")
            return
        fm = QFontMetrics(self._font)
        slot = min(r.height() / n, 56.0)
        bar_h = min(22.0, slot - fm.height() - 4)
        one_line = bar_h < fm.height() + 2      # too flat for name over bar: the name left of its bar
        texts = [f"{n}   ({range_text(self.scales.get(n, math.nan), self.run.channels[n].unit)})" for n in self.axial]
        label_w = min(max(fm.horizontalAdvance(t) for t in texts) + 8, r.width() - AXIAL_BAR_MIN_W)
        for i, (name, text) in enumerate(zip(self.axial, texts)):
            y = r.top() + i * slot
            p.setPen(DIM)
            if one_line:
                h = max(min(22.0, slot - 3), 8.0)
                self._fit_text(p, QRectF(r.left(), y, label_w - 6, h), Qt.AlignLeft | Qt.AlignVCenter, text,
                               short=name)
                self._bar(p, QRectF(r.left() + label_w, y, r.width() - label_w, h), name)
                continue
            self._fit_text(p, QRectF(r.left(), y, r.width(), fm.height()), Qt.AlignLeft | Qt.AlignVCenter, text)
            self._bar(p, QRectF(r.left(), y + fm.height() + 2, r.width(), max(bar_h, 8.0)), name)

    def _paint_lateral(self, p: QPainter, r: QRectF):
        if not self.lateral:
            p.setPen(DIM)
            p.drawText(r, Qt.AlignCenter, "no lateral damper channels")
            return
        fm = QFontMetrics(self._font)
        c = r.center()
        rad = 10.0   # probe axis seen from the head (looking along +x): +z up, +y to the left
        p.setPen(QPen(FRAME, 1, Qt.DashLine))
        p.drawEllipse(c, rad, rad)
        p.drawLine(QPointF(c.x() - 10, c.y()), QPointF(c.x() + 10, c.y()))
        p.drawLine(QPointF(c.x(), c.y() - 10), QPointF(c.x(), c.y() + 10))
        p.setPen(DIM)
        fm_f = self._fm
        for text, left, base in (("+z", c.x() + 4, c.y() - rad - 2), ("+y", c.x() - rad - 18, c.y() - 3)):
            self._fit_text(p, QRectF(left, base - fm_f.ascent(), fm_f.horizontalAdvance(text) + 1, fm_f.height()),
                           Qt.AlignLeft | Qt.AlignTop, text)
        for name, text, label, align, box in self.lateral_layout(r, fm):
            p.setPen(DIM)
            self._fit_text(p, label, align | Qt.AlignBottom, self._lateral_full.get(name, text), shown=text)
            self._bar(p, box, name)

    def lateral_layout(self, r: QRectF, fm: QFontMetrics) -> list[tuple[str, str, QRectF, object, QRectF]]:
        """(name, label text, label rect, alignment, bar rect) of each lateral device: a 3x3 grid by place,
        each column's labels kept to its third of the width."""
        cells = self._lateral_cells()
        c = r.center()
        bar_w = min(150.0, r.width() * 0.30)
        bar_h = 18.0
        cell = bar_h + fm.height() + 2
        label_w = r.width() / 3 - 2
        out = []
        wide = []                              # (index in out, full-text label rect) to try after the layout
        for col in (-1, 0, 1):
            stacks = {row: cells[(col, row)] for row in (-1, 0, 1) if (col, row) in cells}
            tops = _column_tops({row: len(v) * cell for row, v in stacks.items()}, r.top(), r.bottom())
            cx = c.x() + col * (r.width() - bar_w) / 2
            align = {-1: Qt.AlignLeft, 0: Qt.AlignHCenter, 1: Qt.AlignRight}[col]
            label_left = {-1: r.left(), 0: c.x() - label_w / 2, 1: r.right() - label_w}[col]
            for row, names in stacks.items():
                for k, (name, place) in enumerate(names):
                    box = QRectF(cx - bar_w / 2, tops[row] + k * cell + fm.height() + 1, bar_w, bar_h)
                    full = self._lateral_full[name] = f"{name} @{place:g}°"
                    text = _shortened(fm, (full, name), label_w)
                    label = QRectF(label_left, box.top() - fm.height() - 1, label_w, fm.height())
                    if text != full:
                        need = min(fm.horizontalAdvance(full) + 2, r.width() / 2 - 4)
                        left = {-1: r.left(), 0: c.x() - need / 2, 1: r.right() - need}[col]
                        wide.append((len(out), QRectF(left, label.top(), need, label.height()), full))
                    out.append((name, text, label, align, box))
        for i, rect, full in wide:   # a label keeps more of its name where that overlaps nothing
            others = [q for j, item in enumerate(out) if j != i for q in (item[2], item[4])]
            others.append(QRectF(c.x() - 30, c.y() - 26, 60, 40))   # the +y/+z axes cross
            if not any(rect.intersects(q) for q in others):
                name, _, _, align, box = out[i]
                out[i] = (name, _shortened(fm, (full, name), rect.width()), rect, align, box)
        return out

    def _lateral_cells(self) -> dict[tuple[int, int], list[tuple[str, float]]]:
        """Lateral devices on a 3x3 grid by their place around the probe axis (0° left, 90° up; unplaced ones on
        the diagonals): neighbours 45° apart never overlap, however flat the pane."""
        cells: dict[tuple[int, int], list[tuple[str, float]]] = {}
        unplaced = 0
        for name in self.lateral:
            place = self.run.channels[name].place
            if not math.isfinite(place):
                place = 45.0 + 90.0 * unplaced
                unplaced += 1
            a = math.radians(place)
            key = (_octant_step(-math.cos(a)), _octant_step(-math.sin(a)))
            cells.setdefault(key, []).append((name, round(place, 3)))
        return cells

    def _paint_probe(self, p: QPainter, r: QRectF):
        fm = QFontMetrics(self._font)
        text_w = 178.0
        draw = QRectF(r.left(), r.top(), r.width() - text_w, r.height())
        half = draw.height() / 2
        self.angle_gain = self._gain(draw.width() - 30, half / 2 - 10)
        for k, axis in enumerate("yz"):
            band = QRectF(draw.left(), draw.top() + k * half, draw.width(), half - 4)
            self._paint_probe_view(p, band, axis)
            self._probe_bands.append((band, axis))
        # numbers
        lines = [("1 head offset y", "head_offset_y"), ("1 head offset z", "head_offset_z"),
                 ("2 bending y", "probe_bend_y"), ("2 bending z", "probe_bend_z"),
                 ("3 housing y", "housing_angle_y"), ("3 housing z", "housing_angle_z"),
                 ("probe stroke", "probe_stroke")]
        y = r.top()
        for label, name in lines:
            p.setPen(DIM)
            self._fit_text(p, QRectF(r.right() - text_w, y, 104, fm.height()), Qt.AlignLeft, label)
            unit = self.run.channels[name].unit if name in self.run.channels else ""
            self._probe_texts.append((name, r.right(), y + self._fm.ascent(), unit))
            y += fm.height() + 2
        p.setPen(DIM)
        self._fit_text(p, QRectF(r.right() - text_w, y + 2, text_w, fm.height()), Qt.AlignLeft,
                       f"angles drawn x{self.angle_gain:g}")

    def _gain(self, length: float, room: float) -> float:
        """Largest magnification that keeps the probe's largest swing in the run inside its band."""
        for g in ANGLE_GAINS:
            if length * math.sin(math.radians(min(self.max_angle * g, 90.0))) <= room:
                return g
        return 1.0

    def _paint_probe_view(self, p: QPainter, band: QRectF, axis: str):
        """Side view in the x-<axis> plane: 3 at the left, housing to 2, free probe to 1 (head)."""
        hous = self.value(f"housing_angle_{axis}")
        bend = self.value(f"probe_bend_{axis}")
        off = self.value(f"head_offset_{axis}")
        stroke = self.value("probe_stroke")
        if self._static_layer:   # the stroke's full scale changes with the run only
            info = self.run.channels.get("probe_stroke")
            self._stroke_full = info.stroke if info is not None and math.isfinite(info.stroke) else (
                (self.blocks.abs_max("probe_stroke") or 1.0) if info else 1.0)   # (a drawing, not a bar)
        full = self._stroke_full
        hous = 0.0 if not math.isfinite(hous) else hous
        bend = 0.0 if not math.isfinite(bend) else bend
        length = band.width() - 30
        l_h = 0.35 * length
        l_p = 0.62 * length * (1.0 - 0.45 * fill_fraction(stroke, full))
        p.save()
        p.setClipRect(band)
        p3 = QPointF(band.left() + 14, band.center().y())
        g = self.angle_gain
        a_h = math.radians(hous * g)
        p2 = QPointF(p3.x() + l_h * math.cos(a_h), p3.y() - l_h * math.sin(a_h))
        a_p = math.radians((hous + bend) * g)
        p1 = QPointF(p2.x() + l_p * math.cos(a_p), p2.y() - l_p * math.sin(a_p))
        pens = self._pens
        p.setPen(pens["axis"])
        if self._static_layer:
            p.drawLine(p3, QPointF(band.right(), p3.y()))  # the craft's axis
            full_label = f"plane x-{axis}"
            label = full_label if self._fm.horizontalAdvance(full_label) <= band.width() else f"x-{axis}"
            self._plane_labels[axis] = label
            self._placed.append((label, full_label, QRectF(band.left(), band.top() + 12 - self._fm.ascent(),
                                                           band.width(), self._fm.height()), self._font,
                                 int(Qt.AlignLeft | Qt.AlignTop), QRectF(self._area)))
            p.restore()
            return
        p.drawLine(p2, QPointF(p2.x() + l_p * math.cos(a_h), p2.y() - l_p * math.sin(a_h)))  # housing axis on
        p.setPen(pens["housing"])
        p.drawLine(p3, p2)
        p.setPen(pens["probe"])
        p.drawLine(p2, p1)
        p.setPen(TEXT)
        value_font = p.font()
        p.setFont(self._font)   # (shaped: "x-y" is kerned)
        p.drawStaticText(QPointF(band.left(), band.top() + 12 - self._fm.ascent()),
                         self._static_text(self._plane_labels.get(axis, f"plane x-{axis}")))
        p.setFont(value_font)
        for pt, num in ((p3, "3"), (p2, "2"), (p1, "1")):
            p.drawPixmap(QPointF(pt.x() - _MARK_R, pt.y() - _MARK_R), self._mark(num))
        if math.isfinite(off) and off:
            p.setPen(POSITIVE if off > 0 else NEGATIVE)
            p.drawText(QPointF(p1.x() - 40, p1.y() + 20), format_value(off, "m"))
        p.restore()
