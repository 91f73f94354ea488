"""Probe-cone geometry from TOML: packed primitive rows and the pair table for the kernels, and
wireframes (`PartGeometry`) for drawing, each part in the frame of the body it rides on."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..runfile import ContactPairInfo, PartGeometry
from ..wireframe import Wire
from . import kernels as K
from .pairset import (N_PAR, PAR_BR, PAR_BX, PAR_C, PAR_DMAX, PAR_K, PAR_MA, PAR_MO, PAR_MSEG, PAR_MSIDE, PAR_MT,
                      PAR_MU, PAR_VSLIP)

BODIES = ("passive_craft", "active_craft", "housing", "probe", "probe_head", "limiter")
DEFAULT_TOML = Path(__file__).resolve().parents[2] / "resources" / "geometry" / "probe_cone.toml"


# ------------------------------------------------------------------------------------------------
# row builders (body frame)
# ------------------------------------------------------------------------------------------------

def _unit(v):
    v = np.asarray(v, float)
    n = np.linalg.norm(v)
    if n == 0:
        raise ValueError("zero-length axis")
    return v / n


def _perp(a):
    t = np.array([0.0, 1.0, 0.0]) if abs(a[0]) > 0.9 else np.array([1.0, 0.0, 0.0])
    return _unit(t - (t @ a) * a)


def _row():
    return np.zeros(K.ROW)


def sphere_row(c, r):
    """Sphere (point when r = 0)."""
    w = _row()
    w[0:3], w[3] = c, r
    return K.SPHERE, w


def segment_row(p0, p1, r=0.0):
    """Segment with radius r (a cylinder around the segment with rounded ends)."""
    w = _row()
    w[0:3], w[3:6], w[6] = p0, p1, r
    return K.SEGMENT, w


def circle_row(o, axis, R, tube=0.0, nbis=5, wedge=None, e1=None):
    """Edge circle / torus; wedge = (m1, m2): meridian (axial, radial) normals of the adjoining faces."""
    a = _unit(axis)
    w = _row()
    w[0:3], w[3:6] = o, a
    w[6:9] = _perp(a) if e1 is None else _unit(np.asarray(e1, float) - (np.asarray(e1) @ a) * a)
    if not 1 <= nbis <= 9:
        raise ValueError("bisection steps must be 1..9")
    w[9], w[10], w[11] = R, tube, nbis
    if wedge is not None:
        m1, m2 = _unit(wedge[0]), _unit(wedge[1])
        if m1[0] * m2[1] - m1[1] * m2[0] < 0:
            m1, m2 = m2, m1
        w[12:14], w[14:16], w[16] = m1, m2, 1.0
    return K.CIRCLE, w


def cone_row(o, axis, x0, r0, x1, r1, side=1, nbis=5, gen_r=0.0, e1=None):
    """Frustum surface x0..x1 along the axis (cylinder if r0 == r1); side +1: free space inside."""
    a = _unit(axis)
    if x1 < x0:
        x0, r0, x1, r1 = x1, r1, x0, r0
    L = math.hypot(x1 - x0, r1 - r0)
    if x1 - x0 <= 0:
        raise ValueError("cone with zero axial length: use an annulus")
    if not 1 <= nbis <= 9:
        raise ValueError("bisection steps must be 1..9")
    gx, gr = (x1 - x0) / L, (r1 - r0) / L
    mx, mr = (gr, -gx) if side > 0 else (-gr, gx)
    w = _row()
    w[0:3], w[3:6] = o, a
    w[6:9] = _perp(a) if e1 is None else _unit(np.asarray(e1, float) - (np.asarray(e1) @ a) * a)
    w[9:21] = [x0, r0, x1, r1, side, nbis, gen_r, L, gx, gr, mx, mr]
    return K.CONE, w


def annulus_row(o, normal, rho_min, rho_max):
    """Plane normal to `normal` facing +normal, bounded by rho_min..rho_max about o."""
    a = _unit(normal)
    w = _row()
    w[0:3], w[3:6], w[6:9] = o, a, _perp(a)
    w[9], w[10] = rho_min, rho_max
    return K.ANNULUS, w


def face_row(vertices, normal):
    """Convex planar quad (trapezoid) facing `normal`; vertices are reordered counter-clockwise."""
    v = np.asarray(vertices, float).reshape(4, 3)
    n = _unit(normal)
    c = v.mean(0)
    e1 = _perp(n)
    e2 = np.cross(n, e1)
    ang = np.arctan2((v - c) @ e2, (v - c) @ e1)
    v = v[np.argsort(ang)]
    if abs((v - v[0]) @ n).max() > 1e-9:
        raise ValueError("face vertices are not in one plane normal to the given normal")
    w = _row()
    w[0:12], w[12:15] = v.ravel(), n
    return K.FACE, w


def latch_tip_row(x, psi, rho_retracted, rho_extended, r):
    """Latch tip sphere whose distance from the probe axis follows state[0] (latch extension)."""
    w = _row()
    w[0:7] = [x, psi, rho_retracted, rho_extended, r, math.cos(psi), math.sin(psi)]
    return K.LATCH_TIP, w


def roller_row(pivot_x, pivot_rho, psi, lever, phi_retracted, phi_extended, R, tube, nbis):
    """Alignment-lever roller (torus) whose lever angle follows state[1] (lever extension)."""
    w = _row()
    if not 1 <= nbis <= 9:
        raise ValueError("bisection steps must be 1..9")
    w[0:11] = [pivot_x, pivot_rho, psi, lever, phi_retracted, phi_extended, R, tube, nbis,
               math.cos(psi), math.sin(psi)]
    return K.ROLLER, w


def fillet(corner, m1, m2, tube):
    """Centre (axial, radial) of a rounding of radius tube at a convex meridian corner, and the
    tangent points on the two faces whose free-side normals are m1, m2."""
    m1, m2 = _unit(m1), _unit(m2)
    c = np.asarray(corner, float) - tube * (m1 + m2) / (1.0 + m1 @ m2)
    return c, c + tube * m1, c + tube * m2


def _bounding(kind, w):
    """Bounding sphere (centre, radius) of a body-frame row, for the pair's quick test."""
    if kind == K.SPHERE:
        return w[0:3], w[3]
    if kind == K.SEGMENT:
        return 0.5 * (w[0:3] + w[3:6]), 0.5 * np.linalg.norm(w[3:6] - w[0:3]) + w[6]
    if kind == K.CIRCLE:
        return w[0:3], w[9] + w[10]
    if kind == K.CONE:
        xm, hx, rm = 0.5 * (w[9] + w[11]), 0.5 * (w[11] - w[9]), max(w[10], w[12])
        return w[0:3] + xm * w[3:6], math.hypot(hx, rm) + w[15]
    if kind == K.ANNULUS:
        return w[0:3], w[10]
    if kind == K.FACE:
        v = w[0:12].reshape(4, 3)
        c = v.mean(0)
        return c, np.linalg.norm(v - c, axis=1).max()
    raise ValueError(f"no bounding sphere for passive kind {kind}")


