"""The one runner: a scenario through its mechanism type's kernels into a run file v1 (`run_scenario`): the plan,
the block loop with the writer, events, state snapshots, cancel and live view (`run_kernels`), branching."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from solver.contact_events import EventAccumulator, event_records, event_rows
from solver.runfile import RunFile, RunMeta, RunWriter
from solver.scenario import ScenarioError, load_model  # noqa: F401  (re-exported)


class SolverDiverged(RuntimeError):
    """The run stopped on a NaN state or a penetration over the maximum; the partial run file is kept."""


class RunCancelled(RuntimeError):
    """The caller's `cancel()` said stop; the run file is kept, truncated and marked incomplete (`kept` False: stopped
    before its first frame, nothing written)."""
    kept = True


def t_end_limit(m) -> float:
    """The longest run a scenario of m's mechanism type may ask for, s (the schema's range of solver.duration)."""
    from solver import schema
    from solver import mechanisms
    try:
        return schema.lookup("solver.duration", getattr(m, "mechanism_type", mechanisms.DEFAULT_TYPE)).hi
    except KeyError:   # a type assembled outside the schema's registry (e.g. a test's): the default type's limit
        return schema.lookup("solver.duration", mechanisms.DEFAULT_TYPE).hi


# ---- run from a stored state (branch runs): snapshots under /state, one per written block ----------------
STATE_ROWS = ("s", "Z", "contact_prev")   # continuous state, discrete state, contact flags of the last step


@dataclass
class StartState:
    """A branch start at time `t`: the snapshot `state` (`STATE_ROWS`) taken `skip` frames earlier, at `t_snap`, by
    a solver of `mechanism_type`."""
    t: float
    state: dict = field(default_factory=dict)
    source: str = ""
    t_snap: float = 0.0
    skip: int = 0
    mechanism_type: str = ""


def run_plan(m, T: float, t0: float, start: StartState | None, mechanism_type: str,
             solver_version: str) -> tuple[int, int, RunMeta]:
    """Of a checked run from t0 to T: solver steps per frame, frames, and the run file's metadata (a branch's comment
    names its source)."""
    spo = int(round(m.output_step / m.step))
    n_total = int(math.floor((T - t0) / m.output_step + 1e-9)) + 1
    comment = m.comment if start is None else f"branch of {start.source} at t = {t0:.4f} s; {m.comment}"
    meta = RunMeta(comment=comment, variant=m.variant, mechanism_type=mechanism_type,
                   run_date=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                   solver_version=solver_version, output_step=m.output_step, scenario=m.name)
    return spo, n_total, meta


STEPS_PER_CALL = 1000   # solver steps per kernel call at most: a numba call cannot be interrupted, so a cancel waits
                        # for one call (~0.05-0.1 s of the built-in types' kernels), whatever the step


BLOCK_STEPS = 5000      # solver steps per written block at most (a state snapshot, progress and a flush each)


def block_frames(block: int, spo: int) -> int:
    """Frames of a written block: `block`, fewer when its frames are many steps each (a long output step)."""
    return max(1, min(block, BLOCK_STEPS // max(spo, 1)))


def frames_in_calls(call, t: float, k: int, spo: int, outs: list, ok: int, cancel=None, tick=None, done=None,
                    piece=None, steps: int = STEPS_PER_CALL) -> tuple[int, float, int, bool]:
    """Integrate k frames of `spo` steps through `call(t, n, spo, outs) -> (status, t, rows)` (a kernel recording frame
    rows from outs[i][0]) in calls of at most `steps` steps, `cancel()` checked between calls. Returns (status, t,
    rows, cancelled). A frame of more steps goes in pieces, `tick(t)` between them; a piece (`piece`, default `call`)
    records its start in a scratch row: dropped, or the frame's row if the run ends in it with status `done`."""
    rows, status, scratch = 0, ok, None
    per = max(1, steps // max(spo, 1))
    while rows < k:
        view = [a[rows:] for a in outs]
        if spo <= steps:
            n = min(per, k - rows)
            status, t, r = call(t, n, spo, view)
            rows += r
            if status != ok or r < n:
                return status, t, rows, False
        else:
            status, t, r = call(t, 1, steps, view)
            left = spo - steps
            scratch = scratch or [np.zeros((1, *a.shape[1:]), a.dtype) for a in outs]
            while status == ok and r == 1 and left > 0:
                if tick is not None:
                    tick(t)
                if cancel is not None and cancel():
                    return status, t, rows + 1, True
                n = min(steps, left)
                status, t, r = (piece or call)(t, 1, n, scratch)
                left -= n
                if r == 1 and done is not None and status == done:
                    for a, b in zip(outs, scratch):
                        a[rows] = b[0]
            rows += r
            if status != ok:
                return status, t, rows, False
        if rows < k and cancel is not None and cancel():
            return status, t, rows, True
    return status, t, rows, False


def replay_to_branch(start: StartState, run_block, block: int, ok: int, n_ev, scenario_path, cancel=None,
                     writer=None) -> float:
    """Re-simulate a branch's `skip` frames from its snapshot (the same steps give the same state) with
    `run_block(t, frames)` -> (status, t, frames done), and forget their events; ScenarioError if that fails,
    RunCancelled (the `writer`'s file discarded) on `cancel()`."""
    t, left, status = start.t_snap, int(start.skip), ok
    while left > 0 and status == ok:
        status, t, done = run_block(t, min(block, left))
        left -= done
        if cancel is not None and cancel():
            if writer is not None:
                writer.discard()
            exc = RunCancelled(f"{Path(scenario_path).name}: cancelled while re-simulating to the branch time "
                               f"{start.t:g} s; nothing written")
            exc.kept = False
            raise exc
        if done == 0:
            break
    if n_ev is not None:     # (a Kernels object forgets its own events)
        n_ev[0] = 0
    if status != ok or left:
        raise ScenarioError(scenario_path, "start", f"re-simulating to the branch time {start.t:g} s failed")
    return t


def start_from_run(run_path, frame: int) -> StartState:
    """Branch start at `frame` of a run: its last state snapshot before it (ValueError for a run without /state)."""
    from solver import mechanisms
    with RunFile(run_path) as r:
        frame = min(max(int(frame), 0), r.n_frames - 1)
        snap = r.state_at(frame)
        if snap is None or any(k not in snap[1] for k in STATE_ROWS):
            raise ValueError(f"{Path(run_path).name}: /state: run has no stored solver state to branch from")
        f0, st = snap
        mtype = mechanisms.for_run(r)
        sizes = mtype.state_sizes() if mtype.state_sizes is not None else {}
        for k, n in sizes.items():
            if len(st[k]) != n:
                raise ValueError(f"{Path(run_path).name}: /state/{k}: {len(st[k])} values, this solver's state has {n} "
                                 f"(written by another solver version: run its scenario again to branch from it)")
        return StartState(float(r.time[frame]), st, f"{Path(run_path).name} frame {frame}", float(r.time[f0]),
                          frame - f0, mtype.name)


def with_output_step(m, output_step, scenario_path):
    """The model with its frame step replaced (None: unchanged); ScenarioError unless a multiple of the step."""
    if output_step is None:
        return m
    out = float(output_step)
    spo = out / m.step if math.isfinite(out) and out > 0 else math.nan
    if not (spo >= 1.0 - 1e-9 and abs(spo - round(spo)) <= 1e-6):
        raise ScenarioError(scenario_path, "output_step", f"{output_step!r} must be a positive multiple of the "
                            f"solver step {m.step:g} s")
    return dataclasses.replace(m, output_step=out)


def end_run(w, scenario_path, t: float, T: float, t_capture: float, diverged: str | None = None,
            cancelled: bool = False):
    """Close a run file: complete, or marked incomplete with a diagnostic event and SolverDiverged (`diverged`: why)
    or RunCancelled (any mechanism type's runner ends here)."""
    if diverged is None and not cancelled:
        w.finish(t_capture=t_capture, complete=True)
        return
    msg = (f"{Path(scenario_path).name}: diverged at t = {t:.6f} s: {diverged}" if diverged is not None else
           f"{Path(scenario_path).name}: cancelled at t = {t:.4f} s (of {T:g} s)")
    w.add_event(t, "diagnostic", "", msg)
    w.finish(t_capture=t_capture, complete=False)
    raise (SolverDiverged if diverged is not None else RunCancelled)(msg)


class Kernels(Protocol):
    """A mechanism type's step kernel over one run's arrays, as `run_kernels` drives it."""
    ok: int                                  # the kernel's status "go on"
    spo: int                                 # solver steps per frame
    state: dict                              # the arrays a snapshot stores (STATE_ROWS), changed in place
    cancel: object                           # set by run_kernels: cancel() -> True stops, checked by `advance`
    tick: object                             # between kernel calls (frames_in_calls); tick(t): progress inside a
    cancelled: bool                          # long frame; cancelled: `advance` stopped on cancel()

    def advance(self, t: float, frames: int, last: bool = False) -> tuple[int, float, int]: ...  # status, t, rows

    def frames(self, rows: int) -> tuple: ...                # (t, ch, pos, q, act, f, p, n, d, vn)[:rows]

    def flexible_frames(self, rows: int) -> dict | None: ...  # flexible parts' points per frame, None: no such parts

    def t_capture(self) -> float: ...                        # NaN before capture

    def forget_events(self) -> None: ...

    def new_events(self, w: RunWriter) -> None: ...          # write the kernel's events since the last call

    def finish(self, w: RunWriter, status: int, t: float) -> tuple[int, str | None]: ...  # status, why diverged


def run_kernels(w: RunWriter, k: Kernels, pairs, output_step: float, scenario_path, T: float, t0: float,
                n_total: int, start: StartState | None = None, progress=None, cancel=None, block: int = 1000,
                end_uncaptured_at: float = math.inf) -> Path:
    """The block loop of every type: a state snapshot per block (branching), frames and contact intervals to the
    writer, capture, events, flush (live view), progress and cancel; the file closed by `end_run`. A run not captured
    by `end_uncaptured_at` (s) ends complete at the first block end past it (its verdict is settled)."""
    try:
        contact_events = EventAccumulator(pairs)
        t = t0
        status = k.ok
        if start is not None:
            for name, a in k.state.items():
                a[:] = start.state[name]
            replay_to_branch(start, lambda t, n: k.advance(t, n), block, k.ok, None, scenario_path, cancel, w)
            k.forget_events()
            t = t0
            w.add_event(t0, "phase", "",
                        f"branch from {start.source} at t = {t0:.4f} s with {Path(scenario_path).name}")
        done = 0
        t_capture = k.t_capture()
        cancelled = False
        k.cancel = cancel                # checked between kernel calls of at most STEPS_PER_CALL steps by a
        # kernel that splits its frames (frames_in_calls); tick: progress between the pieces of a long frame
        k.tick = (lambda tt: progress(tt, T)) if progress is not None and not getattr(w, "live", False) else None
        k.cancelled = False
        spo = k.spo
        while done < n_total:
            n = min(block_frames(block, spo), n_total - done)
            w.add_state(done, k.state)   # one snapshot per block, for branching
            status, t, rows = k.advance(t, n, done + n == n_total)   # the last frame: no integration past it
            if rows:
                f = k.frames(rows)
                flex = k.flexible_frames(rows)   # a type with flexible parts (docs/run-format.md)
                w.append(*f, **({} if flex is None else {"flexible": flex}))
                contact_events.append(f[0], f[4], f[5], f[7], f[9])
            done += rows
            if not math.isnan(tc := k.t_capture()):
                t_capture = tc
                w.set_capture(t_capture)   # a live file's readers see it after this block's flush
            k.new_events(w)
            w.flush_due()   # every block when live; else every FLUSH_INTERVAL s of wall time
            if progress is not None:
                progress(t, T)
            if k.cancelled or (status == k.ok and cancel is not None and done < n_total and cancel()):
                cancelled = True
                break
            if status != k.ok:
                break
            if t >= end_uncaptured_at and math.isnan(t_capture) and done < n_total:
                w.add_event(t, "phase", "", f"run ended: not captured by {end_uncaptured_at:g} s (the capture limit)")
                break
        # contact begin/end rows and /contact_events, each interval's statistics at the output step, from one table
        contact_table = contact_events.table()
        for row in event_rows(contact_table):
            w.add_event(*row)
        w.set_contact_events(event_records(contact_table), output_step)
        status, diverged = k.finish(w, status, t)
        if diverged is not None:
            end_run(w, scenario_path, t, T, t_capture, diverged=diverged)
        end_run(w, scenario_path, t, T, t_capture, cancelled=cancelled)
    except BaseException:   # the writer thread stops; the file is closed as it is (finish closed it already
        w.abort()          # for a divergence or a cancel)
        raise
    return w.path


class BlockKernels:
    """`Kernels` of a step kernel with the engine's calling convention, so a type needs no adapter of its own:
    run_block(s, Z, t, h, n_out, spo, *arrays, ev, n_ev, prev, *outs) -> (status, t, rows), status 0 to go on, spo 0
    records a frame without a step, ev rows (t, kind, pair), capture flag and time at Z[capture[0]], Z[capture[1]];
    the model's s0 and Z0 start the state."""
    ok = 0

    def __init__(self, run_block, m, arrays: tuple, spo: int, block: int, shapes: tuple,
                 events: dict, pairs, capture: tuple[int, int], n_events: int = 1024):
        self.run_block, self.m, self.arrays, self.spo, self.pairs = run_block, m, arrays, spo, pairs
        self.events, self.capture = events, capture
        self.state = {"s": m.s0.copy(), "Z": m.Z0.copy(), "contact_prev": np.zeros(len(pairs), np.int64)}
        nc, nb, npair = shapes
        self.outs = [np.zeros(block), np.zeros((block, nc)), np.zeros((block, nb, 3)), np.zeros((block, nb, 4)),
                     np.zeros((block, npair), np.uint8), np.zeros((block, npair, 3)), np.zeros((block, npair, 3)),
                     np.zeros((block, npair, 3)), np.zeros((block, npair)), np.zeros((block, npair))]
        self.ev, self.n_ev, self.read = np.zeros((n_events, 3)), np.zeros(1, np.int64), 0

    done = None        # a status that ends the run complete inside a long frame (its row kept), if the kernel has one
    last_spo = 0       # steps of the run's last frame (0: recorded without integrating past it)
    cancel = tick = None   # set by run_kernels: checked / called between kernel calls of at most STEPS_PER_CALL steps
    cancelled = False

    def call(self, t: float, n: int, spo: int, outs) -> tuple[int, float, int]:
        """One kernel call: n frames of spo steps from t into outs."""
        st = self.state
        return self.run_block(st["s"], st["Z"], t, self.m.step, n, spo, *self.arrays, self.ev, self.n_ev,
                              st["contact_prev"], *outs)

    def advance(self, t: float, frames: int, last: bool = False):
        """Integrate `frames` frames from t in calls of at most STEPS_PER_CALL steps: (status, t, rows recorded)."""
        status, t, rows, self.cancelled = frames_in_calls(self.call, t, frames - last, self.spo, self.outs, self.ok,
                                                          self.cancel, self.tick, self.done)
        if last and status == self.ok and not self.cancelled:
            status, t, r = self.call(t, 1, self.last_spo, [a[rows:] for a in self.outs])
            rows += r
        return status, t, rows

    def frames(self, rows: int) -> tuple:
        return tuple(a[:rows] for a in self.outs)

    def flexible_frames(self, rows: int) -> dict | None:
        """The flexible parts' frames (none by default: a type with flexible parts overrides it)."""
        return None

    def t_capture(self) -> float:
        Z = self.state["Z"]
        return float(Z[self.capture[1]]) if Z[self.capture[0]] > 0.5 else math.nan

    def forget_events(self):
        self.n_ev[0], self.read = 0, 0

    def new_events(self, w: RunWriter):
        """Write the kernel's events since the last call."""
        for i in range(self.read, min(int(self.n_ev[0]), self.ev.shape[0])):
            self.add_event(w, self.ev[i])
        self.read = int(self.n_ev[0])

    def add_event(self, w: RunWriter, row):
        """One kernel event row (t, kind, pair index) as `events[kind]` = (event kind, text with {pair}) says."""
        t, kind, j = row
        name, text = self.events[int(kind)]
        pair = self.pairs[int(j)] if 0 <= j < len(self.pairs) else None
        w.add_event(float(t), name, pair.name if pair else "", text.format(pair=pair.label if pair else ""))

    def finish(self, w: RunWriter, status: int, t: float):
        return status, (None if status == self.ok else f"solver status {status}")


def run_model(m, scenario_path, out_path, kernels, meta_args: tuple, channels, bodies, pairs, parts,
              state_sizes: dict, progress=None, t_end=None, cancel=None, live: bool = False, start=None,
              block: int = 500, flexible=None, extrema: bool = False, end_uncaptured_at: float = math.inf) -> Path:
    """Plan, compile the type's kernel units (solver.warmup: before any wall clock or live view starts; nothing for a
    type that lists none), open the writer and drive `kernels(spo, block)` (a Kernels) with `run_kernels`: a type's
    runner in one call. meta_args: (mechanism type, solver version); flexible: the run's FlexiblePart list; extrema:
    the kernels keep the verdict quantities' extrema at the solver's rate (written to /extrema)."""
    from solver.warmup import compile_kernels
    compile_kernels(m)
    T = float(t_end) if t_end is not None else m.duration
    t0 = float(start.t) if start is not None else 0.0
    spo, n_total, meta = run_plan(m, T, t0, start, *meta_args)
    w = RunWriter(Path(out_path), meta, channels, bodies, pairs, parts, parameters_toml=m.text, contact_detail=True,
                  state_sizes={**state_sizes, "contact_prev": len(pairs)}, live=live, contact_statistics=True,
                  flexible=flexible, extrema=extrema)
    return run_kernels(w, kernels(spo, block), pairs, m.output_step, scenario_path, T, t0, n_total, start=start,
                       progress=progress, cancel=cancel, block=block, end_uncaptured_at=end_uncaptured_at)


def run_scenario(scenario_path, out_path, progress=None, t_end=None, start: StartState | None = None,
                 cancel=None, block: int | None = None, live: bool = False, output_step: float | None = None,
                 end_uncaptured_at: float | None = None) -> Path:
    """Simulate a scenario into a run file; raises ScenarioError on bad input, SolverDiverged on divergence.

    `start`: begin at another run's stored state (a branch); `cancel()` -> True stops after the current block
    (RunCancelled). The file is written with HDF5 SWMR and flushed every second of wall time (a killed run keeps its
    frames up to about two seconds before); with `live`, after every `block` frames, so the app can follow it. `output_step`
    (s, a multiple of the solver step) replaces the scenario's frame step: the integration is the same, only fewer
    frames are recorded (long runs: 0.01 s writes a tenth of the 1 ms file in a fraction of the time); it must not
    exceed the run's length. The last frame is the last output step at or before t_end: nothing is simulated past it.
    `end_uncaptured_at` (s; every type's runner passes it to run_kernels): a run not captured by then ends there,
    complete."""
    from solver import mechanisms
    m = with_output_step(load_model(scenario_path), output_step, scenario_path)
    mtype = getattr(m, "mechanism_type", mechanisms.DEFAULT_TYPE)
    if start is not None and start.mechanism_type != mtype:
        raise ScenarioError(scenario_path, "start", f"{start.source} is a {start.mechanism_type} run, this scenario's "
                            f"mechanism is {mtype}: branch with a scenario of the run's type")
    if start is not None and output_step is not None:
        raise ScenarioError(scenario_path, "output_step", "a branch run keeps the scenario's output step")
    T = float(t_end) if t_end is not None else m.duration
    if not (T > 0 and math.isfinite(T)):
        raise ScenarioError(scenario_path, "t_end", f"must be a positive number of seconds, found {t_end!r}")
    if T > t_end_limit(m):
        raise ScenarioError(scenario_path, "t_end", f"{T:g} s is beyond the longest run, {t_end_limit(m):g} s")
    t0 = float(start.t) if start is not None else 0.0
    if T <= t0:
        raise ScenarioError(scenario_path, "t_end", f"{T:g} s must be later than the branch time {t0:g} s")
    if m.output_step > T - t0 + 1e-9:
        raise ScenarioError(scenario_path, "output_step", f"{m.output_step:g} s must not exceed the run's length "
                            f"({T - t0:g} s, from {t0:g} s to t_end)")
    try:
        runner = mechanisms.mechanism_type(mtype).run
    except KeyError as exc:
        raise ScenarioError(scenario_path, "mechanism", f"its mechanism_type: {exc.args[0]}") from None
    more = {} if block is None else {"block": block}       # frames per block (and snapshot); else the type's own
    if end_uncaptured_at is not None:                      # (a campaign's option, end_uncaptured)
        more["end_uncaptured_at"] = float(end_uncaptured_at)
    return runner(m, scenario_path, out_path, progress=progress, t_end=T, cancel=cancel, live=live, start=start, **more)

