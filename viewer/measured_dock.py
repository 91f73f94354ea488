"""The measured-data dock: per channel the RMS and peak error, the time of the peak, the correlation r and the unit,
with the time offset used and what looks wrong in the map (a solver.measured.Comparison's metrics and warnings)."""
from __future__ import annotations

from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QDockWidget, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from viewer import style
from viewer.numbers import NO_VALUE

TABLE_PT = 8.5
COLUMNS = ("channel", "RMS\nerror", "peak\nerror", "t peak\n[s]", "r", "unit")   # two-line headers: the six
# columns fit a dock 30 % of a 1280 px window wide


def _num(x: float, spec: str = ".4g") -> str:
    """As `dockmnemo validate` prints it (4 significant digits); NO_VALUE for NaN."""
    return format(x, spec) if x == x and abs(x) != float("inf") else NO_VALUE


class MeasuredDock(QDockWidget):
    """Metrics of the measured record shown in the plots (empty: none open)."""

    def __init__(self, parent=None):
        super().__init__("Measured data", parent)
        self.setObjectName("measured_dock")
        body = QWidget(self)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        self.source = QLabel("no measured data open (File → Open measured data…)")
        self.source.setWordWrap(True)
        self.offset_label = QLabel("")
        self.offset_label.setWordWrap(True)    # (the dock keeps to its share of a small window's width)
        self.warnings_label = QLabel("")       # e.g. Euler angles in radians declared degrees (as `validate` warns)
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet(f"color: {style.APPROX};")
        self.warnings_label.setVisible(False)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(False)   # (stretched, "unit" kept a width past the view)
        self.table.horizontalHeader().setMinimumSectionSize(24)
        self.table.setStyleSheet("QHeaderView::section { padding: 1px 2px; }")   # as the events dock's
        f = self.table.font()
        f.setPointSizeF(TABLE_PT)                  # the events dock's table size: the six columns fit at 1280 px
        self.table.setFont(f)
        self.table.horizontalHeader().setFont(f)
        for w in (self.source, self.offset_label, self.warnings_label, self.table):
            lay.addWidget(w)
        self.setWidget(body)
        style.observe(self.apply_theme)

    def apply_theme(self):
        """View → Theme: the warnings' colour (the rest is the window's palette; style.observe calls it)."""
        self.warnings_label.setStyleSheet(f"color: {style.APPROX};")

    def set_comparison(self, comparison, source: str = ""):
        """Show a comparison's metrics (None: clear)."""
        self.table.setRowCount(0)
        if comparison is None:
            self.source.setText("no measured data open (File → Open measured data…)")
            self.offset_label.setText("")
            self.set_warnings([])
            return
        self.source.setText(source)
        how = "automatic alignment" if comparison.auto else "given offset"
        self.offset_label.setText(f"time offset: {comparison.offset:.6f} s ({how}; t_measured = t_run + offset)")
        self.set_warnings(comparison.warnings)
        self.table.setRowCount(len(comparison.metrics))
        for row, m in enumerate(comparison.metrics):
            cells = (m.channel, _num(m.rms), _num(m.peak), _num(m.t_peak, ".4f"), _num(m.r, ".4f"), m.unit)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col in (1, 2, 3, 4):
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.table.setItem(row, col, item)

    def set_warnings(self, warnings: list[str]):
        """Show the map's warnings ("map.toml: key: …", the map named by its file name: a path would not wrap)."""
        lines = []
        for w in warnings:
            head, sep, rest = w.partition(": ")
            lines.append(f"warning: {Path(head).name}{sep}{rest}" if sep else f"warning: {w}")
        self.warnings_label.setText("\n".join(lines))
        self.warnings_label.setVisible(bool(lines))

    def warnings(self) -> list[str]:
        """The warning lines shown (what a user reads)."""
        return self.warnings_label.text().splitlines() if self.warnings_label.isVisible() else []

    def rows(self) -> list[list[str]]:
        """The table's texts, row by row (what a user reads)."""
        t = self.table
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]
