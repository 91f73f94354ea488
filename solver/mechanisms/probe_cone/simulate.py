"""The probe-cone's run: its channels, drawn parts, kernel units and events, through the one runner
(solver.simulate.run_kernels)."""
from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np

from solver.contact import BODIES as CONTACT_BODIES
from solver.core import planar_chain as PC
from solver.contact.pairset import PAR_DMAX
from solver.mechanisms.probe_cone import dynamics as D
from solver.mechanisms.probe_cone.model import Model
from solver.runfile import ChannelInfo, ContactPairInfo, FlexiblePart, PartGeometry, RunWriter
from solver.simulate import BlockKernels, run_kernels, run_plan
from solver.wireframe import Wire

SOLVER_VERSION = "dockmnemo-solver 2 (CRBA + nut equation, RK4, contact library)"
BODIES = list(CONTACT_BODIES)
# solver-side contact reported after the library's pairs: the guide surface pressing the latches in
LATCH_NECK = ContactPairInfo("latch_neck", "latches", "socket", "latch springs on the cone, socket neck, slot floors")
EVENT_KIND = {D.EV_FIRST: "first_contact", D.EV_BEGIN: "contact_begin", D.EV_END: "contact_end",
              D.EV_CAPTURE: "capture"}
SENSOR_TEXT = {D.SENSOR_CONE: ("cone_contact", "head sensor 24: contact with the receiving cone"),
               D.SENSOR_BOTTOM: ("socket_bottom", "head sensor 25: contact with the socket bottom")}
PHASE_TEXT = {D.PHASE_DRIVE: ("retraction", "drive on: retraction of the probe starts (stop clutches released)"),
              D.PHASE_PUSHERS: ("pushers", "spring pushers touch the passive docking plane")}
N_CHILD = 4     # kernel_units' first units (the contact chain pair_eval .. pairs_step, and record): a second process
                # compiles them while this one compiles post_step, cyclogram, trig_table and `evaluate`


