"""Run a docking scenario through the numba solver and write a run file v1 (`run_scenario`)."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.mechanisms.probe_cone import dynamics as D
from solver.contact import BODIES as CONTACT_BODIES
from solver.contact.pairset import PAR_DMAX
from solver.contact_events import EventAccumulator, event_records, event_rows
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunFile, RunMeta, RunWriter
from solver.scenario import Model, ScenarioError, load_model  # noqa: F401  (re-exported)
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


class SolverDiverged(RuntimeError):
    """The run stopped on a NaN state or a penetration over the maximum; the partial run file is kept."""


class RunCancelled(RuntimeError):
    """The caller's `cancel()` said stop; the run file is kept, truncated and marked incomplete."""


# ---- run from a stored state (branch runs): snapshots under /state, one per written block ----------------
STATE_ROWS = ("s", "Z", "contact_prev")   # continuous state, discrete state, contact flags of the last step


@dataclass
class StartState:
    """A branch start at time `t`: the snapshot `state` (`STATE_ROWS`) taken `skip` frames earlier, at `t_snap`, by
    a solver of `mechanism_type`."""
    t: float
    state: dict = field(default_factory=dict)
    source: str = ""
    t_snap: float = 0.0
    skip: int = 0
    mechanism_type: str = "probe_cone"


def run_plan(m, T: float, t0: float, start: StartState | None, mechanism_type: str,
             solver_version: str) -> tuple[int, int, RunMeta]:
    """Of a checked run from t0 to T: solver steps per frame, frames, and the run file's metadata (a branch's comment
    names its source)."""
    spo = int(round(m.output_step / m.step))
    n_total = int(math.floor((T - t0) / m.output_step + 1e-9)) + 1
    comment = m.comment if start is None else f"branch of {start.source} at t = {t0:.4f} s; {m.comment}"
    meta = RunMeta(comment=comment, variant=m.variant, mechanism_type=mechanism_type,
                   run_date=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                   solver_version=solver_version, output_step=m.output_step, scenario=m.name)
    return spo, n_total, meta


def replay_to_branch(start: StartState, run_block, block: int, ok: int, n_ev, scenario_path) -> float:
    """Re-simulate a branch's `skip` frames from its snapshot (the same steps give the same state) with
    `run_block(t, frames)` -> (status, t, frames done), and forget their events; ScenarioError if that fails."""
    t, left, status = start.t_snap, int(start.skip), ok
    while left > 0 and status == ok:
        status, t, done = run_block(t, min(block, left))
        left -= done
        if done == 0:
            break
    n_ev[0] = 0
    if status != ok or left:
        raise ScenarioError(scenario_path, "start", f"re-simulating to the branch time {start.t:g} s failed")
    return t


def start_from_run(run_path, frame: int) -> StartState:
    """Branch start at `frame` of a run: its last state snapshot before it (ValueError for a run without /state)."""
    from solver import mechanisms
    with RunFile(run_path) as r:
        frame = min(max(int(frame), 0), r.n_frames - 1)
        snap = r.state_at(frame)
        if snap is None or any(k not in snap[1] for k in STATE_ROWS):
            raise ValueError(f"{Path(run_path).name}: /state: run has no stored solver state to branch from")
        f0, st = snap
        mtype = mechanisms.for_run(r)
        sizes = mtype.state_sizes() if mtype.state_sizes is not None else {"s": D.NS, "Z": D.NZ}
        for k, n in sizes.items():
            if len(st[k]) != n:
                raise ValueError(f"{Path(run_path).name}: /state/{k}: {len(st[k])} values, this solver's state has {n} "
                                 f"(written by another solver version: run its scenario again to branch from it)")
        return StartState(float(r.time[frame]), st, f"{Path(run_path).name} frame {frame}", float(r.time[f0]),
                          frame - f0, mtype.name)


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
    return out


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


def with_output_step(m: Model, output_step, scenario_path) -> Model:
    """The model with its frame step replaced (None: unchanged); ScenarioError unless a multiple of the step."""
    if output_step is None:
        return m
    out = float(output_step)
    spo = out / m.step if math.isfinite(out) and out > 0 else math.nan
    if not (spo >= 1.0 - 1e-9 and abs(spo - round(spo)) <= 1e-6):
        raise ScenarioError(scenario_path, "output_step", f"{output_step!r} must be a positive multiple of the "
                            f"solver step {m.step:g} s")
    return dataclasses.replace(m, output_step=out)


