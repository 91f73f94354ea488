"""Synthetic truths for `dockmnemo calibrate`: the central impact run with keys scaled, written as a stand record (MATLAB
v5, kN, kN*m, ms, sensor turned 90 deg about x and offset 0.25 m, 500 Hz, 2 % noise, shifted 0.137 s;
tests/calibrate_truth.py), fitted from the nominal values by the command line of a checkout (this one, or another
with --code, e.g. the old main for a before/after table). One markdown row per fitted key.

Usage: python bench/calibrate_truths.py [CASE ...] [--code DIR] [--workers N] [--work DIR]
       python bench/calibrate_truths.py coverage [--seeds 20] [--case 2s_brake_x1.25]   (one case on 20 noise seeds:
                                                                   is the truth inside the printed interval?)"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.calibrate_truth import CENTRAL, truth_scenario, write_map, write_record  # noqa: E402

BRAKE, SPRING, MASS = "axial_damper.friction_brake_torque_in", "axial_damper.spring_stiffness", "active_craft.mass"
DAMPING = "axial_damper.structural_damping"
MAGNETIC = "axial_damper.magnetic_brake_torque[1]"   # the eddy-current brake's torque at 1000 rpm: its damping slope
CASES = {   # name: (record length s, or None: first contact to hard dock with the stand's fast drive; {key: truth
            # factor}; keys fitted)
    "2s_brake_x1.25": (2.0, {BRAKE: 1.25}, [BRAKE]),
    "4s_brake_x1.25": (4.0, {BRAKE: 1.25}, [BRAKE]),
    "6s_brake_x0.8": (6.0, {BRAKE: 0.8}, [BRAKE]),
    "12s_brake_x0.8": (12.0, {BRAKE: 0.8}, [BRAKE]),
    "12s_spring_x1.2": (12.0, {SPRING: 1.2}, [SPRING]),
    "12s_mass_x0.8": (12.0, {MASS: 0.8}, [MASS]),
    "whole_brake_x0.8": (None, {BRAKE: 0.8}, [BRAKE]),
    "4s_magnetic_x0.8": (4.0, {MAGNETIC: 0.8}, [MAGNETIC]),
    "4s_spring_x0.8": (4.0, {SPRING: 0.8}, [SPRING]),
    "4s_mass_x1.2": (4.0, {MASS: 1.2}, [MASS]),
    "12s_magnetic_x1.3": (12.0, {MAGNETIC: 1.3}, [MAGNETIC]),
    "12s_magnetic_x0.8": (12.0, {MAGNETIC: 0.8}, [MAGNETIC]),
    "12s_damping_x1.3": (12.0, {DAMPING: 1.3}, [DAMPING]),
    "whole_magnetic_x1.3": (None, {MAGNETIC: 1.3}, [MAGNETIC]),
    "whole_damping_x1.3": (None, {DAMPING: 1.3}, [DAMPING]),
    "whole_mass_x1.2": (None, {MASS: 1.2}, [MASS]),
    "whole_spring_x0.8": (None, {SPRING: 0.8}, [SPRING]),
    "12s_3keys_magnetic": (12.0, {BRAKE: 1.2, SPRING: 0.85, MAGNETIC: 1.3}, [BRAKE, SPRING, MAGNETIC]),
    "whole_3keys": (None, {BRAKE: 1.2, SPRING: 0.85, MASS: 1.15}, [BRAKE, SPRING, MASS]),
    "whole_3keys_transmission": (None, {BRAKE: 1.2, "axial_damper.transmission_stiffness": 0.85, MASS: 1.15},
                                 [BRAKE, "axial_damper.transmission_stiffness", MASS]),   # the axial chain's stiffness
    "whole_3keys_transmission_other_side": (None, {BRAKE: 0.8, "axial_damper.transmission_stiffness": 1.2,
                                                   MASS: 0.85}, [BRAKE, "axial_damper.transmission_stiffness", MASS]),
    "whole_3keys_other_side": (None, {BRAKE: 0.8, SPRING: 1.2, MASS: 0.85}, [BRAKE, SPRING, MASS]),   # each key
                                                                            # started from the other side of its truth
    "whole_brake_x1.25": (None, {BRAKE: 1.25}, [BRAKE]),
    "whole_mass_x0.8": (None, {MASS: 0.8}, [MASS]),
    "whole_3keys_magnetic": (None, {BRAKE: 1.2, SPRING: 0.85, MAGNETIC: 1.3}, [BRAKE, SPRING, MAGNETIC]),
    "12s_3keys": (12.0, {BRAKE: 1.2, SPRING: 0.85, MASS: 1.15}, [BRAKE, SPRING, MASS]),
    "4s_damping_x1.3": (4.0, {DAMPING: 1.3}, [DAMPING]),
    "4s_magnetic_x1.3": (4.0, {MAGNETIC: 1.3}, [MAGNETIC]),
    "4s_3keys_damping": (4.0, {BRAKE: 1.2, SPRING: 0.85, MAGNETIC: 1.3}, [BRAKE, SPRING, MAGNETIC]),
    "4s_two_masses": (4.0, {"probe.mass": 1.2}, ["probe.mass", "housing.mass"]),   # they trade off exactly
}
WHOLE = 60.0      # s: hard dock of the central impact with the stand's fast drive (FAST_DRIVE) is at about 40 s
FAST_DRIVE = "\n[overrides]   # the stand's fast drive: retraction 2 s after capture at 10 mm/s (hard dock ~40 s)\n" \
             "drive_delay = 2.0\nretraction_speed = 0.01\n"   # (the scenario's own: 40 s, then 1.3 mm/s: ~385 s)


def base(work: Path, name: str) -> Path:
    """The scenario fitted (and scaled for the truth): the central impact, with the fast drive for a whole run."""
    if CASES[name][0] is not None:
        return CENTRAL
    p = Path(work) / "central_impact_20t_fast_drive.toml"
    p.write_text(CENTRAL.read_text() + FAST_DRIVE)
    return p


def record(work: Path, name: str, seed: int = 1) -> tuple[Path, Path]:
    """The case's truth run (made once) and its record for a noise seed; (record, map)."""
    from solver.simulate import run_scenario
    t_end, factors, _ = CASES[name]
    d = work / name
    d.mkdir(parents=True, exist_ok=True)
    if not (d / "truth.h5").is_file():
        run_scenario(truth_scenario(d, factors, base(work, name)), d / "truth.h5", t_end=t_end or WHOLE,
                     output_step=0.001)
    return write_record(d / "truth.h5", d / f"record_{seed}.mat", seed=seed), write_map(d / "map.toml")


