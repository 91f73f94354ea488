"""Each plot's y range fitted to its curves' data inside the x range, as pyqtgraph's visible-only auto range
would fit it (cheaper: measured once per x range and data, and ahead for the next scroll step)."""
from __future__ import annotations

import math
import warnings

import numpy as np


def visible_bounds(t: np.ndarray, y: np.ndarray, x0: float, x1: float) -> tuple[float, float] | None:
    """Finite min and max of y over the samples with x0 <= t <= x1 (what pyqtgraph's visible-only auto range
    measures), None when there are none."""
    a, b = np.searchsorted(t, x0, side="left"), np.searchsorted(t, x1, side="right")
    seg = y[a:b]
    if seg.size == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # all-NaN: handled below
        lo, hi = float(np.nanmin(seg)), float(np.nanmax(seg))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        seg = seg[np.isfinite(seg)]
        if seg.size == 0:
            return None
        lo, hi = float(seg.min()), float(seg.max())
    return lo, hi


def fitted_range(curves: list, vb, x0: float, x1: float) -> tuple[float, float] | None:
    """The y range of the visible `curves` (PlotDataItems) over [x0, x1], padded as pyqtgraph's auto range pads
    (a cosmetic pen's pixel margin, then the view's suggested padding); None without finite data there."""
    spans = []
    for c in curves:
        if c.isVisible() and c.xData is not None and len(c.xData):
            b = visible_bounds(c.xData, c.yData, x0, x1)
            if b is not None:
                spans.append((b, c.curve.pixelPadding()))
    if not spans:
        return None
    lo, hi = min(b[0] for b, _ in spans), max(b[1] for b, _ in spans)
    h = vb.height()
    if h > 0:
        px = (hi - lo) / h
        lo, hi = min(lo, *(b[0] - p * px for b, p in spans)), max(hi, *(b[1] + p * px for b, p in spans))
    wp = (hi - lo) * vb.suggestPadding(1)
    return lo - wp, hi + wp


class YFits:
    """Fitted y ranges remembered per (plot, x range, view height, curves' data): the next scroll step's range,
    fitted ahead, is not measured again when it is shown."""

    KEEP = 32

    def __init__(self):
        self._memo: dict = {}

    def clear(self):
        self._memo.clear()

    def y_range(self, i: int, xrange: tuple[float, float], curves: list, vb) -> tuple[float, float] | None:
        key = (i, tuple(xrange), vb.height(), tuple((id(c.xData), id(c.yData), c.isVisible()) for c in curves))
        hit = self._memo.get(key)
        if hit is not None:
            return hit[0]
        y = fitted_range(curves, vb, *xrange)
        if len(self._memo) >= self.KEEP:
            self._memo.clear()
        self._memo[key] = (y, [(c.xData, c.yData) for c in curves])   # (the arrays stay alive: ids stay theirs)
        return y
