"""A row of widgets that puts the next one on a line of its own where the row is too narrow for it."""
from __future__ import annotations

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtWidgets import QSizePolicy, QWidget


class FlowRow(QWidget):
    """Children side by side while their size hints fit (the last one right-aligned at its hint, the others
    sharing the rest of the line), else wrapped to further lines; it asks only the widest child's width (a
    QHBoxLayout asks the sum)."""

    def __init__(self, widgets: list[QWidget], margins=(8, 3, 8, 4), spacing: int = 16, parent=None):
        super().__init__(parent)
        self.widgets = list(widgets)
        self.margins, self.spacing = margins, spacing
        for w in self.widgets:
            w.setParent(self)
        self.setAttribute(Qt.WA_StyledBackground)   # (a style sheet's background, also in QWidget.render)
        pol = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
        pol.setHeightForWidth(True)
        self.setSizePolicy(pol)

    def _lines(self, width: int) -> list[list[QWidget]]:
        l, _, r, _ = self.margins
        lines: list[list[QWidget]] = [[]]
        used = 0
        for w in (w for w in self.widgets if not w.isHidden()):
            need = w.sizeHint().width()
            if lines[-1] and used + self.spacing + need > width - l - r:
                lines.append([])
                used = 0
            used += (self.spacing if lines[-1] else 0) + need
            lines[-1].append(w)
        return lines

    def _height(self, lines) -> int:
        _, t, _, b = self.margins
        return t + b + sum(max(w.sizeHint().height() for w in line) for line in lines if line)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._height(self._lines(width))

    def sizeHint(self) -> QSize:
        shown = [w for w in self.widgets if not w.isHidden()]
        l, _, r, _ = self.margins
        width = l + r + sum(w.sizeHint().width() for w in shown) + self.spacing * max(len(shown) - 1, 0)
        return QSize(width, self._height([shown]))

    def minimumSizeHint(self) -> QSize:
        l, _, r, _ = self.margins
        width = l + r + max((w.sizeHint().width() for w in self.widgets if not w.isHidden()), default=0)
        return QSize(width, self.heightForWidth(width))

    def _place(self):
        l, t, r, _ = self.margins
        y = t
        for line in self._lines(self.width()):
            if not line:
                continue
            h = max(w.sizeHint().height() for w in line)
            right = self.width() - r                  # the last one at the right edge, at its hint's width
            last = line[-1].sizeHint().width() if len(line) > 1 else right - l
            line[-1].setGeometry(QRect(right - last, y, last, h))
            hints = [w.sizeHint().width() for w in line[:-1]]
            extra = max(right - last - l - self.spacing * len(hints) - sum(hints), 0) / max(len(hints), 1)
            x = l
            for w, hint in zip(line[:-1], hints):    # the others share the rest (a longer text needs no layout)
                w.setGeometry(QRect(x, y, int(hint + extra), h))
                x += int(hint + extra) + self.spacing
            y += h

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._place()

    def event(self, ev):
        if ev.type() == QEvent.LayoutRequest:      # a child's size hints changed (no layout of our own)
            self.updateGeometry()
            self._place()
        return super().event(ev)
