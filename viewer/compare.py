"""Comparing two runs without Qt: time alignment (t = 0 or first contact) and differences of a channel.

Run B is drawn on run A's time axis at t_A = t_B + offset.
"""
from __future__ import annotations

import math

import numpy as np

from solver.runfile import RunFile

ALIGN_T0 = "t0"
ALIGN_FIRST_CONTACT = "first_contact"
ALIGNMENTS = {ALIGN_T0: "t = 0", ALIGN_FIRST_CONTACT: "first contact"}


def first_contact_time(run: RunFile) -> float:
    """Time of the run's first contact: its `first_contact` event, else the first frame any pair touches; NaN if none."""
    times = [e.time for e in run.events if e.kind == "first_contact"]
    if times:
        return float(min(times))
    first = math.inf
    for pair in run.contact_pairs:
        act = run.contact_active(pair)
        if act.any():
            first = min(first, float(run.time[int(np.argmax(act))]))
    return first if math.isfinite(first) else math.nan


def alignment_offset(run_a: RunFile, run_b: RunFile, mode: str) -> tuple[float, str]:
    """Offset added to B's times to put them on A's axis, and a note for the user."""
    if mode == ALIGN_FIRST_CONTACT:
        ta, tb = first_contact_time(run_a), first_contact_time(run_b)
        if math.isfinite(ta) and math.isfinite(tb):
            return ta - tb, f"aligned on first contact (A {ta:.3f} s, B {tb:.3f} s, B shifted {ta - tb:+.3f} s)"
        missing = " and ".join(n for n, t in (("A", ta), ("B", tb)) if not math.isfinite(t))
        return 0.0, f"aligned on t = 0 (no contact in run {missing})"
    if mode != ALIGN_T0:
        raise ValueError(f"unknown alignment {mode!r} (expected one of {', '.join(ALIGNMENTS)})")
    return 0.0, "aligned on t = 0"


def resample(run_b: RunFile, name: str, t_a: np.ndarray, offset: float, values: np.ndarray | None = None) -> np.ndarray:
    """B's channel at A's times (linear), NaN where B has no data."""
    tb = run_b.time + offset
    yb = run_b.channel(name) if values is None else values
    out = np.interp(t_a, tb, yb)
    out[(t_a < tb[0] - 1e-9) | (t_a > tb[-1] + 1e-9)] = np.nan
    return out


def difference(run_a: RunFile, run_b: RunFile, name: str, offset: float,
               a_values: np.ndarray | None = None, b_values: np.ndarray | None = None) -> np.ndarray:
    """A − B of one channel on A's frames (NaN outside B's time span)."""
    ya = run_a.channel(name) if a_values is None else a_values
    return ya - resample(run_b, name, run_a.time, offset, b_values)
