"""Contact pairs of the peripheral (androgynous, IDSS-class) unit: guide petals, rings and latch strikers.

Seed 003 pairs 5 and 6 and the ring faces, over the world rows of `kernels` (same row layout, same result
tuple (depth, px, py, pz, nx, ny, nz): n points from the passive primitive into the active one, the point lies
on the passive surface, depth == NO means no contact). Not wired into the probe-cone pair set: the peripheral
mechanism type will dispatch to `peripheral_pair_eval` (see docs/peripheral.md).

- `segment_face`: active segment (radius r) against a one-sided trapezoid (guide-petal side face, latch face):
  the segment as a swept sphere, each sphere as in `kernels.sphere_face`; the deepest one (003 pair 6).
- `segment_torus`: active segment (radius r) against an edge circle / torus (ring edge): the swept sphere as in
  `kernels.sphere_circle`. Complements 003 pair 5 (`kernels.segment_circle_pts`), which measures a segment that
  already crosses the edge's plane outside the circle.
- `annulus_annulus`: active ring face against the passive ring face: the deepest point of the active annulus
  whose projection lies on the passive annulus (`kernels.sphere_annulus` for every point of the face); closed
  forms on the outer rims, bisection to the overlap's corners.
- `segment_segment`: capsule against capsule (latch hook edge against a striker pin).
- `segment_trapezoid`: 003 pair 6 as the seed writes it, for two thin petals crossing: an active petal edge
  (segment, radius r) against a passive petal plate (trapezoid row v0 v1 root, v2 v3 tip, n, edge radius [15]):
  capsule against the thin plate (its faces, sides and tip) while outside; once the segment crosses the plane
  inside near an edge, by the common perpendicular of the two edges, signed, so the depth grows on as it passes.
"""
from __future__ import annotations

import math

from numba import njit

from .kernels import ANNULUS, CIRCLE, FACE, NO, NONE, SEGMENT, circle_wedge_contact

SEG_SAMPLES = 32          # samples along a segment before the golden-section refinement (segment / torus)
RING_SAMPLES = 96         # samples along each outer rim of the ring faces' overlap (annulus / annulus)
GOLDEN_STEPS = 64         # golden-section steps: the bracket shrinks by 0.618^64 ~ 4e-14
EDGE_BISECT = 46          # bisection steps to a corner of the overlap: 2^-46 of a sample gap (~1e-15 m)
CROSS_MAX = 0.02          # m: a petal edge counts as crossing a plate's edge this far in (segment / trapezoid)
_GR = 0.5 * (math.sqrt(5.0) - 1.0)


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def closest_segment_segment(p1x, p1y, p1z, q1x, q1y, q1z, p2x, p2y, p2z, q2x, q2y, q2z):
    """Parameters s, t in [0, 1] of the closest points of segments p1-q1 and p2-q2 (Ericson, RTCD 5.1.9)."""
    d1x, d1y, d1z = q1x - p1x, q1y - p1y, q1z - p1z
    d2x, d2y, d2z = q2x - p2x, q2y - p2y, q2z - p2z
    rx, ry, rz = p1x - p2x, p1y - p2y, p1z - p2z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    eps = 1e-30
    if a <= eps and e <= eps:
        return 0.0, 0.0
    if a <= eps:
        return 0.0, min(1.0, max(0.0, f / e))
    c = d1x * rx + d1y * ry + d1z * rz
    if e <= eps:
        return min(1.0, max(0.0, -c / a)), 0.0
    b = d1x * d2x + d1y * d2y + d1z * d2z
    den = a * e - b * b
    if den > 1e-14 * a * e:
        return _clamped_pair(min(1.0, max(0.0, (b * f - c * e) / den)), a, b, c, e, f)
    # (nearly) parallel: the closest pair lies at an end of the overlap; try both ends of segment 1 (with s = 0
    # alone, segments that meet at one end and part by L sin(angle) at the other gave that gap, not 0)
    s0, t0 = _clamped_pair(0.0, a, b, c, e, f)
    s1, t1 = _clamped_pair(1.0, a, b, c, e, f)
    g0 = _gap2(s0, t0, rx, ry, rz, d1x, d1y, d1z, d2x, d2y, d2z)
    g1 = _gap2(s1, t1, rx, ry, rz, d1x, d1y, d1z, d2x, d2y, d2z)
    return (s0, t0) if g0 <= g1 else (s1, t1)


