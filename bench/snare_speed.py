"""CPU time of the snare's two cases (median of N runs, the machine is shared) and the results a speed change must
keep: first contact, final rod-end offsets, energy balance. Usage: python -m bench.snare_speed [N] [CASE ...]"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from solver.mechanisms.snare import RESOURCES
from solver.runfile import RunFile
from solver.simulate import run_scenario


def case(name: str, n: int, out_dir: Path) -> None:
    sp = RESOURCES / "scenarios" / f"{name}.toml"
    out = out_dir / f"{name}.h5"
    run_scenario(sp, out, t_end=0.02)                         # compile (numba cache) once, untimed
    cpu = []
    for _ in range(n):
        c0 = time.process_time()
        run_scenario(sp, out)
        cpu.append(time.process_time() - c0)
    with RunFile(out) as r:
        T = r.time[-1]
        first = min((e.time for e in r.events if e.kind == "first_contact"), default=float("nan"))
        ch = {k: r.channel(k) for k in ("radial_offset", "target_y", "target_z", "total_energy", "drive_work", "Fy",
                                        "Fz")}
    e = ch["total_energy"]
    print(f"{name}: CPU {' '.join(f'{c:.2f}' for c in cpu)} s, median {statistics.median(cpu):.2f} s for {T:.1f} s "
          f"simulated ({statistics.median(cpu) / T:.3f} CPU-s per s); first contact {first:.5f} s; end radial "
          f"{ch['radial_offset'][-1] * 1e3:.3f} mm (y {ch['target_y'][-1] * 1e3:.3f}, z {ch['target_z'][-1] * 1e3:.3f}); "
          f"max |E - E0| {np.abs(e - e[0]).max():.5f} J, drive work {ch['drive_work'][-1]:.4f} J; peak Fy "
          f"{np.abs(ch['Fy']).max():.2f} Fz {np.abs(ch['Fz']).max():.2f} N", flush=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    names = sys.argv[2:] or ["suspension_rig", "on_orbit_floating"]
    d = Path(tempfile.mkdtemp())
    for name in names:
        case(name, n, d)