def channel_infos(m: Model) -> list[ChannelInfo]:
    """Channel descriptions in the kernel's output order (names shared with tests/synthetic_run.py)."""
    C = ChannelInfo
    st, pl = m.strokes, m.places
    spec = {
        "probe_pitch": ("deg", "probe axis pitch to cone axis", "kinematics"),
        "probe_yaw": ("deg", "probe axis yaw to cone axis", "kinematics"),
        "att_roll": ("deg", "active roll rel. passive", "spacecraft"),
        "att_pitch": ("deg", "active pitch rel. passive", "spacecraft"),
        "att_yaw": ("deg", "active yaw rel. passive", "spacecraft"),
        "axial_spring": ("m", "axial damper spring mechanism stroke", "axial_damper", st["axial_spring"]),
        "friction_brake": ("m", "axial damper friction brake (FrT2 in the modified damper) slip (probe stroke)",
                           "axial_damper", st["friction_brake"]),
        "axial_magnetic_brake": ("rpm", "axial damper magnetic brake rotor rate", "axial_damper", st["rpm"]),
        "spring_mechanism_1": ("m", "lateral spring mechanism 1", "lateral_damper", st["lateral"], pl["spring_mechanism_1"]),
        "spring_mechanism_2": ("m", "lateral spring mechanism 2", "lateral_damper", st["lateral"], pl["spring_mechanism_2"]),
        "magnetic_brake_1": ("rpm", "lateral magnetic brake 1 rotor rate", "lateral_damper", st["lat_rpm"], pl["magnetic_brake_1"]),
        "magnetic_brake_2": ("rpm", "lateral magnetic brake 2 rotor rate", "lateral_damper", st["lat_rpm"], pl["magnetic_brake_2"]),
        "housing_angle_y": ("deg", "housing rotation about y", "mechanism"),
        "housing_angle_z": ("deg", "housing rotation about z", "mechanism"),
        "probe_bend_y": ("deg", "probe bending about y", "mechanism"),
        "probe_bend_z": ("deg", "probe bending about z", "mechanism"),
        "probe_torsion": ("deg", "probe torsion", "mechanism"),
        "probe_stroke": ("m", "probe stroke-in", "mechanism", st["stroke"]),
        "head_offset_y": ("m", "head lateral offset from housing axis y", "mechanism"),
        "head_offset_z": ("m", "head lateral offset from housing axis z", "mechanism"),
        "head_near_socket": ("", "head near socket (latches drawn)", "mechanism"),
        "lever_extension": ("", "alignment lever swing (cam): 0 folded, 1 at angle_extended (hard-dock angle), > 1 beyond",
                            "mechanism", 1.0),
        "kinetic_energy": ("J", "kinetic energy in the centre-of-mass frame", "energy"),
        "potential_energy": ("J", "stored energy: springs, hysteresis, contacts, stops", "energy"),
        "dissipated_energy": ("J", "energy dissipated by brakes, dampers, friction, contacts", "energy"),
        "total_energy": ("J", "kinetic + potential + dissipated", "energy"),
        "head_axial_force": ("N", "contact force on the head along the probe axis", "axial_damper", st["head_force"]),
        "latches_engaged": ("", "latches engaged behind the socket shoulder", "mechanism"),
        "max_depth": ("m", "largest contact penetration", "contact_forces"),
        "momentum_x": ("N*s", "total linear momentum x (world)", "spacecraft"),
        "momentum_y": ("N*s", "total linear momentum y (world)", "spacecraft"),
        "momentum_z": ("N*s", "total linear momentum z (world)", "spacecraft"),
        "crank_angle_1": ("deg", "lateral magnetic brake 1 crank angle", "lateral_damper", st["crank"],
                          pl["magnetic_brake_1"]),
        "crank_angle_2": ("deg", "lateral magnetic brake 2 crank angle", "lateral_damper", st["crank"],
                          pl["magnetic_brake_2"]),
        "nut_rate": ("rpm", "ball-screw nut rate", "axial_damper", st["nut_rpm"]),
        "latch_extension": ("", "extension of the most pressed-in latch (1 = all sprung out)", "mechanism", 1.0),
        **cyclogram_channel_spec(m),
    }
    out = []
    for name in D.CHANNELS:
        if name in spec:
            v = spec[name]
            out.append(C(name, v[0], v[1], v[2], *(v[3:])))
        elif name.startswith("head_v"):
            out.append(C(name, "m/s", f"probe head velocity {name[-1]} rel. cone", "kinematics"))
        elif name.startswith("head_"):
            out.append(C(name, "m", f"probe head {name[-1]} (cone frame)", "kinematics"))
        elif name.startswith("cm_v"):
            out.append(C(name, "m/s", f"active CoM velocity {name[-1]} rel. passive", "spacecraft"))
        elif name.startswith("rate_"):
            out.append(C(name, "deg/s", f"active angular rate {name[-1]} rel. passive", "spacecraft"))
        elif name[0] == "F":
            out.append(C(name, "N", f"force on mechanism base {name[1]} (active docking frame)", "base_loads"))
        elif name[0] == "M":
            out.append(C(name, "N*m", f"moment on mechanism base {name[1]} about the joint centre", "base_loads"))
        else:
            raise AssertionError(name)
    return out + appendage_channels(m)


def appendage_channels(m: Model) -> list[ChannelInfo]:
    """The rod chain's channels after the kernel's (`dynamics._record_appendage`'s order), as the rods type names
    them with the appendage's name before: chord angles, end slopes, hinge angles and moments, rod-end moments."""
    a = m.appendage
    if a is None:
        return []
    n, p, C = a.RODS.shape[0], a.name, ChannelInfo
    r, g = range(1, n + 1), "mechanism"
    return ([C(f"{p}_phi{k}", "deg", f"{p}: rod {k} chord angle (from the chain's axis)", g) for k in r]
            + [C(f"{p}_alpha{k}", "deg", f"{p}: rod {k} end slope at its root", g) for k in r]
            + [C(f"{p}_beta{k}", "deg", f"{p}: rod {k} end slope at its tip", g) for k in r]
            + [C(f"{p}_hinge{k}_angle", "deg", f"{p}: hinge {k} angle", g, a.hinge_range_deg[k]) for k in range(n)]
            + [C(f"{p}_hinge{k}_moment", "N*m", f"{p}: hinge {k} moment", g, a.moment_range[k]) for k in range(n)]
            + [C(f"{p}_M_root{k}", "N*m", f"{p}: rod {k} bending moment at its root", g) for k in r]
            + [C(f"{p}_M_tip{k}", "N*m", f"{p}: rod {k} bending moment at its tip", g) for k in r])


def appendage_parts(m: Model) -> list[FlexiblePart]:
    """The chain's rods as flexible parts on the active craft (their deflection lines, docking frame)."""
    a = m.appendage
    if a is None:
        return []
    P = a.points_per_rod
    lines = np.array([[i, i + 1] for i in range(P - 1)], np.int32)
    return [FlexiblePart(f"{a.name}_rod{k + 1}", "active_craft", P, lines, "rod", f"{a.name}: rod {k + 1}")
            for k in range(a.RODS.shape[0])]


