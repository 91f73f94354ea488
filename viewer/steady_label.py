"""A QLabel whose per-frame text changes do not re-lay out the window.

QLabel.setText asks the parent layout to recompute (and the whole window's layout runs on the next event-loop
turn) even when the new text takes the same room. `SteadyLabel` holds the label at the size its layout gives
the holder; the holder reports the label's size hints, recomputed only when the text's shape (line lengths)
changes, so the layout is the same as with the bare label. The layout runs again only when the hints change
(never for a label whose size policy ignores them); with `grow_only` the hints only grow (a label given the
rest of a row: shorter text needs no new layout).
"""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QCoreApplication, QEvent, QSize
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

_MAX = 16777215   # QWIDGETSIZE_MAX


class SteadyLabel(QWidget):
    """Lays out as `label` would; `setText` with text of the same shape only repaints the label."""

    def __init__(self, label: QLabel, parent=None, grow_only: bool = False):
        super().__init__(parent)
        self.label = label
        self.grow_only = grow_only
        label.setParent(self)
        self.setSizePolicy(label.sizePolicy())
        self.setMinimumSize(label.minimumSize())     # an explicit minimum (e.g. setMinimumWidth) stays the holder's
        self.setMaximumSize(label.maximumSize())
        label.setMinimumSize(0, 0)
        label.setMaximumSize(_MAX, _MAX)
        self._shape = self._shape_of(label.text())
        self._hint, self._min = label.sizeHint(), label.minimumSizeHint()
        label.move(0, 0)

    @staticmethod
    def _shape_of(text: str) -> tuple[int, ...]:
        return tuple(len(line) for line in text.split("\n"))

    def _hints_ignored(self) -> bool:
        pol = self.sizePolicy()
        return pol.horizontalPolicy() == QSizePolicy.Ignored and pol.verticalPolicy() == QSizePolicy.Ignored

    def setText(self, text: str):
        shape = self._shape_of(text)
        if shape == self._shape or self._hints_ignored():
            self.label.setText(text)                 # pinned: repaints, no layout request
            self._shape = shape
            return
        self.label.setMinimumSize(0, 0)
        self.label.setMaximumSize(_MAX, _MAX)
        self.label.setText(text)
        self._shape = shape
        hint, low = self.label.sizeHint(), self.label.minimumSizeHint()
        if self.grow_only:
            hint, low = hint.expandedTo(self._hint), low.expandedTo(self._min)
        self.label.setFixedSize(self.size())
        if (hint, low) != (self._hint, self._min):
            self._hint, self._min = hint, low
            self.updateGeometry()                    # the layout gives the holder its new size (resizeEvent) ...
            if self.parentWidget() is not None:      # ... now, not on a later event-loop turn: the new text was
                QCoreApplication.sendPostedEvents(self.parentWidget(), QEvent.LayoutRequest)   # shown cut till then

    def text(self) -> str:
        return self.label.text()

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return self._min

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.label.setFixedSize(self.size())
