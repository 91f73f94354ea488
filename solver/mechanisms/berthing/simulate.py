"""Berthing runs: channels, bodies, parts and contact pairs of the arm and the receptacle, the kernels through the one
runner (scripted), and an operator session locked to wall time whose commands come from a plain array."""
from __future__ import annotations

import math
import threading
import time
from functools import partial

import numpy as np

from solver.mechanisms.berthing import dynamics as D
from solver.mechanisms.berthing.model import NA, NCMD, NS, NZ, PAIR_NAMES, BerthingModel
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry
from solver.simulate import BlockKernels, run_model
from solver.wireframe import Wire

SOLVER = ("berthing", "dockmnemo berthing 1")
JOINT_NAMES = ("shoulder roll", "shoulder yaw", "shoulder pitch", "elbow pitch", "wrist pitch", "wrist yaw",
               "wrist roll")
CHANNELS = (*(f"joint_{j + 1}" for j in range(NA)), *(f"tau_{j + 1}" for j in range(NA)), "contact_force",
            "contact_axial", "contact_lateral", "insertion", "lateral_error", "tilt", "brake_slip", "cmd_mode",
            "brakes", "manipulability", *(f"cmd_{j + 1}" for j in range(NA)), "kinetic_energy", "potential_energy",
            "dissipated_energy", "drive_work", "total_energy", "p_x", "p_y", "p_z", "L_x", "L_y", "L_z")
BODIES = ("station", *(f"link_{j + 1}" for j in range(NA)))
PAIRS = tuple(ContactPairInfo(n, "probe_head" if n.startswith("head") else "probe_shaft",
                              "receptacle_" + n.split("_")[1], label) for n, label in PAIR_NAMES)
STOPPED = 7          # advance's status when the operator ends the session (not a kernel status)
EVENTS = {0: ("first_contact", "first contact: {pair}"), 1: ("capture", "probe inserted to the capture depth")}


def channel_infos(m: BerthingModel) -> list[ChannelInfo]:
    C = ChannelInfo
    rng = math.degrees(m.DRV[0, 9])
    tl = float(m.DRV[0, 5])
    out = [C(f"joint_{j + 1}", "deg", f"joint {j + 1}: {JOINT_NAMES[j]}", "mechanism", rng) for j in range(NA)]
    out += [C(f"tau_{j + 1}", "N*m", f"gear torque, joint {j + 1}", "mechanism", tl) for j in range(NA)]
    out += [C("contact_force", "N", "probe on receptacle, |F|", "contact_forces"),
            C("contact_axial", "N", "probe on receptacle, along the axis", "contact_forces"),
            C("contact_lateral", "N", "probe on receptacle, across the axis", "contact_forces"),
            C("insertion", "m", "probe head past the bore entry", "kinematics", 0.6),
            C("lateral_error", "m", "probe head off the receptacle axis", "kinematics", 0.01),
            C("tilt", "deg", "probe axis to receptacle axis", "kinematics", 5.0),
            C("brake_slip", "rad", "joint brakes' summed slip", "mechanism"),
            C("cmd_mode", "", "command: 0 joint rates, 1 payload-frame rates", "mechanism", 1.0),
            C("brakes", "", "brakes applied", "mechanism", 1.0),
            C("manipulability", "m^3", "sqrt det J J^T at the probe head", "mechanism")]
    out += [C(f"cmd_{j + 1}", "SI", f"command {j + 1} (payload frame: vx vy vz m/s, wx wy wz rad/s; joint: rad/s)",
              "mechanism") for j in range(NA)]
    out += [C(n, "J", n.replace("_", " "), "energy") for n in CHANNELS[31:36]]
    out += [C(n, "N*s" if n.startswith("p") else "N*m*s", f"momentum {n}", "spacecraft") for n in CHANNELS[36:]]
    return out