def cyclogram_channel_spec(m: Model) -> dict:
    """Channels of the drive, pushers, FrT1 and the movable limiter; a device channel sits in the axial_damper
    group (drawn as a bar) only when the variant has the device."""
    st = m.strokes
    fr1 = "axial_damper" if st["friction_brake_1"] > 0 else "mechanism"
    lim = "axial_damper" if m.variant == "movable_limiter" else "mechanism"
    spec = {}
    if st["axial_spring"] <= 0:          # no spiral spring mechanism (modified damper): not drawn as a device
        spec["axial_spring"] = ("m", "axial damper spring mechanism (absent in this variant)", "mechanism")
    if m.TMA[:, 1].max() <= 0:           # no axial magnetic brakes
        spec["axial_magnetic_brake"] = ("rpm", "axial magnetic brake rotor rate (absent in this variant)", "mechanism")
    return {
        **spec,
        "drive_rate": ("m/s", "probe retraction rate by the drive", "mechanism"),
        "drive_work": ("J", "work done by the drive", "energy"),
        "retraction": ("m", "probe retraction by the drive (drive output angle)", "mechanism"),
        "pusher_force": ("N", "spring pushers on the docking ring, total", "contact_forces"),
        "dock_gap": ("m", "largest docking-plane gap at the pushers", "kinematics"),
        "XLimD": ("m", "movable limiter spring compression", lim, st["XLimD"] if st["XLimD"] > 0 else math.nan),
        "limiter_spring_force": ("N", "movable limiter spring guides, total", "mechanism"),
        "friction_brake_1": ("m", "first friction brake FrT1 slip (probe stroke)", fr1,
                             st["friction_brake_1"] if st["friction_brake_1"] > 0 else math.nan),
        "chain_torque": ("N*m", "friction-chain torque on the nut", "mechanism"),
        "cyclogram_phase": ("", "0 approach, 1 captured, 2 retraction, 3 hard dock", "mechanism", 3.0),
    }


def geometry(m: Model) -> list[PartGeometry]:
    """Drawn parts in their body frames: the contact library's wireframes, the probe rod riding on the head
    (it slides into the housing with the stroke) and the lateral damper struts."""
    g = m.geo
    parts = [p for p in m.cgeo.parts if p.name != "probe"]

    def add(name, body, wire, kind="mechanism", vis=""):
        p, l = wire.build()
        parts.append(PartGeometry(name, body, p, l, kind, vis))

    add("probe", "probe_head", Wire().frustum(g["rh"], g["rod_radius"], g["L0"], g["rod_radius"], n_generators=4,
                                              n_circles=2))
    gx = g["goff"]
    lat = Wire()
    for k in range(4):
        row = g["LAT"][k]
        lat.polyline([row[D.L_ATT:D.L_ATT + 3] + [gx, 0, 0], row[D.L_BASE:D.L_BASE + 3] + [gx, 0, 0]])
    add("lateral_damper", "active_craft", lat)
    return parts


def kernel_args(m: Model) -> tuple:
    """The contact geometry arrays `run_block` takes after the damper tables."""
    g = m.cgeo
    return g.prim, g.pint, g.pairs, g.ppar, g.work


def _arg_types(m) -> dict:
    """numba types of the arrays and scalars the kernels take, by parameter name (as `run_scenario` and
    `run_block` allocate them)."""
    import numba
    from numba.core import types

    ty = numba.typeof
    f1, f2, f3 = ty(np.zeros(1)), ty(np.zeros((1, 1))), ty(np.zeros((1, 1, 1)))
    u1, u2, i1 = ty(np.zeros(1, np.uint8)), ty(np.zeros((1, 1), np.uint8)), ty(np.zeros(1, np.int64))
    gprim, gpint, gpairs, gppar, gwork = (ty(a) for a in kernel_args(m))
    t = {"s": ty(m.s0.copy()), "Z": ty(m.Z0.copy()), "t0": types.float64, "t": types.float64, "h": types.float64,
         "n_out": types.int64, "spo": types.int64, "row": types.int64,
         "P": ty(m.P), "LAT": ty(m.LAT), "TLS": ty(m.TLS), "TAX": ty(m.TAX), "TMA": ty(m.TMA), "TML": ty(m.TML),
         "gprim": gprim, "gpint": gpint, "gpairs": gpairs, "gppar": gppar, "gwork": gwork,
         "c_diag": f1, "prev_act": i1, "ev": f2, "n_ev": i1, "out_t": f1, "out_ch": f2, "out_pos": f3, "out_q": f3,
         "out_act": u2, "out_f": f3, "out_p": f3, "out_n": f3, "out_d": f2, "out_vn": f2,
         "W": f2, "JV": f3, "JW": f3, "cpos": f2, "crot": f3, "cvel": f2, "cw": f2, "cst": f1, "c_act": u1,
         "c_dep": f1, "c_pnt": f2, "c_nrm": f2, "c_frc": f2, "c_vn": f1, "obs": f1, "pose": f2,
         "k1": f1, "k2": f1, "k3": f1, "k4": f1, "st": f1, "ds": f1, "full": types.boolean, "pairs_at": types.int64,
         "app_at": types.int64, "AW": f2}
    # the pair set's names for the same arrays (`evaluate` passes its own scratch rows as near and skip)
    t.update(prim=gprim, pint=gpint, pairs=gpairs, ppar=gppar, work=gwork, pos=f2, rot=f3, vel=f2, omega=f2,
             state=f1, active=u1, depth=f1, point=f2, normal=f2, force=f2, diag=f1, near=f1, first=types.boolean,
             skip=f1, hold=types.float64, mode=types.int64, k=types.int64, j=types.int64,
             w=gwork, ka=types.int64, ia=types.int64, kb=types.int64, ib=types.int64)
    return t


