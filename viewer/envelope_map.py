"""Envelope map: a campaign's runs as a scatter of two chosen IC parameters, coloured by outcome or by an output.

The symbol always shows the outcome; the colour shows the outcome or a chosen numeric output (with a colour
bar). Hover gives a run's ICs and key outputs; a click asks to open the run (`runRequested`). While the
campaign is still writing, the map re-reads its summary when the directory changes (checked every 2 s, read
in a thread) and on Refresh.
"""
from __future__ import annotations

import math
import re
import textwrap
import threading
from pathlib import Path

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)

from viewer import style

# outcome code -> (legend text, colour, pyqtgraph symbol, legend glyph); drawn in this order (later on top)
OUTCOMES = (("captured, verdict PASS", style.OUTCOME_PASS, "o", "\u25cf"),
            ("captured, verdict FAIL", style.OUTCOME_FAIL, "t1", "\u25b2"),
            ("not captured", style.OUTCOME_MISSED, "s", "\u25a0"),
            ("diverged / error", style.OUTCOME_ERROR, "x", "\u2715"))
PASS, FAIL, MISS, ERROR = range(4)
OUTCOME = "outcome"          # the colour-by choice that colours by outcome
NO_VALUE = style.NO_VALUE        # numeric colouring: runs without a value (e.g. T capture of a run not captured)
MARK = style.CURSOR          # ring around the run open in the main window (the app's T Current yellow)
KEPT_PEN = pg.mkPen(style.CAPTURE, width=1.6)
PLAIN_PEN = pg.mkPen(style.BACKGROUND, width=0.6)
ERROR_PEN = pg.mkPen(style.ERROR_RIM, width=0.8)
TIP_WIDTH = 80               # characters per line of a hover's messages
SIZE = 9
REFRESH_MS = 2000
SI_UNITS = {"N", "N*m", "N·m", "J", "W"}   # units shown with a k/M prefix (loads); the rest in the unit as given
BACKGROUND = style.BACKGROUND
STYLE = (f"QWidget#envelope {{ background: {style.BACKGROUND}; }} QLabel, QCheckBox {{ color: {style.TEXT}; }} "
         f"QLabel[role=key] {{ color: {style.KEY_TEXT}; }}")
CMAP = "viridis"


def _theme_colours():
    """The map's colours and pens from the palette in use (style.observe calls it again on a theme change)."""
    global NO_VALUE, MARK, KEPT_PEN, PLAIN_PEN, ERROR_PEN, BACKGROUND, STYLE
    NO_VALUE, MARK, BACKGROUND = style.NO_VALUE, style.CURSOR, style.BACKGROUND
    KEPT_PEN, PLAIN_PEN = pg.mkPen(style.CAPTURE, width=1.6), pg.mkPen(style.BACKGROUND, width=0.6)
    ERROR_PEN = pg.mkPen(style.ERROR_RIM, width=0.8)
    STYLE = (f"QWidget#envelope {{ background: {style.BACKGROUND}; }} QLabel, QCheckBox {{ color: {style.TEXT}; }} "
             f"QLabel[role=key] {{ color: {style.KEY_TEXT}; }}")


style.observe(_theme_colours)
CMAP_FROM = 0.2              # skip viridis' darkest purples: they vanish on the dark background


def colour_map() -> pg.ColorMap:
    return pg.colormap.get(CMAP).getSubset(CMAP_FROM, 1.0 - CMAP_FROM)


def display_label(label: str) -> str:
    """An output's label for axes, legend and tips: without a note on NaN ("capture time (NaN: no capture)")."""
    return re.sub(r"\s*\(NaN[^)]*\)", "", label).strip()


def unit_text(unit: str) -> str:
    return unit.replace("*", "\u00b7")


def fmt_quantity(v: float, unit: str) -> str:
    """`12.3 kN`, `0.152 m/s`, `1.5 deg`; an em dash for NaN."""
    if v is None or not math.isfinite(v):
        return "\u2014"
    if unit in SI_UNITS and v != 0:
        return pg.siFormat(v, precision=4, suffix=unit_text(unit), space=True)
    text = np.format_float_positional(v, precision=4, unique=True, fractional=False, trim="-")
    return f"{text} {unit_text(unit)}".rstrip()


