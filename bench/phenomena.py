"""The papers' phenomena V1-V5 (spec seed-extraction §7) measured on full-resolution runs, one PNG per phenomenon.
    python bench/phenomena.py RUN_DIR [--before DIR] [--out docs] [--campaign CAMPAIGN_DIR ...]
RUN_DIR (and DIR) hold NAME.h5 for central_impact_20t, central_impact_20t_modified_dampers, expert_existing,
expert_modified_dampers and expert_movable_limiter (e.g. `make_sample_runs.py --keep-full RUN_DIR`).
Prints the numbers docs/phenomena.md quotes; `--before` adds the same numbers from older runs; `--campaign` tabulates
the limiter's first strike in the kept runs of bench/campaigns/phenomena_limiter_yaw_rate*.toml.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cyclogram_plots import LIMITER, ROLLERS, base_force, hf_peaks, numbers, pair_force  # noqa: E402

NAMES = ("central_impact_20t", "central_impact_20t_modified_dampers", "expert_existing", "expert_modified_dampers",
         "expert_movable_limiter")
T_CENTRAL = 30.0                                # s, the central-impact scenarios' duration
PADS = tuple(f"load_pad_{k}" for k in range(1, 7))


def running_mean(x, n):
    return np.convolve(x, np.ones(n) / n, mode="same")


def hf(r, F, window=0.05):
    """High-frequency part of a force: its deviation from a `window`-second running mean."""
    return F - running_mean(F, max(1, int(round(window / r.meta.output_step))))


def in_window(t, a, b):
    return (t >= a) & (t <= b)


def impacts(t, f, level, gap=1.0):
    """One (time, peak) per impact: force peaks over `level`, those closer than `gap` seconds merged (largest kept)."""
    out = []
    for a, b in zip(*hf_peaks(t, f, level)):
        if out and a - out[-1][0] < gap:
            if b > out[-1][1]:
                out[-1] = (a, b)
            continue
        out.append((a, b))
    return [(round(float(a), 2), round(float(b), 0)) for a, b in out]


def central(r):
    """V1 / V2: capture, absorption (mean Fx while the probe strokes in), peak stroke, return impact, repeats."""
    m = r.frame_at(T_CENTRAL) + 1                 # the scenario's 30 s: a run to hard dock strokes in again later
    t, Fx = r.time[:m], r.channel("Fx", 0, m)
    stroke = r.channel("probe_stroke", 0, m)
    i_max = int(np.argmax(stroke))
    bottom = [e.time for e in r.events if e.kind == "sensor" and e.pair == "socket_bottom"] or \
        [e.time for e in r.events if e.kind == "contact_begin" and e.pair == "head_socket_bottom"]
    t_bottom = bottom[0] if bottom else r.meta.t_capture
    absorb = in_window(t, t_bottom + 0.05, t[i_max])
    after = t > t[i_max]
    i_ret = int(np.argmin(np.where(after, Fx, np.inf)))
    brake = r.channel("friction_brake", 0, m)
    slip = np.flatnonzero(np.diff(brake) > 0)
    stops = sum(np.linalg.norm(r.contact_force(f"latch_stop_{k}", 0, m), axis=1) for k in range(1, 5))
    rep = [p for p in impacts(t, stops, 300.0) if p[0] > t[i_ret] + 1.0][:6]
    bot = np.linalg.norm(r.contact_force("head_socket_bottom", 0, m), axis=1)
    reb = [p for p in impacts(t, bot, 100.0) if p[0] > t[i_ret]][:6]
    out = dict(t_capture=r.meta.t_capture, t_bottom=t_bottom, absorb_mean_Fx=float(Fx[absorb].mean()),
               absorb_peak_Fx=float(Fx[absorb].max()), stroke_max=float(stroke[i_max]), t_stroke_max=float(t[i_max]),
               brake_slip=float(brake.max()), brake_from=float(t[slip[0]]) if len(slip) else np.nan,
               brake_to=float(t[slip[-1]]) if len(slip) else np.nan,
               return_Fx=float(Fx[i_ret]), t_return=float(t[i_ret]), stop_repeats=rep, bottom_repeats=reb,
               peak_F=float(base_force(r)[:m].max()), peak_F_whole_run=float(base_force(r).max()))
    if "axial_spring" in r.channels:
        sp = r.channel("axial_spring", 0, m)
        out["spring_max"] = float(sp.max())
        out["t_spring_max"] = float(t[int(np.argmax(sp))])
    return out


def limiter_series(r, t_from, t_to):
    """Limiter + pad force peaks over 1 kN and contact begin events of those pairs in [t_from, t_to]."""
    t = r.time
    lim = pair_force(r, LIMITER)
    tl, fl = hf_peaks(t, lim, 1000.0)
    sel = (tl >= t_from) & (tl <= t_to)
    begins = sum(1 for e in r.events if e.kind == "contact_begin" and e.pair in LIMITER and t_from <= e.time <= t_to)
    touch = t[lim > 0]
    return dict(first_touch=float(touch[0]) if len(touch) else np.nan, peaks=int(sel.sum()),
                peak=float(fl[sel].max()) if sel.any() else 0.0,
                first_peak=float(tl[sel][0]) if sel.any() else np.nan, contact_begins=begins)


def roller_window(r, a, b):
    """Roller contacts in [a, b]: contact begins (impacts: contact lost and made again), the force's range and its
    high-frequency part (off its 0.2 s running mean); and when the roller impacts come over the whole run."""
    t = r.time
    rol = pair_force(r, ROLLERS)
    w = in_window(t, a, b)
    begins = [e.time for e in r.events if e.kind == "contact_begin" and e.pair in ROLLERS]
    osc = np.abs(hf(r, rol, 0.2))
    return dict(begins_window=sum(a <= x <= b for x in begins), min_window=float(rol[w].min()),
                max_window=float(rol[w].max()), hf_window=float(osc[w].max()), begins_all=len(begins),
                first_begin=begins[0] if begins else np.nan, last_begin=begins[-1] if begins else np.nan,
                max_all=float(rol.max()), t_max_all=float(t[int(np.argmax(rol))]))


def expert(r):
    """V3-V5: limiter peaks during absorption (capture .. capture + 20 s) and later, rollers, oscillations, pads."""
    t = r.time
    n = numbers(r, r.meta.variant)
    tc = r.meta.t_capture
    F = base_force(r)
    out = dict(t_capture=tc, hard_dock=n["hard_dock"], oscillations_until=n["oscillations_until"],
               peak_F=n["peak_base"], t_peak_F=n["t_peak_base"],
               limiter_absorption=limiter_series(r, tc, tc + 20.0), limiter_later=limiter_series(r, tc + 20.0, t[-1]),
               t_stroke_max=float(t[int(np.argmax(r.channel("probe_stroke")[t < tc + 60]))]),
               rollers_177_180=roller_window(r, 177.0, 180.0), rollers_178_181=roller_window(r, 178.0, 181.0))
    for a, b in ((177.0, 180.0), (178.0, 181.0)):
        w = in_window(t, a, b)
        out[f"hf_{a:g}_{b:g}"] = float(np.abs(hf(r, F)[w]).max()) if w.any() else np.nan
    pads = np.stack([r.contact_active(p) for p in PADS], 1).astype(bool)
    k = pads.sum(1)
    full = t[k == 6]
    out["pads_full_from"] = float(full[0]) if len(full) else np.nan
    short = np.flatnonzero(k < 6)                  # the last frame with fewer than 6 pads touching
    out["pads_full_to_end_from"] = float(t[short[-1] + 1]) if len(short) and short[-1] + 1 < len(t) else \
        (float(t[0]) if not len(short) else np.nan)
    out["pads_max"] = int(k.max())
    out["pads_at_end"] = int(k[-1])
    return out


def open_runs(d):
    from solver.runfile import RunFile
    return {n: RunFile(Path(d) / f"{n}.h5") for n in NAMES if (Path(d) / f"{n}.h5").exists()}


def plots(R, B, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def fig(rows):
        f, ax = plt.subplots(rows, 1, figsize=(11, 3.1 * rows), constrained_layout=True)
        return f, np.atleast_1d(ax)

    # V1: central impact, existing
    r = R["central_impact_20t"]
    m = r.frame_at(T_CENTRAL) + 1
    t = r.time[:m]
    f, ax = fig(2)
    ax[0].plot(t, r.channel("Fx", 0, m), lw=0.7, label="Fx today")
    if "central_impact_20t" in B:
        b = B["central_impact_20t"]
        mb = b.frame_at(T_CENTRAL) + 1
        ax[0].plot(b.time[:mb], b.channel("Fx", 0, mb), lw=0.6, alpha=0.6, label="Fx before (90d455c)")
    ax[0].set_ylabel("base Fx, N"); ax[0].set_xlim(0, 30); ax[0].legend(loc="upper right")
    ax[0].set_title("V1 central impact, existing mechanism: spring, brake plateau, return impact, repeats")
    for c, lab in (("probe_stroke", "probe stroke"), ("axial_spring", "spiral spring"), ("friction_brake", "friction brake slip")):
        ax[1].plot(t, r.channel(c, 0, m) * 1e3, lw=0.8, label=lab)
    ax[1].set_ylabel("mm"); ax[1].set_xlabel("t, s"); ax[1].set_xlim(0, 30); ax[1].legend(loc="upper right")
    f.savefig(out / "phenomena_v1.png", dpi=90); plt.close(f)

    # V2: modified dampers vs existing, central impact
    f, ax = fig(2)
    for n, lab in (("central_impact_20t", "existing"), ("central_impact_20t_modified_dampers", "modified dampers (FrT1)")):
        r = R[n]
        m = r.frame_at(T_CENTRAL) + 1
        ax[0].plot(r.time[:m], r.channel("Fx", 0, m), lw=0.7, label=lab)
        ax[1].plot(r.time[:m], r.channel("probe_stroke", 0, m) * 1e3, lw=0.8, label=lab)
    ax[0].set_ylabel("base Fx, N"); ax[0].set_xlim(0, 30); ax[0].legend(loc="upper right")
    ax[0].set_title("V2 central impact: modified axial damper (FrT1) vs existing")
    ax[1].set_ylabel("probe stroke, mm"); ax[1].set_xlabel("t, s"); ax[1].set_xlim(0, 30); ax[1].legend()
    f.savefig(out / "phenomena_v2.png", dpi=90); plt.close(f)

    # V3 / V4: limiter and roller forces
    for tag, n, win in (("v3", "expert_existing", (177, 180)), ("v4", "expert_modified_dampers", (178, 181))):
        r = R[n]
        t = r.time
        tc = r.meta.t_capture
        f, ax = fig(3)
        w = t < 60
        ax[0].plot(t[w], pair_force(r, LIMITER)[w], lw=0.6, color="C3")
        ax[0].axvspan(tc, tc + 20, color="0.9", label="absorption (capture .. +20 s)")
        ax[0].axvline(tc, color="k", lw=0.8, ls="--", label=f"capture {tc:.2f} s")
        ax[0].set_ylabel("limiter + pads |F|, N"); ax[0].legend(loc="upper right")
        ax[0].set_title(f"{tag.upper()} {n}: limiter-cone force after capture, roller force, base force")
        rol = pair_force(r, ROLLERS)
        ax[1].plot(t, rol, lw=0.5, color="C2")
        ax[1].axvspan(*win, color="C1", alpha=0.3, label=f"papers' {win[0]}-{win[1]} s")
        ax[1].set_ylabel("rollers |F|, N"); ax[1].legend(loc="upper right")
        ax[2].plot(t, base_force(r), lw=0.5)
        ax[2].axvspan(*win, color="C1", alpha=0.3)
        ax[2].set_ylabel("base |F|, N"); ax[2].set_xlabel("t, s")
        f.savefig(out / f"phenomena_{tag}.png", dpi=90); plt.close(f)

    # V5: oscillation decay, three mechanisms, and the pads at the end
    f, ax = fig(3)
    for n, lab in (("expert_existing", "existing"), ("expert_modified_dampers", "modified dampers"),
                   ("expert_movable_limiter", "movable limiter")):
        r = R[n]
        w = r.time < 40
        ax[0].plot(r.time[w], base_force(r)[w], lw=0.6, label=lab)
    ax[0].axvline(13, color="k", ls="--", lw=0.8, label="papers: decayed by ~13 s")
    ax[0].set_ylabel("base |F|, N"); ax[0].legend(loc="upper right")
    ax[0].set_title("V5 movable limiter: oscillation decay, 177-180 s, pads in full contact at the end")
    r = R["expert_movable_limiter"]
    t = r.time
    w = in_window(t, 170, 187)
    ax[1].plot(t[w], base_force(r)[w], lw=0.6, label="movable limiter, base |F|")
    ax[1].axvspan(177, 180, color="C1", alpha=0.3, label="papers' 177-180 s")
    ax[1].set_ylabel("N"); ax[1].legend(loc="upper right")
    k = np.stack([r.contact_active(p) for p in PADS], 1).astype(bool).sum(1)
    ax[2].plot(t, k, lw=0.8, label="load pads in contact")
    ax[2].axvspan(363, 367, color="C1", alpha=0.3, label="papers' 363-367 s")
    ax[2].set_ylabel("pads"); ax[2].set_xlabel("t, s"); ax[2].legend(loc="upper left")
    f.savefig(out / "phenomena_v5.png", dpi=90); plt.close(f)


def measure(R):
    res = {}
    for n in ("central_impact_20t", "central_impact_20t_modified_dampers"):
        if n in R:
            res[n] = central(R[n])
    for n in ("expert_existing", "expert_modified_dampers", "expert_movable_limiter"):
        if n in R:
            res[n] = expert(R[n])
    return res


def series(times, gap=5.0):
    """Group event times into series separated by more than `gap` seconds: [(first, last), ...]."""
    out = []
    for x in times:
        if out and x - out[-1][1] <= gap:
            out[-1][1] = x
        else:
            out.append([x, x])
    return [tuple(p) for p in out]


def campaign_table(directory):
    """One line per kept run of a campaign over a varied initial condition: when the limiter first strikes the cone."""
    from solver.campaign import read_summary
    from solver.runfile import RunFile
    s = read_summary(directory)
    names = [p.name for p in s.parameters]
    print(f"{s.name} ({s.variant}): " + " ".join(names) + " | T capture | stroke max at | limiter first touch | "
          "after capture | peaks > 1 kN in capture..+10 s (max) | later | contact begins of limiter pairs, whole run | "
          "roller impacts (contact begins)")
    for i in s.index:
        path = s.run_path(int(i))
        if path is None:
            continue
        with RunFile(path) as r:
            tc = r.meta.t_capture
            t = r.time
            first = limiter_series(r, tc, tc + 10.0)
            later = limiter_series(r, tc + 10.0, t[-1])
            ts = float(t[int(np.argmax(r.channel("probe_stroke")))])
            rol = [e.time for e in r.events if e.kind == "contact_begin" and e.pair in ROLLERS]
            print(" ".join(f"{s.column(n)[s.position(int(i))]:g}" for n in names) +
                  f" | {tc:.2f} s | {ts:.2f} s | {first['first_touch']:.2f} s | {first['first_touch'] - tc:+.2f} s | "
                  f"{first['peaks']} ({first['peak']:.0f} N) | {later['peaks']} ({later['peak']:.0f} N) | "
                  f"{sum(1 for e in r.events if e.kind == 'contact_begin' and e.pair in LIMITER)} | roller impacts "
                  f"{len(rol)}, in 177-180 s {sum(177.0 <= x <= 180.0 for x in rol)}, series "
                  + ", ".join(f"{a:.1f}-{b:.1f}" for a, b in series(rol)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="?")
    ap.add_argument("--campaign", type=Path, nargs="*", default=[], help="campaign directories (keep = all) to tabulate")
    ap.add_argument("--before", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args(argv)
    for d in a.campaign:
        campaign_table(d)
    if a.runs is None:
        return
    R = open_runs(a.runs)
    B = open_runs(a.before) if a.before else {}
    res = {"today": measure(R)}
    if B:
        res["before"] = measure(B)
    print(json.dumps(res, indent=1, default=lambda x: round(float(x), 4)))
    if not a.no_plots:
        plots(R, B, a.out)


if __name__ == "__main__":
    main()
