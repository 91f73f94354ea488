"""The solver worker: a separate process (`python -m app run ... --progress-lines`) driven through QProcess.

The GUI never runs numba code; it reads the worker's progress lines and follows the run file as it grows.
Cancel asks the worker to stop (SIGTERM: it finishes the file, marked incomplete); kill ends it at once and
the file is then sealed (`solver.runfile.seal_incomplete`).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

ROOT = Path(__file__).resolve().parent.parent
EXIT_TEXT = {0: "finished", 2: "bad input", 3: "diverged (partial run kept)", 4: "cancelled (partial run kept)",
             5: "the run file could not be written"}


def eta_seconds(t0: float, t: float, t_end: float, elapsed: float) -> float:
    """Remaining wall seconds at the mean rate so far (NaN before any progress)."""
    done = t - t0
    if done <= 0 or elapsed <= 0:
        return math.nan
    return max(0.0, elapsed * (t_end - t) / done)


class RunController(QObject):
    """Starts one solver run at a time in a worker process and reports on it."""

    started = Signal(str)                   # run file path (it exists and can be opened)
    progress = Signal(float, float, float)  # t, t_end, ETA s (NaN if unknown)
    compiling = Signal(int, int)            # solver kernels: unit k of n being compiled (first run only)
    finished = Signal(str, int, str)        # run file path, exit code (-1 killed), message
    realtime = Signal(float, float, bool)   # an operator session: real-time factor, solver headroom, behind

    def __init__(self, parent=None):
        super().__init__(parent)
        self.proc: QProcess | None = None
        self.out: Path | None = None
        self.t_start = 0.0
        self.t_end = 0.0
        self.t = 0.0
        self.stderr = ""
        self._buf = b""
        self._killed = False

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.state() != QProcess.NotRunning

    def start(self, scenario, out, t_end: float, branch_of=None, at: float | None = None, t_start: float = 0.0):
        """Run `scenario` into `out` up to `t_end` (branch from run `branch_of` at time `at` if given)."""
        args = ["run", str(scenario), "-o", str(out), "--t-end", repr(float(t_end)), "--progress-lines"]
        if branch_of is not None:
            args += ["--from", str(branch_of), "--at", repr(float(at))]
        self._launch(args, out, t_start, t_end)

    def start_operator(self, scenario, out, t_end: float):
        """An operator session of a berthing scenario (`berthing-operator`): commands go in through `send`."""
        self._launch(["berthing-operator", str(scenario), "-o", str(out), "--t-end", repr(float(t_end)),
                      "--progress-lines"], out, 0.0, t_end)

    def send(self, line: str):
        """A line to the worker's standard input (an operator session's hand controllers: CMD ... or STOP)."""
        if self.running:
            self.proc.write((line.rstrip("\n") + "\n").encode())

    def start_campaign_rerun(self, directory, index: int, out):
        """Re-simulate run `index` of the campaign in `directory` into `out` (its end time comes with progress)."""
        self._launch(["campaign-rerun", str(directory), str(int(index)), "-o", str(out), "--progress-lines"],
                     out, 0.0, math.nan)

    def _launch(self, args: list[str], out, t_start: float, t_end: float):
        """Start `python -m app ARGS` (a command that prints STARTED / PROGRESS lines) writing `out`."""
        if self.running:
            raise RuntimeError("a run is already in progress")
        self.out = Path(out)
        self.t_start, self.t_end, self.t = float(t_start), float(t_end), float(t_start)
        self.stderr, self._buf, self._killed = "", b"", False
        p = self.proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONPATH", str(ROOT) + (":" + env.value("PYTHONPATH") if env.contains("PYTHONPATH") else ""))
        p.setProcessEnvironment(env)
        p.setWorkingDirectory(str(ROOT))
        p.readyReadStandardOutput.connect(self._read_stdout)
        p.readyReadStandardError.connect(lambda: self._read_stderr())
        p.finished.connect(self._finished)
        p.start(sys.executable, ["-m", "app", *args])

    def cancel(self):
        """Ask the worker to stop after its current block; it keeps the file, marked incomplete."""
        if self.running:
            self.proc.terminate()

    def kill(self):
        """End the worker at once; the truncated file is sealed when the process is gone."""
        if self.running:
            self._killed = True
            self.proc.kill()

    def _read_stderr(self):
        self.stderr += bytes(self.proc.readAllStandardError()).decode("utf-8", "replace")

    def _read_stdout(self):
        self._buf += bytes(self.proc.readAllStandardOutput())
        *lines, self._buf = self._buf.split(b"\n")
        for raw in lines:
            parts = raw.decode("utf-8", "replace").split()
            if not parts:
                continue
            if parts[0] == "STARTED":
                self.started.emit(str(self.out))
            elif parts[0] == "COMPILING" and len(parts) >= 3:
                self.compiling.emit(int(parts[1]), int(parts[2]))
            elif parts[0] == "REALTIME" and len(parts) >= 4:
                self.realtime.emit(float(parts[1]), float(parts[2]), parts[3] == "1")
            elif parts[0] == "PROGRESS" and len(parts) >= 4:
                if not math.isfinite(self.t_end):     # a campaign re-run: the worker knows the end time
                    self.t_end = float(parts[2])
                t = min(float(parts[1]), self.t_end)   # the last block may end one step past t_end
                self.t = t
                eta = eta_seconds(self.t_start, t, self.t_end, float(parts[3]))  # worker's wall s since solving began
                self.progress.emit(t, self.t_end, eta)

    def _finished(self, code: int, status):
        self._read_stdout()
        self._read_stderr()
        out = str(self.out)
        if status == QProcess.CrashExit or self._killed:
            msg = "worker process killed"
            try:
                from solver.runfile import seal_incomplete
                creating = self.out.with_name(self.out.name + ".creating") if self.out is not None else None
                if self.out is not None and self.out.exists():
                    seal_incomplete(self.out, msg)
                    msg += f"; truncated run kept in {self.out.name}, marked incomplete"
                elif creating is not None and creating.exists():   # killed before its first frames were saved
                    creating.unlink()
                    msg += "; no frames had been saved yet"
            except Exception as exc:  # noqa: BLE001  (the message says what is left)
                msg += f"; the run file could not be sealed: {exc}"
            self.finished.emit(out, -1, msg)
            return
        err = self.stderr.strip().splitlines()
        msg = err[-1].removeprefix("dockmnemo: error: ") if err and code else EXIT_TEXT.get(code, f"exit {code}")
        self.finished.emit(out, int(code), msg)
