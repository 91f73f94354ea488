"""The probe-cone's model: its scenario and mechanism TOML validated and packed into the kernels' arrays."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver import contact as C
from solver import scenario as _scenario      # its GEOMETRY and MECHANISMS read at call time (tests move them)
from solver import schema
from solver.contact.pairset import PAR_C, PAR_DMAX, PAR_K, PAR_MU, PAR_VSLIP
from solver.errors import unknown
from solver.mechanisms.probe_cone import dynamics as D
from solver.scenario import ScenarioError, _craft, _load, _refuse_unread, _Sec

MTYPE = "probe_cone"


def _table(x, y):
    """(n, 3) table: x, value, integral of value from the first node."""
    t = np.zeros((len(x), 3))
    t[:, 0], t[:, 1] = x, y
    t[1:, 2] = np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))
    return t


def _series_spring(preloads, stiffs, strokes, k_stop):
    """Force-deflection table of preloaded springs in series with stops, plus stop stiffness (seed 000 fig. 6a)."""
    # deflection as a function of force; break points where each spring starts and stops
    fb = sorted({0.0, *preloads, *[p + k * s for p, k, s in zip(preloads, stiffs, strokes)]})
    fb.append(fb[-1] + k_stop * 0.05)

    def defl(f):
        d = f / k_stop
        for p, k, s in zip(preloads, stiffs, strokes):
            d += min(max((f - p) / k, 0.0), s)
        return d
    x = np.array([defl(f) for f in fb])
    return _table(x, np.array(fb))


@dataclass
class Model:
    """Everything the kernels need, packed once."""
    name: str
    comment: str
    variant: str
    text: str
    P: np.ndarray
    LAT: np.ndarray
    TLS: np.ndarray
    TAX: np.ndarray
    TMA: np.ndarray
    TML: np.ndarray
    cgeo: C.ContactGeometry
    s0: np.ndarray
    Z0: np.ndarray
    step: float
    output_step: float
    duration: float
    geo: dict = field(default_factory=dict)
    places: dict = field(default_factory=dict)
    strokes: dict = field(default_factory=dict)
    omega_max: float = 0.0          # rad/s, highest damped contact/joint frequency (step * it <= 1)
    decay_max: float = 0.0          # 1/s, fastest decay: contact damping, latch friction ramp (step * it <= 2)
    mechanism_type: str = MTYPE
    appendage: "Appendage | None" = None    # a rod chain on the active craft ([appendage], docs/rods.md)


@dataclass
class Appendage:
    """A rod chain on the active craft: the rods type's rod system (RODS), its root and plane, packed for the hook."""
    name: str
    path: Path
    RODS: np.ndarray
    ra: np.ndarray                  # m, hinge 0 from the craft's CoM (craft frame)
    e1: np.ndarray                  # the chain's plane axes (craft frame): chord angle 0, and normal x e1
    e2: np.ndarray
    root: np.ndarray                # m, hinge 0 in the active docking frame
    axis: np.ndarray
    normal: np.ndarray
    formulation: str
    hinge_range_deg: tuple = ()
    moment_range: tuple = ()
    points_per_rod: int = 21