def _meridian_capsule(rows):
    """Axis origin, unit axis, (x0, r0, x1, r1) and half-thickness of a capsule in the (x, rho) half-plane that
    holds every passive row of a pair, and the one-sided surface's line (x, r, nx, nr), if all rows are coaxial
    surfaces of revolution (cone, circle, annulus) with at most one one-sided (unbounded) row; else None."""
    if any(k not in (K.CONE, K.CIRCLE, K.ANNULUS) for k, _ in rows):
        return None
    o, a = rows[0][1][0:3], rows[0][1][3:6] / np.linalg.norm(rows[0][1][3:6])
    feats = []                                        # (x, r, x', r', tube): a segment or point, thickened
    sides = []                                        # one-sided rows: a point of the line and its free normal
    for kind, w in rows:
        aj = w[3:6] / np.linalg.norm(w[3:6])
        if np.linalg.norm(np.cross(aj, a)) > 1e-9 or np.linalg.norm(np.cross(w[0:3] - o, a)) > 1e-9:
            return None
        xo, sg = float(np.dot(w[0:3] - o, a)), float(np.sign(np.dot(aj, a)))
        if kind == K.CONE:
            feats.append((xo + sg * w[9], w[10], xo + sg * w[11], w[12], max(w[15], 0.0)))
            sides.append((xo + sg * w[9], w[10], sg * w[19], w[20]))
        elif kind == K.CIRCLE:                        # a torus: bounded penetration
            feats.append((xo, w[9], xo, w[9], w[10]))
        else:
            feats.append((xo, w[9], xo, w[10], 0.0))
            sides.append((xo, w[9], sg, 0.0))
    if len(sides) > 1:
        return None
    pts = [np.array(f[i:i + 2]) for f in feats for i in (0, 2)]
    p, q = max(((p, q) for p in pts for q in pts), key=lambda pq: np.linalg.norm(pq[0] - pq[1]))
    e = q - p

    def dist(v):
        t = 0.0 if not e.any() else min(1.0, max(0.0, float(np.dot(v - p, e) / np.dot(e, e))))
        return float(np.linalg.norm(v - p - t * e))

    # a feature's largest distance from the segment is at one of its ends (distance to a segment is convex)
    thick = max(max(dist(np.array(f[0:2])), dist(np.array(f[2:4]))) + f[4] for f in feats)
    return o, a, (*p, *q), thick, (sides[0] if sides else (0.0, 0.0, 0.0, 0.0))


