"""Alignment-lever cam table: lever angle per nut turn that keeps the rollers a few mm off the receiving cone
(seed 000 §5.6) with the housing coaxial and the latches on the socket stops. Prints TOML lines for
resources/mechanisms/<variant>.toml [alignment_levers].
    python bench/cam_table.py [--offset 0.003] [--head stops] [--mechanism existing] [--from-stroke 0.22] [--ramp 0.06]
"""
from __future__ import annotations

import argparse
import math
import sys
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def geometry(mechanism: str) -> tuple[dict, dict]:
    """Geometry TOML with the mechanism's [geometry_changes] applied, and the mechanism TOML."""
    from solver.mechanisms.probe_cone.model import _geometry_changes
    mpath = ROOT / "resources" / "mechanisms" / f"{mechanism}.toml"
    mt = tomllib.loads(mpath.read_text())
    gpath = ROOT / "resources" / "geometry" / f"{mt['geometry']}.toml"
    gt = tomllib.loads(gpath.read_text())
    _geometry_changes(mpath, mt, gpath, gt)
    return gt, mt


def clearance(g: dict, stroke: float, phi_deg: float, head: str = "bottom") -> float:
    """Roller-to-cone clearance (m) at this probe stroke and lever angle, housing coaxial, the head on the
    socket bottom (deepest: least clearance) or latched on the stops."""
    rc, so, sl, la = g["receiving_cone"], g["socket"], g["socket_slots"], g["latches"]
    lv, ho, pr = g["alignment_lever"], g["housing"], g["probe"]
    tan_a = (rc["entrance_radius"] - so["radius"]) / rc["depth"]
    cos_a = math.cos(math.atan(tan_a))
    x_head = -rc["depth"] - sl["stop_below_mouth"] - la["tip_sphere_radius"] - la["tip_x"]
    if head == "bottom":
        x_head = -rc["depth"] - so["depth"] + g["probe_head"]["radius"]
    x_g = x_head + pr["length"] - stroke + ho["length"]
    phi = math.radians(phi_deg)
    cx = x_g + lv["pivot_x"] - lv["length"] * math.cos(phi)
    cr = lv["pivot_radius"] + lv["length"] * math.sin(phi)
    return (rc["entrance_radius"] + cx * tan_a - cr) * cos_a - lv["roller_radius"]


def lever_angle(g: dict, stroke: float, offset: float, head: str = "bottom") -> float:
    """Lever angle (deg) giving the roller `offset` clearance with the head at `head` (bisection; NaN if out
    of reach)."""
    lo, hi = g["alignment_lever"]["angle_retracted"], 55.0     # below the angle of least clearance
    if clearance(g, stroke, hi, head) > offset or clearance(g, stroke, lo, head) < offset:
        return math.nan
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if clearance(g, stroke, mid, head) > offset else (lo, mid)
    return 0.5 * (lo + hi)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mechanism", default="existing")
    ap.add_argument("--offset", type=float, default=0.003,
                    help="roller clearance to the cone with the housing coaxial, m")
    ap.add_argument("--head", choices=("bottom", "stops"), default="bottom",
                    help="head position the offset is measured at: on the socket bottom, or pulled onto the stops "
                         "by the drive (the retraction configuration)")
    ap.add_argument("--from-stroke", type=float, default=0.20, help="probe stroke where the levers reach the track")
    ap.add_argument("--ramp", type=float, default=0.02, help="probe stroke over which the levers swing out")
    ap.add_argument("--points", type=int, default=16)
    a = ap.parse_args(argv)
    g, mt = geometry(a.mechanism)
    pitch = mt["axial_damper"]["screw_pitch"]
    smax = mt["probe"]["stroke_max"]
    a_ret = g["alignment_lever"]["angle_retracted"]
    s1 = np.linspace(a.from_stroke, smax, a.points - 2)
    ang = np.array([lever_angle(g, s, a.offset, a.head) for s in s1])
    if np.isnan(ang).any():
        raise SystemExit(f"levers cannot reach the track at strokes {s1[np.isnan(ang)]}")
    strokes = np.concatenate([[0.0, a.from_stroke - a.ramp], s1])
    angles = np.concatenate([[a_ret, a_ret], ang])
    turns = strokes / pitch
    print(f"# {a.mechanism}: offset {a.offset * 1e3:.1f} mm (head {a.head}) from stroke {a.from_stroke} m; "
          f"levers swing up to {ang.max():.2f} deg (extension > 1 past probe_cone.toml angle_extended)")
    print("cam_nut_turns = [" + ", ".join(f"{t:.2f}" for t in turns) + "]")
    print("cam_lever_angle_deg = [" + ", ".join(f"{v:.2f}" for v in angles) + "]")
    for s, v in zip(strokes, angles):
        print(f"#   stroke {s:.3f} m  angle {v:6.2f} deg  clearance {clearance(g, s, v) * 1e3:7.2f} mm "
              f"(latched on the stops: {clearance(g, s, v, 'stops') * 1e3:7.2f} mm)")


if __name__ == "__main__":
    main()
