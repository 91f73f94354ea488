"""Peripheral-unit contact pairs (solver/contact/peripheral.py): closed forms for symmetric cases, and hypothesis
poses against brute force over densely sampled points (numpy, written independently of the kernels)."""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.contact import geometry as G
from solver.contact import kernels as K
from solver.contact import peripheral as P

EX = np.array([1.0, 0.0, 0.0])
DENSE = 4001


def rot_axis(axis, ang):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    Kx = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(ang) * Kx + (1 - math.cos(ang)) * Kx @ Kx


def world(*rows, rot=np.eye(3), shift=np.zeros(3)):
    """World rows of (kind, row) pairs, all on one body with the given pose."""
    prim = np.array([r for _, r in rows])
    pint = np.array([[k, 0] for k, _ in rows], np.int64)
    work = np.zeros_like(prim)
    K.transform_rows(prim, pint, np.asarray(shift, float)[None], np.asarray(rot, float)[None], np.ones(6), work)
    return work


def ev(active, passive, rot=np.eye(3), shift=np.zeros(3)):
    """Pair result of an active row moved by (rot, shift) against a passive row in place."""
    w = np.vstack([world(active, rot=rot, shift=shift), world(passive)])
    return np.array(P.peripheral_pair_eval(w, active[0], 0, passive[0], 1))


def seg_dist(c, a, b):
    """Distance of point c from segment a-b (numpy)."""
    e = b - a
    ee = np.dot(e, e)
    t = np.clip(np.dot(c - a, e) / ee, 0.0, 1.0) if ee > 1e-200 else 0.0
    return np.linalg.norm(c - a - t * e)


def samples(a, b, n=DENSE):
    return a + np.linspace(0.0, 1.0, n)[:, None] * (b - a)


# ---- segment / trapezoid (003 pair 6: guide-petal side faces, latch faces) -----------------------------------

TRAP = [(0.0, -0.10, 0.0), (0.0, 0.10, 0.0), (0.16, 0.03, 0.0), (0.16, -0.03, 0.0)]   # petal-like, in z = 0


def face():
    return G.face_row(TRAP, (0, 0, 1))


def trap_ccw():
    v = np.array(TRAP, float)
    return v[np.argsort(np.arctan2(v[:, 1] - v[:, 1].mean(), v[:, 0] - v[:, 0].mean()))]   # counter-clockwise about +z


def face_dist(q):
    """Distance of a point of the plane z = 0 from the closed quad TRAP."""
    v = trap_ccw()
    inside, border = True, np.inf
    for k in range(4):
        p, e = v[k], v[(k + 1) % 4] - v[k]
        inside &= e[0] * (q[1] - p[1]) - e[1] * (q[0] - p[0]) >= 0.0
        border = min(border, seg_dist(q, p, p + e))
    return 0.0 if inside else border


def dense_segment_face(a, b, r, n=DENSE, extra=None):
    """Deepest sphere of radius r along a-b against the one-sided quad TRAP (normal +z), by sampling (and at the
    `extra` points of the segment, if given)."""
    v = trap_ccw()
    c = samples(a, b, n) if extra is None else np.vstack([samples(a, b, n), np.atleast_2d(extra)])
    d = c[:, 2]
    inside = np.ones(len(c), bool)
    border = np.full(len(c), np.inf)
    for k in range(4):
        p, q = v[k], v[(k + 1) % 4]
        e = q - p
        inside &= e[0] * (c[:, 1] - p[1]) - e[1] * (c[:, 0] - p[0]) >= 0.0
        t = np.clip(((c - p) @ e) / (e @ e), 0.0, 1.0)
        border = np.minimum(border, np.linalg.norm(c - p - t[:, None] * e, axis=1))
    phi = np.where(inside, d, np.where(d >= 0.0, border, np.inf))   # in the plane beside the face: free side
    return r - phi.min()


