"""Docs table of peripheral campaign directories (e.g. idss_envelope_200 before/after), as markdown: per directory
runs, captured, PASS, first failure reasons, hooks-closed times, peak interface loads (solver rate); with two
directories, how each run's first reason moved between them. Works on a campaign still running (its finished rows).
    python bench/peripheral_campaign_table.py DIR [DIR ...] [--labels A B ...] [--first N]
--first N keeps run indices < N in every directory (a common prefix of the same Latin hypercube).
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def first_reasons(s, first: int) -> dict[int, str]:
    """Run index -> its first failure reason ('PASS' if it passed), over run indices < first."""
    out = {}
    for i in s.index:
        if i < first:
            r = s.reasons(int(i))
            out[int(i)] = r[0] if r else "PASS"
    return out


def _stat(s, name, keep, scale):
    v = s.column(name)[keep] / scale
    v = v[np.isfinite(v)]
    return f"{np.median(v):.2f} / {np.max(v):.2f}" if v.size else "-"


def row(label: str, s, first: int) -> str:
    keep = np.array([i < first for i in s.index], bool)
    n = int(keep.sum())
    why = Counter(first_reasons(s, first).values())
    reasons = ", ".join(f"{w} {c}" for w, c in why.most_common())
    th = s.column("t_hooks_closed")[keep]
    th = th[np.isfinite(th)]
    hooks = f"{th.size}: {np.median(th):.1f} / {np.max(th):.1f} s" if th.size else "0"
    return (f"| {label} | {n} | {int(s.captured[keep].sum())} | {int(s.passed[keep].sum())} | {reasons} | {hooks} | "
            f"{_stat(s, 'peak_iface_F', keep, 1e3)} | {_stat(s, 'peak_iface_M', keep, 1e3)} |")


def main(argv=None) -> int:
    from solver.campaign import read_summary
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--labels", nargs="*", default=None)
    ap.add_argument("--first", type=int, default=None)
    a = ap.parse_args(argv)
    S = [read_summary(d) for d in a.dirs]
    labels = a.labels or [str(d) for d in a.dirs]
    first = a.first if a.first is not None else min(int(s.index.max()) + 1 if len(s) else 0 for s in S)
    print(f"{S[0].name}, run indices < {first} (t_end {', '.join(f'{s.campaign.t_end:g}' for s in S)} s)\n")
    print("| model | runs | captured | PASS | first failure reason (runs) | hooks closed: runs, median / max time | "
          "peak iface F median / max, kN | peak iface M median / max, kN*m |\n|---|---|---|---|---|---|---|---|")
    for lb, s in zip(labels, S):
        print(row(lb, s, first))
    if len(S) >= 2:
        A, B = first_reasons(S[0], first), first_reasons(S[1], first)
        moved = Counter(f"{A[i]} -> {B[i]}" for i in sorted(set(A) & set(B)))
        print(f"\n| {labels[0]} -> {labels[1]} (first reason) | runs |\n|---|---|")
        for k, c in moved.most_common():
            print(f"| {k} | {c} |")
        lost = sorted(i for i in set(A) & set(B) if A[i] == "PASS" and B[i] != "PASS")
        print(f"\nPASS -> FAIL runs: {', '.join(map(str, lost)) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
