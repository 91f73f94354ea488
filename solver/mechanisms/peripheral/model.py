"""Scenario and mechanism TOML of the peripheral type -> the arrays its kernels take (`load_peripheral`).

Every key is read through the parameter schema (solver/mechanisms/peripheral/schema.py); bad input raises
ScenarioError `file: key: problem`, as for the probe-cone."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver import schema
from solver.mechanisms.peripheral.hexapod import hexapod_layout, inverse_kinematics
from solver.mechanisms.peripheral import dynamics as D
from solver.mechanisms.peripheral.schema import NOT_READ   # common scenario keys this type does not read
from solver.quat import from_axis_angle, multiply
from solver.scenario import ScenarioError, _craft, _load, _refuse_unread, _Sec
from solver.mechanisms.base import RunSettings

MTYPE = "peripheral"
RIM_POINTS = 24          # points per rim of the active ring face (outer and inner) against the passive annulus
PETAL_ROWS = 5           # sample points along each petal generator


@dataclass
class PeripheralModel(RunSettings):
    """What the run loop needs: kernel arrays, initial state, run settings and the drawn geometry's dimensions."""
    fixed_passive: bool
    P: np.ndarray
    arrays: tuple
    s0: np.ndarray
    Z0: np.ndarray
    geo: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    mechanism_type: str = MTYPE
    variant: str = "idss"


def _refuse_undeclared(path, data, file):
    bad = schema.undeclared(data, file, MTYPE)
    if bad:
        raise ScenarioError(path, *bad)


def _petal_points(G, sign):
    """Sample points of the three petals (frame: ring face at x = 0, petals toward sign * x) and their petal index:
    the outer surface along `generators` straight generators, PETAL_ROWS points from root to tip."""
    pts, idx = [], []
    h, r0, lean = G["height"], G["root_radius"] + G["thickness"], math.radians(G["lean"])
    n = int(G["generators"])
    for k in range(3):
        a0 = math.radians(G["first_angle"] + 120.0 * k) + (math.pi / 3 if sign > 0 else 0.0)
        for j in range(n):
            f = j / (n - 1) - 0.5
            for i in range(PETAL_ROWS):
                u = i / (PETAL_ROWS - 1)
                half = math.radians(G["root_half_angle"] + u * (G["tip_half_angle"] - G["root_half_angle"]))
                a = a0 + 2.0 * f * half
                r = r0 - u * h * math.tan(lean)
                pts.append((sign * u * h, r * math.cos(a), r * math.sin(a)))
                idx.append(k)
    return np.array(pts), np.array(idx, np.int64)


def _petal_lines(G, sign):
    """The petals' mid-surface (half the thickness outside the inner surface): `generators` straight generators per
    petal from one side edge to the other (rows p0 root, p1 tip), each petal's edges (rows: side -, side +, tip) and
    its plate (the trapezoid of its four corners: root -, root +, tip +, tip -), with their petal index. Frame as
    `_petal_points`."""
    h, lean, n = G["height"], math.radians(G["lean"]), int(G["generators"])
    r0 = G["root_radius"] + 0.5 * G["thickness"]
    r1 = r0 - h * math.tan(lean)
    th0, th1 = math.radians(G["root_half_angle"]), math.radians(G["tip_half_angle"])

    def pt(x, r, a):
        return (x, r * math.cos(a), r * math.sin(a))
    gen, gid, edge, eid, plate = [], [], [], [], []
    for k in range(3):
        a0 = math.radians(G["first_angle"] + 120.0 * k) + (math.pi / 3 if sign > 0 else 0.0)
        for f in np.linspace(-1.0, 1.0, n):
            gen.append(pt(0.0, r0, a0 + f * th0) + pt(sign * h, r1, a0 + f * th1))
            gid.append(k)
        c = [pt(0.0, r0, a0 - th0), pt(0.0, r0, a0 + th0), pt(sign * h, r1, a0 + th1), pt(sign * h, r1, a0 - th1)]
        edge += [c[0] + c[3], c[1] + c[2], c[3] + c[2]]
        eid += [k, k, k]
        plate.append(c)
    return np.array(gen), np.array(gid, np.int64), np.array(edge), np.array(eid, np.int64), np.array(plate)


