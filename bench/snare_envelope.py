"""The snare's capture envelope on Dask: the rig case with the rod's radial offset up to the class's +-100 mm capture
tolerance and the target's pitch/yaw up to 10.5 deg, roll +-12 deg (Liu et al. 2011, J. Cent. South Univ. Technol.
18:600), Latin hypercube; each run through solver.simulate.run_scenario on a Dask worker, judged by the snare's
criteria. The same envelope runs through `dockmnemo campaign resources/snare/campaigns/envelope.toml` (schema).
Usage: python -m bench.snare_envelope [COUNT] [WORKERS]"""
from __future__ import annotations

import math
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from solver.mechanisms.snare import RESOURCES


def one(args):
    """Run one sample; returns its row (inputs, capture time, final offset, peak sensor force, verdict)."""
    i, radial, angle, pitch, yaw, roll, d = args
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    from solver.verdict import evaluate
    text = (RESOURCES / "scenarios" / "suspension_rig.toml").read_text()
    text = text.replace('mechanism = "../snare.toml"', 'mechanism = "snare.toml"')
    y, z = radial * math.cos(math.radians(angle)), radial * math.sin(math.radians(angle))
    text = re.sub(r"position_error = \[.*?\]", f"position_error = [0.2369, {y}, {z}]", text)
    text = re.sub(r"quaternion = \[.*?\]", f"euler_deg = [{roll}, {pitch}, {yaw}]", text)
    sp = Path(d) / f"run_{i}.toml"
    sp.write_text(text)
    try:
        out = run_scenario(sp, Path(d) / f"run_{i}.h5")
    except Exception as exc:                     # a rod starting through a cable, a divergence: its row says which
        return (i, radial, angle, pitch, yaw, roll, math.nan, math.nan, math.nan, f"not run: {str(exc)[-90:]}")
    with RunFile(out) as r:
        v = evaluate(r)
        F = max(np.abs(r.channel(n)).max() for n in ("Fx", "Fy", "Fz"))
        return (i, radial, angle, pitch, yaw, roll, r.meta.t_capture, float(r.channel("radial_offset")[-1]), F,
                "PASS" if v.passed else "FAIL")


def lhs(n, rng):
    """n Latin-hypercube samples of 5 columns in [0, 1)."""
    return np.stack([(rng.permutation(n) + rng.random(n)) / n for _ in range(5)], 1)


def main(count=8, workers=1):
    from dask.distributed import Client, LocalCluster
    d = Path(tempfile.mkdtemp(prefix="snare_envelope_"))
    shutil.copy(RESOURCES / "snare.toml", d / "snare.toml")
    u = lhs(count, np.random.default_rng(35))
    samples = [(i, 0.10 * u[i, 0], 360 * u[i, 1], -10.5 + 21 * u[i, 2], -10.5 + 21 * u[i, 3], -12 + 24 * u[i, 4],
                str(d)) for i in range(count)]
    t0 = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True) as cl, Client(cl) as c:
        rows = c.gather(c.map(one, samples))
    print(f"{count} runs on {workers} Dask worker(s) in {time.perf_counter() - t0:.0f} s wall")
    print(" run  radial_m  angle_deg  pitch  yaw    roll   t_capture_s  final_offset_mm  peak_F_N  verdict")
    for r in sorted(rows):
        print(f"{r[0]:4d}  {r[1]:.3f}     {r[2]:6.1f}    {r[3]:5.1f}  {r[4]:5.1f}  {r[5]:5.1f}  {r[6]:10.2f}  "
              f"{1000 * r[7]:14.1f}  {r[8]:8.1f}  {r[9]}")
    print(f"captured and PASS: {sum(r[9] == 'PASS' for r in rows)} of {count}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
