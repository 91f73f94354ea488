"""Berthing model builder: a scenario and its arm TOML packed into the kernel's arrays (seed 001 ch. VIII)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.contact import geometry as CG
from solver.core import bodies as B
from solver.errors import read_toml
from solver.scenario import ScenarioError
from solver.mechanisms.base import RunSettings

NA = 7                       # arm joints
NT = 13                      # tree slots: 6 base joints (free base) + 7 arm joints
Q, QD, TM, WM, IN, DIS, WRK = 0, NT, 2 * NT, 2 * NT + NA, 2 * NT + 2 * NA, 2 * NT + 3 * NA, 2 * NT + 3 * NA + 1
S_FT = WRK + 1               # per contact pair p: friction bristle stretch u (3, station frame) at S_FT + 3 p
# s: q, qd (13 slots each), rotor angle, rotor rate, servo integral (7 each), dissipated (with the friction's work
# -F_t.v_t, the bristles' stored energy counted in it until the channels move it to stored), work, bristles (7 x 3)
# Z: brake slider z (7), brake dissipation, captured, t_capture, touched per pair (7), brake slip sum, the
# payload-frame rates as shaped by the command accelerations (6)
ZB, ZBD, ZCAP, ZTC, ZTOUCH, ZSLIP, ZSH = 0, 7, 8, 9, 10, 17, 18
NZ = 24
# DRV columns per joint: gear k, c, rotor inertia, kp, ki, torque limit, rate limit, brake k, brake limit, range, stop k
D_K, D_C, D_J, D_KP, D_KI, D_TL, D_RL, D_BK, D_BL, D_RANGE, D_KS = range(11)
# P: contact k, c, mu, bristle k_t, substeps, capture depth, sphere radius, free base, tool/probe frame (9),
# manipulability floor, DLS damping, receptacle origin (3) and axis (3), bore entry distance, drives, command
# accelerations (2), bristle c_t, an applied load on the payload: force (3, world) at a point (3, last link frame)
P_K, P_C, P_MU, P_KT, P_SUB, P_CAPT, P_R, P_FREE, P_PF, P_WMIN, P_LAM, P_RO, P_RA, P_BORE, P_DRIVES, P_ACC, P_CT, \
    P_LF, P_LP = 0, 1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19, 22, 25, 26, 27, 29, 30, 33
NP = 36
DRIVES = ("servo", "off", "limp")   # servo: rate loops on; off: no motor torque, gears engaged; limp: gears disengaged
# PROF row: start step, mode (0 joint rates deg/s -> rad/s, 1 payload-frame rates, 2 operator), 7 values, brakes,
# ramp steps (the values blend linearly from the previous segment's of the same mode)
MODE_JOINT, MODE_PAYLOAD, MODE_OPERATOR = 0, 1, 2
NCMD = 9                     # operator command: mode, 7 values (SI: m/s, rad/s), brakes
PAIRS = ((0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 3))
# (sphere: 0 head 1 heel; station row: 0 funnel 1 bore 2 bottom 3 the bore's mouth edge)
PAIR_NAMES = (("head_funnel", "probe head on the funnel"), ("head_bore", "probe head in the bore"),
              ("head_bottom", "probe head on the bore bottom"), ("head_mouth", "probe head on the bore's mouth"),
              ("heel_funnel", "probe shaft on the funnel"), ("heel_bore", "probe shaft in the bore"),
              ("heel_mouth", "probe shaft on the bore's mouth"))
NS = S_FT + 3 * len(PAIRS)


@dataclass
class BerthingModel(RunSettings):
    JOINT: np.ndarray
    DRV: np.ndarray
    P: np.ndarray
    PROF: np.ndarray
    SPH: np.ndarray           # (2, 4) probe spheres: centre in the last link's frame, radius
    ROWS: np.ndarray          # (3, ROW) station rows in the base frame
    RINT: np.ndarray          # (3, 4) their kinds
    s0: np.ndarray
    Z0: np.ndarray
    nb: int                   # base joints in the tree: 0 fixed, 6 free
    geometry: dict = field(default_factory=dict)
    variant: str = "ssrms_mrm1"
    mechanism_type: str = "berthing"


def _vec(path, key, v, n):
    if not (isinstance(v, list) and len(v) == n and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          and math.isfinite(x) for x in v)):
        raise ScenarioError(path, key, f"expected {n} finite numbers, found {v!r}")
    return [float(x) for x in v]


def _num(path, key, tab, name, lo=-math.inf, hi=math.inf):
    v = tab.get(name) if isinstance(tab, dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (lo <= v <= hi) or not math.isfinite(v):
        raise ScenarioError(path, f"{key}.{name}", f"expected a number in [{lo:g}, {hi:g}], found {v!r}")
    return float(v)


def _rod(m, p0, p1, rt):
    """(mass, com, inertia) of a thin-walled tube of radius rt between two points of a link frame."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    d = p1 - p0
    L = float(np.linalg.norm(d))
    u = d / L if L > 0 else np.array([1.0, 0, 0])
    i_perp = m * L * L / 12.0
    return m, (p0 + p1) / 2, (i_perp * (np.eye(3) - np.outer(u, u)) + m * rt * rt * np.outer(u, u)).tolist()


