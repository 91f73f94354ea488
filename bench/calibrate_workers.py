"""Calibration on 1 and 2 local Dask workers, interleaved (1, 2, then 2, 1, ...), on the same fit: the median fit wall
time of the repeats, the speed-up, and the CPU the candidate runs took, so that a ratio the machine's load limits can be
told from one the fit limits. Run it under `nice` on a shared machine; it prints the load average.

The synthetic truth of bench/calibrate_truths.py (the central impact with the friction brake's torque x 0.8, a stand
record: MATLAB v5, kN, turned sensor, 500 Hz, 2 % noise). Each calibration gets its own local cluster, started and its
workers' kernels loaded before the clock starts ("fit"); the wall time with the start is printed too.
On a loaded machine the wall times measure the load; the load-free estimate adds, round by round, the CPU-s of the
busiest worker (the runs' own CPU time, which the load hardly changes) and this process's CPU-s.
Usage: nice python bench/calibrate_workers.py [REPEATS] [T_RECORD]"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.campaign import local_client  # noqa: E402
from solver.measured.calibrate import calibrate, run_candidate  # noqa: E402
from tests.calibrate_truth import CENTRAL, truth_scenario, write_map, write_record  # noqa: E402

KEY = "axial_damper.friction_brake_torque_in"


def warm(client, rec=None, mp=None):
    """Every worker runs 50 ms of the scenario: the solver imported and its kernels loaded before the clock starts;
    this process imports what a fit needs (scipy.stats, the model, the record's reader) so no fit pays for it."""
    if rec is not None:
        import scipy.optimize  # noqa: F401
        import scipy.stats  # noqa: F401

        from solver.measured.channel_map import load_map
        from solver.measured.record import read_record
        from solver.scenario import load_model
        load_model(CENTRAL)
        load_map(mp)
        read_record(rec)
    text = CENTRAL.read_text().replace('mechanism = "existing"', f'mechanism = "{(ROOT / "resources" / "mechanisms" / "existing.toml")}"')
    task = {"scenario_text": text, "mechanism_text": None, "t_end": 0.05, "channels": ["Fx"]}
    futs = [client.submit(run_candidate, task, pure=False, workers=[w]) for w in client.scheduler_info()["workers"]]
    for f in futs:
        assert f.result()["status"] == "ok", f.result()


def one(workers: int, rec, mp) -> dict:
    """One fit on a fresh local cluster of `workers`: wall times, the runs' CPU and wall, the result."""
    t0 = time.perf_counter()
    client = local_client(workers)
    try:
        warm(client, rec, mp)
        runs: dict = {}
        rounds = []
        t1, l1, c1 = time.perf_counter(), os.getloadavg()[0], time.process_time()
        cal = calibrate(CENTRAL, rec, mp, [KEY], client=client, run_cache=runs, on_round=rounds.append)
        t2, c2 = time.perf_counter(), time.process_time()
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
    done = [r for d in runs.values() for r in d.values()]      # in the order the runs came back: round by round
    path, i, split = 0.0, 0, []
    for n in rounds:        # the round's longest worker, in CPU-s: the wall time an idle machine would take
        by_worker: dict = {}
        for r in done[i:i + n]:
            by_worker.setdefault(r.get("worker"), []).append(r.get("cpu", 0.0))
        path, i = path + max((sum(c) for c in by_worker.values()), default=0.0), i + n
        split.append("/".join(f"{len(c)}:{sum(c):.2f}" for c in by_worker.values()))
    per_worker: dict = {}
    for r in done:
        per_worker[r.get("worker", "?")] = per_worker.get(r.get("worker", "?"), 0.0) + r.get("cpu", 0.0)
    return {"fit": t2 - t1, "start": t2 - t0, "cpu": sum(r.get("cpu", 0.0) for r in done),
            "run_wall": sum(r.get("wall", 0.0) for r in done), "cal": cal, "load": (l1 + os.getloadavg()[0]) / 2,
            "main_cpu": c2 - c1, "per_worker": sorted(per_worker.values(), reverse=True), "rounds": rounds,
            "path": path, "split": split}


def main(repeats: int = 3, t_record: float = 4.0):
    from solver.simulate import run_scenario
    work = Path(f"/tmp/calibrate_workers_{t_record:g}")
    work.mkdir(exist_ok=True)
    if not (work / "truth.h5").is_file():
        run_scenario(truth_scenario(work, {KEY: 0.8}), work / "truth.h5", t_end=t_record, output_step=0.001)
    rec, mp = write_record(work / "truth.h5", work / "record.mat"), write_map(work / "map.toml")
    print(f"record of {t_record:g} s; cpus {os.cpu_count()}, niceness {os.nice(0)}, load average before "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    fits = {1: [], 2: []}
    for r in range(repeats):
        for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
            m = one(workers, rec, mp)
            fits[workers].append(m)
            cal = m["cal"]
            sizes = m["rounds"]
            print(f"repeat {r + 1} workers {workers}: fit {m['fit']:.1f} s (with start {m['start']:.1f} s); "
                  f"{cal.runs} runs in {cal.rounds} rounds {sizes}, run CPU {m['cpu']:.1f} s of {m['run_wall']:.1f} s "
                  f"run wall (CPU share {m['cpu'] / m['run_wall']:.2f}), per worker "
                  f"{' + '.join(f'{c:.1f}' for c in m['per_worker'])} CPU-s (rounds' critical path {m['path']:.1f} "
                  f"CPU-s), this process {m['main_cpu']:.1f} CPU-s; "
                  f"{cal.status}, {KEY} = {cal.x[0]:.5f} ± {cal.sigma[0]:.2g}; load average {m['load']:.1f}; "
                  f"each round's runs:CPU-s per worker {' '.join(m['split'])}", flush=True)
    med = {w: statistics.median(m["fit"] for m in fits[w]) for w in fits}
    share = {w: statistics.median(m["cpu"] / m["run_wall"] for m in fits[w]) for w in fits}
    sizes = fits[1][0]["rounds"]
    ideal = sum(sizes) / max(1, sum(-(-n // 2) for n in sizes))
    print(f"median fit: 1 worker {med[1]:.1f} s, 2 workers {med[2]:.1f} s: speed-up {med[1] / med[2]:.2f}x "
          f"(the rounds' sizes allow {ideal:.2f}x); median CPU share of a run: {share[1]:.2f} (1 worker), "
          f"{share[2]:.2f} (2 workers)", flush=True)
    path = {w: statistics.median(m["path"] + m["main_cpu"] for m in fits[w]) for w in fits}
    print(f"load-free estimate (the rounds' critical path in the runs' CPU-s, plus this process's CPU-s): 1 worker "
          f"{path[1]:.1f} s, 2 workers {path[2]:.1f} s: {path[1] / path[2]:.2f}x", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, float(sys.argv[2]) if len(sys.argv) > 2 else 4.0)
