"""Run scenarios with two checkouts and compare every dataset and attribute of their run files, byte for byte.
    python bench/bit_identity.py --base /work/main [--keep DIR] [--diff] [SCENARIO[:T_END] ...]
Runs `python -m app run` from each checkout root (so each imports its own solver). Exit 1 if any differs.
--diff: for a scenario that differs, its largest relative difference over the numeric items and both verdict lines.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["resources/scenarios/central_impact_20t.toml:5", "resources/scenarios/expert_existing.toml:10",
           "resources/scenarios/lateral_miss_7t.toml:5", "resources/scenarios/stand_fixed_base_7t.toml:5",
           "resources/peripheral/scenarios/idss_envelope.toml:5"]
VOLATILE = {"run_date", "wall_seconds", "created", "solver_seconds", "host", "started", "finished"}


def walk(f: h5py.File) -> dict[str, object]:
    """Every dataset and attribute of a file: path -> value (attributes as path@name)."""
    out: dict[str, object] = {}

    def attrs(path, obj):
        for k, v in obj.attrs.items():
            out[f"{path}@{k}"] = v

    attrs("/", f)

    def visit(name, obj):
        attrs(name, obj)
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]
    f.visititems(visit)
    return out


def same(x, y) -> bool:
    """Equal bytes (arrays: dtype, shape and every byte; NaNs equal to themselves)."""
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.dtype.hasobject:               # strings: compare values (the bytes would be pointers)
            return x.tolist() == y.tolist() if x.dtype.names is None else all(
                same(x[n], y[n]) for n in x.dtype.names)
        return x.tobytes() == y.tobytes()
    return type(x) is type(y) and (x == y or (x != x and y != y))


def compare(a_path, b_path) -> tuple[int, list[str]]:
    """Number of items compared and the items that differ (volatile run-date/wall-time attributes skipped)."""
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        wa, wb = walk(a), walk(b)
    diffs = [f"only in {'A' if k in wa else 'B'}: {k}" for k in sorted(set(wa) ^ set(wb))]
    n = 0
    for k in sorted(set(wa) & set(wb)):
        if k.rsplit("@", 1)[-1] in VOLATILE and "@" in k:
            continue
        n += 1
        if not same(wa[k], wb[k]):
            diffs.append(k)
    return n, diffs


def rel_diff(a_path, b_path, diffs) -> tuple[float, str]:
    """Largest max|a - b| / max|a| over the differing numeric items (an array scaled by its largest magnitude, where
    both are finite: a near-zero entry's sign does not count as a 100 % difference)."""
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        wa, wb = walk(a), walk(b)
    worst, where = 0.0, ""
    for k in diffs:
        if k not in wa or k not in wb:
            continue
        x, y = np.asarray(wa[k]), np.asarray(wb[k])
        if x.shape != y.shape or x.dtype.kind not in "fiu" or y.dtype.kind not in "fiu":
            continue
        x, y = x.astype(float), y.astype(float)
        ok = np.isfinite(x) & np.isfinite(y)
        if not ok.any():
            continue
        scale = np.abs(x[ok]).max()
        r = float(np.abs(x - y)[ok].max() / (scale if scale > 0 else 1.0))
        if r > worst:
            worst, where = r, k
    return worst, where


def verdict_line(path) -> str:
    from solver.runfile import RunFile
    from solver.verdict import evaluate
    with RunFile(path) as r:
        return evaluate(r).line()


def run(root: Path, scenario: str, t_end: str | None, out: Path) -> None:
    """One run from a checkout root (its own solver package)."""
    cmd = [sys.executable, "-m", "app", "run", str(ROOT / scenario), "-o", str(out)]
    if t_end:
        cmd += ["--t-end", t_end]
    subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*", default=DEFAULT, help="SCENARIO[:T_END], paths relative to this checkout")
    ap.add_argument("--base", default="/work/main", help="the other checkout (default /work/main)")
    ap.add_argument("--keep", help="directory for the run files (default: a temporary one)")
    ap.add_argument("--reuse-base", action="store_true", help="reuse base run files already in --keep")
    ap.add_argument("--diff", action="store_true", help="largest relative difference and the verdicts where differing")
    a = ap.parse_args(argv)
    tmp = Path(a.keep or tempfile.mkdtemp(prefix="bitid_"))
    tmp.mkdir(parents=True, exist_ok=True)
    bad = 0
    for spec in a.scenarios:
        scen, _, t_end = spec.partition(":")
        stem = Path(scen).stem
        fa, fb = tmp / f"{stem}_base.h5", tmp / f"{stem}_this.h5"
        if not (a.reuse_base and fa.exists()):
            run(Path(a.base), scen, t_end or None, fa)
        run(ROOT, scen, t_end or None, fb)
        n, diffs = compare(fa, fb)
        bad += bool(diffs)
        print(f"{stem:34s} {n:4d} items compared, {len(diffs)} differ" + ("" if not diffs else ": " + ", ".join(diffs[:8])))
        if diffs and a.diff:
            worst, where = rel_diff(fa, fb, diffs)
            va, vb = verdict_line(fa), verdict_line(fb)
            print(f"    max relative difference {worst:.3g} ({where}); verdict {'unchanged' if va == vb else 'CHANGED'}:"
                  f"\n    base {va}\n    this {vb}")
    print("bit-identical" if not bad else f"{bad} scenario(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
