"""A QLabel whose per-frame text changes do not re-lay out the window.

QLabel.setText asks the parent layout to recompute (and the whole window's layout runs on the next event-loop
turn) even when the new text takes the same room. `SteadyLabel` holds the label at the size its layout gives
the holder; the holder reports the label's size hints, recomputed only when the text's shape (line lengths)
changes, so the layout is the same as with the bare label.
"""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QSize
from PySide6.QtWidgets import QLabel, QWidget

_MAX = 16777215   # QWIDGETSIZE_MAX


class SteadyLabel(QWidget):
    """Lays out as `label` would; `setText` with text of the same shape only repaints the label."""

    def __init__(self, label: QLabel, parent=None):
        super().__init__(parent)
        self.label = label
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

    def setText(self, text: str):
        shape = self._shape_of(text)
        if shape == self._shape:
            self.label.setText(text)                 # pinned: repaints, no layout request
            return
        self.label.setMinimumSize(0, 0)
        self.label.setMaximumSize(_MAX, _MAX)
        self.label.setText(text)
        self._shape = shape
        self._hint, self._min = self.label.sizeHint(), self.label.minimumSizeHint()
        self.label.setFixedSize(self.size())
        self.updateGeometry()                        # the layout gives the holder its new size (resizeEvent)

    def text(self) -> str:
        return self.label.text()

    def sizeHint(self) -> QSize:
        return self._hint

    def minimumSizeHint(self) -> QSize:
        return self._min

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self.label.setFixedSize(self.size())