def _work_rows(G, R, plates, aplates):
    """The kernels' work array (dynamics.W_*): the passive and the active petal plates (each in its body's frame;
    `segment_trapezoid` rows with the edge radius, half the petal thickness, the centre and the bounding radius) and
    both rings' rounded inner edges as tori (tangent to the face and the bore)."""
    from solver.contact import geometry as CG
    W = np.zeros((D.NW, CG.K.ROW))
    for j, v in enumerate([*plates, *aplates]):
        n = np.cross(v[1] - v[0], v[3] - v[0])
        row = W[(D.W_PPLATE + j) if j < 3 else (D.W_APLATE + j - 3)]
        row[0:12] = v.reshape(-1)
        row[12:15] = n / np.linalg.norm(n)         # v0..v3 counter-clockwise about n
        row[15] = 0.5 * G["thickness"]
        row[16:19] = v.mean(0)
        row[19] = np.linalg.norm(v - v.mean(0), axis=1).max()
    rho = R["inner_edge_radius"]                  # the rounding: a torus behind the face and outside the bore
    for row, axis in ((D.W_PCIRC, 1.0), (D.W_ACIRC, -1.0)):
        W[row] = CG.circle_row((-axis * rho, 0.0, 0.0), (axis, 0.0, 0.0), R["face_inner_radius"] + rho, rho,
                               e1=(0.0, 1.0, 0.0))[1]
    return W


def _touching(s0, P, arrays) -> bool:
    rec = np.zeros((D.NPAIR, 17))
    D.evaluate(s0, np.zeros(D.NZ), 0.0, P, *arrays, np.zeros(D.NS), np.zeros(D.NCH), rec, True, False)
    return bool((rec[:, 0] > 0.5).any())


def first_contact_gap(state, P, arrays, gap_max: float, scan: float = 0.002) -> float:
    """The largest face gap (at most gap_max) at which the two halves touch in the initial pose `state(gap)`: the
    first contact of an approach from farther out. Scanned down from gap_max every `scan` m (the touching set is not
    an interval: tips can touch, then pass), then bisected to 1e-9 m; 0 when they touch nowhere above 0. A scenario's
    `initial.start_clearance` starts that far before it, so the IDSS conditions hold at first contact."""
    if _touching(state(gap_max), P, arrays):
        return gap_max
    hi = gap_max
    while hi > 0.0:
        lo = max(0.0, hi - scan)
        if _touching(state(lo), P, arrays):
            break
        hi = lo
    else:
        return 0.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if _touching(state(mid), P, arrays):
            lo = mid
        else:
            hi = mid
    return hi


def _check_step(spath, step, g, contact):
    """RK4 on the guide ring: omega*step <= 1 (ring face, latches, stops in parallel) and decay*step <= 2 (leg dampers
    and brake ramps, ring-face damping); a larger step gives no error, only a wrong run (energy off by KE0 times)."""
    m, lg = g["mass"]["guide_ring"], g["legs"]
    k = (contact["ring_ring"]["k"] + 3 * contact["latch_striker"]["k"]
         + 6 * (lg["stop_stiffness"] + lg["brake_stiffness"]))
    c = 6 * (lg["damping"] + lg["brake_damping"]) + contact["ring_ring"]["c"] + contact["ring_ring"]["c_t"]
    omega, decay = math.sqrt(k / m), c / m
    if omega * step > 1.0 or decay * step > 2.0:
        hmax = min(1.0 / omega, 2.0 / decay)
        raise ScenarioError(spath, "solver.step", f"{step:g} s is too large for the guide ring: omega*step = "
                            f"{omega * step:.3g} (<= 1), decay*step = {decay * step:.3g} (<= 2); at most {hmax:.3g} s")


def _circle(r, x, n):
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([np.full(n, x), r * np.cos(a), r * np.sin(a)], 1)