def parts(m: BerthingModel) -> list[PartGeometry]:
    g = m.geometry
    out = []
    off = [*g["offsets"][1:], g["tool"]]
    for j in range(NA):
        w = Wire().polyline([(0, 0, 0), tuple(off[j])])
        if j in (3, 4):
            L = float(np.linalg.norm(off[j]))
            w.extend(Wire().frustum(0.0, 0.175, L, 0.175, n_generators=6, n_circles=2, n=16))
        out.append(PartGeometry(f"arm_{j + 1}", f"link_{j + 1}", *w.build(), "arm"))
    pay = g["pay"]
    u = np.asarray(pay["axis"], float)
    u /= np.linalg.norm(u)
    R = _frame_x_to(u)
    L, r = pay["length"], pay["diameter"] / 2
    body = Wire().frustum(-L / 2, r, L / 2, r, n_generators=8, n_circles=3, n=32).transformed(R, pay["com"])
    out.append(PartGeometry("payload", f"link_{NA}", *body.build(), "payload"))
    Rp = _frame_x_to(np.asarray(g["ex"], float))
    tip, heel = np.asarray(g["tip"]), np.asarray(g["heel"])
    shaft = Wire().polyline([tuple(heel - 0.3 * np.asarray(g["ex"])), tuple(tip)])
    out.append(PartGeometry("probe_shaft", f"link_{NA}", *shaft.extend(Wire().sphere(g["r"], tuple(heel))).build(),
                            "probe"))
    out.append(PartGeometry("probe_head", f"link_{NA}", *Wire().sphere(g["r"], tuple(tip)).build(), "probe"))
    del Rp
    Ra = _frame_x_to(np.asarray(g["axis"], float))
    fd, bl = g["fd"], g["bl"]
    out.append(PartGeometry("receptacle_funnel", "station",
                            *Wire().frustum(0.0, g["fr"], fd, g["rb"]).transformed(Ra, g["entry"]).build(), "cone"))
    out.append(PartGeometry("receptacle_bore", "station",
                            *Wire().frustum(fd, g["rb"], fd + bl, g["rb"]).transformed(Ra, g["entry"]).build(), "cone"))
    out.append(PartGeometry("receptacle_bottom", "station",
                            *Wire().circle(fd + bl, g["rb"]).transformed(Ra, g["entry"]).build(), "cone"))
    out.append(PartGeometry("receptacle_mouth", "station",
                            *Wire().circle(fd, g["rb"]).transformed(Ra, g["entry"]).build(), "cone"))
    return out


def _frame_x_to(u) -> np.ndarray:
    """A rotation taking +x to the unit vector u."""
    u = np.asarray(u, float) / np.linalg.norm(u)
    a = np.array([0, 0, 1.0]) if abs(u[2]) < 0.9 else np.array([0, 1.0, 0])
    y = np.cross(a, u)
    y /= np.linalg.norm(y)
    return np.column_stack([u, y, np.cross(u, y)])


def kernel_arrays(m: BerthingModel, CMD: np.ndarray) -> tuple:
    return (m.P, m.JOINT, m.DRV, m.SPH, m.ROWS, m.RINT, m.PROF, CMD, m.nb)


def kernel_units(m: BerthingModel) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the one compiled unit a berthing run calls (the step loop, its callees
    inlined), for solver.warmup.compile_kernels."""
    import numba
    n, nb, npair = 1, len(BODIES), len(PAIRS)
    outs = (np.zeros(n), np.zeros((n, len(CHANNELS))), np.zeros((n, nb, 3)), np.zeros((n, nb, 4)),
            np.zeros((n, npair), np.uint8), np.zeros((n, npair, 3)), np.zeros((n, npair, 3)), np.zeros((n, npair, 3)),
            np.zeros((n, npair)), np.zeros((n, npair)))
    args = (m.s0, m.Z0, 0.0, m.step, 1, 1, *kernel_arrays(m, np.zeros(NCMD)), np.zeros((1, 3)), np.zeros(1, np.int64),
            np.zeros(npair, np.int64), *outs)
    return [("berthing.run_block", D.run_block, tuple(numba.typeof(a) for a in args))]


class OperatorLink:
    """The plain interface between an operator's hand controllers and a running session (no Qt): `set(...)` puts the
    payload-frame rates (fractions of full deflection) and brakes; the kernels read the command before each block.
    The runner writes back the real-time factor achieved, the solver's headroom and whether it fell behind."""

    def __init__(self, translation: float, rotation: float, speed: float = 1.0):
        self.lock = threading.Lock()
        self.full = np.array([translation] * 3 + [rotation] * 3)   # m/s, rad/s at full deflection
        self.deflection = np.zeros(6)
        self.brakes = False
        self.speed = speed
        self.stop = False
        self.rt_factor, self.headroom, self.behind, self.t = math.nan, math.nan, False, 0.0

    def set(self, deflection, brakes: bool = False):
        with self.lock:
            self.deflection[:] = np.clip(np.asarray(deflection, float), -1.0, 1.0)
            self.brakes = bool(brakes)

    def command(self) -> np.ndarray:
        """The CMD array of this moment: payload-frame mode, rates rounded to float32 (what the run file stores, so
        a recorded session replays exactly), brakes."""
        with self.lock:
            v = (self.deflection * self.full).astype(np.float32).astype(np.float64)
            return np.array([1.0, *v, 0.0, 1.0 if self.brakes else 0.0])


