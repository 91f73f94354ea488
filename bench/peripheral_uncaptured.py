"""Why a peripheral campaign's runs were not captured: each uncaptured run's kept file read from its stored poses
and channels, grouped by cause (docs/peripheral.md "The uncaptured quarter").
    python bench/peripheral_uncaptured.py CAMPAIGN_DIR [--runs] [--files DIR]
(--files DIR: the runs' files in DIR, run_NNNNN.h5, e.g. kept by bench/peripheral_campaign_runs.py --keep DIR; the
parameters from CAMPAIGN_DIR's summary; the runs of DIR's files that were not captured)
Causes: A the petals end outside the other ring (its tips on the other ring's face, the craft rebounds); B the
petals stall in each other before the ring faces meet; C1 / C2 the ring faces touch but only one / two latches
catch (the others' strikers outside the latch's capture zone: across the axis `engage_travel`, along it
`capture_gap`).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CAUSES = {"A": "petals outside the other ring: tips on its face, the craft rebounds",
          "B": "petals stalled in each other before the ring faces meet, the craft rebounds",
          "C1": "ring faces touch, one latch: the ring leans on the passive face",
          "C2": "ring faces touch, two latches: the third striker outside the capture zone"}


def _rot_many(q):
    from solver.quat import to_matrix
    return np.array([to_matrix(x) for x in q])


def latch_offsets(run, latch_radius=0.54, first_angle=90.0, stride=4):
    """Per frame (every `stride`-th): each latch point's offset from its striker in the passive frame (axial, across),
    latch k at first_angle + 120 k on both rings (the mechanism's [latches] radius and [guide_petals] first_angle)."""
    names = list(run.bodies)
    ip, ir = names.index("passive_craft"), names.index("ring")
    idx = np.arange(0, run.n_frames, stride)
    pos = np.array([run.poses(i)[0][[ip, ir]] for i in idx])
    q = np.array([run.poses(i)[1][[ip, ir]] for i in idx])
    RP, RR = _rot_many(q[:, 0]), _rot_many(q[:, 1])
    a = np.radians(first_angle + 120.0 * np.arange(3))
    pts = np.stack([np.zeros(3), latch_radius * np.cos(a), latch_radius * np.sin(a)], 1)     # (3, 3)
    xl = pos[:, 1, None, :] + np.einsum("kij,lj->kli", RR, pts)
    loc = np.einsum("kji,klj->kli", RP, xl - pos[:, 0, None, :])                             # passive frame
    d = loc - pts[None]
    return idx, d[..., 0], np.hypot(d[..., 1], d[..., 2])


def analyse(path, params: dict) -> dict:
    from solver.runfile import RunFile
    with RunFile(path) as run:
        ch = run.channel
        rx, ry, rz = ch("ring_x"), ch("ring_y"), ch("ring_z")
        k = int(np.argmin(rx))
        rr = run.contact_active("ring_ring")
        dt = float(run.time[1] - run.time[0])
        lat = ch("latches_engaged")
        legs = min(float(ch(f"leg_{j}").min()) for j in range(1, 7))
        out = dict(min_gap=float(rx[k]), t_min=float(run.time[k]), offset=float(math.hypot(ry[k], rz[k])),
                   roll=float(ch("ring_roll")[k]), ring_tilt=float(math.hypot(ch("ring_pitch")[k], ch("ring_yaw")[k])),
                   craft_tilt_max=float(ch("interface_tilt").max()), faces_s=float(rr.sum() * dt),
                   latches=int(lat.max()), vx_end=float(ch("cm_vx")[-1]), leg_min=legs,
                   first=min((e.time for e in run.events if e.kind == "first_contact"), default=math.nan))
        out["rebound"] = -out["vx_end"] / params["closing_speed"]
        if out["faces_s"] > 0.0:
            idx, ax, ac = latch_offsets(run)
            touch = rr[idx] > 0
            # the best moment for capture: the least, over frames with the faces touching, of the worst latch's need
            need = np.maximum(ax / 0.005, ac / 0.015).max(1)
            need[~touch] = np.inf
            j = int(np.argmin(need))
            out.update(best_axial=float(ax[j].max()), best_across=float(ac[j].max()),
                       ring_tilt_touch=float(np.median(np.hypot(ch("ring_pitch")[idx][touch],
                                                                ch("ring_yaw")[idx][touch]))))
    if out["faces_s"] == 0.0:
        out["cause"] = "A" if out["min_gap"] >= 0.2 else "B"
    else:
        out["cause"] = "C2" if out["latches"] >= 2 else "C1"
    return out


def main(argv):
    import h5py
    d = Path(argv[0])
    with h5py.File(d / "summary.h5", "r") as S:
        P = {k: S["parameters"][k][:] for k in S["parameters"]}
        captured = S["captured"][:]
        files = [x.decode() if isinstance(x, bytes) else str(x) for x in S["run_file"][:]]
    nc = np.where(captured == 0)[0]
    if "--files" in argv:
        from solver.runfile import RunFile
        fd = Path(argv[argv.index("--files") + 1])
        files = {int(f.stem.split("_")[1]): f for f in sorted(fd.glob("run_*.h5"))}
        nc = []
        for i, f in files.items():
            with RunFile(f) as run:
                if not math.isfinite(run.t_capture):
                    nc.append(i)
        captured = np.ones(len(files))
        d = fd
    rows = []
    for i in nc:
        p = {k: float(v[i]) for k, v in P.items()}
        r = analyse(files[i] if isinstance(files, dict) else d / files[i], p)
        r.update(index=int(i), **p)
        rows.append(r)
        if "--runs" in argv:
            extra = (f" best latch need: axial {r['best_axial'] * 1e3:5.1f} mm, across {r['best_across'] * 1e3:5.1f} mm"
                     if "best_axial" in r else "")
            print(f"run {i:3d} {r['cause']:2s} v {p['closing_speed']:.3f} miss {p['lateral_miss'] * 1e3:5.1f} mm tilt "
                  f"{p['tilt']:.2f} roll {p['roll_deg']:+.2f}: least ring gap {r['min_gap'] * 1e3:6.1f} mm at "
                  f"{r['t_min']:5.2f} s, offset {r['offset'] * 1e3:5.1f} mm, craft tilt max {r['craft_tilt_max']:.1f}, "
                  f"latches {r['latches']}, rebound {r['rebound']:+.2f}, faces {r['faces_s']:5.1f} s{extra}")
    print(f"{len(nc)} of {len(captured)} runs not captured ({d})\n")
    print("| cause | runs | closing m/s | miss mm | tilt deg | roll deg | least ring gap mm | ring offset there mm "
          "| craft tilt max deg | rebound (vx_end / v0) | latch need at best: axial / across mm |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")

    def rng(v, f=1.0, fmt="{:.0f}"):
        v = np.asarray(v, float) * f
        return (fmt + "–" + fmt).format(np.nanmin(v), np.nanmax(v)) if len(v) else "–"
    for c, label in CAUSES.items():
        g = [r for r in rows if r["cause"] == c]
        if not g:
            continue
        col = lambda n: [r.get(n, math.nan) for r in g]
        need = (f"{rng(col('best_axial'), 1e3, '{:.1f}')} / {rng(col('best_across'), 1e3, '{:.1f}')}"
                if c.startswith("C") else "–")
        print(f"| {c}: {label} | {len(g)}: {' '.join(str(r['index']) for r in g)} | "
              f"{rng(col('closing_speed'), 1, '{:.3f}')} | {rng(col('lateral_miss'), 1e3)} | "
              f"{rng(col('tilt'), 1, '{:.1f}')} | {rng(np.abs(col('roll_deg')), 1, '{:.1f}')} | "
              f"{rng(col('min_gap'), 1e3)} | {rng(col('offset'), 1e3)} | {rng(col('craft_tilt_max'), 1, '{:.1f}')} | "
              f"{rng(col('rebound'), 1, '{:+.2f}')} | {need} |")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