@njit(cache=True)
def _clamped_pair(s, a, b, c, e, f):
    """Ericson's step: t for s on segment 2, clamped to [0, 1], then s again for a clamped t."""
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(1.0, max(0.0, -c / a))
    elif t > 1.0:
        t = 1.0
        s = min(1.0, max(0.0, (b - c) / a))
    return s, t


@njit(cache=True)
def _gap2(s, t, rx, ry, rz, d1x, d1y, d1z, d2x, d2y, d2z):
    """Squared distance of the points at s on segment 1 and t on segment 2 (r = p1 - p2)."""
    return ((rx + s * d1x - t * d2x) ** 2 + (ry + s * d1y - t * d2y) ** 2 + (rz + s * d1z - t * d2z) ** 2)


@njit(cache=True)
def _inside_face(w, j, qx, qy, qz):
    """True when point q (in the face plane) lies inside convex quad row j (counter-clockwise about n)."""
    nx, ny, nz = w[j, 12], w[j, 13], w[j, 14]
    for k in range(4):
        a = 3 * k
        b = 3 * ((k + 1) % 4)
        ex, ey, ez = w[j, b] - w[j, a], w[j, b + 1] - w[j, a + 1], w[j, b + 2] - w[j, a + 2]
        vx, vy, vz = qx - w[j, a], qy - w[j, a + 1], qz - w[j, a + 2]
        if (ey * vz - ez * vy) * nx + (ez * vx - ex * vz) * ny + (ex * vy - ey * vx) * nz < 0.0:
            return False
    return True


