"""Berthing (seed 001 ch. VIII): the kernels' speed on the operator scenario (an operator's payload-frame command held
through 60 s, contact included; real-time factor of the kernels alone and of the whole run with its file), and the
scripted MRM-1 insertion nominal and with 2 mm of lateral error: numbers and plots for docs/berthing.md.
    python bench/berthing_bench.py [--out docs] [--t-sim 60]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SC = ROOT / "resources" / "berthing" / "scenarios"


def kernel_speed(t_sim: float) -> dict:
    """Kernel-only and whole-run real-time factors on the operator scenario, the operator holding 2.4 cm/s in."""
    from solver.mechanisms.berthing import dynamics as D
    from solver.mechanisms.berthing.model import load_berthing
    from solver.mechanisms.berthing.simulate import BODIES, CHANNELS, PAIRS, kernel_arrays, run_berthing
    m = load_berthing(SC / "mrm1_operator.toml")
    prof = np.array([[0, 1, 0.024, 0, 0, 0, 0, 0, 0, 0, round(4.0 / m.step)]], float)   # ramped in over 4 s
    m = dataclasses.replace(m, PROF=prof)
    spo, n = round(m.output_step / m.step), round(t_sim / m.output_step)
    np_, nb = len(PAIRS), len(BODIES)
    outs = [np.zeros(n), np.zeros((n, len(CHANNELS))), np.zeros((n, nb, 3)), np.zeros((n, nb, 4)),
            np.zeros((n, np_), np.uint8), np.zeros((n, np_, 3)), np.zeros((n, np_, 3)), np.zeros((n, np_, 3)),
            np.zeros((n, np_)), np.zeros((n, np_))]
    args = kernel_arrays(m, np.zeros(9))
    D.run_block(m.s0.copy(), m.Z0.copy(), 0.0, m.step, 1, 1, *args, np.zeros((64, 3)), np.zeros(1, np.int64),
                np.zeros(np_, np.int64), *[a[:1] for a in outs])                    # compiled or loaded
    s, Z = m.s0.copy(), m.Z0.copy()
    c0, w0 = time.process_time(), time.perf_counter()
    st, t, rows = D.run_block(s, Z, 0.0, m.step, n, spo, *args, np.zeros((4096, 3)), np.zeros(1, np.int64),
                              np.zeros(np_, np.int64), *outs)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    contact_frames = int((outs[4].sum(axis=1) > 0).sum())
    with tempfile.TemporaryDirectory() as d:
        c1, w1 = time.process_time(), time.perf_counter()
        run_berthing(m, SC / "mrm1_operator.toml", Path(d) / "op.h5", t_end=t_sim)
        rcpu, rwall = time.process_time() - c1, time.perf_counter() - w1
    return dict(t_sim=t_sim, kernel_cpu=cpu, kernel_rt=t_sim / cpu, run_cpu=rcpu, run_wall=rwall,
                run_rt=t_sim / rcpu, contact_frames=contact_frames, frames=rows, insertion_end=float(outs[1][-1, 17]))


def scripted(out_dir: Path) -> list[dict]:
    """Both scripted cases: numbers and a plot each (contact forces, joint torques, the probe's error)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from solver import mechanisms, verdict
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    rows = []
    fig, axes = plt.subplots(3, 2, figsize=(12, 9), sharex=True)
    for col, name in enumerate(("mrm1_scripted", "mrm1_scripted_lateral_2mm")):
        with tempfile.TemporaryDirectory() as d:
            p = run_scenario(SC / f"{name}.toml", Path(d) / "r.h5")
            with RunFile(p) as r:
                t = r.time
                v = verdict.evaluate(r, verdict.load_criteria(mechanisms.for_run(r).criteria_file))
                taus = np.column_stack([r.channel(f"tau_{j + 1}") for j in range(7)])
                ins = r.channel("insertion")
                i_in = int(np.argmax(ins > 0))
                rows.append(dict(case=name, verdict=v.line(), t_capture=r.meta.t_capture,
                                 peak_contact=float(r.channel("contact_force").max()),
                                 peak_lateral_contact=float(r.channel("contact_lateral").max()),
                                 peak_torque=float(np.abs(taus).max()),
                                 peak_torque_joint=int(np.abs(taus).max(axis=0).argmax()) + 1,
                                 lateral_at_entry=float(r.channel("lateral_error")[i_in]),
                                 lateral_in_bore_max=float(r.channel("lateral_error")[i_in + 50:].max()),
                                 insertion_end=float(ins[-1]), tilt_max=float(r.channel("tilt").max()),
                                 energy_error=float(np.abs(r.channel("total_energy")).max()),
                                 drive_work_max=float(np.abs(r.channel("drive_work")).max()),
                                 brake_slip=float(r.channel("brake_slip").max())))
                ax = axes[0, col]
                ax.plot(t, r.channel("contact_force"), label="|F|")
                ax.plot(t, r.channel("contact_lateral"), label="lateral")
                ax.set_ylabel("contact force, N")
                ax.set_title(name)
                ax.legend()
                ax = axes[1, col]
                for j in range(7):
                    ax.plot(t, taus[:, j], label=f"tau_{j + 1}")
                ax.set_ylabel("gear torque, N*m")
                ax.legend(ncol=4, fontsize=7)
                ax = axes[2, col]
                ax.plot(t, 1000 * r.channel("lateral_error"), label="probe head off the receptacle axis")
                ax.axhline(1.0, color="k", lw=0.5, ls=":", label="1 mm clearance")
                ax.set_ylabel("lateral error, mm")
                ax.set_xlabel("t, s")
                ax.legend(fontsize=8, loc="upper left")
                ax2 = ax.twinx()
                ax2.plot(t, ins, color="tab:orange", label="insertion past the bore entry, m")
                ax2.set_ylabel("insertion, m")
                ax2.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(out_dir / "berthing_scripted.png", dpi=80)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs"))
    ap.add_argument("--t-sim", type=float, default=60.0)
    a = ap.parse_args(argv)
    k = kernel_speed(a.t_sim)
    print(f"operator scenario, {k['t_sim']:g} s simulated ({k['contact_frames']} frames in contact, insertion at the "
          f"end {k['insertion_end']:.3f} m): kernels {k['kernel_cpu']:.2f} CPU s = {k['kernel_rt']:.0f}x real time; "
          f"whole run with its file {k['run_cpu']:.2f} CPU s ({k['run_wall']:.2f} s wall) = {k['run_rt']:.0f}x")
    for r in scripted(Path(a.out)):
        print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
