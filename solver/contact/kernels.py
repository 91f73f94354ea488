"""Contact primitives and pair algorithms of seed 003 (Yaskevich 2018), numba kernels over packed rows.

Every primitive is one row of ROW float64 values. Rows are transformed into the world frame once per
step (`transform_rows`); the pair functions then work on world rows and return the tuple
(depth, px, py, pz, nx, ny, nz): depth > 0 is penetration along the unit normal n, which points from
the passive primitive into the active one (the direction of the force on the active body); the point
lies on the passive surface. depth == NO means "no contact".
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# primitive kinds --------------------------------------------------------------------------------
SPHERE = 0     # c[0:3] r[3]                                    (point: r = 0)
SEGMENT = 1    # p0[0:3] p1[3:6] r[6]                           (cylinder of radius r around a segment)
CIRCLE = 2     # o[0:3] a[3:6] e1[6:9] R[9] tube[10] nbis[11] wedge m1[12:14] m2[14:16] has_wedge[16]
#                e2[17:20] (filled by transform_rows)           (edge circle; torus when tube > 0)
CONE = 3       # o a e1, x0[9] r0[10] x1[11] r1[12] side[13] nbis[14] gen_r[15] L[16] gx[17] gr[18]
#                mx[19] mr[20] e2[21:24]                         (frustum surface; cylinder if r0 == r1)
ANNULUS = 4    # o a e1, rho_min[9] rho_max[10]                 (plane normal to a, face toward +a)
FACE = 5       # v0[0:3] v1[3:6] v2[6:9] v3[9:12] n[12:15]      (convex quad, e.g. trapezoid; CCW about n)
LATCH_TIP = 6  # x[0] psi[1] rho_retracted[2] rho_extended[3] r[4] cos psi[5] sin psi[6] state slot[7]
#                                                      -> SPHERE (state[slot]; slot 0 unless the solver sets one per latch)
ROLLER = 7     # pivot_x[0] pivot_rho[1] psi[2] lever[3] phi_ret[4] phi_ext[5] R[6] tube[7] nbis[8]
#                cos psi[9] sin psi[10]                                     -> CIRCLE (state[1])
ROW = 24
NO = -1.0e30
TWO_PI = 2.0 * math.pi
NONE = (NO, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
MAX_MEMBERS = 1024                     # 2^(N+1) <= MAX_MEMBERS, i.e. at most N = 9 bisection steps
_COS = np.cos(np.arange(MAX_MEMBERS) * (2.0 * math.pi / MAX_MEMBERS))
_SIN = np.sin(np.arange(MAX_MEMBERS) * (2.0 * math.pi / MAX_MEMBERS))


@njit(cache=True, inline="always")
def effective_kind(kind):
    """Kind of the world row after state-dependent parts are instantiated."""
    if kind == LATCH_TIP:
        return SPHERE
    if kind == ROLLER:
        return CIRCLE
    return kind


# ------------------------------------------------------------------------------------------------
# frames
# ------------------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _put_point(rot, pos, b, w, j, k, x, y, z):
    for i in range(3):
        w[j, k + i] = rot[b, i, 0] * x + rot[b, i, 1] * y + rot[b, i, 2] * z + pos[b, i]


@njit(cache=True, inline="always")
def _put_dir(rot, b, w, j, k, x, y, z):
    for i in range(3):
        w[j, k + i] = rot[b, i, 0] * x + rot[b, i, 1] * y + rot[b, i, 2] * z


@njit(cache=True, inline="always")
def _cross_into(w, j, k, a, b):
    """w[j, k:k+3] = w[j, a:a+3] x w[j, b:b+3]."""
    ax, ay, az = w[j, a], w[j, a + 1], w[j, a + 2]
    bx, by, bz = w[j, b], w[j, b + 1], w[j, b + 2]
    w[j, k] = ay * bz - az * by
    w[j, k + 1] = az * bx - ax * bz
    w[j, k + 2] = ax * by - ay * bx


@njit(cache=True)
def transform_rows(prim, pint, pos, rot, state, work):
    """Instantiate state-dependent rows (latch extension, lever extension) and map all rows to world."""
    for j in range(prim.shape[0]):
        transform_row(prim, pint, pos, rot, state, work, j)


@njit(cache=True, inline="always")
def transform_row(prim, pint, pos, rot, state, work, j):
    """`transform_rows` for row j alone."""
    kind = pint[j, 0]
    b = pint[j, 1]
    r00, r01, r02 = rot[b, 0, 0], rot[b, 0, 1], rot[b, 0, 2]
    r10, r11, r12 = rot[b, 1, 0], rot[b, 1, 1], rot[b, 1, 2]
    r20, r21, r22 = rot[b, 2, 0], rot[b, 2, 1], rot[b, 2, 2]
    p0, p1, p2 = pos[b, 0], pos[b, 1], pos[b, 2]
    if kind == FACE:
        for k in range(0, 12, 3):
            x, y, z = prim[j, k], prim[j, k + 1], prim[j, k + 2]
            work[j, k] = r00 * x + r01 * y + r02 * z + p0
            work[j, k + 1] = r10 * x + r11 * y + r12 * z + p1
            work[j, k + 2] = r20 * x + r21 * y + r22 * z + p2
        x, y, z = prim[j, 12], prim[j, 13], prim[j, 14]
        work[j, 12] = r00 * x + r01 * y + r02 * z
        work[j, 13] = r10 * x + r11 * y + r12 * z
        work[j, 14] = r20 * x + r21 * y + r22 * z
    elif kind == SPHERE:
        _put_point(rot, pos, b, work, j, 0, prim[j, 0], prim[j, 1], prim[j, 2])
        work[j, 3] = prim[j, 3]
    elif kind == SEGMENT:
        _put_point(rot, pos, b, work, j, 0, prim[j, 0], prim[j, 1], prim[j, 2])
        _put_point(rot, pos, b, work, j, 3, prim[j, 3], prim[j, 4], prim[j, 5])
        work[j, 6] = prim[j, 6]
    elif kind == CIRCLE or kind == CONE or kind == ANNULUS:
        x, y, z = prim[j, 0], prim[j, 1], prim[j, 2]
        work[j, 0] = r00 * x + r01 * y + r02 * z + p0
        work[j, 1] = r10 * x + r11 * y + r12 * z + p1
        work[j, 2] = r20 * x + r21 * y + r22 * z + p2
        x, y, z = prim[j, 3], prim[j, 4], prim[j, 5]
        ax, ay, az = r00 * x + r01 * y + r02 * z, r10 * x + r11 * y + r12 * z, r20 * x + r21 * y + r22 * z
        x, y, z = prim[j, 6], prim[j, 7], prim[j, 8]
        ex, ey, ez = r00 * x + r01 * y + r02 * z, r10 * x + r11 * y + r12 * z, r20 * x + r21 * y + r22 * z
        work[j, 3], work[j, 4], work[j, 5] = ax, ay, az
        work[j, 6], work[j, 7], work[j, 8] = ex, ey, ez
        for k in range(9, 21):
            work[j, k] = prim[j, k]
        if kind != ANNULUS:
            k = 17 if kind == CIRCLE else 21
            work[j, k] = ay * ez - az * ey
            work[j, k + 1] = az * ex - ax * ez
            work[j, k + 2] = ax * ey - ay * ex
    elif kind == LATCH_TIP:
        rho = prim[j, 2] + state[int(prim[j, 7])] * (prim[j, 3] - prim[j, 2])
        _put_point(rot, pos, b, work, j, 0, prim[j, 0], rho * prim[j, 5], rho * prim[j, 6])
        work[j, 3] = prim[j, 4]
    elif kind == ROLLER:
        phi = prim[j, 4] + state[1] * (prim[j, 5] - prim[j, 4])
        c, s = prim[j, 9], prim[j, 10]
        rho = prim[j, 1] + prim[j, 3] * math.sin(phi)
        _put_point(rot, pos, b, work, j, 0, prim[j, 0] - prim[j, 3] * math.cos(phi), rho * c, rho * s)
        _put_dir(rot, b, work, j, 3, 0.0, -s, c)      # roller axle: tangential
        _put_dir(rot, b, work, j, 6, 0.0, c, s)       # angle 0: radially outward
        work[j, 9] = prim[j, 6]
        work[j, 10] = prim[j, 7]
        work[j, 11] = prim[j, 8]
        for k in range(12, 17):
            work[j, k] = 0.0
        _cross_into(work, j, 17, 3, 6)


@njit(cache=True, inline="always")
def _axial(w, j, px, py, pz):
    """Axial coordinate, distance from the axis and radial unit of a point about row j's axis."""
    rx, ry, rz = px - w[j, 0], py - w[j, 1], pz - w[j, 2]
    ax, ay, az = w[j, 3], w[j, 4], w[j, 5]
    x = rx * ax + ry * ay + rz * az
    qx, qy, qz = rx - x * ax, ry - x * ay, rz - x * az
    rho = math.sqrt(qx * qx + qy * qy + qz * qz)
    if rho > 1e-12:
        return x, rho, qx / rho, qy / rho, qz / rho
    return x, rho, w[j, 6], w[j, 7], w[j, 8]       # point on the axis: the row's reference direction


