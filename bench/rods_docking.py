"""Rods on the active craft of the probe-cone central impact, two-way coupled: how much a solar-array wing
(resources/rods/rods_solar_wing.toml, assumed) changes the base loads (docs/rods.md "Rods on a docking craft" holds
this script's output).

Runs central_impact_20t (no rods), the same ship with the wing as rigid masses (mass, CoM and inertia changed), and
central_impact_20t_wing (the wing as an elastic rod chain inside the run: solver/core/appendage.py) in both
formulations, at the assumed wing data and at 10x its masses (EI and hinges 10x too: frequencies kept); then the
rigid limit (hinges and panels 100x stiffer) and step halving.

    python -m bench.rods_docking [--t-end 6]
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

from solver.core import planar_chain as PC
from solver.runfile import RunFile
from solver.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[1]
SCEN = ROOT / "resources" / "scenarios"
PLAIN, WINGED = SCEN / "central_impact_20t.toml", SCEN / "central_impact_20t_wing.toml"
WING = ROOT / "resources" / "rods" / "rods_solar_wing.toml"


def scaled_wing(scale: float, stiff: float = 1.0) -> str:
    """The wing's rod-system file with masses x scale, EI and hinges x scale x stiff."""
    text = WING.read_text()
    w = tomllib.loads(text)
    for key, f in (("mass_per_length", scale), ("node_mass", scale), ("EI", scale * stiff),
                   ("stiffness", scale * stiff), ("damping", scale)):
        tab = w["hinges" if key in ("stiffness", "damping") else "rods"]
        text = re.sub(rf"(?m)^{key} = \[[^\]]*\]", f"{key} = {[f * x for x in tab[key]]}", text, count=1)
    return text


def rigid_ship(wing_text: str) -> tuple[float, list, list]:
    """The ship's mass, CoM and inertia with the straight wing's masses fixed on it (the chain's own mass points)."""
    sc, wg = tomllib.loads(WINGED.read_text()), tomllib.loads(wing_text)
    a, ac = sc["appendage"], sc["active_craft"]
    root, e1 = np.array(a["root"], float), np.array(a["axis"], float)
    pts, ms, r = [], [], root.copy()
    for l, m, mu in zip(wg["rods"]["length"], wg["rods"]["mass_per_length"], wg["rods"]["node_mass"]):
        for xi, w in zip(PC.GAUSS_X, PC.GAUSS_W):
            pts.append(r + xi * l * e1)
            ms.append(w * m * l)
        r = r + l * e1
        pts.append(r.copy())
        ms.append(mu)
    M0, c0, I0 = ac["mass"], np.array(ac["com"], float), np.array(ac["inertia"], float)
    pts, ms = np.array(pts), np.array(ms)
    M = M0 + ms.sum()
    c = (M0 * c0 + (ms[:, None] * pts).sum(0)) / M

    def steiner(m, d):
        return m * ((d @ d) * np.eye(3) - np.outer(d, d))
    I = I0 + steiner(M0, c0 - c) + sum(steiner(mi, p - c) for mi, p in zip(ms, pts))
    return float(M), c.tolist(), I.tolist()


def variant(d: Path, name: str, *, wing: str | None = None, form: str = "reduced", rigid=None, step=None) -> Path:
    """A scenario file in d: the winged central impact with its own wing file and formulation, or the plain one with
    the rigid ship (rigid = (mass, com, inertia)); step: another solver step."""
    if rigid is not None:
        text = PLAIN.read_text()
        M, c, I = rigid
        text = re.sub(r"(?m)^mass = 20000\.0", f"mass = {M!r}", text, count=1)
        text = re.sub(r"(?m)^inertia = \[\[5\.06e4.*?\]\]", f"inertia = {I!r}", text, count=1)
        text = re.sub(r"(?m)^com = \[5\.15, 0\.0, 0\.0\]", f"com = {c!r}", text, count=1)
        assert f"mass = {M!r}" in text and f"com = {c!r}" in text
    else:
        text = WINGED.read_text()
        (d / f"{name}_wing.toml").write_text(wing)
        text = re.sub(r'(?m)^system = "rods_solar_wing"', f'system = "{name}_wing.toml"', text, count=1)
        text = re.sub(r'(?m)^formulation = "reduced"', f'formulation = "{form}"', text, count=1)
        assert f'"{name}_wing.toml"' in text
    if step is not None:
        text = re.sub(r"(?m)^step = 1\.0e-3", f"step = {step!r}", text, count=1)
    p = d / f"{name}.toml"
    p.write_text(text)
    return p


