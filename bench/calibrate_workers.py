"""Calibration on 1 and 2 Dask workers, back to back, on the same fit: wall time, runs, rounds and speed-up.

The synthetic truth of bench/calibrate_truths.py (the central impact with the friction brake's torque x 0.8, a 12 s
stand record: MATLAB v5, kN, turned sensor, 500 Hz, 2 % noise). Each calibration gets its own local cluster; the
cluster is started and its workers have loaded the solver kernels before the clock starts ("fit"), and the wall time
with the cluster's start is printed too ("with start"). Prints the load average (the machine may be shared).
Usage: python bench/calibrate_workers.py [ROUNDS] [T_RECORD]"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.campaign import local_client  # noqa: E402
from solver.measured.calibrate import calibrate, run_candidate  # noqa: E402
from tests.calibrate_truth import CENTRAL, truth_scenario, write_map, write_record  # noqa: E402

KEY = "axial_damper.friction_brake_torque_in"


def warm(client):
    """Every worker runs 50 ms of the scenario: the solver imported and its kernels loaded before the clock starts."""
    text = CENTRAL.read_text().replace('mechanism = "existing"', f'mechanism = "{(ROOT / "resources" / "mechanisms" / "existing.toml")}"')
    task = {"scenario_text": text, "mechanism_text": None, "t_end": 0.05, "channels": ["Fx"]}
    futs = [client.submit(run_candidate, task, pure=False, workers=[w]) for w in client.scheduler_info()["workers"]]
    for f in futs:
        assert f.result()["status"] == "ok", f.result()


def main(rounds: int = 1, t_record: float = 12.0):
    from solver.simulate import run_scenario
    work = Path(f"/tmp/calibrate_workers_{t_record:g}")
    work.mkdir(exist_ok=True)
    if not (work / "truth.h5").is_file():
        run_scenario(truth_scenario(work, {KEY: 0.8}), work / "truth.h5", t_end=t_record, output_step=0.001)
    rec, mp = write_record(work / "truth.h5", work / "record.mat"), write_map(work / "map.toml")
    print(f"record of {t_record:g} s; cpus {os.cpu_count()}, load average before {os.getloadavg()[0]:.1f}", flush=True)
    for r in range(rounds):
        walls = {}
        for workers in (1, 2):
            t0 = time.perf_counter()
            client = local_client(workers)
            try:
                warm(client)
                t1 = time.perf_counter()
                cal = calibrate(CENTRAL, rec, mp, [KEY], client=client)
                t2 = time.perf_counter()
            finally:
                cluster = client.cluster
                client.close()
                cluster.close()
            walls[workers] = (t2 - t1, t2 - t0)
            print(f"round {r + 1} workers {workers}: fit {t2 - t1:.1f} s, with start {t2 - t0:.1f} s; {cal.runs} runs in "
                  f"{cal.rounds} rounds, {cal.status}, {KEY} = {cal.x[0]:.5f} ± {cal.sigma[0]:.2g}; load average "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
        print(f"round {r + 1} speed-up 2 vs 1 workers: fit {walls[1][0] / walls[2][0]:.2f}x, with start "
              f"{walls[1][1] / walls[2][1]:.2f}x", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1, float(sys.argv[2]) if len(sys.argv) > 2 else 12.0)