def kernel_units(m) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the compiled units of a run of model m, callees first."""
    from solver.contact import pairset as PS
    from solver.contact.kernels import pair_eval
    t = _arg_types(m)
    out = []
    units = [pair_eval, PS._pair_loop, PS.pairs_step, D.record,                     # N_CHILD: the second process
             D.post_step, D.cyclogram, D.trig_table, D.evaluate, D._steps]
    if getattr(m, "appendage", None) is not None:    # a rod chain on the craft: its hook, compiled only then
        from solver.mechanisms.probe_cone import appendage as A
        units.insert(N_CHILD, A.appendage_step)
    for disp in units:
        names = list(inspect.signature(disp.py_func).parameters)
        out.append((disp.py_func.__name__, disp, tuple(t[n] for n in names)))
    return out


class ProbeConeKernels(BlockKernels):
    """The probe-cone's step kernel over one run's arrays (its own argument order, events and end statuses)."""
    ok = D.ST_OK
    done = D.ST_DONE      # hard dock inside a long frame ends the run with that frame's row
    last_spo = 1

    def __init__(self, m: Model, pairs, spo: int, block: int):
        self.m, self.pairs, self.spo = m, pairs, spo
        npair = len(pairs)
        self.state = {"s": m.s0.copy(), "Z": m.Z0.copy(), "contact_prev": np.zeros(npair, np.int64)}
        self.arrays = (m.P, m.LAT, m.TLS, m.TAX, m.TMA, m.TML, *kernel_args(m))
        self.appendage = _appendage_args(m)
        nch = D.NCH + len(appendage_channels(m))
        self.outs = [np.zeros(block), np.zeros((block, nch)), np.zeros((block, 6, 3)), np.zeros((block, 6, 4)),
                     np.zeros((block, npair), np.uint8), np.zeros((block, npair, 3)), np.zeros((block, npair, 3)),
                     np.zeros((block, npair, 3)), np.zeros((block, npair)), np.zeros((block, npair))]
        self.ev, self.n_ev, self.read = np.zeros((16384, 3)), np.zeros(1, np.int64), 0
        self.diag = np.zeros(2)
        self.capture = (D.Z_CAPT, D.Z_TCAPT)

    def call(self, t: float, n: int, spo: int, outs):
        st = self.state
        out = D.run_block(st["s"], st["Z"], t, self.m.step, n, spo, *self.arrays, self.diag, st["contact_prev"],
                          self.ev, self.n_ev, *outs, appendage=self.appendage)
        if self.appendage is not None:       # the chain's angles, radians in the kernel, in degrees
            n_r = self.m.appendage.RODS.shape[0]
            outs[1][:out[2], D.NCH:D.NCH + 4 * n_r] *= 180.0 / math.pi
        return out

    def flexible_frames(self, rows: int) -> dict | None:
        """The chain's rods' deflection lines (active docking frame) of the block's frames, or None."""
        a = self.m.appendage
        if a is None:
            return None
        n = a.RODS.shape[0]
        ch = np.radians(self.outs[1][:rows, D.NCH:D.NCH + 3 * n])
        pts = np.zeros((rows, n, a.points_per_rod, 3))
        PC.deflection_lines(np.ascontiguousarray(ch[:, :n]), np.ascontiguousarray(ch[:, n:2 * n]),
                            np.ascontiguousarray(ch[:, 2 * n:]), a.RODS, 0.0, 0.0, pts)
        xyz = a.root + pts[..., :1] * a.axis + pts[..., 1:2] * np.cross(a.normal, a.axis)
        return {f"{a.name}_rod{k + 1}": xyz[:, k] for k in range(n)}

    def add_event(self, w: RunWriter, row):
        _add_kernel_event(w, row, self.pairs)

    def finish(self, w: RunWriter, status: int, t: float) -> tuple[int, str | None]:
        """(status, why it diverged or None) at the run's end; hard dock ends a run complete."""
        if status == D.ST_DONE:          # hard dock: the cyclogram's terminal event; the run is complete
            status = D.ST_OK
        if self.n_ev[0] >= self.ev.shape[0]:
            w.add_event(t, "diagnostic", "", f"event table full after {self.ev.shape[0]} events; later events not "
                        f"recorded")
        if status == D.ST_OK:
            return status, None
        k = int(self.diag[0])
        return status, {D.ST_NAN: "state became NaN or infinite",
                        D.ST_DEPTH: f"contact penetration exceeded: pair {self.pairs[k].name!r} at "
                                    f"{self.diag[1] * 1e3:.3f} mm, admissible "
                                    f"{self.m.cgeo.ppar[k, PAR_DMAX] * 1e3:.3f} mm"}.get(status, "solver stopped")