# ------------------------------------------------------------------------------------------------
# active sphere (point) against passive primitives  [003 pairs 1-4]
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def cone_char(w, j, px, py, pz, r):
    """Signed penetration of a sphere into the infinite surface of cone row j (no extent check)."""
    x, rho, ux, uy, uz = _axial(w, j, px, py, pz)
    return r - ((x - w[j, 9]) * w[j, 19] + (rho - w[j, 10]) * w[j, 20])


@njit(cache=True, inline="always")
def sphere_cone(cx, cy, cz, r, w, j):
    """Sphere against a frustum or cylinder surface (receiving cone, socket bore), free side `side`."""
    x, rho, ux, uy, uz = _axial(w, j, cx, cy, cz)
    dx, dr = x - w[j, 9], rho - w[j, 10]
    s = dx * w[j, 17] + dr * w[j, 18]                 # foot of the centre along the generator
    if s < 0.0 or s > w[j, 16]:
        return NONE
    d = dx * w[j, 19] + dr * w[j, 20]                 # signed distance along the surface normal
    depth = r - d
    if depth <= 0.0:
        return NONE
    mx, mr = w[j, 19], w[j, 20]
    nx = mx * w[j, 3] + mr * ux
    ny = mx * w[j, 4] + mr * uy
    nz = mx * w[j, 5] + mr * uz
    return depth, cx - d * nx, cy - d * ny, cz - d * nz, nx, ny, nz


