"""Contact events from a run's per-pair contact records: intervals, peaks, impulses, rebounds (numpy).

`EventAccumulator` takes frames in blocks (as the solver writes them, or as the viewer reads them) and
keeps only running sums, so a 300 s, 1 kHz run is processed without holding its force arrays.
"""
from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.runfile import CONTACT_EVENT_DTYPE, TIME_CHUNK

REBOUND_WINDOW = 0.5  # s: a new contact of the same pair this soon after an end counts as a rebound
CSV_COLUMNS = ("pair", "label", "part_a", "part_b", "start_s", "end_s", "duration_s", "peak_normal_force_N",
               "peak_time_s", "impulse_Ns", "approach_speed_m_s", "rebound", "start_frame", "end_frame",
               "statistics", "sample_step_s")
# where an EventTable's statistics come from (EventTable.source)
FROM_SOLVER = "solver"                 # the run's /contact_events table, written by the solver
FROM_SOLVER_TEXT = "solver event text"  # parsed from the solver's contact_begin rows (older files)
FROM_FRAMES = "frames"                 # recomputed here from the stored frames: approximate


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
    start_frame: int        # first stored frame at or after the start
    end_frame: int          # first stored frame at or after the end

    @property
    def duration(self) -> float:
        return self.end - self.start


def intervals(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end frame indices (end exclusive) of each run of True in `active`."""
    a = np.concatenate([[0], np.asarray(active, dtype=np.int8), [0]])
    d = np.diff(a)
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def approach_speeds(normal_speed) -> np.ndarray:
    """Approach speeds from closing speeds at the first frame in contact: NaN where the pair already separates
    there (the impact's compression ended before that frame, so its approach speed is not resolved)."""
    v = np.asarray(normal_speed, float)
    return np.where(v >= 0, v, math.nan)


def normal_force(force, normal=None) -> np.ndarray:
    """Normal force magnitude per frame: |F . n|, or |F| without normals."""
    force = np.asarray(force, float)
    if normal is None:
        return np.sqrt(np.einsum("ij,ij->i", force, force))
    return np.abs(np.einsum("ij,ij->i", force, np.asarray(normal, float)))


_FIELDS = ("start_frame", "start", "end_frame", "end", "peak", "peak_time", "impulse", "approach")


class _PairAccumulator:
    """Running interval statistics of one pair; frames arrive in blocks of any size."""

    def __init__(self):
        self.n = 0                       # frames seen
        self.last_t = math.nan
        self.last_fn = 0.0
        self.last_active = False
        self.open: dict | None = None    # the interval still running at the end of the last block
        self.closed: list[dict[str, np.ndarray]] = []

    def feed(self, t, active, fn, normal_speed=None):
        """Add K frames: times, active flags, normal force magnitudes, approach speeds (or None)."""
        t = np.asarray(t, float)
        k = len(t)
        if k == 0:
            return
        act = np.asarray(active, bool)
        fn = np.where(act, np.asarray(fn, float), 0.0)
        n0 = self.n
        prev_t = t[0] if self.n == 0 else self.last_t
        prev_a = np.concatenate([[self.last_active], act[:-1]])        # active at the frame before
        tt = np.concatenate([[prev_t], t])
        ff = np.concatenate([[self.last_fn], fn])
        inc = 0.5 * (ff[1:] + ff[:-1]) * np.diff(tt)                     # trapezoid ending at each frame
        starts = act & ~prev_a
        ends = ~act & prev_a                                             # first inactive frame
        carry = self.open is not None
        ids = np.cumsum(starts) - (0 if carry else 1)                   # interval of each frame in this block
        n_int = int(ids[-1]) + 1 if k else 0
        owned = act | prev_a
        impulse = np.bincount(ids[owned], weights=inc[owned], minlength=n_int) if n_int > 0 else np.zeros(0)
        # peaks: first frame of the maximum inside each interval (active frames only)
        pos = np.flatnonzero(act)
        peak = np.full(n_int, -1.0)
        peak_at = np.full(n_int, -1, np.int64)
        if len(pos):
            gid = ids[pos]
            bounds = np.concatenate([[0], np.flatnonzero(np.diff(gid)) + 1])
            gmax = np.maximum.reduceat(fn[pos], bounds)
            counts = np.diff(np.concatenate([bounds, [len(pos)]]))
            hit = fn[pos] == np.repeat(gmax, counts)
            first = np.unique(gid[hit], return_index=True)[1]
            peak[gid[bounds]] = gmax
            peak_at[gid[bounds]] = pos[hit][first]
        s_idx = np.flatnonzero(starts)
        e_idx = np.flatnonzero(ends)
        vn = np.asarray(normal_speed, float) if normal_speed is not None else None
        # interval j of this block: j == 0 is the carried one when `carry`
        cols = {
            "start_frame": np.empty(n_int, np.int64), "start": np.empty(n_int), "approach": np.empty(n_int),
            "peak": peak, "peak_time": np.where(peak_at >= 0, t[np.maximum(peak_at, 0)], math.nan),
            "impulse": impulse,
        }
        new = slice(1, None) if carry else slice(None)
        cols["start_frame"][new] = n0 + s_idx
        cols["start"][new] = t[s_idx]
        cols["approach"][new] = approach_speeds(vn[s_idx]) if vn is not None else math.nan
        if carry:
            o = self.open
            cols["start_frame"][0], cols["start"][0], cols["approach"][0] = o["start_frame"], o["start"], o["approach"]
            cols["impulse"][0] += o["impulse"]
            if not (peak[0] > o["peak"]):                                  # keep the earlier peak on ties
                cols["peak"][0], cols["peak_time"][0] = o["peak"], o["peak_time"]
        # every interval but possibly the last one closed in this block
        n_closed = len(e_idx)
        cols["end_frame"] = np.full(n_int, -1, np.int64)
        cols["end"] = np.full(n_int, math.nan)
        cols["end_frame"][:n_closed] = n0 + e_idx
        cols["end"][:n_closed] = t[e_idx]
        if n_closed:
            self.closed.append({f: cols[f][:n_closed].copy() for f in _FIELDS})
        self.open = {f: cols[f][n_closed] for f in _FIELDS} if n_closed < n_int else None
        self.n += k
        self.last_t, self.last_fn, self.last_active = float(t[-1]), float(fn[-1]), bool(act[-1])

    def skip(self, t_first: float, t_last: float, k: int):
        """Add K frames (times t_first .. t_last) in which the pair is apart; no force data needed."""
        if k <= 0:
            return
        if self.last_active:                       # the first skipped frame ends the running interval
            self.feed(np.array([t_first]), np.zeros(1, bool), np.zeros(1))
            t_first, k = math.nan, k - 1
            if k == 0:
                return
        self.n += k
        self.last_t, self.last_fn, self.last_active = float(t_last), 0.0, False

    def finish(self) -> dict[str, np.ndarray]:
        """Columns of all intervals; one still open ends at the last frame (so its impulse stops there)."""
        parts = list(self.closed)
        if self.open is not None:
            o = dict(self.open)
            o["end_frame"], o["end"] = self.n - 1, self.last_t
            parts.append({f: np.atleast_1d(np.asarray(o[f])) for f in _FIELDS})
        if not parts:
            return {f: np.zeros(0, np.int64 if f.endswith("frame") else float) for f in _FIELDS}
        out = {f: np.concatenate([p[f] for p in parts]) for f in _FIELDS}
        out["lasts_to_end"] = np.zeros(len(out["start"]), bool)
        if self.open is not None:
            out["lasts_to_end"][-1] = True
        return out


@dataclass
class EventTable:
    """All contact events of a run as columns, sorted by start time then pair."""
    pairs: list[str]                       # pair names; `pair_index` indexes this list
    labels: dict[str, str] = field(default_factory=dict)
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)
    pair_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    start: np.ndarray = field(default_factory=lambda: np.zeros(0))
    end: np.ndarray = field(default_factory=lambda: np.zeros(0))
    peak_force: np.ndarray = field(default_factory=lambda: np.zeros(0))
    peak_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    impulse: np.ndarray = field(default_factory=lambda: np.zeros(0))
    approach_speed: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rebound: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    start_frame: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    end_frame: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    lasts_to_end: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # still touching at the last frame
    source: str = FROM_FRAMES              # FROM_SOLVER, FROM_SOLVER_TEXT or FROM_FRAMES
    sample_step: float = math.nan          # s, step of the frames the statistics were computed from (NaN: unknown)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def approximate(self) -> bool:
        """The statistics were recomputed from the stored frames, not taken from the solver."""
        return self.source == FROM_FRAMES

    def describe(self) -> str:
        """Where the statistics come from, in a sentence for the dock and the lanes."""
        step = f"{self.sample_step:g} s" if math.isfinite(self.sample_step) else "unknown"
        if self.source == FROM_SOLVER:
            return f"statistics from the solver, computed at its {step} output step"
        if self.source == FROM_SOLVER_TEXT:
            return "statistics from the solver's event log (rounded as printed there)"
        return (f"≈ statistics recomputed from the stored frames at the {step} output step — approximate: "
                "contacts between two frames are missed, peaks and speeds are those of the frames")

    @property
    def duration(self) -> np.ndarray:
        return self.end - self.start

    def pair(self, i: int) -> str:
        return self.pairs[int(self.pair_index[i])]

    def event(self, i: int) -> ContactEvent:
        return ContactEvent(self.pair(i), float(self.start[i]), float(self.end[i]), float(self.peak_force[i]),
                            float(self.peak_time[i]), float(self.impulse[i]), float(self.approach_speed[i]),
                            bool(self.rebound[i]), int(self.start_frame[i]), int(self.end_frame[i]))

    def events(self) -> list[ContactEvent]:
        return [self.event(i) for i in range(len(self))]

    def start_frames(self) -> np.ndarray:
        """Distinct event start frames, ascending (what N / P walk through)."""
        return np.unique(self.start_frame)


class EventAccumulator:
    """Contact events of several pairs from frames fed in blocks shaped like `RunWriter.append`'s."""

    def __init__(self, pairs, labels: dict[str, str] | None = None, parts: dict[str, tuple[str, str]] | None = None,
                 rebound_window: float = REBOUND_WINDOW):
        self.pairs = [getattr(p, "name", p) for p in pairs]
        self.labels = dict(labels or {getattr(p, "name", p): getattr(p, "label", "") or getattr(p, "name", p)
                                      for p in pairs})
        self.parts = dict(parts or {p.name: (p.part_a, p.part_b) for p in pairs if hasattr(p, "part_a")})
        self.rebound_window = float(rebound_window)
        self._acc = [_PairAccumulator() for _ in self.pairs]

    def append(self, time, active, force, normal=None, normal_speed=None):
        """K frames of all pairs: active (K, P), force (K, P, 3), optional normal (K, P, 3) and speed (K, P)."""
        time = np.atleast_1d(np.asarray(time, float))
        k, npair = len(time), len(self.pairs)
        if k == 0:
            return
        active = np.asarray(active).reshape(k, npair)
        force = np.asarray(force, float).reshape(k, npair, 3)
        normal = None if normal is None else np.asarray(normal, float).reshape(k, npair, 3)
        normal_speed = None if normal_speed is None else np.asarray(normal_speed, float).reshape(k, npair)
        touching = active.any(axis=0)
        for j, acc in enumerate(self._acc):
            if not touching[j]:                 # apart for the whole block: no force data needed
                acc.skip(time[0], time[-1], k)
                continue
            fn = normal_force(force[:, j], None if normal is None else normal[:, j])
            acc.feed(time, active[:, j], fn, None if normal_speed is None else normal_speed[:, j])

    def append_pair(self, j: int, time, active, force, normal=None, normal_speed=None):
        """K frames of pair j alone (readers that go pair by pair)."""
        self._acc[j].feed(time, active, normal_force(force, normal), normal_speed)

    def skip_pair(self, j: int, t_first: float, t_last: float, k: int):
        """K frames (t_first .. t_last) in which pair j is apart (its force data need not be read)."""
        self._acc[j].skip(t_first, t_last, k)

    def table(self) -> EventTable:
        """The events so far (open intervals end at the last frame fed)."""
        cols = []
        for j, acc in enumerate(self._acc):
            c = acc.finish()
            n = len(c["start"])
            c.setdefault("lasts_to_end", np.zeros(n, bool))
            nxt = np.concatenate([c["start"][1:], [math.inf]])
            c["rebound"] = ~c["lasts_to_end"] & (nxt - c["end"] <= self.rebound_window)
            c["pair_index"] = np.full(n, j, np.int64)
            cols.append(c)
        cat = {f: np.concatenate([c[f] for c in cols]) if cols else np.zeros(0, np.int64 if f in ("pair_index",
               "start_frame", "end_frame") else bool if f in ("rebound", "lasts_to_end") else float)
               for f in (*_FIELDS, "rebound", "pair_index", "lasts_to_end")}   # (a run of no pairs: none)
        order = np.lexsort((cat["pair_index"], cat["start"]))
        cat = {f: v[order] for f, v in cat.items()}
        return EventTable(self.pairs, self.labels, self.parts, cat["pair_index"], cat["start"], cat["end"],
                          cat["peak"], cat["peak_time"], cat["impulse"], cat["approach"], cat["rebound"],
                          cat["start_frame"], cat["end_frame"], cat["lasts_to_end"])


def pair_events(pair: str, time, active, force, normal=None, normal_speed=None,
                rebound_window: float = REBOUND_WINDOW) -> list[ContactEvent]:
    """Contact events of one pair from its (N,) active flags and (N, 3) force vectors."""
    acc = EventAccumulator([pair], rebound_window=rebound_window)
    acc.append_pair(0, time, active, force, normal, normal_speed)
    return acc.table().events()


def active_spans(active: np.ndarray, block: int) -> list[tuple[int, int]]:
    """Frame ranges [a, b) made of whole `block`s, merged, covering every active frame."""
    n = len(active)
    nb = -(-n // block)
    hit = np.zeros(nb, bool)
    hit[np.flatnonzero(active) // block] = True
    s, e = intervals(hit)
    return [(int(a) * block, min(int(b) * block, n)) for a, b in zip(s, e)]


def table_from_run(run, rebound_window: float = REBOUND_WINDOW, block: int = TIME_CHUNK) -> EventTable:
    """Events of every pair of a `RunFile`, with the solver's statistics where the run has them: its
    /contact_events table, else its contact_begin rows (`parse_begin_text`), else recomputed from the stored
    frames (`table_from_frames`, marked approximate). RunFileError for a malformed /contact_events."""
    stats = run.contact_statistics()
    if stats is not None:
        return table_from_statistics(run, stats[0], stats[1], FROM_SOLVER)
    rows = statistics_from_event_text(run)
    if rows is not None:
        return table_from_statistics(run, rows, math.nan, FROM_SOLVER_TEXT)
    return table_from_frames(run, rebound_window, block)


def table_from_statistics(run, rows: np.ndarray, sample_step: float, source: str) -> EventTable:
    """An EventTable of a run from contact-interval rows (CONTACT_EVENT_DTYPE fields); each event's frames are the
    first stored frames at or after its start and its end (a contact between two frames gets the next one)."""
    pairs = list(run.contact_pairs.values())
    names = [p.name for p in pairs]
    index = {n: j for j, n in enumerate(names)}
    pair_index = np.array([index[str(p)] for p in rows["pair"]], np.int64)
    start, end = np.asarray(rows["start"], float), np.asarray(rows["end"], float)
    order = np.lexsort((pair_index, start))
    t = run.time
    eps = 1e-9 * max(1.0, float(abs(t[-1])))               # times written as the same float64 match exactly

    def frame(x):
        return np.minimum(np.searchsorted(t, x[order] - eps, side="left"), len(t) - 1).astype(np.int64)

    col = {k: np.asarray(rows[k], float)[order] for k in ("peak_force", "peak_time", "impulse", "approach_speed")}
    return EventTable(names, {p.name: p.label or p.name for p in pairs}, {p.name: (p.part_a, p.part_b) for p in pairs},
                      pair_index[order], start[order], end[order], col["peak_force"], col["peak_time"],
                      col["impulse"], approach_speeds(col["approach_speed"]),
                      np.asarray(rows["rebound"], bool)[order], frame(start), frame(end),
                      np.asarray(rows["lasts_to_end"], bool)[order], source, float(sample_step))


# The statistics in a contact_begin row's text, as `event_rows` writes them (docs/run-format.md):
#   "<label>: peak normal force <N> N at <s> s, impulse <N*s> N*s, approach speed <m/s> m/s|n/a,
#    duration <s> s[, rebound]"
BEGIN_TEXT = re.compile(r"^.*: peak normal force (?P<peak>\S+) N at (?P<peak_time>\S+) s, impulse (?P<impulse>\S+) N\*s, "
                        r"approach speed (?:(?P<speed>\S+) m/s|n/a), duration (?P<duration>\S+) s(?P<rebound>, rebound)?$")


def parse_begin_text(text: str) -> dict | None:
    """The statistics of one contact_begin row's text (BEGIN_TEXT), or None if it does not follow that grammar."""
    m = BEGIN_TEXT.match(text)
    if m is None:
        return None
    try:
        out = {k: float(m[k]) for k in ("peak", "peak_time", "impulse", "duration")}
        out["speed"] = float(m["speed"]) if m["speed"] is not None else math.nan
    except ValueError:
        return None
    out["rebound"] = m["rebound"] is not None
    return out


def statistics_from_event_text(run) -> np.ndarray | None:
    """CONTACT_EVENT_DTYPE-like rows from the run's contact_begin rows; None unless every one parses (a file
    from another writer). An interval's end is its pair's contact_end row at start + duration; without one it
    lasts to the end of the run."""
    begins = [e for e in run.events if e.kind == "contact_begin"]
    parsed = [parse_begin_text(e.text) for e in begins]
    if not begins or any(p is None for p in parsed) or any(e.pair not in run.contact_pairs for e in begins):
        return None
    ends: dict[str, np.ndarray] = {}
    for e in run.events:
        if e.kind == "contact_end":
            ends.setdefault(e.pair, []).append(e.time)
    ends = {k: np.asarray(v) for k, v in ends.items()}
    rows = np.zeros(len(begins), dtype=[(k, object if k == "pair" else CONTACT_EVENT_DTYPE[k])
                                        for k in CONTACT_EVENT_DTYPE.names])
    for i, (e, p) in enumerate(zip(begins, parsed)):
        end = e.time + p["duration"]
        near = ends.get(e.pair, np.zeros(0))
        near = near[np.abs(near - end) <= 1e-4]             # duration printed to 0.1 ms
        rows[i] = (e.pair, e.time, near[0] if len(near) else end, p["peak"], p["peak_time"], p["impulse"],
                   p["speed"] if p["speed"] >= 0 else math.nan, p["rebound"], not len(near))
    return rows


def event_records(table: EventTable) -> np.ndarray:
    """The table as /contact_events rows (`RunWriter.set_contact_events`)."""
    rows = np.zeros(len(table), dtype=CONTACT_EVENT_DTYPE)
    rows["pair"] = [table.pair(i) for i in range(len(table))]
    for k, v in (("start", table.start), ("end", table.end), ("peak_force", table.peak_force),
                 ("peak_time", table.peak_time), ("impulse", table.impulse), ("approach_speed", table.approach_speed),
                 ("rebound", table.rebound), ("lasts_to_end", table.lasts_to_end)):
        rows[k] = v
    return rows


def table_from_frames(run, rebound_window: float = REBOUND_WINDOW, block: int = TIME_CHUNK) -> EventTable:
    """Events recomputed from a run's stored frames (marked approximate: at a coarse output step contacts
    between frames are missed); force data are read only in the chunks where the pair touches."""
    pairs = list(run.contact_pairs.values())
    acc = EventAccumulator(pairs, rebound_window=rebound_window)
    t_all = run.time
    n = run.n_frames
    for j, p in enumerate(pairs):
        active = run.contact_active(p.name)
        done = 0
        for a, b in active_spans(active, block):
            if a > done:
                acc.skip_pair(j, t_all[done], t_all[a - 1], a - done)
            d = run.contact_detail(p.name, a, b, fields=("normal", "normal_speed"))
            acc.append_pair(j, t_all[a:b], active[a:b], run.contact_force(p.name, a, b), d.get("normal"),
                            d.get("normal_speed"))
            done = b
        if n > done:
            acc.skip_pair(j, t_all[done], t_all[-1], n - done)
    tab = acc.table()
    tab.sample_step = float(run.meta.output_step)
    return tab


def run_events(run) -> list[ContactEvent]:
    """All contact events of a `RunFile`, sorted by start time."""
    return table_from_run(run).events()


# ---- outputs ------------------------------------------------------------------------------------

def event_rows(table: EventTable) -> list[tuple[float, str, str, str]]:
    """Rows (time, kind, pair, text) for `RunWriter.add_event`: a contact_begin with the interval's
    statistics and a contact_end per event (an interval lasting to the last frame gets no end row)."""
    rows = []
    for i in range(len(table)):
        e = table.event(i)
        label = table.labels.get(e.pair, e.pair)
        speed = f"{e.approach_speed:.4f} m/s" if math.isfinite(e.approach_speed) else "n/a"
        text = (f"{label}: peak normal force {e.peak_force:.1f} N at {e.peak_time:.4f} s, "
                f"impulse {e.impulse:.3f} N*s, approach speed {speed}, duration {e.duration:.4f} s"
                + (", rebound" if e.rebound else ""))
        rows.append((e.start, "contact_begin", e.pair, text))
    return rows + [(float(table.end[i]), "contact_end", table.pair(i), table.labels.get(table.pair(i), table.pair(i)))
                   for i in range(len(table)) if not table.lasts_to_end[i]]


def write_csv(table: EventTable, path, rows=None) -> Path:
    """Write the event table as CSV (one row per event, SI units in the column names); `rows` picks and
    orders events (default: all, by start). Each row names where its statistics come from (`statistics`:
    solver, solver event text, or "frames (approximate)") and the step they were computed at."""
    path = Path(path)
    source = f"{table.source} (approximate)" if table.approximate else table.source
    step = f"{table.sample_step:g}" if math.isfinite(table.sample_step) else ""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for i in (range(len(table)) if rows is None else rows):
            e = table.event(i)
            a, b = table.parts.get(e.pair, ("", ""))
            w.writerow([e.pair, table.labels.get(e.pair, e.pair), a, b, f"{e.start:.6f}", f"{e.end:.6f}",
                        f"{e.duration:.6f}", f"{e.peak_force:.6g}", f"{e.peak_time:.6f}", f"{e.impulse:.6g}",
                        "" if not math.isfinite(e.approach_speed) else f"{e.approach_speed:.6g}",
                        "yes" if e.rebound else "no", e.start_frame, e.end_frame, source, step])
    return path