def run_probe_cone(m: Model, scenario_path, out_path, progress=None, t_end=None, cancel=None, live: bool = False,
                   start=None, block: int = 1000, end_uncaptured_at: float = math.inf) -> Path:
    """Simulate a probe-cone scenario into a run file (solver.simulate.run_scenario checked the times)."""
    from solver.warmup import compile_kernels
    compile_kernels(m)        # load the kernels, or compile them with a lock on the cache (once per cache directory)
    T = float(t_end) if t_end is not None else m.duration
    t0 = float(start.t) if start is not None else 0.0
    spo, n_total, meta = run_plan(m, T, t0, start, "probe_cone", SOLVER_VERSION)
    pairs = [*m.cgeo.pair_info, LATCH_NECK]
    w = RunWriter(Path(out_path), meta, channel_infos(m), BODIES, pairs, geometry(m), parameters_toml=m.text,
                  contact_detail=True, state_sizes={"s": len(m.s0), "Z": D.NZ, "contact_prev": len(pairs)}, live=live,
                  contact_statistics=True, **({"flexible": appendage_parts(m)} if m.appendage is not None else {}))
    return run_kernels(w, ProbeConeKernels(m, pairs, spo, block), pairs, m.output_step, scenario_path, T, t0,
                       n_total, start=start, progress=progress, cancel=cancel, block=block,
                       end_uncaptured_at=end_uncaptured_at)


def _appendage_args(m: Model):
    """(address of the compiled hook, AW) of the scenario's rod chain on the craft (`D.run_block`'s
    appendage), or None."""
    a = m.appendage
    if a is None:
        return None
    from solver.mechanisms.probe_cone import appendage as A
    from solver.pointer_call import status_address
    t = _arg_types(m)
    addr = status_address(A.appendage_step, tuple(t[k] for k in ("s", "ds", "W", "AW")))
    return addr, A.pack(a.RODS, a.formulation == "reduced", a.ra, a.e1, a.e2)


def _add_kernel_event(w: RunWriter, row, pairs):
    """First contact, capture, sensors, phases and hard dock from the kernel's event table (time, kind, index).

    Contact begin/end rows come from the EventAccumulator, with each interval's statistics."""
    te, kind, pair = row
    kind = int(kind)
    if kind == D.EV_CAPTURE:
        w.add_event(float(te), "capture", "", "capture: all latches engaged behind the socket shoulder")
    elif kind == D.EV_FIRST:
        info = pairs[int(pair)]
        w.add_event(float(te), EVENT_KIND[kind], info.name, f"first contact: {info.label}")
    elif kind == D.EV_SENSOR:
        w.add_event(float(te), "sensor", *SENSOR_TEXT[int(pair)])
    elif kind == D.EV_PHASE:
        w.add_event(float(te), "phase", *PHASE_TEXT[int(pair)])
    elif kind == D.EV_RELEASE:
        w.add_event(float(te), "sensor", f"latch_{int(pair) + 1}",
                    f"latch {int(pair) + 1} released: its tip left the slot (pressed back in by the socket bore)")
    elif kind == D.EV_HARD:
        w.add_event(float(te), "hard_dock", "", "hooks closed: hard dock (docking planes within the hook gap)")
