"""Is a difference between two builds rounding or physics? Runs SCENARIO from this checkout at its step halved and
compares, channel by channel (max |a - b| / max |a| over the run's frames), base vs this at the same step against
this at the step vs this at half the step (the discretisation error): rounding is far below the latter.
    python bench/rounding_vs_step.py BASE.h5 THIS.h5 SCENARIO [--t-end T] [--half HALF.h5]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def channels(path) -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    from solver.runfile import RunFile
    from solver.verdict import evaluate
    with RunFile(path) as r:
        return np.asarray(r.time), {n: np.asarray(r.channel(n)) for n in r.channels}, evaluate(r).line()


def scaled_diff(a: dict, b: dict, rows) -> tuple[float, str]:
    worst, where = 0.0, ""
    for n, x in a.items():
        y = b[n][rows]
        x = x[rows]
        ok = np.isfinite(x) & np.isfinite(y)
        scale = np.abs(x[ok]).max() if ok.any() else 0.0
        if scale <= 0.0:
            continue
        d = float(np.abs(x[ok] - y[ok]).max() / scale)
        if d > worst:
            worst, where = d, n
    return worst, where


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("this")
    ap.add_argument("scenario")
    ap.add_argument("--t-end")
    ap.add_argument("--half", help="the half-step run file (made here if it does not exist)")
    a = ap.parse_args(argv)
    half = Path(a.half or tempfile.mkdtemp(prefix="half_") + "/half.h5")
    if not half.exists():
        text = Path(a.scenario).read_text()
        m = re.search(r"^step\s*=\s*([0-9.eE+-]+)", text, re.M)
        text = text[:m.start(1)] + repr(float(m.group(1)) / 2) + text[m.end(1):]
        sc = Path(a.scenario).with_name(f"_half_step_{half.stem}.toml")   # beside it: its relative paths hold
        sc.write_text(text)
        cmd = [sys.executable, "-m", "app", "run", str(sc), "-o", str(half)] + (["--t-end", a.t_end] if a.t_end else [])
        try:
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        finally:
            sc.unlink()
    tb, cb, vb = channels(a.base)
    tt, ct, vt = channels(a.this)
    th, ch, vh = channels(half)
    n = min(len(tb), len(tt), len(th))
    assert np.allclose(tb[:n], th[:n]), "frames at different times"
    rows = slice(0, n)
    r1, w1 = scaled_diff(cb, ct, rows)
    r2, w2 = scaled_diff(ct, ch, rows)
    print(f"{Path(a.scenario).stem}: base vs this {r1:.3g} ({w1}); step vs half step {r2:.3g} ({w2}); ratio "
          f"{r1 / r2 if r2 else float('nan'):.3g}")
    print(f"  verdict base: {vb}\n  verdict this: {vt}\n  verdict half: {vh}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
