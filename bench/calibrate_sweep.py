"""The calibration's cost along one key through a synthetic truth of bench/calibrate_truths.py (the case's record made
there first): for each factor on the truth's value, the run's end, its cost on the polish's 20 ms and the global phase's
0.2 s averages against the record's noise cost, and the record times of its worst samples.
Usage: python bench/calibrate_sweep.py CASE FACTOR[,FACTOR...] [--work DIR]   (e.g. whole_magnetic_x1.3 1,0.764,0.9)"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.calibrate_truths import CASES, WHOLE, base, record  # noqa: E402
from tests.calibrate_truth import truth_scenario  # noqa: E402


def main():
    import solver.measured.calibrate as C
    from solver.measured.compare import compare_arrays, load_measured
    from solver.mechanisms.probe_cone.simulate import channel_infos
    from solver.scenario import load_model
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("factors")
    ap.add_argument("--work", type=Path, default=Path("/tmp/calibrate_truths"))
    a = ap.parse_args()
    t_end, truth, keys = CASES[a.case]
    t_end = t_end or WHOLE
    rec, mp = record(a.work, a.case)
    sp = base(a.work, a.case)
    cmap, sig = load_measured(rec, mp, {c.name: c.unit for c in channel_infos(load_model(sp))})
    w = cmap.weights()
    chans = [c for c in cmap.run_channels if w.get(c, 1.0) > 0]
    fine = coarse = None
    for f in (float(v) for v in a.factors.split(",")):
        d = a.work / a.case / f"sweep_{f:g}"
        d.mkdir(exist_ok=True)
        p = truth_scenario(d, {**truth, keys[0]: truth[keys[0]] * f}, sp)
        r = C.run_candidate({"scenario_text": p.read_text().replace("truth_mechanism.toml", "candidate_mechanism.toml"),
                             "mechanism_text": (d / "truth_mechanism.toml").read_text(), "t_end": t_end,
                             "channels": cmap.run_channels, "output_step": 0.002})
        if fine is None:      # the offset from the first factor's run (as the fit takes it from the scenario's own)
            off = compare_arrays(r["time"], r["values"], sig, cmap, None, sp).offset
            fine = C._Residual(sig, chans, w, off, t_end, C.POLISH_SMOOTH)
            coarse = fine.smoothed(C.GLOBAL_SMOOTH)
        rf, rc = fine(r), coarse(r)
        worst = np.argsort(-np.sum(fine.matrix(r) ** 2, axis=1))[:3] + fine.ends[0]
        print(f"{keys[0]} x {f:g} of the truth: run ends {r['time'][-1]:.3f} s; cost {rf @ rf / fine.noise_cost:.3f}x "
              f"the noise's (20 ms), {rc @ rc / coarse.noise_cost:.3f}x (0.2 s); worst samples at "
              f"{', '.join(f'{t:.3f}' for t in fine.tq[worst])} s (run time)", flush=True)


if __name__ == "__main__":
    main()
