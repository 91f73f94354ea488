"""Solver speed: simulated seconds per wall second (central impact, 30 s, after JIT warm-up; medians of 3), cold-start
compile time, the same model with NUMBA_DISABLE_JIT=1 on a 0.5 s slice (subprocess), and the run-file cost.
    python bench/solver_bench.py [--t-sim 30] [--t-nojit 0.5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCEN = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"


def solver_only(t_sim: float, cpu: list | None = None) -> float:
    """Wall seconds of the kernels alone (no run-file writing) for t_sim seconds of the scenario (CPU seconds
    appended to `cpu`)."""
    import numpy as np
    from solver import dynamics as D
    from solver.scenario import load_model
    from solver.simulate import kernel_args
    m = load_model(SCEN)
    spo = int(round(m.output_step / m.step))
    n = int(round(t_sim / m.output_step))
    s, Z = m.s0.copy(), m.Z0.copy()
    npair = len(m.cgeo.pair_names) + 1                  # library pairs + latch_neck
    bufs = (np.zeros(n), np.zeros((n, D.NCH)), np.zeros((n, 6, 3)), np.zeros((n, 6, 4)), np.zeros((n, npair), np.uint8),
            np.zeros((n, npair, 3)), np.zeros((n, npair, 3)), np.zeros((n, npair, 3)), np.zeros((n, npair)),
            np.zeros((n, npair)))
    t0, c0 = time.perf_counter(), time.process_time()
    status, t, rows = D.run_block(s, Z, 0.0, m.step, n, spo, m.P, m.LAT, m.TLS, m.TAX, m.TMA, m.TML, *kernel_args(m),
                                  np.zeros(2), np.zeros(npair, np.int64), np.zeros((16384, 3)), np.zeros(1, np.int64),
                                  *bufs)
    assert status == 0 and rows == n
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-sim", type=float, default=30.0)
    ap.add_argument("--t-nojit", type=float, default=0.5)
    a = ap.parse_args(argv)
    if os.environ.get("_BENCH_NOJIT"):
        w = solver_only(a.t_nojit)
        print(f"{w:.6f}")
        return
    # cold start: compile into an empty cache directory in a subprocess
    cache = tempfile.mkdtemp(prefix="dockmnemo_numba_")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import bench.solver_bench as b; "
                    "b.solver_only(0.01)" % str(ROOT)], env=env, check=True, cwd=ROOT)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import bench.solver_bench as b; "
                    "b.solver_only(0.01)" % str(ROOT)], env=env, check=True, cwd=ROOT)
    warm_start = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)

    solver_only(0.01)                                   # warm-up (cache or compile)
    cpu_k = []
    w = statistics.median(solver_only(a.t_sim, cpu_k) for _ in range(3))
    from solver.simulate import run_scenario
    walls = []
    with tempfile.TemporaryDirectory() as d:
        cpu_f = []
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            run_scenario(SCEN, Path(d) / "ci.h5", t_end=a.t_sim)
            walls.append(time.perf_counter() - t0)
            cpu_f.append(time.process_time() - c0)
        size = (Path(d) / "ci.h5").stat().st_size
    w_file = statistics.median(walls)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", _BENCH_NOJIT="1")
    out = subprocess.run([sys.executable, str(Path(__file__)), "--t-nojit", str(a.t_nojit)], env=env, check=True,
                         capture_output=True, text=True, cwd=ROOT)
    w_nojit = float(out.stdout.strip().splitlines()[-1])
    print(f"central impact, {a.t_sim:g} s simulated, step 0.5 ms RK4 (4 contact-library calls per step), 1 kHz output")
    print(f"  cold start (compile, empty cache) : {cold:7.1f} s   (start with warm cache: {warm_start:.1f} s)")
    ck, cf = statistics.median(cpu_k), statistics.median(cpu_f)
    print(f"  solver kernels, JIT               : {w:7.3f} s wall -> {a.t_sim / w:7.1f} x real time"
          f"   (CPU {ck:.3f} s -> {a.t_sim / ck:.1f} x)")
    print(f"  run_scenario incl. run-file write : {w_file:7.3f} s wall -> {a.t_sim / w_file:7.1f} x real time"
          f"   (CPU {cf:.3f} s -> {a.t_sim / cf:.1f} x; run file {size / 1e6:.1f} MB)")
    print(f"  machine load average (1 min)      : {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"  NUMBA_DISABLE_JIT=1, {a.t_nojit:g} s slice  : {w_nojit:7.2f} s wall -> {a.t_nojit / w_nojit:7.4f} x real time")
    print(f"  JIT speed-up over pure Python     : {(w_nojit / a.t_nojit) / (w / a.t_sim):7.0f} x")


if __name__ == "__main__":
    main()
