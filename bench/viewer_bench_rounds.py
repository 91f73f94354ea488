"""The viewer bench side by side: checkouts × feature settings × runs, interleaved round by round in separate
processes, each printing GUI-thread CPU per update (bench/viewer_bench.py); medians and spread over the rounds.

    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/viewer_bench_rounds.py --code OLD --code NEW \
        --run sample_runs/expert_existing.h5 --foreign /tmp/foreign.h5 --rounds 3 --updates 300
A config is CODE (features off) or CODE+features; by default: the first code without features, every code with.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent / "viewer_bench.py"
LINES = {"gui": re.compile(r"CPU time of the GUI thread per update: p50\s+([\d.]+) ms\s+p95\s+([\d.]+)"),
         "proc": re.compile(r"CPU time of the process per update: p50\s+([\d.]+) ms\s+p95\s+([\d.]+)"),
         "wall": re.compile(r"three-pane update, playing\s+: p50\s+([\d.]+) ms\s+p95\s+([\d.]+)")}


def one(code: Path, features: bool, run: tuple[str, Path], updates: int, size: str) -> dict:
    """One bench process; its p50/p95 per clock."""
    kind, path = run
    cmd = [sys.executable, str(BENCH), "--code", str(code), "--updates", str(updates), "--size", size,
           "--foreign" if kind == "foreign" else "--run", str(path)] + (["--features"] if features else [])
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=code).stdout
    got = {}
    for key, rx in LINES.items():
        m = rx.search(out)
        got[key] = (float(m.group(1)), float(m.group(2))) if m else (float("nan"),) * 2
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, action="append", required=True, help="a checkout (repeat)")
    ap.add_argument("--run", type=Path, action="append", default=[], help="a run file (repeat)")
    ap.add_argument("--foreign", type=Path, help="the plain-h5py 400 s, 1 kHz, 240-channel run (written if missing)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--updates", type=int, default=300)
    ap.add_argument("--size", default="1600x1000")
    a = ap.parse_args(argv)
    configs = [(a.code[0], False)] + [(c, True) for c in a.code]
    runs = [("run", r) for r in a.run] + ([("foreign", a.foreign)] if a.foreign else [])
    res: dict = {}
    for k in range(a.rounds):
        for run in runs:
            for code, feats in (configs if k % 2 == 0 else configs[::-1]):   # alternate the order each round
                t0 = time.time()
                got = one(code, feats, run, a.updates, a.size)
                res.setdefault((run[1].name, code.name + ("+features" if feats else "")), []).append(got)
                print(f"round {k + 1} {run[1].name} {code.name}{'+features' if feats else ''}: GUI thread "
                      f"p50/p95 {got['gui'][0]:.2f}/{got['gui'][1]:.2f} ms, wall p95 {got['wall'][1]:.1f} ms "
                      f"({time.time() - t0:.0f} s)", flush=True)
    print("\nmedian over rounds [min..max]; ms per three-pane update while playing")
    print("| run | code | GUI thread CPU p50 | GUI thread CPU p95 | process CPU p95 | wall p95 |")
    print("|---|---|---|---|---|---|")
    for (run, cfg), rows in res.items():
        def cell(key, i):
            v = np.array([r[key][i] for r in rows])
            return f"{np.median(v):.2f} [{v.min():.2f}..{v.max():.2f}]"
        print(f"| {run} | {cfg} | {cell('gui', 0)} | {cell('gui', 1)} | {cell('proc', 1)} | {cell('wall', 1)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
