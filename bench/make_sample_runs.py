"""Regenerate sample_runs/: the central-impact run and the expert run for each mechanism variant, first contact
to hard dock, and sample_runs/peripheral/: the peripheral type's scenarios, first contact to hooks closed. Each is simulated at the scenario's output step (1 ms; the events and their contact statistics
come from that run and are kept in /contact_events), then its frames are decimated into sample_runs/ to keep each file small.
    python bench/make_sample_runs.py [--only NAME ...] [--t-end 700] [--keep-full DIR]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# scenario -> output step of the shipped file (s)
RUNS = {
    "central_impact_20t": 0.1,
    "central_impact_20t_modified_dampers": 0.1,
    "central_impact_20t_movable_limiter": 0.1,
    "expert_existing": 0.1,
    "expert_modified_dampers": 0.1,
    "expert_movable_limiter": 0.1,
    "peripheral/central_impact_10t": 0.02,
    "peripheral/idss_envelope": 0.02,
    "peripheral/nominal_10t": 0.02,
    "peripheral/expert_envelope_corner": 0.02,
    "peripheral/stand_fixed_base": 0.02,
}


def scenario_of(name: str) -> Path:
    """The scenario TOML of a RUNS name ("peripheral/x": the peripheral type's resources/peripheral/scenarios/x.toml)."""
    if "/" in name:
        kind, stem = name.split("/")
        return ROOT / "resources" / kind / "scenarios" / f"{stem}.toml"
    return ROOT / "resources" / "scenarios" / f"{name}.toml"


def decimate(src: Path, dst: Path, step: float) -> None:
    """Copy run file src to dst keeping every k-th frame (k = step / output step) and all events."""
    import h5py
    import numpy as np
    from solver.runfile import RunFile, RunWriter
    r = RunFile(src)
    k = max(1, int(round(step / r.meta.output_step)))
    meta = dataclasses.replace(r.meta, output_step=r.meta.output_step * k)
    pairs = list(r.contact_pairs.values())
    stats = r.contact_statistics()          # the solver's contact statistics, at its own output step
    ext_step = r.extrema_step()             # the solver's per-step extrema stay those of the decimated run
    w = RunWriter(dst, meta, list(r.channels.values()), r.bodies, pairs, list(r.geometry.values()),
                  parameters_toml=r.parameters_toml, contact_detail=True, contact_statistics=stats is not None,
                  extrema=ext_step == ext_step)
    f = h5py.File(src, "r")
    n = r.n_frames
    keep = np.arange(0, n, k)
    if keep[-1] != n - 1:                   # the last frame too: the state at hard dock / hooks closed
        keep = np.append(keep, n - 1)
    for a in range(0, len(keep), 2000):
        sl = keep[a:a + 2000]
        cont = {q: np.stack([f[f"contacts/{p.name}/{q}"][sl] for p in pairs], 1)
                for q in ("active", "force", "point", "normal", "depth", "normal_speed")}
        w.append(f["time"][sl], np.stack([f[f"channels/{c}"][sl] for c in r.channels], 1),
                 f["bodies/position"][sl], f["bodies/quaternion"][sl], cont["active"], cont["force"],
                 cont["point"], cont["normal"], cont["depth"], cont["normal_speed"])
    for e in r.events:
        w.add_event(e.time, e.kind, e.pair, e.text)
    if stats is not None:
        w.set_contact_events(*stats)
    if ext_step == ext_step:
        w.set_extrema(np.array([[np.nan if e is None else e[i] for e in map(r.extrema, r.channels)] for i in range(4)]),
                      ext_step)
    w.finish(t_capture=r.meta.t_capture, complete=r.meta.complete)
    f.close()
    r.close()


def main(argv=None):
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="scenario names to regenerate")
    ap.add_argument("--t-end", type=float, default=700.0, help="simulated time limit (hard dock ends earlier)")
    ap.add_argument("--out", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--keep-full", type=Path, default=None, help="keep the full-resolution runs in this folder")
    ap.add_argument("--from-full", type=Path, default=None,
                    help="decimate existing full-resolution runs NAME.h5 from this folder instead of simulating")
    a = ap.parse_args(argv)
    a.out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        full_dir = a.from_full or a.keep_full or Path(td)
        full_dir.mkdir(parents=True, exist_ok=True)
        for name, step in RUNS.items():
            if a.only and name not in a.only:
                continue
            full = full_dir / f"{name}.h5"
            out = a.out / f"{name}.h5"
            full.parent.mkdir(parents=True, exist_ok=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            status = "decimated"
            if a.from_full is None:
                try:
                    run_scenario(scenario_of(name), full, t_end=a.t_end)
                    status = "ok"
                except Exception as exc:    # a diverged run keeps its partial file with a diagnostic event
                    status = f"stopped: {exc}"
            wall = time.perf_counter() - t0
            decimate(full, out, step)
            r = RunFile(out)
            hard = [e.time for e in r.events if e.kind == "hard_dock"]
            print(f"{name:40s} {r.time[-1]:8.2f} s simulated, hard dock {f'{hard[0]:.3f} s' if hard else 'none':>10}, "
                  f"T capture {r.meta.t_capture:.3f} s, {out.stat().st_size / 1e6:6.1f} MB, wall {wall:6.1f} s, {status}",
                  flush=True)
            r.close()


if __name__ == "__main__":
    main()
