"""The verdict's two noise tests at the truth and at wrong-basin points of the 12 s, 3-key record (issue 34): the cost of
the 20 ms averages (the polish's) and of the 0.2 s averages (the global phase's), each against what the record's noise
alone leaves (3 standard deviations). A wrong basin hides under the first (1.08x against a 1.13x limit) but not under
the second: averaging takes the noise out and keeps a systematic misfit.
Usage: python bench/calibrate_basins.py [--seeds N] [--work DIR]"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.calibrate_truths import CASES, record  # noqa: E402
from tests.calibrate_truth import CENTRAL  # noqa: E402

POINTS = {   # name: factors on the nominal values (brake, spring, mass)
    "truth": (1.2, 0.85, 1.15),
    "old 3-key fit (issue 34, first round): spring -11.5 %": (2.99413 / 2.55, 0.0190541 / 0.02533, 22479.4 / 20000),
    "first polish of round 2: spring -19.7 %": (1.2, 0.85 * 0.803, 1.15),
    "brake +3 %": (1.2 * 1.03, 0.85, 1.15),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path("/tmp/calib3_truths"))
    ap.add_argument("--points", type=int, default=len(POINTS), help="the first N points only")
    a = ap.parse_args()
    from solver.measured.calibrate import GLOBAL_SMOOTH, POLISH_SMOOTH, _Residual, fit_bounds, run_candidate
    from solver.measured.compare import compare_arrays, load_measured
    from solver.scenario import load_model
    from solver.mechanisms.probe_cone.simulate import channel_infos
    from solver.measured.calibrate import _Runs, _read
    name = "12s_3keys"
    keys = CASES[name][2]
    fits = [fit_bounds(CENTRAL, k) for k in keys]
    sc, mpath, mt = _read(CENTRAL)
    units = {c.name: c.unit for c in channel_infos(load_model(CENTRAL))}
    runs = {}
    for seed in range(1, a.seeds + 1):
        rec, mp = record(a.work, name, seed)
        cmap, sig = load_measured(rec, mp, units)
        chans = cmap.run_channels
        maker = _Runs(None, sc, mt, mpath, fits, chans, None, None, None, 0, 0.002)
        points = dict(list(POINTS.items())[:a.points])
        for label, fac in points.items():
            if label not in runs:
                x = [f.value * s for f, s in zip(fits, fac)]
                runs[label] = run_candidate(maker.task(np.array(x), 12.002))
        off = compare_arrays(runs["truth"]["time"], runs["truth"]["values"], sig, cmap, None, CENTRAL).offset
        fine = _Residual(sig, chans, cmap.weights(), off, 12.002, POLISH_SMOOTH)
        coarse = fine.smoothed(GLOBAL_SMOOTH)
        print(f"seed {seed}: offset {off:.5f} s; limits (3 sd): 20 ms {fine.noise_limit(3) / fine.noise_cost:.3f}x, "
              f"0.2 s {coarse.noise_limit(3) / coarse.noise_cost:.3f}x the noise's cost")
        print("| point | brake, spring, mass | 20 ms cost / noise's | 0.2 s cost / noise's |\n|---|---|---|---|")
        for label, fac in points.items():
            rf, rc = fine(runs[label]), coarse(runs[label])
            print(f"| {label} | {', '.join(f'{s:.4g}' for s in fac)} | {float(rf @ rf) / fine.noise_cost:.3f} | "
                  f"{float(rc @ rc) / coarse.noise_cost:.3f} |", flush=True)


if __name__ == "__main__":
    main()