# ------------------------------------------------------------------------------------------------
# segment / trapezoid  [003 pair 6]
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def segment_face(w, ia, ib):
    """Active segment row ia (radius r) against one-sided convex quad row ib (guide-petal face, latch face).

    The deepest of the spheres swept along the segment: behind the plane and over the face, the plane depth;
    on the free side (in the plane beside the face too), the distance to the face: its interior or its border,
    which covers 003's edge-edge case; behind the plane and beside the face, nothing.
    """
    x0, y0, z0, x1, y1, z1, r = w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 3], w[ia, 4], w[ia, 5], w[ia, 6]
    nx, ny, nz = w[ib, 12], w[ib, 13], w[ib, 14]
    lx, ly, lz = x1 - x0, y1 - y0, z1 - z0
    d0 = (x0 - w[ib, 0]) * nx + (y0 - w[ib, 1]) * ny + (z0 - w[ib, 2]) * nz
    dd = lx * nx + ly * ny + lz * nz                  # d(t) = d0 + t dd
    best = 1e300                                      # smallest characteristic distance (depth = r - best)
    qx = qy = qz = 0.0
    mx, my, mz = nx, ny, nz
    # behind the plane: d(t) < 0, clipped to the prism over the quad
    lo, hi = 0.0, 1.0
    if dd > 0.0:
        hi = min(hi, -d0 / dd)
    elif dd < 0.0:
        lo = max(lo, -d0 / dd)
    elif d0 >= 0.0:
        hi = -1.0
    for k in range(4):
        if lo > hi + 1e-12:
            break
        a = 3 * k
        b = 3 * ((k + 1) % 4)
        ex, ey, ez = w[ib, b] - w[ib, a], w[ib, b + 1] - w[ib, a + 1], w[ib, b + 2] - w[ib, a + 2]
        gx, gy, gz = ny * ez - nz * ey, nz * ex - nx * ez, nx * ey - ny * ex       # inward side normal
        g0 = (x0 - w[ib, a]) * gx + (y0 - w[ib, a + 1]) * gy + (z0 - w[ib, a + 2]) * gz
        g1 = lx * gx + ly * gy + lz * gz              # g(t) = g0 + t g1 >= 0 inside
        if g1 > 0.0:
            lo = max(lo, -g0 / g1)
        elif g1 < 0.0:
            hi = min(hi, -g0 / g1)
        elif g0 < 0.0:
            hi = -1.0
    if lo <= hi + 1e-12:                              # (closed: a segment meeting the prism at one point, e.g. an
        t = lo if d0 + lo * dd <= d0 + hi * dd else hi    # end on its corner edge, within rounding of lo > hi)
        t = min(1.0, max(0.0, t))
        d = d0 + t * dd
        best = d
        qx, qy, qz = x0 + t * lx - d * nx, y0 + t * ly - d * ny, z0 + t * lz - d * nz
    # free side: d(t) >= 0, distance to the closed quad (an end point over the face, or a border segment)
    lo, hi = 0.0, 1.0
    if dd > 0.0:
        lo = max(lo, -d0 / dd)
    elif dd < 0.0:
        hi = min(hi, -d0 / dd)
    elif d0 < 0.0:
        hi = -1.0
    if lo <= hi:
        ax, ay, az = x0 + lo * lx, y0 + lo * ly, z0 + lo * lz
        bx, by, bz = x0 + hi * lx, y0 + hi * ly, z0 + hi * lz
        for e in range(2):
            px, py, pz = (ax, ay, az) if e == 0 else (bx, by, bz)
            d = max(0.0, d0 + (lo if e == 0 else hi) * dd)
            fx, fy, fz = px - d * nx, py - d * ny, pz - d * nz
            if d < best and _inside_face(w, ib, fx, fy, fz):
                best, qx, qy, qz, mx, my, mz = d, fx, fy, fz, nx, ny, nz
        for k in range(4):
            a = 3 * k
            b = 3 * ((k + 1) % 4)
            s, u = closest_segment_segment(ax, ay, az, bx, by, bz, w[ib, a], w[ib, a + 1], w[ib, a + 2],
                                           w[ib, b], w[ib, b + 1], w[ib, b + 2])
            cx, cy, cz = ax + s * (bx - ax), ay + s * (by - ay), az + s * (bz - az)
            ex = w[ib, a] + u * (w[ib, b] - w[ib, a])
            ey = w[ib, a + 1] + u * (w[ib, b + 1] - w[ib, a + 1])
            ez = w[ib, a + 2] + u * (w[ib, b + 2] - w[ib, a + 2])
            vx, vy, vz = cx - ex, cy - ey, cz - ez
            dist = math.sqrt(vx * vx + vy * vy + vz * vz)
            if dist < best:
                best, qx, qy, qz = dist, ex, ey, ez
                if dist > 1e-15:
                    mx, my, mz = vx / dist, vy / dist, vz / dist
                else:
                    mx, my, mz = nx, ny, nz
    depth = r - best
    if depth <= 0.0:
        return NONE
    return depth, qx, qy, qz, mx, my, mz


# ------------------------------------------------------------------------------------------------
# segment / edge circle or torus  [003 pair 2 swept along a segment; pair 5 for the crossing case]
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def _circle_dist(w, j, px, py, pz):
    """Distance of a point from circle row j."""
    rx, ry, rz = px - w[j, 0], py - w[j, 1], pz - w[j, 2]
    x = rx * w[j, 3] + ry * w[j, 4] + rz * w[j, 5]
    qx, qy, qz = rx - x * w[j, 3], ry - x * w[j, 4], rz - x * w[j, 5]
    br = math.sqrt(qx * qx + qy * qy + qz * qz) - w[j, 9]
    return math.sqrt(x * x + br * br)


@njit(cache=True)
def _seg_circle_at(w, ia, ib, t):
    return _circle_dist(w, ib, w[ia, 0] + t * (w[ia, 3] - w[ia, 0]), w[ia, 1] + t * (w[ia, 4] - w[ia, 1]),
                        w[ia, 2] + t * (w[ia, 5] - w[ia, 2]))


