"""CPU seconds of a cold run (empty NUMBA_CACHE_DIR: every kernel compiled) of each scenario, this checkout against
another, alternating; a short --t-end so the compile dominates.
    python bench/cold_compile.py [--base /work/main] [--rounds 1] [SCENARIO[:T_END] ...]   (T_END default 0.01 s)
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.core_speed import alternating  # noqa: E402
DEFAULT = ["resources/scenarios/central_impact_20t.toml", "resources/peripheral/scenarios/central_impact_10t.toml",
           "resources/snare/scenarios/suspension_rig.toml"]


def cold(root: Path, spec: str) -> float:
    scen, _, t_end = spec.partition(":")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "app", "run", str(ROOT / scen), "-o", d + "/r.h5",
                        "--t-end", t_end or "0.01"],
                       cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=DEFAULT)
    ap.add_argument("--base", default="/work/main")
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args(argv)
    for scen in a.scenarios:
        rows = alternating(a.base, a.rounds, lambda root: cold(root, scen))
        print(f"{Path(scen.partition(':')[0]).stem}: cold run CPU base {[round(x, 1) for x in rows['base']]} s, "
              f"this {[round(x, 1) for x in rows['this']]} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