@njit(cache=True, inline="always")
def sphere_circle(cx, cy, cz, r, w, j):
    """Sphere against an edge circle / torus, limited to the wedge between the adjoining surfaces."""
    x, rho, ux, uy, uz = _axial(w, j, cx, cy, cz)
    R, tube = w[j, 9], w[j, 10]
    bx, br = x, rho - R
    dist = math.sqrt(bx * bx + br * br)
    depth = r + tube - dist
    if depth <= 0.0:
        return NONE
    return circle_wedge_contact(w, j, bx, br, dist, ux, uy, uz, depth)


@njit(cache=True, inline="always")
def circle_wedge_contact(w, j, bx, br, dist, ux, uy, uz, depth):
    """The contact at `depth` of a point (bx axial, br radial; dist its length; u the radial unit vector) off edge
    circle / torus row j: its normal and surface point, or NONE where its direction leaves the circle's wedge."""
    R, tube = w[j, 9], w[j, 10]
    if dist > 1e-12:
        bx /= dist
        br /= dist
    else:                                             # on the circle: bisector of the wedge, else the axis
        bx, br = w[j, 12] + w[j, 14], w[j, 13] + w[j, 15]
        nb = math.sqrt(bx * bx + br * br)
        if nb < 1e-12:
            bx, br, nb = 1.0, 0.0, 1.0
        bx /= nb
        br /= nb
    if w[j, 16] > 0.5:
        if w[j, 12] * br - w[j, 13] * bx < 0.0 or bx * w[j, 15] - br * w[j, 14] < 0.0:
            return NONE
    nx = bx * w[j, 3] + br * ux
    ny = bx * w[j, 4] + br * uy
    nz = bx * w[j, 5] + br * uz
    qx = w[j, 0] + R * ux + tube * nx
    qy = w[j, 1] + R * uy + tube * ny
    qz = w[j, 2] + R * uz + tube * nz
    return depth, qx, qy, qz, nx, ny, nz


@njit(cache=True, inline="always")
def sphere_annulus(cx, cy, cz, r, w, j):
    """Sphere against a plane normal to the axis, bounded by rho_min..rho_max (socket bottom, ring)."""
    x, rho, ux, uy, uz = _axial(w, j, cx, cy, cz)
    if rho < w[j, 9] or rho > w[j, 10]:
        return NONE
    depth = r - x
    if depth <= 0.0:
        return NONE
    return depth, cx - x * w[j, 3], cy - x * w[j, 4], cz - x * w[j, 5], w[j, 3], w[j, 4], w[j, 5]


