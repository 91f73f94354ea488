"""`dockmnemo ARGS` in the test's own process (app.cli.main, as the command calls it): for checks a real process adds
nothing to (exit status and output of a refusal, a run's file); the signal handlers the command set put back."""
from __future__ import annotations

import contextlib
import io
import signal
from types import SimpleNamespace


def cli_here(*args) -> SimpleNamespace:
    """Exit status, stdout and stderr of `dockmnemo ARGS` run by app.cli.main in this process."""
    from app.cli import main
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([str(a) for a in args])
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return SimpleNamespace(returncode=status, stdout=out.getvalue(), stderr=err.getvalue())
