"""Solver speed: simulated seconds per wall second (central impact, 30 s, after JIT warm-up; medians of 3) for the
kernels alone and for the whole run with the run file; cold-start compile time; the same model with
NUMBA_DISABLE_JIT=1 on a 0.5 s slice (subprocess); the full expert run (first contact to hard dock) of each variant.
    python bench/solver_bench.py [--t-sim 30] [--t-nojit 0.5] [--no-expert] [--expert-only] [--reps 3] [--expert-reps 1]
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
EXPERT = ("expert_existing", "expert_modified_dampers", "expert_movable_limiter")


def solver_only(t_sim: float | None, cpu: list | None = None, scenario=SCEN, block: int = 1000,
                sim: list | None = None) -> float:
    """Wall seconds of the kernels alone (no run-file writing) for t_sim seconds of the scenario (None: its duration,
    or to hard dock); CPU seconds appended to `cpu`, simulated seconds to `sim`."""
    import numpy as np
    from solver.mechanisms.probe_cone import dynamics as D
    from solver.scenario import load_model
    from solver.mechanisms.probe_cone.simulate import kernel_args
    m = load_model(scenario)
    spo = int(round(m.output_step / m.step))
    n_total = int(round((m.duration if t_sim is None else t_sim) / m.output_step))
    n = min(block, n_total)
    s, Z = m.s0.copy(), m.Z0.copy()
    npair = len(m.cgeo.pair_names) + 1                  # library pairs + latch_neck
    bufs = (np.zeros(n), np.zeros((n, D.NCH)), np.zeros((n, 6, 3)), np.zeros((n, 6, 4)), np.zeros((n, npair), np.uint8),
            np.zeros((n, npair, 3)), np.zeros((n, npair, 3)), np.zeros((n, npair, 3)), np.zeros((n, npair)),
            np.zeros((n, npair)))
    scratch = (np.zeros(2), np.zeros(npair, np.int64), np.zeros((16384, 3)), np.zeros(1, np.int64))
    t, done, status = 0.0, 0, D.ST_OK
    t0, c0 = time.perf_counter(), time.process_time()
    while done < n_total and status == D.ST_OK:
        status, t, rows = D.run_block(s, Z, t, m.step, min(n, n_total - done), spo, m.P, m.LAT, m.TLS, m.TAX, m.TMA,
                                      m.TML, *kernel_args(m), *scratch, *bufs)
        done += rows
    wall = time.perf_counter() - t0
    assert status in (D.ST_OK, D.ST_DONE), f"{scenario}: solver status {status} at t = {t}"
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    if sim is not None:
        sim.append(t)
    return wall


def whole_run(scenario, out, t_end=None, cpu: list | None = None, output_step=None,
              solver_cpu: list | None = None) -> tuple[float, float]:
    """Wall seconds of `run_scenario` (kernels, run file, events) and the simulated end time; CPU seconds of the
    process appended to `cpu`, of the solver's thread alone (the rest is the writer thread's) to `solver_cpu`."""
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    run_scenario(scenario, out, t_end=t_end, output_step=output_step)
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    if solver_cpu is not None:
        solver_cpu.append(time.thread_time() - m0)
    with RunFile(out) as r:
        return wall, float(r.time[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-sim", type=float, default=30.0)
    ap.add_argument("--t-nojit", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the central-impact timings (median)")
    ap.add_argument("--no-expert", action="store_true", help="skip the full expert runs")
    ap.add_argument("--expert-only", action="store_true", help="only the full expert runs")
    ap.add_argument("--expert-reps", type=int, default=1, help="repetitions of each expert timing (median)")
    a = ap.parse_args(argv)
    if os.environ.get("_BENCH_NOJIT"):
        w = solver_only(a.t_nojit)
        print(f"{w:.6f}")
        return
    solver_only(0.01)                                   # warm-up (cache or compile)
    if not a.expert_only:
        central(a)
    if not a.no_expert:
        expert(a.expert_reps)
    print(f"  machine load average (1 min)      : {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


def central(a):
    """Cold start, kernels, whole run and pure Python on the central-impact case."""
    from solver.scenario import load_model
    # cold start: compile into an empty cache directory in a subprocess
    cache = tempfile.mkdtemp(prefix="dockmnemo_numba_")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    code = "import sys; sys.path.insert(0, %r); import bench.solver_bench as b; b.solver_only(0.01)" % str(ROOT)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)
    warm_start = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)

    cpu_k = []
    w = statistics.median(solver_only(a.t_sim, cpu_k) for _ in range(a.reps))
    walls, cpu_f = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.reps):
            walls.append(whole_run(SCEN, Path(d) / "ci.h5", a.t_sim, cpu_f)[0])
        size = (Path(d) / "ci.h5").stat().st_size
    w_file = statistics.median(walls)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", _BENCH_NOJIT="1")
    out = subprocess.run([sys.executable, str(Path(__file__)), "--t-nojit", str(a.t_nojit)], env=env, check=True,
                         capture_output=True, text=True, cwd=ROOT)
    w_nojit = float(out.stdout.strip().splitlines()[-1])
    print(f"central impact, {a.t_sim:g} s simulated, step {load_model(SCEN).step * 1e3:g} ms RK4 (4 contact-library calls per step), 1 kHz output,"
          f" medians of {a.reps}")
    print(f"  cold start (compile, empty cache) : {cold:7.1f} s   (start with warm cache: {warm_start:.1f} s)")
    ck, cf = statistics.median(cpu_k), statistics.median(cpu_f)
    print(f"  solver kernels, JIT               : {w:7.3f} s wall -> {a.t_sim / w:7.1f} x real time"
          f"   (CPU {ck:.3f} s -> {a.t_sim / ck:.1f} x)")
    print(f"  run_scenario incl. run-file write : {w_file:7.3f} s wall -> {a.t_sim / w_file:7.1f} x real time"
          f"   (CPU {cf:.3f} s -> {a.t_sim / cf:.1f} x; run file {size / 1e6:.1f} MB)")
    print(f"  NUMBA_DISABLE_JIT=1, {a.t_nojit:g} s slice  : {w_nojit:7.2f} s wall -> {a.t_nojit / w_nojit:7.4f} x real time")
    print(f"  JIT speed-up over pure Python     : {(w_nojit / a.t_nojit) / (w / a.t_sim):7.0f} x")


def expert(reps: int = 1):
    """The full expert run of each variant (to hard dock, or the scenario's duration): kernels alone and whole run
    (medians of `reps`; the run file is written by a writer thread, so its CPU time adds to the kernels')."""
    from solver.scenario import load_model
    print("expert runs, first contact to hard dock (or the scenario's duration), whole run incl. 1 kHz run file"
          f" and with --output-step 0.01 (100 Hz frames), medians of {reps}:")
    med = statistics.median
    with tempfile.TemporaryDirectory() as d:
        for name in EXPERT:
            scen = ROOT / "resources" / "scenarios" / f"{name}.toml"
            m = load_model(scen)
            cpu_k, sim, cpu_f, cpu_d, cpu_s = [], [], [], [], []
            wk = med(solver_only(None, cpu_k, scen, sim=sim) for _ in range(reps))
            walls = []
            for _ in range(reps):
                wf, t_end = whole_run(scen, Path(d) / f"{name}.h5", cpu=cpu_f, solver_cpu=cpu_s)
                walls.append(wf)
                size = (Path(d) / f"{name}.h5").stat().st_size
                (Path(d) / f"{name}.h5").unlink()
            wf = med(walls)
            wd, _ = whole_run(scen, Path(d) / f"{name}.h5", cpu=cpu_d, output_step=0.01)
            size_d = (Path(d) / f"{name}.h5").stat().st_size
            (Path(d) / f"{name}.h5").unlink()
            ck, cf, cs = med(cpu_k), med(cpu_f), med(cpu_s)
            print(f"  {name:24s}: {t_end:6.1f} s simulated (step {m.step * 1e3:g} ms) | kernels {wk:6.2f} s wall"
                  f" (CPU {ck:6.2f} s, {t_end / ck:5.1f} x) | whole run {wf:6.2f} s wall = {wf / wk:4.2f} x kernels"
                  f" (CPU {cf:6.2f} s: solver thread {cs:5.2f} s = {cs / ck:4.2f} x kernels, writer {cf - cs:5.2f} s;"
                  f" {size / 1e6:.0f} MB) | at 10 ms frames"
                  f" {wd:6.2f} s wall (CPU {cpu_d[0]:6.2f} s, {t_end / cpu_d[0]:5.1f} x; {size_d / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
