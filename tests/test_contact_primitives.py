"""Contact primitives against analytic answers: every supported pair type, tangency, degenerate axes."""
import math

import numpy as np
import pytest

from solver.contact import geometry as G
from solver.contact import kernels as K

EX = np.array([1.0, 0.0, 0.0])
R0, D, RS = 0.40, 0.45, 0.07                      # receiving cone of resources/geometry/probe_cone.toml
ALPHA = math.atan2(R0 - RS, D)


def world(*rows, state=(1.0, 1.0), rot=np.eye(3), shift=np.zeros(3)):
    """World rows of (kind, row) pairs, all on one body with the given pose."""
    prim = np.array([r for _, r in rows])
    pint = np.array([[k, 0] for k, _ in rows], np.int64)
    work = np.zeros_like(prim)
    K.transform_rows(prim, pint, np.asarray(shift, float)[None], np.asarray(rot, float)[None],
                     np.asarray(state, float), work)
    return work


def ev(rows, **kw):
    w = world(*rows, **kw)
    return np.array(K.pair_eval(w, K.effective_kind(rows[0][0]), 0, rows[1][0], 1))


def cone():
    return G.cone_row((0, 0, 0), EX, -D, RS, 0.0, R0, side=1)


def cone_radius(x):
    return RS + (x + D) * math.tan(ALPHA)


def rot_axis(axis, ang):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    Kx = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(ang) * Kx + (1 - math.cos(ang)) * Kx @ Kx


# ---- sphere / cone (003 pair 1) ------------------------------------------------------------------

@pytest.mark.parametrize("psi", [0.0, 0.7, 2.5, -1.9])
@pytest.mark.parametrize("depth", [1e-4, 3e-3, 0.02])
def test_sphere_resting_in_cone_at_known_depth(psi, depth):
    r, x = 0.05, -0.2
    d = r - depth                                       # centre distance from the surface
    rho = cone_radius(x) - d / math.cos(ALPHA)
    # move the centre along the normal so the foot stays at abscissa x
    n_m = np.array([math.sin(ALPHA), -math.cos(ALPHA)])
    foot = np.array([x, cone_radius(x)])
    cm = foot + d * n_m
    u = np.array([0.0, math.cos(psi), math.sin(psi)])
    c = cm[0] * EX + cm[1] * u
    out = ev([G.sphere_row(c, r), cone()])
    assert out[0] == pytest.approx(depth, abs=1e-13)
    n = math.sin(ALPHA) * EX - math.cos(ALPHA) * u
    np.testing.assert_allclose(out[4:7], n, atol=1e-12)
    np.testing.assert_allclose(out[1:4], foot[0] * EX + foot[1] * u, atol=1e-12)
    assert rho < cone_radius(cm[0])


def test_sphere_cone_tangent_and_just_apart():
    r, x = 0.05, -0.1
    u = np.array([0.0, 0.6, 0.8])
    n_m = np.array([math.sin(ALPHA), -math.cos(ALPHA)])
    for d, hit in ((r, False), (r + 1e-9, False), (r - 1e-9, True)):
        cm = np.array([x, cone_radius(x)]) + d * n_m
        out = ev([G.sphere_row(cm[0] * EX + cm[1] * u, r), cone()])
        assert (out[0] > 0) == hit
        if hit:
            assert out[0] == pytest.approx(1e-9, abs=1e-14)


def test_point_on_cone_axis_is_degenerate_but_finite():
    x = -0.3
    r = cone_radius(x) * math.cos(ALPHA) + 0.004         # touches the whole ring
    out = ev([G.sphere_row(x * EX, r), cone()])
    assert out[0] == pytest.approx(0.004, abs=1e-12)
    assert np.linalg.norm(out[4:7]) == pytest.approx(1.0)
    assert out[4] == pytest.approx(math.sin(ALPHA))
    p = out[1:4]
    assert math.hypot(p[1], p[2]) == pytest.approx(cone_radius(p[0]), abs=1e-12)


def test_sphere_outside_cone_extent_gives_no_cone_contact():
    out = ev([G.sphere_row((0.08, 0.35, 0.0), 0.05), cone()])      # beyond the entry plane
    assert out[0] == K.NO