# ------------------------------------------------------------------------------------------------
# packed geometry
# ------------------------------------------------------------------------------------------------

@dataclass
class ContactGeometry:
    """Packed arrays for `evaluate_pairs` plus names, viewer pair records and wireframes."""
    prim: np.ndarray            # (P, ROW) float64, body frame
    pint: np.ndarray            # (P, 2) int64: kind, body index
    pairs: np.ndarray           # (NP, 4) int64: active prim, first passive prim, count, exclusion
    ppar: np.ndarray            # (NP, N_PAR) float64: k, c, mu, slip speed, depth max, bounding sphere
    work: np.ndarray            # (P, ROW + 1) float64 scratch: rows in world frame; last column: row in use (per step)
    body_names: tuple = BODIES
    prim_names: list = field(default_factory=list)
    pair_names: list = field(default_factory=list)
    pair_groups: list = field(default_factory=list)
    pair_info: list = field(default_factory=list)   # ContactPairInfo per pair
    parts: list = field(default_factory=list)       # PartGeometry per drawn part

    def pair_index(self, name: str) -> int:
        return self.pair_names.index(name)


class GeometryBuilder:
    """Collects named primitives and pairs, then packs them into a ContactGeometry."""

    def __init__(self, bodies=BODIES):
        self.bodies = tuple(bodies)
        self.prims: list[tuple[str, int, int, np.ndarray]] = []
        self.pairs: list[dict] = []

    def add(self, name, body, kind_row):
        kind, row = kind_row
        self.prims.append((name, kind, self.bodies.index(body), row))
        return len(self.prims) - 1

    def pair(self, name, active, passive, params, group="", exclude=None, parts=("", "")):
        names = [p[0] for p in self.prims]
        ia = names.index(active)
        ib = [names.index(p) for p in passive]
        if ib != list(range(ib[0], ib[0] + len(ib))):
            raise ValueError(f"pair {name}: passive primitives must be consecutive")
        if len({self.prims[j][2] for j in ib}) != 1:
            raise ValueError(f"pair {name}: passive primitives on different bodies")
        ka = K.effective_kind.py_func(self.prims[ia][1])   # plain Python: no compile for one call at load
        for j in ib:
            if (ka, self.prims[j][1]) not in K.SUPPORTED:
                raise ValueError(f"pair {name}: kinds {ka}/{self.prims[j][1]} not supported")
        self.pairs.append(dict(name=name, a=ia, b0=ib[0], nb=len(ib), params=params, group=group,
                               exclude=exclude, parts=parts))

    def build(self, parts=()) -> ContactGeometry:
        P, NP = len(self.prims), len(self.pairs)
        prim = np.zeros((P, K.ROW))
        pint = np.zeros((P, 2), np.int64)
        for j, (_, kind, body, row) in enumerate(self.prims):
            prim[j], pint[j] = row, (kind, body)
        pairs = np.zeros((NP, 4), np.int64)
        ppar = np.zeros((NP, N_PAR))
        names = [p["name"] for p in self.pairs]
        for k, p in enumerate(self.pairs):
            ex = -1 if p["exclude"] is None else names.index(p["exclude"])
            if ex >= k:
                raise ValueError(f"pair {p['name']}: exclusion must name an earlier pair")
            pairs[k] = (p["a"], p["b0"], p["nb"], ex)
            pr = p["params"]
            ppar[k, PAR_K], ppar[k, PAR_C], ppar[k, PAR_MU] = pr["k"], pr["c"], pr["mu"]
            ppar[k, PAR_VSLIP], ppar[k, PAR_DMAX] = pr["slip_speed"], pr["depth_max"]
            spheres = [_bounding(self.prims[j][1], self.prims[j][3]) for j in range(p["b0"], p["b0"] + p["nb"])]
            c = np.mean([s[0] for s in spheres], axis=0)
            ppar[k, PAR_BX:PAR_BX + 3] = c
            ppar[k, PAR_BR] = max(np.linalg.norm(s[0] - c) + s[1] for s in spheres)
            cap = _meridian_capsule([(self.prims[j][1], self.prims[j][3])
                                     for j in range(p["b0"], p["b0"] + p["nb"])])
            ppar[k, PAR_MT] = -1.0
            if cap is not None:
                ppar[k, PAR_MO:PAR_MO + 3], ppar[k, PAR_MA:PAR_MA + 3] = cap[0], cap[1]
                ppar[k, PAR_MSEG:PAR_MSEG + 4], ppar[k, PAR_MT] = cap[2], cap[3]
                ppar[k, PAR_MSIDE:PAR_MSIDE + 4] = cap[4]
        info = [ContactPairInfo(p["name"], p["parts"][0], p["parts"][1], p["name"].replace("_", " "))
                for p in self.pairs]
        return ContactGeometry(prim, pint, pairs, ppar, np.zeros((P, K.ROW + 1)), self.bodies,
                               [p[0] for p in self.prims], names, [p["group"] for p in self.pairs],
                               info, list(parts))