def test_segment_end_below_the_face_interior():
    """A tilted segment whose lower end is 2 mm behind the face interior: depth r + 2 mm at that end's foot."""
    a, b = np.array([0.05, 0.01, -0.002]), np.array([0.12, -0.02, 0.03])
    out = ev(G.segment_row(a, b, 0.004), face())
    assert out[0] == pytest.approx(0.006, abs=1e-15)
    np.testing.assert_allclose(out[1:4], [0.05, 0.01, 0.0], atol=1e-15)
    np.testing.assert_allclose(out[4:7], [0, 0, 1])


def test_segment_parallel_over_the_face_at_known_height():
    out = ev(G.segment_row((0.02, -0.05, 0.003), (0.10, 0.02, 0.003), 0.005), face())
    assert out[0] == pytest.approx(0.002, abs=1e-15)
    np.testing.assert_allclose(out[4:7], [0, 0, 1])
    assert out[3] == 0.0


def test_segment_beside_the_edge_is_the_003_edge_edge_case():
    """Active segment skew to the face's wide edge (x = 0), beside the face: the common perpendicular of the two
    lines, normal along L_A x L_P (003 pair 6), point on the edge."""
    a, b = np.array([-0.003, -0.02, 0.004]), np.array([-0.003, 0.02, -0.004])
    out = ev(G.segment_row(a, b, 0.005), face())
    assert out[0] == pytest.approx(0.002, abs=1e-15)
    np.testing.assert_allclose(out[1:4], [0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(out[4:7], [-1, 0, 0], atol=1e-15)
    n = np.cross(b - a, np.array([0.0, 1.0, 0.0]))
    assert abs(abs(n @ out[4:7]) - np.linalg.norm(n)) < 1e-15


def test_segment_behind_and_beside_or_clear_reports_nothing():
    assert ev(G.segment_row((-0.01, 0.0, -0.01), (-0.01, 0.05, -0.002), 0.004), face())[0] == K.NO
    assert ev(G.segment_row((0.02, 0.0, 0.004 + 1e-9), (0.1, 0.0, 0.004 + 1e-9), 0.004), face())[0] == K.NO


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
# derandomized: a segment end exactly on a face corner behind it (a measure-zero tie: 8 of 8000 boundary-biased
# poses with main's kernel, 4 with this one) must not turn CI red at random; the @examples are such ties, now met
@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=st.tuples(st.floats(-0.05, 0.21), st.floats(-0.15, 0.15), st.floats(-0.03, 0.05)),
       b=st.tuples(st.floats(-0.05, 0.21), st.floats(-0.15, 0.15), st.floats(-0.03, 0.05)),
       r=st.floats(0.0, 0.02))
@example(a=(0.125, 0.0625, 0.0), b=(0.0, 0.1, -0.015625), r=0.0)   # from the face's side onto its corner edge behind
@example(a=(0.0, 0.125, 4.13670598652443e-147), b=(0.0, 0.0, 0.03125), r=0.015625)    # beside it, a hair in front
@example(a=(-1.8258754243090022e-09, 0.0, 1e-30), b=(0.0, 0.0, 0.03125), r=0.015625)
def test_segment_face_matches_dense_sampling(a, b, r):
    a, b = np.array(a), np.array(b)
    out = ev(G.segment_row(a, b, r), face())
    # the reported point is sampled too: a segment grazing the face's very corner from behind touches it at one point
    # only (measure zero: no sample finds it), e.g. a=(0.0625, 0.1, 0), b=(-0.03125, 0.1, -0.015625), r=0
    extra = None if out[0] == K.NO else out[1:4] + (r - out[0]) * out[4:7]
    best = dense_segment_face(a, b, r, extra=extra)
    tol = np.linalg.norm(b - a) / (DENSE - 1) + 1e-12
    if out[0] == K.NO:
        assert best <= 1e-12
        return
    assert best - 1e-12 <= out[0] <= best + tol
    q, n = out[1:4], out[4:7]
    assert abs(np.linalg.norm(n) - 1.0) < 1e-12 and abs(q[2]) < 1e-12          # the point is in the face plane
    assert face_dist(q) < 1e-12                                               # ... on the closed face
    assert seg_dist(q + (r - out[0]) * n, a, b) < 1e-9                        # the active point is on the segment


@pytest.mark.parametrize("ang", [0.0, 0.8, 2.4])
def test_segment_face_moves_with_the_body(ang):
    rot, shift = rot_axis((0.2, -0.4, 0.9), ang), np.array([0.3, -1.1, 0.6])
    seg = G.segment_row((0.05, 0.01, -0.002), (0.12, -0.02, 0.03), 0.004)
    base = ev(seg, face())
    w = np.vstack([world(seg, rot=rot, shift=shift), world(face(), rot=rot, shift=shift)])
    moved = np.array(P.segment_face(w, 0, 1))
    assert moved[0] == pytest.approx(base[0], abs=1e-14)
    np.testing.assert_allclose(moved[1:4], rot @ base[1:4] + shift, atol=1e-14)
    np.testing.assert_allclose(moved[4:7], rot @ base[4:7], atol=1e-14)


# ---- segment / edge circle or torus (ring edge) ------------------------------------------------------------

RING_R = 0.41


def dense_segment_circle(a, b, R, n=DENSE):
    """Smallest distance of densely sampled segment points from the circle of radius R about +x at x = 0."""
    c = samples(a, b, n)
    return np.hypot(c[:, 0], np.hypot(c[:, 1], c[:, 2]) - R).min()


def test_segment_in_the_circle_plane_outside_it():
    out = ev(G.segment_row((0, 0.42, -0.1), (0, 0.42, 0.1), 0.006), G.circle_row((0, 0, 0), EX, RING_R, 0.002))
    assert out[0] == K.NO                                                   # 10 mm apart, reach 8 mm
    out = ev(G.segment_row((0, 0.415, -0.1), (0, 0.415, 0.1), 0.006), G.circle_row((0, 0, 0), EX, RING_R, 0.002))
    assert out[0] == pytest.approx(0.003, abs=1e-15)
    np.testing.assert_allclose(out[1:4], [0, RING_R + 0.002, 0], atol=1e-15)
    np.testing.assert_allclose(out[4:7], [0, 1, 0], atol=1e-15)


@pytest.mark.parametrize("psi", [0.0, 1.1, -2.7])
def test_segment_parallel_to_the_axis_past_the_edge(psi):
    """A petal generator parallel to the axis at radius R + 3 mm: deepest at the circle's plane."""
    u = np.array([0.0, math.cos(psi), math.sin(psi)])
    a, b = -0.07 * EX + (RING_R + 0.003) * u, 0.13 * EX + (RING_R + 0.003) * u
    out = ev(G.segment_row(a, b, 0.005), G.circle_row((0, 0, 0), EX, RING_R, 0.0))
    assert out[0] == pytest.approx(0.002, abs=1e-15)
    np.testing.assert_allclose(out[1:4], RING_R * u, atol=1e-15)
    np.testing.assert_allclose(out[4:7], u, atol=1e-15)


def test_chord_through_the_circle_touches_it_twice():
    """A diameter in the circle's plane crosses the circle at two points: distance 0, depth r + tube."""
    out = ev(G.segment_row((0, -0.5, 0), (0, 0.6, 0), 0.004), G.circle_row((0, 0, 0), EX, RING_R, 0.001))
    assert out[0] == pytest.approx(0.005, abs=1e-15)
    assert on_torus(out[1:4], out[4:7], RING_R, 0.001) < 1e-15


def on_torus(q, n, R, tube):
    """Distance from the circle of radius R about +x at x = 0 of the point q - tube n."""
    c = q - tube * n
    return math.hypot(c[0], math.hypot(c[1], c[2]) - R)


def test_wedge_limits_the_ring_edge():
    """The ring's inner edge with its wedge between the face (+x) and the bore (-rho): a segment on the face side
    touches it, one beyond the outside of the ring (+rho, -x) does not."""
    edge = G.circle_row((0, 0, 0), EX, RING_R, 0.003, wedge=((1.0, 0.0), (0.0, -1.0)))
    b = np.array([1.0, -1.0]) / math.sqrt(2)
    along = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)                        # tangent to the 4 mm tube in the meridian
    c = 0.004 * b[0] * EX + (RING_R + 0.004 * b[1]) * np.array([0, 1.0, 0])
    out = ev(G.segment_row(c - 0.01 * along, c + 0.01 * along, 0.002), edge)
    assert out[0] == pytest.approx(0.001, abs=1e-15)
    np.testing.assert_allclose(out[4:7], [b[0], b[1], 0.0], atol=1e-15)
    c2 = np.array([-0.003, RING_R + 0.003, 0.0])
    assert ev(G.segment_row(c2 - 0.01 * along, c2 + 0.01 * along, 0.002), edge)[0] == K.NO


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=200, deadline=None)
@given(a=st.tuples(st.floats(-0.2, 0.2), st.floats(-0.6, 0.6), st.floats(-0.6, 0.6)),
       b=st.tuples(st.floats(-0.2, 0.2), st.floats(-0.6, 0.6), st.floats(-0.6, 0.6)),
       tube=st.floats(0.0, 0.01))
