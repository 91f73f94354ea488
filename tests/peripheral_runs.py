"""Peripheral runs several test modules read, simulated once per test session (each module's fixture calls these)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CENTRAL = ROOT / "resources" / "peripheral" / "scenarios" / "central_impact_10t.toml"


def central_run(tmp_path_factory) -> Path:
    """The central impact from first contact to hard dock (about 18.7 s simulated, 5 ms frames): run by the first
    module that asks, then the same file for every other (read it, do not write it), on every xdist worker too
    (the session's shared temporary folder, a lock while the first makes it)."""
    import fcntl
    import os

    from solver.simulate import run_scenario
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base   # the workers' common folder
    out = root / "peripheral_shared" / "central.h5"
    out.parent.mkdir(exist_ok=True)
    with open(out.with_name("central.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.is_file():
            part = run_scenario(CENTRAL, out.with_name("central_part.h5"))
            part.rename(out)
    return out