def label_axis(axis, label: str, unit: str) -> None:
    """`label (kN)` with prefixed tick values for loads; `label (m/s)` with plain values for the rest."""
    axis.setLabel(label, units=unit_text(unit) or None, siPrefixEnableRanges=None if unit in SI_UNITS else (),
                  color=style.TEXT, **{"font-size": style.MAP_TITLE_SIZE})
    axis.updateAutoSIPrefix()


def outcome_codes(summary) -> np.ndarray:
    """Per finished run: PASS, FAIL (captured, verdict failed), MISS (not captured) or ERROR (diverged / error)."""
    captured = np.asarray(summary.captured, bool)
    passed = np.asarray(summary.passed, bool)
    bad = np.array([s != "ok" for s in summary.status], bool)
    codes = np.where(captured, np.where(passed, PASS, FAIL), MISS)
    return np.where(bad, ERROR, codes).astype(int)


def key_outputs(summary) -> list[str]:
    """Outputs a hover shows: capture time, base loads and the mechanism type's key outputs (e.g. strokes)."""
    return [n for n in summary.key_outputs if n in summary.outputs]


def contact_peaks(summary) -> list[str]:
    """The per-pair peak contact force columns (peak_<pair>)."""
    return [n for n in summary.pair_outputs if n in summary.outputs]


def directory_signature(directory) -> tuple:
    """What changes when a campaign writes: the summary table, the row journal and the kept runs (stat only)."""
    d = Path(directory)
    out = []
    for p in (d / "summary.h5", d / "rows", d / "runs"):
        try:
            st = p.stat()
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


class _Reader(QObject):
    """Carries a summary read in a worker thread to the GUI thread (queued signal)."""
    done = Signal(object)