def test_segment_torus_matches_dense_sampling(a, b, tube):
    """Random segments around the ring edge, chords with two nearby minima included; r large enough that most touch."""
    a, b, r = np.array(a), np.array(b), 0.3
    out = ev(G.segment_row(a, b, r), G.circle_row((0, 0, 0), EX, RING_R, tube))
    best = dense_segment_circle(a, b, RING_R)
    if out[0] == K.NO:
        assert r + tube - best <= 1e-12
        return
    dist = r + tube - out[0]
    assert best - 0.5 * np.linalg.norm(b - a) / (DENSE - 1) - 1e-12 <= dist <= best + 1e-12
    q, n = out[1:4], out[4:7]
    assert abs(np.linalg.norm(n) - 1.0) < 1e-12
    assert on_torus(q, n, RING_R, tube) < 1e-12
    assert seg_dist(q + (r - out[0]) * n, a, b) < 1e-9


# ---- annulus / annulus (ring faces) ------------------------------------------------------------------------

RI, RO = 0.42, 0.60        # ring face of the IDSS-class unit (resources/peripheral/peripheral_idss.toml)


def active_face(ri=RI, ro=RO, e1=None):
    return G.annulus_row((0, 0, 0), -EX, ri, ro) if e1 is None else _annulus_e1(ri, ro, e1)


