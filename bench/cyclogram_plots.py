"""Cyclogram plots and numbers for docs/solver.md from three runs of the same initial conditions (existing,
modified dampers, movable limiter): base force, limiter / roller / ring contact forces, strokes, drive, and
a table of the numbers the note quotes.
    python bench/cyclogram_plots.py EXISTING.h5 MODIFIED.h5 LIMITER.h5 --tag expert [--nominal NOMINAL.h5]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LIMITER = ("limiter_cone", "limiter_edge", *[f"load_pad_{k}" for k in range(1, 7)])
ROLLERS = ("roller_1", "roller_2", "roller_3")


def pair_force(r, names):
    """Sum of the force magnitudes of the named pairs (N)."""
    tot = np.zeros(r.n_frames)
    for n in names:
        tot = tot + np.linalg.norm(r.contact_force(n), axis=1)
    return tot


def base_force(r):
    return np.linalg.norm(np.stack([r.channel(a) for a in ("Fx", "Fy", "Fz")], 1), axis=1)


def event_times(r, kind, pair=None):
    return [e.time for e in r.events if e.kind == kind and (pair is None or e.pair == pair)]


def hf_peaks(t, f, level):
    """Separate force peaks above `level`: (times, values) of local maxima at least 50 ms apart."""
    idx = np.flatnonzero((f[1:-1] > level) & (f[1:-1] >= f[:-2]) & (f[1:-1] >= f[2:])) + 1
    keep = []
    for i in idx:
        if keep and t[i] - t[keep[-1]] < 0.05:
            if f[i] > f[keep[-1]]:
                keep[-1] = i
            continue
        keep.append(i)
    return t[keep], f[keep]


def numbers(r, name):
    """The quantities the note quotes, from one run."""
    t = r.time
    F = base_force(r)
    lim = pair_force(r, LIMITER)
    rol = pair_force(r, ROLLERS)
    tl, fl = hf_peaks(t, lim, 1000.0)
    tr, fr = hf_peaks(t, rol, 300.0)
    hard = event_times(r, "hard_dock")
    tcap = r.meta.t_capture
    out = dict(run=name, t_capture=tcap, hard_dock=hard[0] if hard else np.nan, t_end=t[-1],
               peak_base=F.max(), t_peak_base=t[np.argmax(F)],
               peak_base_after_capture=F[t > tcap + 0.5].max() if np.isfinite(tcap) else np.nan,
               peak_limiter=lim.max(), limiter_peaks_over_1kN=len(fl),
               limiter_first=tl[0] if len(tl) else np.nan, peak_roller=rol.max(), roller_peaks_over_300N=len(tr),
               roller_first=tr[0] if len(tr) else np.nan, roller_last=tr[-1] if len(tr) else np.nan,
               stroke_max=r.channel("probe_stroke").max(), xlimd_max=r.channel("XLimD").max(),
               frt1_max=r.channel("friction_brake_1").max(), frt2_max=r.channel("friction_brake").max(),
               energy_err=np.abs(r.channel("total_energy") - r.channel("total_energy")[0]).max()
               / r.channel("kinetic_energy")[0])
    # oscillation decay: last time the base force deviates from its 2 s running mean by > 200 N in 0..60 s
    w = max(1, int(round(2.0 / r.meta.output_step)))
    m = np.convolve(F, np.ones(w) / w, mode="same")
    dev = np.abs(F - m)
    win = (t > tcap + 1.0) & (t < 60.0) & (dev > 200.0) if np.isfinite(tcap) else np.zeros_like(t, bool)
    out["oscillations_until"] = t[win][-1] if win.any() else np.nan
    return out


def main(argv=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from solver.runfile import RunFile
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs=3, type=Path)
    ap.add_argument("--tag", default="expert")
    ap.add_argument("--nominal", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    a = ap.parse_args(argv)
    labels = ("existing", "modified dampers", "movable limiter")
    runs = [RunFile(p) for p in a.runs]
    fig, ax = plt.subplots(5, 1, figsize=(12, 15), sharex=True)
    for r, lab in zip(runs, labels):
        ax[0].plot(r.time, base_force(r), lw=0.6, label=lab)
        ax[1].plot(r.time, pair_force(r, LIMITER), lw=0.6, label=lab)
        ax[2].plot(r.time, pair_force(r, ROLLERS), lw=0.6, label=lab)
        ax[3].plot(r.time, 1e3 * r.channel("probe_stroke"), lw=0.8, label=f"{lab}: probe stroke")
        ax[4].plot(r.time, r.channel("att_yaw"), lw=0.8, label=f"{lab}: ship yaw")
    r3 = runs[2]
    ax[3].plot(r3.time, 1e3 * r3.channel("XLimD"), "k--", lw=0.8, label="movable limiter: XLimD")
    ax[3].plot(runs[1].time, 1e3 * runs[1].channel("friction_brake_1"), ":", lw=0.8, label="modified: FrT1 stroke")
    for r in runs:
        for th in event_times(r, "hard_dock"):
            for x in ax:
                x.axvline(th, color="grey", lw=0.5)
    ax[0].set_ylabel("|F| base, N")
    ax[1].set_ylabel("limiter + pads, N")
    ax[2].set_ylabel("rollers, N")
    ax[3].set_ylabel("mm")
    ax[4].set_ylabel("deg")
    ax[4].set_xlabel("time, s (grey: hard dock)")
    for x in ax:
        x.legend(fontsize=7, loc="upper right")
        x.grid(alpha=0.3)
    ax[0].set_title(f"{a.tag}: the three mechanisms, same initial conditions")
    fig.tight_layout()
    p1 = a.out / f"cyclogram_{a.tag}.png"
    fig.savefig(p1, dpi=80)
    # zoom: first 20 s
    fig, ax = plt.subplots(3, 1, figsize=(12, 9), sharex=True)
    for r, lab in zip(runs, labels):
        s = r.time < 20.0
        ax[0].plot(r.time[s], base_force(r)[s], lw=0.6, label=lab)
        ax[1].plot(r.time[s], pair_force(r, LIMITER)[s], lw=0.6, label=lab)
        ax[2].plot(r.time[s], r.channel("head_axial_force")[s], lw=0.6, label=lab)
    if a.nominal:
        rn = RunFile(a.nominal)
        s = rn.time < 20.0
        ax[0].plot(rn.time[s], base_force(rn)[s], "k", lw=0.6, label="nominal (existing)")
        ax[1].plot(rn.time[s], pair_force(rn, LIMITER)[s], "k", lw=0.6, label="nominal (existing)")
    ax[0].set_ylabel("|F| base, N")
    ax[1].set_ylabel("limiter + pads, N")
    ax[2].set_ylabel("head axial, N")
    ax[2].set_xlabel("time, s")
    for x in ax:
        x.legend(fontsize=7, loc="upper right")
        x.grid(alpha=0.3)
    fig.tight_layout()
    p2 = a.out / f"cyclogram_{a.tag}_first20s.png"
    fig.savefig(p2, dpi=80)
    rows = [numbers(r, lab) for r, lab in zip(runs, labels)]
    if a.nominal:
        rows.append(numbers(RunFile(a.nominal), "nominal existing"))
    keys = list(rows[0])
    for k in keys:
        vals = [row[k] for row in rows]
        print(f"{k:26s} " + "  ".join(f"{v:>14.4g}" if isinstance(v, float) else f"{v!s:>14}" for v in vals))
    print(f"peak base force ratio modified/existing: {rows[1]['peak_base'] / rows[0]['peak_base']:.3f}; "
          f"after capture: {rows[1]['peak_base_after_capture'] / rows[0]['peak_base_after_capture']:.3f}")
    print("wrote", p1, p2)


if __name__ == "__main__":
    main()
