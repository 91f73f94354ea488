"""A run with KNOWN contacts, written by hand with the real RunWriter (for event, lane, dock and verdict tests).

Every contact is a triangle or a plateau of normal force on a 1 kHz grid, so the trapezoid impulse of
the piecewise-linear record is known in closed form; `EXPECTED` lists the events in start order.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver.runfile import ChannelInfo, RunMeta, RunWriter
from tests.synthetic_run import BODIES, PAIRS, SCENARIO, geometry

DT = 0.001
N = 4001                       # 0 .. 4 s


@dataclass(frozen=True)
class Known:
    pair: str
    first: int                 # first active frame
    stop: int                  # first inactive frame after it (N if it lasts to the end)
    peak: float                # N
    peak_frame: int
    impulse: float             # N*s, exact
    approach: float            # m/s, written at the first active frame
    rebound: bool


def _triangle(c, h, peak):
    i = np.arange(N)
    return np.clip(peak * (1 - np.abs(i - c) / h), 0, None)


def _plateau(a, b, value):
    f = np.zeros(N)
    f[a:b] = value
    return f


# (pair, normal-force record, approach speed, rebound); triangles of half-width h are active on c-h+1 .. c+h-1
SHAPES = [
    ("head_cone", _triangle(250, 50, 1000.0), 0.15, True),          # impulse 0.5 * 1000 * 0.1 = 50
    ("head_cone", _plateau(500, 600, 200.0), 0.02, False),          # 200 * 0.1 = 20 (ramps included)
    ("roller_cone", _plateau(950, 1050, 300.0), 0.01, False),       # 30; overlaps head_socket
    ("head_socket", _triangle(1000, 20, 4000.0), 0.12, False),      # 80
    ("latch_slot", _plateau(1500, 1510, 2500.0), 0.05, False),      # 25
    ("limiter_cone", _triangle(2000, 10, 1500.0), 0.08, True),      # 15
    ("limiter_cone", _triangle(2100, 10, 1200.0), 0.06, True),      # 12
    ("limiter_cone", _triangle(2200, 10, 900.0), 0.04, False),      # 9
    ("ring_ring", _plateau(3500, N, 800.0), 0.03, False),           # 0.4 + 800 * 0.5 = 400.4, to the end
]
IMPULSES = [50.0, 20.0, 30.0, 80.0, 25.0, 15.0, 12.0, 9.0, 400.4]


def _expected() -> list[Known]:
    out = []
    for (pair, f, v, reb), imp in zip(SHAPES, IMPULSES):
        act = np.flatnonzero(f > 0)
        out.append(Known(pair, int(act[0]), int(act[-1]) + 1, float(f.max()), int(np.argmax(f)), imp, v, reb))
    return sorted(out, key=lambda k: (k.first, k.pair))


EXPECTED = _expected()


def channels() -> list[ChannelInfo]:
    C = ChannelInfo
    out = [C(f"F{a}", "N", f"force on mechanism base {a}", "base_loads") for a in "xyz"]
    out += [C(f"M{a}", "N*m", f"moment on mechanism base {a}", "base_loads") for a in "xyz"]
    out += [C("probe_stroke", "m", "probe stroke-in", "mechanism", 0.45),
            C("friction_brake", "m", "axial damper friction brake stroke", "axial_damper", 0.33),
            C("spring_mechanism_1", "m", "lateral spring mechanism 1", "lateral_damper", 0.026, 90.0),
            C("spring_mechanism_2", "m", "lateral spring mechanism 2", "lateral_damper", 0.026, 0.0),
            C("latches_engaged", "", "latches engaged behind the socket shoulder", "mechanism"),
            C("head_near_socket", "", "head near socket (latches drawn)", "mechanism"),
            C("lever_extension", "", "alignment lever extension", "mechanism", 1.0)]
    return out


def make(path, t_capture: float = 1.5, overrides: dict[str, np.ndarray] | None = None,
         detail: bool = True) -> Path:
    """Write the known-contacts run; `overrides` replaces channel arrays (verdict cases)."""
    cfg = tomllib.loads(Path(SCENARIO).read_text())
    t = np.arange(N) * DT
    npair = len(PAIRS)
    names = [p.name for p in PAIRS]
    fn = np.zeros((N, npair))
    vn = np.zeros((N, npair))
    for pair, f, v, _ in SHAPES:
        j = names.index(pair)
        fn[:, j] += f
        vn[np.flatnonzero(f > 0)[0], j] = v
    active = fn > 0
    # unit normals differ per pair; a tangential friction part (30 % of the normal force) must not count
    ang = np.linspace(0.2, 1.4, npair)
    normal = np.stack([np.cos(ang), np.sin(ang), np.zeros(npair)], 1)[None].repeat(N, 0)
    tangent = np.stack([-np.sin(ang), np.cos(ang), np.zeros(npair)], 1)[None].repeat(N, 0)
    force = fn[:, :, None] * (normal + 0.3 * tangent)
    point = np.zeros((N, npair, 3))
    point[:, :, 0] = -0.3
    point[:, :, 1] = np.linspace(-0.2, 0.2, npair)
    specs = channels()
    cols = {c.name: np.zeros(N) for c in specs}
    total = force.sum(axis=1)
    cols["Fx"], cols["Fy"], cols["Fz"] = total[:, 0], total[:, 1], total[:, 2]
    cols["Mx"] = 0.1 * total[:, 1]
    cols["probe_stroke"] = 0.2 * np.clip((t - 1.0) / 1.0, 0, 1)
    cols["friction_brake"] = 0.05 * np.clip((t - 1.2) / 1.0, 0, 1)
    cols["spring_mechanism_1"] = 0.004 * np.sin(2 * np.pi * t)
    cols["latches_engaged"] = np.where(t >= t_capture, 4.0, 0.0) if math.isfinite(t_capture) else np.zeros(N)
    cols["head_near_socket"][:] = 1.0
    cols["lever_extension"][:] = 1.0
    for k, v in (overrides or {}).items():
        cols[k] = np.asarray(v, float)
    data = np.stack([cols[c.name] for c in specs], 1)
    nb = len(BODIES)
    pos = np.zeros((N, nb, 3))
    pos[:, 1, 0] = 1.2      # active craft behind the cone
    pos[:, 2, 0] = 1.0      # housing (gimbal)
    pos[:, 3, 0] = 0.65     # probe
    pos[:, 4, 0] = -0.3     # probe head in the cone
    pos[:, 5, 0] = 0.9      # limiter
    q = np.zeros((N, nb, 4))
    q[:, :, 0] = 1.0
    meta = RunMeta(comment="known contacts (hand-built test run)", variant="synthetic",
                   run_date="2026-01-01T00:00:00+00:00", solver_version="tests.contact_run",
                   output_step=DT, scenario="known_contacts")
    w = RunWriter(path, meta, specs, BODIES, PAIRS, geometry(cfg["geometry"]), contact_detail=detail)
    for a in range(0, N, 1500):
        b = min(N, a + 1500)
        w.append(t[a:b], data[a:b], pos[a:b], q[a:b], active[a:b], force[a:b], point[a:b],
                 *((normal[a:b], np.zeros((b - a, npair)), vn[a:b]) if detail else ()))
    w.finish(t_capture=t_capture, complete=True)
    return Path(path)