def _annulus_e1(ri, ro, e1):
    kind, w = G.annulus_row((0, 0, 0), -EX, ri, ro)
    w[6:9] = e1
    return kind, w


def passive_face():
    return G.annulus_row((0, 0, 0), EX, RI, RO)


def dense_rings(rot, shift, ri=RI, ro=RO, nr=121, nt=2048):
    """Largest depth behind the passive plane x = 0 of the active face's points (polar grid) that project onto
    the passive annulus."""
    rho, th = np.meshgrid(np.linspace(ri, ro, nr), np.linspace(0.0, 2 * np.pi, nt, endpoint=False))
    p = np.stack([np.zeros_like(rho), rho * np.cos(th), rho * np.sin(th)], -1).reshape(-1, 3) @ rot.T + shift
    rb = np.hypot(p[:, 1], p[:, 2])
    ok = (rb >= RI) & (rb <= RO)
    return (-p[ok, 0]).max() if ok.any() else -np.inf


def test_parallel_coaxial_ring_faces():
    out = ev(active_face(), passive_face(), shift=(-0.0015, 0, 0))
    assert out[0] == pytest.approx(0.0015, abs=1e-15)
    np.testing.assert_allclose(out[4:7], EX)
    assert out[1] == 0.0 and RI <= math.hypot(out[2], out[3]) <= RO


@pytest.mark.parametrize("tilt_dir", [0.0, 0.9, 3.5])
def test_tilted_ring_deepest_rim_point_in_closed_form(tilt_dir):
    g, h = math.radians(2.0), 0.004
    axis = np.array([0.0, -math.sin(tilt_dir), math.cos(tilt_dir)])        # the rim dips toward +u
    u = np.array([0.0, math.cos(tilt_dir), math.sin(tilt_dir)])
    rot = rot_axis(axis, g)
    out = ev(active_face(), passive_face(), rot=rot, shift=(h, 0, 0))
    assert out[0] == pytest.approx(RO * math.sin(g) - h, abs=1e-14)
    np.testing.assert_allclose(out[1:4], RO * math.cos(g) * u, atol=1e-14)


