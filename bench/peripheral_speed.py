"""Peripheral type: whole runs (first contact to hooks closed, or the scenario's end) as `dockmnemo run` does them,
simulated seconds per wall second (warm kernel cache, median of --reps), beside the probe-cone's central impact
measured in the same session; with the capture time, the hooks-closed time and the verdict of each.
    python bench/peripheral_speed.py [--reps 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PERIPHERAL = ROOT / "resources" / "peripheral" / "scenarios"
PROBE_CONE = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"


def one_run(scenario: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds, simulated seconds and the verdict line of one whole run."""
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    from solver.verdict import evaluate
    t0 = time.perf_counter()
    run_scenario(scenario, out)
    wall = time.perf_counter() - t0
    with RunFile(out) as run:
        sim = float(run.time[-1] - run.time[0])
        line = evaluate(run).line()                       # the run's type's own criteria
    return wall, sim, line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    cases = sorted(PERIPHERAL.glob("*.toml")) + [PROBE_CONE]
    with tempfile.TemporaryDirectory(prefix="dockmnemo-pspeed-") as td:
        for sc in cases:                                  # warm the kernels (compile once, not timed)
            one_run(sc, Path(td) / "warm.h5")
        print(f"{'scenario':28s} {'simulated s':>11s} {'wall s (median)':>16s} {'x real time':>11s}  verdict")
        for sc in cases:
            walls, sim, line = [], 0.0, ""
            for r in range(a.reps):
                w, sim, line = one_run(sc, Path(td) / f"{sc.stem}_{r}.h5")
                walls.append(w)
            med = statistics.median(walls)
            kind = "probe-cone " if sc == PROBE_CONE else ""
            print(f"{kind + sc.stem:28s} {sim:11.2f} {med:16.2f} {sim / med:11.1f}  {line[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