# ------------------------------------------------------------------------------------------------
# the probe-cone unit
# ------------------------------------------------------------------------------------------------

def _around(count, first_deg):
    return [math.radians(first_deg) + 2 * math.pi * k / count for k in range(count)]


def _polar(x, rho, psi):
    return np.array([x, rho * math.cos(psi), rho * math.sin(psi)])


def load(path=DEFAULT_TOML, movable_limiter: bool = False) -> ContactGeometry:
    """Read the geometry TOML and return the packed probe-cone pair set with its wireframes."""
    cfg = tomllib.loads(Path(path).read_text())
    return build_probe_cone(cfg, movable_limiter)


def build_probe_cone(cfg: dict, movable_limiter: bool = False) -> ContactGeometry:
    """Primitives, pairs and wireframes of the probe-cone unit from a parsed geometry TOML."""
    rc, so, sl, hd = cfg["receiving_cone"], cfg["socket"], cfg["socket_slots"], cfg["probe_head"]
    la, li, lp, lv = cfg["latches"], cfg["limiter"], cfg["load_pads"], cfg["alignment_lever"]
    ring, ct = cfg["docking_ring"], cfg["contact"]
    R0, D, Rs, Sd = rc["entrance_radius"], rc["depth"], so["radius"], so["depth"]
    alpha = math.atan2(R0 - Rs, D)
    m_cone = np.array([math.sin(alpha), -math.cos(alpha)])     # meridian (axial, radial) free-side normals
    m_flange, m_bore = np.array([1.0, 0.0]), np.array([0.0, -1.0])
    ex = np.array([1.0, 0.0, 0.0])
    g = GeometryBuilder()

    # passive: receiving cone trimmed to the tangent points of its rounded edges, socket, slots, ring
    ce, te_cone, _ = fillet((0.0, R0), m_cone, m_flange, rc["entry_edge_radius"])
    cm, tm_cone, tm_bore = fillet((-D, Rs), m_cone, m_bore, so["mouth_edge_radius"])
    g.add("receiving_cone", "passive_craft", cone_row((0, 0, 0), ex, tm_cone[0], tm_cone[1],
                                                      te_cone[0], te_cone[1], side=1))
    g.add("entry_edge", "passive_craft", circle_row((ce[0], 0, 0), ex, ce[1], rc["entry_edge_radius"],
                                                    wedge=(m_cone, m_flange)))
    g.add("socket_mouth", "passive_craft", circle_row((cm[0], 0, 0), ex, cm[1], so["mouth_edge_radius"],
                                                      wedge=(m_bore, m_cone)))
    g.add("socket_bore", "passive_craft", cone_row((0, 0, 0), ex, -D - Sd, Rs, tm_bore[0], Rs, side=1))
    g.add("socket_bottom", "passive_craft", annulus_row((-D - Sd, 0, 0), ex, 0.0, Rs))
    x_stop = -D - sl["stop_below_mouth"]
    x_far = x_stop - sl["length"]
    hs, hf = 0.5 * sl["width_at_stop"], 0.5 * sl["width_far"]
    rin, rout = Rs, Rs + sl["radial_depth"]
    slot_psi = _around(sl["count"], sl["first_angle"])
    for k, psi in enumerate(slot_psi, 1):
        er, et = _polar(0, 1, psi), _polar(0, 1, psi + math.pi / 2)
        for side, tag in ((1, "a"), (-1, "b")):
            v = [x * ex + r * er + side * h * et for x, r, h in
                 ((x_stop, rin, hs), (x_stop, rout, hs), (x_far, rout, hf), (x_far, rin, hf))]
            n = np.cross(v[1] - v[0], v[3] - v[0])
            n = _unit(n if n @ (-side * et) > 0 else -n)
            g.add(f"slot_{k}_wall_{tag}", "passive_craft", face_row(v, n))
    for k, psi in enumerate(slot_psi, 1):
        er, et = _polar(0, 1, psi), _polar(0, 1, psi + math.pi / 2)
        v = [x_stop * ex + r * er + s * hs * et for r in (rin, rout) for s in (-1, 1)]
        g.add(f"stop_{k}", "passive_craft", face_row(v, -ex))
    g.add("passive_ring", "passive_craft", annulus_row((0, 0, 0), ex, ring["inner_radius"], ring["outer_radius"]))

    # active
    g.add("active_ring", "active_craft", circle_row((0, 0, 0), ex, 0.5 * (ring["inner_radius"] + ring["outer_radius"])))
    g.add("probe_head", "probe_head", sphere_row((0, 0, 0), hd["radius"]))
    latch_psi = _around(la["count"], la["first_angle"])
    for k, psi in enumerate(latch_psi, 1):
        g.add(f"latch_{k}", "probe_head", latch_tip_row(la["tip_x"], psi, la["tip_radius_retracted"],
                                                        la["tip_radius_extended"], la["tip_sphere_radius"]))
    lim_body = "limiter" if movable_limiter else "housing"
    x_lim = 0.0 if movable_limiter else li["back_rim_x_in_housing"]
    rf, rb, Ll = li["radius_front"], li["radius_back"], li["length"]
    tube = li["rim_edge_radius"]
    g.add("limiter_rim", lim_body, circle_row((x_lim, 0, 0), ex, rb - tube, tube, li["bisection_steps"]))
    g.add("limiter", lim_body, cone_row((x_lim, 0, 0), -ex, 0.0, rb, Ll, rf, side=-1,
                                        nbis=li["bisection_steps"]))
    Lg = math.hypot(Ll, rf - rb)
    gx, gr = Ll / Lg, (rf - rb) / Lg
    m_out = np.array([-gr, gx])                        # limiter outer normal (axial along -x, radial)
    pad_psi = _around(lp["count"], lp["first_angle"])
    f = lp["at_fraction"]
    s_ax, r_s = Ll * (1 - f), rf + f * (rb - rf)
    off = lp["height"] - lp["radius"]
    for k, psi in enumerate(pad_psi, 1):
        c = _polar(x_lim - (s_ax + off * m_out[0]), r_s + off * m_out[1], psi)
        g.add(f"load_pad_{k}", lim_body, sphere_row(c, lp["radius"]))
    lever_psi = _around(lv["count"], lv["first_angle"])
    for k, psi in enumerate(lever_psi, 1):
        g.add(f"roller_{k}", "housing", roller_row(
            lv["pivot_x"], lv["pivot_radius"], psi, lv["length"], math.radians(lv["angle_retracted"]),
            math.radians(lv["angle_extended"]), lv["roller_radius"] - lv["roller_tyre_radius"],
            lv["roller_tyre_radius"], lv["bisection_steps"]))

    # pairs (the order is the output order; an exclusion names an earlier pair, 003 "incompatibility")
    g.pair("head_cone", "probe_head", ["receiving_cone", "entry_edge"], ct["head_cone"], "head_cone",
           parts=("probe_head", "receiving_cone"))
    g.pair("head_socket", "probe_head", ["socket_mouth", "socket_bore"], ct["head_socket"], "head_socket",
           exclude="head_cone", parts=("probe_head", "socket"))
    g.pair("head_socket_bottom", "probe_head", ["socket_bottom"], ct["head_socket"], "head_socket",
           parts=("probe_head", "socket"))
    for k in range(1, la["count"] + 1):
        g.pair(f"latch_slot_{k}", f"latch_{k}", [f"slot_{k}_wall_a", f"slot_{k}_wall_b"], ct["latch_slot"],
               "latch_slot", parts=("latches", "socket_slots"))
    for k in range(1, la["count"] + 1):
        g.pair(f"latch_stop_{k}", f"latch_{k}", [f"stop_{k}"], ct["latch"], "latch_stop",
               parts=("latches", "socket_stops"))
    g.pair("limiter_cone", "limiter_rim", ["receiving_cone"], ct["limiter"], "limiter_cone",
           parts=("limiter", "receiving_cone"))
    g.pair("limiter_edge", "limiter", ["entry_edge"], ct["limiter"], "limiter_cone",
           parts=("limiter", "receiving_cone"))
    for k in range(1, lp["count"] + 1):
        g.pair(f"load_pad_{k}", f"load_pad_{k}", ["receiving_cone", "entry_edge"], ct["limiter"], "load_pad_cone",
               parts=("load_pads", "receiving_cone"))
    for k in range(1, lv["count"] + 1):
        g.pair(f"roller_{k}", f"roller_{k}", ["receiving_cone"], ct["roller"], "roller_cone",
               parts=("rollers", "receiving_cone"))
    g.pair("ring_ring", "active_ring", ["passive_ring"], ct["ring"], "ring_ring",
           parts=("active_ring", "passive_ring"))
    return g.build(wireframes(cfg, movable_limiter))


