"""Peripheral runs several test modules read, simulated once per test session (each module's fixture calls these)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CENTRAL = ROOT / "resources" / "peripheral" / "scenarios" / "central_impact_10t.toml"


def central_run(tmp_path_factory) -> Path:
    """The central impact from first contact to hard dock (about 18.7 s simulated, 5 ms frames): run by the first
    module that asks, then the same file for every other (read it, do not write it)."""
    from solver.simulate import run_scenario
    out = tmp_path_factory.getbasetemp() / "peripheral_shared" / "central.h5"
    if not out.is_file():
        out.parent.mkdir(exist_ok=True)
        part = run_scenario(CENTRAL, out.with_name("central_part.h5"))
        part.rename(out)
    return out
