"""The playback model that owns time: a thin QObject over `PlaybackState` with signals and a play timer.

Panes observe `frameChanged(int)`; keyboard, slider and plot clicks change only this model.
"""
from __future__ import annotations

import time as _time
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal

from viewer.playback_state import (EVERY_FRAME, SPEED_LADDER, SPEEDS, TICK_MS, PlaybackState,  # noqa: F401
                                   Snapshot, default_graph_step, speed_label)


def _same_file(a, b) -> bool:
    """Two RunFiles (or None) of one file on disk."""
    pa, pb = getattr(a, "path", None), getattr(b, "path", None)
    if pa is None or pb is None:
        return False
    try:
        return Path(pa).resolve() == Path(pb).resolve()
    except OSError:
        return False


class Playback(QObject):
    """The one owner of time. Panes observe `frameChanged`; they never call each other."""

    frameChanged = Signal(int)
    playingChanged = Signal(bool)
    speedChanged = Signal(float)
    loopChanged = Signal(bool)
    loopRangeChanged = Signal(object)   # (start, stop) frames or None
    graphStepChanged = Signal(float)
    runChanged = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.state = PlaybackState()
        self.run = None
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0

    # ---- read-only views -------------------------------------------------------------------
    @property
    def frame(self) -> int:
        return self.state.frame

    @property
    def t_current(self) -> float:
        return self.state.t_current

    @property
    def playing(self) -> bool:
        return self.state.playing

    @property
    def speed(self) -> float:
        return self.state.speed

    @property
    def loop(self) -> bool:
        return self.state.loop

    @property
    def loop_range(self):
        return self.state.loop_range

    @property
    def graph_step(self) -> float:
        return self.state.graph_step

    @property
    def stride(self) -> int:
        """Frames per play tick (`PlaybackState.stride`)."""
        return self.state.stride

    @property
    def next_frame(self) -> int | None:
        """The frame the next play tick is expected to show (`PlaybackState.next_frame`)."""
        return self.state.next_frame

    @property
    def n_frames(self) -> int:
        return self.state.n_frames

    # ---- changes ---------------------------------------------------------------------------
    def _apply(self, fn, *args):
        before = self.state.snapshot()
        fn(*args)
        self._announce(before)

    def _announce(self, before: Snapshot):
        s = self.state
        if s.playing != before.playing:
            if s.playing:
                self._last = _time.perf_counter()
                self._timer.start()
            else:
                self._timer.stop()
            self.playingChanged.emit(s.playing)
        if s.speed != before.speed:
            self.speedChanged.emit(s.speed)
        if s.loop != before.loop:
            self.loopChanged.emit(s.loop)
        if s.loop_range != before.loop_range:
            self.loopRangeChanged.emit(s.loop_range)
        if s.graph_step != before.graph_step:
            self.graphStepChanged.emit(s.graph_step)
        if s.frame != before.frame:
            self.frameChanged.emit(s.frame)

    def set_run(self, run):
        """Attach a RunFile (or None); announces runChanged then frame 0, or the frame at the same time when `run` is
        the file shown before opened again (a run that was being written and has ended: the view stays where it was)."""
        self._timer.stop()
        was_playing = self.state.playing
        keep = self.state.t_current if _same_file(self.run, run) else None
        self.run = run
        if run is None:
            self.state.set_time(np.zeros(1))
        else:
            self.state.set_time(run.time, run.meta.output_step)
            if keep is not None:
                self.state.seek_time(keep)
        if was_playing:
            self.playingChanged.emit(False)
        self.graphStepChanged.emit(self.state.graph_step)
        self.loopRangeChanged.emit(None)
        self.runChanged.emit()
        self.frameChanged.emit(self.state.frame)

    def extend_run(self, follow: bool = True):
        """The attached run grew (it is still being written); with `follow`, go to its last frame."""
        if self.run is None:
            return
        before = self.state.snapshot()
        self.state.extend_time(self.run.time)
        if follow:
            self.state.seek_frame(self.state.n_frames - 1)
        self._announce(before)
        if not follow or self.state.frame == before.frame:
            self.frameChanged.emit(self.state.frame)   # the panes redraw the frame from the new data

    def frame_text(self) -> str:
        """The transport's frame counter: "frame 248/3985"; a run still being written has no last frame yet:
        "frame 8000 of 8000 so far"."""
        n, f = self.state.n_frames, self.state.frame + 1
        return f"frame {f} of {n} so far" if getattr(self.run, "live", False) else f"frame {f}/{n}"

    def seek_frame(self, i: int):
        self._apply(self.state.seek_frame, i)

    def seek_time(self, t: float):
        self._apply(self.state.seek_time, t)

    def step(self, n: int = 1):
        self._apply(self.state.step, n)

    def step_graph(self, k: int = 1):
        self._apply(self.state.step_graph, k)

    def home(self):
        self._apply(self.state.home)

    def end(self):
        self._apply(self.state.end)

    def set_event_frames(self, frames):
        """Contact-event start frames that next_event / prev_event (keys N / P) walk through."""
        self.state.set_event_frames(frames)

    def next_event(self):
        self._apply(self.state.next_event)

    def prev_event(self):
        self._apply(self.state.prev_event)

    def play(self):
        self._apply(self.state.play)

    def pause(self):
        self._apply(self.state.pause)

    def toggle(self):
        self._apply(self.state.toggle)

    def set_speed(self, speed: float):
        self._apply(self.state.set_speed, speed)

    def faster(self):
        self._apply(self.state.faster)

    def slower(self):
        self._apply(self.state.slower)

    def set_loop(self, on: bool):
        self._apply(self.state.set_loop, on)

    def set_loop_range(self, start, stop):
        self._apply(self.state.set_loop_range, start, stop)

    def mark_in(self):
        self._apply(self.state.mark_in)

    def mark_out(self):
        self._apply(self.state.mark_out)

    def set_graph_step(self, seconds: float):
        self._apply(self.state.set_graph_step, seconds)

    def advance(self, wall_dt: float):
        """Advance as the timer would after wall_dt seconds (also used by tests and the bench)."""
        self._apply(self.state.advance, wall_dt)

    def _tick(self):
        now = _time.perf_counter()
        dt, self._last = now - self._last, now
        self.advance(dt)
