"""Events dock: the run's contact events in a sortable, filterable table; double-click jumps to a start, the
context menu (and keys K, Ctrl+G) to an event's peak or end, or to a typed time.

Events touching the shown frame are bold on a dark yellow row. The dock observes the diagram's
`eventsChanged` and the playback's `frameChanged`; it changes time only through the playback model.
"""
from __future__ import annotations

import math

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDockWidget, QDoubleSpinBox, QFileDialog,
                               QHBoxLayout, QHeaderView, QInputDialog, QLabel, QMenu, QPushButton, QTableView,
                               QVBoxLayout, QWidget)

from solver.contact_events import EventTable, write_csv
from viewer import style
from viewer.contact_lanes import pair_title

COLUMNS = ("pair", "start\ns", "end\ns", "dur.\ns", "peak\nN", "imp.\nN·s", "v\nm/s", "reb.")   # unit under
# the name: the columns fit a dock 30 % of a 1280 px window wide
COLUMN_TIPS = ("contact pair", "start: first instant in contact", "end: first instant apart (or the run's end)",
               "duration", "peak normal force", "impulse: time integral of the normal force",
               "approach speed along the normal at the start (— : not resolved, the pair already separated at the "
               "first step in contact)", "rebound: touched again within 0.5 s after the end")
APPROX = "≈ "          # header prefix of statistics recomputed from the stored frames
SORT_ROLE = Qt.UserRole
TABLE_PT = 8.5
HIDE_FIRST = (3, 7, 6)   # columns hidden, in this order, when the dock is too narrow for all: dur. (end − start),
# reb., v (each row's tooltip still lists every value)
SORT_ARROW_PX = 12       # a header's sort indicator (Fusion style)
PAIR_MIN_CHARS = 8       # the pair column keeps names of about this many characters before a column is hidden
PAIR_CHARS = 14    # the pair column's names have at most this many characters (pair_title; whole label: tooltip)
_DISPLAY, _FONT, _BACKGROUND, _ALIGN, _TOOLTIP, _SORT = (int(r) for r in (  # data() compares plain ints
    Qt.DisplayRole, Qt.FontRole, Qt.BackgroundRole, Qt.TextAlignmentRole, Qt.ToolTipRole, SORT_ROLE))
_LEFT, _RIGHT = int(Qt.AlignLeft | Qt.AlignVCenter), int(Qt.AlignRight | Qt.AlignVCenter)


def impulse_text(v: float) -> str:
    """An impulse in at most 6 characters: 29722, 271.5, 0.9576, 3.4e-4 (the CSV export keeps every digit)."""
    if v == 0.0 or abs(v) >= 1000.0:
        return f"{v:.0f}"
    if abs(v) >= 0.01:
        return f"{v:.4g}"
    m, e = f"{v:.1e}".split("e")
    return f"{m}e{int(e)}"