def _point(m, c, r):
    """A joint housing (or the end effector) as a solid sphere of radius r."""
    return m, c, (0.4 * m * r * r * np.eye(3)).tolist()


def arm_rows(a, pay, tool, nb, base):
    """The tree: nb base joints (3 slides, 3 turns of the station) then the 7 arm joints; the payload is one rigid
    body with the last link."""
    rows = []
    if nb:
        bm, bI, bc = base["mass"], np.diag(base["inertia"]), base["com"]
        for i in range(6):                   # massless joints but the last, which carries the station
            axis = np.eye(3)[i % 3]
            last = i == 5
            rows.append(B.joint_row(i - 1, axis, (0, 0, 0), bm if last else 0.0, bc if last else (0, 0, 0),
                                    bI if last else np.zeros((3, 3)), prismatic=i < 3))
    off = a["offsets"] + [tool]
    for j in range(NA):
        nxt = np.asarray(off[j + 1], float)
        rj = a["joint_radius"]
        parts = [_point(a["joint_mass"], (0, 0, 0), rj)] if j > 0 else []
        if j in (3, 4):                      # the booms: links 3 and 4 (from the pitch and elbow joints)
            parts.append(_rod(a["boom_mass"], (0, 0, 0), nxt, a["boom_diameter"] / 2))
        if j == 0:
            parts.append(_point(a["joint_mass"], nxt * 0.5, rj))
        if j == NA - 1:
            parts.append(_point(a["end_effector_mass"], nxt * 0.5, a["end_effector_radius"]))
            L, R = pay["length"], pay["diameter"] / 2
            u = np.asarray(pay["axis"], float) / np.linalg.norm(pay["axis"])
            ia, it = 0.5 * pay["mass"] * R * R, pay["mass"] * (3 * R * R + L * L) / 12
            parts.append((pay["mass"], pay["com"], (it * np.eye(3) + (ia - it) * np.outer(u, u)).tolist()))
        m, c, inertia = B.rigid_sum(parts)
        rows.append(B.joint_row(nb - 1 + j if j > 0 else nb - 1, a["axes"][j], a["offsets"][j], m, c, inertia))
    return np.array(rows)


def forward(JOINT, q):
    """World KIN of joint angles q (plain call of the core's tree pose)."""
    KIN = np.zeros((JOINT.shape[0], B.NK))
    B.tree_pose(JOINT, np.asarray(q, float), KIN)
    return KIN