@njit(cache=True)
def _seg_circle_slope(w, ia, ib, t):
    """Derivative in t of half the squared distance of the segment point P(t) from circle row ib, and its
    derivative (for the Newton polish after the golden-section search)."""
    lx, ly, lz = w[ia, 3] - w[ia, 0], w[ia, 4] - w[ia, 1], w[ia, 5] - w[ia, 2]
    rx, ry, rz = w[ia, 0] + t * lx - w[ib, 0], w[ia, 1] + t * ly - w[ib, 1], w[ia, 2] + t * lz - w[ib, 2]
    ax, ay, az = w[ib, 3], w[ib, 4], w[ib, 5]
    x = rx * ax + ry * ay + rz * az
    la = lx * ax + ly * ay + lz * az
    qx, qy, qz = rx - x * ax, ry - x * ay, rz - x * az
    rho = math.sqrt(qx * qx + qy * qy + qz * qz)
    if rho < 1e-9:
        return 0.0, -1.0
    ql = qx * lx + qy * ly + qz * lz
    lp2 = lx * lx + ly * ly + lz * lz - la * la
    R = w[ib, 9]
    return rx * lx + ry * ly + rz * lz - R * ql / rho, lx * lx + ly * ly + lz * lz - R * (lp2 * rho * rho - ql * ql) / rho ** 3


@njit(cache=True)
def segment_torus(w, ia, ib):
    """Active segment row ia (radius r) against edge circle / torus row ib, limited to the circle's wedge.

    The distance from the segment to the circle has at most two interior local minima along the segment:
    SEG_SAMPLES samples find the discrete ones, golden section and a Newton step on the slope refine each. When
    the nearest point's direction from the circle lies outside the wedge, nothing is reported (as
    `kernels.sphere_circle`): the adjoining faces' pairs own that region.
    """
    R, tube, r = w[ib, 9], w[ib, 10], w[ia, 6]
    # quick test: the segment's bounding sphere against the circle's
    hx, hy, hz = 0.5 * (w[ia, 3] - w[ia, 0]), 0.5 * (w[ia, 4] - w[ia, 1]), 0.5 * (w[ia, 5] - w[ia, 2])
    cx, cy, cz = w[ia, 0] + hx - w[ib, 0], w[ia, 1] + hy - w[ib, 1], w[ia, 2] + hz - w[ib, 2]
    reach = math.sqrt(hx * hx + hy * hy + hz * hz) + R + tube + r
    if cx * cx + cy * cy + cz * cz > reach * reach:
        return NONE
    n = SEG_SAMPLES
    fprev2 = 0.0
    fprev = _seg_circle_at(w, ia, ib, 0.0)
    tbest, fbest = 0.0, fprev
    for i in range(1, n + 2):
        f = _seg_circle_at(w, ia, ib, i / n) if i <= n else 1e300
        # sample i - 1 is a discrete local minimum (end points count against the outside)
        left = fprev2 if i >= 2 else 1e300
        if fprev <= left and fprev <= f:
            a, b = max(0.0, (i - 2) / n), min(1.0, i / n)
            lo, hi = a, b
            c, d = b - _GR * (b - a), a + _GR * (b - a)
            fc, fd = _seg_circle_at(w, ia, ib, c), _seg_circle_at(w, ia, ib, d)
            for _ in range(GOLDEN_STEPS):
                if fc <= fd:
                    b, d, fd = d, c, fc
                    c = b - _GR * (b - a)
                    fc = _seg_circle_at(w, ia, ib, c)
                else:
                    a, c, fc = c, d, fd
                    d = a + _GR * (b - a)
                    fd = _seg_circle_at(w, ia, ib, d)
            tg, fg = (c, fc) if fc <= fd else (d, fd)
            if fprev < fg:
                tg, fg = (i - 1) / n, fprev
            t = tg
            for _ in range(4):                        # Newton on the slope: the distance's values are flat to
                g, g1 = _seg_circle_slope(w, ia, ib, t)   # rounding within ~1e-8 of the minimum, its slope is not
                if g1 <= 0.0:
                    break
                t = min(hi, max(lo, t - g / g1))
            ft = _seg_circle_at(w, ia, ib, t)
            if ft <= fg + 1e-15 * (1.0 + fg):
                tg, fg = t, ft
            if fg < fbest:
                tbest, fbest = tg, fg
        fprev2, fprev = fprev, f
    depth = r + tube - fbest
    if depth <= 0.0:
        return NONE
    px = w[ia, 0] + tbest * (w[ia, 3] - w[ia, 0])
    py = w[ia, 1] + tbest * (w[ia, 4] - w[ia, 1])
    pz = w[ia, 2] + tbest * (w[ia, 5] - w[ia, 2])
    rx, ry, rz = px - w[ib, 0], py - w[ib, 1], pz - w[ib, 2]
    x = rx * w[ib, 3] + ry * w[ib, 4] + rz * w[ib, 5]
    qx, qy, qz = rx - x * w[ib, 3], ry - x * w[ib, 4], rz - x * w[ib, 5]
    rho = math.sqrt(qx * qx + qy * qy + qz * qz)
    if rho > 1e-12:
        ux, uy, uz = qx / rho, qy / rho, qz / rho
    else:                                             # on the axis: the row's reference direction
        ux, uy, uz = w[ib, 6], w[ib, 7], w[ib, 8]
    return circle_wedge_contact(w, ib, x, rho - R, fbest, ux, uy, uz, depth)