def loads(path: Path) -> dict[str, float]:
    """Peak base loads, the impact's duration (first contact to capture) and the wing's peak root moments."""
    with RunFile(path) as r:
        out = {n: float(np.abs(r.channel(n)).max()) for n in ("Fx", "Fy", "Fz", "Mx", "My", "Mz")}
        out["|F|"] = float(np.sqrt(sum(r.channel(n) ** 2 for n in ("Fx", "Fy", "Fz"))).max())
        out["|M|"] = float(np.sqrt(sum(r.channel(n) ** 2 for n in ("Mx", "My", "Mz"))).max())
        first = min(e.time for e in r.events if e.kind == "first_contact")
        out["t_capture"], out["impact"] = float(r.t_capture), float(r.t_capture) - first
        for n in ("wing_M_root1", "wing_hinge0_moment", "wing_phi1"):
            out[n] = float(np.abs(r.channel(n)).max()) if n in r.channels else float("nan")
        out["yaw"] = float(np.abs(r.channel("att_yaw")).max())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=6.0)
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)

        def run(label, path):
            t0 = time.process_time()
            out = run_scenario(path, d / f"{path.stem}.h5", t_end=a.t_end)
            rows.append((label, loads(out), time.process_time() - t0))
        run("no rods (central_impact_20t)", PLAIN)
        for scale in (1.0, 10.0):
            wing = scaled_wing(scale)
            M, c, I = rigid_ship(wing)
            tag = "assumed wing" if scale == 1 else "10x wing mass"
            run(f"{tag}: rigid masses on the ship (+{M - 20000:.0f} kg, CoM y {c[1] * 1e3:.1f} mm)",
                variant(d, f"rigid{scale:g}", rigid=(M, c, I)))
            for form in ("reduced", "general"):
                run(f"{tag}: elastic chain, {form}", variant(d, f"{form}{scale:g}", wing=wing, form=form))
        run("assumed wing: hinges and panels 100x stiffer (reduced; the rigid limit)",
            variant(d, "stiff", wing=scaled_wing(1.0, 100.0), form="reduced", step=2.5e-4))
        run("assumed wing: elastic chain, reduced, step 0.5 ms (halved)",
            variant(d, "half", wing=scaled_wing(1.0), form="reduced", step=5.0e-4))
    base = rows[0][1]
    print(f"Central impact base loads to {a.t_end:g} s (peaks of the base-load channels, active docking frame; impact: "
          "first contact to capture)\n")
    print("| run | peak Fx, N | peak Fy, N | peak Mz, N*m | peak My, N*m | peak abs(F), N | peak abs(M), N*m | impact, s "
          "| T capture, s | ship yaw, deg | wing root moment, N*m | wing hinge 0 moment, N*m | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, p, cpu in rows:
        dF = 100 * (p["|F|"] - base["|F|"]) / base["|F|"]
        print(f"| {label} | {p['Fx']:.1f} | {p['Fy']:.3g} | {p['Mz']:.3g} | {p['My']:.3g} | {p['|F|']:.1f} "
              f"({dF:+.2f} %) | {p['|M|']:.3g} | {p['impact']:.3f} | {p['t_capture']:.3f} | {p['yaw']:.2e} | "
              f"{p['wing_M_root1']:.3g} | {p['wing_hinge0_moment']:.3g} | {cpu:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
