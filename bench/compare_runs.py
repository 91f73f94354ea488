"""Compare two run files frame by frame: every channel, body pose and contact record, and the event list.
Prints the largest difference of each dataset relative to that dataset's largest magnitude (0 = bit-identical).
    python bench/compare_runs.py A.h5 B.h5 [--tol 1e-9]      (exit status 1 if any relative difference > tol)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def datasets(f: h5py.File) -> list[str]:
    """Per-frame dataset paths: time, channels, bodies, contact records."""
    out = ["time", *(f"channels/{c}" for c in f["channels"]), "bodies/position", "bodies/quaternion"]
    for p in f["contacts"]:
        out += [f"contacts/{p}/{q}" for q in f[f"contacts/{p}"]]
    return out


def compare(a_path, b_path) -> tuple[float, list[tuple[str, float]], list[str]]:
    """Worst relative difference, (dataset, relative difference) rows, and problems (length, names, events)."""
    rows, problems = [], []
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        na, nb = a["time"].shape[0], b["time"].shape[0]
        if na != nb:
            problems.append(f"frames: {na} vs {nb} (compared the first {min(na, nb)})")
        n = min(na, nb)
        names_a, names_b = datasets(a), datasets(b)
        if names_a != names_b:
            problems.append(f"datasets differ: {sorted(set(names_a) ^ set(names_b))}")
        for name in (x for x in names_a if x in set(names_b)):
            x = np.asarray(a[name][:n], float)
            y = np.asarray(b[name][:n], float)
            scale = max(np.nanmax(np.abs(x), initial=0.0), np.nanmax(np.abs(y), initial=0.0))
            d = np.nanmax(np.abs(x - y), initial=0.0)
            if not np.array_equal(np.isnan(x), np.isnan(y)):
                d = np.inf
            rows.append((name, d / scale if scale > 0 else d))
        ea = [tuple(e) for e in a["events"][:]]          # time, kind, pair and text (with contact statistics)
        eb = [tuple(e) for e in b["events"][:]]
        if ea != eb:
            problems.append(f"events differ: {len(ea)} vs {len(eb)} rows")
    worst = max((r[1] for r in rows), default=0.0)
    return worst, rows, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--all", action="store_true", help="print every dataset, not only those that differ")
    o = ap.parse_args(argv)
    worst, rows, problems = compare(o.a, o.b)
    for name, r in sorted(rows, key=lambda r: -r[1]):
        if o.all or r > 0:
            print(f"  {name:50s} {r:.3e}")
    for p in problems:
        print("  " + p)
    print(f"worst relative difference {worst:.3e} over {len(rows)} datasets"
          f"{' (bit-identical)' if worst == 0 and not problems else ''}")
    sys.exit(1 if worst > o.tol or problems else 0)


if __name__ == "__main__":
    main()
