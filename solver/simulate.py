"""Run a docking scenario through the numba solver and write a run file v1 (`run_scenario`)."""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver import dynamics as D
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunFile, RunMeta, RunWriter
from solver.scenario import Model, ScenarioError, load_model  # noqa: F401  (re-exported)
from solver.wireframe import Wire

SOLVER_VERSION = "dockmnemo-solver 1 (CRBA + nut equation, RK4)"
BODIES = ["passive_craft", "active_craft", "housing", "probe", "probe_head", "limiter"]
PAIRS = [ContactPairInfo("head_cone", "probe_head", "receiving_cone", "head / cone"),
         ContactPairInfo("head_socket", "probe_head", "socket", "head / socket"),
         ContactPairInfo("latch_slot", "latches", "socket_slots", "latch / socket stop"),
         ContactPairInfo("limiter_cone", "limiter", "receiving_cone", "limiter pads / cone")]
EVENT_KIND = {D.EV_FIRST: "first_contact", D.EV_BEGIN: "contact_begin", D.EV_END: "contact_end",
              D.EV_CAPTURE: "capture"}


class SolverDiverged(RuntimeError):
    """The run stopped on a NaN state or a penetration over the maximum; the partial run file is kept."""


class RunCancelled(RuntimeError):
    """The caller's `cancel()` said stop; the run file is kept, truncated and marked incomplete."""


# ---- run from a stored state (branch runs); the state rows written per frame under /state ---------------
STATE_ROWS = ("s", "Z", "contact_prev")   # continuous state, discrete state, contact flags of the last step


@dataclass
class StartState:
    """A branch start: time and solver state (`STATE_ROWS`) at a frame of another run."""
    t: float
    state: dict = field(default_factory=dict)
    source: str = ""


def start_from_run(run_path, frame: int) -> StartState:
    """The state stored at `frame` of a run file (raises ValueError for a run written without /state)."""
    with RunFile(run_path) as r:
        st = r.state_at(frame)
        if st is None or any(k not in st for k in STATE_ROWS):
            raise ValueError(f"{Path(run_path).name}: /state: run has no stored solver state to branch from")
        frame = min(max(int(frame), 0), r.n_frames - 1)
        return StartState(float(r.time[frame]), st, f"{Path(run_path).name} frame {frame}")


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
        "friction_brake": ("m", "axial damper friction brake slip (probe stroke)", "axial_damper", st["friction_brake"]),
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
        "lever_extension": ("", "alignment lever extension (levers not modelled: 0)", "mechanism", 1.0),
        "kinetic_energy": ("J", "kinetic energy in the centre-of-mass frame", "energy"),
        "potential_energy": ("J", "stored energy: springs, hysteresis, contacts, stops", "energy"),
        "dissipated_energy": ("J", "energy dissipated by brakes, dampers, friction, contacts", "energy"),
        "total_energy": ("J", "kinetic + potential + dissipated", "energy"),
        "head_axial_force": ("N", "contact force on the head along the probe axis", "axial_damper"),
        "latches_engaged": ("", "latches engaged behind the socket shoulder", "mechanism"),
        "max_depth": ("m", "largest contact penetration", "contact_forces"),
        "momentum_x": ("N*s", "total linear momentum x (world)", "spacecraft"),
        "momentum_y": ("N*s", "total linear momentum y (world)", "spacecraft"),
        "momentum_z": ("N*s", "total linear momentum z (world)", "spacecraft"),
        "crank_angle_1": ("deg", "lateral magnetic brake 1 crank angle", "lateral_damper"),
        "crank_angle_2": ("deg", "lateral magnetic brake 2 crank angle", "lateral_damper"),
        "nut_rate": ("rpm", "ball-screw nut rate", "axial_damper"),
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
    return out


