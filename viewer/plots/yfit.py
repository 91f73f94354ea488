"""Each plot's y range fitted to its curves' data inside the x range, as pyqtgraph's visible-only auto range
would fit it (cheaper: measured once per x range and data, and ahead for the next scroll step)."""
from __future__ import annotations

import functools
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


def nice_steps(start: float):
    """1-2-5 steps from the first one at or above `start` (> 0) upwards."""
    p10 = 10.0 ** math.floor(math.log10(start))
    k = 0
    while True:
        for m in (1.0, 2.0, 5.0):
            step = m * p10 * 10.0 ** k
            if step >= start * (1 - 1e-9):
                yield step
        k += 1


@functools.lru_cache(maxsize=512)
def readable_range(lo: float, hi: float, height: float, text: float, top: float,
                   room: float) -> tuple[float, float]:
    """The narrowest y range holding [lo, hi] below the top `top` px (the legend's strip) and 3 labelled 1-2-5 ticks
    at least `room` px apart, none nearer an edge than half a label (`text` px: pyqtgraph drops a label that sticks
    out); `height`: the view's px. [lo, hi] itself when the view is too short for that."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return lo, hi
    if hi - lo <= 0:
        d = abs(lo) * 0.1 or 1.0
        lo, hi = lo - d, hi + d
    b, a = text / 2 + 1, text / 2 + 1           # px kept free under the lowest and over the highest tick
    if height <= top + b + 2 * room or height <= a + b + 2 * room:
        return lo, hi
    best = None
    steps = nice_steps((hi - lo) * room / height)
    for _ in range(12):
        m = next(steps)
        for k in range(math.floor(lo / m) - 2, math.ceil(hi / m) + 1):
            t0, t1 = k * m, (k + 2) * m          # three ticks k, k+1, k+2
            s = max((hi - lo) / (height - top), (t1 - lo) / (height - a), (hi - t0) / (height - top - b),
                    (t1 - t0) / (height - a - b))   # units per px: every constraint met
            if m / s >= room and (best is None or s < best[0]):
                best = (s, min(lo, t0 - b * s), min(lo, t0 - b * s) + height * s)
    return (best[1], best[2]) if best is not None else (lo, hi)
