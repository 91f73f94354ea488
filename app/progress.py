"""The terminal progress bar (stderr, tqdm) of long CLI commands: run, export, campaign; their error line and their
SIGINT/SIGTERM flag."""
from __future__ import annotations

import signal
import sys

from tqdm import tqdm


def fail(message, code: int = 2) -> int:
    """Print `dockmnemo: error: message` on stderr (the worker's parent reads that line); return the exit code."""
    print(f"dockmnemo: error: {message}", file=sys.stderr, flush=True)
    return code


class Stopped(BaseException):
    """Raised by a `StopOnSignal` in its `raising` phase (imports, checks, waiting for a compile): nothing to keep."""


class StopOnSignal:
    """SIGTERM / Ctrl+C set a flag; the instance is the `cancel()` the solver polls between blocks.

    A flag, not an exception: Python may run a handler inside a weakref callback, where a raise is swallowed, and
    a KeyboardInterrupt raised inside a Qt or VTK callback (a paintEvent) unwinds through C++ and crashes. Where no
    such callback runs and nothing is written yet, `raising = True` also raises `Stopped` (the flag stays set)."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    NAMES = {signal.SIGINT: "Ctrl+C (SIGINT)", signal.SIGTERM: "SIGTERM"}

    def __init__(self, raising: bool = False):
        self.signal = 0
        self.raising = raising
        self._previous = {sig: signal.signal(sig, self._on_signal) for sig in self.SIGNALS}

    def _on_signal(self, signum, _frame):
        self.signal = self.signal or signum
        if self.raising:
            raise Stopped(signum)

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


class _Bar(tqdm):
    """tqdm with one more field for its bar_format: `note` (the ETA, or how the command ended)."""
    note = ""

    @property
    def format_dict(self):
        return {**super().format_dict, "note": self.note}


class _Lines:
    """A file or pipe gets whole lines (a log, or a parent reading line by line), not tqdm's carriage returns."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, s: str):
        s = s.replace("\r", "").rstrip(" ")
        if s.strip():
            self.stream.write(s if s.endswith("\n") else s + "\n")

    def flush(self):
        self.stream.flush()


class TerminalProgress:
    """A tqdm bar on stderr: `label [#####.....]  42.0%  12.0/30.0 s  elapsed 3 s  ETA 8 s`, redrawn at most 10 times
    a second on a terminal (every 5 s into a file or pipe); cancelling stays StopOnSignal's."""

    FORMAT = "{desc} [{bar:%d}] {percentage:5.1f}%%  {n:.1f}/{total:.1f}{unit}  elapsed {elapsed_s:.0f} s  {note}"

    def __init__(self, label: str, total: float, unit: str = "", stream=None, width: int = 30):
        self.total = float(total) if total > 0 else 1e-300
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = 0.0
        self.drawn = False   # the first update is drawn at once (then as tqdm's interval allows)
        # delay: no line before the first update; ncols, nrows: never cut or hidden (a pty may say 0 x 0)
        self.bar = _Bar(total=self.total, desc=label, unit=unit, file=self.stream if self.tty else _Lines(self.stream), ascii=".#", leave=True,
                        bar_format=self.FORMAT % width, mininterval=0.1 if self.tty else 5.0, miniters=0,
                        delay=1e-6, ncols=1000, nrows=1000)

    def update(self, done: float, force: bool = False, note: str = ""):
        """Move to `done` (redrawn as tqdm's interval allows, or now with `force`); `note` replaces the ETA."""
        self.done = done
        b = self.bar
        frac = min(max(done / self.total, 0.0), 1.0)
        el = b.format_dict["elapsed"]
        b.note = note or f"ETA {el * (1 - frac) / frac if frac > 0 else float('nan'):.0f} s"
        b.n = min(max(done, 0.0), self.total)     # a solver's last time may pass t_end by a rounding
        if force or not self.drawn:
            self.drawn = True
            b.refresh()
            b.last_print_n, b.last_print_t = b.n, b._time()   # drawn: close() then ends the line
        else:
            b.update(0)

    def close(self, done: float | None = None, note: str = ""):
        """The last line: at `done` (default: the total), with `note` (how it ended) in place of the ETA."""
        self.done = self.total if done is None else done
        self.bar.n, self.bar.note = min(max(self.done, 0.0), self.total), note
        self.bar.close()   # draws the last line once
