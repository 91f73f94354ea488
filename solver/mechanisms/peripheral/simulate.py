"""Run a peripheral scenario through its kernels and write a run file v1 with the shared RunWriter."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from solver.mechanisms.peripheral import dynamics as D
from solver.mechanisms.peripheral.model import PeripheralModel
from solver.quat import from_axis_angle_many, to_matrix
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunWriter
from solver.simulate import BlockKernels, frames_in_calls, run_model
from solver.wireframe import Wire

SOLVER_VERSION = "dockmnemo-solver peripheral 1 (three bodies, six legs, RK4)"
BODIES = ["passive_craft", "active_craft", "ring"] + [f"leg_{k}_lower" for k in range(1, 7)] + \
         [f"leg_{k}_upper" for k in range(1, 7)]
PAIRS = [ContactPairInfo("ring_ring", "active_ring", "passive_ring", "ring face on ring face"),
         *(ContactPairInfo(f"petal_ring_{k}", f"active_petal_{k}", "passive_ring",
                           f"active petal {k} on the passive ring (face, bore edge)") for k in range(1, 4)),
         *(ContactPairInfo(f"ring_petal_{k}", f"passive_petal_{k}", "active_ring",
                           f"passive petal {k} on the active ring (face, bore edge)") for k in range(1, 4)),
         *(ContactPairInfo(f"latch_{k}", "latches", "strikers", f"soft-capture latch {k} holding its striker")
           for k in range(1, 4)),
         *(ContactPairInfo(f"petal_petal_{k}_{j}", f"active_petal_{k}", f"passive_petal_{j}",
                           f"active petal {k} on passive petal {j} (side and tip edges)")
           for k in range(1, 4) for j in range(1, 4)),
         ContactPairInfo("interface", "active_interface", "passive_interface",
                         "hard-capture face and seal on the other half's")]
EVENT_TEXT = {D.EV_CAPTURE: ("capture", "soft capture: the three latches engaged (rings within the capture "
                                        "tolerance)"),
              D.EV_RETRACT: ("phase", "retraction: the legs pull the ring back to the interface plane"),
              D.EV_HOOKS: ("phase", "hooks closed: every hook point within the seal gap; the preload ramps in"),
              D.EV_HARD: ("hard_dock", "hard dock: the hooks' full preload (interface faces pulled flat)")}


def channel_infos(m: PeripheralModel) -> list[ChannelInfo]:
    """Channel descriptions in the kernel's output order."""
    C = ChannelInfo
    leg_range = max(m.geo["stroke_retract"], m.geo["stroke_extend"])
    # a leg's force bar: the spring at the end of its stroke plus the brake (the stops take more only past it)
    force_range = m.P[D.P_K_LEG] * leg_range + max(m.P[D.P_BRAKE], m.P[D.P_BRAKE_FREE])
    out = []
    for name in D.CHANNELS:
        if name.startswith("iface_") and len(name) == 8:
            f = name[6] == "F"
            out.append(C(name, "N" if f else "N*m", f"interface {'force' if f else 'moment'} {name[7]} on the passive "
                         f"half (passive docking frame{'' if f else ', about its centre'})", "interface_loads"))
        elif name[0] in "FM" and len(name) == 2:
            f = name[0] == "F"
            out.append(C(name, "N" if f else "N*m", f"{'force' if f else 'moment'} on the hexapod base {name[1]} "
                         f"(active docking frame{'' if f else ', about the base plane centre'})", "base_loads"))
        elif name.startswith("leg_") and name.endswith("_force"):
            out.append(C(name, "N", f"leg {name[4]} force (tension +)", "mechanism", float(force_range)))
        elif name.startswith("leg_"):
            out.append(C(name, "m", f"leg {name[4]} stroke from neutral (+ longer)", "mechanism", leg_range))
        elif name.startswith("ring_couple_"):
            out.append(C(name, "N*m", f"couple {name[-1]} on the guide ring from its contact pairs along their forces "
                         "(world frame), which a pair's force at its point does not carry", "contact_forces"))
        elif name.startswith("ring_v"):
            out.append(C(name, "m/s", f"guide ring velocity {name[-1]} rel. the passive ring", "kinematics"))
        elif name in ("ring_x", "ring_y", "ring_z"):
            out.append(C(name, "m", f"guide ring {name[-1]} rel. the passive ring (passive frame)", "kinematics"))
        elif name.startswith("ring_"):
            out.append(C(name, "deg", f"guide ring {name[5:]} rel. the passive ring", "kinematics"))
        elif name.startswith("cm_v"):
            out.append(C(name, "m/s", f"active CoM velocity {name[-1]} rel. passive", "spacecraft"))
        else:
            out.append(C(name, *{
                "latches_engaged": ("", "soft-capture latches engaged", "mechanism", 3.0),
                "hooks_closed": ("", "structural hooks closed", "mechanism", 12.0),
                "retraction": ("m", "leg shortening commanded by the retraction", "mechanism"),
                "hook_gap": ("m", "largest interface gap at the hooks (active face ahead of the passive one)",
                             "kinematics"),
                "hook_gap_min": ("m", "smallest interface gap at the hooks (< 0: the faces overlap)", "kinematics"),
                "interface_tilt": ("deg", "angle between the two interface planes", "kinematics"),
                "iface_F": ("N", "interface force, resultant (on the passive half)", "interface_loads"),
                "iface_M": ("N*m", "interface moment, resultant (about the passive interface centre)",
                            "interface_loads"),
                "iface_F_soft": ("N", "interface force, resultant, until the hooks close (soft capture)",
                                 "interface_loads"),
                "iface_M_soft": ("N*m", "interface moment, resultant, until the hooks close (soft capture)",
                                 "interface_loads"),
                "iface_F_hard": ("N", "interface force, resultant, from the hooks' closing on (hard capture)",
                                 "interface_loads"),
                "iface_M_hard": ("N*m", "interface moment, resultant, from the hooks' closing on (hard capture)",
                                 "interface_loads"),
                "max_depth": ("m", "largest contact penetration", "contact_forces"),
                "kinetic_energy": ("J", "kinetic energy in the centre-of-mass frame", "energy"),
                "potential_energy": ("J", "stored energy: legs, stops, contacts, latches", "energy"),
                "dissipated_energy": ("J", "energy dissipated by dampers, brakes, friction, contacts", "energy"),
                "drive_work": ("J", "work done by the retraction drive", "energy"),
                "total_energy": ("J", "kinetic + potential + dissipated - drive work", "energy"),
            }[name]))
    return out