@njit(cache=True, inline="always")
def _closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz):
    ex, ey, ez = bx - ax, by - ay, bz - az
    ee = ex * ex + ey * ey + ez * ez
    t = 0.0
    if ee > 0.0:
        t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
        t = min(1.0, max(0.0, t))
    return ax + t * ex, ay + t * ey, az + t * ez


@njit(cache=True, inline="always")
def sphere_face(cx, cy, cz, r, w, j):
    """Sphere against a one-sided convex quad face (slot wall, stop face): interior, else its border."""
    nx, ny, nz = w[j, 12], w[j, 13], w[j, 14]
    d = (cx - w[j, 0]) * nx + (cy - w[j, 1]) * ny + (cz - w[j, 2]) * nz
    if d > r:
        return NONE
    qx, qy, qz = cx - d * nx, cy - d * ny, cz - d * nz
    inside = True
    for k in range(4):
        a = 3 * k
        b = 3 * ((k + 1) % 4)
        ex, ey, ez = w[j, b] - w[j, a], w[j, b + 1] - w[j, a + 1], w[j, b + 2] - w[j, a + 2]
        vx, vy, vz = qx - w[j, a], qy - w[j, a + 1], qz - w[j, a + 2]
        if (ey * vz - ez * vy) * nx + (ez * vx - ex * vz) * ny + (ex * vy - ey * vx) * nz < 0.0:
            inside = False
            break
    if inside:
        depth = r - d
        if depth <= 0.0:
            return NONE
        return depth, qx, qy, qz, nx, ny, nz
    if d <= 0.0:                                      # behind the plane and beside the face
        return NONE
    best = 1e300
    bx = by = bz = 0.0
    for k in range(4):
        a = 3 * k
        b = 3 * ((k + 1) % 4)
        sx, sy, sz = _closest_on_segment(cx, cy, cz, w[j, a], w[j, a + 1], w[j, a + 2],
                                         w[j, b], w[j, b + 1], w[j, b + 2])
        dd = (cx - sx) ** 2 + (cy - sy) ** 2 + (cz - sz) ** 2
        if dd < best:
            best, bx, by, bz = dd, sx, sy, sz
    dist = math.sqrt(best)
    depth = r - dist
    if depth <= 0.0 or dist < 1e-15:
        return NONE
    return depth, bx, by, bz, (cx - bx) / dist, (cy - by) / dist, (cz - bz) / dist


@njit(cache=True)
def sphere_segment(cx, cy, cz, r, w, j):
    """Sphere against a passive segment of radius r_s (cylinder around a segment, rounded ends)."""
    sx, sy, sz = _closest_on_segment(cx, cy, cz, w[j, 0], w[j, 1], w[j, 2], w[j, 3], w[j, 4], w[j, 5])
    dx, dy, dz = cx - sx, cy - sy, cz - sz
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    depth = r + w[j, 6] - dist
    if depth <= 0.0 or dist < 1e-15:
        return NONE
    nx, ny, nz = dx / dist, dy / dist, dz / dist
    rs = w[j, 6]
    return depth, sx + rs * nx, sy + rs * ny, sz + rs * nz, nx, ny, nz


