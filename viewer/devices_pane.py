"""Middle pane: the docking mechanism's devices drawn schematically at the current frame (QPainter).

What it shows is the run's mechanism type's device layout (solver.mechanisms): at the left the type's sketch
(a Qt-free function of the frame's channel values, drawn here), then its bar groups, each bar filled by
|value| / range. Red = positive, blue = negative. A run of the generic type shows its device bars, no sketch.
"""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QPen, QPixmap, QStaticText, QTransform
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from solver import mechanisms
from solver.mechanisms.base import BarGroup, DeviceLayout, Mark, Note, Pen, Polyline, bar_order
from solver.mechanisms.base import fill_fraction  # noqa: F401  (the bars' rule, shared with sketches)
from solver.runfile import RunFile
from viewer import style
from viewer.channel_blocks import ChannelBlocks
from viewer.numbers import GAUGE, count_text, is_count, length_text, value_text

NO_RANGE = "no range"               # on a bar whose channel has no range in the file: its value, never a fill


def _theme_colours():
    """The pane's QColors from the palette in use (style.observe calls it again on a theme change). FULL: outline
    of a bar at or beyond its full scale; STATE: the fill of a count (latches engaged), a state, not an alarm;
    NO_RANGE_HATCH: hatching of a bar without a range (its "no range" shows where the value leaves room)."""
    global BACKGROUND, FRAME, TEXT, DIM, POSITIVE, NEGATIVE, BAR_BACKGROUND, FULL, STATE, NO_RANGE_HATCH
    BACKGROUND, FRAME, TEXT, DIM = (QColor(c) for c in (style.BACKGROUND, style.FRAME, style.TEXT, style.KEY_TEXT))
    POSITIVE, NEGATIVE, BAR_BACKGROUND, FULL, STATE, NO_RANGE_HATCH = (QColor(*c) for c in (
        style.POSITIVE, style.NEGATIVE, style.BAR_BACKGROUND, style.FULL_SCALE, style.STATE_FILL, style.NO_RANGE_HATCH))


_theme_colours()
style.observe(_theme_colours)
STACK_BAR_MIN_W = 90   # px of a stacked bar beside its name (its value: "+0.000 rpm")
NUMBER_LABEL_W = 104   # px of a sketch number's label (its value ends at the box's right)
_MARK_R = 9   # px: half the size of a sketch mark's image (its ring has radius 7)


class _Facts:
    """What a sketch may know of the whole run (solver.mechanisms.base.RunFacts), each read once per run."""

    def __init__(self, run: RunFile, blocks: ChannelBlocks):
        self.run, self.blocks = run, blocks
        self._abs: dict[str, float] = {}

    def has(self, name: str) -> bool:
        return name in self.run.channels

    def stroke(self, name: str) -> float:
        return self.run.channels[name].stroke if name in self.run.channels else math.nan

    def abs_max(self, name: str) -> float:
        if name not in self._abs:
            self._abs[name] = self.blocks.abs_max(name) if name in self.run.channels else math.nan
        return self._abs[name]


def _qpen(pen: Pen) -> QPen:
    return QPen(QColor(*pen.color), pen.width, Qt.DotLine if pen.dash == "dot" else Qt.SolidLine,
                Qt.RoundCap if pen.round_cap else Qt.SquareCap)


def range_text(full_scale: float, unit: str) -> str:
    """A bar's range as written by its name ("range 30.00 deg", "of 3" for a count), or "no range" (the file gives
    the channel none)."""
    if not full_scale > 0:
        return NO_RANGE
    if is_count(unit, full_scale):
        return f"of {count_text(full_scale, unit)}"
    return f"range {format_value(full_scale, unit).lstrip('+')}"


def format_value(value: float, unit: str, full_scale: float = math.nan) -> str:
    """A bar's value: a count as a whole number, lengths in mm with one decimal, else signed with
    viewer.numbers.GAUGE steps; never "-0.0"."""
    if is_count(unit, full_scale):
        return count_text(value, unit)
    if unit == "m":
        return length_text(value, signed=True)
    return value_text(value, unit, GAUGE, signed=True)



