"""Regenerate sample_runs/: the central-impact run and the expert run for each mechanism variant, first contact
to hard dock, written at a decimated output step to keep each file small.
    python bench/make_sample_runs.py [--only NAME ...] [--t-end 700]
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# scenario -> output step of the shipped file (s): the solver still integrates at the scenario's step and
# detects events at every step; only the written frames are decimated
RUNS = {
    "central_impact_20t": 0.05,
    "central_impact_20t_modified_dampers": 0.05,
    "central_impact_20t_movable_limiter": 0.05,
    "expert_existing": 0.02,
    "expert_modified_dampers": 0.02,
    "expert_movable_limiter": 0.02,
}


def scenario_with_output_step(src: Path, out_step: float, tmp: Path) -> Path:
    """Copy of the scenario (same file name) with [solver] output_step replaced."""
    text, n = re.subn(r"(?m)^output_step\s*=.*$", f"output_step = {out_step!r}", src.read_text())
    if n != 1:
        raise SystemExit(f"{src}: no single output_step line")
    p = tmp / src.name
    p.write_text(text)
    return p


def main(argv=None):
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="scenario names to regenerate")
    ap.add_argument("--t-end", type=float, default=700.0, help="simulated time limit (hard dock ends earlier)")
    ap.add_argument("--out", type=Path, default=ROOT / "sample_runs")
    a = ap.parse_args(argv)
    a.out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as td:
        for name, step in RUNS.items():
            if a.only and name not in a.only:
                continue
            sc = scenario_with_output_step(ROOT / "resources" / "scenarios" / f"{name}.toml", step, Path(td))
            out = a.out / f"{name}.h5"
            t0 = time.perf_counter()
            try:
                run_scenario(sc, out, t_end=a.t_end)
                status = "ok"
            except Exception as exc:        # a diverged run keeps its partial file with a diagnostic event
                status = f"stopped: {exc}"
            wall = time.perf_counter() - t0
            r = RunFile(out)
            hard = [e.time for e in r.events if e.kind == "hard_dock"]
            print(f"{name:40s} {r.time[-1]:8.2f} s simulated, hard dock {hard[0] if hard else 'none':>8}, "
                  f"T capture {r.meta.t_capture:.3f} s, {out.stat().st_size / 1e6:6.1f} MB, wall {wall:6.1f} s, {status}",
                  flush=True)
            r.close()


if __name__ == "__main__":
    main()