def load_probe_cone(spath: Path) -> Model:
    """Read, validate and pack a probe-cone scenario and the mechanism it names."""
    stext, sc = _load(spath, "scenario file")
    S = _Sec(spath, sc, "", "scenario", MTYPE)
    name = sc.get("name")
    if name is None:
        raise S.missing("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(spath, "name", "missing or not a string")
    comment = sc.get("comment", "")
    mech = sc.get("mechanism")
    if mech is None:
        raise S.missing("mechanism", hint="; name a file in resources/mechanisms (e.g. \"existing\")")
    if not isinstance(mech, str) or not mech:
        raise ScenarioError(spath, "mechanism", "missing; name a file in resources/mechanisms (e.g. \"existing\")")
    # a name is a file in resources/mechanisms; "x.toml" is a file next to the scenario (an edited copy)
    mpath = spath.parent / mech if mech.endswith(".toml") else _scenario.MECHANISMS / f"{mech}.toml"
    if not mpath.is_file():
        raise ScenarioError(spath, "mechanism", f"no mechanism file {mpath}")
    mtext, mt = _load(mpath, "mechanism file")
    M = _Sec(mpath, mt, "", "mechanism", MTYPE)
    variant = mt.get("variant")
    if variant not in M.param("variant").choices:
        raise ScenarioError(mpath, "variant", f"{variant!r}: must be one of {', '.join(M.param('variant').choices)}")
    movable = variant == "movable_limiter"

    P = np.zeros(D.NP)
    I = D.P_INDEX

    def put(k, v):
        P[I[k]] = v

    # spacecraft
    fixed, mP, JP, cP = _craft(S.sub("passive_craft"), True)
    _, mA, JA, cA = _craft(S.sub("active_craft"), False)
    put("m_p", mP)
    put("fixed_p", 1.0 if fixed else 0.0)
    P[I["jp0"]:I["jp0"] + 9] = JP.ravel()
    P[I["jpi0"]:I["jpi0"] + 9] = np.linalg.inv(JP).ravel()
    P[I["cpx"]:I["cpx"] + 3] = cP
    put("m_a", mA)
    P[I["ja0"]:I["ja0"] + 9] = JA.ravel()
    P[I["cax"]:I["cax"] + 3] = cA

    # part geometry and contact law: one source, resources/geometry/<geometry>.toml
    gname = mt.get("geometry")
    if not isinstance(gname, str) or not gname:
        raise ScenarioError(mpath, "geometry", "missing; name a file in resources/geometry (e.g. \"probe_cone\")")
    gpath = _scenario.GEOMETRY / f"{gname}.toml"
    if not gpath.is_file():
        raise ScenarioError(mpath, "geometry", f"no geometry file {gpath}")
    gtext, gt = _load(gpath, "geometry file")
    _geometry_changes(mpath, mt, gpath, gt)
    G = _Sec(gpath, gt, "", "geometry", MTYPE)
    gc, gs, gsl, gla = G.sub("receiving_cone"), G.sub("socket"), G.sub("socket_slots"), G.sub("latches")
    R0 = gc.get("entrance_radius")
    Dp = gc.get("depth")
    Rs = gs.get("radius", hi=R0)
    Sd = gs.get("depth")
    stop = gsl.get("stop_below_mouth", hi=Sd)
    rh = G.sub("probe_head").get("radius", hi=Rs)
    if rh >= Rs:
        raise ScenarioError(gpath, "probe_head.radius", f"head must pass the socket bore (radius {Rs})")
    if int(gla.get("count")) != D.N_LATCH or int(gsl.get("count")) != D.N_LATCH:
        raise ScenarioError(gpath, "latches.count", f"the solver models {D.N_LATCH} latches in {D.N_LATCH} slots")
    ltx = gla.get("tip_x")
    lrr, lre = gla.get("tip_radius_retracted"), gla.get("tip_radius_extended")
    lrt = gla.get("tip_sphere_radius")
    if lrr + lrt >= Rs:
        raise ScenarioError(gpath, "latches.tip_radius_retracted", f"retracted latches must pass the socket bore {Rs}")
    if not (Rs < lre + lrt < Rs + gsl.get("radial_depth")):
        raise ScenarioError(gpath, "latches.tip_radius_extended", "extended latches must reach past the bore "
                            "onto the stops and stay inside the slots")
    x_stop = -Dp - stop
    if -Dp - Sd + rh + ltx + lrt >= x_stop - lrt:
        raise ScenarioError(gpath, "socket.depth", "too shallow: latches cannot pass the stops before the head "
                            "reaches the socket bottom")
    ghs, gpr = G.sub("housing"), G.sub("probe")
    put("g_off", ghs.get("gimbal_offset"))
    put("l_h", ghs.get("length"))
    L0 = gpr.get("length")
    put("l0", L0)
    put("r_head", rh)
    put("latch_x", ltx)
    put("latch_rr", lrr)
    put("latch_re", lre)
    put("latch_rt", lrt)
    put("latch_psi0", math.radians(gla.get("first_angle")))
    put("x_mouth", -Dp)
    put("x_stop", x_stop)
    put("r_bore", Rs)
    put("r_floor", Rs + gsl.get("radial_depth"))
    put("tan_cone", (R0 - Rs) / Dp)
    put("slot_hs", 0.5 * gsl.get("width_at_stop"))
    put("slot_hf", 0.5 * gsl.get("width_far"))
    put("slot_len", gsl.get("length", hi=Sd))
    if gsl.get("first_angle") != gla.get("first_angle"):
        raise ScenarioError(gpath, "socket_slots.first_angle", "must equal latches.first_angle (latch k in slot k)")
    gli = G.sub("limiter")
    put("lim_x", gli.get("back_rim_x_in_housing"))
    G.read_all()                             # the keys only the contact library reads, checked by the schema
    try:
        cgeo = C.build_probe_cone(gt, movable_limiter=movable)
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(gpath, "/", f"cannot build the contact geometry ({exc!r})") from None
    for k in range(D.N_LATCH):                          # each latch reads its own extension (state slot 2 + k)
        cgeo.prim[cgeo.prim_names.index(f"latch_{k + 1}"), 7] = 2 + k
    if np.any(cgeo.pint[cgeo.pairs[:, 1], 1] != 0):
        raise ScenarioError(gpath, "/", "every passive contact part must ride on passive_craft")
    # friction law: elasto-plastic bristle per pair (k_t, c_t of its [contact.*] table) or the stick ramp (A/B)
    GC = G.sub("contact")
    put("ft_law", 1.0 if GC.get("friction") == "bristle" else 0.0)
    if len(cgeo.pair_names) > D.N_FT:
        raise ScenarioError(gpath, "contact", f"{len(cgeo.pair_names)} contact pairs: the solver keeps friction states "
                            f"for at most {D.N_FT}")
    for j, g in enumerate(cgeo.pair_groups):
        ft = GC.sub(CONTACT_TABLE.get(g, g))
        put(f"ft_k{j}", ft.get("k_t"))
        put(f"ft_c{j}", ft.get("c_t"))

    hs = M.sub("housing")
    put("m_h", hs.get("mass"))
    put("d_h", hs.get("com_distance"))
    put("i_hx", hs.get("inertia_axial"))
    put("i_ht", hs.get("inertia_transverse"))
    pr = M.sub("probe")
    smax = pr.get("stroke_max", hi=L0)
    if smax >= L0:
        raise ScenarioError(mpath, "probe.stroke_max", "must be less than free_length")
    put("stroke_max", smax)
    put("m_pr", pr.get("mass"))
    put("a_pr", pr.get("com_from_head"))
    put("i_prx", pr.get("inertia_axial"))
    put("i_prt", pr.get("inertia_transverse"))
    put("k_bend0", pr.get("bending_stiffness"))
    put("c_bend", pr.get("bending_damping"))
    put("k_tors", pr.get("torsion_stiffness"))
    put("c_tors", pr.get("torsion_damping"))
    put("hb_k", pr.get("bending_hysteresis_stiffness"))
    put("hb_lim", pr.get("bending_hysteresis_moment"))
    put("ht_k", pr.get("torsion_hysteresis_stiffness"))
    put("ht_lim", pr.get("torsion_hysteresis_moment"))
    put("bend_max", math.radians(pr.get("bending_limit_deg")))
    put("k_bend_stop", pr.get("bending_stop_stiffness"))
    put("tors_max", math.radians(pr.get("torsion_limit_deg")))
    put("k_tors_stop", pr.get("torsion_stop_stiffness"))

    put("latch_k", M.sub("latches").get("spring_stiffness"))

    ad = M.sub("axial_damper")
    pitch = ad.get("screw_pitch")
    i_nut = 2 * math.pi / pitch
    put("i_nut", i_nut)
    put("i_nut_tot", ad.get("nut_inertia_total"))
    put("k_nutfr", ad.get("screw_friction"))
    put("v_screw", ad.get("screw_friction_speed"))
    i_fr = ad.get("friction_chain_ratio")
    put("i_fr", i_fr)
    k_tr = ad.get("transmission_stiffness")
    put("k_tr", k_tr)
    t_pre = ad.get("spring_preload_torque")
    k_s = ad.get("spring_stiffness")
    s_max = 2 * math.pi * ad.get("spring_stroke_turns")
    put("t_pre", t_pre)
    put("k_spring", k_s)
    put("spring_max", s_max)
    t_in = ad.get("friction_brake_torque_in")
    t_out = ad.get("friction_brake_torque_out")
    if t_in <= t_pre + k_s * s_max:
        raise ScenarioError(mpath, "axial_damper.friction_brake_torque_in",
                            f"must exceed the fully wound spring torque {t_pre + k_s * s_max:.4g} N*m "
                            "(the brake slips after the spring stroke, seed 000 fig. 5a)")
    put("t_in", t_in)
    put("t_out", t_out)
    put("c_d", ad.get("structural_damping"))
    put("i_mb", ad.get("magnetic_brake_ratio"))
    put("k_stroke_stop", ad.get("stroke_stop_stiffness"))
    x1 = t_pre / k_tr
    x2 = x1 + s_max + k_s * s_max / k_tr
    t2 = t_pre + k_s * s_max
    if s_max > 0.0:
        TAX = _table(np.array([0.0, x1, x2, x2 + 10 * t_in / k_tr]),
                     np.array([0.0, t_pre, t2, t2 + 10 * t_in]))
    else:                               # no spring mechanism (modified damper): the transmission alone
        TAX = _table(np.array([0.0, 10 * t_in / k_tr]), np.array([0.0, 10 * t_in]))
    s1 = 2 * math.pi * ad.get("first_brake_stroke_turns")   # FrT1 (modified damper)
    put("s1_max", s1)
    if s1 > 0.0:
        put("t1_in", ad.get("first_brake_torque_in", hi=t_in))
        put("t1_out", ad.get("first_brake_torque_out", hi=t_out))
    else:
        ad.unused(["first_brake_torque_in", "first_brake_torque_out"],
                  "no first friction brake (first_brake_stroke_turns = 0)")
    _cyclogram(P, M, i_nut, G, movable)
    mx, my = ad.table("magnetic_brake_rpm", "magnetic_brake_torque")
    TMA = _table(mx * 2 * math.pi / 60.0, my)

    ld = M.sub("lateral_damper")
    sp = ld.get("spring_places_deg")
    bp = ld.get("brake_places_deg")
    springs = [ld.get("coil_stroke"), ld.get("belleville_stroke")]
    TLS = _series_spring([ld.get("coil_preload"), ld.get("belleville_preload")],
                         [ld.get("coil_stiffness"), ld.get("belleville_stiffness")], springs,
                         ld.get("spring_stop_stiffness"))
    LAT = np.zeros((D.N_LAT, D.LAT_W))
    sd_, sr_, sb_ = ld.get("spring_attach_distance"), ld.get("spring_attach_radius"), ld.get("spring_base_radius")
    if sb_ <= sr_:
        raise ScenarioError(mpath, "lateral_damper.spring_base_radius", "must exceed spring_attach_radius")
    rod_mass = ld.get("rod_mass")
    s_tilt = ld.get("spring_base_axial_offset")   # turned struts (modified damper)
    for k in range(2):
        a = math.radians(sp[k])
        ey, ez = math.cos(a), math.sin(a)
        LAT[k, D.L_TYPE] = 0
        LAT[k, D.L_ATT:D.L_ATT + 3] = [-sd_, sr_ * ey, sr_ * ez]
        LAT[k, D.L_BASE:D.L_BASE + 3] = [-sd_ + s_tilt, sb_ * ey, sb_ * ez]
        LAT[k, D.L_EY], LAT[k, D.L_EZ] = ey, ez
        LAT[k, D.L_INERTIA] = rod_mass
        LAT[k, D.L_REST] = math.hypot(sb_ - sr_, s_tilt)
    bd_, br_ = ld.get("brake_attach_distance"), ld.get("brake_attach_radius")
    rho, rod = ld.get("crank_radius"), ld.get("rod_length")
    g = ld.get("brake_gear_ratio")
    Jb = ld.get("crank_inertia") + ld.get("rotor_inertia") * g * g
    tilt = math.radians(ld.get("brake_rod_tilt_deg"))   # rods turned (modified damper)
    for k in range(2):
        a = math.radians(bp[k])
        e = np.array([0.0, math.cos(a), math.sin(a)])
        att = np.array([-bd_, 0.0, 0.0]) + br_ * e
        u = math.cos(tilt) * e + math.sin(tilt) * np.array([1.0, 0.0, 0.0])
        piv = att + rod * u - rho * np.array([-1.0, 0.0, 0.0])
        r = 2 + k
        LAT[r, D.L_TYPE] = 1
        LAT[r, D.L_ATT:D.L_ATT + 3] = att
        LAT[r, D.L_BASE:D.L_BASE + 3] = piv
        LAT[r, D.L_RHO], LAT[r, D.L_ROD] = rho, rod
        LAT[r, D.L_EY], LAT[r, D.L_EZ] = e[1], e[2]
        LAT[r, D.L_INERTIA] = Jb
        LAT[r, D.L_GEAR] = g
    put("lh_k", ld.get("hysteresis_stiffness"))
    put("lh_f0", ld.get("hysteresis_force"))
    put("lh_mu", ld.get("hysteresis_ratio"))
    put("c_lat", ld.get("spring_damping"))
    crank_max = ld.get("crank_limit_deg")
    put("psi_max", math.radians(crank_max))
    put("k_crank_stop", ld.get("crank_stop_stiffness"))
    lx, lyv = ld.table("brake_rpm", "brake_torque")
    TML = _table(lx * 2 * math.pi / 60.0, lyv)

    # scenario overrides for test variants (e.g. frictionless)
    groups = {"head_friction": ("head_cone", "head_socket"), "latch_friction": ("latch_slot", "latch_stop"),
              "limiter_friction": ("limiter_cone", "load_pad_cone"), "roller_friction": ("roller_cone",),
              "ring_friction": ("ring_ring",)}
    ov = sc.get("overrides", {})
    if not isinstance(ov, dict):
        raise ScenarioError(spath, "overrides", "must be a table")
    O = _Sec(spath, ov, "overrides", "scenario", MTYPE)
    for k in ov:
        if k in groups:
            mu = O.get(k)
            for j, g in enumerate(cgeo.pair_groups):
                if g in groups[k]:
                    cgeo.ppar[j, PAR_MU] = mu
        elif k == "max_depth":
            cgeo.ppar[:, PAR_DMAX] = O.get(k, hi=rh)
        elif k == "drive_delay":                 # test variants: a shorter wait before retraction
            put("drv_delay", O.get(k))
        elif k == "retraction_speed":            # test variants: a faster drive (probe m/s at no load)
            put("drv_speed", O.get(k) * i_nut)
        elif k == "friction":                    # A/B of the friction law (the geometry's [contact] friction)
            put("ft_law", 1.0 if O.get(k) == "bristle" else 0.0)
        else:
            raise ScenarioError(spath, f"overrides.{k}", unknown(k, [p.name for p in schema.params("scenario", MTYPE)
                                                                     if p.section == "overrides"], "override"))

    # solver settings
    so = S.sub("solver")
    step = so.get("step")
    out = so.get("output_step")
    dur = so.get("duration")
    spo = out / step
    if abs(spo - round(spo)) > 1e-6:
        raise ScenarioError(spath, "solver.step", f"{step:g} must divide output_step {out:g} exactly")
    omega, decay, nsub = _step_rates(P, cgeo, step)
    for j, n in enumerate(nsub):
        put(f"sub{j}", n)
    if omega * step > 1.0:
        raise ScenarioError(spath, "solver.step", f"{step:g} s is too large for the stiffest contact "
                            f"(omega_max = {omega:.0f} rad/s; need omega*step <= 1, step <= {1.0 / omega:.2e} s, for RK4 accuracy)")
    if decay * step > 2.0:
        raise ScenarioError(spath, "solver.step", f"{step:g} s is too large for the fastest decay (friction stick ramp "
                            f"or contact damping: {decay:.0f} 1/s; need rate*step <= 2, step <= {2.0 / decay:.2e} s, "
                            f"for RK4 stability)")

    # initial conditions at the start of the run
    ini = S.sub("initial")
    v0 = ini.get("closing_speed")
    vlat = ini.get("lateral_velocity")
    miss = ini.get("lateral_miss")
    ang = np.radians(ini.get("angular_miss_deg"))
    rate = np.radians(ini.get("angular_rate_deg_s"))
    hx0 = ini.get("head_start_x", lo=-Dp - Sd + rh)
    s0, Z0 = _initial_state(P, mA, JA, cA, cP, v0, vlat, miss, ang, rate, hx0)
    if movable:                          # limiter at rest on its front stop, springs preloaded
        s0[D.S_XL] = -P[I["lim_f0"]] / (P[I["lim_k"]] + P[I["lim_kstop"]])
    for nm, pair in (("pi_head_cone", "head_cone"), ("pi_head_socket", "head_socket"), ("pi_bottom", "head_socket_bottom")):
        put(nm, cgeo.pair_names.index(pair))
    geo = dict(rh=rh, L0=L0, goff=P[I["g_off"]], LAT=LAT.copy(), stroke_max=smax,
               rod_radius=gpr.get("radius", hi=rh), path=gpath)
    # full scale of each device channel (its bar in the viewer): strokes to the stops and the rated rates and force
    # (a mechanism without a rating, e.g. one stored in an older run, gives its channel no range: NaN)
    strokes = dict(axial_spring=s_max / (i_fr * i_nut), friction_brake=smax - (s_max + s1) / (i_fr * i_nut),
                   friction_brake_1=s1 / (i_fr * i_nut), XLimD=float(P[I["lim_stroke"]]), lateral=sum(springs),
                   rpm=ad.get("magnetic_brake_rpm_max"), lat_rpm=ld.get("brake_rpm_max"),
                   nut_rpm=ad.get("nut_rpm_max"), head_force=ad.get("head_force_max"),
                   crank=crank_max, stroke=smax)
    places = dict(spring_mechanism_1=float(sp[0]), spring_mechanism_2=float(sp[1]),
                  magnetic_brake_1=float(bp[0]), magnetic_brake_2=float(bp[1]))
    app, atext = _appendage(spath, sc, cA)
    if app is not None:
        s0 = np.concatenate([s0, app.phi0])
        app = app.model
    for path, t, file in ((spath, sc, "scenario"), (mpath, mt, "mechanism"), (gpath, gt, "geometry")):
        if (bad := schema.undeclared(t, file, MTYPE)) is not None:     # a key the schema does not declare: a typo
            raise ScenarioError(path, *bad)
        _refuse_unread(path, t)                                         # declared, but not read in this configuration
    text = f"# scenario {spath.name}\n{stext}\n# mechanism {mpath.name}\n{mtext}\n# geometry {gpath.name}\n{gtext}"
    if app is not None:
        text += f"\n# appendage rod system {app.path.name}\n{atext}"
    return Model(name, str(comment), variant, text, P, LAT, TLS, TAX, TMA, TML, cgeo, s0, Z0, step, out, dur,
                 geo, places, strokes, omega, decay, appendage=app)


def _appendage(spath, sc: dict, cA):
    """The scenario's [appendage] (a rods type's rod-system file on the active craft), or (None, "")."""
    if "appendage" not in sc:
        return None, ""
    from types import SimpleNamespace

    from solver.mechanisms.rods.model import load_rod_system
    S = _Sec(spath, sc, "", "scenario", MTYPE).sub("appendage")
    for k in ("name", "system", "root", "axis", "normal"):
        if k not in S.data:
            raise S.missing(k)
    name = S.get("name")
    if not name.isidentifier():
        raise ScenarioError(spath, "appendage.name", f"{name!r}: must be a name (letters, digits, _)")
    sysname = S.get("system")
    apath = (spath.parent / sysname if sysname.endswith(".toml")
             else _scenario.MECHANISMS.parent / "rods" / f"{sysname}.toml")
    if not apath.is_file():
        raise ScenarioError(spath, "appendage.system", f"no rod-system file {apath}")
    atext, RODS, rng, mrng, _ = load_rod_system(apath)
    n = RODS.shape[0]
    root = S.get("root")
    axis, normal = S.get("axis"), S.get("normal")
    na, nn = np.linalg.norm(axis), np.linalg.norm(normal)
    if na < 1e-9 or nn < 1e-9 or abs(axis @ normal) > 1e-6 * na * nn:
        raise ScenarioError(spath, "appendage.normal", f"axis {axis.tolist()} and normal {normal.tolist()} must be "
                            "nonzero and at right angles")
    e1 = axis / na
    e2 = np.cross(normal / nn, e1)
    phi = S.get("phi", n=n) if "phi" in S.data else np.zeros(n)
    form = S.get("formulation")
    x0 = np.zeros(6 * n)
    x0[:n] = phi
    model = Appendage(name, apath, RODS, root - np.asarray(cA, float), e1, e2, np.asarray(root, float), e1,
                      normal / nn, form, tuple(rng), tuple(mrng))
    return SimpleNamespace(model=model, phi0=x0), atext


# contact-pair group -> its [contact.*] table in the geometry file (the others share the group's name)


CONTACT_TABLE = {"latch_stop": "latch", "limiter_cone": "limiter", "load_pad_cone": "limiter", "roller_cone": "roller",
                 "ring_ring": "ring"}


def _geometry_changes(mpath, mt: dict, gpath, gt: dict):
    """Apply a mechanism's [geometry_changes] (table.key = number, tables nested as in the geometry file, e.g.
    contact.ring.k) to the parsed geometry in place."""
    ch = mt.get("geometry_changes", {})
    if not isinstance(ch, dict):
        raise ScenarioError(mpath, "geometry_changes", "must be a table of geometry tables")
    gname = Path(gpath).name

    def apply(ch: dict, g: dict, pre: str):
        for k in list(ch):
            v, key = ch[k], pre + k
            old = g.get(k)
            if isinstance(v, dict) or not pre:
                if not isinstance(v, dict) or not isinstance(old, dict):
                    raise ScenarioError(mpath, f"geometry_changes.{key}", f"no table [{key}] in {gname}")
                apply(v, old, key + ".")
                continue
            if isinstance(old, bool) or not isinstance(old, (int, float)):
                raise ScenarioError(mpath, f"geometry_changes.{key}", f"no number {key} in {gname}")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ScenarioError(mpath, f"geometry_changes.{key}", f"must be a number, found {v!r}")
            g[k] = float(v)
    apply(ch, gt, "")


def _cyclogram(P, M: _Sec, i_nut: float, G: _Sec, movable: bool):
    """Drive, alignment-lever cam, spring pushers, hooks and the movable limiter into P."""
    I = D.P_INDEX
    dr = M.sub("drive")
    P[I["drv_delay"]] = dr.get("start_delay")
    P[I["drv_speed"]] = dr.get("retraction_speed") * i_nut          # probe m/s -> nut rad/s
    P[I["drv_stall"]] = dr.get("stall_force") / i_nut               # probe N -> nut N*m
    pu = M.sub("spring_pushers")
    P[I["pu_n"]] = int(pu.get("count"))
    P[I["pu_r"]] = pu.get("radius")
    P[I["pu_stroke"]] = pu.get("stroke")
    P[I["pu_f0"]] = pu.get("preload")
    P[I["pu_k"]] = pu.get("stiffness")
    P[I["pu_kc"]] = pu.get("contact_stiffness")
    P[I["pu_c"]] = pu.get("damping")
    if P[I["pu_kc"]] <= P[I["pu_k"]]:
        raise ScenarioError(M.path, "spring_pushers.contact_stiffness", "must exceed spring_pushers.stiffness")
    P[I["hook_gap"]] = M.sub("hooks").get("close_gap")
    if "alignment_levers" in M.data:
        al = M.sub("alignment_levers")
        lv = G.sub("alignment_lever")
        a_ret, a_ext = lv.get("angle_retracted"), lv.get("angle_extended")
        x = al.data.get("cam_nut_turns")
        if not isinstance(x, list) or not 2 <= len(x) <= D.N_CAM:
            raise ScenarioError(M.path, "alignment_levers.cam_nut_turns", f"must be a list of 2..{D.N_CAM} numbers")
        x = al.get("cam_nut_turns", n=len(x))
        y = al.get("cam_lever_angle_deg", n=len(x), lo=a_ret)   # may swing past angle_extended (extension > 1)
        if np.any(np.diff(x) <= 0):
            raise ScenarioError(M.path, "alignment_levers.cam_nut_turns", "must be strictly increasing")
        n = len(x)
        P[I["cam_n"]] = n
        P[I["cam_x0"]:I["cam_x0"] + n] = 2 * math.pi * x
        P[I["cam_y0"]:I["cam_y0"] + n] = (y - a_ret) / (a_ext - a_ret)
    if not movable:
        M.unused(["movable_limiter"], f"only variant movable_limiter has a movable limiter (variant {M.data['variant']!r})")
    if movable:
        ml = M.sub("movable_limiter")
        P[I["lim_mov"]] = 1.0
        P[I["lim_m"]] = ml.get("mass")
        f0, f1 = ml.get("spring_force_front"), ml.get("spring_force_back")
        st = ml.get("stroke")
        if f1 < f0:
            raise ScenarioError(M.path, "movable_limiter.spring_force_back", "must not be below spring_force_front")
        P[I["lim_f0"]] = f0
        P[I["lim_k"]] = (f1 - f0) / st
        P[I["lim_stroke"]] = st
        P[I["lim_kstop"]] = ml.get("stop_stiffness")
        P[I["lim_c"]] = ml.get("damping")


def _mode(k, c, m):
    """(damped angular frequency, fastest decay rate) of a spring k with damper c on mass m."""
    w = math.sqrt(k / m)
    z = c / (2.0 * math.sqrt(k * m))
    return (w * math.sqrt(1.0 - z * z), z * w) if z < 1.0 else (0.0, w * (z + math.sqrt(z * z - 1.0)))


def _step_rates(P, cgeo, step):
    """Highest damped contact/joint frequency (rad/s; RK4 accuracy needs it * step <= 1) and fastest decay rate
    (1/s: contact damping, friction bristles, or with the old law the latches' friction ramp on the probe torsion
    under the drive's pull; RK4 stability needs it * step <= 2, below RK4's real-axis limit 2.79, where its factor
    1 - x + x^2/2 - x^3/6 + x^4/24 stays in (0, 1): a decay then damps without reversing sign), and each contact
    pair's substeps: a pair whose own normal mode needs a smaller step is integrated in n equal substeps while it
    is closed (its mode then left out of the two rates)."""
    I = D.P_INDEX
    L0 = P[I["l0"]]
    m_head_lat = (P[I["i_prt"]] + P[I["m_pr"]] * (L0 - P[I["a_pr"]]) ** 2) / L0 ** 2
    m_axial = P[I["i_nut_tot"]] * P[I["i_nut"]] ** 2
    m_tip_torsion = P[I["i_prx"]] / P[I["latch_re"]] ** 2
    m_lim = (P[I["i_ht"]] + P[I["m_h"]] * P[I["d_h"]] ** 2) / P[I["lim_x"]] ** 2
    # the mass each pair group's normal contact moves: the head (lateral or axial), the latch tips on the stops
    # (axial), on the slot walls (the tip's torsional mass in series with the head's lateral one), the limiter swing
    m_pair = {"head_cone": min(m_head_lat, m_axial), "head_socket": min(m_head_lat, m_axial), "latch_stop": m_axial,
              "latch_slot": 1.0 / (1.0 / m_tip_torsion + 1.0 / m_head_lat), "limiter_cone": m_lim,
              "load_pad_cone": m_lim}
    md = []
    nsub = np.ones(len(cgeo.pair_groups))
    for j, g in enumerate(cgeo.pair_groups):
        if g in m_pair:
            w, d = _mode(cgeo.ppar[j, PAR_K], cgeo.ppar[j, PAR_C], m_pair[g])
            nsub[j] = max(1, math.ceil(w * step - 1e-9), math.ceil(d * step / 2.0 - 1e-9))
            if nsub[j] == 1:
                md.append((w, d))

    def k(*groups):
        return max(cgeo.ppar[j, PAR_K] for j, g in enumerate(cgeo.pair_groups) if g in groups)

    def ramp(*groups):                              # friction stick ramp mu/slip_speed (a damper per newton of F_n)
        return max(cgeo.ppar[j, PAR_MU] / cgeo.ppar[j, PAR_VSLIP] for j, g in enumerate(cgeo.pair_groups) if g in groups)
    # the latch tips on the stops carry the drive's pull (held by the stall force, or the brake's pull-out slip):
    # their friction ramps add up on the probe torsion, a damper mu*F/slip_speed on the tip's torsional mass
    f_latches = max(P[I["drv_stall"]], P[I["t_out"]] * P[I["i_fr"]]) * P[I["i_nut"]]
    md.append(_mode(P[I["k_tors"]] + P[I["ht_k"]] + P[I["k_tors_stop"]], 0.0, P[I["i_prx"]]))
    if P[I["lim_mov"]] > 0.5:                      # movable limiter on its stops and on the cone (slide mass)
        md.append(_mode(P[I["lim_kstop"]] + k("limiter_cone", "load_pad_cone"), 0.0, P[I["lim_m"]]))
    if P[I["ft_law"]] < 0.5:
        return max(w for w, _ in md), max(max(d for _, d in md),
                                          ramp("latch_stop", "latch_slot") * f_latches / m_tip_torsion), nsub

    def bristles(m, n, *groups):                    # friction bristles (k_t, c_t) of n pairs of the groups in parallel
        return [_mode(n * P[I[f"ft_k{j}"]], n * P[I[f"ft_c{j}"]], m) for j, g in enumerate(cgeo.pair_groups)
                if g in groups]
    # sticking tangential modes: the head on its wall (lateral mass), the four latch tips together on the probe
    # torsion (tip torsional mass), the limiter, its pads and the rollers on the housing's swing
    md += [*bristles(m_head_lat, 1, "head_cone", "head_socket"),
           *bristles(m_tip_torsion, D.N_LATCH, "latch_stop", "latch_slot"),
           *bristles(m_lim, 1, "limiter_cone", "load_pad_cone", "roller_cone")]
    return max(w for w, _ in md), max(d for _, d in md), nsub


def _initial_state(P, mA, JA, cA, cP, v0, vlat, miss, ang, rate, hx0):
    """Active craft placed with its docking frame at the lateral miss, attitude miss, head at head_start_x."""
    from solver import quat
    I = D.P_INDEX
    s = np.zeros(D.NS)
    Z = np.zeros(D.NZ)
    s[D.S_QP] = 1.0
    s[D.S_RP:D.S_RP + 3] = cP            # passive docking frame at the world origin
    roll, pitch, yaw = ang
    qa = quat.multiply(quat.multiply(quat.from_axis_angle([0, 0, 1.0], yaw), quat.from_axis_angle([0, 1.0, 0], pitch)),
                       quat.from_axis_angle([1.0, 0, 0], roll))
    RA = quat.to_matrix(qa)
    head_loc = np.array([P[I["g_off"]] - P[I["l_h"]] - P[I["l0"]], 0.0, 0.0])
    oA = np.array([0.0, miss[0], miss[1]])
    oA[0] = hx0 - (RA @ head_loc)[0]
    rA = oA + RA @ cA
    w = rate
    v_origin = np.array([-v0, vlat[0], vlat[1]])
    vA = v_origin + np.cross(w, rA - oA)
    s[D.S_RA:D.S_RA + 3] = rA
    s[D.S_QA:D.S_QA + 4] = qa
    s[D.S_VA:D.S_VA + 3] = vA
    s[D.S_WA:D.S_WA + 3] = w
    return s, Z
