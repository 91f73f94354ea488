"""Contact events from a run's per-pair contact records: intervals, peaks, impulses, rebounds (numpy)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REBOUND_WINDOW = 0.5  # s: a new contact of the same pair this soon after an end counts as a rebound


@dataclass(frozen=True)
class ContactEvent:
    """One contact interval of one pair."""
    pair: str
    start: float            # s, first active frame
    end: float              # s, first inactive frame after the interval (or the last frame)
    peak_force: float       # N, peak normal force (|F| when the run stores no normals)
    peak_time: float        # s
    impulse: float          # N*s, time integral of the normal force over the interval
    approach_speed: float   # m/s, normal approach speed at the first active frame (NaN if not stored)
    rebound: bool           # the pair touched again within REBOUND_WINDOW after this end
    start_frame: int
    end_frame: int

    @property
    def duration(self) -> float:
        return self.end - self.start


def intervals(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end frame indices (end exclusive) of each run of True in `active`."""
    a = np.concatenate([[0], np.asarray(active, dtype=np.int8), [0]])
    d = np.diff(a)
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def pair_events(pair: str, time, active, force, normal=None, normal_speed=None,
                rebound_window: float = REBOUND_WINDOW) -> list[ContactEvent]:
    """Contact events of one pair from its (N,) active flags and (N, 3) force vectors."""
    time = np.asarray(time, float)
    force = np.asarray(force, float)
    fn = np.abs(np.einsum("ij,ij->i", force, normal)) if normal is not None else np.linalg.norm(force, axis=1)
    fn = np.where(np.asarray(active, bool), fn, 0.0)
    s, e = intervals(active)
    if len(s) == 0:
        return []
    n = len(time)
    # impulse: integral of the piecewise-linear normal force, which is zero at inactive frames
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (fn[1:] + fn[:-1]) * np.diff(time))])
    impulse = cum[np.minimum(e, n - 1)] - cum[np.maximum(s - 1, 0)]
    peaks_idx = np.array([a + int(np.argmax(fn[a:b])) for a, b in zip(s, e)])
    out = []
    for k, (a, b) in enumerate(zip(s, e)):
        nxt = s[k + 1] if k + 1 < len(s) else None
        rebound = nxt is not None and b < n and time[nxt] - time[b] <= rebound_window
        out.append(ContactEvent(
            pair, float(time[a]), float(time[min(b, n - 1)]), float(fn[peaks_idx[k]]), float(time[peaks_idx[k]]),
            float(impulse[k]), float(normal_speed[a]) if normal_speed is not None else float("nan"),
            bool(rebound), int(a), int(min(b, n - 1))))
    return out


def run_events(run) -> list[ContactEvent]:
    """All contact events of a `RunFile`, sorted by start time."""
    out = []
    for name in run.contact_pairs:
        detail = run.contact_detail(name)
        out += pair_events(name, run.time, run.contact_active(name), run.contact_force(name),
                           detail.get("normal"), detail.get("normal_speed"))
    return sorted(out, key=lambda e: (e.start, e.pair))