# ------------------------------------------------------------------------------------------------
# segment against edge circle  [003 pair 5]
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def segment_circle_pts(x1, y1, z1, x2, y2, z2, rseg, w, j):
    """Segment P1-P2 (radius rseg) crossing the plane of edge circle j outside it (003 pair 5)."""
    lx, ly, lz = x2 - x1, y2 - y1, z2 - z1
    ax, ay, az = w[j, 3], w[j, 4], w[j, 5]
    den = lx * ax + ly * ay + lz * az
    if abs(den) < 1e-14:
        return NONE
    t = ((w[j, 0] - x1) * ax + (w[j, 1] - y1) * ay + (w[j, 2] - z1) * az) / den
    if t < 0.0 or t > 1.0:
        return NONE
    vx, vy, vz = x1 + t * lx - w[j, 0], y1 + t * ly - w[j, 1], z1 + t * lz - w[j, 2]
    dl = math.sqrt(vx * vx + vy * vy + vz * vz)
    if dl < 1e-12:
        return NONE
    cx, cy, cz = vx / dl, vy / dl, vz / dl            # radial unit n_C
    tx, ty, tz = ay * cz - az * cy, az * cx - ax * cz, ax * cy - ay * cx   # circle tangent (n_S)
    rx, ry, rz = ly * tz - lz * ty, lz * tx - lx * tz, lx * ty - ly * tx   # L x n_S
    nr = math.sqrt(rx * rx + ry * ry + rz * rz)
    if nr < 1e-14:
        return NONE
    rx, ry, rz = rx / nr, ry / nr, rz / nr
    c = rx * cx + ry * cy + rz * cz
    if c > 0.0:                                       # reaction on the active part points inward
        rx, ry, rz, c = -rx, -ry, -rz, -c
    R, tube = w[j, 9], w[j, 10]
    depth = (dl - R) * (-c) + tube + rseg
    if depth <= 0.0:
        return NONE
    qx = w[j, 0] + R * cx + tube * rx
    qy = w[j, 1] + R * cy + tube * ry
    qz = w[j, 2] + R * cz + tube * rz
    return depth, qx, qy, qz, rx, ry, rz


# ------------------------------------------------------------------------------------------------
# ordered sets + dichotomy  [003, "approximation of higher-order surfaces"]
# ------------------------------------------------------------------------------------------------

@njit(cache=True)
def _cs(theta, m, step):
    """cos, sin of theta; from the table when theta is member m (step = MAX_MEMBERS / members)."""
    if m >= 0:
        k = (m * step) % MAX_MEMBERS
        return _COS[k], _SIN[k]
    return math.cos(theta), math.sin(theta)


@njit(cache=True)
def ring_point(w, i, theta, m=-1, step=0):
    """Point at angle theta on circle row i (centre of the theta-th approximating sphere)."""
    c, s = _cs(theta, m, step)
    R = w[i, 9]
    return (w[i, 0] + R * (c * w[i, 6] + s * w[i, 17]),
            w[i, 1] + R * (c * w[i, 7] + s * w[i, 18]),
            w[i, 2] + R * (c * w[i, 8] + s * w[i, 19]))


@njit(cache=True)
def generator(w, i, theta, m=-1, step=0):
    """End points of the generator at angle theta of active cone row i."""
    c, s = _cs(theta, m, step)
    ux = c * w[i, 6] + s * w[i, 21]
    uy = c * w[i, 7] + s * w[i, 22]
    uz = c * w[i, 8] + s * w[i, 23]
    x0, r0, x1, r1 = w[i, 9], w[i, 10], w[i, 11], w[i, 12]
    return (w[i, 0] + x0 * w[i, 3] + r0 * ux, w[i, 1] + x0 * w[i, 4] + r0 * uy,
            w[i, 2] + x0 * w[i, 5] + r0 * uz, w[i, 0] + x1 * w[i, 3] + r1 * ux,
            w[i, 1] + x1 * w[i, 4] + r1 * uy, w[i, 2] + x1 * w[i, 5] + r1 * uz)


MODE_RING_CONE = 0       # circle/torus (spheres on a circle) against a passive cone
MODE_GENERATOR_EDGE = 1  # active cone (generator segments) against a passive edge circle


@njit(cache=True)
def set_char(mode, w, ia, ib, theta, m=-1, step=0):
    """Characteristic distance of the member at angle theta (member m if m >= 0) of set ia against ib."""
    if mode == MODE_RING_CONE:
        px, py, pz = ring_point(w, ia, theta, m, step)
        return cone_char(w, ib, px, py, pz, w[ia, 10])
    x1, y1, z1, x2, y2, z2 = generator(w, ia, theta, m, step)
    ax, ay, az = w[ib, 3], w[ib, 4], w[ib, 5]
    den = (x2 - x1) * ax + (y2 - y1) * ay + (z2 - z1) * az
    if abs(den) < 1e-14:
        return NO
    t = ((w[ib, 0] - x1) * ax + (w[ib, 1] - y1) * ay + (w[ib, 2] - z1) * az) / den
    vx = x1 + t * (x2 - x1) - w[ib, 0]
    vy = y1 + t * (y2 - y1) - w[ib, 1]
    vz = z1 + t * (z2 - z1) - w[ib, 2]
    return math.sqrt(vx * vx + vy * vy + vz * vz) - w[ib, 9]