class BerthingKernels(BlockKernels):
    """The engine's BlockKernels with, in an operator session, the block cut into pieces of `piece` frames: before
    each the operator's command is copied into the kernels' command array, after each the loop waits for wall time.
    The real-time factor achieved and the headroom (simulated time over the wall time the loop worked, the writer
    included) go back through the link; falling behind wall time is written as an event."""

    def __init__(self, *args, link: OperatorLink | None = None, CMD=None, piece: int = 5, **kw):
        super().__init__(*args, **kw)
        self.link, self.CMD, self.piece = link, CMD, piece
        self.t_wall0 = None
        self.rate = 0.0                     # smoothed wall seconds of work per simulated second
        self.behind_events: list[float] = []
        self.t_behind = -math.inf

    def advance(self, t: float, frames: int, last: bool = False):
        if self.link is None:
            return super().advance(t, frames, last)
        link, done, status, outs = self.link, 0, self.ok, self.outs
        if self.t_wall0 is None:          # (the kernels were compiled before: run_model's compile_kernels)
            self.t_wall0, self.t_sim0 = time.perf_counter(), t
            self.t_wake = self.t_wall0
        try:
            while done < frames and status == self.ok:
                n = min(self.piece, frames - done)
                self.CMD[:] = link.command()
                self.outs = [a[done:] for a in outs]
                t_prev = t
                status, t, rows = BlockKernels.advance(self, t, n, last and done + n == frames)
                done += rows
                now = time.perf_counter()
                if t > t_prev:
                    r = (now - self.t_wake) / (t - t_prev)
                    self.rate = r if self.rate == 0.0 else 0.95 * self.rate + 0.05 * r
                lag = (now - self.t_wall0) - (t - self.t_sim0) / link.speed
                if lag < 0:
                    time.sleep(-lag)
                elif lag > 0.25 and t - self.t_behind > 5.0:
                    self.behind_events.append(t)
                    self.t_behind = t
                self.t_wake = time.perf_counter()
                wall = self.t_wake - self.t_wall0
                link.t = t
                link.rt_factor = (t - self.t_sim0) / wall if wall > 0 else math.nan
                link.headroom = 1.0 / self.rate if self.rate > 0 else math.nan
                link.behind = lag > 0.25
                if link.stop and status == self.ok:    # the operator ended the session: a complete run
                    status = STOPPED
        finally:
            self.outs = outs
        return status, t, done

    def finish(self, w, status: int, t: float):
        if status == STOPPED:
            w.add_event(t, "phase", "", f"session ended by the operator at t = {t:.2f} s")
            return self.ok, None
        return super().finish(w, status, t)

    def new_events(self, w):
        super().new_events(w)
        for tb in self.behind_events:
            w.add_event(tb, "diagnostic", "", f"behind wall time at t = {tb:.2f} s (solver slower than real time)")
        self.behind_events = []


def run_berthing(m: BerthingModel, scenario_path, out_path, link: OperatorLink | None = None, **options):
    """A berthing run through the one runner; with `link`, an operator session locked to wall time."""
    CMD = np.zeros(NCMD)
    if link is not None:
        CMD[:] = link.command()
    kernels = partial(BerthingKernels, D.run_block, m, kernel_arrays(m, CMD), shapes=(len(CHANNELS), len(BODIES),
                                                                                      len(PAIRS)),
                      events=EVENTS, pairs=list(PAIRS), capture=(8, 9), link=link, CMD=CMD)
    if link is not None:
        options.setdefault("block", 25)     # written and flushed every 0.5 s; commands read every 0.1 s
        options["live"] = True
    return run_model(m, scenario_path, out_path, kernels, SOLVER, channel_infos(m), list(BODIES), list(PAIRS),
                     parts(m), {"s": NS, "Z": NZ}, **options)


def profile_from_run(run, step: float) -> np.ndarray:
    """PROF rows replaying a recorded session: each frame's command (cmd_mode, cmd_1..7, brakes) from its step on."""
    t = run.time
    mode, brakes = run.channel("cmd_mode"), run.channel("brakes")
    vals = np.column_stack([run.channel(f"cmd_{j + 1}") for j in range(NA)]).astype(np.float64)
    rows = []
    for i in range(len(t)):
        row = [round(float(t[i]) / step), float(mode[i]), *vals[i], float(brakes[i]), 0.0]
        if not rows or row[1:] != rows[-1][1:]:
            rows.append(row)
    rows[0][0] = 0
    return np.array(rows, float)


def replay_session(run_path, scenario_path, out_path, **options):
    """Run a recorded session again from its scenario with the commands its frames recorded (no operator, no wall
    clock): the same steps give the same frames."""
    import dataclasses

    from solver.runfile import RunFile
    from solver.mechanisms.berthing.model import load_berthing
    m = load_berthing(scenario_path)
    with RunFile(run_path) as r:
        prof = profile_from_run(r, m.step)
        t_end = float(r.time[-1])
    return run_berthing(dataclasses.replace(m, PROF=prof), scenario_path, out_path, t_end=t_end, **options)