def kernel_args(m: Model) -> tuple:
    """The contact geometry arrays `run_block` takes after the damper tables."""
    g = m.cgeo
    return g.prim, g.pint, g.pairs, g.ppar, g.work


def end_run(w, scenario_path, t: float, T: float, t_capture: float, diverged: str | None = None,
            cancelled: bool = False):
    """Close a run file: complete, or marked incomplete with a diagnostic event and SolverDiverged (`diverged`: why)
    or RunCancelled (any mechanism type's runner ends here)."""
    if diverged is None and not cancelled:
        w.finish(t_capture=t_capture, complete=True)
        return
    msg = (f"{Path(scenario_path).name}: diverged at t = {t:.6f} s: {diverged}" if diverged is not None else
           f"{Path(scenario_path).name}: cancelled at t = {t:.4f} s (of {T:g} s)")
    w.add_event(t, "diagnostic", "", msg)
    w.finish(t_capture=t_capture, complete=False)
    raise (SolverDiverged if diverged is not None else RunCancelled)(msg)


def run_scenario(scenario_path, out_path, progress=None, t_end=None, start: StartState | None = None,
                 cancel=None, block: int = 1000, live: bool = False, output_step: float | None = None) -> Path:
    """Simulate a scenario into a run file; raises ScenarioError on bad input, SolverDiverged on divergence.

    `start`: begin at another run's stored state (a branch); `cancel()` -> True stops after the current block
    (RunCancelled). The file is written with HDF5 SWMR and flushed every second of wall time (a killed run keeps its
    frames up to about two seconds before); with `live`, after every `block` frames, so the app can follow it. `output_step`
    (s, a multiple of the solver step) replaces the scenario's frame step: the integration is the same, only fewer
    frames are recorded (long runs: 0.01 s writes a tenth of the 1 ms file in a fraction of the time); it must not
    exceed the run's length. The last frame is the last output step at or before t_end: nothing is simulated past it."""
    m = with_output_step(load_model(scenario_path), output_step, scenario_path)
    mtype = getattr(m, "mechanism_type", "probe_cone")
    if start is not None and start.mechanism_type != mtype:
        raise ScenarioError(scenario_path, "start", f"{start.source} is a {start.mechanism_type} run, this scenario's "
                            f"mechanism is {mtype}: branch with a scenario of the run's type")
    if start is not None and output_step is not None:
        raise ScenarioError(scenario_path, "output_step", "a branch run keeps the scenario's output step")
    T = float(t_end) if t_end is not None else m.duration
    if not (T > 0 and math.isfinite(T)):
        raise ScenarioError(scenario_path, "t_end", f"must be a positive number of seconds, found {t_end!r}")
    t0 = float(start.t) if start is not None else 0.0
    if T <= t0:
        raise ScenarioError(scenario_path, "t_end", f"{T:g} s must be later than the branch time {t0:g} s")
    if m.output_step > T - t0 + 1e-9:
        raise ScenarioError(scenario_path, "output_step", f"{m.output_step:g} s must not exceed the run's length "
                            f"({T - t0:g} s, from {t0:g} s to t_end)")
    if mtype != "probe_cone":                # another type's model runs its own kernels (solver.mechanisms)
        from solver import mechanisms
        return mechanisms.mechanism_type(mtype).run(m, scenario_path, out_path, progress=progress, t_end=t_end,
                                                    cancel=cancel, live=live, start=start)
    from solver.warmup import compile_kernels
    compile_kernels(m)        # load the kernels, or compile them with a lock on the cache (once per cache directory)
    out_path = Path(out_path)
    spo, n_total, meta = run_plan(m, T, t0, start, "probe_cone", SOLVER_VERSION)
    pairs = [*m.cgeo.pair_info, LATCH_NECK]
    nc, npair = D.NCH, len(pairs)
    w = RunWriter(out_path, meta, channel_infos(m), BODIES, pairs, geometry(m), parameters_toml=m.text,
                  contact_detail=True, state_sizes={"s": D.NS, "Z": D.NZ, "contact_prev": npair}, live=live,
                  contact_statistics=True)
    try:
        contact_events = EventAccumulator(pairs)
        s = m.s0.copy()
        Z = m.Z0.copy()
        prev = np.zeros(npair, np.int64)
        kargs = (m.P, m.LAT, m.TLS, m.TAX, m.TMA, m.TML, *kernel_args(m))
        buf = dict(t=np.zeros(block), ch=np.zeros((block, nc)), pos=np.zeros((block, 6, 3)), q=np.zeros((block, 6, 4)),
                   act=np.zeros((block, npair), np.uint8), f=np.zeros((block, npair, 3)), p=np.zeros((block, npair, 3)),
                   n=np.zeros((block, npair, 3)), d=np.zeros((block, npair)), vn=np.zeros((block, npair)))
        outs = [buf[k] for k in ("t", "ch", "pos", "q", "act", "f", "p", "n", "d", "vn")]
        ev = np.zeros((16384, 3))
        diag = np.zeros(2)
        n_ev = np.zeros(1, np.int64)
        t = t0
        status = D.ST_OK
        if start is not None:
            s[:] = start.state["s"]
            Z[:] = start.state["Z"]
            prev[:] = start.state["contact_prev"]
            replay_to_branch(start, lambda t, k: D.run_block(s, Z, t, m.step, k, spo, *kargs, diag, prev, ev, n_ev,
                                                             *outs), block, D.ST_OK, n_ev, scenario_path)
            t = t0
            w.add_event(t0, "phase", "",
                        f"branch from {start.source} at t = {t0:.4f} s with {Path(scenario_path).name}")
        ev_written = 0
        done = 0
        t_capture = float(Z[D.Z_TCAPT]) if Z[D.Z_CAPT] > 0.5 else math.nan
        cancelled = False
        while done < n_total:
            k = min(block, n_total - done)
            w.add_state(done, {"s": s, "Z": Z, "contact_prev": prev})   # one snapshot per block, for branching
            last = int(done + k == n_total)   # the run's last frame: no integration past it (t_end holds for any step)
            status, t, rows = D.run_block(s, Z, t, m.step, k - last, spo, *kargs, diag, prev, ev, n_ev, *outs)
            if last and status == D.ST_OK:
                status, t, r = D.run_block(s, Z, t, m.step, 1, 1, *kargs, diag, prev, ev, n_ev,
                                           *[a[rows:] for a in outs])
                rows += r
            if rows:
                w.append(*[a[:rows] for a in outs])
                contact_events.append(buf["t"][:rows], buf["act"][:rows], buf["f"][:rows], buf["n"][:rows],
                                      buf["vn"][:rows])
            done += rows
            if Z[D.Z_CAPT] > 0.5:
                t_capture = float(Z[D.Z_TCAPT])
                w.set_capture(t_capture)   # a live file's readers see it after this block's flush
            for i in range(ev_written, int(n_ev[0])):
                _add_kernel_event(w, ev[i], pairs)
            ev_written = int(n_ev[0])
            w.flush_due()   # every block when live; else every FLUSH_INTERVAL s of wall time
            if progress is not None:
                progress(t, T)
            if status != D.ST_OK:
                break
            if cancel is not None and done < n_total and cancel():
                cancelled = True
                break
        if status == D.ST_DONE:          # hard dock: the cyclogram's terminal event; the run is complete
            status = D.ST_OK
        # contact begin/end rows and /contact_events, each interval's statistics at the output step, from one table
        contact_table = contact_events.table()
        for row in event_rows(contact_table):
            w.add_event(*row)
        w.set_contact_events(event_records(contact_table), m.output_step)
        if n_ev[0] >= ev.shape[0]:
            w.add_event(t, "diagnostic", "", f"event table full after {ev.shape[0]} events; later events not recorded")
        if status != D.ST_OK:
            k = int(diag[0])
            msg = {D.ST_NAN: "state became NaN or infinite",
                   D.ST_DEPTH: f"contact penetration exceeded: pair {pairs[k].name!r} at {diag[1] * 1e3:.3f} mm, "
                               f"admissible {m.cgeo.ppar[k, PAR_DMAX] * 1e3:.3f} mm"}.get(status, "solver stopped")
            end_run(w, scenario_path, t, T, t_capture, diverged=msg)
        end_run(w, scenario_path, t, T, t_capture, cancelled=cancelled)
    except BaseException:   # the writer thread stops; the file is closed as it is (finish closed it already
        w.abort()          # for a divergence or a cancel)
        raise
    return out_path


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