@njit(cache=True)
def _bisect(mode, w, ia, ib, iB, iE, fB, fE, dth, step):
    """003 dichotomy over indices iB..iE: keep the two largest of (B, M, E), halve, at most N steps."""
    while iE - iB > 1:
        iM = (iB + iE) >> 1
        fM = set_char(mode, w, ia, ib, iM * dth, iM, step)
        if fB == fM and fM == fE:                   # axes coincide: all equal, take the middle one
            return iM, fM
        if fB >= fE:
            iE, fE = iM, fM
        else:
            iB, fB = iM, fM
    if fB >= fE:
        return iB, fB
    return iE, fE


SECTORS = 8   # sectors searched by bisection; 003 uses 2 (see `dichotomy`)


@njit(cache=True)
def dichotomy(mode, w, ia, ib, nbis):
    """Angle of the set member with the largest characteristic distance, and that distance.

    The full surface has 2^(N+1) members. 003 splits it into two convex halves and bisects each; with
    tilt the characteristic distance can have two or three local maxima (found by the property tests),
    so the circle is split into SECTORS equal sectors, each bisected (N + 1 - log2(SECTORS) steps).
    A climb to the discrete local maximum and a parabolic step between its neighbours refine it.
    """
    M = 1 << (nbis + 1)
    step = MAX_MEMBERS // M
    nsec = min(SECTORS, M)
    S = M // nsec
    dth = TWO_PI / M
    f0 = set_char(mode, w, ia, ib, 0.0, np.int64(0), step)
    fB = f0
    i, f = 0, f0
    for k in range(nsec):
        iE = (k + 1) * S
        fE = f0 if iE == M else set_char(mode, w, ia, ib, iE * dth, iE, step)
        i2, f2 = _bisect(mode, w, ia, ib, k * S, iE, fB, fE, dth, step)
        if f2 > f:
            i, f = i2, f2
        fB = fE
    i = i % M
    fm = set_char(mode, w, ia, ib, (i - 1) * dth, (i - 1) % M, step)
    fp = set_char(mode, w, ia, ib, (i + 1) * dth, (i + 1) % M, step)
    steps = 0
    while (fm > f or fp > f) and steps < M:          # climb to the discrete local maximum
        if fm > fp:
            i, fp, f = (i - 1) % M, f, fm
            fm = set_char(mode, w, ia, ib, (i - 1) * dth, (i - 1) % M, step)
        else:
            i, fm, f = (i + 1) % M, f, fp
            fp = set_char(mode, w, ia, ib, (i + 1) * dth, (i + 1) % M, step)
        steps += 1
    theta = i * dth
    den = fm - 2.0 * f + fp
    if den < 0.0 and fm > NO and fp > NO:
        delta = 0.5 * (fm - fp) / den
        delta = min(1.0, max(-1.0, delta))
        fq = set_char(mode, w, ia, ib, (i + delta) * dth, np.int64(-1), step)
        if fq > f:
            theta, f = (i + delta) * dth, fq
    return theta, f


@njit(cache=True)
def circle_cone(w, ia, ib):
    """Active edge circle or torus (limiter rim, roller) against a passive cone, by dichotomy."""
    R, tube = w[ia, 9], w[ia, 10]
    # quick slab test: lower bound of the signed distance of any circle point to the cone surface
    ca = w[ia, 3] * w[ib, 3] + w[ia, 4] * w[ib, 4] + w[ia, 5] * w[ib, 5]
    st = math.sqrt(max(0.0, 1.0 - ca * ca))
    x, rho, ux, uy, uz = _axial(w, ib, w[ia, 0], w[ia, 1], w[ia, 2])
    if x - R * st > w[ib, 11] + tube or x + R * st < w[ib, 9] - tube:
        return NONE
    mx, mr = w[ib, 19], w[ib, 20]
    rr = rho + R if mr < 0.0 else max(rho - R, 0.0)
    lo = mx * (x - w[ib, 9]) - abs(mx) * R * st + mr * (rr - w[ib, 10])
    if tube - lo <= 0.0:
        return NONE
    theta, f = dichotomy(np.int64(MODE_RING_CONE), w, ia, ib, int(w[ia, 11]))
    if f <= 0.0:
        return NONE
    px, py, pz = ring_point(w, ia, theta, np.int64(-1), np.int64(0))
    return sphere_cone(px, py, pz, tube, w, ib)