def test_sphere_cylinder_bore():
    bore = G.cone_row((0, 0, 0), EX, -0.55, RS, -D, RS, side=1)
    u = np.array([0.0, -0.28, 0.96])
    c = -0.5 * EX + 0.03 * u
    out = ev([G.sphere_row(c, 0.05), bore])
    assert out[0] == pytest.approx(0.05 - (RS - 0.03), abs=1e-13)
    np.testing.assert_allclose(out[4:7], -u, atol=1e-12)
    np.testing.assert_allclose(out[1:4], -0.5 * EX + RS * u, atol=1e-12)


def test_sphere_outside_of_an_outer_cone():
    outer = G.cone_row((0, 0, 0), EX, 0.0, 0.1, 0.2, 0.2, side=-1)
    a = math.atan2(0.1, 0.2)
    c = np.array([0.1, 0.15 + 0.01 / math.cos(a), 0.0])
    out = ev([G.sphere_row(c, 0.012), outer])
    assert out[0] == pytest.approx(0.002, abs=1e-12)
    np.testing.assert_allclose(out[4:7], [-math.sin(a), math.cos(a), 0.0], atol=1e-12)


# ---- sphere / edge circle, torus (003 pair 2) ------------------------------------------------------

def test_sphere_on_entry_edge_in_wedge():
    m_cone, m_fl = np.array([math.sin(ALPHA), -math.cos(ALPHA)]), np.array([1.0, 0.0])
    edge = G.circle_row((0, 0, 0), EX, R0, 0.01, wedge=(m_cone, m_fl))
    bis = (m_cone + m_fl) / np.linalg.norm(m_cone + m_fl)
    u = np.array([0.0, 0.0, -1.0])
    c = bis[0] * 0.055 * EX + (R0 + bis[1] * 0.055) * u
    out = ev([G.sphere_row(c, 0.05), edge])
    assert out[0] == pytest.approx(0.05 + 0.01 - 0.055, abs=1e-13)
    np.testing.assert_allclose(out[4:7], bis[0] * EX + bis[1] * u, atol=1e-12)
    np.testing.assert_allclose(out[1:4], R0 * u + 0.01 * out[4:7], atol=1e-12)
    # outside the wedge (the cone's own region) the edge reports nothing
    c2 = np.array([0.0, R0, 0.0]) + 0.055 * np.array([0.0, -1.0, 0.0])
    assert ev([G.sphere_row(c2, 0.05), edge])[0] == K.NO


def test_sphere_centre_on_the_circle_uses_wedge_bisector():
    edge = G.circle_row((0, 0, 0), EX, 0.2, 0.0, wedge=((0.0, -1.0), (1.0, 0.0)))
    out = ev([G.sphere_row((0, 0.2, 0), 0.01), edge])
    assert out[0] == pytest.approx(0.01)
    np.testing.assert_allclose(out[4:7], [math.sqrt(0.5), -math.sqrt(0.5), 0.0], atol=1e-12)


def test_sphere_torus_without_wedge():
    torus = G.circle_row((0.1, 0, 0), (0, 0, 1), 0.3, 0.02)
    c = np.array([0.1, 0.0, 0.0]) + np.array([0.3 * math.cos(1.1), 0.3 * math.sin(1.1), 0.04])
    out = ev([G.sphere_row(c, 0.025), torus])
    assert out[0] == pytest.approx(0.025 + 0.02 - 0.04, abs=1e-13)
    np.testing.assert_allclose(out[4:7], [0, 0, 1], atol=1e-12)


# ---- sphere / planes (003 pair 4) -----------------------------------------------------------------

def test_sphere_on_socket_bottom_and_off_the_annulus():
    bottom = G.annulus_row((-0.55, 0, 0), EX, 0.0, RS)
    out = ev([G.sphere_row((-0.503, 0.01, -0.02), 0.05), bottom])
    assert out[0] == pytest.approx(0.003, abs=1e-13)
    np.testing.assert_allclose(out[1:4], [-0.55, 0.01, -0.02], atol=1e-13)
    np.testing.assert_allclose(out[4:7], EX)
    assert ev([G.sphere_row((-0.503, 0.08, 0.0), 0.05), bottom])[0] == K.NO
    assert ev([G.sphere_row((-0.50, 0.0, 0.0), 0.05), bottom])[0] == K.NO     # exact tangency