# ------------------------------------------------------------------------------------------------
# annulus / annulus  (ring face against ring face)
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def _ring_candidate(w, ia, ib, curve, th):
    """Point of the active face on an outer boundary curve of the overlap at angle th, its depth behind the
    passive plane and whether it lies on both annuli. Curve 0: the active outer rim; curve 2: the points of the
    active plane over the passive outer rim (along the passive normal)."""
    c, s = math.cos(th), math.sin(th)
    nx, ny, nz = w[ib, 3], w[ib, 4], w[ib, 5]
    ax, ay, az = w[ia, 3], w[ia, 4], w[ia, 5]
    tol = 1e-13                                       # the curves' own radius counts as on the ring
    if curve == 0:
        rho = w[ia, 10]
        e2x, e2y, e2z = ay * w[ia, 8] - az * w[ia, 7], az * w[ia, 6] - ax * w[ia, 8], ax * w[ia, 7] - ay * w[ia, 6]
        px = w[ia, 0] + rho * (c * w[ia, 6] + s * e2x)
        py = w[ia, 1] + rho * (c * w[ia, 7] + s * e2y)
        pz = w[ia, 2] + rho * (c * w[ia, 8] + s * e2z)
    else:
        rho = w[ib, 10]
        e2x, e2y, e2z = ny * w[ib, 8] - nz * w[ib, 7], nz * w[ib, 6] - nx * w[ib, 8], nx * w[ib, 7] - ny * w[ib, 6]
        bx = w[ib, 0] + rho * (c * w[ib, 6] + s * e2x)
        by = w[ib, 1] + rho * (c * w[ib, 7] + s * e2y)
        bz = w[ib, 2] + rho * (c * w[ib, 8] + s * e2z)
        den = nx * ax + ny * ay + nz * az
        if abs(den) < 1e-9:
            return 0.0, 0.0, 0.0, NO, False
        u = ((w[ia, 0] - bx) * ax + (w[ia, 1] - by) * ay + (w[ia, 2] - bz) * az) / den
        px, py, pz = bx + u * nx, by + u * ny, bz + u * nz
    rx, ry, rz = px - w[ib, 0], py - w[ib, 1], pz - w[ib, 2]
    x = rx * nx + ry * ny + rz * nz
    qx, qy, qz = rx - x * nx, ry - x * ny, rz - x * nz
    rb = math.sqrt(qx * qx + qy * qy + qz * qz)
    rx, ry, rz = px - w[ia, 0], py - w[ia, 1], pz - w[ia, 2]
    h = rx * ax + ry * ay + rz * az
    qx, qy, qz = rx - h * ax, ry - h * ay, rz - h * az
    ra = math.sqrt(qx * qx + qy * qy + qz * qz)
    ok = (w[ib, 9] - tol <= rb <= w[ib, 10] + tol) and (w[ia, 9] - tol <= ra <= w[ia, 10] + tol)
    return px, py, pz, -x, ok


