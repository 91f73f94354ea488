"""Speed of this checkout against another (default /work/main), side by side: each round runs, alternately in a fresh
process per checkout, the kernels alone (solver_bench.solver_only) and a whole run with its run file (whole_run),
after a warm-up; prints medians of CPU and wall seconds and the ratios base / this (>= 1: this is as fast or faster).
    python bench/core_speed.py [--base /work/main] [--rounds 4] [--t-sim 10] [--scenario resources/scenarios/X.toml]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = """
import json, sys, tempfile, time
sys.path.insert(0, 'bench')
import solver_bench as b
scen = {scen!r}
b.solver_only(0.05, scenario=scen)                    # load (or compile) the kernels
cpu = []
wall = b.solver_only({t}, cpu, scenario=scen)
wcpu = []
with tempfile.TemporaryDirectory() as d:
    whole, _ = b.whole_run(scen, d + '/r.h5', t_end={t}, cpu=wcpu)
print(json.dumps(dict(kernel_wall=wall, kernel_cpu=cpu[0], run_wall=whole, run_cpu=wcpu[0])))
"""


def one(root: Path, scen: str, t: float) -> dict:
    out = subprocess.run([sys.executable, "-c", CODE.format(scen=scen, t=t)], cwd=root, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def alternating(base, rounds: int, measure, report=None) -> dict[str, list]:
    """measure(root) of the base checkout and of this one, `rounds` times each, the order swapped every round;
    report(name, round, value) after each."""
    rows = {"base": [], "this": []}
    for k in range(rounds):
        order = [("base", Path(base)), ("this", ROOT)]
        for name, root in (order if k % 2 == 0 else order[::-1]):
            rows[name].append(measure(root))
            if report:
                report(name, k, rows[name][-1])
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="/work/main")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--t-sim", type=float, default=10.0)
    ap.add_argument("--scenario", default=str(ROOT / "resources" / "scenarios" / "central_impact_20t.toml"))
    a = ap.parse_args(argv)
    rows = alternating(a.base, a.rounds, lambda root: one(root, a.scenario, a.t_sim),
                       lambda name, k, value: print(name, k, value, flush=True))
    print(f"{Path(a.scenario).stem}, {a.t_sim:g} s simulated, {a.rounds} rounds alternating; medians:")
    for key in ("kernel_cpu", "kernel_wall", "run_cpu", "run_wall"):
        b = statistics.median(r[key] for r in rows["base"])
        t = statistics.median(r[key] for r in rows["this"])
        print(f"  {key:12s} base {b:7.3f} s  this {t:7.3f} s  speed ratio {b / t:5.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
