"""A terminal progress bar (stderr) for long CLI commands: run, export, campaign; and their error line."""
from __future__ import annotations

import signal
import sys
import time


def fail(message, code: int = 2) -> int:
    """Print `dockmnemo: error: message` on stderr (the worker's parent reads that line); return the exit code."""
    print(f"dockmnemo: error: {message}", file=sys.stderr, flush=True)
    return code


class StopOnSignal:
    """SIGTERM / Ctrl+C set a flag; the instance is the `cancel()` the solver polls between blocks.

    A flag, not an exception: Python may run a handler inside a weakref callback, where a raise is swallowed, and
    a KeyboardInterrupt raised inside a Qt or VTK callback (a paintEvent) unwinds through C++ and crashes."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    NAMES = {signal.SIGINT: "Ctrl+C (SIGINT)", signal.SIGTERM: "SIGTERM"}

    def __init__(self):
        self.signal = 0
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in self.SIGNALS}

    def _on_signal(self, signum, _frame):
        self.signal = self.signal or signum

    def __call__(self) -> bool:
        return self.signal != 0

    @property
    def exit_status(self) -> int:
        """The shell's status for a command stopped by this signal: 130 for Ctrl+C, 143 for SIGTERM."""
        return 128 + int(self.signal)

    @property
    def name(self) -> str:
        return self.NAMES.get(self.signal, f"signal {self.signal}")

    def restore(self):
        """Back to the handlers from before (Python's KeyboardInterrupt for Ctrl+C)."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


class TerminalProgress:
    """Prints `label [#####.....]  42%  12.0/30.0 s  ETA 8 s` on one line, at most 10 times a second."""

    def __init__(self, label: str, total: float, unit: str = "", stream=None, width: int = 30):
        self.label, self.total, self.unit = label, float(total), unit
        self.stream = stream or sys.stderr
        self.width = width
        self.t0 = time.perf_counter()
        self._last = 0.0
        self.done = 0.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def update(self, done: float, force: bool = False, note: str = ""):
        """Redraw (at most every 0.1 s on a terminal, 5 s otherwise, unless `force`); `note` replaces the ETA."""
        self.done = done
        now = time.perf_counter()
        if not force and now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0) if self.total > 0 else 1.0
        fill = int(frac * self.width)
        el = now - self.t0
        eta = el * (1 - frac) / frac if frac > 0 else float("nan")
        line = (f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {frac * 100:5.1f}%  "
                f"{done:.1f}/{self.total:.1f}{self.unit}  elapsed {el:.0f} s  {note or f'ETA {eta:.0f} s'}")
        self.stream.write(("\r" if self.tty else "") + line + ("" if self.tty else "\n"))
        self.stream.flush()

    def close(self, done: float | None = None, note: str = ""):
        """The last line: at `done` (default: the total), with `note` (how it ended) in place of the ETA."""
        self.update(self.total if done is None else done, force=True, note=note)
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()
