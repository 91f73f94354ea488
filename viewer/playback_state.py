"""Playback arithmetic in plain Python (no Qt): stepping, GraphStep, speed ladder, looping, real-time advance.

`viewer.playback.Playback` wraps `PlaybackState` in a QObject with signals and a play timer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EVERY_FRAME = 0.0
"""Speed value meaning "play every saved frame, one per display tick" (not real time)."""
SPEED_LADDER = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0, 8.0, 16.0)
"""Real-time multipliers offered, powers of two from 1/16x to 16x."""
SPEEDS = (EVERY_FRAME,) + SPEED_LADDER
TICK_MS = 15
MAX_TICK_S = 0.5  # a longer stall (a dialog, a slow disk) does not jump the playhead further


def speed_label(speed: float) -> str:
    """'every frame', '1/4x', '2x' ..."""
    if speed == EVERY_FRAME:
        return "every frame"
    if speed >= 1:
        return f"{speed:g}x"
    return f"1/{round(1 / speed)}x"


def default_graph_step(output_step: float) -> float:
    """GraphStep default: 0.1 s rounded to a whole number of output steps (at least one step)."""
    if not (output_step > 0 and math.isfinite(output_step)):
        return 0.1
    return max(1, round(0.1 / output_step)) * output_step


@dataclass(frozen=True)
class Snapshot:
    frame: int
    playing: bool
    speed: float
    loop: bool
    loop_range: tuple[int, int] | None
    graph_step: float


class PlaybackState:
    """Widget-free playback arithmetic over a run's frame times."""

    def __init__(self, time=None, output_step: float | None = None):
        self.time = np.zeros(1)
        self.frame = 0
        self.playing = False
        self.speed = 1.0
        self.loop = False
        self.loop_range: tuple[int, int] | None = None
        self.graph_step = 0.1
        self.play_time = 0.0  # continuous playhead time while playing; the frame is derived from it
        self.event_frames = np.zeros(0, np.int64)  # contact-event start frames, ascending (N / P)
        self.stride = 1
        """Frames the last play tick moved the playhead forward (1 in every-frame mode; at 1x on a 1 kHz run
        and 60 ticks/s, about 17): the move expected of the next tick. Panes that draw ahead read it (and
        `next_frame`) instead of inferring it from the frames they are shown."""
        if time is not None:
            self.set_time(time, output_step)

    # ---- run -------------------------------------------------------------------------------
    def set_time(self, time, output_step: float | None = None):
        """Attach a run's frame times; resets to frame 0, paused, no loop range."""
        t = np.asarray(time, dtype=float)
        if t.ndim != 1 or t.size == 0:
            raise ValueError("time must be a non-empty 1-D array")
        self.time = t
        if output_step is None:
            output_step = float(np.median(np.diff(t))) if t.size > 1 else 0.1
        self.graph_step = default_graph_step(output_step)
        self.loop_range = None
        self.playing = False
        self.frame = 0
        self.play_time = float(t[0])
        self.event_frames = np.zeros(0, np.int64)

    def extend_time(self, time):
        """The run grew (frames added at the end while it is written): keep frame, play state and ranges."""
        t = np.asarray(time, dtype=float)
        if t.ndim != 1 or t.size < self.time.size:
            raise ValueError("a growing run's time must keep its frames")
        self.time = t

    @property
    def n_frames(self) -> int:
        return int(self.time.size)

    @property
    def t_current(self) -> float:
        return float(self.time[self.frame])

    @property
    def next_frame(self) -> int | None:
        """The frame the next play tick is expected to show (frame + stride); None when paused or when that tick
        would leave the play bounds (it wraps or stops there)."""
        if not self.playing:
            return None
        nf = self.frame + max(self.stride, 1)
        return nf if nf <= self.bounds()[1] else None

    def frame_at(self, t: float) -> int:
        """Last frame at or before t (1 ns tolerance for summed float time), clamped to the run."""
        i = int(np.searchsorted(self.time, t + 1e-9, side="right")) - 1
        return min(max(i, 0), self.n_frames - 1)

    def snapshot(self) -> Snapshot:
        return Snapshot(self.frame, self.playing, self.speed, self.loop, self.loop_range, self.graph_step)

    def bounds(self) -> tuple[int, int]:
        """First and last frame that play covers: the loop range if set, else the whole run."""
        return self.loop_range if self.loop_range is not None else (0, self.n_frames - 1)

    # ---- seeking and stepping --------------------------------------------------------------
    def seek_frame(self, i: int):
        self.frame = min(max(int(i), 0), self.n_frames - 1)
        self.play_time = self.t_current

    def seek_time(self, t: float):
        self.seek_frame(self.frame_at(t))

    def step(self, n: int = 1):
        """Step n frames (negative = back); stepping pauses play."""
        self.playing = False
        self.seek_frame(self.frame + n)

    def step_graph(self, k: int = 1):
        """Step k GraphSteps of time (at least one frame), pausing play."""
        self.playing = False
        target = self.t_current + k * self.graph_step
        i = self.frame_at(target)
        if i == self.frame and k:
            i += 1 if k > 0 else -1
        self.seek_frame(i)

    def home(self):
        self.seek_frame(0)

    # ---- contact events --------------------------------------------------------------------
    def set_event_frames(self, frames):
        """Start frames of the run's contact events (any order, repeats allowed)."""
        f = np.sort(np.asarray(frames, dtype=np.int64).ravel())   # (np.unique would import numpy.ma: 70 ms at open)
        f = f[np.concatenate(([True], f[1:] != f[:-1]))] if f.size else f
        self.event_frames = f[(f >= 0) & (f < self.n_frames)]

    def next_event(self):
        """Go to the first event start after the current frame (stay at the last one)."""
        i = int(np.searchsorted(self.event_frames, self.frame, side="right"))
        if i < len(self.event_frames):
            self.seek_frame(int(self.event_frames[i]))

    def prev_event(self):
        """Go to the last event start before the current frame (stay at the first one)."""
        i = int(np.searchsorted(self.event_frames, self.frame, side="left")) - 1
        if i >= 0:
            self.seek_frame(int(self.event_frames[i]))

    def end(self):
        self.seek_frame(self.n_frames - 1)

    def set_graph_step(self, seconds: float):
        if not (seconds > 0 and math.isfinite(seconds)):
            raise ValueError(f"GraphStep must be a positive time, got {seconds!r}")
        self.graph_step = float(seconds)

    # ---- speed -----------------------------------------------------------------------------
    def set_speed(self, speed: float):
        if speed not in SPEEDS:
            raise ValueError(f"speed {speed!r} is not one of {', '.join(map(speed_label, SPEEDS))}")
        self.speed = float(speed)

    def faster(self):
        """One rung up the ladder (every-frame mode goes to 1x)."""
        if self.speed == EVERY_FRAME:
            self.speed = 1.0
        else:
            i = SPEED_LADDER.index(self.speed)
            self.speed = SPEED_LADDER[min(i + 1, len(SPEED_LADDER) - 1)]

    def slower(self):
        if self.speed == EVERY_FRAME:
            self.speed = 1.0
        else:
            i = SPEED_LADDER.index(self.speed)
            self.speed = SPEED_LADDER[max(i - 1, 0)]

    # ---- loop ------------------------------------------------------------------------------
    def set_loop(self, on: bool):
        self.loop = bool(on)

    def set_loop_range(self, start: int | None, stop: int | None):
        """Loop over frames [start, stop] (inclusive); (None, None) clears the range."""
        if start is None and stop is None:
            self.loop_range = None
            return
        lo = min(max(int(start), 0), self.n_frames - 1)
        hi = min(max(int(stop), 0), self.n_frames - 1)
        if hi < lo:
            lo, hi = hi, lo
        if hi == lo:
            raise ValueError("a loop range needs at least two frames")
        self.loop_range = (lo, hi)

    def mark_in(self):
        """Loop range starts at the current frame (keeps the end if it is later)."""
        hi = self.loop_range[1] if self.loop_range and self.loop_range[1] > self.frame else self.n_frames - 1
        if hi > self.frame:
            self.loop_range = (self.frame, hi)

    def mark_out(self):
        lo = self.loop_range[0] if self.loop_range and self.loop_range[0] < self.frame else 0
        if self.frame > lo:
            self.loop_range = (lo, self.frame)

    # ---- play ------------------------------------------------------------------------------
    def play(self):
        """Start playing; from the end of the play bounds (or outside a loop range) restart at its start."""
        lo, hi = self.bounds()
        if self.frame >= hi or (self.loop_range is not None and self.frame < lo):
            self.seek_frame(lo)
        self.play_time = self.t_current
        self.playing = True

    def pause(self):
        self.playing = False

    def toggle(self):
        self.pause() if self.playing else self.play()

    def advance(self, wall_dt: float):
        """Move the playhead after wall_dt seconds of real time: speed x wall_dt of run time (frames are
        skipped as needed), or one frame in every-frame mode. Wraps when looping, else stops at the end."""
        if not self.playing:
            return
        lo, hi = self.bounds()
        t_lo, t_hi = float(self.time[lo]), float(self.time[hi])
        if self.speed == EVERY_FRAME:
            self.stride = 1
            nxt = self.frame + 1
            if nxt > hi:
                if self.loop:
                    self.seek_frame(lo)
                else:
                    self.seek_frame(hi)
                    self.playing = False
                return
            self.seek_frame(nxt)
            return
        t = self.play_time + max(0.0, min(wall_dt, MAX_TICK_S)) * self.speed
        if t > t_hi:
            if self.loop and t_hi > t_lo:
                t = t_lo + (t - t_hi) % (t_hi - t_lo)
            else:
                self.seek_frame(hi)
                self.playing = False
                return
        frame = min(max(self.frame_at(t), lo), hi)
        if frame > self.frame:
            self.stride = frame - self.frame
        self.frame = frame
        self.play_time = t
