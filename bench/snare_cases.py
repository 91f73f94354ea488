"""Seed 004's two cases with the snare type: the suspension rig and the floating target. Prints first contact, the
rod end's offsets, sensor peaks, tensions, the energy balance and the speed (CPU and wall time per simulated second,
steps against the paper's 1e-5 s HHT step). Usage: python -m bench.snare_cases [OUT_DIR [SCENARIO.toml ...]]"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from solver.mechanisms.snare import RESOURCES
from solver.runfile import RunFile
from solver.simulate import run_scenario
from solver.verdict import evaluate, load_criteria


def case(name: str, out_dir: Path, sp: Path | None = None) -> None:
    sp = sp or RESOURCES / "scenarios" / f"{name}.toml"
    out = out_dir / f"{name}.h5"
    run_scenario(sp, out, t_end=0.02)                         # compile (numba cache) and relax once, untimed
    c0, w0 = time.process_time(), time.perf_counter()
    run_scenario(sp, out)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    with RunFile(out) as r:
        t = r.time
        T = t[-1]
        first = min((e.time for e in r.events if e.kind == "first_contact"), default=float("nan"))
        ch = {n: r.channel(n) for n in ("radial_offset", "target_y", "target_z", "tilt", "Fx", "Fy", "Fz", "Mx", "My",
                                        "Mz", "total_energy", "drive_work", "motor_torque", "cables_in_contact")}
        sustained = t[np.argmax(ch["cables_in_contact"] > 0)] if (ch["cables_in_contact"] > 0).any() else float("nan")
        print(f"== {name}: {T:.1f} s simulated")
        print(f"first contact (solver rate) {first:.3f} s; first frame with a cable on the rod {sustained:.2f} s "
              f"(paper: {'2.6' if name == 'suspension_rig' else '~7'} s)")
        for n in ("radial_offset", "target_y", "target_z", "tilt", "target_offset_y", "target_offset_z"):
            ch[n] = r.channel(n)
            print(f"{n:14s} start {ch[n][0]: .4f}  end {ch[n][-1]: .4f}  max |{np.abs(ch[n]).max():.4f}|")
        last = t >= T - 1.0
        print("over the last second |target_offset_y| max {:.4f}, |target_offset_z| max {:.4f} m (the seed's on-orbit "
              "offsets, at the adapter)".format(np.abs(ch["target_offset_y"][last]).max(),
                                               np.abs(ch["target_offset_z"][last]).max()))
        print("sensor peaks  " + "  ".join(f"{n} {np.abs(ch[n]).max():.2f}" for n in ("Fx", "Fy", "Fz", "Mx", "My", "Mz")))
        for i in (1, 2, 3):
            print(f"cable {i}: peak tension fixed/rotating end {r.channel(f'tension_fixed_{i}').max():.1f} / "
                  f"{r.channel(f'tension_rotating_{i}').max():.1f} N, peak contact {r.channel(f'contact_force_{i}').max():.1f} N")
        print(f"motor torque peak {np.abs(ch['motor_torque']).max():.2f} N m; t_capture {r.meta.t_capture:.2f} s")
        e = ch["total_energy"]
        print(f"energy balance: max |E - E0| {np.abs(e - e[0]).max():.4f} J against drive work max "
              f"{np.abs(ch['drive_work']).max():.3f} J")
        v = evaluate(r, load_criteria(RESOURCES / "criteria.toml"))
        print(f"verdict: {v.line()}")
    from solver.scenario import load_model
    h = load_model(sp).step
    steps = T / h
    print(f"speed: CPU {cpu:.1f} s, wall {wall:.1f} s for {T:.1f} s simulated (CPU/sim {cpu / T:.2f}); "
          f"{steps:.3g} steps of {h * 1e6:g} us, {cpu / steps * 1e6:.1f} us CPU per step; the paper's 1e-5 s step: "
          f"{T / 1e-5:.3g} steps")


if __name__ == "__main__":
    d = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    d.mkdir(parents=True, exist_ok=True)
    paths = [Path(a) for a in sys.argv[2:]]
    if paths:
        for sp in paths:
            case(sp.stem, d, sp)
    else:
        for name in ("suspension_rig", "on_orbit_floating"):
            case(name, d)
