"""Property tests: the 003 dichotomy over ordered sets matches brute-force dense sampling of the same
surface (numpy, written independently of the kernels) for thousands of random admissible poses."""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.contact import geometry as G
from solver.contact import kernels as K

pytestmark = pytest.mark.slow   # thousands of hypothesis poses against dense sampling

EX = np.array([1.0, 0.0, 0.0])
R0, D, RS = 0.40, 0.45, 0.07
ALPHA = math.atan2(R0 - RS, D)
DENSE = 8192
# dichotomy (N = 5, 64 members, 8 sectors) + neighbour climb + parabolic step, against 8192 dense
# samples: the largest shortfall seen in 20 000 random ring poses was 1.4e-7 m (with 4 sectors CI drew
# a pose whose two peaks shared one sector: 2.5e-4 m short, kept below as an @example)
TOL = 1e-5          # m
# the limiter's generators far from contact: a pose 0.26 m clear (h = -0.11, tilt 15 deg) came out 1.5e-5 m
# short of dense sampling; a shortfall there moves no contact, so the tolerance grows by 1e-4 of the clearance
GEN_TOL_PER_M = 1e-4


def rot_axis(axis, ang):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    Kx = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(ang) * Kx + (1 - math.cos(ang)) * Kx @ Kx


def world_rows(*rows):
    prim = np.array([r for _, r in rows])
    pint = np.array([[k, 0] for k, _ in rows], np.int64)
    work = np.zeros_like(prim)
    K.transform_rows(prim, pint, np.zeros((1, 3)), np.eye(3)[None], np.ones(2), work)
    return work


def dense_circle_on_cone(c, a, e1, R, tube):
    """Max over DENSE points of a circle of the signed penetration into the receiving cone."""
    e2 = np.cross(a, e1)
    th = np.linspace(0, 2 * np.pi, DENSE, endpoint=False)
    p = c + R * (np.cos(th)[:, None] * e1 + np.sin(th)[:, None] * e2)
    rho = np.hypot(p[:, 1], p[:, 2])
    # signed distance from the cone line rho = RS + (x + D) tan(alpha), positive inside
    d = (RS + (p[:, 0] + D) * math.tan(ALPHA) - rho) * math.cos(ALPHA)
    return (tube - d).max()


def dense_generators_on_edge(o, a, e1, x0, r0, x1, r1, Rc):
    """Max over DENSE generators of (crossing radius in the entry plane x = 0) - Rc."""
    e2 = np.cross(a, e1)
    th = np.linspace(0, 2 * np.pi, DENSE, endpoint=False)
    u = np.cos(th)[:, None] * e1 + np.sin(th)[:, None] * e2
    p1 = o + x0 * a + r0 * u
    p2 = o + x1 * a + r1 * u
    t = -p1[:, 0] / (p2[:, 0] - p1[:, 0])
    pc = p1 + t[:, None] * (p2 - p1)
    return (np.hypot(pc[:, 1], pc[:, 2]) - Rc).max()


angle = st.floats(0.0, 2 * math.pi)
tilt = st.floats(0.0, math.radians(15.0))


@settings(max_examples=800, deadline=None)
@given(x=st.floats(-0.35, -0.02), off=st.floats(0.0, 0.06), off_dir=angle, tilt=tilt, tilt_dir=angle,
       gap=st.floats(-0.02, 0.06), spin=angle)