# ------------------------------------------------------------------------------------------------
# wireframes
# ------------------------------------------------------------------------------------------------

def wireframes(cfg: dict, movable_limiter: bool = False) -> list[PartGeometry]:
    """Drawn parts, each in its body frame, matching the contact primitives."""
    rc, so, sl, hd = cfg["receiving_cone"], cfg["socket"], cfg["socket_slots"], cfg["probe_head"]
    la, li, lp, lv = cfg["latches"], cfg["limiter"], cfg["load_pads"], cfg["alignment_lever"]
    ho, pr, ring = cfg["housing"], cfg["probe"], cfg["docking_ring"]
    R0, D, Rs, Sd = rc["entrance_radius"], rc["depth"], so["radius"], so["depth"]
    parts = []

    def add(name, body, wire, kind="mechanism", vis=""):
        p, l = wire.build()
        parts.append(PartGeometry(name, body, p, l, kind, vis))

    add("receiving_cone", "passive_craft", Wire().frustum(0.0, R0, -D, Rs, n_generators=16, n_circles=4)
        .circle(0.0, rc["flange_radius"], 64), "cone")
    add("socket", "passive_craft", Wire().frustum(-D, Rs, -D - Sd, Rs, n_generators=8, n_circles=2)
        .circle(-D - Sd, 0.5 * Rs, 24), "cone")
    x_stop = -D - sl["stop_below_mouth"]
    x_far = x_stop - sl["length"]
    hs, hf = 0.5 * sl["width_at_stop"], 0.5 * sl["width_far"]
    rin, rout = Rs, Rs + sl["radial_depth"]
    slots, stops = Wire(), Wire()
    ex = np.array([1.0, 0.0, 0.0])
    for psi in _around(sl["count"], sl["first_angle"]):
        er, et = _polar(0, 1, psi), _polar(0, 1, psi + math.pi / 2)
        for s in (-1, 1):
            slots.polyline([x * ex + r * er + s * h * et for x, r, h in
                            ((x_stop, rin, hs), (x_stop, rout, hs), (x_far, rout, hf), (x_far, rin, hf))],
                           closed=True)
        stops.polyline([x_stop * ex + r * er + s * hs * et for r, s in ((rin, -1), (rout, -1), (rout, 1), (rin, 1))],
                       closed=True)
    add("socket_slots", "passive_craft", slots, "slot")
    add("socket_stops", "passive_craft", stops, "slot")
    rw = Wire().circle(0.0, ring["inner_radius"], 64).circle(0.0, ring["outer_radius"], 64)
    add("passive_ring", "passive_craft", rw, "ring")
    add("active_ring", "active_craft", Wire().circle(0.0, ring["inner_radius"], 64)
        .circle(0.0, ring["outer_radius"], 64), "ring")
    add("mechanism_base", "active_craft", Wire().box((0.0, -0.15, -0.15), (0.08, 0.15, 0.15)))
    add("housing", "housing", Wire().frustum(0.0, ho["radius"], -ho["length"], 0.8 * ho["radius"],
                                             n_generators=8, n_circles=3))
    x_lim = 0.0 if movable_limiter else li["back_rim_x_in_housing"]
    lim_body = "limiter" if movable_limiter else "housing"
    add("limiter", lim_body, Wire().frustum(x_lim, li["radius_back"], x_lim - li["length"], li["radius_front"],
                                            n_generators=12, n_circles=2), "limiter")
    pads = Wire()
    rf, rb, Ll = li["radius_front"], li["radius_back"], li["length"]
    f = lp["at_fraction"]
    Lg = math.hypot(Ll, rf - rb)
    m_out = np.array([-(rf - rb) / Lg, Ll / Lg])            # limiter outer normal (axial along -x, radial)
    R, hgt = lp["radius"], lp["height"]
    a_cap = math.sqrt(max(R * R - (R - hgt) ** 2, 0.0)) if hgt < R else R   # the crown cap's base radius
    for psi in _around(lp["count"], lp["first_angle"]):
        base = np.array([x_lim - Ll * (1 - f), rf + f * (rb - rf)])   # (x, radius) on the limiter cone
        ax = np.array([-m_out[0], m_out[1]])                           # outward normal in (x, radius)
        tg = np.array([ax[1], -ax[0]])                                 # along the generator
        er, et = _polar(0, 1, psi), _polar(0, 1, psi + math.pi / 2)

        def pt(u, v, w, base=base, ax=ax, tg=tg, er=er, et=et):
            m = base + u * tg + w * ax                                 # meridian point, then around by v
            return np.array([m[0], 0, 0]) + m[1] * er + v * et
        u_rim = (1 - f) * Lg                                           # the facing ends at the back rim
        ring = [pt(min(a_cap * math.cos(t), u_rim), a_cap * math.sin(t), 0.0) for t in np.linspace(0, 2 * math.pi, 13)]
        pads.polyline(ring)                                            # the pad facing's outline and a cross
        pads.polyline([pt(-a_cap, 0, 0), pt(0, 0, hgt), pt(min(a_cap, u_rim), 0, 0)])
        pads.polyline([pt(0, -a_cap, 0), pt(0, 0, hgt), pt(0, a_cap, 0)])
    add("load_pads", lim_body, pads, "pad")
    add("probe", "probe", Wire().frustum(0.0, pr["radius"], -pr["length"] + hd["radius"], pr["radius"],
                                         n_generators=4, n_circles=2))
    add("probe_head", "probe_head", Wire().sphere(hd["radius"]))
    latches = Wire()
    for psi in _around(la["count"], la["first_angle"]):
        root = _polar(la["tip_x"] + 0.02, 0.8 * hd["radius"], psi)
        tip = _polar(la["tip_x"], la["tip_radius_extended"], psi)
        latches.polyline([root, tip, _polar(la["tip_x"] - 0.01, 0.8 * hd["radius"], psi)])
    add("latches", "probe_head", latches, "latch", "head_near_socket")
    rollers = Wire()
    phi = math.radians(lv["angle_extended"])
    for psi in _around(lv["count"], lv["first_angle"]):
        pivot = _polar(lv["pivot_x"], lv["pivot_radius"], psi)
        tip = _polar(lv["pivot_x"] - lv["length"] * math.cos(phi),
                     lv["pivot_radius"] + lv["length"] * math.sin(phi), psi)
        rollers.polyline([pivot, tip])
        er, ax = _polar(0, 1, psi), _polar(0, 1, psi + math.pi / 2)
        b = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        r = lv["roller_radius"]
        rollers.polyline(tip + r * (np.cos(b)[:, None] * er + np.sin(b)[:, None] * np.cross(ax, er)), closed=True)
    add("rollers", "housing", rollers, "roller", "lever_extension")
    return parts