def _petal_wire(G, sign, k):
    """Outline and generators of petal k (0..2) of a half whose petals point to sign * x."""
    h, r0, lean = G["height"], G["root_radius"], math.radians(G["lean"])
    a0 = math.radians(G["first_angle"] + 120.0 * k) + (math.pi / 3 if sign > 0 else 0.0)
    w = Wire()

    def pt(u, f):
        half = math.radians(G["root_half_angle"] + u * (G["tip_half_angle"] - G["root_half_angle"]))
        a, r = a0 + f * half, r0 - u * h * math.tan(lean)
        return (sign * u * h, r * math.cos(a), r * math.sin(a))
    w.polyline([pt(0, -1), pt(1, -1), pt(1, 1), pt(0, 1)])
    w.polyline([pt(0, 0), pt(1, 0)])
    return w


def _ring_wire(rin, rout):
    return _ring_wire_at(rin, rout, 0.0)


def _ring_wire_at(rin, rout, x):
    w = Wire()
    for r in (rin, rout):
        a = np.linspace(0, 2 * np.pi, 49)
        w.polyline(np.stack([np.full_like(a, x), r * np.cos(a), r * np.sin(a)], 1))
    return w


def geometry(m: PeripheralModel) -> list[PartGeometry]:
    """Drawn parts in their body frames: both rings and their petals, latches and strikers, the legs as two
    telescoping halves (bodies leg_k_lower at the base end, leg_k_upper at the ring end, each along its +x)."""
    g = m.geo
    parts = []

    def add(name, body, wire, kind):
        p, l = wire.build()
        parts.append(PartGeometry(name, body, p, l, kind))
    add("passive_ring", "passive_craft", _ring_wire(g["rin"], g["rout"]), "ring")
    add("passive_interface", "passive_craft", _ring_wire(g["if_rin"], g["if_rout"]), "ring")
    add("active_interface", "active_craft", _ring_wire_at(g["if_rin"], g["if_rout"], -g["offset"]), "ring")
    add("active_ring", "ring", _ring_wire(g["rin"], g["rout"]), "ring")
    for k in range(3):
        add(f"active_petal_{k + 1}", "ring", _petal_wire(g["petals"], -1.0, k), "petal")
        add(f"passive_petal_{k + 1}", "passive_craft", _petal_wire(g["petals"], 1.0, k), "petal")
    for name, body in (("latches", "ring"), ("strikers", "passive_craft")):
        w = Wire()
        for p in g["latch"]:
            w.polyline([p + [0, 0, -0.03], p + [0, 0, 0.03]])
            w.polyline([p + [0, -0.03, 0], p + [0, 0.03, 0]])
        add(name, body, w, "latch")
    add("leg_base", "active_craft", Wire().circle(0.0, float(np.hypot(*g["base"][0, 1:]))), "leg")
    half = 0.6 * float(g["LN"][0])
    for k in range(6):
        add(f"leg_{k + 1}_cylinder", f"leg_{k + 1}_lower", Wire().polyline([(0, 0, 0), (half, 0, 0)]), "leg")
        add(f"leg_{k + 1}_rod", f"leg_{k + 1}_upper", Wire().polyline([(0, 0, 0), (half, 0, 0)]), "leg")
    return parts


