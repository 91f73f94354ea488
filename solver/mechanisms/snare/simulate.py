"""The snare's run: channels, bodies, parts and the three cable-rod pairs, its kernel through the one runner."""
from __future__ import annotations

from functools import partial

import numpy as np

from solver.mechanisms.snare import dynamics as D
from solver.runfile import ChannelInfo, ContactPairInfo, FlexiblePart, PartGeometry
from solver.simulate import BlockKernels, run_model
from solver.wireframe import Wire

SOLVER_VERSION = "dockmnemo snare 1"
BODIES = ["end_effector", "rotating_ring", "target"]
PAIRS = [ContactPairInfo(f"cable_{i + 1}_rod", f"cable_{i + 1}", "grapple_rod", f"cable {i + 1} on the grapple rod")
         for i in range(D.NCAB)]
EVENTS = {0: ("first_contact", "first contact: {pair}"), 1: ("capture", "rod centred within the capture radius")}


def channel_infos(m) -> list:
    """Every channel of a snare run with unit, label, group and device range."""
    C = ChannelInfo
    g = m.geometry
    ch = [C("ring_angle", "deg", "rotating ring angle", "mechanism", 90.0), C("motor_torque", "N*m", "capture motor", "mechanism", 50.0),
          *(C(n, "N", f"sensor force {n[1]}", "base_loads", 500.0) for n in ("Fx", "Fy", "Fz")),
          *(C(n, "N*m", f"sensor moment {n[1]}", "base_loads", 100.0) for n in ("Mx", "My", "Mz")),
          C("radial_offset", "m", "rod end's distance from the EE axis", "kinematics", g["ring_radius"]),
          C("target_x", "m", "rod end axial, from the locked pose", "kinematics", 0.3),
          C("target_y", "m", "rod end y", "kinematics", g["ring_radius"]),
          C("target_z", "m", "rod end z", "kinematics", g["ring_radius"]),
          C("tilt", "deg", "rod axis to EE axis", "kinematics", 15.0)]
    ch += [C(f"tension_{end}_{i + 1}", "N", f"cable {i + 1} at the {end} ring", "mechanism", 1000.0)
           for end in ("fixed", "rotating") for i in range(D.NCAB)]
    ch += [C(f"contact_force_{i + 1}", "N", f"cable {i + 1} on the rod", "contact_forces", 500.0) for i in range(D.NCAB)]
    ch += [C("centred", "", "rod end within the centred radius", "mechanism", 1.0),
           C("cables_in_contact", "", "cables touching the rod", "mechanism", 3.0)]
    ch += [C(n, "J", n.replace("_", " "), "energy") for n in D.CHANNELS[24:30]]
    ch += [C(f"target_offset_{a}", "m", f"target adapter centre {a} (where the seed gives the position error)",
             "kinematics", g["ring_radius"]) for a in "yz"]
    assert [c.name for c in ch] == list(D.CHANNELS)
    return ch


def parts(m) -> list:
    """Rings on the EE and the rotating ring, the grapple rod and the adapter plate on the target."""
    g = m.geometry
    R, h, rr, L = g["ring_radius"], g["spacing"], g["rod_radius"], g["rod_length"]
    ring = Wire().frustum(-0.004, R, 0.004, R, n_generators=6).build()
    return [PartGeometry("fixed_ring", "end_effector", *ring, "fixed_ring"),
            PartGeometry("rotating_ring", "rotating_ring", *ring, "rotating_ring"),
            PartGeometry("grapple_rod", "target", *Wire().frustum(-L, rr, 0.0, rr).build(), "grapple_rod"),
            PartGeometry("target_adapter", "target", *Wire().frustum(0.0, 1.2 * R, 0.02, 1.2 * R).build(), "target")]


def flexible_parts(m) -> list:
    """The three cables as flexible parts: FLEX_PER_ELEMENT points per element and the end, in the EE's frame."""
    p = n_points(m)
    lines = np.stack([np.arange(p - 1), np.arange(1, p)], 1).astype(np.int32)
    return [FlexiblePart(f"cable_{i + 1}", "end_effector", p, lines, "cable", f"cable {i + 1}") for i in range(D.NCAB)]


def n_points(m) -> int:
    return D.FLEX_PER_ELEMENT * m.geometry["n"] + 1


class SnareKernels(BlockKernels):
    """The engine's BlockKernels with one more output: the cables' points per frame (the run's flexible parts)."""

    def __init__(self, m, spo: int, block: int):
        super().__init__(D.run_block, m, (m.P, m.M, m.MINV, m.FREE, m.FIXI, m.FIX, m.DS), spo, block,
                         shapes=(D.NCH, len(BODIES), D.NCAB), events=EVENTS, pairs=PAIRS, capture=(0, 1))
        self.outs.append(np.zeros((block, D.NCAB, n_points(m), 3)))

    def frames(self, rows: int) -> tuple:
        return tuple(a[:rows] for a in self.outs[:-1])

    def flexible_frames(self, rows: int) -> dict:
        return {f"cable_{i + 1}": self.outs[-1][:rows, i] for i in range(D.NCAB)}


def kernel_units(m) -> list:
    """The compiled units of a snare run, callees first (solver.warmup compiles them before the clock)."""
    from numba import types as T
    a1, a2, a3, a4 = T.float64[::1], T.float64[:, ::1], T.float64[:, :, ::1], T.float64[:, :, :, ::1]
    i1, u8 = T.int64[::1], T.uint8[:, ::1]
    return [("snare.run_block", D.run_block,
             (a1, a1, T.float64, T.float64, T.int64, T.int64, a1, a2, a2, i1, i1, a2, a2, a2, i1, i1, a1, a2, a3, a3,
              u8, a3, a3, a3, a2, a2, a4))]


def run_snare(m, scenario_path, out_path, **options):
    """Simulate a snare model into a run file through solver.simulate.run_model."""
    sizes = {"s": m.s0.size, "Z": D.NZ}
    return run_model(m, scenario_path, out_path, partial(SnareKernels, m), ("snare", SOLVER_VERSION),
                     channel_infos(m), BODIES, PAIRS, parts(m), sizes, flexible=flexible_parts(m), **options)
