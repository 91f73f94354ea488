"""The plots' time arithmetic in plain Python (no Qt): the scrolling window, the frames loaded around it, and the
draw-ahead plan — when the next scroll step comes and how much of its drawing to do at each frame before it.

The plan is a function of the playback state (`viewer.playback_state.PlaybackState`: frame, playing, `stride`,
`next_frame`); the pane asks the model for those and keeps no copy of playback. Tested without Qt
(tests/test_plots_ahead_plan.py) as the playback model is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CURSOR_AT = 0.8         # where the yellow line sits in the scrolling window (share of its width)
DEFAULT_WINDOW = 10.0   # s of run time shown in scrolling mode
COST_DATA, COST_LINE, COST_BARS, COST_AXIS, COST_LABELLED_AXIS = 1.0, 1.0, 1.5, 0.3, 3.5   # rough relative costs
COST_DRAWN_AXIS = 2.0   # an unlabelled time axis drawing a tick layout it does not keep yet (COST_AXIS: kept)
# of drawing ahead a line's display data, its image, the lane bars, an unlabelled or a labelled axis (~0.5 ms each)


def scroll_window(t: float, width: float, graph_step: float, t0: float, t1: float) -> tuple[float, float]:
    """The scrolling x range: moves in whole GraphSteps so the traces shift right to left by GraphStep."""
    if t1 - t0 <= width:
        return t0, t0 + width
    left = t - CURSOR_AT * width
    left = math.floor(left / graph_step) * graph_step if graph_step > 0 else left
    left = min(max(left, t0), t1 - width)
    return left, left + width


def range_at(time: np.ndarray, t: float, scrolling: bool, window: float, graph_step: float) -> tuple[float, float]:
    """The x range at run time t: the scrolling window, or the whole run."""
    t0, t1 = float(time[0]), float(time[-1])
    return scroll_window(t, window, graph_step, t0, t1) if scrolling else (t0, t1)


def frames_in(time: np.ndarray, rng: tuple[float, float]) -> tuple[int, int]:
    """Frames [a, b) that draw the x range: those in it and one either side."""
    n = len(time)
    a = max(int(np.searchsorted(time, rng[0], side="left")) - 1, 0)
    b = min(int(np.searchsorted(time, rng[1], side="right")) + 1, n)
    return a, b


def span_for(time: np.ndarray, rng: tuple[float, float], scrolling: bool, chunk: int) -> tuple[int, int]:
    """Frames to load for an x range: those in it plus a window either side, from a whole chunk (all frames when
    not scrolling)."""
    n = len(time)
    if not scrolling:
        return 0, n
    a, b = frames_in(time, rng)
    margin = max(b - a, chunk)
    return max(a - margin, 0) // chunk * chunk, min(b + margin, n)


@dataclass(frozen=True)
class AheadPlan:
    """The next scroll step: its x range, and the frames still shown before it (each does a share of its
    drawing ahead)."""
    next_range: tuple[float, float]
    frames_left: int


def plan_ahead(time: np.ndarray, xrange: tuple[float, float], window: float, graph_step: float, frame: int,
               stride: int, playing: bool) -> AheadPlan | None:
    """The draw-ahead plan at `frame` for a scrolling window showing `xrange`; None when no step follows (the
    window is at the run's end, or GraphStep is not positive). `stride`: frames per shown frame while playing
    (the playback model's `stride`; 1 when stepping)."""
    if graph_step <= 0:
        return None
    x0, x1 = xrange
    t0, t1 = float(time[0]), float(time[-1])
    nxt = scroll_window(x0 + CURSOR_AT * (x1 - x0) + 1.5 * graph_step, window, graph_step, t0, t1)
    if nxt == tuple(xrange):
        return None
    # frames still to be shown before the step: it comes when the time passes x0 + GraphStep + the cursor's place
    due = int(np.searchsorted(time, x0 + graph_step + CURSOR_AT * (x1 - x0), side="left"))
    stride = max(int(stride), 1)
    if playing:   # this frame and the next ones before the last one, which applies the step's range ahead; the
        left = (due - frame - 1) // (stride + 1)   # frames played vary by one (counted long)
    else:
        left = (due - frame) // stride
    return AheadPlan(nxt, left)


def drawings_now(costs: list[float], frames_left: int) -> int:
    """How many of the pending drawings (their rough costs, in order) to make at this frame: an even share of
    their total cost per frame left, at least one."""
    share = sum(costs) / max(1, frames_left)
    done, k = 0.0, 0
    while k < len(costs) and (done == 0.0 or done + costs[k] <= share + 1e-9):
        done += costs[k]
        k += 1
    return k