def test_sphere_on_trapezoid_face_interior_edge_and_behind():
    v = [(0, -0.01, 0), (0, 0.01, 0), (0.04, 0.02, 0), (0.04, -0.02, 0)]
    face = G.face_row(v, (0, 0, 1))
    out = ev([G.sphere_row((0.02, 0.005, 0.003), 0.004), face])
    assert out[0] == pytest.approx(0.001, abs=1e-13)
    np.testing.assert_allclose(out[4:7], [0, 0, 1])
    # beside the narrow edge: distance to the edge line x = 0
    out = ev([G.sphere_row((-0.002, 0.0, 0.002), 0.004), face])
    assert out[0] == pytest.approx(0.004 - math.hypot(0.002, 0.002), abs=1e-13)
    np.testing.assert_allclose(out[1:4], [0, 0, 0], atol=1e-13)
    # just apart, and behind-and-beside
    assert ev([G.sphere_row((0.02, 0.0, 0.004 + 1e-9), 0.004), face])[0] == K.NO
    assert ev([G.sphere_row((-0.003, 0.0, -0.001), 0.004), face])[0] == K.NO


def test_face_rejects_non_planar_vertices():
    with pytest.raises(ValueError):
        G.face_row([(0, 0, 0), (1, 0, 0), (1, 1, 0.1), (0, 1, 0)], (0, 0, 1))


def test_sphere_segment_capsule():
    seg = G.segment_row((0, 0, 0), (0.1, 0, 0), 0.01)
    out = ev([G.sphere_row((0.05, 0.0, 0.025), 0.02), seg])
    assert out[0] == pytest.approx(0.005, abs=1e-13)
    np.testing.assert_allclose(out[4:7], [0, 0, 1])
    out = ev([G.sphere_row((0.12, 0.0, 0.0), 0.015), seg])                      # rounded end
    assert out[0] == pytest.approx(0.005, abs=1e-13)


# ---- segment / edge circle (003 pair 5) ---------------------------------------------------------

@pytest.mark.parametrize("beta", [0.3, 0.9, -0.6])
def test_segment_crossing_edge_circle_outside(beta):
    edge = G.circle_row((0, 0, 0), EX, R0, 0.0)
    dl = R0 + 0.006
    L = np.array([math.cos(beta), math.sin(beta), 0.0])
    p0 = np.array([0.0, dl, 0.0]) - 0.05 * L
    out = ev([G.segment_row(p0, p0 + 0.1 * L), edge])
    assert out[0] == pytest.approx(0.006 * abs(math.cos(beta)), abs=1e-13)
    n = out[4:7]
    assert abs(n @ L) < 1e-12 and n[1] < 0                  # perpendicular to the segment, toward the axis
    np.testing.assert_allclose(out[1:4], [0, R0, 0], atol=1e-13)


def test_segment_inside_circle_or_not_reaching_its_plane():
    edge = G.circle_row((0, 0, 0), EX, R0, 0.0)
    assert ev([G.segment_row((-0.05, 0.3, 0), (0.05, 0.35, 0)), edge])[0] == K.NO
    assert ev([G.segment_row((0.01, 0.5, 0), (0.05, 0.5, 0)), edge])[0] == K.NO
    assert ev([G.segment_row((0.0, 0.5, -0.1), (0.0, 0.5, 0.1)), edge])[0] == K.NO   # parallel to plane


# ---- ordered sets with dichotomy --------------------------------------------------------------------

@pytest.mark.parametrize("offset_dir", [0.0, 0.37, 2.2, math.pi])
def test_edge_circle_on_cone_offset(offset_dir):
    a, t, x, delta = 0.257, 0.005, -0.15, 0.03
    e = np.array([0.0, math.cos(offset_dir), math.sin(offset_dir)])
    ring = G.circle_row(x * EX + delta * e, EX, a, t, 5)
    out = ev([ring, cone()])
    expect = t - (cone_radius(x) - a - delta) * math.cos(ALPHA)
    assert out[0] == pytest.approx(expect, abs=1e-9)
    n = math.sin(ALPHA) * EX - math.cos(ALPHA) * e
    np.testing.assert_allclose(out[4:7], n, atol=1e-4)