class EnvelopeMap(QWidget):
    """The campaign's envelope map with axis and colour choosers, legend, counts line and hover details."""

    runRequested = Signal(int)      # campaign run index clicked
    summaryChanged = Signal()       # a (re-)read summary is shown

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("envelope")
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet(STYLE)
        self.summary = None
        self.directory: Path | None = None
        self.marked: int | None = None
        self.codes = np.zeros(0, int)
        self.rows = np.zeros(0, int)        # summary rows in scatter order (spot data = position in this)
        self._columns: dict[str, np.ndarray] = {}
        self._kept: np.ndarray = np.zeros(0, bool)
        self.read_error = ""
        self.colour_range: tuple[float, float] | None = None    # levels of the colour bar (numeric colouring)
        self.n_unplaced = 0
        self._combo_key = None
        self._filling = False

        self.x_combo, self.y_combo, self.colour_combo = QComboBox(), QComboBox(), QComboBox()
        for c in (self.x_combo, self.y_combo, self.colour_combo):
            c.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)   # shrinks in a narrow dock
            c.setMinimumContentsLength(12)
            c.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            c.view().setTextElideMode(Qt.ElideNone)
            c.currentIndexChanged.connect(self._choice_changed)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("re-read the campaign's summary (new runs of a campaign still writing)")
        self.refresh_button.clicked.connect(self.refresh)
        self.follow_box = QCheckBox("auto")
        self.follow_box.setToolTip(f"re-read the summary every {REFRESH_MS / 1000:g} s until the campaign is complete")
        self.follow_box.setChecked(True)
        self.follow_box.toggled.connect(lambda _on: self._update_timer())
        self.timer = QTimer(self, interval=REFRESH_MS, timeout=self.poll)
        self._reader = _Reader(self)
        self._reader.done.connect(self._read_done)
        self._reading = False
        self._last_sig = None

        controls = QGridLayout()         # x  [....]  y  [....]  /  colour  [.........]  Refresh  auto
        for k, (text, w) in enumerate((("x", self.x_combo), ("y", self.y_combo), ("colour", self.colour_combo))):
            lab = QLabel(text)
            lab.setProperty("role", "key")
            row, col = divmod(k, 2)
            controls.addWidget(lab, row, 2 * col)
            controls.addWidget(w, row, 2 * col + 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.follow_box)
        controls.addLayout(buttons, 1, 3)
        controls.setColumnStretch(1, 1)
        controls.setColumnStretch(3, 1)

        self.header = QLabel("no campaign open")
        self.header.setTextFormat(Qt.RichText)
        self.header.setWordWrap(True)
        self.legend = QLabel("")
        self.legend.setTextFormat(Qt.RichText)
        self.legend.setWordWrap(True)
        self.status = QLabel("")
        self.status.setProperty("role", "key")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground(BACKGROUND)
        self.view.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.plot: pg.PlotItem = self.view.addPlot(row=0, col=0)
        self.plot.showGrid(x=True, y=True, alpha=0.18)
        self.plot.setMenuEnabled(False)
        self.scatter = pg.ScatterPlotItem(size=SIZE, hoverable=True, hoverSize=SIZE + 5,
                                          hoverPen=pg.mkPen(MARK, width=2), tip=self._tip)
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        self.ring = pg.ScatterPlotItem(size=SIZE + 10, symbol="o", pen=pg.mkPen(MARK, width=2.5), brush=None)
        self.ring.setZValue(10)
        self.ring.setAcceptHoverEvents(False)
        self.plot.addItem(self.ring)
        self.colour_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colour_map(), interactive=False,
                                          width=16, colorMapMenu=False)
        self.view.addItem(self.colour_bar, row=0, col=1)
        self.colour_bar.setVisible(False)
        self._style_axes()

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.header)
        lay.addLayout(controls)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.legend)
        lay.addWidget(self.status)
        style.observe(self.apply_theme)

    def _style_axes(self):
        for ax in ("left", "bottom"):
            self.plot.getAxis(ax).setTextPen(style.AXIS_TEXT)
            self.plot.getAxis(ax).setPen(style.FRAME)
        self.colour_bar.axis.setTextPen(style.AXIS_TEXT)

    def apply_theme(self):
        """View → Theme: the map drawn again in the theme's colours (style.observe calls it)."""
        self.setStyleSheet(STYLE)
        self.view.setBackground(BACKGROUND)
        self._style_axes()
        self.ring.setPen(pg.mkPen(MARK, width=2.5))
        if self.summary is not None:
            self._redraw()
            self._update_text()

    # ---- opening and refreshing ---------------------------------------------------------------
    def open(self, directory) -> None:
        """Read the campaign in `directory` and show it; raises CampaignError (nothing changes) on a bad one."""
        from solver.campaign import read_summary
        sig = directory_signature(directory)
        summary = read_summary(directory)
        self.directory = Path(directory)
        self._last_sig = sig
        self.marked = None
        self.set_summary(summary, fresh=True)

    def refresh(self) -> bool:
        """Re-read the summary now (the Refresh button); a read error is shown in the status line, the map stays."""
        if self.directory is None:
            return False
        from solver.campaign import read_summary
        sig = directory_signature(self.directory)
        try:
            summary = read_summary(self.directory)
        except Exception as exc:  # noqa: BLE001  (a campaign still writing may be momentarily unreadable)
            self._read_failed(str(exc))
            return False
        self._last_sig = sig
        self.read_error = ""
        self.set_summary(summary)
        return True

    def poll(self) -> bool:
        """The timer: if the directory changed, re-read the summary in a thread (the GUI stays responsive)."""
        if self.directory is None or self._reading:
            return False
        sig = directory_signature(self.directory)
        if sig == self._last_sig:
            return False
        self._reading = True
        directory = self.directory
        threading.Thread(target=self._read_in_thread, args=(directory, sig), daemon=True).start()
        return True

    def _read_in_thread(self, directory: Path, sig):
        from solver.campaign import read_summary
        try:
            result, error = read_summary(directory), ""
        except Exception as exc:  # noqa: BLE001  (reported in the status line by the GUI thread)
            result, error = None, str(exc)
        try:
            self._reader.done.emit((directory, sig, result, error))
        except RuntimeError:      # the map was closed meanwhile
            pass

    def _read_done(self, payload):
        directory, sig, summary, error = payload
        self._reading = False
        if directory != self.directory:      # another campaign was opened meanwhile
            return
        if summary is None:
            self._read_failed(error)
            return
        self._last_sig = sig
        self.read_error = ""
        self.set_summary(summary)

    def _read_failed(self, error: str):
        self.read_error = error
        self.status.setText(f"could not re-read the summary: {error}")

    def complete(self) -> bool:
        s = self.summary
        return s is not None and len(s.index) >= s.n_planned

    def _update_timer(self):
        want = self.summary is not None and self.follow_box.isChecked() and not self.complete()
        if want and not self.timer.isActive():
            self.timer.start()
        elif not want:
            self.timer.stop()

    def set_summary(self, summary, fresh: bool = False) -> None:
        """Show `summary`; keeps the chosen axes, colouring and (unless fresh) the zoom."""
        self.summary = summary
        names = [p.name for p in summary.parameters] + [n for n in summary.outputs]
        self._columns = {n: np.asarray(summary.column(n), float) for n in names}
        self.codes = outcome_codes(summary)
        self._kept = np.array([summary.run_path(int(i)) is not None for i in summary.index], bool)
        self._fill_combos()
        self._redraw(autorange=fresh)
        self._update_timer()
        self.summaryChanged.emit()

    # ---- choices ------------------------------------------------------------------------------
    def _axis_items(self) -> list[tuple[str, str]]:
        s = self.summary
        items = [(p.name, f"{p.label} [{unit_text(p.unit)}]" if p.unit else p.label) for p in s.parameters]
        items += [(n, f"{display_label(lab)} [{unit_text(u)}]" if u else display_label(lab))
                  for n, (u, lab) in s.outputs.items()]
        return items

    def _fill_combos(self):
        s = self.summary
        key = (tuple(self._axis_items()), tuple(s.outputs))
        if key == self._combo_key:
            return                    # same choices: leave the combos (and any open popup) alone on a refresh
        self._combo_key = key
        params = [p.name for p in s.parameters]
        wanted = (self.x_combo.currentData() or (params[0] if params else None),
                  self.y_combo.currentData() or (params[1] if len(params) > 1 else None),
                  self.colour_combo.currentData() or OUTCOME)
        self._filling = True
        try:
            for combo, choice in ((self.x_combo, wanted[0]), (self.y_combo, wanted[1])):
                combo.clear()
                for k, (name, text) in enumerate(self._axis_items()):
                    if k == len(params) and k > 0:
                        combo.insertSeparator(combo.count())
                    combo.addItem(text, name)
                i = combo.findData(choice)
                combo.setCurrentIndex(max(i, 0))
            self.colour_combo.clear()
            self.colour_combo.addItem("outcome", OUTCOME)
            self.colour_combo.insertSeparator(1)
            for name, (unit, label) in s.outputs.items():
                label = display_label(label)
                self.colour_combo.addItem(f"{label} [{unit_text(unit)}]" if unit else label, name)
            i = self.colour_combo.findData(wanted[2])
            self.colour_combo.setCurrentIndex(max(i, 0))
        finally:
            self._filling = False

    def set_axes(self, x: str, y: str) -> None:
        """Plot parameter (or output) `x` against `y` (column names)."""
        for combo, name in ((self.x_combo, x), (self.y_combo, y)):
            i = combo.findData(name)
            if i < 0:
                raise KeyError(f"{name!r} is not a parameter or output of campaign {self.summary.name}")
            combo.setCurrentIndex(i)

    def set_colour_by(self, name: str) -> None:
        """Colour by OUTCOME or by a numeric output column."""
        i = self.colour_combo.findData(name)
        if i < 0:
            raise KeyError(f"{name!r} is not an output of campaign {self.summary.name}")
        self.colour_combo.setCurrentIndex(i)

    @property
    def x_name(self) -> str:
        return self.x_combo.currentData()

    @property
    def y_name(self) -> str:
        return self.y_combo.currentData()

    @property
    def colour_by(self) -> str:
        return self.colour_combo.currentData() or OUTCOME

    def _choice_changed(self, *_):
        if not self._filling and self.summary is not None:
            self._redraw(autorange=True)

    # ---- drawing ------------------------------------------------------------------------------
    def _unit_label(self, name: str) -> tuple[str, str]:
        s = self.summary
        for p in s.parameters:
            if p.name == name:
                return p.unit, p.label
        unit, label = s.outputs.get(name, ("", name))
        return unit, display_label(label)

    def _set_axis_label(self, axis, name: str):
        unit, label = self._unit_label(name)
        label_axis(axis, label, unit)

    def _redraw(self, autorange: bool = False):
        x, y = self._columns.get(self.x_name), self._columns.get(self.y_name)
        if x is None or y is None:
            self.scatter.clear()
            return
        placed = np.isfinite(x) & np.isfinite(y)
        order = np.argsort(self.codes, kind="stable")      # failures drawn last, on top
        self.rows = order[placed[order]]
        self.n_unplaced = int((~placed).sum())
        rows = self.rows
        symbols = [OUTCOMES[c][2] for c in self.codes[rows]]
        by = self.colour_by
        if by == OUTCOME:        # kept runs get a white rim (it would hide the colour of a value, and a thin x)
            pens = [ERROR_PEN if c == ERROR else KEPT_PEN if k else PLAIN_PEN
                    for c, k in zip(self.codes[rows], self._kept[rows])]
        else:
            pens = [PLAIN_PEN] * len(rows)
        if by == OUTCOME:
            brushes = [pg.mkBrush(OUTCOMES[c][1]) for c in self.codes[rows]]
            self.colour_bar.setVisible(False)
        else:
            brushes = self._numeric_brushes(self._columns[by], rows)
        self.scatter.setData(x=x[rows], y=y[rows], data=np.arange(len(rows)), symbol=symbols, brush=brushes,
                             pen=pens, size=SIZE)
        self._set_axis_label(self.plot.getAxis("bottom"), self.x_name)
        self._set_axis_label(self.plot.getAxis("left"), self.y_name)
        self._draw_mark()
        self._update_text()
        if autorange:
            self.plot.enableAutoRange()

    def _numeric_brushes(self, v: np.ndarray, rows: np.ndarray) -> list:
        ok = np.isfinite(v) & (self.codes != ERROR)       # a diverged run's peaks say nothing of the design
        vals = v[ok]
        lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.0, 1.0)
        if hi <= lo:
            lo, hi = lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0)
        cmap = colour_map()
        t = np.clip((v[rows] - lo) / (hi - lo), 0.0, 1.0)
        colours = cmap.map(np.nan_to_num(t), mode="qcolor")
        fin = np.isfinite(v[rows])
        brushes = [pg.mkBrush(c) if f else pg.mkBrush(NO_VALUE) for c, f in zip(colours, fin)]
        unit, label = self._unit_label(self.colour_by)
        bar = self.colour_bar
        bar.setVisible(True)          # before labelling: a hidden axis keeps its SI prefix at 1
        label_axis(bar.axis, label, unit)
        bar.axis.setWidth(None)       # room for the label next to the tick values
        bar.setLevels((lo, hi))
        bar.axis.updateAutoSIPrefix()
        self.colour_range = (lo, hi)
        return brushes

    def _update_text(self):
        s = self.summary
        n = len(s.index)
        c = self.codes
        cap = int(np.count_nonzero(np.asarray(s.captured, bool)))
        frac = (lambda k: f"{100.0 * k / n:.1f} %") if n else (lambda k: "\u2014")
        self.header.setText(
            f"<b>{s.name}</b> &nbsp;\u00b7&nbsp; {s.variant} &nbsp;\u00b7&nbsp; "
            f"<b>{n}</b> of {s.n_planned} runs done{'' if n >= s.n_planned else ' (running or stopped)'}"
            f" &nbsp;\u00b7&nbsp; capture success <b>{frac(cap)}</b>"
            f" &nbsp;\u00b7&nbsp; verdict PASS <b>{frac(int(np.count_nonzero(c == PASS)))}</b>"
            + self._top_failures())
        neutral = self.colour_by != OUTCOME
        parts = []
        for code, (text, colour, _sym, glyph) in enumerate(OUTCOMES):
            col = style.AXIS_TEXT if neutral else colour
            parts.append(f"<span style='color:{col}; font-size:{style.MAP_GLYPH_PT}pt'>{glyph}</span>&nbsp;{text} "
                         f"<b>{int(np.count_nonzero(c == code))}</b>")
        if neutral:
            unit, label = self._unit_label(self.colour_by)
            missing = int(np.count_nonzero(~np.isfinite(self._columns[self.colour_by])))
            if missing:
                parts.append(f"<span style='color:{NO_VALUE}; font-size:{style.MAP_GLYPH_PT}pt'>\u25cf</span>&nbsp;no {label} "
                             f"<b>{missing}</b>")
        else:
            parts.append(f"<span style='color:{style.CAPTURE}; font-size:{style.MAP_GLYPH_PT}pt'>\u25ef</span>&nbsp;white rim: full run kept "
                         f"<b>{int(np.count_nonzero(self._kept))}</b>")
        if self.n_unplaced:
            parts.append(f"not placed (no value on an axis) <b>{self.n_unplaced}</b>")
        self.legend.setText(" &nbsp;&nbsp; ".join(parts))

    def _top_failures(self, k: int = 3) -> str:
        """Header suffix: the k most frequent failure reasons with their run counts."""
        counts = getattr(self.summary, "failure_counts", None)
        top = list(counts().items())[:k] if counts else []
        if not top:
            return ""
        return " &nbsp;\u00b7&nbsp; failures: " + ", ".join(f"{why} <b>{len(runs)}</b>" for why, runs in top)

    # ---- hover, click, mark -------------------------------------------------------------------
    def row_of(self, index: int) -> int:
        """The summary row of campaign run `index` (KeyError if it has not finished)."""
        hits = np.flatnonzero(np.asarray(self.summary.index) == index)
        if not len(hits):
            raise KeyError(f"run {index} is not among the finished runs of campaign {self.summary.name}")
        return int(hits[0])

    def point_of(self, index: int) -> tuple[float, float]:
        """Data coordinates of run `index` on the map."""
        r = self.row_of(index)
        return float(self._columns[self.x_name][r]), float(self._columns[self.y_name][r])

    def tooltip(self, index: int) -> str:
        """The hover text of run `index`: outcome, ICs, key outputs and whether a click opens or re-runs it."""
        s = self.summary
        r = self.row_of(index)
        lines = [f"run {index}: {OUTCOMES[self.codes[r]][0]}"]
        notes = [s.message[r]] if s.message[r] else []
        verdict = getattr(s, "verdict", None)          # the capture verdict line, if the summary has it
        if verdict and verdict[r] and self.codes[r] != PASS:
            notes += verdict[r].split("; ")
        for note in notes:
            lines += textwrap.wrap(note, TIP_WIDTH, initial_indent="  ", subsequent_indent="    ")
        for p in s.parameters:
            lines.append(f"{p.label} = {fmt_quantity(self._columns[p.name][r], p.unit)}")
        shown = key_outputs(s)
        if self.colour_by != OUTCOME and self.colour_by not in shown:
            shown.append(self.colour_by)
        for n in shown:
            unit, label = self._unit_label(n)
            lines.append(f"{label} = {fmt_quantity(self._columns[n][r], unit)}")
        peaks = [(self._columns[n][r], n) for n in contact_peaks(s) if math.isfinite(self._columns[n][r])]
        if peaks:
            v, n = max(peaks)
            unit, label = self._unit_label(n)
            lines.append(f"largest contact peak: {label} = {fmt_quantity(v, unit)}")
        path = s.run_path(int(index))
        lines.append(f"click: open full run {path.name}" if path is not None else
                     "summary only: click re-runs it")
        return "\n".join(lines)

    def _tip(self, x, y, data):
        return self.tooltip(int(self.summary.index[self.rows[int(data)]]))

    def _clicked(self, _item, points, _ev):
        if len(points):
            self.runRequested.emit(int(self.summary.index[self.rows[int(points[0].data())]]))

    def mark_run(self, index: int | None) -> None:
        """Ring run `index` (the one open in the main window); None clears."""
        self.marked = index
        self._draw_mark()

    def _draw_mark(self):
        if self.summary is None or self.marked is None:
            self.ring.clear()
            return
        try:
            x, y = self.point_of(self.marked)
        except KeyError:
            self.ring.clear()
            return
        if math.isfinite(x) and math.isfinite(y):
            self.ring.setData(x=[x], y=[y])
        else:
            self.ring.clear()

    def show_status(self, text: str) -> None:
        self.status.setText(text)