def load_berthing(spath: Path) -> BerthingModel:
    """Scenario + arm TOML -> BerthingModel; ScenarioError naming the file and key on bad input."""
    spath = Path(spath)
    _, sc = read_toml(spath, ScenarioError, "scenario")
    mech = sc.get("mechanism")
    if not isinstance(mech, str):
        raise ScenarioError(spath, "mechanism", f"expected the arm TOML's path, found {mech!r}")
    mpath = spath.parent / mech
    mtext, cfg = read_toml(mpath, ScenarioError, "berthing mechanism file")
    for sec in ("arm", "tool", "drives", "payload", "probe", "receptacle", "contact", "base", "operator"):
        if not isinstance(cfg.get(sec), dict):
            raise ScenarioError(mpath, sec, "missing table")
    a, d, pay, pr, rc, ct, base = (cfg[k] for k in ("arm", "drives", "payload", "probe", "receptacle", "contact",
                                                    "base"))
    for k in ("axes", "offsets"):
        if not isinstance(a.get(k), list) or len(a[k]) != NA:
            raise ScenarioError(mpath, f"arm.{k}", f"expected {NA} vectors, found {a.get(k)!r}")
        a[k] = [_vec(mpath, f"arm.{k}[{i}]", v, 3) for i, v in enumerate(a[k])]
    for k in ("joint_mass", "boom_mass", "end_effector_mass", "range_deg", "stop_k", "joint_radius",
              "end_effector_radius", "boom_diameter"):
        a[k] = _num(mpath, "arm", a, k, 0.0)
    tool = _vec(mpath, "tool.point", cfg["tool"].get("point"), 3)
    for k in ("mass", "length", "diameter"):
        pay[k] = _num(mpath, "payload", pay, k, 1e-9)
    pay["com"], pay["axis"] = _vec(mpath, "payload.com", pay.get("com"), 3), _vec(mpath, "payload.axis",
                                                                                  pay.get("axis"), 3)
    mode = base.get("mode")
    if mode not in ("fixed", "free"):
        raise ScenarioError(mpath, "base.mode", f"expected \"fixed\" or \"free\", found {mode!r}")
    nb = 6 if mode == "free" else 0
    base["mass"] = _num(mpath, "base", base, "mass", 1e-9)
    base["inertia"], base["com"] = _vec(mpath, "base.inertia", base.get("inertia"), 3), \
        _vec(mpath, "base.com", base.get("com"), 3)
    JOINT = arm_rows(a, pay, tool, nb, base)
    dn = {k: _num(mpath, "drives", d, k, 0.0) for k in ("gear_k", "gear_c", "rotor_inertia", "servo_kp", "servo_ki",
                                                       "torque_limit", "rate_limit_deg_s", "brake_k", "brake_limit")}
    drives = d.get("mode", "servo")
    if drives not in DRIVES:
        raise ScenarioError(mpath, "drives.mode", f"expected one of {', '.join(DRIVES)}, found {drives!r}")
    if dn["rotor_inertia"] <= 0 or dn["gear_k"] <= 0 or dn["brake_k"] <= 0:
        raise ScenarioError(mpath, "drives", "rotor_inertia, gear_k and brake_k must be positive")
    DRV = np.array([[dn["gear_k"], dn["gear_c"], dn["rotor_inertia"], dn["servo_kp"], dn["servo_ki"],
                     dn["torque_limit"], math.radians(dn["rate_limit_deg_s"]), dn["brake_k"], dn["brake_limit"],
                     math.radians(a["range_deg"]), a["stop_k"]]] * NA)
    # the start pose, the probe frame in the last link and the receptacle placed off the probe tip
    ini = sc.get("initial", {})
    q0 = np.radians(_vec(spath, "initial.joints_deg", ini.get("joints_deg"), NA))
    standoff = _num(spath, "initial", ini, "standoff", -5.0, 10.0)   # < 0: the head starts inside the receptacle
    lat = _vec(spath, "initial.lateral_error", ini.get("lateral_error", [0.0, 0.0]), 2)
    tip, heel = _vec(mpath, "probe.tip", pr.get("tip"), 3), _vec(mpath, "probe.heel", pr.get("heel"), 3)
    ex = np.asarray(_vec(mpath, "probe.direction", pr.get("direction"), 3))
    ex /= np.linalg.norm(ex)
    r = _num(mpath, "probe", pr, "radius", 1e-4)
    ey = np.cross(pay["axis"], ex) if abs(np.dot(pay["axis"], ex)) < 0.99 else np.cross([0, 1.0, 0], ex)
    if np.linalg.norm(ey) < 1e-9:
        ey = np.cross([1.0, 0, 0], ex)
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    Rpf = np.column_stack([ex, ey, ez])          # payload (probe) frame axes in the last link's frame
    qfull = np.zeros(nb + NA)
    qfull[nb:] = q0
    KIN = forward(JOINT, qfull)
    R7 = KIN[-1, 0:9].reshape(3, 3)
    o7 = KIN[-1, 9:12]
    tip_w = o7 + R7 @ tip
    axis_w = R7 @ ex
    yw, zw = R7 @ ey, R7 @ ez
    clear = _num(mpath, "receptacle", rc, "clearance", 0.0, 0.05)
    fr, fd = _num(mpath, "receptacle", rc, "funnel_radius", r), _num(mpath, "receptacle", rc, "funnel_depth", 1e-3)
    bl, capt = _num(mpath, "receptacle", rc, "bore_length", 1e-3), _num(mpath, "receptacle", rc, "capture_depth", 0.0)
    rb = r + clear
    entry = tip_w + (standoff + r) * axis_w + lat[0] * yw + lat[1] * zw   # funnel entry centre (head front at standoff)
    rows, kinds = [], []
    edge = _num(mpath, "receptacle", rc, "mouth_edge_radius", 1e-5, 0.05)
    funnel = CG.cone_row(entry, axis_w, 0.0, fr, fd, rb, side=1)
    wedge = (funnel[1][19:21], (0.0, -1.0))           # the funnel's and the bore's meridian normals
    for k, w in (funnel, CG.cone_row(entry, axis_w, fd, rb, fd + bl, rb, side=1),
                 CG.annulus_row(entry + (fd + bl) * axis_w, -axis_w, 0.0, rb),
                 CG.circle_row(entry + fd * axis_w, axis_w, rb + edge, edge, wedge=wedge)):
        kinds.append([k, 0, 0, 0])
        rows.append(w)
    P = np.zeros(NP)
    P[P_K], P[P_C], P[P_MU], P[P_CT] = (_num(mpath, "contact", ct, k, 0.0) for k in ("k", "c", "mu", "c_t"))
    P[P_KT] = _num(mpath, "contact", ct, "k_t", 1e-9)
    P[P_SUB], P[P_CAPT], P[P_R], P[P_FREE] = _num(mpath, "contact", ct, "substeps", 1, 64), capt, r, float(nb > 0)
    P[P_PF:P_PF + 9] = Rpf.reshape(9)
    P[P_WMIN] = _num(mpath, "operator", cfg["operator"], "manipulability_floor", 1e-9)
    P[P_LAM] = _num(mpath, "operator", cfg["operator"], "dls_damping", 0.0)
    P[P_RO:P_RO + 3], P[P_RA:P_RA + 3], P[P_BORE] = entry, axis_w, fd
    op = cfg["operator"]
    P[P_ACC] = _num(mpath, "operator", op, "acceleration", 1e-6)
    P[P_ACC + 1] = math.radians(_num(mpath, "operator", op, "angular_acceleration_deg_s2", 1e-6))
    P[P_DRIVES] = DRIVES.index(drives)        # (a free base: the station rows ride on it, world = base frame at t = 0)
    load = sc.get("load", {})                  # a constant force on the payload (default at the probe head's front)
    if not isinstance(load, dict):
        raise ScenarioError(spath, "load", f"expected a table, found {load!r}")
    P[P_LF:P_LF + 3] = _vec(spath, "load.force", load.get("force", [0.0] * 3), 3)
    P[P_LP:P_LP + 3] = _vec(spath, "load.point", load.get("point", list(np.asarray(tip) + r * ex)), 3)
    PROF = _profile(spath, sc, float(sc.get("step", 0.0)))
    s0 = np.zeros(NS)
    s0[Q + nb:Q + nb + NA] = q0
    s0[TM:TM + NA] = q0
    rates = np.radians(_vec(spath, "initial.rates_deg_s", ini.get("rates_deg_s", [0.0] * NA), NA))
    s0[QD + nb:QD + nb + NA] = rates
    s0[WM:WM + NA] = np.radians(_vec(spath, "initial.rotor_rates_deg_s", ini["rotor_rates_deg_s"], NA)) \
        if "rotor_rates_deg_s" in ini else rates      # the motors' rotors (output side): as the joints by default
    Z0 = np.zeros(NZ)
    Z0[ZB:ZB + NA] = q0
    step, out, dur = (_num(spath, "scenario", sc, k, 1e-6) for k in ("step", "output_step", "duration"))
    geo = dict(tip=tip, heel=heel, ex=ex, r=r, rb=rb, fr=fr, fd=fd, bl=bl, entry=entry, axis=axis_w, tool=tool,
               offsets=a["offsets"], pay=pay, operator=cfg["operator"], Rpf=Rpf)
    return BerthingModel(str(sc.get("name", spath.stem)), str(sc.get("comment", "")), mtext, step, out, dur, JOINT,
                         DRV, P, PROF, np.array([[*tip, r], [*heel, r]]), np.array(rows), np.array(kinds, np.int64),
                         s0, Z0, nb, geo)


