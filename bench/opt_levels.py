"""numba's optimisation level (NUMBA_OPT 0-3; numba's default 3) against a scenario's cold compile CPU, its warm run
CPU and its run file: per level a run on an empty cache, then the same run again on that cache (warm), then every
dataset and attribute of the run file against level 3's (bench/bit_identity.py's comparison).
    python bench/opt_levels.py SCENARIO:T_END [...] [--levels 0 1 2 3] [--warm-rounds 3]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bit_identity import compare  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _run(scen: str, t: str, out: Path, cache: str, level: int) -> float:
    """CPU-s of `dockmnemo run` into out at this NUMBA_OPT level on this cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_OPT=str(level))
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "app", "run", str(ROOT / scen), "-o", str(out), "--t-end", t], cwd=ROOT,
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def _differing(a: Path, b: Path) -> str:
    n, diffs = compare(a, b)
    return f"{len(diffs)} of {n}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--levels", type=int, nargs="+", default=[3, 2, 1, 0])
    ap.add_argument("--warm-rounds", type=int, default=3)
    a = ap.parse_args(argv)
    print("| scenario | NUMBA_OPT | cold run CPU-s | warm run CPU-s (median) | items differing from level 3 |")
    print("|---|---|---|---|---|")
    for spec in a.scenarios:
        scen, t = spec.rsplit(":", 1)
        with tempfile.TemporaryDirectory() as d:
            ref = None
            for level in sorted(a.levels, reverse=True):
                cache = tempfile.mkdtemp(dir=d)
                out = Path(d) / f"L{level}.h5"
                cold = _run(scen, t, out, cache, level)
                warm = statistics.median(_run(scen, t, Path(d) / "w.h5", cache, level) for _ in range(a.warm_rounds))
                ref = ref or (out if level == 3 else None)
                diff = _differing(ref, out) if ref else "(no level 3)"
                print(f"| {Path(scen).stem} to {t} s | {level} | {cold:.1f} | {warm:.2f} | {diff} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
