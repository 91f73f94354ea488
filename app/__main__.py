"""`python -m app`: the dockmnemo command. A Ctrl+C or SIGTERM while it starts (before the command's own handler)
ends it at once: nothing is written yet (exit 4 for run, campaign and calibrate, else 128 + the signal)."""
import os
import signal
import sys


def _starting(signum, _frame):
    cmd = sys.argv[1] if len(sys.argv) > 1 else "view"
    status = 4 if cmd in ("run", "campaign", "calibrate") else 128 + signum
    name = {signal.SIGINT: "Ctrl+C (SIGINT)", signal.SIGTERM: "SIGTERM"}.get(signum, f"signal {signum}")
    how = "cancelled" if status == 4 else "stopped"
    os.write(2, f"dockmnemo: error: {cmd} {how} by {name} while starting; nothing written\n".encode())
    os._exit(status)


for _sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_sig, _starting)

from app.cli import main  # noqa: E402  (after the handlers: its imports take a moment)

sys.exit(main())
