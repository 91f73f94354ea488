"""Calibration on 1 and 2 Dask workers, back to back: wall time, candidate runs and speed-up.

The synthetic stand record of tests/test_measured_truth.py (friction brake torque x 1.25, 3 s of central impact);
each calibration starts its own local cluster (its start-up is in the wall time). Prints the load average too: the
machine may be shared. Usage: python bench/calibrate_workers.py [ROUNDS] [T_END]  (T_END: seconds of docking, 3)"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tomlkit  # noqa: E402

from solver.measured.calibrate import calibrate  # noqa: E402
from solver.simulate import run_scenario  # noqa: E402
from tests.measured_truth import EXAMPLE_MAP, write_measured_csv  # noqa: E402

SCENARIO = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
KEY = "axial_damper.friction_brake_torque_in"


def main(rounds: int = 1, t_end: float = 3.0):
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)
        mech = tomlkit.parse((ROOT / "resources" / "mechanisms" / "existing.toml").read_text())
        mech["axial_damper"]["friction_brake_torque_in"] = 2.55 * 1.25
        (d / "m.toml").write_text(tomlkit.dumps(mech))
        sc = tomlkit.parse(SCENARIO.read_text())
        sc["mechanism"] = "m.toml"
        (d / "truth.toml").write_text(tomlkit.dumps(sc))
        run_scenario(d / "truth.toml", d / "truth.h5", t_end=t_end)
        csv = write_measured_csv(d / "truth.h5", d / "stand.csv", 0.1374)
        print(f"record of {t_end:g} s; cpus {os.cpu_count()}, load average before {os.getloadavg()[0]:.1f}", flush=True)
        for r in range(rounds):
            walls = {}
            for workers in (1, 2):
                t0 = time.perf_counter()
                cal = calibrate(SCENARIO, csv, EXAMPLE_MAP, [KEY], workers=workers)
                walls[workers] = time.perf_counter() - t0
                print(f"round {r + 1} workers {workers}: {walls[workers]:.1f} s wall, {cal.runs} runs in {cal.rounds} rounds "
                      f"(the first back after {cal.startup:.1f} s), {cal.status}, "
                      f"{KEY} = {cal.x[0]:.5f} ± {cal.sigma[0]:.2g}; load average {os.getloadavg()[0]:.1f}",
                      flush=True)
            print(f"round {r + 1} speed-up 2 vs 1 workers: {walls[1] / walls[2]:.2f}x", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1, float(sys.argv[2]) if len(sys.argv) > 2 else 3.0)