def test_offset_ring_deepest_where_the_rims_cross():
    """Tilted 1 deg and offset 60 mm toward the dip: the deepest rim point projects outside the passive ring, the
    deepest point of the overlap lies over the passive outer rim at the dip direction (closed form)."""
    g, off = math.radians(1.0), 0.06
    rot = rot_axis((0, 0, 1), g)                                            # the rim dips toward +y
    shift = np.array([0.008, off, 0.0])
    out = ev(active_face(), passive_face(), rot=rot, shift=shift)
    # the active plane: points p with (p - shift) . (rot @ -x) = 0, over (0, RO, 0) along x
    a = rot @ -EX
    x = shift[0] - (RO - shift[1]) * a[1] / a[0]
    assert out[0] == pytest.approx(-x, abs=1e-15)
    np.testing.assert_allclose(out[1:4], [0, RO, 0], atol=1e-15)


def test_ring_faces_apart_or_not_overlapping():
    assert ev(active_face(), passive_face(), shift=(0.001, 0, 0))[0] == K.NO
    inner = G.annulus_row((0, 0, 0), -EX, 0.1, 0.3)
    assert ev(inner, passive_face(), shift=(-0.01, 0, 0))[0] == K.NO      # no point over the passive ring


angle = st.floats(0.0, 2 * math.pi)


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=60, deadline=None)
@given(tilt=st.floats(0.0, math.radians(5.0)), tilt_dir=angle, off=st.floats(0.0, 0.12), off_dir=angle,
       gap=st.floats(-0.01, 0.01), spin=angle)
def test_annulus_annulus_matches_dense_sampling(tilt, tilt_dir, off, off_dir, gap, spin):
    """Inside the IDSS envelope and beyond (tilt <= 5 deg, offset <= 0.12 m): never shallower than any of 250 000
    grid points of the overlap, and the reported point is on both faces at the reported depth."""
    rot = rot_axis((0.0, math.cos(tilt_dir), math.sin(tilt_dir)), tilt) if tilt > 0 else np.eye(3)
    shift = np.array([gap, off * math.cos(off_dir), off * math.sin(off_dir)])
    e1 = np.array([0.0, math.cos(spin), math.sin(spin)])
    out = ev(active_face(e1=e1), passive_face(), rot=rot, shift=shift)
    best = dense_rings(rot, shift)
    if out[0] == K.NO:
        assert best <= 1e-12
        return
    assert out[0] >= best - 1e-12
    q, n = out[1:4], out[4:7]
    np.testing.assert_allclose(n, EX)
    assert abs(q[0]) < 1e-15 and RI - 1e-12 <= math.hypot(q[1], q[2]) <= RO + 1e-12
    p = rot.T @ (q - out[0] * EX - shift)                                    # the active point, active frame
    assert abs(p[0]) < 1e-12 and RI - 1e-12 <= math.hypot(p[1], p[2]) <= RO + 1e-12
    # the grid is within its resolution of the deepest point unless the overlap is a sliver there
    slope = math.sin(tilt)
    assert out[0] <= best + slope * 8 * ((RO - RI) / 120 + RO * 2 * math.pi / 2048) + 1e-12


# ---- segment / segment (latch hook edge against a striker pin) ------------------------------------------------

def test_striker_pin_across_latch_edge():
    pin = G.segment_row((0.0, -0.03, 0.0), (0.0, 0.03, 0.0), 0.008)      # passive striker pin along y
    hook = G.segment_row((-0.04, 0.01, 0.012), (0.04, 0.01, 0.012), 0.006)
    out = ev(hook, pin)
    assert out[0] == pytest.approx(0.002, abs=1e-15)
    np.testing.assert_allclose(out[1:4], [0, 0.01, 0.008], atol=1e-15)
    np.testing.assert_allclose(out[4:7], [0, 0, 1], atol=1e-15)