@njit(cache=True)
def cone_circle(w, ia, ib):
    """Active cone (limiter) as generator segments against a passive edge circle, by dichotomy."""
    ax, ay, az = w[ib, 3], w[ib, 4], w[ib, 5]
    ca = w[ia, 3] * ax + w[ia, 4] * ay + w[ia, 5] * az
    st = math.sqrt(max(0.0, 1.0 - ca * ca))
    # quick slab test: both rims strictly on one side of the circle plane -> no crossing
    ox, oy, oz = w[ia, 0] - w[ib, 0], w[ia, 1] - w[ib, 1], w[ia, 2] - w[ib, 2]
    h = ox * ax + oy * ay + oz * az
    h0, h1 = h + w[ia, 9] * ca, h + w[ia, 11] * ca
    e0, e1 = w[ia, 10] * st, w[ia, 12] * st
    if (h0 - e0 > 0.0 and h1 - e1 > 0.0) or (h0 + e0 < 0.0 and h1 + e1 < 0.0):
        return NONE
    # radial bound: the whole cone lies within the circle (minus tube) -> no contact
    x, rho, ux, uy, uz = _axial(w, ib, w[ia, 0], w[ia, 1], w[ia, 2])
    reach = rho + max(abs(w[ia, 9]), abs(w[ia, 11])) * st + max(w[ia, 10], w[ia, 12])
    if reach < w[ib, 9] - w[ib, 10] - w[ia, 15]:
        return NONE
    theta, f = dichotomy(np.int64(MODE_GENERATOR_EDGE), w, ia, ib, int(w[ia, 14]))
    x1, y1, z1, x2, y2, z2 = generator(w, ia, theta, np.int64(-1), np.int64(0))
    return segment_circle_pts(x1, y1, z1, x2, y2, z2, w[ia, 15], w, ib)


@njit(cache=True)
def circle_annulus(w, ia, ib):
    """Active ring rim circle against a passive ring face (annulus): deepest rim point, analytic."""
    nx, ny, nz = w[ib, 3], w[ib, 4], w[ib, 5]
    an = w[ia, 3] * nx + w[ia, 4] * ny + w[ia, 5] * nz
    dx, dy, dz = -(nx - an * w[ia, 3]), -(ny - an * w[ia, 4]), -(nz - an * w[ia, 5])
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn < 1e-12:                                    # faces parallel: every rim point is deepest
        dx, dy, dz, dn = w[ia, 6], w[ia, 7], w[ia, 8], 1.0
    R = w[ia, 9]
    px = w[ia, 0] + R * dx / dn
    py = w[ia, 1] + R * dy / dn
    pz = w[ia, 2] + R * dz / dn
    return sphere_annulus(px, py, pz, w[ia, 10], w, ib)


@njit(cache=True)
def pair_eval(w, ka, ia, kb, ib):
    """Contact of active world row ia (kind ka) with passive row ib (kind kb); NONE if unsupported."""
    if ka == SPHERE:
        cx, cy, cz, r = w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 3]
        if kb == CONE:
            return sphere_cone(cx, cy, cz, r, w, ib)
        if kb == CIRCLE:
            return sphere_circle(cx, cy, cz, r, w, ib)
        if kb == ANNULUS:
            return sphere_annulus(cx, cy, cz, r, w, ib)
        if kb == FACE:
            return sphere_face(cx, cy, cz, r, w, ib)
        if kb == SEGMENT:
            return sphere_segment(cx, cy, cz, r, w, ib)
    elif ka == CIRCLE:
        if kb == CONE:
            return circle_cone(w, ia, ib)
        if kb == ANNULUS:
            return circle_annulus(w, ia, ib)
    elif ka == CONE:
        if kb == CIRCLE:
            return cone_circle(w, ia, ib)
    elif ka == SEGMENT:
        if kb == CIRCLE:
            return segment_circle_pts(w[ia, 0], w[ia, 1], w[ia, 2], w[ia, 3], w[ia, 4], w[ia, 5],
                                      w[ia, 6], w, ib)
    return NONE


SUPPORTED = {(SPHERE, CONE), (SPHERE, CIRCLE), (SPHERE, ANNULUS), (SPHERE, FACE), (SPHERE, SEGMENT),
             (CIRCLE, CONE), (CIRCLE, ANNULUS), (CONE, CIRCLE), (SEGMENT, CIRCLE)}
