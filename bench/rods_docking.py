"""Rods on the active craft of the probe-cone central impact: how much a solar-array wing (resources/rods/
rods_solar_wing.toml, assumed) changes the base loads (docs/rods.md "Docking step" holds this script's output).

The least machinery that is right at this mass ratio: (1) the probe-cone run as bundled (rigid 20 t ship); (2) the
same with the wings as rigid masses on the ship (mass, inertia: the low-frequency limit); (3) the wing as an elastic
rod chain on the free ship (the rods type, solver/core/planar_chain.py), driven by run (1)'s base force, which gives
the wing's reaction on the ship beside the force it disturbs. Left out: the reaction's feedback on the contact
(one-way coupling), motion out of the wing's plane.

    python -m bench.rods_docking [--t-end 6]
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from solver.runfile import RunFile
from solver.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[1]
CENTRAL = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
WING = ROOT / "resources" / "rods" / "rods_solar_wing.toml"
LOADS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")


def wing_mass_and_inertia(x0: float, y0: float, L, m, mu) -> tuple[float, float, float]:
    """Mass, c.g. y offset moment (sum m y) and inertia about the ship's c.g. (z axis, sum m r^2) of a deployed
    wing along +y from (x0, y0): rods as uniform bars, node masses at their far ends."""
    mass, my, izz, y = 0.0, 0.0, 0.0, y0
    for lk, mk, muk in zip(L, m, mu):
        mb = mk * lk
        yc = y + lk / 2
        mass += mb + muk
        my += mb * yc + muk * (y + lk)
        izz += mb * (x0 ** 2 + yc ** 2 + lk ** 2 / 12) + muk * (x0 ** 2 + (y + lk) ** 2)
        y += lk
    return mass, my, izz


def peaks(path: Path) -> dict[str, float]:
    with RunFile(path) as r:
        out = {n: float(np.abs(r.channel(n)).max()) for n in LOADS}
        out["|F|"] = float(np.sqrt(sum(r.channel(n) ** 2 for n in LOADS[:3])).max())
        out["|M|"] = float(np.sqrt(sum(r.channel(n) ** 2 for n in LOADS[3:])).max())
        out["t_capture"] = float(r.t_capture)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=6.0)
    ap.add_argument("--scale", type=float, default=1.0, help="the wing's masses, EI and hinges times this (its "
                    "frequencies kept): a heavier wing")
    a = ap.parse_args(argv)
    import tomllib
    w = tomllib.loads(WING.read_text())
    wing_text = WING.read_text()
    for key in ("mass_per_length", "node_mass", "EI", "stiffness", "damping"):
        tab = w["hinges" if key in ("stiffness", "damping") else "rods"]
        tab[key] = [a.scale * x for x in tab[key]]
        wing_text = re.sub(rf"^{key} = \[[^\]]*\]", f"{key} = {tab[key]}", wing_text, count=1, flags=re.M)
    x0, y0 = w["attachment"]["position"]
    mw, myw, izw = wing_mass_and_inertia(x0, y0, w["rods"]["length"], w["rods"]["mass_per_length"],
                                         w["rods"]["node_mass"])
    sc = tomllib.loads(CENTRAL.read_text())
    M0 = sc["active_craft"]["mass"]
    I = sc["active_craft"]["inertia"]
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)
        wing_file = d / "wing_system.toml"
        wing_file.write_text(wing_text)
        t0 = time.process_time()
        rigid = run_scenario(CENTRAL, d / "rigid.h5", t_end=a.t_end)
        cpu_rigid = time.process_time() - t0
        # (2) two wings (+y and -y, symmetric: the c.g. stays on the axis) as rigid masses on the ship
        text = CENTRAL.read_text().replace('mechanism = "existing"', 'mechanism = "existing"  # two wings rigid')
        text = re.sub(r"^mass = 20000\.0", f"mass = {M0 + 2 * mw!r}", text, count=1, flags=re.M)
        iyy = I[1][1] + 2 * mw * x0 ** 2            # wings in the x-y plane: about y only their x offset counts
        izz = I[2][2] + 2 * izw
        ixx = I[0][0] + 2 * (izw - mw * x0 ** 2)     # about the docking axis: their y distance
        text = re.sub(r"^inertia = \[\[5\.06e4.*?\]\]", f"inertia = [[{ixx!r}, 0.0, 0.0], [0.0, {iyy!r}, 0.0], "
                      f"[0.0, 0.0, {izz!r}]]", text, count=1, flags=re.M)
        assert f"mass = {M0 + 2 * mw!r}" in text and f"{izz!r}" in text
        (d / "winged.toml").write_text(text)
        winged = run_scenario(d / "winged.toml", d / "winged.h5", t_end=a.t_end)
        # (3) one elastic wing on the free ship (rods type), driven by the rigid run's base force at the port
        with RunFile(rigid) as r:
            t, fx, fy, mz = r.time, r.channel("Fx"), r.channel("Fy"), r.channel("Mz")
            com_x = sc["active_craft"]["com"][0]
        # rods axes: x_r along the wing (the ship's +y), y_r = -x (the docking axis reversed): a deployed wing is
        # phi = 0; the base force acts at the port, (-com_x, 0) from the ship's c.g. in the docking frame
        M_C = mz - fy * com_x
        rod_sc = "\n".join([
            'name = "ship_wing_central_impact"', 'comment = "bench/rods_docking.py"', f'mechanism = "{wing_file}"',
            "[craft]", f"mass = {M0!r}", f"inertia = {I[2][2]!r}", f"half_size = [2.25, {com_x!r}]",
            "[initial]", "phi = [0.0, 0.0]", "v_C = [0.0, 0.15]",
            "[controls]", f"times = {[float(x) for x in t]}", f"X_C = {[float(x) for x in fy]}",
            f"Y_C = {[float(-x) for x in fx]}", f"M_C = {[float(x) for x in M_C]}",
            "[solver]", 'formulation = "general"', "step = 1.0e-4", "output_step = 1.0e-3", f"duration = {a.t_end!r}"])
        (d / "wing.toml").write_text(rod_sc)
        t0 = time.process_time()
        wing = run_scenario(d / "wing.toml", d / "wing.h5", t_end=a.t_end)
        cpu_wing = time.process_time() - t0
        with RunFile(wing) as r:
            tw = r.time
            vx, vy, om = r.channel("v_Cx"), r.channel("v_Cy"), np.radians(r.channel("Omega"))
            X, Y = r.channel("X_C"), r.channel("Y_C")
            root = float(np.abs(r.channel("M_root1")).max())
            hinge = float(np.abs(r.channel("hinge0_moment")).max())
            phi_dev = float(np.abs(r.channel("phi1")).max())
            tip = float(np.abs(np.radians(r.channel("phi2"))).max() * 3.5 + np.abs(np.radians(r.channel("phi1"))).max()
                        * 3.5)
        # the wing's reaction on the ship, averaged over each 1 ms frame: the wing's momentum change, from the
        # system's (the control impulse, held per 1 ms row as the kernel applies it) less the ship's; craft axes
        # (the ship turns by less than 0.1 deg), back in the docking frame (x = -y_r, y = x_r)
        dt = np.diff(tw)
        rx_r = -(M0 * np.diff(vx) - X[:-1] * dt) / dt
        ry_r = -(M0 * np.diff(vy) - Y[:-1] * dt) / dt
        rx, ry = -ry_r, rx_r
        turn = float(np.abs(np.degrees(np.cumsum(om[:-1] * dt))).max())
        pr, pw = peaks(rigid), peaks(winged)
    print("| run | peak Fx, N | peak Fy, N | peak F (norm), N | peak M (norm), N*m | T capture, s |")
    print("|---|---|---|---|---|---|")
    for label, p in (("ship rigid, no wings (central_impact_20t)", pr),
                     (f"two wings as rigid masses (+{2 * mw:.0f} kg, I_zz +{2 * izw:.0f} kg*m^2)", pw)):
        print(f"| {label} | {p['Fx']:.1f} | {p['Fy']:.3g} | {p['|F|']:.1f} | {p['|M|']:.3g} | {p['t_capture']:.3f} |")
    d_f = 100 * (pw["|F|"] - pr["|F|"]) / pr["|F|"]
    print(f"\nRigid wings change the peak base force by {d_f:+.3f} % (mass ratio {2 * mw / M0:.2%}).\n")
    print("| one elastic wing (rods type, general) driven by the rigid run's base force | value |")
    print("|---|---|")
    print(f"| peak wing reaction on the ship, x (docking axis) | {np.abs(rx[5:-5]).max():.1f} N "
          f"({100 * np.abs(rx[5:-5]).max() / pr['Fx']:.2f} % of peak Fx) |")
    print(f"| peak wing reaction on the ship, y | {np.abs(ry[5:-5]).max():.1f} N |")
    print(f"| wing reaction x as a rigid {mw:.0f} kg mass would give (m a, peak) | "
          f"{mw * pr['Fx'] / M0:.1f} N |")
    print(f"| the ship's largest turn | {turn:.2e} deg |")
    print(f"| peak bending moment at the wing's root (M_root1) | {root:.1f} N*m |")
    print(f"| peak root hinge moment | {hinge:.1f} N*m |")
    print(f"| largest root chord rotation (phi1) | {phi_dev:.4f} deg |")
    print(f"| wing tip's largest sideways excursion (chords, upper bound) | {1000 * tip:.2f} mm |")
    print(f"| CPU s: probe-cone run {cpu_rigid:.1f}, wing run {cpu_wing:.1f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