class EventTableModel(QAbstractTableModel):
    """Rows of an EventTable; SORT_ROLE gives raw numbers so sorting is numeric."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table: EventTable | None = None
        self.current: set[int] = set()
        self._bold = QFont()
        self._bold.setBold(True)
        self._current_brush = QBrush(QColor(*style.CURRENT_ROW))   # the event at T Current
        self._values: list[tuple] = []  # per row: pair label, start, end, duration, peak, impulse, speed, rebound
        self._rows: list[tuple | None] = []    # display strings per row (None: not shown yet)
        self._sort: list[tuple] = []    # SORT_ROLE values per row (NaN as -inf)
        self.pair_chars = PAIR_CHARS    # the pair column's names have at most this many characters (_fit_columns)
        self.time_decimals = 4          # start, end, duration: as many decimals as the event times need (<= 4)

    def set_table(self, table: EventTable | None):
        self.beginResetModel()
        self.table = table
        self.current = set()
        n = len(table) if table is not None else 0
        self._rows = [None] * n         # display strings, made when a row is first shown
        self._values, self._sort = [], []
        if n:                           # (whole columns at once: data() is called per cell and role)
            titles = {q: pair_title(table.labels.get(q, q), q, self.pair_chars) for q in table.pairs}
            labels = [titles[table.pair(r)] for r in range(n)]
            cols = [np.asarray(a, float) for a in (table.start, table.end, table.end - table.start,
                                                   table.peak_force, table.impulse, table.approach_speed)]
            times = np.concatenate([cols[0], cols[1]])
            times = times[np.isfinite(times)]
            self.time_decimals = next((d for d in range(1, 4) if np.all(np.abs(np.round(times, d) - times) < 1e-9)),
                                      4)
            rebound = np.asarray(table.rebound, bool).tolist()
            self._values = list(zip(labels, *(c.tolist() for c in cols), rebound))
            self._sort = list(zip(labels, *(np.where(np.isnan(c), -math.inf, c).tolist() for c in cols), rebound))
        self.endResetModel()

    def _row(self, row: int) -> tuple:
        """The display strings of one row (computed once per table: data() is called per cell and role)."""
        out = []
        for c, v in enumerate(self._values[row]):
            if c == 0:
                out.append(v)
            elif c == 7:
                out.append("yes" if v else "no")
            elif isinstance(v, float) and math.isnan(v):
                out.append("—")
            else:
                d = self.time_decimals
                out.append({1: f"{v:.{d}f}", 2: f"{v:.{d}f}", 3: f"{v:.{d}f}", 4: f"{v:.1f}",
                            5: impulse_text(v), 6: f"{v:.4f}"}[c])
        return tuple(out)

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() or self.table is None else len(self.table)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        approx = self.table is not None and self.table.approximate and section > 0
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return APPROX + COLUMNS[section] if approx else COLUMNS[section]
        if orientation == Qt.Horizontal and role == Qt.ToolTipRole:
            return COLUMN_TIPS[section] + (f"\n{self.table.describe()}" if approx else "")
        return None

    def data(self, index, role=Qt.DisplayRole):
        if self.table is None or not index.isValid():
            return None
        r = index.row()
        if role == _DISPLAY:
            row = self._rows[r]
            if row is None:
                row = self._rows[r] = self._row(r)
            return row[index.column()]
        if role == _FONT:
            return self._bold if r in self.current else None
        if role == _BACKGROUND:
            return self._current_brush if r in self.current else None
        if role == _ALIGN:
            return _LEFT if index.column() in (0, 7) else _RIGHT
        if role == _SORT:
            return self._sort[r][index.column()]
        if role == _TOOLTIP:
            t = self.table
            a, b = t.parts.get(t.pair(r), ("", ""))
            row = self._rows[r] if self._rows[r] is not None else self._row(r)
            values = ", ".join(f"{COLUMNS[c].replace(chr(10), ' ')} {row[c]}" for c in range(1, len(COLUMNS)))
            return (f"{t.pair(r)} ({t.labels.get(t.pair(r), t.pair(r))}): {a} / {b}; peak at {t.peak_time[r]:.4f} s; frames {t.start_frame[r]}–"
                    f"{t.end_frame[r]}\n{values}\n{t.describe()}")
        return None

    def set_pair_chars(self, chars: int):
        """Names in the pair column of at most `chars` characters (the whole label stays the row's tooltip)."""
        if chars == self.pair_chars:
            return
        self.pair_chars = chars
        t = self.table
        if t is None or not len(t):
            return
        titles = {q: pair_title(t.labels.get(q, q), q, chars) for q in t.pairs}
        for r in range(len(t)):
            self._values[r] = (titles[t.pair(r)],) + tuple(self._values[r][1:])
            self._sort[r] = (titles[t.pair(r)],) + tuple(self._sort[r][1:])
            self._rows[r] = None
        self.dataChanged.emit(self.index(0, 0), self.index(len(t) - 1, 0))

    def pair_titles(self) -> list[str]:
        """The pair column's names as shown now, one per pair of the table."""
        t = self.table
        return [] if t is None else [pair_title(t.labels.get(q, q), q, self.pair_chars) for q in t.pairs]

    def set_current(self, rows: set[int]):
        """Mark the events touching the shown frame; repaints only the rows that change."""
        if rows == self.current:
            return
        changed = rows ^ self.current
        self.current = rows
        for r in changed:
            self.dataChanged.emit(self.index(r, 0), self.index(r, len(COLUMNS) - 1))


class EventFilter(QSortFilterProxyModel):
    """Filter by pair ('' = all) and by minimum peak normal force."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.pair = ""
        self.min_force = 0.0
        self.setSortRole(SORT_ROLE)

    def set_filter(self, pair: str, min_force: float):
        if hasattr(self, "beginFilterChange"):          # Qt >= 6.10; invalidateFilter is deprecated there
            self.beginFilterChange()
            self.pair, self.min_force = pair, float(min_force)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.pair, self.min_force = pair, float(min_force)
            self.invalidateFilter()

    def filterAcceptsRow(self, row, parent):
        t = self.sourceModel().table
        if t is None:
            return False
        if self.pair and t.pair(row) != self.pair:
            return False
        return not (t.peak_force[row] < self.min_force)


class EventsDock(QDockWidget):
    """Dock with the contact-event table of the diagram's run."""

    seekRequested = Signal(int)     # a frame to go to (the start of a double-clicked event, an event's peak or end)
    timeRequested = Signal(float)   # a run time to go to (Go to time…)

    def __init__(self, diagram=None, parent=None):
        super().__init__("Contact events", parent)
        self.setObjectName("events_dock")
        self.table: EventTable | None = None
        self.run = None
        self.frame = 0
        self._last = None          # each event's last frame in contact (see show_frame)
        w = QWidget()
        v = QVBoxLayout(w)
        v.setContentsMargins(4, 4, 4, 4)
        self.pair_box = QComboBox()
        self.pair_box.setToolTip("Show one contact pair")
        self.pair_box.setFocusPolicy(Qt.ClickFocus)
        self.min_force_box = QDoubleSpinBox(decimals=0, minimum=0.0, maximum=1e9, singleStep=100.0, suffix=" N")
        self.min_force_box.setToolTip("Show events whose peak normal force is at least this")
        self.min_force_box.setKeyboardTracking(False)
        self.min_force_box.setFocusPolicy(Qt.ClickFocus)
        self.count_label = QLabel("")
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setFocusPolicy(Qt.NoFocus)
        self.export_button.setToolTip("Write the rows shown (filter and order as in the table) to a CSV file")
        self.export_button.clicked.connect(self.export_dialog)
        row = QHBoxLayout()                    # two rows: the dock keeps to a quarter of a 1280 px window
        row.addWidget(QLabel("pair"))
        row.addWidget(self.pair_box, 1)
        row.addWidget(QLabel("peak ≥"))
        row.addWidget(self.min_force_box)
        v.addLayout(row)
        row = QHBoxLayout()
        row.addWidget(self.count_label, 1)
        row.addWidget(self.export_button)
        v.addLayout(row)
        self.source_label = QLabel("")          # where the statistics come from (solver, or recomputed: approximate)
        self.source_label.setWordWrap(True)
        f = self.source_label.font()
        f.setPointSizeF(TABLE_PT)
        self.source_label.setFont(f)
        v.addWidget(self.source_label)
        self.model = EventTableModel(self)
        self.proxy = EventFilter(self)
        self.proxy.setSourceModel(self.model)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(1, Qt.AscendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(18)
        f = self.view.font()
        f.setPointSizeF(TABLE_PT)
        self.view.setFont(f)
        self.model._bold = QFont(f)             # rows in contact at T Current: the table's font, bold
        self.model._bold.setBold(True)
        self.view.horizontalHeader().setFont(f)
        self.view.setStyleSheet("QHeaderView::section { padding: 1px 2px; }")
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setMinimumSectionSize(24)
        self.view.horizontalHeader().sortIndicatorChanged.connect(lambda *_: self._fit_columns())
        self.view.doubleClicked.connect(self._double_clicked)
        self.view.setContextMenuPolicy(Qt.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        v.addWidget(self.view, 1)
        self.setWidget(w)
        self.pair_box.currentIndexChanged.connect(self._filter_changed)
        self.min_force_box.valueChanged.connect(self._filter_changed)
        self.last_export = None
        self.act_go_peak = self._action("Go to the &peak of this event", "K", self.go_to_peak,
                                        "the selected event's peak normal force (else: of the event at T Current)")
        self.act_go_time = self._action("&Go to time…", "Ctrl+G", self.go_to_time_dialog, "type a run time to show")
        if diagram is not None:
            diagram.eventsChanged.connect(lambda t: self.set_events(t, diagram.run))
            diagram.playback.frameChanged.connect(self.show_frame)
            self.seekRequested.connect(diagram.playback.seek_frame)
            self.timeRequested.connect(diagram.playback.seek_time)
            if diagram.events is not None:
                self.set_events(diagram.events, diagram.run)
        style.observe(self.apply_theme)

    def _style_source_note(self):
        """The note over statistics recomputed from frames in the theme's APPROX colour (else plain)."""
        t = self.table
        self.source_label.setStyleSheet(f"color: {style.APPROX};" if t is not None and t.approximate else "")

    def apply_theme(self):
        """View → Theme: the event at T Current's row colour and the note (the dock's ground is the window's
        palette; style.observe calls it)."""
        self.model._current_brush = QBrush(QColor(*style.CURRENT_ROW))
        self._style_source_note()
        self.view.viewport().update()

    # ---- content --------------------------------------------------------------------------
    def set_events(self, table: EventTable | None, run=None):
        self.table, self.run = table, run
        self._last = None
        self.model.set_table(table)
        self.source_label.setText(table.describe() if table is not None else "")
        self._style_source_note()
        self.pair_box.blockSignals(True)
        self.pair_box.clear()
        self.pair_box.addItem("all pairs", "")
        if table is not None:
            counts = np.bincount(table.pair_index, minlength=len(table.pairs))
            for j, p in enumerate(table.pairs):
                self.pair_box.addItem(f"{pair_title(table.labels.get(p, p), p, PAIR_CHARS)} ({counts[j]})", p)
                self.pair_box.setItemData(self.pair_box.count() - 1, table.labels.get(p, p), Qt.ToolTipRole)
        self.pair_box.setCurrentIndex(0)
        self.pair_box.blockSignals(False)
        self.proxy.set_filter("", self.min_force_box.value())
        self._update_count()
        self._fit_columns()
        self.show_frame(self.frame if run is not None and self.frame < run.n_frames else 0)

    def _fit_columns(self):
        """Columns just wide enough for their header (a line each) and widest value; the pair column takes the
        width left in the view, its names shortened to fit it (the whole label: the row's tooltip); when even
        that leaves too little, the columns of HIDE_FIRST are hidden in turn (hidden_columns)."""
        bold = QFont(self.view.font())
        bold.setBold(True)                               # rows in contact at T Current are bold
        fm = QFontMetrics(bold)
        hm = self.view.horizontalHeader().fontMetrics()
        pad = 8
        full = self.table is not None and len(self.table) > 0
        widths = []
        for c in range(len(COLUMNS)):
            head = self.model.headerData(c, Qt.Horizontal)
            w = max(hm.horizontalAdvance(x) for x in head.split("\n")) + 8
            if c == self.view.horizontalHeader().sortIndicatorSection():
                w += 2 * SORT_ARROW_PX                   # the sort indicator beside the centred text
            if c > 0 and full:
                w = max(w, max(fm.horizontalAdvance(str(self.model.index(r, c).data()))
                               for r in range(min(len(self.table), 200))) + pad)
            widths.append(w)
        vw = self.view.viewport().width() - 2              # (a px over: a scroll bar)
        sb = self.view.verticalScrollBar()
        if not sb.isVisible() and self.proxy.rowCount() * self.view.verticalHeader().defaultSectionSize() > \
                self.view.viewport().height():
            vw -= sb.sizeHint().width()                      # the rows will need the vertical scroll bar
        pair_min = max(fm.horizontalAdvance("m" * PAIR_MIN_CHARS) * 0.8 + pad, widths[0])
        hidden = set()
        for c in HIDE_FIRST:
            if sum(w for k, w in enumerate(widths[1:], 1) if k not in hidden) + pair_min <= vw:
                break
            hidden.add(c)
        room = vw - sum(w for k, w in enumerate(widths[1:], 1) if k not in hidden)
        if full:
            chars = PAIR_CHARS
            self.model.set_pair_chars(chars)
            while chars > 4 and max(fm.horizontalAdvance(x) for x in self.model.pair_titles()) + pad > room:
                chars -= 1
                self.model.set_pair_chars(chars)
            widths[0] = max(widths[0], max(fm.horizontalAdvance(x) for x in self.model.pair_titles()) + pad)
        widths[0] = max(widths[0], min(room, fm.horizontalAdvance("m" * PAIR_CHARS)))
        self.view.horizontalHeader().setToolTip(
            f"hidden for want of width (widen the dock; each row's tooltip lists them): "
            f"{', '.join(COLUMNS[c].replace(chr(10), ' ') for c in sorted(hidden))}" if hidden else "")
        for c, w in enumerate(widths):
            self.view.setColumnHidden(c, c in hidden)
            if c not in hidden:
                self.view.setColumnWidth(c, w)

    def hidden_columns(self) -> list[str]:
        """Headers of the columns hidden for want of width (one line each)."""
        return [COLUMNS[c].replace("\n", " ") for c in range(len(COLUMNS)) if self.view.isColumnHidden(c)]

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._fit_columns()

    def set_filter(self, pair: str = "", min_force: float = 0.0):
        """Show only `pair` ('' = all) and events with peak normal force >= min_force (N)."""
        i = self.pair_box.findData(pair)
        if i < 0:
            raise KeyError(f"no contact pair {pair!r} in this run")
        self.pair_box.setCurrentIndex(i)
        self.min_force_box.setValue(min_force)
        self._filter_changed()

    def _filter_changed(self, *_):
        self.proxy.set_filter(self.pair_box.currentData() or "", self.min_force_box.value())
        self._update_count()

    def _update_count(self):
        n = len(self.table) if self.table is not None else 0
        self.count_label.setText(f"{self.proxy.rowCount()} of {n}")

    def shown_rows(self) -> list[int]:
        """EventTable rows in the order the view shows them (after filter and sort)."""
        return [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount())]

    def cell(self, view_row: int, col: int) -> str:
        return self.proxy.index(view_row, col).data()

    # ---- time -----------------------------------------------------------------------------
    def show_frame(self, frame: int):
        """Mark the events in contact at this frame and bring the first one into view when the set changes."""
        self.frame = int(frame)
        t = self.table
        if t is None or len(t) == 0:
            self.model.set_current(set())
            return
        if self._last is None or len(self._last) != len(t):
            # last frame in contact; a contact between two stored frames is marked at the next one
            self._last = np.maximum(t.start_frame, np.where(t.lasts_to_end, t.end_frame, t.end_frame - 1))
        rows = set(np.flatnonzero((t.start_frame <= frame) & (frame <= self._last)).tolist())
        if rows != self.model.current:
            self.model.set_current(rows)
            if rows:
                src = self.model.index(min(rows, key=lambda r: (t.start[r], r)), 0)
                idx = self.proxy.mapFromSource(src)
                if idx.isValid():
                    self.view.scrollTo(idx, QAbstractItemView.EnsureVisible)

    def current_rows(self) -> list[int]:
        return sorted(self.model.current)

    def _double_clicked(self, index):
        row = self.proxy.mapToSource(index).row()
        if self.table is not None and row >= 0:
            self.seekRequested.emit(int(self.table.start_frame[row]))

    # ---- going to an event's peak, its end, a time ---------------------------------------------
    def _action(self, text: str, key: str, slot, tip: str) -> QAction:
        """An action of the dock with a window-wide key (the window may also put it in its Playback menu)."""
        a = QAction(text, self)
        a.setShortcut(QKeySequence(key))
        a.setShortcutContext(Qt.WindowShortcut)
        a.setToolTip(tip)
        a.triggered.connect(lambda *_: slot())
        self.addAction(a)
        return a

    def navigation_actions(self) -> list[QAction]:
        """Go to the peak of this event (K), Go to time… (Ctrl+G): for the window's Playback menu."""
        return [self.act_go_peak, self.act_go_time]

    def selected_row(self) -> int:
        """The EventTable row selected in the view (-1: none)."""
        rows = self.view.selectionModel().selectedRows() if self.view.selectionModel() else []
        return self.proxy.mapToSource(rows[0]).row() if rows else -1

    def _event_row(self, row: int | None) -> int:
        """`row`, else the selected event, else the event at T Current with the largest peak (-1: none)."""
        if self.table is None or len(self.table) == 0:
            return -1
        if row is None or row < 0:
            row = self.selected_row()
        if row < 0 and self.model.current:
            row = max(self.model.current, key=lambda r: float(np.nan_to_num(self.table.peak_force[r], nan=-1.0)))
        return int(row)

    def peak_frame(self, row: int) -> int:
        """The stored frame at (or just before) an event's peak normal force; its start if the peak time is unknown."""
        t = self.table
        pt = float(t.peak_time[row])
        if not math.isfinite(pt) or self.run is None:
            return int(t.start_frame[row])
        return int(min(max(self.run.frame_at(pt + 1e-9), t.start_frame[row]), self.run.n_frames - 1))

    def go_to_peak(self, row: int | None = None) -> bool:
        """Show the peak of an event (`_event_row`); False if there is no event to go to."""
        row = self._event_row(row)
        if row < 0:
            return False
        self.seekRequested.emit(self.peak_frame(row))
        return True

    def go_to_end(self, row: int | None = None) -> bool:
        """Show an event's last frame in contact."""
        row = self._event_row(row)
        if row < 0:
            return False
        t = self.table
        last = int(t.end_frame[row]) if t.lasts_to_end[row] else int(t.end_frame[row]) - 1
        self.seekRequested.emit(max(int(t.start_frame[row]), last))
        return True

    def go_to_time(self, t: float):
        """Show run time `t` (ValueError, naming the run's span, if it is outside the run)."""
        if self.run is None:
            raise ValueError("no run open")
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        if not (math.isfinite(t) and t0 - 1e-9 <= t <= t1 + 1e-9):
            raise ValueError(f"time {t:g} s is outside the run ({t0:g}–{t1:g} s)")
        self.timeRequested.emit(float(t))

    def go_to_time_dialog(self):
        """Ask for a time (within the run) and go there."""
        if self.run is None:
            return None
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        now = float(self.run.time[min(self.frame, self.run.n_frames - 1)])
        t, ok = QInputDialog.getDouble(self, "Go to time", f"T Current, s ({t0:g}–{t1:g}):", now, t0, t1, 4)
        if ok:
            self.go_to_time(t)
        return t if ok else None

    def _context_menu(self, pos):
        index = self.view.indexAt(pos)
        row = self.proxy.mapToSource(index).row() if index.isValid() else -1
        menu = QMenu(self)
        if row >= 0:
            self.view.selectRow(index.row())
            menu.addAction("Go to the &start of this event", lambda: self.seekRequested.emit(
                int(self.table.start_frame[row])))
            menu.addAction(self.act_go_peak)
            menu.addAction("Go to the &end of this event", lambda: self.go_to_end(row))
            menu.addSeparator()
        menu.addAction(self.act_go_time)
        self.context_menu = menu   # (tests read it)
        menu.popup(self.view.viewport().mapToGlobal(pos))

    # ---- export ---------------------------------------------------------------------------
    def export_csv(self, path) -> str:
        """Write the rows shown (filter and order as in the table) as CSV; returns the path."""
        if self.table is None:
            raise ValueError("no run open: no contact events to export")
        out = write_csv(self.table, path, rows=self.shown_rows())
        self.last_export = str(out)
        return str(out)

    def export_dialog(self):
        if self.table is None:
            return None
        default = str(self.run.path.with_suffix(".events.csv")) if self.run is not None else "events.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Export contact events", default, "CSV files (*.csv)")
        return self.export_csv(path) if path else None
