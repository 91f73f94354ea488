"""What makes a whole record's calibration cost rough (issue 34): runs of a synthetic truth of bench/calibrate_truths.py
with its key moved by a factor (1 = the truth itself, again; 1+1e-9 ... 1.01) and the truth with the solver's step
halved. Prints (1) how far each run parts from the truth run (noise-free, |dF| over time spans), (2) its cost on the
record per 2 s of run time (0.2 s averages, against the record's noise), (3) its cost on the whole record and on the
samples the calibration keeps (the twins' test, solver.measured.calibrate._Residual.predictable), 20 ms and 0.2 s.
Usage: python bench/calibrate_whole.py [CASE] [FACTORS] [--work DIR] [--workers N]
       (defaults whole_brake_x0.8 and 1,1.000000001,1.000001,1.0001,1.001,1.01,0.99)"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.calibrate_truths import CASES, WHOLE, base, record  # noqa: E402
from tests.calibrate_truth import truth_scenario  # noqa: E402

CHANNELS = ["Fx", "Fy", "Fz", "Mx", "My", "Mz"]


def main():
    import solver.measured.calibrate as C
    from scipy.ndimage import uniform_filter1d

    from solver.campaign import local_client
    from solver.measured.compare import compare_arrays, load_measured
    from solver.mechanisms.probe_cone.simulate import channel_infos
    from solver.runfile import RunFile
    from solver.scenario import load_model
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?", default="whole_brake_x0.8")
    ap.add_argument("factors", nargs="?", default="1,1.000000001,1.000001,1.0001,1.001,1.01,0.99")
    ap.add_argument("--work", type=Path, default=Path("/tmp/calibrate_truths"))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    t_end, truth, keys = CASES[a.case]
    t_end = t_end or WHOLE
    rec, mp = record(a.work, a.case)
    sp = base(a.work, a.case)
    names, tasks = [], []
    for f in [float(v) for v in a.factors.split(",")]:
        d = a.work / a.case / f"whole_{f!r}"
        d.mkdir(exist_ok=True)
        p = truth_scenario(d, {**truth, keys[0]: truth[keys[0]] * f}, sp)
        tasks.append({"scenario_text": p.read_text().replace("truth_mechanism.toml", "candidate_mechanism.toml"),
                      "mechanism_text": (d / "truth_mechanism.toml").read_text(), "t_end": t_end,
                      "channels": CHANNELS, "output_step": 0.002})
        names.append(f"{keys[0].split('.')[-1]} x {f!r}")
    step = load_model(sp).step
    t1 = dict(tasks[0])
    t1["scenario_text"] = t1["scenario_text"].replace(f"step = {step!r}", f"step = {step / 2!r}", 1)
    if f"step = {step / 2!r}" not in t1["scenario_text"]:     # the scenario's own spelling (1.0e-3)
        import tomlkit
        doc = tomlkit.parse(t1["scenario_text"])
        doc["solver"]["step"] = step / 2
        t1["scenario_text"] = tomlkit.dumps(doc)
    tasks.append(t1)
    names.append(f"{names[0]}, step halved")
    client = local_client(a.workers)
    t0 = time.perf_counter()
    runs = client.gather([client.submit(C.run_candidate, t, pure=False) for t in tasks])
    client.close()
    cpu = ", ".join(f"{r['cpu']:.1f}" for r in runs)
    print(f"{len(runs)} runs in {time.perf_counter() - t0:.0f} s (load average {os.getloadavg()[0]:.1f}); "
          f"run CPU {cpu} s", flush=True)
    with RunFile(a.work / a.case / "truth.h5") as tr:
        tt = np.asarray(tr.time, float)
        T = {c: np.asarray(tr.channel(c), float) for c in CHANNELS}
    sig_f = C.NOISE if hasattr(C, "NOISE") else 0.02
    sigma = sig_f * np.abs(np.column_stack([T[c] for c in ("Fx", "Fy", "Fz")])).max()
    spans = ((0, 4), (4, 12), (12, 20), (20, 30), (30, 45))
    print(f"\n(1) parting from the truth run (noise-free): max |dF| in N per span of run time; the record's noise "
          f"sigma = {sigma:.0f} N\n")
    print("| run | ends at | " + " | ".join(f"{p}-{q} s" for p, q in spans) + " |\n" + "|---" * (len(spans) + 2) + "|")
    for n, r in zip(names, runs):
        t = r["time"]
        dF = np.sqrt(sum((r["values"][c] - np.interp(t, tt, T[c])) ** 2 for c in ("Fx", "Fy", "Fz")))
        print(f"| {n} | {t[-1]:.3f} s | " + " | ".join(f"{np.max(dF[(t >= p) & (t < q)], initial=0):.3g}"
                                                   for p, q in spans) + " |")
    cmap, sig = load_measured(rec, mp, {c.name: c.unit for c in channel_infos(load_model(sp))})
    w = cmap.weights()
    chans = [c for c in cmap.run_channels if w.get(c, 1.0) > 0]
    off = compare_arrays(runs[0]["time"], runs[0]["values"], sig, cmap, None, sp).offset
    fine = C._Residual(sig, chans, w, off, t_end, C.POLISH_SMOOTH)
    coarse = fine.smoothed(C.GLOBAL_SMOOTH)
    a0, b0 = coarse.ends
    tq = coarse.tq[a0:len(coarse.tq) - b0]
    per = np.sum((coarse.noise * coarse.norm) ** 2) / coarse.window
    print("\n(2) cost on the record per 2 s of run time, 0.2 s averages, / the noise's\n")
    print("| from | " + " | ".join(names) + " |\n" + "|---" * (len(names) + 1) + "|")
    M = [coarse.matrix(r) for r in runs]
    for p in np.arange(0.0, tq[-1], 2.0):
        s = (tq >= p) & (tq < p + 2.0)
        print(f"| {p:.0f} s | " + " | ".join(f"{np.sum(m[s] ** 2) / (s.sum() * per):.2f}" for m in M) + " |")
    keep = fine.predictable(runs[0], [runs[-1], runs[names.index(f"{keys[0].split('.')[-1]} x 1.0001")]]
                            if "1.0001" in a.factors.split(",") else [runs[-1]])
    print("\n(3) cost / the noise's on the whole record and on the samples kept (the truth's twins: step halved, "
          "x 1.0001)")
    print(f"left out: {', '.join(f'{p:.2f}-{q:.2f} s' for p, q in C._Residual.left_out(_kept(fine, keep), off))}\n")
    kf, kc = _kept(fine, keep), _kept(coarse, keep)
    print("| run | whole, 20 ms | whole, 0.2 s | kept, 20 ms | kept, 0.2 s |\n|---|---|---|---|---|")
    for n, r in zip(names, runs):
        c = [float(x @ x) / R.noise_cost for R in (fine, coarse, kf, kc) for x in [R(r)]]
        print(f"| {n} | " + " | ".join(f"{v:.3f}" for v in c) + " |")


def _kept(res, keep):
    import copy
    other = copy.copy(res)
    other.keep = keep
    return other


if __name__ == "__main__":
    main()
