"""Simulated seconds per wall second of both types' central impacts (in-process, warm kernels, median of 3): run it
from two checkouts in turn to compare them side by side.
    cd CHECKOUT && python bench/speed_side_by_side.py
"""
import sys, time, statistics, tempfile
sys.path.insert(0, '.')
from solver.simulate import run_scenario
from pathlib import Path
out = {}
for name, sc, T in (("probe-cone central_impact_20t", "resources/scenarios/central_impact_20t.toml", 8.0),
                    ("peripheral central_impact_10t", "resources/peripheral/scenarios/central_impact_10t.toml", 3.0)):
    run_scenario(sc, "/tmp/pv/kt_warm.h5", t_end=0.05)
    ts = []
    for _ in range(3):
        t0 = time.perf_counter(); run_scenario(sc, "/tmp/pv/kt.h5", t_end=T); ts.append(time.perf_counter() - t0)
    print(f"{name}: {T / statistics.median(ts):.2f} simulated s per wall s (median of 3: {[round(x, 2) for x in ts]})")