@njit(cache=True)
def annulus_annulus(w, ia, ib):
    """Active ring face (annulus row ia) against the passive ring face (annulus row ib, facing the active one).

    The depth of a face point is its distance behind the passive plane, counted where its projection lies on
    the passive annulus: linear over the overlap F of the two annuli, so its maximum is on F's boundary. Along
    either outer rim (the active one, or the passive one seen on the active plane) the depth is a sinusoid with
    one maximum, in closed form; the inner rims bound holes, where a maximum cannot lie except at a corner on an
    outer rim. So: the two closed-form maxima if they lie on F, and F's corners on the outer rims (RING_SAMPLES
    samples each, bisection where the samples enter or leave F). Parallel faces: a point of F is reported.
    """
    nx, ny, nz = w[ib, 3], w[ib, 4], w[ib, 5]
    ax, ay, az = w[ia, 3], w[ia, 4], w[ia, 5]
    e2x, e2y, e2z = ay * w[ia, 8] - az * w[ia, 7], az * w[ia, 6] - ax * w[ia, 8], ax * w[ia, 7] - ay * w[ia, 6]
    h0 = -((w[ia, 0] - w[ib, 0]) * nx + (w[ia, 1] - w[ib, 1]) * ny + (w[ia, 2] - w[ib, 2]) * nz)
    alpha = -(w[ia, 6] * nx + w[ia, 7] * ny + w[ia, 8] * nz)
    beta = -(e2x * nx + e2y * ny + e2z * nz)
    slope = math.sqrt(alpha * alpha + beta * beta)
    if h0 + w[ia, 10] * slope <= 0.0:                 # the whole face is clear of the passive plane
        return NONE
    thd = math.atan2(beta, alpha) if slope > 1e-14 else 0.0
    px, py, pz, f, ok = _ring_candidate(w, ia, ib, 0, thd)
    if not ok:
        f = NO
        # the passive outer rim on the active plane: depth = c0 + c1 cos(phi) + c2 sin(phi)
        qe2x = ny * w[ib, 8] - nz * w[ib, 7]
        qe2y = nz * w[ib, 6] - nx * w[ib, 8]
        qe2z = nx * w[ib, 7] - ny * w[ib, 6]
        c1 = w[ib, 6] * ax + w[ib, 7] * ay + w[ib, 8] * az
        c2 = qe2x * ax + qe2y * ay + qe2z * az
        if abs(nx * ax + ny * ay + nz * az) > 1e-9:
            den = nx * ax + ny * ay + nz * az
            phd = math.atan2(c2 / den, c1 / den) if c1 * c1 + c2 * c2 > 1e-28 else 0.0
            qx, qy, qz, fk, okk = _ring_candidate(w, ia, ib, 2, phd)
            if okk and fk > f:
                px, py, pz, f = qx, qy, qz, fk
        m = RING_SAMPLES
        dth = 2.0 * math.pi / m
        for curve in (0, 2):
            okc = _ring_candidate(w, ia, ib, curve, 0.0)[4]
            for i in range(m):
                th = i * dth
                okr = _ring_candidate(w, ia, ib, curve, th + dth)[4]
                if okc != okr:                        # a corner of F between this sample and the next
                    a, b = th, th + dth
                    for _ in range(EDGE_BISECT):
                        mid = 0.5 * (a + b)
                        if _ring_candidate(w, ia, ib, curve, mid)[4] == okc:
                            a = mid
                        else:
                            b = mid
                    qx, qy, qz, fk, okk = _ring_candidate(w, ia, ib, curve, a if okc else b)
                    if okk and fk > f:
                        px, py, pz, f = qx, qy, qz, fk
                elif okc and slope <= 1e-14 and f == NO:   # parallel faces: any point of F
                    px, py, pz, f, _ = _ring_candidate(w, ia, ib, curve, th)
                okc = okr
    if f <= 0.0:
        return NONE
    return f, px + f * nx, py + f * ny, pz + f * nz, nx, ny, nz


