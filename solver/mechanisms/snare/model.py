"""Snare scenario + mechanism TOML -> the kernel's arrays: cable sections, the initial helices (seed 004 eqs. 14-17:
the projection a circular arc found by Newton), ring drive, contact law, target pose and mass (resources/snare/)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.core import ancf_cable as A
from solver.core.free_body import rotation
from solver.errors import read_toml
from solver.mechanisms.snare import dynamics as D
from solver.scenario import ScenarioError
from solver.mechanisms.base import RunSettings


@dataclass
class SnareModel(RunSettings):
    P: np.ndarray
    M: np.ndarray
    MINV: np.ndarray
    FREE: np.ndarray
    FIXI: np.ndarray
    FIX: np.ndarray
    DS: np.ndarray
    s0: np.ndarray
    Z0: np.ndarray
    geometry: dict = field(default_factory=dict)
    variant: str = "three_cable"
    mechanism_type: str = "snare"


def arc(L_a, chord, tol=1e-14):
    """Radius R_a and angle alpha_a of the circular arc of length L_a over a chord (seed 004 eq. 16) by Newton."""
    if not chord < L_a < math.pi * chord / 2:
        raise ValueError(f"arc length {L_a} must lie between the chord {chord} and the half circle {math.pi * chord / 2}")
    a = math.sqrt(24 * (1 - chord / L_a))            # small-angle start: sin(a/2)/(a/2) ~ 1 - a^2/24
    for _ in range(50):
        f = L_a * math.sin(a / 2) / a - chord / 2
        df = L_a * (math.cos(a / 2) / (2 * a) - math.sin(a / 2) / (a * a))
        da = f / df
        a -= da
        if abs(da) < tol:
            break
    return L_a / a, a


def helix_nodes(n, R_r, h, L_a, theta0):
    """Nodes (n + 1, 6) of a cable from the fixed ring (x = 0, angle theta0) to the rotating ring (x = -h, theta0 +
    120 deg), its projection the arc of length L_a bulging towards the ring wall, x linear in arc length (|r_s| = 1)."""
    chord = math.sqrt(3.0) * R_r
    Ra, aa = arc(L_a, chord)
    L_s = math.hypot(L_a, h)
    mid = theta0 + math.pi / 3
    cen = (R_r / 2 - Ra * math.cos(aa / 2)) * np.array([math.cos(mid), math.sin(mid)])
    q = np.zeros((n + 1, 6))
    for j in range(n + 1):
        sig = j / n
        ph = mid + (sig - 0.5) * aa
        q[j, 0:3] = (-h * sig, cen[0] + Ra * math.cos(ph), cen[1] + Ra * math.sin(ph))
        q[j, 3:6] = np.array([-h, -Ra * aa * math.sin(ph), Ra * aa * math.cos(ph)]) / L_s
    return q


def initial_cables(n, R_r, h, L_a, th, Le, EA, EI, rhoA, g, M, MINV, FREE, FIXI, ng=4, steps=200000):
    """The three cables at rest at ring angle 0: the first relaxed from its helix (seed eq. 17) under gravity along
    -x by dynamic relaxation (the paper's straight stress-free cable; viscous, tau 0.05 s, 0.9 s), the others turned
    by their start angles."""
    q = helix_nodes(n, R_r, h, L_a, th[0])
    A.relax(q, M, MINV, FREE, FIXI, Le, EA, EI, rhoA, np.array([-g, 0.0, 0.0]), 0.5 * Le / 1600.0 / 4, steps, 0.05,
            ng)
    out = []
    for t in th:
        c, s = math.cos(t - th[0]), math.sin(t - th[0])
        Rx = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
        out.append(np.hstack([q[:, 0:3] @ Rx.T, q[:, 3:6] @ Rx.T]))
    return np.array(out)


def _num(path, tab, key, name, lo=None):
    """The number (or list, for a vector) `key` of table `tab`, checked against its schema range (solver/mechanisms/
    snare/schema.py; lo: a tighter lower end); ScenarioError naming the file and key."""
    from solver import schema
    p = schema.lookup(name, "snare")
    lo = p.lo if lo is None else max(lo, p.lo)
    hi, n = p.hi, (p.size or None) if p.kind == "vector" else None
    if key not in tab:
        raise ScenarioError(path, name, "missing")
    v = tab[key]
    vals = v if n is not None else [v]
    if n is not None and (not isinstance(v, list) or len(v) != n):
        raise ScenarioError(path, name, f"expected a list of {n} numbers, found {v!r}")
    for x in vals:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not lo <= x <= hi:
            raise ScenarioError(path, name, f"expected a finite number in [{lo:g}, {hi:g}], found {x!r}")
    return [float(x) for x in v] if n is not None else float(v)


def _tab(path, cfg, key):
    t = cfg.get(key)
    if not isinstance(t, dict):
        raise ScenarioError(path, key, "missing table [" + key + "]")
    return t


def quat_from_euler(deg):
    """(w, x, y, z) of successive rotations about x, y, z by deg (3)."""
    r, p, y = (math.radians(a) / 2 for a in deg)
    qx = np.array([math.cos(r), math.sin(r), 0, 0])
    qy = np.array([math.cos(p), 0, math.sin(p), 0])
    qz = np.array([math.cos(y), 0, 0, math.sin(y)])

    def mul(a, b):
        return np.array([a[0] * b[0] - a[1:] @ b[1:], *(a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:]))])
    return mul(mul(qz, qy), qx)


def load_snare(spath: Path) -> SnareModel:
    """A snare scenario and its mechanism file packed into the kernel's arrays (ScenarioError naming file and key)."""
    from solver import schema
    spath = Path(spath)
    _, sc = read_toml(spath, ScenarioError, "scenario")
    bad = schema.undeclared(sc, "scenario", "snare")          # a key the schema does not declare is refused
    if bad:
        raise ScenarioError(spath, *bad)
    mech = sc.get("mechanism")
    if not isinstance(mech, str):
        raise ScenarioError(spath, "mechanism", "expected the mechanism file's name")
    mpath = spath.parent / mech
    mtext, mc = read_toml(mpath, ScenarioError, "mechanism file")
    bad = schema.undeclared(mc, "mechanism", "snare")
    if bad:
        raise ScenarioError(mpath, *bad)
    cab, rings, rod, con, cap = (_tab(mpath, mc, k) for k in ("cable", "rings", "grapple_rod", "contact", "capture"))
    n = int(_num(mpath, cab, "elements", "cable.elements"))
    ng = int(_num(mpath, cab, "gauss_points", "cable.gauss_points"))
    if _num(mpath, cab, "count", "cable.count") != 3:
        raise ScenarioError(mpath, "cable.count", "the snare has 3 cables")
    E = _num(mpath, cab, "youngs_modulus", "cable.youngs_modulus")
    rho = _num(mpath, cab, "density", "cable.density")
    d = _num(mpath, cab, "diameter", "cable.diameter")
    L_a = _num(mpath, cab, "arc_length", "cable.arc_length")
    eta = _num(mpath, cab, "axial_damping", "cable.axial_damping")
    alpha = _num(mpath, cab, "motion_damping", "cable.motion_damping")
    th0 = _num(mpath, cab, "rings_start_angles_deg", "cable.rings_start_angles_deg")
    R_r = _num(mpath, rings, "radius", "rings.radius")
    h = _num(mpath, rings, "spacing", "rings.spacing")
    xs = _num(mpath, rings, "sensor_offset", "rings.sensor_offset")
    r_rod = _num(mpath, rod, "radius", "grapple_rod.radius")
    L_rod = _num(mpath, rod, "length", "grapple_rod.length")
    lock = _num(mpath, rod, "lock_depth", "grapple_rod.lock_depth")
    Es = _num(mpath, con, "effective_modulus", "contact.effective_modulus")
    C = _num(mpath, con, "damping", "contact.damping")
    mu = _num(mpath, con, "friction", "contact.friction")
    kt = _num(mpath, con, "bristle_stiffness", "contact.bristle_stiffness")
    ct = _num(mpath, con, "bristle_damping", "contact.bristle_damping")
    npe = int(_num(mpath, con, "points_per_element", "contact.points_per_element"))
    cent = _num(mpath, cap, "centred_radius", "capture.centred_radius")
    try:
        arc(L_a, math.sqrt(3) * R_r)
    except ValueError as exc:
        raise ScenarioError(mpath, "cable.arc_length", str(exc)) from None

    step = _num(spath, sc, "step", "step")
    out = _num(spath, sc, "output_step", "output_step", step)
    T = _num(spath, sc, "duration", "duration", step)
    dr, tg = _tab(spath, sc, "drive"), _tab(spath, sc, "target")
    om = math.radians(_num(spath, dr, "rate_deg_s", "drive.rate_deg_s"))
    amax = math.radians(_num(spath, dr, "angle_deg", "drive.angle_deg"))
    mode = tg.get("mode")
    if mode not in ("suspension", "free"):
        raise ScenarioError(spath, "target.mode", f"expected \"suspension\" or \"free\", found {mode!r}")
    err = _num(spath, tg, "position_error", "target.position_error")
    if "quaternion" in tg:
        qt = np.array(_num(spath, tg, "quaternion", "target.quaternion"))
        if not 0.9 < np.linalg.norm(qt) < 1.1:
            raise ScenarioError(spath, "target.quaternion", f"not a unit quaternion (norm {np.linalg.norm(qt):.4f})")
        qt /= np.linalg.norm(qt)
    else:
        qt = quat_from_euler(_num(spath, tg, "euler_deg", "target.euler_deg"))
    m = _num(spath, tg, "mass", "target.mass")
    inertia = _num(spath, tg, "inertia", "target.inertia")
    com = _num(spath, tg, "com_offset", "target.com_offset")
    g = _num(spath, tg, "gravity", "target.gravity")
    ks, cs, k_tilt = np.zeros(3), np.zeros(3), 0.0
    if mode == "suspension":
        su = _tab(spath, sc, "suspension")
        kz = _num(spath, su, "stiffness", "suspension.stiffness")
        lp = _num(spath, su, "pendulum_length", "suspension.pendulum_length")
        zeta = _num(spath, su, "damping_ratio", "suspension.damping_ratio")
        k_tilt = m * g * _num(spath, su, "hang_height", "suspension.hang_height")
        ks[:] = (kz, m * g / lp, m * g / lp)             # the spring along the vertical EE axis
        cs[:] = 2 * zeta * np.sqrt(ks * m)
        m_tr = m
    else:
        mb = _num(spath, tg, "base_mass", "target.base_mass")
        m_tr = m * mb / (m + mb)                          # relative motion of target and base (base rotation neglected)

    Ar, I = math.pi * d * d / 4, math.pi * d ** 4 / 64
    L_s = math.hypot(L_a, h)
    Le = L_s / n
    r_c = d / 2
    Rstar = r_c * r_rod / (r_c + r_rod)
    P = np.zeros(D.N_P)
    P[[D.P_N, D.P_L, D.P_EA, D.P_EI, D.P_ETA, D.P_RHOA, D.P_RC, D.P_RR, D.P_H, D.P_XS]] = (
        n, Le, E * Ar, E * I, eta, rho * Ar, r_c, R_r, h, -h - xs)
    P[[D.P_RROD, D.P_LROD, D.P_KH, D.P_C, D.P_MU, D.P_KT, D.P_OM, D.P_AMAX, D.P_MODE, D.P_M]] = (
        r_rod, L_rod, 4 / 3 * Es * math.sqrt(Rstar), C, mu, kt, om, amax, 0 if mode == "suspension" else 1, m_tr)
    P[D.P_I:D.P_I + 3] = inertia
    P[D.P_COM], P[D.P_G], P[D.P_CENT] = com, g, cent
    P[D.P_KS:D.P_KS + 3], P[D.P_CS:D.P_CS + 3] = ks, cs
    x_tip = -h - lock
    P[D.P_XTIP], P[D.P_KR], P[D.P_STEP], P[D.P_ALPHA] = x_tip, k_tilt, step, alpha
    P[D.P_CT], P[D.P_NG] = ct, ng
    th = np.radians(th0)
    P[D.P_ROT:D.P_ROT + 3] = th + 2 * math.pi / 3
    M = A.mass_matrix(n, Le, rho * Ar)
    fixed = np.zeros(2 * n + 2, bool)
    fixed[[0, 2 * n]] = True                          # ball joints: the end positions are held, the slopes free
    MINV, FREE = A.constrained_inverse(M, fixed)
    FIXI = np.flatnonzero(fixed).astype(np.int64)
    xi = (np.arange(npe) + 0.5) / npe
    DS = np.zeros((npe, 4))
    for k in range(npe):
        A.shape(xi[k], Le, DS[k], np.empty(4), np.empty(4))
    cables = initial_cables(n, R_r, h, L_a, th, Le, E * Ar, E * I, rho * Ar, g, M, MINV, FREE, FIXI, ng)
    FIX = cables[:, 0, 0:3].copy()
    Rt = _rot(qt)
    adapter = np.array([x_tip + L_rod, 0.0, 0.0]) + np.array(err)
    c0 = adapter + Rt[:, 0] * com
    s0 = np.zeros(D.state_size(n, npe))
    nq = cables.size
    s0[:nq] = cables.ravel()
    x = s0[2 * nq:]
    x[0:3], x[6:10] = c0, qt
    P[D.P_C0:D.P_C0 + 3] = c0
    depth, cable = initial_overlap(cables, adapter, Rt, r_rod, L_rod, r_c)
    if depth > r_c:
        raise ScenarioError(spath, "target.position_error", f"the grapple rod starts through cable {cable + 1} "
                            f"({1000 * depth:.1f} mm deep): outside what the snare captures from")
    text = sc_text(spath) + "\n# ---- mechanism " + mech + "\n" + mtext
    geo = dict(n=n, ring_radius=R_r, spacing=h, rod_radius=r_rod, rod_length=L_rod, cable_radius=r_c, L_s=L_s,
               x_tip=x_tip, sensor_x=-h - xs)
    return SnareModel(str(sc.get("name", spath.stem)), str(sc.get("comment", "")), text, step, out, T, P, M, MINV,
                      FREE.astype(np.int64), FIXI, FIX, DS, s0, np.zeros(D.NZ), geo)


def initial_overlap(cables, adapter, Rt, r_rod, L_rod, r_c):
    """Deepest overlap (m) of the cables' nodes with the rod (the contact law's rectangle) and its cable."""
    d = (cables[:, :, 0:3] - adapter) @ Rt                    # nodes in the target's frame
    z, r = -d[..., 0], np.hypot(d[..., 1], d[..., 2])
    ez = z - np.clip(z, 0.0, L_rod)
    er = r - np.minimum(r, r_rod)
    dist = np.hypot(ez, er)
    inside = (ez == 0) & (er == 0)
    depth = np.where(inside, r_c + np.minimum(np.minimum(r_rod - r, L_rod - z), z), r_c - dist)
    i = np.unravel_index(np.argmax(depth), depth.shape)
    return float(depth[i]), int(i[0])


def sc_text(spath):
    return Path(spath).read_text(encoding="utf-8")


def _rot(q):
    """Rotation matrix (3, 3) of a unit quaternion (the core's free_body.rotation)."""
    return np.array(rotation(*map(float, q))).reshape(3, 3)
