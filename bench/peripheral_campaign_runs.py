"""Run chosen runs of a campaign (its own scenarios, criteria and summary), one after another in this process, and
print each run's capture and verdict: the uncaptured runs of a campaign directory, or a sample of its PASS runs.
    nice -n 19 python bench/peripheral_campaign_runs.py CAMPAIGN.toml --runs 4,5,7 [--t-end 15] [--keep DIR]
    ... --from DIR --not-captured | --passed N     (the runs of an earlier campaign directory's summary)
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pick(argv) -> list[int]:
    import h5py
    if "--runs" in argv:
        return [int(x) for x in argv[argv.index("--runs") + 1].split(",")]
    d = Path(argv[argv.index("--from") + 1])
    with h5py.File(d / "summary.h5", "r") as S:
        cap, passed = S["captured"][:], S["passed"][:]
    if "--not-captured" in argv:
        return [int(i) for i in np.where(cap == 0)[0]]
    n = int(argv[argv.index("--passed") + 1])
    ok = np.where(passed == 1)[0]
    return [int(i) for i in ok[np.linspace(0, len(ok) - 1, n).round().astype(int)]]


def main(argv):
    from solver.campaign import load_campaign, make_task, run_task
    c = load_campaign(Path(argv[0]))
    t_end = float(argv[argv.index("--t-end") + 1]) if "--t-end" in argv else c.t_end
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    runs = pick(argv)
    print(f"{c.path.name}: {len(runs)} runs to {t_end:g} s: {' '.join(map(str, runs))}", flush=True)
    n_cap = n_pass = 0
    for i in runs:
        task = make_task(c, i)
        task["t_end"] = t_end
        task["keep"] = "all" if keep else "summary"
        t0 = time.process_time()
        row = run_task(task)
        o = row["outputs"]
        n_cap += bool(row["captured"])
        n_pass += bool(row["passed"])
        if keep and row.get("run_bytes"):
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"run_{i:05d}.h5").write_bytes(row["run_bytes"])
        print(f"run {i:3d}: {row['status']}, captured {'yes' if row['captured'] else 'no '} "
              f"t_capture {o.get('t_capture', math.nan):6.2f} s, hooks {o.get('t_hooks_closed', math.nan):6.2f} s, "
              f"peak iface F {o.get('peak_iface_F', math.nan):7.0f} N, {row['verdict'][:90]} "
              f"({time.process_time() - t0:.1f} CPU-s)", flush=True)
    print(f"captured {n_cap} of {len(runs)}, PASS {n_pass} of {len(runs)}")


if __name__ == "__main__":
    main(sys.argv[1:])