def test_coaxial_circle_in_cone_all_members_equal():
    a, t, x = 0.25, 0.005, -0.2
    out = ev([G.circle_row(x * EX, EX, a, t, 4), cone()])
    assert out[0] == pytest.approx(t - (cone_radius(x) - a) * math.cos(ALPHA), abs=1e-12)
    p = out[1:4]
    assert math.hypot(p[1], p[2]) == pytest.approx(cone_radius(p[0]), abs=1e-12)


def test_circle_clear_of_cone_and_slab_test():
    out = ev([G.circle_row(-0.15 * EX, EX, 0.15, 0.005, 5), cone()])
    assert out[0] == K.NO


@pytest.mark.parametrize("psi", [0.0, 1.3, 4.0])
def test_roller_on_cone_generator(psi):
    # roller torus in the meridian plane at psi: deepest point exact (analytic circle-vs-line)
    R, tube, lever, px, prho = 0.022, 0.008, 0.35, 0.0, 0.10
    phi = math.radians(6.5)
    roller = G.roller_row(px, prho, psi, lever, 0.0, phi, R, tube, 5)
    shift = np.array([0.05, 0.0, 0.0])                       # housing gimbal at hard dock
    centre_x = 0.05 + px - lever * math.cos(phi)
    centre_r = prho + lever * math.sin(phi)
    d = (cone_radius(centre_x) - centre_r) * math.cos(ALPHA)
    for ext, hit in ((1.0, d < R + tube), (0.0, False)):
        w = world(roller, cone(), state=(0.0, ext), shift=shift)
        w[1] = world(cone())[0]                                # the cone stays on the passive frame
        out = np.array(K.pair_eval(w, K.CIRCLE, 0, K.CONE, 1))
        assert (out[0] > 0) == hit
    # push the roller 3 mm into the cone along its normal
    sh = shift + (d - R - tube + 0.003) * np.array([0.0, math.cos(psi), math.sin(psi)]) / math.cos(ALPHA)
    w = world(roller, state=(0.0, 1.0), shift=sh)
    w = np.vstack([w, world(cone())])
    out = np.array(K.pair_eval(w, K.CIRCLE, 0, K.CONE, 1))
    assert out[0] == pytest.approx(0.003, abs=1e-9)
    u = np.array([0.0, math.cos(psi), math.sin(psi)])
    np.testing.assert_allclose(out[4:7], math.sin(ALPHA) * EX - math.cos(ALPHA) * u, atol=1e-6)


def test_limiter_generators_on_entry_edge():
    # limiter frustum, shifted sideways so its generators cross the entry plane outside the edge
    rb, rf, Ll = 0.24, 0.12, 0.12
    lim = G.cone_row((0.06, 0, 0), -EX, 0.0, rb, Ll, rf, side=-1, nbis=5)
    edge = G.circle_row((0, 0, 0), EX, R0, 0.0)
    cross_r = rb + (rf - rb) * 0.06 / Ll                     # limiter radius at the entry plane
    shift = np.array([0.0, R0 - cross_r + 0.004, 0.0])
    w = np.vstack([world(lim, shift=shift), world(edge)])
    out = np.array(K.pair_eval(w, K.CONE, 0, K.CIRCLE, 1))
    beta = math.atan2(rb - rf, Ll)                           # generator slope to the axis
    assert out[0] == pytest.approx(0.004 * math.cos(beta), rel=1e-6)
    np.testing.assert_allclose(out[1:4], [0, R0, 0], atol=1e-6)
    w = np.vstack([world(lim, shift=shift - [0, 0.01, 0]), world(edge)])
    assert K.pair_eval(w, K.CONE, 0, K.CIRCLE, 1)[0] == K.NO