def leg_poses(pos, q, m: PeripheralModel):
    """Positions and quaternions (K, 12, ...) of the legs' two halves from the active craft's and ring's poses."""
    g = m.geo
    RA, RR = to_matrix(q[:, 1]), to_matrix(q[:, 2])
    b = pos[:, 1, None, :] + np.einsum("kij,lj->kli", RA, g["base"])
    p = pos[:, 2, None, :] + np.einsum("kij,lj->kli", RR, g["ringp"])
    u = p - b
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    out_pos = np.concatenate([b, p], 1)
    ex = np.array([1.0, 0.0, 0.0])
    q_out = []
    for d in (u, -u):
        axis = np.cross(ex, d)
        s = np.linalg.norm(axis, axis=-1)
        ang = np.arctan2(s, d[..., 0])
        axis = np.where(s[..., None] > 1e-12, axis, np.array([0.0, 0.0, 1.0]))
        q_out.append(from_axis_angle_many(axis.reshape(-1, 3), ang.reshape(-1)).reshape(*d.shape[:2], 4))
    return out_pos, np.concatenate(q_out, 1)


def kernel_units(m: PeripheralModel, block: int = 500) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the compiled unit a run of model m calls (the step loop, its callees
    inlined): what solver/warmup.py compiles first, saying so."""
    import numba
    npair = len(PAIRS)
    outs = (np.zeros(block), np.zeros((block, D.NCH)), np.zeros((block, 3, 3)), np.zeros((block, 3, 4)),
            np.zeros((block, npair), np.uint8), np.zeros((block, npair, 3)), np.zeros((block, npair, 3)),
            np.zeros((block, npair, 3)), np.zeros((block, npair)), np.zeros((block, npair)))
    args = (m.s0.copy(), m.Z0.copy(), 0.0, m.step, 1, 1, m.P, *m.arrays, np.zeros((1024, 3)), np.zeros(1, np.int64),
            np.zeros(npair, np.int64), new_extrema(), *outs)
    return [("run_block", D.run_block, tuple(numba.typeof(a) for a in args))]


class PeripheralKernels(BlockKernels):
    """The peripheral's step kernel for the one runner: its extrema at the solver's rate, the legs' poses added to
    each frame, hard dock recorded as one more frame at that moment."""
    ok = D.ST_OK

    def __init__(self, m: PeripheralModel, spo: int, block: int):
        self.m, self.pairs, self.spo = m, PAIRS, spo
        npair = len(PAIRS)
        self.state = {"s": m.s0.copy(), "Z": m.Z0.copy(), "contact_prev": np.zeros(npair, np.int64)}
        self.ext = new_extrema()
        self.arrays = (m.P, *m.arrays)
        rows = block + 1          # room for the hard-dock frame after a full block
        self.outs = [np.zeros(rows), np.zeros((rows, D.NCH)), np.zeros((rows, 3, 3)), np.zeros((rows, 3, 4)),
                     np.zeros((rows, npair), np.uint8), np.zeros((rows, npair, 3)), np.zeros((rows, npair, 3)),
                     np.zeros((rows, npair, 3)), np.zeros((rows, npair)), np.zeros((rows, npair))]
        self.ev, self.n_ev, self.read = np.zeros((1024, 3)), np.zeros(1, np.int64), 0
        self.capture = (D.Z_CAPT, D.Z_TCAPT)
        self.written = 0

    def call(self, t: float, n: int, spo: int, outs):
        st = self.state
        return D.run_block(st["s"], st["Z"], t, self.m.step, n, spo, *self.arrays, self.ev, self.n_ev,
                           st["contact_prev"], self.ext, *outs)

    def advance(self, t: float, frames: int, last: bool = False):
        """`frames` frames from t in bounded kernel calls (a long frame's pieces note no contact); at hard dock one
        more frame, the state at that moment."""
        st = self.state
        piece = _piece(self.call, st["Z"], st["contact_prev"], self.ev, self.n_ev)
        status, t, rows, self.cancelled = frames_in_calls(self.call, t, frames - last, self.spo, self.outs, self.ok,
                                                          self.cancel, self.tick, piece=piece)
        if last and status == self.ok and not self.cancelled:
            status, t, r = self.call(t, 1, 0, [a[rows:] for a in self.outs])
            rows += r
        if status == D.ST_DONE:
            rows += self.call(t, 1, 0, [a[rows:] for a in self.outs])[2]
        return status, t, rows

    def frames(self, rows: int) -> tuple:
        """The block's first `rows` frames, the legs' two halves added to the bodies."""
        t, ch, pos, q, *rest = (a[:rows] for a in self.outs)
        lp, lq = leg_poses(pos, q, self.m)
        self.written += rows
        return (t, ch, np.concatenate([pos, lp], 1), np.concatenate([q, lq], 1), *rest)

    def forget_events(self):
        """After re-simulating to a branch time: its events and extrema forgotten (the branch's own steps only)."""
        super().forget_events()
        self.ext[:] = new_extrema()

    def add_event(self, w: RunWriter, row):
        te, kind, idx = float(row[0]), int(row[1]), int(row[2])
        if kind == D.EV_FIRST:
            w.add_event(te, "first_contact", PAIRS[idx].name, f"first contact: {PAIRS[idx].label}")
        else:
            w.add_event(te, EVENT_TEXT[kind][0], "", EVENT_TEXT[kind][1])

    def finish(self, w: RunWriter, status: int, t: float):
        """The extrema to the file; hard dock ends a run complete, a NaN state diverges it."""
        if self.written:
            w.set_extrema(self.ext, self.m.step)
        if status == D.ST_NAN:
            return status, "state became NaN or infinite"
        return self.ok, None


def run_peripheral(m: PeripheralModel, scenario_path, out_path, progress=None, t_end=None, cancel=None,
                   block: int = 500, live: bool = False, start=None, end_uncaptured_at: float = math.inf) -> Path:
    """Simulate to t_end (or hard dock) into a run file through the one runner (solver.simulate.run_model);
    SolverDiverged on a NaN state, RunCancelled on cancel; `start`: a branch from another run's stored state."""
    if start is None:
        _refuse_overlap(m, scenario_path)
    return run_model(m, scenario_path, out_path, lambda spo, blk: PeripheralKernels(m, spo, blk),
                     ("peripheral", SOLVER_VERSION), channel_infos(m), BODIES, PAIRS, geometry(m),
                     {"s": D.NS, "Z": D.NZ}, progress=progress, t_end=t_end, cancel=cancel, live=live, start=start,
                     block=block, extrema=True, end_uncaptured_at=end_uncaptured_at)


def new_extrema() -> np.ndarray:
    """The kernels' extrema table (rows min, time of min, max, time of max; one column per channel), empty."""
    ext = np.empty((4, D.NCH))
    ext[0], ext[2] = np.inf, -np.inf
    ext[1], ext[3] = np.nan, np.nan
    return ext


def _piece(call, Z, prev, ev, n_ev):
    """`call` for a piece of a frame (solver.simulate.frames_in_calls): its recorded start is no frame, so the contact
    flags and first contact it would note are put back (the kernel notes them only where it records)."""
    def piece(t, k, spo, outs):
        saved, first, n0 = prev.copy(), Z[D.Z_FIRST], int(n_ev[0])
        res = call(t, k, spo, outs)
        prev[:], Z[D.Z_FIRST] = saved, first
        keep = [i for i in range(n0, int(n_ev[0])) if int(ev[i, 1]) != D.EV_FIRST]
        ev[n0:n0 + len(keep)] = ev[keep]
        n_ev[0] = n0 + len(keep)
        return res
    return piece


def _refuse_overlap(m: PeripheralModel, scenario_path):
    """ScenarioError when the two halves touch at the start (a contact force before the run begins)."""
    from solver.scenario import ScenarioError
    rec = np.zeros((D.NPAIR, 17))
    D.evaluate(m.s0.copy(), m.Z0.copy(), 0.0, m.P, *m.arrays, np.zeros(D.NS), np.zeros(D.NCH), rec, True, False)
    touching = [(PAIRS[j].name, rec[j, 10]) for j in range(D.NPAIR) if rec[j, 0] > 0.5]
    if touching:
        name, depth = max(touching, key=lambda x: x[1])
        raise ScenarioError(scenario_path, "initial.face_gap", f"the two halves touch at the start ({name}, "
                            f"{depth * 1e3:.3g} mm deep): increase it")