def geometry(m: Model) -> list[PartGeometry]:
    """Wireframes of the drawn parts in their body frames (probe-side axes along -x)."""
    g = m.geo
    parts = []

    def add(name, body, wire, kind="mechanism", vis=""):
        p, l = wire.build()
        parts.append(PartGeometry(name, body, p, l, kind, vis))

    R0, Dp, Rn, tn, Rc, Sd = g["R0"], g["D"], g["Rn"], g["tn"], g["Rc"], g["Sd"]
    add("receiving_cone", "passive_craft", Wire().frustum(0.0, R0, -Dp, Rn, n_generators=16, n_circles=4), "cone")
    add("socket", "passive_craft", Wire().frustum(-Dp, Rn, -Dp - tn, Rn, 8, 2).frustum(-Dp - tn, Rc, -Dp - Sd, Rc, 8, 2)
        .circle(-Dp - tn, Rn, 36).circle(-Dp - Sd, 0.5 * Rc, 24), "cone")
    slots = Wire()
    for k in range(4):
        a = math.pi / 4 + k * math.pi / 2
        for da in (-0.25, 0.25):
            slots.polyline([[-Dp - tn, Rn * math.cos(a + da), Rn * math.sin(a + da)],
                            [-Dp - tn, Rc * math.cos(a + da), Rc * math.sin(a + da)]])
    add("socket_slots", "passive_craft", slots, "slot", "head_near_socket")
    add("passive_ring", "passive_craft", Wire().circle(0.0, g["Rf"], 64).circle(0.0, 0.9 * g["Rf"], 64), "ring")
    add("active_ring", "active_craft", Wire().circle(0.0, g["Rf"], 64).circle(0.0, 0.9 * g["Rf"], 64), "ring")
    gx = g["goff"]
    add("mechanism_base", "active_craft", Wire().box((gx, -0.15, -0.15), (gx + 0.08, 0.15, 0.15)))
    lat = Wire()
    for k in range(4):
        row = g["LAT"][k]
        a = row[D.L_ATT:D.L_ATT + 3] + [gx, 0, 0]
        b = row[D.L_BASE:D.L_BASE + 3] + [gx, 0, 0]
        lat.polyline([a, b])
    add("lateral_damper", "active_craft", lat)
    add("housing", "housing", Wire().frustum(0.0, 0.09, -g["Lh"], 0.07, n_generators=8, n_circles=3))
    lim = Wire().frustum(0.0, g["lim_rw"], -g["lim_len"], g["lim_rn"], n_generators=12, n_circles=2)
    add("limiter", "limiter", lim, "limiter")
    pads = Wire()
    for pd in g["pads"]:
        pads.extend(Wire().sphere(pd[3], center=(pd[0] + m.P[D.P_LIM_X], pd[1], pd[2]), n_lat=2, n_meridians=3, n=12))
    add("load_pads", "limiter", pads, "pad")
    add("probe", "probe", Wire().frustum(0.0, 0.03, g["rod_length"], 0.03, n_generators=4, n_circles=2))
    add("probe_head", "probe_head", Wire().sphere(g["rh"]))
    latches = Wire()
    lx, lr, rh = g["latch_x"], g["latch_r"], g["rh"]
    for k in range(4):
        a = math.pi / 4 + k * math.pi / 2
        c, s = math.cos(a), math.sin(a)
        latches.polyline([[lx - 0.03, rh * 0.8 * c, rh * 0.8 * s], [lx, lr * c, lr * s], [lx + 0.01, rh * 0.9 * c, rh * 0.9 * s]])
    add("latches", "probe_head", latches, "latch", "head_near_socket")
    return parts