def _profile(spath, sc, h) -> np.ndarray:
    """[[profile]] segments -> PROF rows (start step, mode, 7 values in SI, brakes)."""
    segs = sc.get("profile")
    if not isinstance(segs, list) or not segs:
        raise ScenarioError(spath, "profile", "expected at least one [[profile]] segment")
    rows, last = [], -1
    for i, g in enumerate(segs):
        key = f"profile[{i}]"
        t = _num(spath, key, g, "t", 0.0)
        k = int(round(t / h)) if h > 0 else 0
        if k <= last:
            raise ScenarioError(spath, f"{key}.t", f"{t:g} s is not after the previous segment's start")
        last = k
        frame = g.get("frame")
        brakes = g.get("brakes", False)
        if not isinstance(brakes, bool):
            raise ScenarioError(spath, f"{key}.brakes", f"expected true or false, found {brakes!r}")
        vals = np.zeros(7)
        if frame == "operator":
            mode = MODE_OPERATOR
        elif frame == "joint":
            mode, vals[:] = MODE_JOINT, np.radians(_vec(spath, f"{key}.rates", g.get("rates"), 7))
        elif frame == "payload":
            v = _vec(spath, f"{key}.rates", g.get("rates"), 6)
            mode, vals[:6] = MODE_PAYLOAD, [*v[:3], *np.radians(v[3:])]
        else:
            raise ScenarioError(spath, f"{key}.frame", f"expected \"payload\", \"joint\" or \"operator\", found {frame!r}")
        ramp = _num(spath, key, g, "ramp", 0.0, 600.0) if "ramp" in g else 0.0
        rows.append([k, mode, *vals, float(brakes), round(ramp / h) if h > 0 else 0])
    if rows[0][0] != 0:
        raise ScenarioError(spath, "profile[0].t", "the first segment must start at t = 0")
    return np.array(rows, float)
