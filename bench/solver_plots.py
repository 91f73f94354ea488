"""Plots of the central-impact run for docs/solver.md (matplotlib): axial damper story and contact forces.
    python bench/solver_plots.py [RUN.h5]   (default: simulates central_impact_20t for 30 s first)
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pair_force(r, names):
    """Sum of the normal-force magnitudes of the named pairs."""
    tot = 0.0
    for n in names:
        f, d = r.contact_force(n), r.contact_detail(n)
        tot = tot + np.abs(np.einsum("ij,ij->i", f, d["normal"]))
    return tot


def main(argv=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from solver.runfile import RunFile
    from solver.simulate import run_scenario
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path(tempfile.mkdtemp()) / "central.h5"
    if not argv:
        run_scenario(ROOT / "resources" / "scenarios" / "central_impact_20t.toml", path, t_end=30.0)
    r = RunFile(path)
    t = r.time
    fig, ax = plt.subplots(5, 1, figsize=(11, 13), sharex=True)
    a = ax[0]
    a.plot(t, 1e3 * r.channel("probe_stroke"), label="probe stroke")
    a.plot(t, 1e3 * r.channel("axial_spring"), label="spring mechanism")
    a.plot(t, 1e3 * r.channel("friction_brake"), label="friction brake slip")
    a.set_ylabel("mm")
    a.set_title("axial damper displacement (central impact, 20 t, 0.15 m/s)")
    a.legend(loc="upper right")
    a = ax[1]
    a.plot(t, r.channel("nut_rate"), label="nut rate")
    a.plot(t, r.channel("axial_magnetic_brake"), label="magnetic brake rotor")
    a.set_ylabel("rpm")
    a.legend(loc="upper right")
    a = ax[2]
    a.plot(t, r.channel("head_axial_force"), label="head axial force (contacts on the probe)")
    a.plot(t, r.channel("Fx"), label="base force Fx", alpha=0.8)
    a.set_ylabel("N")
    a.legend(loc="upper right")
    a = ax[3]
    a.plot(t, pair_force(r, ["head_socket_bottom"]), label="head / socket bottom")
    a.plot(t, pair_force(r, [f"latch_stop_{k}" for k in range(1, 5)]), label="latches / socket stops (4)")
    a.plot(t, pair_force(r, ["latch_neck"]), label="latch springs on cone / neck")
    a.set_ylabel("N (normal)")
    a.legend(loc="upper right")
    a = ax[4]
    for n in ("kinetic_energy", "potential_energy", "dissipated_energy", "total_energy"):
        a.plot(t, r.channel(n), label=n.replace("_", " "))
    a.set_ylabel("J")
    a.set_xlabel("t, s")
    a.legend(loc="center right")
    for a in ax:
        a.grid(alpha=0.3)
        if np.isfinite(r.meta.t_capture):
            a.axvline(r.meta.t_capture, color="k", ls="--", lw=0.8)
    fig.tight_layout()
    out = ROOT / "docs" / "solver_central_impact.png"
    fig.savefig(out, dpi=80)
    # zoom on the first return impact
    lat = [e.time for e in r.events if e.kind == "contact_begin" and e.pair.startswith("latch_stop")]
    if lat:
        fig2, ax2 = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
        m = (t > lat[0] - 0.3) & (t < lat[0] + 1.2)
        ax2[0].plot(t[m], r.channel("Fx")[m], label="base force Fx")
        ax2[0].plot(t[m], r.channel("head_axial_force")[m], label="head axial force")
        ax2[0].set_ylabel("N")
        ax2[0].legend()
        ax2[0].set_title("latches' return impact on the socket stops")
        for k in range(1, 5):
            ax2[1].plot(t[m], pair_force(r, [f"latch_stop_{k}"])[m], label=f"latch_stop_{k}")
        ax2[1].set_ylabel("N")
        ax2[1].set_xlabel("t, s")
        ax2[1].legend()
        for a in ax2:
            a.grid(alpha=0.3)
        fig2.tight_layout()
        fig2.savefig(ROOT / "docs" / "solver_latch_impact.png", dpi=80)
    print(out)


if __name__ == "__main__":
    main()