def run_scenario(scenario_path, out_path, progress=None, t_end=None, start: StartState | None = None,
                 cancel=None, block: int = 1000) -> Path:
    """Simulate a scenario into a run file; raises ScenarioError on bad input, SolverDiverged on divergence.

    `start`: begin at another run's stored state (a branch); `cancel()` -> True stops after the current block
    (RunCancelled). Frames are flushed every `block` frames, so the file can be followed while it grows."""
    m = load_model(scenario_path)
    T = float(t_end) if t_end is not None else m.duration
    if not (T > 0 and math.isfinite(T)):
        raise ScenarioError(scenario_path, "t_end", f"must be a positive number of seconds, found {t_end!r}")
    t0 = float(start.t) if start is not None else 0.0
    if T <= t0:
        raise ScenarioError(scenario_path, "t_end", f"{T:g} s must be later than the branch time {t0:g} s")
    out_path = Path(out_path)
    spo = int(round(m.output_step / m.step))
    n_total = int(math.floor((T - t0) / m.output_step + 1e-9)) + 1
    comment = m.comment if start is None else f"branch of {start.source} at t = {t0:.4f} s; {m.comment}"
    meta = RunMeta(comment=comment, variant=m.variant,
                   run_date=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                   solver_version=SOLVER_VERSION, output_step=m.output_step, scenario=m.name)
    nc, npair = D.NCH, len(PAIRS)
    w = RunWriter(out_path, meta, channel_infos(m), BODIES, PAIRS, geometry(m), parameters_toml=m.text,
                  contact_detail=True, state_sizes={"s": D.NS, "Z": D.NZ, "contact_prev": npair}, live=True)
    s = m.s0.copy()
    Z = m.Z0.copy()
    prev = np.zeros(npair, np.int64)
    if start is not None:
        s[:] = start.state["s"]
        Z[:] = start.state["Z"]
        prev[:] = start.state["contact_prev"]
        w.add_event(t0, "phase", "", f"branch from {start.source} at t = {t0:.4f} s with {Path(scenario_path).name}")
    kargs = (m.P, m.LAT, m.TLS, m.TAX, m.TMA, m.TML, m.prof, m.seg_pair, m.vert_pair, m.CP, m.PADS, m.depth_max)
    buf = dict(t=np.zeros(block), ch=np.zeros((block, nc)), pos=np.zeros((block, 6, 3)), q=np.zeros((block, 6, 4)),
               act=np.zeros((block, npair), np.uint8), f=np.zeros((block, npair, 3)), p=np.zeros((block, npair, 3)),
               n=np.zeros((block, npair, 3)), d=np.zeros((block, npair)), vn=np.zeros((block, npair)))
    sbuf = dict(s=np.zeros((block, D.NS)), Z=np.zeros((block, D.NZ)), contact_prev=np.zeros((block, npair)))
    outs = [buf[k] for k in ("t", "ch", "pos", "q", "act", "f", "p", "n", "d", "vn")]
    ev = np.zeros((4096, 3))
    n_ev = np.zeros(1, np.int64)
    ev_written = 0
    t = t0
    done = 0
    status = D.ST_OK
    t_capture = float(Z[D.Z_TCAPT]) if Z[D.Z_CAPT] > 0.5 else math.nan
    cancelled = False
    while done < n_total:
        k = min(block, n_total - done)
        rows = 0
        for j in range(k):  # one output frame per call: the state at each frame's start is kept for branching
            sbuf["s"][j], sbuf["Z"][j], sbuf["contact_prev"][j] = s, Z, prev
            status, t, r = D.run_block(s, Z, t, m.step, 1, spo, *kargs, prev, ev, n_ev, *[a[j:j + 1] for a in outs])
            rows += r
            if status != D.ST_OK or r == 0:
                break
        if rows:
            w.append(*[a[:rows] for a in outs], state={key: v[:rows] for key, v in sbuf.items()})
        done += rows
        if Z[D.Z_CAPT] > 0.5:
            t_capture = float(Z[D.Z_TCAPT])
        for i in range(ev_written, int(n_ev[0])):
            _add_kernel_event(w, ev[i])
        ev_written = int(n_ev[0])
        w.flush()
        if progress is not None:
            progress(t, T)
        if status != D.ST_OK:
            break
        if cancel is not None and done < n_total and cancel():
            cancelled = True
            break
    if status != D.ST_OK:
        msg = {D.ST_NAN: "state became NaN or infinite",
               D.ST_DEPTH: f"contact penetration exceeded max_depth = {m.depth_max:g} m"}.get(status, "solver stopped")
        msg = f"{Path(scenario_path).name}: diverged at t = {t:.6f} s: {msg}"
        w.add_event(t, "diagnostic", "", msg)
        w.finish(t_capture=t_capture, complete=False)
        raise SolverDiverged(msg)
    if cancelled:
        msg = f"{Path(scenario_path).name}: cancelled at t = {t:.4f} s (of {T:g} s)"
        w.add_event(t, "diagnostic", "", msg)
        w.finish(t_capture=t_capture, complete=False)
        raise RunCancelled(msg)
    w.finish(t_capture=t_capture, complete=True)
    return out_path


def _add_kernel_event(w: RunWriter, row):
    """One row of the kernel's event table (time, kind, pair index) as a run-file event."""
    te, kind, pair = row
    kind = int(kind)
    pname = PAIRS[int(pair)].name
    text = {D.EV_FIRST: f"first contact: {PAIRS[int(pair)].label}", D.EV_BEGIN: PAIRS[int(pair)].label,
            D.EV_END: PAIRS[int(pair)].label,
            D.EV_CAPTURE: "capture: all latches engaged behind the socket shoulder"}[kind]
    w.add_event(float(te), EVENT_KIND[kind], pname, text)
