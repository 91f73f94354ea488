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


PERIPHERAL = ROOT / "resources" / "peripheral"
IDSS_200 = PERIPHERAL / "campaigns" / "idss_envelope_200.toml"


def idss_campaign_run(tmp_path: Path, index: int, t_end: float, sets=(), output_step: float | None = None,
                      count: int | None = None, name: str | None = None) -> Path:
    """Run `index` of the IDSS-200 campaign (its draws `count` long if given) on the bundled mechanism, its keys
    `sets` changed ("section.key=value"), to t_end, at `output_step` (else the base scenario's)."""
    import dataclasses

    from bench.peripheral_subset import variant_text
    from solver import campaign as C
    from solver.simulate import run_scenario
    name = name or f"run{index}"
    c = C.load_campaign(IDSS_200)
    if count is not None:
        c = dataclasses.replace(c, count=count, _samples=None)
    sc = c.scenario(index)
    mech = PERIPHERAL / "peripheral_idss.toml"
    if sets:
        mech = tmp_path / f"{name}_mechanism.toml"
        mech.write_text(variant_text(list(sets)))
    sc["mechanism"] = str(mech)
    if output_step is not None:
        sc["solver"]["output_step"] = output_step
    path = tmp_path / f"{name}.toml"
    path.write_text(C.dump_toml(sc))
    return run_scenario(path, tmp_path / f"{name}.h5", t_end=t_end)
