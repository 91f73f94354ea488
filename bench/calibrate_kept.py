"""Why a several-key fit of a whole record goes to another basin (issue 34): each point's own kept samples (its twins:
the solver's step halved, the keys moved by 1e-4) and the cost of every point on every point's kept samples, so the
costs the phases compared can be told from costs on one set; and the cost along the line from a found point to the
truth on one set (a ridge: a real second basin there; none: the optimiser's, or the set's, doing).
Usage: python bench/calibrate_kept.py [CASE] [--point NAME=v1,v2,...] [--line NAME] [--work DIR] [--workers N]
       (default whole_3keys with the start, the truth and the two fits of the sixth round)"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.calibrate_truths import CASES, base, record  # noqa: E402
from tests.calibrate_truth import CENTRAL  # noqa: E402

FOUND = {"whole_3keys": {"try 1 (sixth round)": [3.55007, 0.0199442, 24378.4],
                         "try 2 (sixth round)": [3.74207, 0.0195425, 25185.3]}}


def main():
    import solver.measured.calibrate as C
    from solver.campaign import local_client
    from solver.measured.compare import compare_arrays, load_measured
    from solver.mechanisms.probe_cone.simulate import channel_infos
    from solver.scenario import load_model
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?", default="whole_3keys")
    ap.add_argument("--point", action="append", default=[], help="NAME=v1,v2,... (the keys' values)")
    ap.add_argument("--line", action="append", default=[], help="a point's name: the cost from it to the truth")
    ap.add_argument("--work", type=Path, default=Path("/tmp/calibrate_truths"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fractions", default="0.25,0.5,0.75", help="of the way from a --line point to the truth")
    a = ap.parse_args()
    t_rec, factors, keys = CASES[a.case]
    rec, mp = record(a.work, a.case)
    sp = base(a.work, a.case)
    sc, mpath, mt = C._read(sp)
    fits = [C.fit_bounds(sp, k) for k in keys]
    x0 = np.array([f.value for f in fits])
    truth = np.array([C.fit_bounds(CENTRAL, k).value * factors.get(k, 1.0) for k in keys])
    points = {"start": x0, "truth": truth}
    points.update({n: np.array(v) for n, v in FOUND.get(a.case, {}).items()})
    for p in a.point:
        n, _, v = p.partition("=")
        points[n] = np.array([float(s) for s in v.split(",")])
    lines = a.line or [n for n in points if n not in ("start", "truth")][:1]
    model = load_model(sp)
    cmap, sig = load_measured(rec, mp, {c.name: c.unit for c in channel_infos(model)})
    w = cmap.weights()
    chans = [c for c in cmap.run_channels if w.get(c, 1.0) > 0]
    t_end = sig.time[-1] + 0.002
    client = local_client(a.workers)
    runs = C._Runs(client, sc, mt, mpath, fits, cmap.run_channels, None, None, None, 10 ** 6, 0.002, model.step)

    def twins(x):
        u = np.array([float(f.to_u(v)) for f, v in zip(fits, x)]) + C.TWIN_STEP
        return [x, np.array([float(f.to_x(v)) for f, v in zip(fits, u)])], [("step/2",), ()]
    xs, vs = [], []
    for x in points.values():
        tx, tv = twins(x)
        xs += [x, *tx]
        vs += [(), *tv]
    fr = [float(v) for v in a.fractions.split(",")]
    for n in lines:
        u_a = np.log(points[n] / x0)
        u_b = np.log(truth / x0)
        for f in fr:
            xs.append(x0 * np.exp(u_a + f * (u_b - u_a)))
            vs.append(())
    t0 = time.perf_counter()
    got = runs.get(xs, t_end, variants=vs)
    client.close()
    import pickle
    (a.work / a.case / "kept_runs.pickle").write_bytes(pickle.dumps(got))   # for --prefix analyses (not read here)
    print(f"{a.case}: {len(got)} runs in {time.perf_counter() - t0:.0f} s (load average {os.getloadavg()[0]:.1f}); "
          f"keys {', '.join(keys)}", flush=True)
    off = compare_arrays(got[0]["time"], got[0]["values"], sig, cmap, None, sp).offset
    fine = C._Residual(sig, chans, w, off, t_end, C.POLISH_SMOOTH)
    res = {n: got[3 * i] for i, n in enumerate(points)}
    kept = {}
    for i, n in enumerate(points):
        kept[n] = fine.predictable(got[3 * i], got[3 * i + 1:3 * i + 3])
    print("\n| point | values | kept (s) | horizon (s, run time) |\n|---|---|---|---|")
    dt = float(np.median(np.diff(fine.tq)))
    for n, x in points.items():
        r = _with(fine, kept[n])
        print(f"| {n} | {', '.join(f'{v:.6g}' for v in x)} | {r.rows().sum() * dt:.1f} | {r.horizon():.2f} |")
    print("\ncost / the noise's, 20 ms (0.2 s), of each point (rows) on each point's kept samples (columns)\n")
    print("| point | " + " | ".join(f"on {n}'s" for n in points) + " | whole record |\n" + "|---" * (len(points) + 2)
          + "|")
    sets = [*kept.values(), np.ones(len(fine.tq), bool)]
    for n in points:
        cells = []
        for k in sets:
            f_ = _with(fine, k)
            c_ = f_.smoothed(C.GLOBAL_SMOOTH)
            cells.append(f"{_c(f_, res[n]):.3f} ({_c(c_, res[n]):.2f})")
        print(f"| {n} | " + " | ".join(cells) + " |")
    j = 3 * len(points)
    for n in lines:
        print(f"\nalong the line from {n} to the truth (ln of each key), cost / the noise's, 20 ms (0.2 s)\n")
        print("| fraction | " + " | ".join(f"on {m}'s" for m in points) + " |\n" + "|---" * (len(points) + 1) + "|")
        line = [res[n], *got[j:j + len(fr)], res["truth"]]
        j += len(fr)
        for f, r in zip([0.0, *fr, 1.0], line):
            cells = []
            for k in kept.values():
                f_ = _with(fine, k)
                cells.append(f"{_c(f_, r):.3f} ({_c(f_.smoothed(C.GLOBAL_SMOOTH), r):.2f})")
            print(f"| {f:.2f} | " + " | ".join(cells) + " |")
        print(f"\nthe same line on the start's kept samples up to a run time, cost / the noise's, 20 ms (0.2 s)\n")
        ends = (2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 16.0, 24.0)
        print("| fraction | " + " | ".join(f"to {e:g} s" for e in ends) + " |\n" + "|---" * (len(ends) + 1) + "|")
        for f, r in zip([0.0, *fr, 1.0], line):
            cells = []
            for e in ends:
                f_ = _with(fine, kept["start"] & (fine.tq <= e))
                cells.append(f"{_c(f_, r):.3f} ({_c(f_.smoothed(C.GLOBAL_SMOOTH), r):.2f})")
            print(f"| {f:.2f} | " + " | ".join(cells) + " |")


def _with(res, keep):
    import copy
    other = copy.copy(res)
    other.keep = keep
    return other


def _c(res, run) -> float:
    r = res(run)
    return float(r @ r) / res.noise_cost


if __name__ == "__main__":
    main()
