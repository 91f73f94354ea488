"""A terminal progress bar (stderr) for long CLI commands: run, export, campaign; and their error line."""
from __future__ import annotations

import signal
import sys

from tqdm import tqdm


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
    """tqdm's bar on stderr: `label  42.0%|####      | 12.0/30.0 s [00:04<00:05]`, redrawn at most 10 times a second on a
    terminal (every 5 s in a log); `close(done, note)` ends it where the work stopped, with how it ended."""

    FORMAT = "{desc} {percentage:5.1f}%|{bar}| {n:.1f}/{total:.1f}{unit} [{elapsed}<{remaining}{postfix}]"

    def __init__(self, label: str, total: float, unit: str = "", stream=None):
        self.stream = stream or sys.stderr
        tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = tqdm(total=float(total), desc=label, unit=unit, file=self.stream, bar_format=self.FORMAT,
                        mininterval=0.1 if tty else 5.0, miniters=0, dynamic_ncols=tty, leave=True)

    @property
    def done(self) -> float:
        return self.bar.n

    def update(self, done: float, force: bool = False, note: str = ""):
        """Move the bar to `done` (redrawn if due, or now with `force`); `note` is shown after the times."""
        if note:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.update(done - self.bar.n)
        if force:
            self.bar.refresh()

    def close(self, done: float | None = None, note: str = ""):
        """The last line: at `done` (default: the total), with `note` (how it ended)."""
        self.bar.n = self.bar.total if done is None else done
        if note:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.close()   # draws the last line
