"""SYNTHETIC run generator: a kinematic script (no dynamics) that writes a valid run file v1.

The head follows the cone surface down to the socket, capture, a damped stroke, alignment and
retraction. Forces are shaped functions, and the base loads are their consistent sum. Used until the
solver lands and as a fixture for reader and viewer tests.
    python -m tests.synthetic_run sample_runs/synthetic_approach.h5
"""
from __future__ import annotations

import argparse
import datetime as _dt
import math
import tomllib
from pathlib import Path

import numpy as np

from solver import quat
from solver.runfile import ChannelInfo, ContactPairInfo, PartGeometry, RunMeta, RunWriter
from solver.wireframe import Wire

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "resources" / "scenarios" / "synthetic_approach.toml"
BODIES = ["passive_craft", "active_craft", "housing", "probe", "probe_head", "limiter"]


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def _rotation_between(a, b):
    """Quaternions (N, 4) rotating unit vectors a (3,) onto b (N, 3)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    axis = np.cross(a, b)
    s = np.linalg.norm(axis, axis=-1)
    c = b @ a
    ang = np.arctan2(s, c)
    axis = np.where(s[:, None] > 1e-12, axis / np.maximum(s, 1e-12)[:, None], [0.0, 0.0, 1.0])
    return quat.from_axis_angle_many(axis, ang)


def geometry(g) -> list[PartGeometry]:
    """Wireframes of the drawn parts, each in its body frame (probe axis along -x)."""
    R0, D, Rs, Sd = g["cone_entrance_radius"], g["cone_depth"], g["socket_radius"], g["socket_depth"]
    rh, Lh, rhous = g["head_radius"], g["housing_length"], g["housing_radius"]
    parts = []

    def add(name, body, wire, kind="mechanism", vis=""):
        p, l = wire.build()
        parts.append(PartGeometry(name, body, p, l, kind, vis))

    add("receiving_cone", "passive_craft", Wire().frustum(0.0, R0, -D, Rs, n_generators=16, n_circles=4), "cone")
    add("socket", "passive_craft", Wire().frustum(-D, Rs, -D - Sd, Rs, n_generators=8, n_circles=2)
        .circle(-D - Sd, Rs * 0.5, 24), "cone")
    slots = Wire()
    for k in range(4):
        a = k * math.pi / 2 + math.pi / 4
        c, s = math.cos(a), math.sin(a)
        for da in (-0.18, 0.18):
            cc, ss = math.cos(a + da), math.sin(a + da)
            slots.polyline([[-D - 0.01, Rs * cc, Rs * ss], [-D - Sd * 0.7, Rs * cc, Rs * ss]])
        slots.polyline([[-D - Sd * 0.7, Rs * math.cos(a - 0.18), Rs * math.sin(a - 0.18)],
                        [-D - Sd * 0.7, Rs * 1.08 * c, Rs * 1.08 * s],
                        [-D - Sd * 0.7, Rs * math.cos(a + 0.18), Rs * math.sin(a + 0.18)]])
    add("socket_slots", "passive_craft", slots, "slot", "head_near_socket")
    add("passive_ring", "passive_craft", Wire().circle(0.0, 0.62, 64).circle(0.0, 0.55, 64), "ring")
    add("active_ring", "active_craft", Wire().circle(0.0, 0.62, 64).circle(0.0, 0.55, 64), "ring")
    add("mechanism_base", "active_craft", Wire().box((0.0, -0.15, -0.15), (0.08, 0.15, 0.15)))
    add("housing", "housing", Wire().frustum(0.0, rhous, -Lh, rhous * 0.8, n_generators=8, n_circles=3))
    lim0, lim1 = g["limiter_radius"]
    Ll = g["limiter_length"]
    add("limiter", "limiter", Wire().frustum(0.0, lim1, -Ll, lim0, n_generators=12, n_circles=2), "limiter")
    probe = Wire().frustum(0.0, 0.03, -1.0, 0.03, n_generators=4, n_circles=2)
    add("probe", "probe", probe)
    add("probe_head", "probe_head", Wire().sphere(rh), "mechanism")
    latches = Wire()
    ll = g["latch_length"]
    for k in range(4):
        a = k * math.pi / 2 + math.pi / 4
        c, s = math.cos(a), math.sin(a)
        latches.polyline([[0.0, rh * 0.9 * c, rh * 0.9 * s], [ll * 0.3, (rh + ll) * c, (rh + ll) * s],
                          [ll, rh * 0.9 * c, rh * 0.9 * s]])
    add("latches", "probe_head", latches, "latch", "head_near_socket")
    rollers = Wire()
    rr, lv = g["roller_radius"], g["lever_length"]
    for k in range(3):
        a = k * 2 * math.pi / 3
        c, s = math.cos(a), math.sin(a)
        tip = np.array([-Lh * 0.6, (rhous + lv * 0.6) * c, (rhous + lv * 0.6) * s])
        rollers.polyline([[-Lh * 0.3, rhous * c, rhous * s], tip])
        ring = np.array([[0.0, rr * math.cos(b), rr * math.sin(b)] for b in np.linspace(0, 2 * np.pi, 16, endpoint=False)])
        rollers.polyline(ring @ np.array([[0, 0, 1], [-s, c, 0], [c, s, 0]], float) * 1.0 + tip, closed=True)
    add("rollers", "housing", rollers, "roller", "lever_extension")
    return parts


def channels_spec(m) -> list[ChannelInfo]:
    C = ChannelInfo
    sp, lat, rpm = m["spring_stroke"], m["lateral_spring_stroke"], m["magnetic_brake_rate_max"]
    out = []
    for a in "xyz":
        out.append(C(f"head_{a}", "m", f"probe head {a} (cone frame)", "kinematics"))
    for a in "xyz":
        out.append(C(f"head_v{a}", "m/s", f"probe head velocity {a}", "kinematics"))
    out += [C("probe_pitch", "deg", "probe axis pitch to cone axis", "kinematics"),
            C("probe_yaw", "deg", "probe axis yaw to cone axis", "kinematics")]
    for a in "xyz":
        out.append(C(f"cm_v{a}", "m/s", f"active CoM velocity {a} rel. passive", "spacecraft"))
    for a in "xyz":
        out.append(C(f"rate_{a}", "deg/s", f"active angular rate {a} rel. passive", "spacecraft"))
    out += [C("att_roll", "deg", "active roll rel. passive", "spacecraft"),
            C("att_pitch", "deg", "active pitch rel. passive", "spacecraft"),
            C("att_yaw", "deg", "active yaw rel. passive", "spacecraft")]
    for a in "xyz":
        out.append(C(f"F{a}", "N", f"force on mechanism base {a}", "base_loads"))
    for a in "xyz":
        out.append(C(f"M{a}", "N*m", f"moment on mechanism base {a}", "base_loads"))
    out += [C("axial_spring", "m", "axial damper spring mechanism stroke", "axial_damper", sp),
            C("friction_brake", "m", "axial damper friction brake stroke", "axial_damper", m["stroke_max"] - sp),
            C("axial_magnetic_brake", "rpm", "axial damper magnetic brake rate", "axial_damper", rpm),
            C("spring_mechanism_1", "m", "lateral spring mechanism 1", "lateral_damper", lat, 90.0),
            C("spring_mechanism_2", "m", "lateral spring mechanism 2", "lateral_damper", lat, 0.0),
            C("magnetic_brake_1", "rpm", "lateral magnetic brake 1", "lateral_damper", rpm, 270.0),
            C("magnetic_brake_2", "rpm", "lateral magnetic brake 2", "lateral_damper", rpm, 180.0),
            C("housing_angle_y", "deg", "housing rotation about y", "mechanism"),
            C("housing_angle_z", "deg", "housing rotation about z", "mechanism"),
            C("probe_bend_y", "deg", "probe bending about y", "mechanism"),
            C("probe_bend_z", "deg", "probe bending about z", "mechanism"),
            C("probe_torsion", "deg", "probe torsion", "mechanism"),
            C("probe_stroke", "m", "probe stroke-in", "mechanism", m["stroke_max"]),
            C("head_offset_y", "m", "head lateral offset from housing axis y", "mechanism"),
            C("head_offset_z", "m", "head lateral offset from housing axis z", "mechanism"),
            C("head_near_socket", "", "head near socket (latches drawn)", "mechanism"),
            C("lever_extension", "", "alignment lever extension", "mechanism", 1.0),
            C("kinetic_energy", "J", "relative kinetic energy", "energy")]
    return out


PAIRS = [ContactPairInfo("head_cone", "probe_head", "receiving_cone", "head / cone"),
         ContactPairInfo("head_socket", "probe_head", "socket", "head / socket"),
         ContactPairInfo("latch_slot", "latches", "socket_slots", "latch / slot"),
         ContactPairInfo("limiter_cone", "limiter", "receiving_cone", "limiter / cone"),
         ContactPairInfo("roller_cone", "rollers", "receiving_cone", "roller / cone"),
         ContactPairInfo("ring_ring", "active_ring", "passive_ring", "ring / ring")]


def make(path, duration: float | None = None, step: float | None = None, scenario=SCENARIO) -> Path:
    """Write the synthetic run to `path` and return it."""
    text = Path(scenario).read_text()
    cfg = tomllib.loads(text)
    g, m, ap, out = cfg["geometry"], cfg["mechanism"], cfg["approach"], cfg["output"]
    T = duration or out["duration"]
    dt = step or out["step"]
    t = np.arange(0.0, T + dt / 2, dt)
    n = len(t)
    R0, D, Rs, Sd, rh = g["cone_entrance_radius"], g["cone_depth"], g["socket_radius"], g["socket_depth"], g["head_radius"]
    Lh, L0, goff = g["housing_length"], g["probe_length"], g["gimbal_offset"]
    v0, e0 = ap["closing_speed"], ap["lateral_offset"]
    alpha = math.atan2(R0 - Rs, D)                      # cone half-angle
    phi = math.radians(30.0)                            # direction of the lateral miss
    ey, ez = math.cos(phi), math.sin(phi)

    def cone_r(x):
        return Rs + (R0 - Rs) * (x + D) / D

    # head path: free flight, then on the cone surface, then in the socket to the bottom
    x_contact = -D + D * (e0 + rh / math.cos(alpha) - Rs) / (R0 - Rs)
    x_head0 = x_contact + ap["start_gap"]
    x_cap = -D - Sd + rh
    t_contact = (x_head0 - x_contact) / v0
    t_cap = (x_head0 - x_cap) / v0
    hx = np.maximum(x_head0 - v0 * t, x_cap)
    on_cone = (hx <= x_contact) & (hx > -D)
    lat = np.full(n, e0)
    lat[on_cone] = cone_r(hx[on_cone]) - rh / math.cos(alpha)
    lat[hx <= -D] = np.maximum(Rs - rh / math.cos(alpha), 0.0) * np.clip((hx[hx <= -D] - x_cap) / (Sd - rh), 0, 1)
    head = np.stack([hx, lat * ey, lat * ez], 1)

    # active craft: constant velocity until capture, damped stroke, alignment, retraction to the rings
    tc = t_cap
    s_rel = np.clip(t - tc, 0.0, None)
    tau = 1.2
    x_a_cap = x_cap + Lh + L0 - goff
    stroke_in = v0 * tau * (1 - np.exp(-s_rel / tau)) + 0.01 * np.exp(-s_rel / 0.6) * np.sin(2 * np.pi * 1.5 * s_rel) * (s_rel > 0)
    t_ret = tc + 0.45 * (T - tc)
    retr = _smoothstep((t - t_ret) / (0.5 * (T - tc)))
    x_a = np.where(t < tc, x_a_cap + v0 * (tc - t), x_a_cap - stroke_in)
    x_a = x_a * (1 - retr) + 0.0 * retr
    a_lat = 0.5 * e0 * np.where(t < tc, 1.0, np.exp(-s_rel / 3.0) * np.cos(2 * np.pi * 0.25 * s_rel))
    att = math.radians(2.0) * np.where(t < tc, 1.0, np.exp(-s_rel / 3.0) * np.cos(2 * np.pi * 0.2 * s_rel))
    act_pos = np.stack([x_a, a_lat * ey, a_lat * ez], 1)
    act_q = quat.from_axis_angle_many(np.tile([0.0, -ez, ey], (n, 1)), att)
    R_a = quat.to_matrix(act_q)
    gimbal = act_pos + np.einsum("nij,j->ni", R_a, [goff, 0.0, 0.0])
    craft_axis = np.einsum("nij,j->ni", R_a, [-1.0, 0.0, 0.0])

    # housing takes 85 % of the probe's swing, the bending joint the rest
    u = head - gimbal
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    u_h = craft_axis + 0.85 * (u - craft_axis)
    u_h /= np.linalg.norm(u_h, axis=1, keepdims=True)
    exit_pt = gimbal + Lh * u_h
    free = np.linalg.norm(head - exit_pt, axis=1)
    u_p = (head - exit_pt) / free[:, None]
    q_h = quat.multiply(_rotation_between(np.array([-1.0, 0.0, 0.0]), u_h), np.tile([1.0, 0, 0, 0], (n, 1)))
    q_p = _rotation_between(np.array([-1.0, 0.0, 0.0]), u_p)
    stroke = np.clip(L0 - free, 0.0, None)
    probe_origin = exit_pt
    limiter_origin = gimbal + 0.55 * Lh * u_h

    # contact forces (shaped; directions from the geometry)
    F = np.zeros((n, len(PAIRS), 3))
    P = np.zeros((n, len(PAIRS), 3))
    act = np.zeros((n, len(PAIRS)), bool)
    radial = np.stack([np.zeros(n), np.full(n, ey), np.full(n, ez)], 1)
    cone_n = np.cos(alpha) * (-radial) + np.sin(alpha) * np.array([1.0, 0, 0])
    i = 0
    act[:, i] = on_cone
    fmag = 300.0 + 150.0 * np.sin(2 * np.pi * 3 * (t - t_contact))
    F[:, i] = cone_n * (fmag * on_cone)[:, None]
    P[:, i] = head - rh * cone_n
    i = 1
    hit = np.exp(-0.5 * ((t - tc) / 0.03) ** 2)
    act[:, i] = hit > 0.05
    F[:, i, 0] = 4000.0 * hit * act[:, i]
    P[:, i] = head - [rh, 0, 0]
    i = 2
    rebound = np.exp(-0.5 * ((t - tc - 0.6) / 0.02) ** 2)
    act[:, i] = rebound > 0.05
    F[:, i, 0] = -2500.0 * rebound * act[:, i]
    P[:, i] = head + [0.02, 0, 0]
    i = 3
    lim_on = (t > tc + 0.8) & (t < tc + 2.2)
    act[:, i] = lim_on & (np.sin(2 * np.pi * 18 * t) > 0)
    F[:, i] = cone_n * (1500.0 * np.sin(2 * np.pi * 18 * t).clip(0))[:, None] * act[:, i, None]
    P[:, i] = limiter_origin - g["limiter_radius"][1] * radial
    i = 4
    lever = _smoothstep((t - tc - 3.0) / 2.0)
    rol_on = (t > T - 4.0) & (t < T - 1.0)
    act[:, i] = rol_on
    F[:, i] = cone_n * (400.0 + 200.0 * np.sin(2 * np.pi * 12 * t))[:, None] * rol_on[:, None]
    P[:, i] = exit_pt + 0.3 * radial
    i = 5
    ring_on = x_a < 0.002
    act[:, i] = ring_on
    F[:, i, 0] = 800.0 * ring_on
    P[:, i] = act_pos + [0, 0.58, 0]

    # base loads: contact forces and their moments about the gimbal
    F_total = F.sum(axis=1)
    M_total = np.cross(P - gimbal[:, None, :], F).sum(axis=1)
    spring = np.minimum(stroke, m["spring_stroke"])
    brake = np.clip(stroke - m["spring_stroke"], 0, None)
    stroke_rate = np.gradient(stroke, t)
    nut_rpm = stroke_rate / m["screw_lead"] * 60.0
    hang = np.degrees(np.arccos(np.clip(np.einsum("ni,ni->n", u_h, craft_axis), -1, 1)))
    bend = np.degrees(np.arccos(np.clip(np.einsum("ni,ni->n", u_h, u_p), -1, 1)))
    h_y, h_z = hang * ey, hang * ez
    b_y, b_z = bend * ey, bend * ez
    lat_k = m["lateral_spring_stroke"] / 10.0
    vel_a = np.gradient(act_pos, t, axis=0)
    rate = np.degrees(np.gradient(att, t))
    head_v = np.gradient(head, t, axis=0)
    near = (hx < -D + 0.12).astype(float)
    pitch = np.degrees(np.arctan2(u_p[:, 2], -u_p[:, 0]))
    yaw = np.degrees(np.arctan2(u_p[:, 1], -u_p[:, 0]))
    off = head - (exit_pt + free[:, None] * u_h)
    cols = {
        "head_x": head[:, 0], "head_y": head[:, 1], "head_z": head[:, 2],
        "head_vx": head_v[:, 0], "head_vy": head_v[:, 1], "head_vz": head_v[:, 2],
        "probe_pitch": pitch, "probe_yaw": yaw,
        "cm_vx": vel_a[:, 0], "cm_vy": vel_a[:, 1], "cm_vz": vel_a[:, 2],
        "rate_x": np.zeros(n), "rate_y": -rate * ez, "rate_z": rate * ey,
        "att_roll": np.zeros(n), "att_pitch": -np.degrees(att) * ez, "att_yaw": np.degrees(att) * ey,
        "Fx": F_total[:, 0], "Fy": F_total[:, 1], "Fz": F_total[:, 2],
        "Mx": M_total[:, 0], "My": M_total[:, 1], "Mz": M_total[:, 2],
        "axial_spring": spring, "friction_brake": brake, "axial_magnetic_brake": nut_rpm,
        "spring_mechanism_1": lat_k * h_z, "spring_mechanism_2": lat_k * h_y,
        "magnetic_brake_1": np.gradient(h_z, t) * 200.0, "magnetic_brake_2": np.gradient(h_y, t) * 200.0,
        "housing_angle_y": h_y, "housing_angle_z": h_z, "probe_bend_y": b_y, "probe_bend_z": b_z,
        "probe_torsion": np.zeros(n), "probe_stroke": stroke,
        "head_offset_y": off[:, 1], "head_offset_z": off[:, 2],
        "head_near_socket": near, "lever_extension": lever,
        "kinetic_energy": 0.5 * m["active_mass"] * np.einsum("ni,ni->n", vel_a, vel_a),
    }
    specs = channels_spec(m)
    data = np.stack([cols[c.name] for c in specs], 1)
    ident = np.tile([1.0, 0, 0, 0], (n, 1))
    pos = np.stack([np.zeros((n, 3)), act_pos, gimbal, probe_origin, head, limiter_origin], 1)
    qs = np.stack([ident, act_q, q_h, q_p, q_p, q_h], 1)
    meta = RunMeta(comment=cfg["comment"], variant="synthetic", mechanism_type="probe_cone",
                   run_date=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                   solver_version="synthetic-kinematics 1", output_step=dt, scenario=cfg["name"])
    w = RunWriter(path, meta, specs, BODIES, PAIRS, geometry(g), parameters_toml=text)
    block = 2048
    for a in range(0, n, block):
        b = min(n, a + block)
        w.append(t[a:b], data[a:b], pos[a:b], qs[a:b], act[a:b], F[a:b], P[a:b])
    w.add_event(t_contact, "first_contact", "head_cone", "probe head touches the receiving cone")
    for j, pair in enumerate(PAIRS):
        edges = np.diff(act[:, j].astype(int))
        for k in np.flatnonzero(edges == 1):
            w.add_event(t[k + 1], "contact_begin", pair.name, pair.label)
        for k in np.flatnonzero(edges == -1):
            w.add_event(t[k + 1], "contact_end", pair.name, pair.label)
    w.add_event(tc, "capture", "latch_slot", "latches engaged behind the socket shoulder")
    w.finish(t_capture=tc, complete=True)
    return Path(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=str(ROOT / "sample_runs" / "synthetic_approach.h5"))
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--step", type=float, default=None)
    a = ap.parse_args(argv)
    p = make(a.out, a.duration, a.step)
    print(f"wrote {p} ({p.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