def test_ring_on_ring_tilted_and_parallel():
    ann = G.annulus_row((0, 0, 0), EX, 0.55, 0.62)
    ring = G.circle_row((0, 0, 0), EX, 0.585)
    g, h = math.radians(0.5), 0.002
    rot = rot_axis((0, 0, 1), g)
    w = np.vstack([world(ring, rot=rot, shift=(h, 0, 0)), world(ann)])
    out = np.array(K.pair_eval(w, K.CIRCLE, 0, K.ANNULUS, 1))
    assert out[0] == pytest.approx(0.585 * math.sin(g) - h, abs=1e-12)
    np.testing.assert_allclose(out[4:7], EX)
    # parallel axes: every rim point is deepest, the reference one is reported
    w = np.vstack([world(ring, shift=(-0.001, 0, 0)), world(ann)])
    out = np.array(K.pair_eval(w, K.CIRCLE, 0, K.ANNULUS, 1))
    assert out[0] == pytest.approx(0.001)
    assert math.hypot(out[2], out[3]) == pytest.approx(0.585)


def test_unsupported_pair_reports_nothing_and_builder_rejects_it():
    w = world(G.annulus_row((0, 0, 0), EX, 0, 1), G.sphere_row((0, 0, 0), 1.0))
    assert K.pair_eval(w, K.ANNULUS, 0, K.SPHERE, 1)[0] == K.NO
    b = G.GeometryBuilder()
    b.add("a", "passive_craft", G.annulus_row((0, 0, 0), EX, 0, 1))
    b.add("s", "probe_head", G.sphere_row((0, 0, 0), 0.1))
    with pytest.raises(ValueError, match="not supported"):
        b.pair("x", "a", ["s"], dict(k=1, c=0, mu=0, slip_speed=1e-3, depth_max=1))


def test_rigid_motion_invariance_of_primitive_results():
    rot = rot_axis((0.3, -0.5, 0.8), 0.9)
    shift = np.array([1.0, -2.0, 0.5])
    rows = [G.sphere_row((-0.2, 0.25, 0.1), 0.05), cone()]
    base = ev(rows)
    moved = ev(rows, rot=rot, shift=shift)
    assert moved[0] == pytest.approx(base[0], abs=1e-12)
    np.testing.assert_allclose(moved[1:4], rot @ base[1:4] + shift, atol=1e-12)
    np.testing.assert_allclose(moved[4:7], rot @ base[4:7], atol=1e-12)


def test_transform_rows_map_every_kind_as_rotation_then_origin():
    """`transform_rows` over the probe-cone rows at random body poses equals the plain per-point map R p + o (sums left
    to right, as float64 in Python), bit for bit, for every row kind; constant columns are copied."""
    from solver.contact import load
    geo = load()
    rng = np.random.default_rng(4)
    nb = int(geo.pint[:, 1].max()) + 1

    def put(R, o, v, point):
        return [R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2] + (o[i] if point else 0.0) for i in range(3)]

    for _ in range(20):
        pos = rng.normal(size=(nb, 3))
        rot = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(nb)])
        state = rng.uniform(0, 1, size=6)
        K.transform_rows(geo.prim, geo.pint, pos, rot, state, geo.work)
        for j in range(geo.prim.shape[0]):
            kind, b = geo.pint[j]
            R, o, p, w = rot[b].tolist(), pos[b].tolist(), geo.prim[j].tolist(), geo.work[j].tolist()
            if kind == K.FACE:
                want = sum((put(R, o, p[k:k + 3], True) for k in range(0, 12, 3)), []) + put(R, o, p[12:15], False)
                assert w[:15] == want
            elif kind in (K.CIRCLE, K.CONE, K.ANNULUS):
                a, e = put(R, o, p[3:6], False), put(R, o, p[6:9], False)
                assert w[:9] == put(R, o, p[0:3], True) + a + e and w[9:17] == p[9:17]
                k = 17 if kind == K.CIRCLE else 21
                if kind != K.ANNULUS:
                    assert w[k:k + 3] == [a[1] * e[2] - a[2] * e[1], a[2] * e[0] - a[0] * e[2], a[0] * e[1] - a[1] * e[0]]
            elif kind == K.SPHERE:
                assert w[:4] == put(R, o, p[0:3], True) + [p[3]]
            elif kind == K.LATCH_TIP:
                rho = p[2] + state[int(p[7])] * (p[3] - p[2])
                assert w[:4] == put(R, o, [p[0], rho * p[5], rho * p[6]], True) + [p[4]]
