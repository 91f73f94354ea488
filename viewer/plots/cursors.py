"""Data cursors over the time plots: a hover line in every plot with the hovered plot's values beside the mouse, and
two measuring cursors (A, B) in every plot, dragged in any one, read as Δt, ΔY and slope per channel."""
from __future__ import annotations

import math

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, Qt, Signal

from viewer import style
from viewer.numbers import value_text
from viewer.plots.view import CursorLine


class MeasureLine(CursorLine):
    """A measuring cursor in one plot: dragged, it moves its twins in the other plots (`Cursors`)."""

    def __init__(self, t: float, pen):
        super().__init__(t, pen, z=20)
        self.setMovable(True)
        self.setHoverPen(pg.mkPen(pen.color(), width=3))


class Cursors(QObject):
    """The hover line and the two measuring cursors of a plots pane (`times()`: (A, B) or None when off)."""

    changed = Signal()   # a measuring cursor moved (or they were turned on or off)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.on = False
        self.t_a = self.t_b = math.nan
        self.lines: list[tuple[MeasureLine, MeasureLine]] = []   # per plot
        self.hover_lines: list[CursorLine] = []
        self.hover_text: pg.TextItem | None = None
        self.hover_t: float | None = None
        self._moving = False

    def attach(self, plots: list):
        """New plots (the pane rebuilt them): the cursors and hover line go into each."""
        self.lines, self.hover_lines, self.hover_text = [], [], None
        for p in plots:
            hl = CursorLine(0.0, pg.mkPen(style.HOVER, width=1, style=Qt.DashLine), z=15)
            hl.setVisible(False)
            p.addItem(hl, ignoreBounds=True)
            self.hover_lines.append(hl)
            pair = []
            for key, color in (("a", style.CURSOR_A), ("b", style.CURSOR_B)):
                ln = MeasureLine(self.t_a if key == "a" else self.t_b, pg.mkPen(color, width=1.5))
                ln.setVisible(self.on)
                ln.sigPositionChanged.connect(lambda line, k=key: self._dragged(k, line.value()))
                p.addItem(ln, ignoreBounds=True)
                pair.append(ln)
            self.lines.append(tuple(pair))

    def set_on(self, on: bool, shown: tuple[float, float] | None = None):
        """Show the measuring cursors (placed at 1/3 and 2/3 of the `shown` x range when they are not in it)."""
        self.on = bool(on)
        if on and shown is not None:
            x0, x1 = shown
            if not (math.isfinite(self.t_a) and x0 <= self.t_a <= x1 and x0 <= self.t_b <= x1):
                self.t_a, self.t_b = x0 + (x1 - x0) / 3, x0 + 2 * (x1 - x0) / 3
        self._place()
        self.changed.emit()

    def set_times(self, t_a: float, t_b: float):
        """Put cursor A at t_a and B at t_b (run time, s)."""
        self.t_a, self.t_b = float(t_a), float(t_b)
        self._place()
        self.changed.emit()

    def times(self) -> tuple[float, float] | None:
        return (self.t_a, self.t_b) if self.on else None

    def _place(self):
        self._moving = True
        try:
            for a, b in self.lines:
                for ln, t in ((a, self.t_a), (b, self.t_b)):
                    ln.setVisible(self.on)
                    if self.on and ln.value() != t:
                        ln.setValue(t)
        finally:
            self._moving = False

    def _dragged(self, key: str, t: float):
        if self._moving:
            return
        if key == "a":
            self.t_a = float(t)
        else:
            self.t_b = float(t)
        self._place()
        self.changed.emit()

    # ---- hover ---------------------------------------------------------------------------------
    def hover(self, t: float | None, plot=None, lines: list[str] | None = None):
        """The hover line at run time t in every plot, and `lines` (the hovered plot's values) beside it in
        `plot`; None: hidden."""
        self.hover_t = t
        for hl in self.hover_lines:
            hl.setVisible(t is not None)
            if t is not None:
                hl.setValue(t)
        if self.hover_text is not None:
            scene = self.hover_text.scene()
            if scene is not None:
                scene.removeItem(self.hover_text)
            self.hover_text = None
        if t is None or plot is None or not lines:
            return
        item = pg.TextItem(html="<br>".join(lines), anchor=(0, 0), border=pg.mkPen(style.HOVER),
                           fill=pg.mkBrush(*style.READOUT_BACKGROUND))
        item.setZValue(1000)
        scene = plot.scene()
        scene.addItem(item)                  # (in the scene, not the plot: a short plot's view would cut it)
        vb = plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        at = vb.mapViewToScene(QPointF(t, y1))
        views = scene.views()
        room = (views[0].mapToScene(views[0].viewport().rect()).boundingRect() if views else scene.sceneRect())
        below = room.bottom() - at.y() >= item.boundingRect().height()
        right = at.x() + item.boundingRect().width() <= room.right() and t <= x0 + 0.6 * (x1 - x0)
        item.setAnchor((0 if right else 1, 0 if below else 1))   # (the side with room for it)
        item.setPos(at if below else vb.mapViewToScene(QPointF(t, y0)))
        self.hover_text = item


def value_at(t: np.ndarray, y: np.ndarray, at: float) -> float:
    """y linearly interpolated at run time `at` (NaN outside t or where y is NaN)."""
    if len(t) == 0 or not (t[0] <= at <= t[-1]):
        return math.nan
    i = int(np.searchsorted(t, at))
    if i == 0 or t[i] == at:
        return float(y[i])
    f = (at - t[i - 1]) / (t[i] - t[i - 1])
    return float(y[i - 1] + f * (y[i] - y[i - 1]))


def measure_lines(t_a: float, t_b: float, rows: list[tuple[str, str, float, float]]) -> list[str]:
    """The measuring cursors' readout: A, B and Δt, then per channel (name, unit, value at A, at B) ΔY and slope."""
    dt = t_b - t_a
    out = [f"A {t_a:.4f} s  B {t_b:.4f} s", f"Δt {dt:.4f} s"]
    for name, unit, ya, yb in rows:
        dy = yb - ya
        slope = dy / dt if dt else math.nan
        out.append(f"{name}: ΔY {value_text(dy, unit)}, slope {value_text(slope, f'{unit}/s' if unit else '1/s')}")
    return out