def _octant_step(x: float) -> int:
    """-1, 0 or +1: the grid column/row of a direction cosine (cos 22.5° splits the octants)."""
    return 0 if abs(x) < 0.3827 else (1 if x > 0 else -1)


def abbreviations(name: str) -> list[str]:
    """Shorter and shorter forms of a name that keep each word's start and every number, a letter at a time from the
    longest word (the rightmost of equals), words kept to 4 letters first, then fewer: rotating_ring_2 ->
    rotatin_ring_2 -> rotati_ring_2 -> … -> rota_ring_2 -> … -> r_r_2 (never cut in the middle of a word)."""
    words = name.split("_")
    out = []
    for floor in (4, 3, 2, 1):
        while True:
            cut = [i for i, w in enumerate(words) if not w.isdigit() and len(w) > floor]
            if not cut:
                break
            i = max(cut, key=lambda k: (len(words[k]), k))
            words[i] = words[i][:-1]
            out.append("_".join(words))
    return out


def _shortened(fm: QFontMetrics, variants: tuple[str, ...], width: float) -> str:
    """The first of `variants` (long to short) that fits `width`, else the first abbreviation of the last one that
    fits (`abbreviations`), else that elided at its end."""
    forms = list(variants) + abbreviations(variants[-1])
    return next((t for t in forms if fm.horizontalAdvance(t) <= width),
                fm.elidedText(forms[-1], Qt.ElideRight, int(width)))


def two_lines(fm: QFontMetrics, variants: tuple[str, ...], width: float) -> str | None:
    """The first of `variants` (long to short) broken after an "_" into two lines that each fit `width` (the most
    even break), or None: "left_door_hinge_2" -> "left_door_\nhinge_2" (no word cut)."""
    for text in variants:
        head, sep, tail = text.partition(" ")
        words = head.split("_")
        breaks = [("_".join(words[:k]) + "_", "_".join(words[k:]) + sep + tail) for k in range(1, len(words))]
        fits = [b for b in breaks if max(fm.horizontalAdvance(b[0]), fm.horizontalAdvance(b[1])) <= width]
        if fits:
            return "\n".join(min(fits, key=lambda b: max(fm.horizontalAdvance(b[0]), fm.horizontalAdvance(b[1]))))
    return None