@example(x=-0.171875, off=0.028133399718785677, off_dir=1.578125, tilt=0.1875, tilt_dir=0.0, gap=0.0, spin=2.0)
def test_ring_on_cone_dichotomy_matches_dense_sampling(x, off, off_dir, tilt, tilt_dir, gap, spin):
    """Rim circle (limiter, roller) from 2 cm outside to 6 cm inside the cone wall, tilt <= 15 deg."""
    tube = 0.005
    R = max(0.03, RS + (x + D) * math.tan(ALPHA) - gap)
    c = np.array([x, off * math.cos(off_dir), off * math.sin(off_dir)])
    rot = rot_axis((0.0, math.cos(tilt_dir), math.sin(tilt_dir)), tilt)
    a = rot @ EX
    e1 = rot @ np.array([0.0, math.cos(spin), math.sin(spin)])
    w = world_rows(G.circle_row(c, a, R, tube, 5, e1=e1), G.cone_row((0, 0, 0), EX, -D, RS, 0.0, R0))
    theta, f = K.dichotomy(K.MODE_RING_CONE, w, 0, 1, 5)
    best = dense_circle_on_cone(c, a, w[0, 6:9], R, tube)
    assert f >= best - TOL
    assert f <= best + 1e-9 + R * (1 - math.cos(math.pi / DENSE))
    # the chosen member is the point the kernel reports
    px, py, pz = K.ring_point(w, 0, theta)
    assert abs(K.cone_char(w, 1, px, py, pz, tube) - f) < 1e-15


@settings(max_examples=500, deadline=None)
@given(h=st.floats(-0.11, -0.01), off=st.floats(0.0, 0.25), off_dir=angle, tilt=tilt, tilt_dir=angle,
       spin=angle)
@example(h=-0.11, off=0.008371696432797395, off_dir=1.24609375, tilt=0.2617993877991494, tilt_dir=5.76171875,
         spin=1.25)
def test_limiter_generators_dichotomy_matches_dense_sampling(h, off, off_dir, tilt, tilt_dir, spin):
    rb, rf, Ll = 0.24, 0.12, 0.12
    o = np.array([-h, off * math.cos(off_dir), off * math.sin(off_dir)])      # back rim just ahead
    rot = rot_axis((0.0, math.cos(tilt_dir), math.sin(tilt_dir)), tilt)
    a = rot @ -EX
    e1 = rot @ np.array([0.0, math.cos(spin), math.sin(spin)])
    w = world_rows(G.cone_row(o, a, 0.0, rb, Ll, rf, side=-1, nbis=5, e1=e1),
                   G.circle_row((0, 0, 0), EX, R0, 0.0))
    theta, f = K.dichotomy(K.MODE_GENERATOR_EDGE, w, 0, 1, 5)
    best = dense_generators_on_edge(o, a, w[0, 6:9], 0.0, rb, Ll, rf, R0)
    assert f >= best - TOL - GEN_TOL_PER_M * max(0.0, -best)
    assert f <= best + 1e-9 + (rb + off) * (1 - math.cos(math.pi / DENSE)) * 4


@settings(max_examples=400, deadline=None)
@given(x=st.floats(-0.42, -0.02), rho_frac=st.floats(0.0, 1.0), psi=angle, r=st.floats(0.0, 0.06))
def test_sphere_cone_no_surface_point_closer_than_reported(x, rho_frac, psi, r):
    """The reported foot is on the surface, and no dense surface point is closer to the centre."""
    rho = rho_frac * (RS + (x + D) * math.tan(ALPHA))
    c = np.array([x, rho * math.cos(psi), rho * math.sin(psi)])
    w = world_rows(G.sphere_row(c, r + 0.08), G.cone_row((0, 0, 0), EX, -D, RS, 0.0, R0))
    out = np.array(K.pair_eval(w, K.SPHERE, 0, K.CONE, 1))
    if out[0] == K.NO:
        return
    dist = np.linalg.norm(out[1:4] - c)
    assert abs(dist - (r + 0.08 - out[0])) < 1e-12
    xs = np.linspace(-D, 0.0, 181)
    ph = psi + np.linspace(-0.5, 0.5, 181)
    X, P = np.meshgrid(xs, ph)
    Rr = RS + (X + D) * math.tan(ALPHA)
    surf = np.stack([X, Rr * np.cos(P), Rr * np.sin(P)], -1).reshape(-1, 3)
    assert np.linalg.norm(surf - c, axis=1).min() >= dist - 1e-12
    q = out[1:4]
    assert abs(math.hypot(q[1], q[2]) - (RS + (q[0] + D) * math.tan(ALPHA))) < 1e-12
