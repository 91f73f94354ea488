"""Campaign benchmark (issue 10): runs/s on 1 and 2 local Dask workers in the same session (scaling efficiency),
the capture-success fraction of the nominal and expert envelopes, the JIT cache per worker, a 1000-run campaign.

    python bench/campaign_bench.py                          # scaling (24 runs each) + both envelopes (200 each)
    python bench/campaign_bench.py --count 1000             # ... and a 1000-run campaign on 2 workers
    python bench/campaign_bench.py --jit-demo               # fresh numba cache: each worker compiles once
    python bench/campaign_bench.py --skip-envelopes --scaling-count 40 --repeats 3

Campaign directories are kept under --out (default bench/_campaigns); re-running resumes the envelope and
1000-run campaigns (their rows are not redone). The machine load is printed: timings are only comparable
within one session.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver.campaign import local_client, read_summary, run_campaign  # noqa: E402

CAMPAIGNS = ROOT / "resources" / "campaigns"


def variant_file(src: Path, out: Path, count: int | None = None, keep: str | None = None,
                 name: str | None = None) -> Path:
    """A copy of a campaign file with count / keep / name replaced (base scenario made absolute)."""
    text = src.read_text()
    if count is not None:
        text = re.sub(r"(?m)^count = \d+", f"count = {count}", text)
    if keep is not None:
        text = re.sub(r'(?m)^keep = "[a-z_]+"', f'keep = "{keep}"', text)
    if name is not None:
        text = re.sub(r'(?m)^name = "[^"]+"', f'name = "{name}"', text, count=1)
    base = re.search(r'(?m)^base_scenario = "([^"]+)"', text).group(1)
    if not (src.parent / base).is_file():
        base = str((ROOT / "resources" / "scenarios" / base).resolve())
    else:
        base = str((src.parent / base).resolve())
    text = re.sub(r'(?m)^base_scenario = "[^"]+"', f'base_scenario = "{base}"', text)
    crit = re.search(r'(?m)^criteria = "([^"]+)"', text)
    if crit and (src.parent / crit.group(1)).is_file():
        text = text.replace(crit.group(0), f'criteria = "{(src.parent / crit.group(1)).resolve()}"')
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_file() or out.read_text() != text:
        out.write_text(text)
    return out


def warm(client):
    """Load the solver and its JIT cache in every worker (a 10 ms run), so the timed tasks measure runs only."""
    def _warm():
        from solver.simulate import run_scenario
        with tempfile.TemporaryDirectory() as td:
            run_scenario(ROOT / "resources" / "scenarios" / "nominal_existing.toml", Path(td) / "w.h5", t_end=0.01)
        return os.getpid()
    return client.run(_warm)


def load() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"


def timed_campaign(cfile: Path, workers: int, tmp: Path) -> dict:
    """Run cfile into a fresh directory on a warmed LocalCluster of `workers`; runs/s of the campaign itself."""
    d = tmp / f"{cfile.stem}_{workers}w_{time.time_ns()}"
    client = local_client(workers)
    try:
        warm(client)
        l0 = load()
        cpu0 = sum(client.run(time.process_time).values())
        res = run_campaign(cfile, d, client=client)
        cpu = sum(client.run(time.process_time).values()) - cpu0
    finally:
        client.close()
        client.cluster.close()
    s = read_summary(d)
    shutil.rmtree(d, ignore_errors=True)
    return {"workers": workers, "runs": res.n_run, "wall_s": res.wall_time, "runs_per_s": res.n_run / res.wall_time,
            "worker_cpu_s": cpu, "cpu_per_run_s": cpu / max(res.n_run, 1),
            "worker_utilisation": cpu / (res.wall_time * workers), "mean_run_wall_s": statistics.mean(s.column("wall_time")), "load_before": l0,
            "load_after": load(), "ok": s.status.count("ok")}


def envelope(cfile: Path, d: Path, workers: int) -> dict:
    """Run (or resume) an envelope campaign and return its outcome fractions."""
    t0 = time.perf_counter()
    res = run_campaign(cfile, d, workers=workers, progress=_bar(cfile.stem))
    s = read_summary(d)
    n = len(s)
    F = s.column("peak_base_force")
    out = {"campaign": s.name, "runs": n, "ok": s.status.count("ok"), "diverged": s.status.count("diverged"),
           "error": s.status.count("error"), "captured": int(s.captured.sum()), "passed": int(s.passed.sum()),
           "captured_fraction": float(s.captured.mean()), "passed_fraction": float(s.passed.mean()),
           "peak_base_force_median_N": float(statistics.median([f for f in F if f == f] or [float("nan")])),
           "peak_base_force_max_N": float(max([f for f in F if f == f] or [float("nan")])),
           "wall_s_this_call": time.perf_counter() - t0, "runs_this_call": res.n_run,
           "runs_per_s_this_call": res.n_run / res.wall_time if res.n_run else float("nan"),
           "failures": [(int(i), st, m) for i, st, m in zip(s.index, s.status, s.message) if st != "ok"][:20],
           "jit": jit_per_worker(s), "load_after": load()}
    return out


def jit_per_worker(s) -> dict:
    """Per worker: runs, and the JIT compilations in its runs (the first run compiles or loads the cache)."""
    out = {}
    for w, j in zip(s.worker, s.jit_compiled):
        if not w:
            continue
        r = out.setdefault(w, {"runs": 0, "runs_that_compiled": 0, "functions_compiled": 0})
        r["runs"] += 1
        r["runs_that_compiled"] += int(j > 0)
        r["functions_compiled"] += int(j)
    return out


def _bar(label):
    from app.progress import TerminalProgress
    st = {}

    def progress(done, total):
        if "b" not in st:
            st["b"] = TerminalProgress(label, total, " runs")
        st["b"].update(done, force=done == total)
    return progress


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "_campaigns")
    ap.add_argument("--scaling-count", type=int, default=24, help="runs per scaling measurement (0: skip)")
    ap.add_argument("--repeats", type=int, default=1, help="scaling measurements per worker count (medians)")
    ap.add_argument("--envelope-count", type=int, default=None, help="runs per envelope (default: the files' 200)")
    ap.add_argument("--skip-envelopes", action="store_true")
    ap.add_argument("--count", type=int, default=0, help="also run a campaign of this many runs on 2 workers")
    ap.add_argument("--jit-demo", action="store_true", help="run 6 runs on 2 workers with an empty numba cache")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    report = {"machine": load()}
    print(report["machine"], flush=True)
    nominal = CAMPAIGNS / "nominal_envelope.toml"
    if a.jit_demo:
        cache = Path(tempfile.mkdtemp(prefix="numba-cold-"))
        old = os.environ.get("NUMBA_CACHE_DIR")
        os.environ["NUMBA_CACHE_DIR"] = str(cache)   # inherited by the worker processes started next
        try:
            f = variant_file(nominal, a.out / "jit_demo.toml", count=6, keep="summary", name="jit_demo")
            d = a.out / f"jit_demo_{time.time_ns()}"
            t0 = time.perf_counter()
            run_campaign(f, d, workers=2)
            s = read_summary(d)
            report["jit_demo"] = {"wall_s": time.perf_counter() - t0, "cache_dir": str(cache),
                                  "rows": [(int(i), w, int(j), float(t)) for i, w, j, t in
                                           zip(s.index, s.worker, s.jit_compiled, s.column("wall_time"))],
                                  "per_worker": jit_per_worker(s)}
            shutil.rmtree(d, ignore_errors=True)
        finally:
            if old is None:
                os.environ.pop("NUMBA_CACHE_DIR", None)
            else:
                os.environ["NUMBA_CACHE_DIR"] = old
            shutil.rmtree(cache, ignore_errors=True)
        print(json.dumps(report["jit_demo"], indent=1), flush=True)
    if a.scaling_count:
        f = variant_file(nominal, a.out / "scaling.toml", count=a.scaling_count, keep="summary", name="scaling")
        res = {1: [], 2: []}
        with tempfile.TemporaryDirectory(dir=a.out) as td:
            for _ in range(a.repeats):
                for w in (1, 2):
                    r = timed_campaign(f, w, Path(td))
                    res[w].append(r)
                    print(f"{w} worker(s): {r['runs']} runs in {r['wall_s']:.1f} s = {r['runs_per_s']:.3f} runs/s "
                          f"(worker CPU {r['cpu_per_run_s']:.2f} s per run, workers busy "
                          f"{100 * r['worker_utilisation']:.0f} % of the wall time; {r['load_before']})", flush=True)
        m1 = statistics.median(r["runs_per_s"] for r in res[1])
        m2 = statistics.median(r["runs_per_s"] for r in res[2])
        c1 = statistics.median(r["cpu_per_run_s"] for r in res[1])
        c2 = statistics.median(r["cpu_per_run_s"] for r in res[2])
        report["scaling"] = {"runs": a.scaling_count, "repeats": a.repeats, "runs_per_s_1": m1, "runs_per_s_2": m2,
                             "speedup": m2 / m1, "efficiency": m2 / (2 * m1), "cpu_per_run_1": c1,
                             "cpu_per_run_2": c2, "detail": res}
        print(f"scaling: 1 worker {m1:.3f} runs/s, 2 workers {m2:.3f} runs/s: speed-up {m2 / m1:.2f}, "
              f"efficiency {100 * m2 / (2 * m1):.0f} % (medians); worker CPU per run {c1:.2f} s with 1, {c2:.2f} s "
              f"with 2 workers (on a loaded machine only this ratio is meaningful)", flush=True)
    if not a.skip_envelopes:
        report["envelopes"] = {}
        for name in ("nominal_envelope", "expert_envelope"):
            f = variant_file(CAMPAIGNS / f"{name}.toml", a.out / f"{name}.toml", count=a.envelope_count)
            r = envelope(f, a.out / name, 2)
            report["envelopes"][name] = r
            print(f"{name}: {r['runs']} runs; captured {r['captured']} ({100 * r['captured_fraction']:.1f} %), "
                  f"verdict PASS {r['passed']} ({100 * r['passed_fraction']:.1f} %); ok {r['ok']}, diverged "
                  f"{r['diverged']}, error {r['error']}; peak |F| median {r['peak_base_force_median_N']:.0f} N, max "
                  f"{r['peak_base_force_max_N']:.0f} N", flush=True)
    if a.count:
        f = variant_file(CAMPAIGNS / "random_batch_200.toml", a.out / f"random_{a.count}.toml", count=a.count,
                         keep="summary", name=f"random_{a.count}")
        r = envelope(f, a.out / f"random_{a.count}", 2)
        report["large"] = r
        print(f"random_{a.count}: {r['runs']} runs finished ({r['runs_this_call']} in this call, "
              f"{r['wall_s_this_call']:.0f} s, {r['runs_per_s_this_call']:.3f} runs/s); captured "
              f"{100 * r['captured_fraction']:.1f} %, PASS {100 * r['passed_fraction']:.1f} %, ok {r['ok']}, "
              f"diverged {r['diverged']}, error {r['error']}", flush=True)
    report["machine_after"] = load()
    (a.out / "campaign_bench.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"wrote {a.out / 'campaign_bench.json'}")


if __name__ == "__main__":
    main()