# ------------------------------------------------------------------------------------------------
# segment / segment  (latch hook edge against a striker pin)
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def segment_segment(w, ia, ib):
    """Active capsule row ia against passive capsule row ib (segments with radii)."""
    s, t = closest_segment_segment(w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 3], w[ia, 4], w[ia, 5],
                                   w[ib, 0], w[ib, 1], w[ib, 2], w[ib, 3], w[ib, 4], w[ib, 5])
    cx, cy, cz = (w[ia, 0] + s * (w[ia, 3] - w[ia, 0]), w[ia, 1] + s * (w[ia, 4] - w[ia, 1]),
                  w[ia, 2] + s * (w[ia, 5] - w[ia, 2]))
    ex, ey, ez = (w[ib, 0] + t * (w[ib, 3] - w[ib, 0]), w[ib, 1] + t * (w[ib, 4] - w[ib, 1]),
                  w[ib, 2] + t * (w[ib, 5] - w[ib, 2]))
    vx, vy, vz = cx - ex, cy - ey, cz - ez
    dist = math.sqrt(vx * vx + vy * vy + vz * vz)
    depth = w[ia, 6] + w[ib, 6] - dist
    if depth <= 0.0 or dist < 1e-15:
        return NONE
    nx, ny, nz = vx / dist, vy / dist, vz / dist
    rb = w[ib, 6]
    return depth, ex + rb * nx, ey + rb * ny, ez + rb * nz, nx, ny, nz


@njit(cache=True)
def _capsule_edge(w, ia, ib, k):
    """Closest points of active segment ia and edge k (vertex k to k + 1) of plate row ib: distance, C_A, C_P."""
    a = 3 * k
    b = 3 * ((k + 1) % 4)
    s, u = closest_segment_segment(w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 3], w[ia, 4], w[ia, 5],
                                   w[ib, a], w[ib, a + 1], w[ib, a + 2], w[ib, b], w[ib, b + 1], w[ib, b + 2])
    cx = w[ia, 0] + s * (w[ia, 3] - w[ia, 0])
    cy = w[ia, 1] + s * (w[ia, 4] - w[ia, 1])
    cz = w[ia, 2] + s * (w[ia, 5] - w[ia, 2])
    ex = w[ib, a] + u * (w[ib, b] - w[ib, a])
    ey = w[ib, a + 1] + u * (w[ib, b + 1] - w[ib, a + 1])
    ez = w[ib, a + 2] + u * (w[ib, b + 2] - w[ib, a + 2])
    return math.sqrt((cx - ex) ** 2 + (cy - ey) ** 2 + (cz - ez) ** 2), cx, cy, cz, ex, ey, ez


