"""The IDSS-200 subset that holds every loser, run with mechanism keys changed (variants of soft capture and petals).
    nice -n 19 python bench/peripheral_subset.py run OUT.json [--set soft_capture.active=true ...] [--workers 1]
    python bench/peripheral_subset.py table A.json B.json ... [--ref passive.json]
The subset, chosen by rule before any tuning (issue 33): every run of idss_envelope_200 not PASS in either the passive
campaign (/work/camp6/idss_after) or the soft-capture-on one (/work/camp8/soft_on), then every 10th run (in index
order, from the first) PASS in both: 56 + 15 = 71 runs. A run not captured by the criteria's capture time ends there
(its verdict is settled: solver.campaign `end_uncaptured`).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CAMPAIGN = ROOT / "resources/peripheral/campaigns/idss_envelope_200.toml"
MECHANISM = ROOT / "resources/peripheral/peripheral_idss.toml"

# not PASS in camp6 (passive legs) or camp8 (soft capture on): 38 + the 18 PASS -> FAIL
LOSERS = [1, 4, 5, 7, 9, 11, 15, 17, 30, 36, 38, 42, 45, 50, 53, 57, 60, 61, 77, 89, 90, 96, 99, 100, 109, 110, 114,
          118, 119, 121, 123, 128, 133, 136, 138, 140, 149, 152, 155, 158, 159, 162, 165, 167, 170, 172, 173, 176, 177,
          180, 183, 187, 189, 190, 194, 195]
# every 10th of the 144 runs PASS in both
PASSERS = [0, 18, 28, 41, 55, 68, 79, 91, 104, 117, 132, 146, 161, 179, 196]
SUBSET = sorted(LOSERS + PASSERS)


def subset_by_rule(passive_dir, soft_dir) -> list[int]:
    """The rule above from two campaign directories' summaries (checks the lists written here)."""
    import h5py
    import numpy as np
    p = []
    for d in (passive_dir, soft_dir):
        with h5py.File(Path(d) / "summary.h5", "r") as S:
            p.append(S["passed"][:].astype(bool))
    lose = np.where(~p[0] | ~p[1])[0]
    both = np.where(p[0] & p[1])[0]
    return sorted(int(i) for i in np.concatenate([lose, both[::10]]))


def variant_text(sets: list[str]) -> str:
    """The bundled mechanism TOML with `section.key=value` set (values in TOML syntax; the loader checks the keys)."""
    from solver.campaign import dump_toml
    d = tomllib.loads(MECHANISM.read_text(encoding="utf-8"))
    for kv in sets:
        key, val = kv.split("=", 1)
        *sec, name = key.split(".")
        t = d
        for s in sec:
            t = t[s]
        t[name] = tomllib.loads(f"v = {val}")["v"]
    return dump_toml(d)


def _one(args):
    task, = args
    from solver.campaign import run_task
    t0 = time.process_time()
    row = run_task(task)
    o = row["outputs"]
    return {"index": row["index"], "status": row["status"], "captured": bool(row["captured"]),
            "passed": bool(row["passed"]), "verdict": row["verdict"] or row["message"],
            "t_capture": o.get("t_capture"), "t_final": o.get("t_final"), "peak_iface_F": o.get("peak_iface_F"),
            "cpu": time.process_time() - t0}


def run(out: Path, sets: list[str], workers: int, runs: list[int]):
    from solver.campaign import dump_toml, load_campaign
    c = load_campaign(CAMPAIGN)
    with tempfile.TemporaryDirectory(prefix="periph-subset-") as td:
        mech = Path(td) / "peripheral_variant.toml"
        mech.write_text(variant_text(sets), encoding="utf-8")
        tasks = []
        for i in runs:
            sc = c.scenario(i)
            sc["mechanism"] = str(mech)
            tasks.append(({"index": i, "scenario_text": dump_toml(sc), "t_end": c.t_end, "criteria": c.criteria,
                           "keep": "summary", "extreme_fraction": c.extreme_fraction, "cache_dir": None,
                           "end_uncaptured_at": c.criteria.by_time},))
        rows = []
        t0 = time.perf_counter()
        with ProcessPoolExecutor(workers) as ex:
            for r in ex.map(_one, tasks):
                rows.append(r)
                print(f"run {r['index']:3d}: {'captured' if r['captured'] else 'not captured'}, "
                      f"{r['verdict'][:100]} ({r['cpu']:.1f} CPU-s)", flush=True)
    res = {"sets": sets, "runs": rows, "wall": time.perf_counter() - t0}
    out.write_text(json.dumps(res, indent=1), encoding="utf-8")
    print(summary_line(res, None))


def summary_line(res, ref) -> str:
    rows = {r["index"]: r for r in res["runs"]}
    cap = sum(r["captured"] for r in rows.values())
    ok = sum(r["passed"] for r in rows.values())
    s = f"{' '.join(res['sets']) or 'bundled'}: {len(rows)} runs, captured {cap}, PASS {ok}"
    if ref is not None:
        rr = {r["index"]: r for r in ref["runs"]}
        pf = [i for i in rows if i in rr and rr[i]["passed"] and not rows[i]["passed"]]
        fp = [i for i in rows if i in rr and not rr[i]["passed"] and rows[i]["passed"]]
        s += f", FAIL -> PASS {len(fp)}, PASS -> FAIL {len(pf)} ({' '.join(map(str, pf))})"
    return s


def table(files: list[Path], ref_file: Path | None):
    ref = json.loads(ref_file.read_text()) if ref_file else None
    print("| variant | runs | captured | PASS | vs the reference: FAIL -> PASS | PASS -> FAIL (runs) | CPU-s |")
    print("|---|---|---|---|---|---|---|")
    for f in files:
        res = json.loads(f.read_text())
        rows = {r["index"]: r for r in res["runs"]}
        cap = sum(r["captured"] for r in rows.values())
        ok = sum(r["passed"] for r in rows.values())
        fp = pf = "—"
        if ref is not None:
            rr = {r["index"]: r for r in ref["runs"]}
            pfl = [i for i in rows if i in rr and rr[i]["passed"] and not rows[i]["passed"]]
            fp = str(sum(1 for i in rows if i in rr and not rr[i]["passed"] and rows[i]["passed"]))
            pf = f"{len(pfl)} ({' '.join(map(str, pfl))})" if pfl else "0"
        cpu = sum(r["cpu"] for r in rows.values())
        print(f"| {f.stem}: {' '.join(res['sets']) or 'bundled'} | {len(rows)} | {cap} | {ok} | {fp} | {pf} | "
              f"{cpu:.0f} |")


def main(argv):
    if argv[0] == "run":
        sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
        workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 1
        runs = [int(x) for x in argv[argv.index("--runs") + 1].split(",")] if "--runs" in argv else SUBSET
        run(Path(argv[1]), sets, workers, runs)
    elif argv[0] == "table":
        ref = Path(argv[argv.index("--ref") + 1]) if "--ref" in argv else None
        files = [Path(a) for i, a in enumerate(argv[1:], 1) if not a.startswith("--") and argv[i - 1] != "--ref"]
        table(files, ref)
    elif argv[0] == "check":
        got = subset_by_rule("/work/camp6/idss_after", "/work/camp8/soft_on")
        print("rule gives the written subset" if got == SUBSET else f"rule gives {got}")


if __name__ == "__main__":
    main(sys.argv[1:])
