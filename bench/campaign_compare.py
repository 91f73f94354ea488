"""Before/after table of two directories of the same campaign (e.g. the expert LHS 200 on two builds), as markdown.
    python bench/campaign_compare.py BEFORE_DIR AFTER_DIR [--labels before after] [--first N]
Rows: runs, ok / diverged / error, captured, PASS, runs with a latch release, each failure reason, peak base force;
then how the runs moved between PASS and FAIL. --first N compares only run indices < N in both.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def facts(s, first):
    """Counts of one campaign summary over the run indices < first."""
    keep = [k for k, i in enumerate(s.index) if i < first]
    n = len(keep)
    reasons = {}
    for k in keep:
        for why in s.reasons(int(s.index[k])):
            reasons.setdefault(why, set()).add(int(s.index[k]))
    F = s.column("peak_base_force")[keep]
    return dict(n=n, ok=sum(s.status[k] == "ok" for k in keep), diverged=sum(s.status[k] == "diverged" for k in keep),
                error=sum(s.status[k] == "error" for k in keep), captured=int(s.captured[keep].sum()),
                passed={int(s.index[k]) for k in keep if s.passed[k]}, reasons=reasons,
                F_median=float(np.nanmedian(F)), F_max=float(np.nanmax(F)))


def pct(a, n):
    return f"{a} ({100 * a / n:.1f} %)" if n else "-"


def main(argv=None):
    from solver.campaign import read_summary
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--labels", nargs=2, default=["before", "after"])
    ap.add_argument("--first", type=int, default=None)
    a = ap.parse_args(argv)
    S = [read_summary(d) for d in (a.before, a.after)]
    first = a.first or max(s.n_planned for s in S)
    B, A = (facts(s, first) for s in S)
    lb, la = a.labels
    print(f"| {S[1].name} (run index < {first}) | {lb} | {la} |\n|---|---|---|")
    print(f"| runs finished | {B['n']} | {A['n']} |")
    print(f"| ok / diverged / error | {B['ok']} / {B['diverged']} / {B['error']} | {A['ok']} / {A['diverged']} / "
          f"{A['error']} |")
    print(f"| captured within 20 s | {pct(B['captured'], B['n'])} | {pct(A['captured'], A['n'])} |")
    print(f"| verdict PASS | {pct(len(B['passed']), B['n'])} | {pct(len(A['passed']), A['n'])} |")
    for why in sorted(set(B["reasons"]) | set(A["reasons"]),
                      key=lambda w: -(len(A["reasons"].get(w, ())) + len(B["reasons"].get(w, ())))):
        print(f"| FAIL: {why} | {len(B['reasons'].get(why, ()))} | {len(A['reasons'].get(why, ()))} |")
    print(f"| peak base force median / max, N | {B['F_median']:.0f} / {B['F_max']:.0f} | "
          f"{A['F_median']:.0f} / {A['F_max']:.0f} |")
    both = set(int(i) for i in S[0].index if i < first) & set(int(i) for i in S[1].index if i < first)
    gained = sorted((A["passed"] - B["passed"]) & both)
    lost = sorted((B["passed"] - A["passed"]) & both)
    rb, ra = B["reasons"].get("latch release", set()), A["reasons"].get("latch release", set())
    print(f"\nPASS in both {len(A['passed'] & B['passed'])}; FAIL -> PASS {len(gained)}; PASS -> FAIL {len(lost)} "
          f"(runs {', '.join(map(str, lost[:12]))}{', ...' if len(lost) > 12 else ''}); latch release in both "
          f"{len(ra & rb)}, only {lb} {len(rb - ra)}, only {la} {len(ra - rb)}")


if __name__ == "__main__":
    main()
