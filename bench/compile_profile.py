"""Compile time per compiled unit (numba function x signature) of a scenario's run, in a fresh numba cache.

    python bench/compile_profile.py [SCENARIO] [--t-end 0.01] [--json out.json]

Sets NUMBA_CACHE_DIR to a new temporary directory (unless given), compiles every unit in this process (no second
process, unlike a run), records numba's "numba:compile" events and prints, per compiled unit: CPU seconds in all (with the units it compiles inside it) and its own; then the totals."""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _sig(data):
    args = data.get("args")
    return ", ".join(str(a) for a in args) if args is not None else ""


class _CpuRecorder:
    """numba:compile start/end events with the process CPU time (the compile runs in this thread)."""

    def __init__(self):
        import numba.core.event as ev

        class L(ev.Listener):
            def on_start(_, event):
                self.buffer.append((time.process_time(), event))

            def on_end(_, event):
                self.buffer.append((time.process_time(), event))
        self.buffer = []
        self.listener = L()


DEFAULT = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"


def profile(t_end: float, scen: Path = DEFAULT):
    """Rows (unit, signature, total, self CPU s) of every numba compile during the scenario's run to t_end."""
    import numba.core.event as ev
    rec = _CpuRecorder()
    t0 = time.perf_counter()
    with ev.install_listener("numba:compile", rec.listener):
        sys.path.insert(0, str(ROOT))
        from solver import warmup
        from solver.simulate import run_scenario
        warmup._start_compile_process = lambda units: None   # every unit in this process, to time each one
        from solver.scenario import load_model
        with tempfile.TemporaryDirectory() as d:
            run_scenario(scen, Path(d) / "run.h5", t_end=t_end or 2 * load_model(scen).output_step)
    wall = time.perf_counter() - t0
    stack, rows = [], []
    for ts, e in rec.buffer:
        if e.is_start:
            stack.append([ts, e.data, 0.0])
        else:
            t_start, data, child = stack.pop()
            dur = ts - t_start
            if stack:
                stack[-1][2] += dur
            disp = data["dispatcher"]
            rows.append(dict(unit=f"{disp.py_func.__module__}.{disp.py_func.__qualname__}", sig=_sig(data),
                             total=dur, self=dur - child))
    return rows, wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("scenario", nargs="?", default=str(DEFAULT))
    ap.add_argument("--t-end", type=float, help="default: two output steps")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    rows, wall = profile(a.t_end, Path(a.scenario).resolve())
    rows.sort(key=lambda r: -r["self"])
    cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    print(f"{'compiled unit':58s} {'self CPU s':>10s} {'total':>8s}  signature")
    for r in rows:
        print(f"{r['unit']:58s} {r['self']:10.2f} {r['total']:8.2f}  {r['sig'][:110]}")
    print(f"units {len(rows)}; distinct functions {len({r['unit'] for r in rows})}; "
          f"compile CPU {sum(r['self'] for r in rows):.1f} s; wall {wall:.1f} s; process CPU {cpu:.1f} s")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(rows=rows, wall=wall, cpu=cpu), indent=1))


if __name__ == "__main__":
    if "NUMBA_CACHE_DIR" not in os.environ:
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba_cold_")
    main()