def short_names(names: list[str]) -> dict[str, str]:
    """Each name's shortest leading run of "_"-separated words that no other name of the group starts alike:
    pad_1_force -> pad_1 among pad_k_force, spring_stroke -> spring beside brake_rate."""
    words = {n: n.split("_") for n in names}
    out = {}
    for n, w in words.items():
        out[n] = next(("_".join(w[:k]) for k in range(1, len(w)) if not any(
            o != n and ow[:k] == w[:k] for o, ow in words.items())), n)
    return out


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
    """The mechanism's devices at the shown frame, laid out as the run's mechanism type says."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAttribute(Qt.WA_OpaquePaintEvent)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMinimumHeight(180)
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.frame = 0
        self.layout_spec = DeviceLayout(None, ())   # the run's mechanism type's device layout
        self.bars: dict[str, list[str]] = {}         # bar group (run-file channel group) -> its channels, in order
        self.values: dict[str, float] = {}
        self.scales: dict[str, float] = {}
        self.bar_rects: dict[str, QRectF] = {}       # where each device bar was last painted (widget pixels)
        self.value_texts: dict[str, str] = {}        # each bar's value as last painted ("+12.3 mm", "3")
        self.axes_symbols: dict[str, QRectF] = {}    # an "around" group's axis symbol (ring, cross, +y, +z) as painted
        self.sketch_scale: dict = {}                 # the sketch's run-level scales at the painted size
        self._facts: _Facts | None = None
        self._font = QFont(self.font())
        self._font.setPointSizeF(style.PANE_PT)
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        self._value_font = QFont(self._font)   # the per-frame numbers (digits, signs, units) need no text shaping:
        self._value_font.setStyleStrategy(QFont.PreferNoShaping)   # the same pixels, drawn faster
        self._static: QPixmap | None = None   # frames, titles, names and scales: painted once per run and size
        self._static_key = None
        self._layer = "static"             # what _paint_view draws: "static" or "dynamic"
        # what the per-frame layer draws, laid out with the static layer (see _paint_dynamic)
        self._bar_items: list[tuple[str, QRectF, float, float, float, str]] = []  # name, rect, scale, right, base, unit
        self._number_texts: list[tuple[str, float, float, str]] = []   # channel, right edge, baseline, unit
        self._sketch_bands: list[tuple[QRectF, object]] = []           # band, SketchView
        self._fm = QFontMetricsF(self._font)
        self._advance: dict[str, float] = {}       # text -> width (bounded; value texts repeat)
        self._static_texts: dict[str, QStaticText] = {}
        self._marks: dict[tuple, QPixmap] = {}      # the sketch's labelled points (see _mark)
        self._placed: list[tuple] = []              # static texts as laid out: shown, full, rect, font, flags, box
        self._area = QRectF()                       # the box of the part being painted
        self._around_full: dict[str, str] = {}      # placed device -> its whole label (name and place)
        self._view_labels: dict[str, str] = {}      # sketch view -> its label, as short as its band needs
        self._pens = dict(outline=QPen(TEXT, 1), full=QPen(FULL, 1))
        self._sketch_pens: dict[str, QPen] = {}
        style.observe(self.apply_theme)

    def apply_theme(self):
        """View → Theme: drop what was painted in the old colours and paint again (style.observe calls it)."""
        self._pens = dict(outline=QPen(TEXT, 1), full=QPen(FULL, 1))
        self._static, self._static_key, self._marks = None, None, {}
        self.update()

    def set_run(self, run: RunFile | None, blocks: ChannelBlocks | None = None):
        """Attach a run; asks its mechanism type for the layout, finds the device channels and their ranges."""
        self.run = run
        self.blocks = blocks or (ChannelBlocks(run) if run is not None else None)
        self.values = {}
        if run is None:
            self.layout_spec, self.bars, self.scales, self._facts = DeviceLayout(None, ()), {}, {}, None
            self.update()
            return
        self.layout_spec = layout = mechanisms.for_run(run).device_layout(run)
        groups = run.groups()
        self.bars = {}
        for g in layout.groups:
            if g.channels:
                self.bars[g.group] = [n for n in g.channels if n in run.channels]
                continue
            names = groups.get(g.group, [])
            if g.arrangement == "around":
                self.bars[g.group] = sorted(names, key=lambda n: (run.channels[n].place if math.isfinite(
                    run.channels[n].place) else 1e9, n))
            else:
                self.bars[g.group] = sorted(names, key=bar_order(g.order))
        self.scales = {n: self.blocks.full_scale(n) for n in self.bar_names()}   # NaN: no range
        sk = layout.sketch
        self._facts = _Facts(run, self.blocks)
        self._sketch_pens = {k: _qpen(v) for k, v in sk.pens.items()} if sk is not None else {}
        self.show_frame(0)

    def bar_names(self) -> list[str]:
        """Every device bar's channel, group after group."""
        return [n for names in self.bars.values() for n in names]

    def shown_channels(self) -> list[str]:
        sk = self.layout_spec.sketch
        sketch = [n for n in sk.channels if n in self.run.channels] if sk is not None and self.run else []
        return sketch + self.bar_names()

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
        key = (self.width(), self.height(), dpr, id(self.run), tuple(self.scales.items()))
        if self._static is None or key != self._static_key:
            pix = QPixmap(round(self.width() * dpr), round(self.height() * dpr))
            pix.setDevicePixelRatio(dpr)
            self._static_key = key
            self._bar_items, self._number_texts, self._sketch_bands = [], [], []
            sp = QPainter(pix)
            self._paint_static(sp)
            sp.end()
            self._static = pix
        p.drawPixmap(0, 0, self._static)
        self._paint_dynamic(p)
        p.end()

    def _paint_dynamic(self, p: QPainter):
        """Per frame: the sketch's views and numbers, and the bars' fills, outlines and values."""
        values, nan = self.values, math.nan
        self._layer = "dynamic"
        p.setFont(self._value_font)
        p.setRenderHint(QPainter.Antialiasing)
        for band, view in self._sketch_bands:
            self._paint_view(p, band, view)
        p.setPen(TEXT)
        for name, right, base, unit in self._number_texts:
            self._text_left_of(p, right, base, format_value(values.get(name, nan), unit, self._stroke(name)))
        p.setRenderHint(QPainter.Antialiasing, False)   # axis-aligned rectangles: no edge blending needed
        pos, neg, state, plain, full, texts, notes = [], [], [], [], [], [], []
        for name, r, scale, right, base, unit in self._bar_items:
            v = values.get(name, nan)
            frac = fill_fraction(v, scale)
            count = is_count(unit, scale)     # a count is a state: its own colour, no full-scale alarm outline
            if frac > 0:
                (state if count else pos if v > 0 else neg).append(QRectF(r.left(), r.top(), r.width() * frac,
                                                                          r.height()))
            (plain if frac < 1.0 or count else full).append(r)
            text = format_value(v, unit, scale)
            self.value_texts[name] = text
            texts.append((right, base, text))
            if not scale > 0 and self._adv(NO_RANGE) + self._adv(text) + 8 <= right - r.left() - 4:
                notes.append(QPointF(r.left() + 4, base))
        p.setPen(Qt.NoPen)
        for rects, colour in ((pos, POSITIVE), (neg, NEGATIVE), (state, STATE)):
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

    def _stroke(self, name: str) -> float:
        """The range the file gives a channel (NaN: none), for the count rule of the sketch's numbers."""
        info = self.run.channels.get(name) if self.run is not None else None
        return info.stroke if info is not None else math.nan

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

    def _mark(self, num: str, pen: str) -> QPixmap:
        """A labelled point (ring and label) drawn once (per pen and device pixel ratio), painted each frame as an
        image."""
        key = (num, pen, self.devicePixelRatioF())
        pix = self._marks.get(key)
        if pix is None:
            dpr = key[2]
            size = 2 * _MARK_R
            pix = QPixmap(round(size * dpr), round(size * dpr))
            pix.setDevicePixelRatio(dpr)
            pix.fill(Qt.transparent)
            q = QPainter(pix)
            q.setRenderHint(QPainter.Antialiasing)
            q.setFont(self._font)
            c = QPointF(_MARK_R, _MARK_R)
            q.setBrush(BACKGROUND)
            q.setPen(self._sketch_pens[pen])
            q.drawEllipse(c, 7, 7)
            q.setPen(TEXT)
            q.drawText(QRectF(c.x() - 7, c.y() - 7, 14, 14), Qt.AlignCenter, num)
            q.end()
            self._marks[key] = pix
        return pix

    def _fit_text(self, p: QPainter, rect: QRectF, flags, text: str, shown: str | None = None,
                  short: tuple[str, ...] = ()):
        """drawText(rect, flags, text) where a one-line text too wide for `rect` is replaced by the first of `short`
        that fits, or elided (the full text is then its tooltip; `shown`: already shortened); recorded for
        label_rects."""
        flags = int(flags)
        if shown is None:
            shown = text if flags & Qt.TextWordWrap else _shortened(QFontMetrics(p.font()), (text, *short),
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

    def _boxes(self, w: float) -> list[tuple[tuple[str, ...], object, float]]:
        """(titles, sketch or bar group, share of the width) of each box, left to right."""
        lay = self.layout_spec
        out = []
        if lay.sketch is not None:
            sk = lay.sketch
            out.append((sk.titles, sk, max(sk.share_min, min(sk.width_px / max(w, 1), sk.share_max))))
        fixed = sum(g.share for g in lay.groups if g.share is not None)
        free = [g for g in lay.groups if g.share is None]
        rest = ((1.0 - fixed) - (out[0][2] if out else 0.0)) / max(len(free), 1)
        out += [(g.titles, g, g.share if g.share is not None else rest) for g in lay.groups]
        return out

    def _paint_static(self, p: QPainter):
        """What changes only with the run and the size: frames, titles, names, scales, bar backgrounds, the
        sketch's background; it also lays out what _paint_dynamic draws each frame."""
        self._layer = "static"
        p.setRenderHint(QPainter.Antialiasing)
        p.setFont(self._font)
        w, h = self.width(), self.height()
        boxes = self._boxes(w)
        x = 0.0
        rects = []
        for _, _, f in boxes:
            rects.append(QRectF(x + 4, 4, w * f - 8, h - 8))
            x += w * f
        p.fillRect(self.rect(), BACKGROUND)
        self._placed = []
        if not boxes:
            p.setPen(DIM)
            p.drawText(self.rect(), Qt.AlignCenter, "devices: no device channels in this run")
            return
        bold = QFontMetricsF(self._bold)
        titles = [next((t for t in variants if bold.horizontalAdvance(t) <= r.width() - 12), variants[-1])
                  for r, (variants, _, _) in zip(rects, boxes)]   # the longest title that fits on one line
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
        for r, (_, part, _) in zip(rects, boxes):
            self._area = QRectF(r)      # the box a part's texts keep to (see label_rects)
            body = r.adjusted(6, title_h + 5, -6, -4)
            if not isinstance(part, BarGroup):
                self._paint_sketch(p, body, part)
            elif part.arrangement == "around":
                self._paint_around(p, body, part)
            else:
                self._paint_stack(p, body, part)

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

    def _empty(self, p: QPainter, r: QRectF, group: BarGroup):
        p.setPen(DIM)
        p.drawText(r, Qt.AlignCenter, group.empty or f"no {group.titles[-1]} channels")

    def _paint_stack(self, p: QPainter, r: QRectF, group: BarGroup):
        """Bars one under another, each named (with its range) above it, or left of it where the pane is flat."""
        names = self.bars.get(group.group, [])
        n = len(names)
        if not n:
            self._empty(p, r, group)
            return
        fm = QFontMetrics(self._font)
        slot = min(r.height() / n, 56.0)
        bar_h = min(22.0, slot - fm.height() - 4)
        one_line = bar_h < fm.height() + 2      # too flat for name over bar: the name left of its bar
        texts = [f"{n}   ({range_text(self.scales.get(n, math.nan), self.run.channels[n].unit)})" for n in names]
        short = short_names(names)
        label_w = min(max(fm.horizontalAdvance(t) for t in texts) + 8, r.width() - STACK_BAR_MIN_W)
        for i, (name, text) in enumerate(zip(names, texts)):
            y = r.top() + i * slot
            p.setPen(DIM)
            if one_line:
                h = max(min(22.0, slot - 3), 8.0)
                self._fit_text(p, QRectF(r.left(), y, label_w - 6, h), Qt.AlignLeft | Qt.AlignVCenter, text,
                               short=(name, short[name]))
                self._bar(p, QRectF(r.left() + label_w, y, r.width() - label_w, h), name)
                continue
            self._fit_text(p, QRectF(r.left(), y, r.width(), fm.height()), Qt.AlignLeft | Qt.AlignVCenter, text,
                           short=(name, short[name]))
            self._bar(p, QRectF(r.left(), y + fm.height() + 2, r.width(), max(bar_h, 8.0)), name)

    def _paint_around(self, p: QPainter, r: QRectF, group: BarGroup):
        """Bars placed around the mechanism axis (seen along it) by their channels' place."""
        names = self.bars.get(group.group, [])
        if not names:
            self._empty(p, r, group)
            return
        fm = QFontMetrics(self._font)
        items = self.around_layout(names, r, fm)
        c = self.axes_center(items, r)
        self.axes_symbols[group.group] = self.axes_rect(c)
        rad = 10.0   # the mechanism axis seen along it: axes[0] up, axes[1] to the left
        p.setPen(QPen(FRAME, 1, Qt.DashLine))
        p.drawEllipse(c, rad, rad)
        p.drawLine(QPointF(c.x() - 10, c.y()), QPointF(c.x() + 10, c.y()))
        p.drawLine(QPointF(c.x(), c.y() - 10), QPointF(c.x(), c.y() + 10))
        p.setPen(DIM)
        fm_f = self._fm
        for text, left, base in ((group.axes[0], c.x() + 4, c.y() - rad - 2),
                                 (group.axes[1], c.x() - rad - 18, c.y() - 3)):
            self._fit_text(p, QRectF(left, base - fm_f.ascent(), fm_f.horizontalAdvance(text) + 1, fm_f.height()),
                           Qt.AlignLeft | Qt.AlignTop, text)
        for name, text, label, align, box in items:
            p.setPen(DIM)
            self._fit_text(p, label, align | Qt.AlignBottom, self._around_full.get(name, text), shown=text)
            self._bar(p, box, name)

    @staticmethod
    def axes_rect(c: QPointF) -> QRectF:
        """What the axis symbol (ring, cross, +y, +z) takes around its centre."""
        return QRectF(c.x() - 30, c.y() - 26, 60, 40)

    def axes_center(self, items, r: QRectF) -> QPointF:
        """Where the axis symbol goes: the box's centre, or the nearest free place left or right of it (a flat pane
        stacks the centre column's devices over the centre)."""
        taken = [q for item in items for q in (item[2], item[4])]
        c = r.center()
        steps = sorted(((dx, dy) for dx in range(-60, 61) for dy in range(-20, 21)),
                       key=lambda d: d[0] * d[0] + 4 * d[1] * d[1])     # 6 px apart, nearest the centre first
        for dx, dy in steps:
            at = QPointF(c.x() + 6 * dx, c.y() + 6 * dy)
            box = self.axes_rect(at)
            if r.contains(box) and not any(box.intersects(q) for q in taken):
                return at
        return c

    def around_layout(self, names: list[str], r: QRectF, fm: QFontMetrics) -> list[tuple[str, str, QRectF, object,
                                                                                          QRectF]]:
        """(name, label text, label rect, alignment, bar rect) of each placed device: a 3x3 grid by place,
        each column's labels kept to its third of the width."""
        cells = self._around_cells(names)
        c = r.center()
        bar_w = min(150.0, r.width() * 0.30)
        bar_h = 18.0
        cell = bar_h + fm.height() + 2
        label_w = r.width() / 3 - 2
        out = []
        wide = []                              # (index in out, full-text label rect) to try after the layout
        texts = {}                             # name -> its label: one line, else two broken after an "_"
        for name, place in (item for v in cells.values() for item in v):
            full = self._around_full[name] = f"{name} @{place:g}°"
            one = next((t for t in (full, name) if fm.horizontalAdvance(t) <= label_w), None)
            texts[name] = one or two_lines(fm, (full, name), label_w) or _shortened(fm, (full, name), label_w)
        for col in (-1, 0, 1):
            stacks = {row: cells[(col, row)] for row in (-1, 0, 1) if (col, row) in cells}
            heights = {row: sum(cell + fm.height() * texts[n].count("\n") for n, _ in v) for row, v in stacks.items()}
            tops = _column_tops(heights, r.top(), r.bottom())
            cx = c.x() + col * (r.width() - bar_w) / 2
            align = {-1: Qt.AlignLeft, 0: Qt.AlignHCenter, 1: Qt.AlignRight}[col]
            label_left = {-1: r.left(), 0: c.x() - label_w / 2, 1: r.right() - label_w}[col]
            for row, names in stacks.items():
                y = tops[row]
                for name, place in names:
                    full, text = self._around_full[name], texts[name]
                    label_h = fm.height() * (1 + text.count("\n"))
                    box = QRectF(cx - bar_w / 2, y + label_h + 1, bar_w, bar_h)
                    y += cell + label_h - fm.height()
                    label = QRectF(label_left, box.top() - label_h - 1, label_w, label_h)
                    if text != full and "\n" not in text:
                        need = min(fm.horizontalAdvance(full) + 2, r.width() / 2 - 4)
                        left = {-1: r.left(), 0: c.x() - need / 2, 1: r.right() - need}[col]
                        wide.append((len(out), QRectF(left, label.top(), need, label.height()), full))
                    out.append((name, text, label, align, box))
        for i, rect, full in wide:   # a label keeps more of its name where that overlaps nothing
            others = [q for j, item in enumerate(out) if j != i for q in (item[2], item[4])]
            others.append(self.axes_rect(c))   # the +y/+z axes cross, where it goes when the centre is free
            if not any(rect.intersects(q) for q in others):
                name, _, _, align, box = out[i]
                out[i] = (name, _shortened(fm, (full, name), rect.width()), rect, align, box)
        return out

    def _around_cells(self, names: list[str]) -> dict[tuple[int, int], list[tuple[str, float]]]:
        """Devices on a 3x3 grid by their place around the mechanism axis (0° left, 90° up; unplaced ones on
        the diagonals): neighbours 45° apart never overlap, however flat the pane."""
        cells: dict[tuple[int, int], list[tuple[str, float]]] = {}
        unplaced = 0
        for name in names:
            place = self.run.channels[name].place
            if not math.isfinite(place):
                place = 45.0 + 90.0 * unplaced
                unplaced += 1
            a = math.radians(place)
            key = (_octant_step(-math.cos(a)), _octant_step(-math.sin(a)))
            cells.setdefault(key, []).append((name, round(place, 3)))
        return cells

    def _paint_sketch(self, p: QPainter, r: QRectF, sk):
        """The type's sketch: its views stacked at the left, its numbers and footnote at the right."""
        fm = QFontMetrics(self._font)
        text_w = sk.numbers_px
        draw = QRectF(r.left(), r.top(), r.width() - text_w, r.height())
        n = max(len(sk.views), 1)
        band_h = draw.height() / n
        self.sketch_scale = sk.prepare(self._facts, draw.width(), band_h)
        for k, view in enumerate(sk.views):
            band = QRectF(draw.left(), draw.top() + k * band_h, draw.width(), band_h - 4)
            self._paint_view(p, band, view)
            self._sketch_bands.append((band, view))
        y = r.top()
        for label, name in sk.numbers:
            p.setPen(DIM)
            self._fit_text(p, QRectF(r.right() - text_w, y, NUMBER_LABEL_W, fm.height()), Qt.AlignLeft, label)
            unit = self.run.channels[name].unit if name in self.run.channels else ""
            self._number_texts.append((name, r.right(), y + self._fm.ascent(), unit))
            y += fm.height() + 2
        note = sk.footnote(self.sketch_scale)
        if note:
            p.setPen(DIM)
            self._fit_text(p, QRectF(r.right() - text_w, y + 2, text_w, fm.height()), Qt.AlignLeft, note)

    def _shapes(self, p: QPainter, shapes):
        """Draw a sketch's shapes: lines first, in order (the view's label is drawn after them, see _paint_view)."""
        for s in shapes:
            if isinstance(s, Polyline):
                p.setPen(self._sketch_pens[s.pen])
                if len(s.points) == 2:
                    p.drawLine(QPointF(*s.points[0]), QPointF(*s.points[1]))
                else:
                    p.drawPolyline([QPointF(*q) for q in s.points])

    def _paint_view(self, p: QPainter, band: QRectF, view):
        """One view of the sketch: its background (static layer), or the frame's shapes, label, marks and notes."""
        sk = self.layout_spec.sketch
        box = (band.left(), band.top(), band.width(), band.height())
        p.save()
        p.setClipRect(band)
        if self._static_layer:
            self._shapes(p, sk.background(view.key, box, self.sketch_scale))
            full_label, short = view.label
            label = full_label if self._fm.horizontalAdvance(full_label) <= band.width() else short
            self._view_labels[view.key] = label
            self._placed.append((label, full_label, QRectF(band.left(), band.top() + 12 - self._fm.ascent(),
                                                           band.width(), self._fm.height()), self._font,
                                 int(Qt.AlignLeft | Qt.AlignTop), QRectF(self._area)))
            p.restore()
            return
        shapes = sk.draw(view.key, self.values, box, self.sketch_scale)   # (absent channels: NaN, see Sketch)
        self._shapes(p, shapes)
        p.setPen(TEXT)
        value_font = p.font()
        p.setFont(self._font)   # (shaped: "x-y" is kerned)
        p.drawStaticText(QPointF(band.left(), band.top() + 12 - self._fm.ascent()),
                         self._static_text(self._view_labels.get(view.key, view.label[0])))
        p.setFont(value_font)
        for s in shapes:
            if isinstance(s, Mark):
                p.drawPixmap(QPointF(s.at[0] - _MARK_R, s.at[1] - _MARK_R), self._mark(s.label, s.pen))
        for s in shapes:
            if isinstance(s, Note):
                p.setPen(POSITIVE if s.value > 0 else NEGATIVE)
                p.drawText(QPointF(*s.at), format_value(s.value, s.unit))
        p.restore()