def test_latch_face_on_striker_pin_is_a_segment_face_pair():
    """The striker pin (capsule) against the latch's catching face (trapezoid facing the pin): pair 6 variant."""
    latch = G.face_row([(0, -0.02, 0), (0, 0.02, 0), (0.03, 0.015, 0), (0.03, -0.015, 0)], (0, 0, 1))
    out = ev(G.segment_row((0.015, -0.03, 0.006), (0.015, 0.03, 0.006), 0.008), latch)
    assert out[0] == pytest.approx(0.002, abs=1e-15)
    np.testing.assert_allclose(out[4:7], [0, 0, 1], atol=1e-15)   # over the face and over its edge: equal depths


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=100, deadline=None)
@given(pts=st.lists(st.tuples(st.floats(-0.1, 0.1), st.floats(-0.1, 0.1), st.floats(-0.1, 0.1)), min_size=4,
                    max_size=4))
@example(pts=[(0.0, 0.0, 0.0625), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 1e-09, 0.0625)])  # nearly parallel, met
def test_segment_segment_matches_dense_sampling(pts):
    a0, a1, b0, b1 = (np.array(p) for p in pts)
    ra, rb = 0.1, 0.05
    out = ev(G.segment_row(a0, a1, ra), G.segment_row(b0, b1, rb))
    sa, sb = samples(a0, a1, 801), samples(b0, b1, 801)
    best = min(np.linalg.norm(sa[i:i + 100, None] - sb[None], axis=2).min() for i in range(0, 801, 100))
    res = 0.5 * (np.linalg.norm(a1 - a0) + np.linalg.norm(b1 - b0)) / 800
    # rounding: axes that (nearly) meet leave the closest points ~1e-11 m apart, e.g. a1 = b1 = (0, 6e-8, 0)
    eps = 1e-12 + 1e-9 * (np.linalg.norm(a1 - a0) + np.linalg.norm(b1 - b0))
    if out[0] == K.NO:                                                      # apart, or the axes meet (no normal)
        assert ra + rb - best <= eps or best <= res + eps
        return
    dist = ra + rb - out[0]
    assert best - res - eps <= dist <= best + eps
    q, n = out[1:4], out[4:7]
    assert seg_dist(q - rb * n, b0, b1) < eps and seg_dist(q + (ra - out[0]) * n, a0, a1) < eps


def test_unsupported_kinds_report_nothing():
    w = world(G.sphere_row((0, 0, 0), 1.0), face())
    assert P.peripheral_pair_eval(w, K.SPHERE, 0, K.FACE, 1)[0] == K.NO
    assert (K.SEGMENT, K.FACE) in P.PERIPHERAL_SUPPORTED and (K.SEGMENT, K.FACE) not in K.SUPPORTED


# ---- segment / petal plate (003 pair 6 as written: petal edges crossing) ---------------------------------------

PLATE_R = 0.006       # the plate's edge radius (half a 12 mm petal)


def plate():
    """The petal-like TRAP as a segment_trapezoid row: v0 v1 root (x = 0), v2 v3 tip, normal -z (CCW about it)."""
    v = np.array([(0.0, -0.10, 0.0), (0.0, 0.10, 0.0), (0.16, 0.03, 0.0), (0.16, -0.03, 0.0)])
    w = np.zeros(K.ROW)
    w[0:12], w[12:15], w[15] = v.reshape(-1), (0.0, 0.0, -1.0), PLATE_R
    return v, w


def trap_eval(a, b, r):
    w = np.vstack([G.segment_row(a, b, r)[1], plate()[1]])
    return np.array(P.segment_trapezoid(w, 0, 1))


def test_plate_side_edge_across_a_perpendicular_segment():
    """A segment through the plate's plane (along z) beside, at and past the side edge v1-v2: depth r + r_P minus the
    signed in-plane distance from the edge (positive outside), normal the edge's outward in-plane normal."""
    r = 0.004
    out_n = np.array([0.07, 0.16, 0.0]) / math.hypot(0.07, 0.16)
    edge_y = 0.10 - 0.07 * 0.02 / 0.16                # the side edge at x = 0.02
    for off in (0.009, 0.004, 0.0, -0.005, -0.012):   # signed distance along y from the edge
        y = edge_y + off
        out = trap_eval(np.array([0.02, y, -0.1]), np.array([0.02, y, 0.1]), r)
        sep = off * out_n[1]
        if r + PLATE_R - sep <= 0:
            assert out[0] == K.NO
            continue
        assert out[0] == pytest.approx(r + PLATE_R - sep, abs=1e-12)
        np.testing.assert_allclose(out[4:7], out_n, atol=1e-12)