def fit(code: Path, name: str, rec: Path, mp: Path, workers: int, out: Path, extra=(), scenario=CENTRAL) -> dict:
    """Run `dockmnemo calibrate` of the checkout `code` on a record; exit code, wall time and the fitted lines."""
    keys = CASES[name][2]
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "app", "calibrate", str(scenario), str(rec), "--map", str(mp), "--fit",
                        ",".join(keys), "--workers", str(workers), "-o", str(out), *extra], cwd=code,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    fitted = {}
    for k in keys:
        m = re.search(rf"^{re.escape(k)} = (\S+) ± (\S+) ", p.stdout, re.M)
        fitted[k] = (float(m.group(1)), float(m.group(2)) if m.group(2) != "n/a" else float("nan")) if m else None
    tail = [ln for ln in (p.stdout + p.stderr).splitlines() if re.search(r"runs in|error|not converged", ln)]
    tail += [re.sub(r" of the record \(([\d.]+ s)\).*", r" (\1)", ln) for ln in p.stdout.splitlines()
             if ln.startswith("left out")]
    return {"code": p.returncode, "wall": wall, "fitted": fitted, "said": " / ".join(tail)[-400:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=[c for c in CASES])
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/calibrate_truths"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--case", default="2s_brake_x1.25", help="the coverage's case")
    ap.add_argument("--first-seed", type=int, default=1, help="the coverage's first noise seed")
    ap.add_argument("--max-runs", type=int, default=None, help="the fits' run budget (default: calibrate's)")
    a = ap.parse_args()
    from solver.measured.calibrate import fit_bounds
    print(f"code {a.code}; cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}", flush=True)
    if a.cases == ["coverage"]:     # in this process on one warmed cluster; a candidate run made once serves all seeds
        from solver.campaign import local_client
        from solver.measured.calibrate import calibrate
        name, inside, shared = a.case, 0, {}
        client = local_client(a.workers)
        truth = fit_bounds(CENTRAL, BRAKE).value * CASES[name][1][BRAKE]
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            rec, mp = record(a.work, name, seed)
            t0 = time.perf_counter()
            cal = calibrate(CENTRAL, rec, mp, [BRAKE], client=client, run_cache=shared)
            x, s = cal.x[0], cal.sigma[0]
            inside += abs(x - truth) <= s
            print(f"seed {seed:2d}: {x:.5f} ± {s:.2g} (truth {truth:.5f}, error {100 * (x / truth - 1):+.3f} %, "
                  f"{abs(x - truth) / s:.2f} half-widths) {cal.status}, {cal.runs} new runs, "
                  f"{time.perf_counter() - t0:.0f} s; inside {inside} of {seed - a.first_seed + 1}; load {os.getloadavg()[0]:.1f}",
                  flush=True)
        client.close()
        return
    print("| case | key | truth | fitted | error | printed ± | exit | wall | what it said |\n|---|---|---|---|---|---|---|---|---|")
    for name in a.cases:
        rec, mp = record(a.work, name)
        r = fit(a.code, name, rec, mp, a.workers, a.work / name / f"fitted_{a.code.name}.toml",
                extra=("--max-runs", str(a.max_runs)) if a.max_runs else (), scenario=base(a.work, name))
        for k in CASES[name][2]:
            truth = fit_bounds(CENTRAL, k).value * CASES[name][1].get(k, 1.0)
            got = r["fitted"][k]
            cells = (f"{got[0]:.6g} | {100 * (got[0] / truth - 1):+.2f} % | {got[1]:.2g} ({100 * got[1] / truth:.2g} %)"
                     if got else "- | - | -")
            print(f"| {name} | {k} | {truth:.6g} | {cells} | {r['code']} | {r['wall']:.0f} s | {r['said']} |",
                  flush=True)
        print(f"<!-- load average {os.getloadavg()[0]:.1f} -->", flush=True)


if __name__ == "__main__":
    main()
