"""Run a docking scenario through the numba solver and write a run file v1 (`run_scenario`)."""
from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path

import numpy as np

from solver import dynamics as D
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunMeta, RunWriter
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


def run_scenario(scenario_path, out_path, progress=None, t_end=None) -> Path:
    """Simulate a scenario into a run file; raises ScenarioError on bad input, SolverDiverged on divergence."""
    m = load_model(scenario_path)
    T = float(t_end) if t_end is not None else m.duration
    if not (T > 0 and math.isfinite(T)):
        raise ScenarioError(scenario_path, "t_end", f"must be a positive number of seconds, found {t_end!r}")
    out_path = Path(out_path)
    spo = int(round(m.output_step / m.step))
    n_total = int(math.floor(T / m.output_step + 1e-9)) + 1
    meta = RunMeta(comment=m.comment, variant=m.variant,
                   run_date=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                   solver_version=SOLVER_VERSION, output_step=m.output_step, scenario=m.name)
    w = RunWriter(out_path, meta, channel_infos(m), BODIES, PAIRS, geometry(m), parameters_toml=m.text,
                  contact_detail=True)
    s = m.s0.copy()
    Z = m.Z0.copy()
    block = 1000
    nc, npair = D.NCH, len(PAIRS)
    buf = dict(t=np.zeros(block), ch=np.zeros((block, nc)), pos=np.zeros((block, 6, 3)), q=np.zeros((block, 6, 4)),
               act=np.zeros((block, npair), np.uint8), f=np.zeros((block, npair, 3)), p=np.zeros((block, npair, 3)),
               n=np.zeros((block, npair, 3)), d=np.zeros((block, npair)), vn=np.zeros((block, npair)))
    prev = np.zeros(npair, np.int64)
    ev = np.zeros((4096, 3))
    n_ev = np.zeros(1, np.int64)
    t = 0.0
    done = 0
    status = D.ST_OK
    t_capture = math.nan
    while done < n_total:
        k = min(block, n_total - done)
        status, t, rows = D.run_block(s, Z, t, m.step, k, spo, m.P, m.LAT, m.TLS, m.TAX, m.TMA, m.TML, m.prof,
                                      m.seg_pair, m.vert_pair, m.CP, m.PADS, m.depth_max, prev, ev, n_ev,
                                      buf["t"], buf["ch"], buf["pos"], buf["q"], buf["act"], buf["f"], buf["p"],
                                      buf["n"], buf["d"], buf["vn"])
        if rows:
            w.append(buf["t"][:rows], buf["ch"][:rows], buf["pos"][:rows], buf["q"][:rows], buf["act"][:rows],
                     buf["f"][:rows], buf["p"][:rows], buf["n"][:rows], buf["d"][:rows], buf["vn"][:rows])
        done += rows
        if Z[D.Z_CAPT] > 0.5:
            t_capture = float(Z[D.Z_TCAPT])
        if progress is not None:
            progress(t, T)
        if status != D.ST_OK:
            break
    for i in range(int(n_ev[0])):
        te, kind, pair = ev[i]
        kind = int(kind)
        pname = PAIRS[int(pair)].name
        text = {D.EV_FIRST: f"first contact: {PAIRS[int(pair)].label}", D.EV_BEGIN: PAIRS[int(pair)].label,
                D.EV_END: PAIRS[int(pair)].label,
                D.EV_CAPTURE: "capture: all latches engaged behind the socket shoulder"}[kind]
        w.add_event(float(te), EVENT_KIND[kind], pname, text)
    if status != D.ST_OK:
        msg = {D.ST_NAN: "state became NaN or infinite",
               D.ST_DEPTH: f"contact penetration exceeded max_depth = {m.depth_max:g} m"}.get(status, "solver stopped")
        msg = f"{Path(scenario_path).name}: diverged at t = {t:.6f} s: {msg}"
        w.add_event(t, "diagnostic", "", msg)
        w.finish(t_capture=t_capture, complete=False)
        raise SolverDiverged(msg)
    w.finish(t_capture=t_capture, complete=True)
    return out_path
