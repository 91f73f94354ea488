"""CPU seconds of whole runs of several types, this checkout against another, interleaved in fresh processes on warm
caches (a warm-up run first in each process); medians and the speed ratio base / this (>= 1: this is as fast).
    python bench/types_speed.py [--base /work/main] [--rounds 5] [SCENARIO:T_END ...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.core_speed import alternating  # noqa: E402
DEFAULT = ["resources/scenarios/central_impact_20t.toml:4", "resources/peripheral/scenarios/central_impact_10t.toml:3",
           "resources/snare/scenarios/suspension_rig.toml:0.6"]
CODE = """
import json, tempfile, time
from solver.scenario import load_model
from solver.simulate import run_scenario
with tempfile.TemporaryDirectory() as d:
    run_scenario({scen!r}, d + '/w.h5', t_end=2 * load_model({scen!r}).output_step)
    c0 = time.process_time()
    run_scenario({scen!r}, d + '/r.h5', t_end={t})
    print(json.dumps(time.process_time() - c0))
"""


def one(root: Path, scen: str, t: float) -> float:
    out = subprocess.run([sys.executable, "-c", CODE.format(scen=str(ROOT / scen), t=t)], cwd=root,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    ap.add_argument("--base", default="/work/main")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    for spec in a.scenarios:
        scen, _, t = spec.partition(":")
        rows = alternating(a.base, a.rounds, lambda root: one(root, scen, float(t)))
        b, m = statistics.median(rows["base"]), statistics.median(rows["this"])
        print(f"{Path(scen).stem} {t} s: CPU median base {b:.3f} s, this {m:.3f} s, speed ratio {b / m:.3f} "
              f"(base {[round(x, 3) for x in rows['base']]}, this {[round(x, 3) for x in rows['this']]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