def test_plate_crossed_far_from_its_edges_or_clear_reports_nothing():
    """A segment through the middle of the plate (farther than CROSS_MAX from every edge) is not an edge contact;
    one clear of the plate reports nothing either."""
    assert trap_eval(np.array([0.06, 0.0, -0.1]), np.array([0.06, 0.0, 0.1]), 0.004)[0] == K.NO
    assert trap_eval(np.array([0.06, 0.2, -0.1]), np.array([0.06, 0.2, 0.1]), 0.004)[0] == K.NO


def test_petal_tip_edge_over_the_plate_from_either_side():
    """A tip edge (a segment parallel to the plate) over its middle, 8 mm off either face: depth r + r_P - 8 mm,
    normal away from the plate on that side."""
    for side in (1.0, -1.0):
        out = trap_eval(np.array([0.08, -0.02, side * 0.008]), np.array([0.08, 0.02, side * 0.008]), 0.004)
        assert out[0] == pytest.approx(0.004 + PLATE_R - 0.008, abs=1e-15)
        np.testing.assert_allclose(out[4:7], [0.0, 0.0, side], atol=1e-15)


def _edge_dist_dense(a, b, p, q):
    """Distance of segment a-b from segment p-q: the segment sampled densely, each sample's exact distance."""
    return min(seg_dist(c, p, q) for c in samples(a, b, 801))


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=120, deadline=None)
@given(a=st.tuples(st.floats(0.002, 0.18), st.floats(-0.14, 0.14), st.floats(-0.06, 0.0)),   # above the root:
       b=st.tuples(st.floats(0.002, 0.18), st.floats(-0.14, 0.14), st.floats(0.0, 0.06)),    # the ring owns below
       r=st.floats(0.0, 0.01))
def test_segment_trapezoid_matches_dense_sampling(a, b, r):
    """Random segments about the plate: clear of it (no crossing inside), the capsule depth against the plate (over
    it, or its nearest side or tip edge); crossed near an edge, at least r + r_P and past it by no more than the
    distance to that edge."""
    a, b = np.array(a), np.array(b)
    v, _ = plate()
    out = trap_eval(a, b, r)
    edges = [(v[1], v[2]), (v[2], v[3]), (v[3], v[0])]
    dense = [_edge_dist_dense(a, b, p, q) for p, q in edges]
    crossed = False
    if abs(b[2] - a[2]) > 1e-12 * np.linalg.norm(b - a):     # as the kernel: a segment in the plane does not cross
        t = -a[2] / (b[2] - a[2])
        qpt = a + t * (b - a)
        if 0 <= t <= 1 and qpt[0] >= 0 and face_dist(qpt) == 0.0:
            crossed = True
            ins = [seg_dist(qpt, *e) for e in edges]       # in-plane distances from the three edges
            k = int(np.argmin(ins))
    tol = 0.5 * np.linalg.norm(b - a) / 800 + 1e-12
    if not crossed:
        over = [abs(c[2]) for c in samples(a, b, 801) if face_dist(c * [1, 1, 0]) == 0.0]   # over the plate
        best = min(dense + over)
        if r + PLATE_R - best <= tol:
            assert out[0] == K.NO or out[0] <= 2 * tol
            return
        assert out[0] == pytest.approx(r + PLATE_R - best, abs=tol)
        return
    if ins[k] > P.CROSS_MAX + 1e-9:
        assert out[0] == K.NO or min(ins) > P.CROSS_MAX - 1e-9
        return
    if out[0] == K.NO:
        return                                        # parallel to the edge: the plate's face, not its edge
    assert r + PLATE_R - 1e-12 <= out[0] <= r + PLATE_R + dense[k] + tol