def load_peripheral(scenario_path) -> PeripheralModel:
    """Read, validate and pack a peripheral scenario and its mechanism file."""
    spath = Path(scenario_path)
    stext, sc = _load(spath, "scenario file")
    for k in NOT_READ:
        sec, _, key = k.partition(".")
        if isinstance(sc.get(sec), dict) and key in sc[sec]:
            raise ScenarioError(spath, k, "not used by the peripheral mechanism type")
    _refuse_undeclared(spath, sc, "scenario")
    S = _Sec(spath, sc, "", "scenario", MTYPE)
    name, comment = S.get("name"), S.get("comment")
    mpath = spath.parent / S.get("mechanism")
    mtext, mt = _load(mpath, "mechanism file")
    _refuse_undeclared(mpath, mt, "mechanism")
    M = _Sec(mpath, mt, "", "mechanism", MTYPE)
    M.read_all()
    g = {s: {k: M.sub(s).get(k) for k in dict.keys(mt[s])} for s in
         ("interface", "mass", "guide_ring", "guide_petals", "hexapod", "legs", "latches", "hooks", "limits")}
    g["interface"]["offset"] = M.sub("interface").get("offset")
    g["guide_ring"]["bore_depth"] = M.sub("guide_ring").get("bore_depth")
    for s, k in (("legs", "brake_stiffness"), ("legs", "brake_damping"), ("legs", "drive_stiffness"),
                 ("legs", "drive_damping"), ("legs", "drive_force"), ("legs", "drive_rate_filter"),
                 ("interface", "face_inner_radius"),
                 ("interface", "seal_height"), ("interface", "seal_stiffness"), ("interface", "face_outer_radius"),
                 ("legs", "retraction_delay"), ("legs", "align_accel"), ("latches", "radius"),
                 ("latches", "capture_gap"), ("hooks", "gap")):
        g[s][k] = M.sub(s).get(k)
    R, GP, H, LG = g["guide_ring"], g["guide_petals"], g["hexapod"], g["legs"]
    if R["face_outer_radius"] <= R["face_inner_radius"]:
        raise ScenarioError(mpath, "guide_ring.face_outer_radius", "must be larger than face_inner_radius")
    contact = {p: {k: M.sub("contact").sub(p).get(k) for k in ("k", "c", "mu", "k_t", "c_t", "depth_max")}
               for p in ("petal_petal", "petal_ring", "ring_ring", "latch_striker", "interface")}
    if GP["generators"] > D.MAX_GEN:
        raise ScenarioError(mpath, "guide_petals.generators", f"{GP['generators']} is more than the {D.MAX_GEN} the "
                            "kernel's friction state holds")
    try:
        hexa = hexapod_layout(mt, str(mpath))
    except ValueError as exc:
        key, _, problem = str(exc).removeprefix(f"{mpath}: ").partition(": ")
        raise ScenarioError(mpath, key, problem) from None
    # crafts
    fixed, mP, JP, cP = _craft(S.sub("passive_craft"), True)
    _, mA, JA, cA = _craft(S.sub("active_craft"), False)
    ini = S.sub("initial")
    v0, vlat, miss = ini.get("closing_speed"), ini.get("lateral_velocity"), ini.get("lateral_miss")
    ang, rate, gap = ini.get("angular_miss_deg"), ini.get("angular_rate_deg_s"), ini.get("face_gap")
    clearance = ini.get("start_clearance")
    sol = S.sub("solver")
    step, out_step, duration = sol.get("step"), sol.get("output_step"), sol.get("duration")
    spo = out_step / step
    if abs(spo - round(spo)) > 1e-6 or spo < 1 - 1e-9:
        raise ScenarioError(spath, "solver.output_step", f"{out_step:g} must be a multiple of the step {step:g} s")
    for path, t in ((spath, sc), (mpath, mt)):
        _refuse_unread(path, t)
    _check_step(spath, step, g, contact)
    # geometry: active frame = leg base plane, ring face ahead at -neutral_height; legs from hexapod_layout
    h0 = H["neutral_height"]
    base = hexa.base.copy()                       # (0, y, z) in the active frame
    ringp = hexa.ring.copy()                      # (0, y, z) in the ring frame
    LN = inverse_kinematics(base, ringp, np.array([-h0, 0.0, 0.0]), np.eye(3))[0].copy()
    # the drive brings the ring face to the seal's height ahead of the interface plane (ready to hook: the seal just
    # touching, no load); the hooks pull the rest
    h_end = g["interface"]["offset"] + g["interface"]["seal_height"]
    dl = float(LN[0] - inverse_kinematics(base, ringp, np.array([-h_end, 0.0, 0.0]), np.eye(3))[0][0])
    if dl > H["stroke_retract"]:
        raise ScenarioError(mpath, "interface.offset", f"retracting the ring to it shortens the legs {dl:.4g} m, more "
                            f"than hexapod.stroke_retract {H['stroke_retract']:g} m")
    rim = np.concatenate([_circle(R["face_outer_radius"], 0.0, RIM_POINTS),
                          _circle(R["face_inner_radius"], 0.0, RIM_POINTS)])
    apet, apid = _petal_points(GP, -1.0)         # active petals point to -x (ring frame)
    ppet, ppid = _petal_points(GP, +1.0)         # passive petals to +x, turned 60 deg
    agen, agid, aedge, aeid, aplate = _petal_lines(GP, -1.0)
    pgen, pgid, pedge, _, pplate = _petal_lines(GP, +1.0)
    ptip = pedge[2::3].copy()                     # the passive petals' tip edges
    W = _work_rows(GP, R, pplate, aplate)
    la = [math.radians(GP["first_angle"] + 120.0 * k) for k in range(3)]
    rl = g["latches"]["radius"]
    latch = np.array([(0.0, rl * math.cos(a), rl * math.sin(a)) for a in la])
    striker = latch.copy()
    IF = g["interface"]
    if IF["face_outer_radius"] <= IF["face_inner_radius"]:
        raise ScenarioError(mpath, "interface.face_outer_radius", "must be larger than face_inner_radius")
    hook = _circle(0.5 * (IF["face_inner_radius"] + IF["face_outer_radius"]), -IF["offset"],
                   int(g["hooks"]["count"]))                     # hook points on the active interface face
    ifp = np.concatenate([_circle(IF["face_outer_radius"], -IF["offset"], RIM_POINTS),
                          _circle(IF["face_inner_radius"], -IF["offset"], RIM_POINTS)])
    mr = g["mass"]["guide_ring"]
    Jr = np.diag([g["mass"]["guide_ring_inertia_axial"], *[g["mass"]["guide_ring_inertia_lateral"]] * 2])
    COM = np.array([cP, cA, np.zeros(3)], float)
    MASS = np.array([mP, mA, mr], float)
    INERT = np.array([JP, JA, Jr], float)
    INVI = np.array([np.linalg.inv(J) for J in INERT])
    P = np.zeros(D.NP)
    cr, cp, cl, cq = contact["ring_ring"], contact["petal_ring"], contact["latch_striker"], contact["petal_petal"]
    P[[D.P_FIXED, D.P_RIN, D.P_ROUT, D.P_BORE_DEPTH]] = (float(fixed), R["face_inner_radius"],
                                                        R["face_outer_radius"], R["bore_depth"])
    P[[D.P_K_LEG, D.P_C_LEG, D.P_BRAKE, D.P_KB, D.P_CB, D.P_K_STOP]] = (
        LG["stiffness"], LG["damping"], LG["brake_force"], LG["brake_stiffness"], LG["brake_damping"],
        LG["stop_stiffness"])
    P[[D.P_KD, D.P_CD, D.P_FD]] = LG["drive_stiffness"], LG["drive_damping"], LG["drive_force"]
    P[D.P_TAU_D] = LG["drive_rate_filter"]
    P[[D.P_SETTLE_RATE, D.P_SETTLE_TIME, D.P_SETTLE_MAX]] = (LG["settle_rate"], LG["settle_time"],
                                                            LG["settle_max"])
    P[D.P_ALIGN_ACC] = math.radians(LG["align_accel"])
    P[[D.P_RETRACT, D.P_EXTEND, D.P_V_RETRACT, D.P_DELAY, D.P_DL_RETRACT]] = (
        H["stroke_retract"], H["stroke_extend"], LG["retraction_speed"], LG["retraction_delay"], dl)
    ci = contact["interface"]
    P[[D.P_K_RR, D.P_C_RR, D.P_MU_RR, D.P_KT_RR, D.P_CT_RR]] = cr["k"], cr["c"], cr["mu"], cr["k_t"], cr["c_t"]
    P[[D.P_K_PR, D.P_C_PR, D.P_MU_PR, D.P_KT_PR, D.P_CT_PR]] = cp["k"], cp["c"], cp["mu"], cp["k_t"], cp["c_t"]
    P[[D.P_K_IF, D.P_C_IF, D.P_MU_IF, D.P_KT_IF, D.P_CT_IF]] = ci["k"], ci["c"], ci["mu"], ci["k_t"], ci["c_t"]
    P[[D.P_IF_RIN, D.P_IF_ROUT, D.P_SEAL, D.P_K_SEAL]] = (IF["face_inner_radius"], IF["face_outer_radius"],
                                                         IF["seal_height"], IF["seal_stiffness"])
    P[[D.P_PRELOAD, D.P_CLOSE_TIME]] = g["hooks"]["preload"], g["hooks"]["close_time"]
    P[[D.P_K_LATCH, D.P_C_LATCH, D.P_CAPTURE_TOL, D.P_HOOK_GAP, D.P_TOL_R, D.P_CAPTURE_GAP]] = (
        cl["k"], cl["c"], g["latches"]["engage_travel"], g["hooks"]["gap"], 1e-3, g["latches"]["capture_gap"])
    if "soft_capture" in M.data:                                # active soft capture (absent: passive legs)
        SC = M.sub("soft_capture")
        rr, kp, cp_ = H["ring_radius"], SC.get("servo_stiffness"), SC.get("servo_damping")
        P[[D.P_SC_KA, D.P_SC_CA, D.P_SC_KL, D.P_SC_CL, D.P_SC_KT, D.P_SC_CT]] = (
            SC.get("axial_stiffness"), SC.get("axial_damping"), SC.get("lateral_stiffness"),
            SC.get("lateral_damping"), SC.get("tilt_stiffness"), SC.get("tilt_damping"))
        P[[D.P_SC_KP, D.P_SC_CP, D.P_SC_KPR, D.P_SC_CPR]] = kp, cp_, kp * rr * rr, cp_ * rr * rr
        P[[D.P_SC_ON, D.P_SC_FMAX]] = float(SC.get("active")), SC.get("force_limit")
        P[D.P_SC_TH] = SC.get("handover_time")
    P[D.P_H0] = h0
    free = M.sub("legs").get("brake_before_capture")           # -1 (absent): brake_force throughout
    P[D.P_BRAKE_FREE] = free if free >= 0.0 else LG["brake_force"]
    P[[D.P_K_PP, D.P_C_PP, D.P_MU_PP, D.P_KT_PP, D.P_CT_PP, D.P_GEN_R]] = (cq["k"], cq["c"], cq["mu"], cq["k_t"],
                                                                         cq["c_t"], 0.5 * GP["thickness"])
    # initial state: passive at rest at the origin; active frame at face gap + neutral height, missed and turned
    qA = np.array([1.0, 0.0, 0.0, 0.0])
    for axis, a in zip(np.eye(3), np.radians(ang)):
        qA = multiply(qA, from_axis_angle(axis, a))
    from solver.quat import to_matrix
    RA = to_matrix(qA)
    vA = np.array([-v0, vlat[0], vlat[1]])
    wA = np.radians(rate)                          # body frame

    def state(gap):
        s0 = np.zeros(D.NS)
        s0[0:3] = cP
        s0[3] = 1.0
        oA = np.array([gap + h0, miss[0], miss[1]])
        s0[13:16] = oA + RA @ cA
        s0[16:20] = qA
        s0[20:23] = vA + np.cross(RA @ wA, RA @ cA)
        s0[23:26] = wA
        xr = oA + RA @ np.array([-h0, 0.0, 0.0])
        s0[26:29] = xr
        s0[29:33] = qA
        s0[33:36] = vA + np.cross(RA @ wA, xr - oA)
        s0[36:39] = wA
        return s0
    Z0 = np.zeros(D.NZ)
    arrays = (COM, MASS, INERT, INVI, base, ringp, LN, rim, apet, apid, ppet, ppid, latch, striker, hook, agen, agid,
              pgen, pgid, aedge, aeid, ptip, W, ifp, np.zeros((D.N_SLOT, 2)))
    if clearance > 0.0:
        gap = first_contact_gap(state, P, arrays, gap) + clearance
    s0 = state(gap)
    geo = dict(rin=R["face_inner_radius"], rout=R["face_outer_radius"], petals=GP, base=base, ringp=ringp, LN=LN,
               h0=h0, latch=latch, offset=IF["offset"], if_rin=IF["face_inner_radius"], if_rout=IF["face_outer_radius"], stroke_retract=H["stroke_retract"],
               stroke_extend=H["stroke_extend"], contact=contact)
    text = f"# scenario {spath.name}\n{stext}\n# mechanism {mpath.name}\n{mtext}"
    return PeripheralModel(name, comment, text, step, out_step, duration, bool(fixed), P, arrays, s0, Z0, geo,
                           g["limits"])
