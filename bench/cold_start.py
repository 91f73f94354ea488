"""First run from an empty numba cache: wall and CPU seconds to the first frame written.

    python bench/cold_start.py [--no-campaign] [--t-end 0.5]

1. `dockmnemo run central_impact_20t.toml --t-end 0.5` with NUMBA_CACHE_DIR a fresh temporary directory: wall
   seconds from the command to its first frame written (the first PROGRESS line: the block's frames are in the
   file then) and to its exit, the child's CPU seconds (user + sys); then the same again on that (now warm) cache.
2. A 2-worker local Dask campaign of 4 runs (0.5 s each) with `cache_dir` a fresh directory: wall seconds to the
   first result and to the last, and the units each worker compiled.
The machine is shared: CPU seconds say what the work costs, wall seconds what a user waits.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
CAMPAIGN = """\
name = "cold_start"
base_scenario = "{base}"
mechanism = "existing"
t_end = {t_end}
sampling = "grid"
count = 4
keep = "summary"

[[parameter]]
name = "closing_speed"
key = "initial.closing_speed"
values = [0.1, 0.12, 0.14, 0.16]
"""


def run_command(cache: Path, out: Path, t_end: float) -> dict:
    """Time `dockmnemo run` (as `python -m app run ... --progress-lines`) with NUMBA_CACHE_DIR=cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "app", "run", str(SCEN), "--t-end", str(t_end), "-o", str(out),
                          "--progress-lines"], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    first = None
    compiling = []
    for line in p.stdout:
        if line.startswith("COMPILING"):
            compiling.append(line.split()[1:])
        if line.startswith("PROGRESS") and first is None:
            first = time.perf_counter() - t0
    code = p.wait()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"first_frame_s": first, "exit_s": wall, "cpu_s": cpu, "exit_code": code,
            "compiled_units": len(compiling), "of": compiling[-1][1] if compiling else "0"}


def campaign(cache: Path, work: Path, t_end: float) -> dict:
    """A 2-worker LocalCluster campaign of 4 runs with the workers' numba cache in `cache` (fresh)."""
    sys.path.insert(0, str(ROOT))
    from solver.campaign import read_summary, run_campaign
    f = work / "cold_start.toml"
    f.write_text(CAMPAIGN.format(base=SCEN.as_posix(), t_end=t_end), encoding="utf-8")
    times = []
    t0 = time.perf_counter()

    def progress(done, total):
        if done:
            times.append(time.perf_counter() - t0)
    run_campaign(f, work / "dir", workers=2, progress=progress, cache_dir=cache)
    wall = time.perf_counter() - t0
    s = read_summary(work / "dir")
    rows = [(int(i), str(w), int(j)) for i, w, j in zip(s.index, s.worker, s.jit_compiled)]
    return {"first_result_s": times[0] if times else None, "all_s": wall, "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--t-end", type=float, default=0.5)
    ap.add_argument("--no-campaign", action="store_true")
    a = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="dockmnemo-cold-") as td:
        td = Path(td)
        cache = td / "numba_cache"
        for label in ("cold", "warm"):
            r = run_command(cache, td / f"{label}.h5", a.t_end)
            print(f"run {label}: first frame {r['first_frame_s']:.1f} s, exit {r['exit_s']:.1f} s wall; "
                  f"CPU {r['cpu_s']:.1f} s; compiled {r['compiled_units']} of {r['of']} units; "
                  f"exit code {r['exit_code']}", flush=True)
        if not a.no_campaign:
            (td / "camp").mkdir()
            r = campaign(td / "campaign_cache", td / "camp", a.t_end)
            print(f"campaign 2 workers x 4 runs, cold: first result {r['first_result_s']:.1f} s, all {r['all_s']:.1f} s "
                  f"wall; (run, worker, functions compiled): {r['rows']}", flush=True)


if __name__ == "__main__":
    main()