@njit(cache=True)
def segment_trapezoid(w, ia, ib):
    """Active segment row ia (radius r) against the passive petal plate, row ib: a FACE row whose vertices are
    v0, v1 on the root and v2, v3 on the tip (counter-clockwise about n), its edge radius in [15] (seed 003 pair 6).

    Outside the plate (the segment does not cross its plane above the root edge, or crosses it beyond a side or
    the tip): capsule against the plate, both faces (an end point over it) and its side and tip edges. Crossed
    (the crossing point Q inside, at most CROSS_MAX from the nearest edge, found as 003 does by the side test):
    the common perpendicular of the segment and that edge, m = L_A x L_P turned out of the plate, and depth r + r_P - (C_A - C_P).m, which goes on growing
    from the capsule's r + r_P as the segment passes the edge. Deeper crossings (a segment entering the plate far
    from its edges) are not the plate's edge contact: nothing.
    """
    x0, y0, z0, r = w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 6]
    lx, ly, lz = w[ia, 3] - x0, w[ia, 4] - y0, w[ia, 5] - z0
    nx, ny, nz = w[ib, 12], w[ib, 13], w[ib, 14]
    rp = w[ib, 15]
    dd = lx * nx + ly * ny + lz * nz
    crossed = False
    kbest = 1
    if abs(dd) > 1e-12 * math.sqrt(lx * lx + ly * ly + lz * lz):
        tq = -((x0 - w[ib, 0]) * nx + (y0 - w[ib, 1]) * ny + (z0 - w[ib, 2]) * nz) / dd
        if 0.0 <= tq <= 1.0:
            qx, qy, qz = x0 + tq * lx, y0 + tq * ly, z0 + tq * lz
            gbest = 1e300
            inside = True
            for k in range(4):                        # edge k from vertex k to vertex k + 1; k = 0 is the root
                a = 3 * k
                b = 3 * ((k + 1) % 4)
                ex, ey, ez = w[ib, b] - w[ib, a], w[ib, b + 1] - w[ib, a + 1], w[ib, b + 2] - w[ib, a + 2]
                gx, gy, gz = ny * ez - nz * ey, nz * ex - nx * ez, nx * ey - ny * ex
                g = ((qx - w[ib, a]) * gx + (qy - w[ib, a + 1]) * gy + (qz - w[ib, a + 2]) * gz) / math.sqrt(
                    gx * gx + gy * gy + gz * gz)
                if g < 0.0:
                    inside = False
                if k > 0 and g < gbest:
                    gbest, kbest = g, k
            if inside:
                if gbest > CROSS_MAX:
                    return NONE
                crossed = True
    if not crossed:                                   # capsule against the plate: a side or the tip, or over it
        best, px, py, pz, cx, cy, cz = 1e300, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        for k in range(1, 4):
            dist, ax, ay, az, ex, ey, ez = _capsule_edge(w, ia, ib, k)
            if dist < best:
                best, px, py, pz, cx, cy, cz, kbest = dist, ax, ay, az, ex, ey, ez, k
        for e in range(2):                            # an end point over the plate (the segment does not cross it)
            ax, ay, az = w[ia, 3 * e], w[ia, 3 * e + 1], w[ia, 3 * e + 2]
            h = (ax - w[ib, 0]) * nx + (ay - w[ib, 1]) * ny + (az - w[ib, 2]) * nz
            ex, ey, ez = ax - h * nx, ay - h * ny, az - h * nz
            if abs(h) < best and _inside_face(w, ib, ex, ey, ez):
                best, px, py, pz, cx, cy, cz = abs(h), ax, ay, az, ex, ey, ez
        depth = r + rp - best
        if depth <= 0.0:
            return NONE
        if best > 1e-15:
            mx, my, mz = (px - cx) / best, (py - cy) / best, (pz - cz) / best
        else:                                         # on the edge: its outward in-plane normal
            a = 3 * kbest
            b = 3 * ((kbest + 1) % 4)
            ex, ey, ez = w[ib, b] - w[ib, a], w[ib, b + 1] - w[ib, a + 1], w[ib, b + 2] - w[ib, a + 2]
            mx, my, mz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx
            mn = math.sqrt(mx * mx + my * my + mz * mz)
            mx, my, mz = mx / mn, my / mn, mz / mn
        return depth, cx + rp * mx, cy + rp * my, cz + rp * mz, mx, my, mz
    a = 3 * kbest
    b = 3 * ((kbest + 1) % 4)
    ex, ey, ez = w[ib, b] - w[ib, a], w[ib, b + 1] - w[ib, a + 1], w[ib, b + 2] - w[ib, a + 2]
    dist, ax, ay, az, cx, cy, cz = _capsule_edge(w, ia, ib, kbest)
    mx, my, mz = ly * ez - lz * ey, lz * ex - lx * ez, lx * ey - ly * ex
    mn = math.sqrt(mx * mx + my * my + mz * mz)
    if mn < 1e-15:
        return NONE
    mx, my, mz = mx / mn, my / mn, mz / mn
    ox, oy, oz = ey * nz - ez * ny, ez * nx - ex * nz, ex * ny - ey * nx    # outward in-plane normal of the edge
    if mx * ox + my * oy + mz * oz < 0.0:
        mx, my, mz = -mx, -my, -mz
    depth = r + rp - ((ax - cx) * mx + (ay - cy) * my + (az - cz) * mz)
    if depth <= 0.0:
        return NONE
    return depth, cx + rp * mx, cy + rp * my, cz + rp * mz, mx, my, mz


@njit(cache=True)
def peripheral_pair_eval(w, ka, ia, kb, ib):
    """Contact of active world row ia (kind ka) with passive row ib (kind kb) for the peripheral pairs."""
    if ka == SEGMENT:
        if kb == FACE:
            return segment_face(w, ia, ib)
        if kb == CIRCLE:
            return segment_torus(w, ia, ib)
        if kb == SEGMENT:
            return segment_segment(w, ia, ib)
    elif ka == ANNULUS and kb == ANNULUS:
        return annulus_annulus(w, ia, ib)
    return NONE


PERIPHERAL_SUPPORTED = {(SEGMENT, FACE), (SEGMENT, CIRCLE), (SEGMENT, SEGMENT), (ANNULUS, ANNULUS)}
