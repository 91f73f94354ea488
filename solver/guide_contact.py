"""Interim guide-surface contacts for the probe-cone pair (seed 003 primitives), one separated call.

The passive receiving cone and socket form a surface of revolution given by its meridian polyline
(x, r): each segment is a truncated cone, cylinder or normal-plane annulus, each convex vertex an
edge-circle (seed 003 primitives 1-4). Active parts are spheres (probe head, limiter load pads) and
points (latch tips). Replace `guide_contacts` by the contact library in solver/contact when it lands.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.vec3 import add, cross, dot, mtv, mv, norm, scl, sub

# pair indices (order of simulate.PAIRS)
PAIR_HEAD_CONE, PAIR_HEAD_SOCKET, PAIR_LATCH_SLOT, PAIR_LIMITER_CONE = 0, 1, 2, 3
N_PAIRS = 4
REC_W = 13  # active, F(3), sum|F|*point(3), sum Fn*n(3), depth, normal speed, sum|F|

# contact parameter vector CP
CP_K_HEAD, CP_C_HEAD, CP_MU_HEAD, CP_K_LATCH, CP_C_LATCH, CP_MU_LATCH = 0, 1, 2, 3, 4, 5
CP_K_LIM, CP_C_LIM, CP_MU_LIM, CP_VEPS, CP_X_FACE, CP_R_NECK, CP_R_CHAMBER = 6, 7, 8, 9, 10, 11, 12
CP_K_LSPR, CP_X_MOUTH = 13, 14
CP_SIZE = 15


@njit(cache=True, error_model="numpy")
def _apply(rec, pair, F_l, cp_l, n_l, depth, nspeed):
    """Accumulate one contact feature into its pair record (cone frame)."""
    fm = norm(F_l) + 1e-9
    rec[pair, 0] += 1.0
    for i in range(3):
        rec[pair, 1 + i] += F_l[i]
        rec[pair, 4 + i] += fm * cp_l[i]
        rec[pair, 7 + i] += fm * n_l[i]
    if depth > rec[pair, 10]:
        rec[pair, 10] = depth
        rec[pair, 11] = nspeed
    rec[pair, 12] += fm


@njit(cache=True, error_model="numpy")
def _feature_force(RP, oP, vP, wP, rP, c_w, v_c, w_c, radius, n_l, depth, k, c, mu, veps):
    """Penalty normal force (spring-damper, one-sided) and regularized Coulomb friction on a sphere.

    Returns world force, world contact point, stored energy, dissipated power and normal speed.
    """
    n_w = mv(RP, n_l)
    cp_w = sub(c_w, scl(n_w, radius - 0.5 * depth))
    va = add(v_c, cross(w_c, sub(cp_w, c_w)))
    vp = add(vP, cross(wP, sub(cp_w, rP)))
    vr = sub(va, vp)
    vn = dot(vr, n_w)
    dd = -vn                                   # penetration rate (> 0 closing)
    fn = k * depth + c * dd
    if fn < 0.0:
        fn = 0.0
    vt = sub(vr, scl(n_w, vn))
    vtm = norm(vt)
    g = mu * fn / math.sqrt(vtm * vtm + veps * veps)
    F_w = sub(scl(n_w, fn), scl(vt, g))
    # stored energy, dissipated power (>= 0), penetration rate
    return F_w, cp_w, 0.5 * k * depth * depth, (fn - k * depth) * dd + g * vtm * vtm, dd


@njit(cache=True, error_model="numpy")
def _sphere_vs_profile(RP, oP, vP, wP, rP, c_w, v_c, w_c, radius, prof, seg_pair, vert_pair, pair0, pair1,
                       k, c, mu, veps, rec, f_acc):
    """All segment and convex-vertex contacts of one sphere with the passive profile.

    pair0/pair1 are the pair indices of feature codes 0 (cone) and 1 (socket); -1 skips the code. Adds the world force on the
    sphere to f_acc[0:3] and its moment about the sphere centre to f_acc[3:6]. Returns (pe, pdiss, maxdepth).
    """
    cl = mtv(RP, sub(c_w, oP))
    x = cl[0]
    rho = math.sqrt(cl[1] * cl[1] + cl[2] * cl[2])
    # broad phase (seed 003): the whole profile lies in x <= 0, r <= outer face radius
    if x - radius > prof[0, 0] or rho - radius > prof[0, 1]:
        return 0.0, 0.0, 0.0
    if rho > 1e-12:
        ey, ez = cl[1] / rho, cl[2] / rho
    else:
        ey, ez = 1.0, 0.0
    pe = 0.0
    pd = 0.0
    dmax = 0.0
    nv = prof.shape[0]
    for i in range(nv):
        # segment i: vertex i -> i+1 ; vertex i: edge-circle if convex
        for kind in range(2):
            if kind == 0:
                if i >= nv - 1:
                    continue
                code = seg_pair[i]
            else:
                code = vert_pair[i]
            if code < 0:
                continue
            pair = pair0 if code == 0 else pair1
            if pair < 0:
                continue
            if kind == 0:
                ax, ar = prof[i, 0], prof[i, 1]
                dx, dr = prof[i + 1, 0] - ax, prof[i + 1, 1] - ar
                ln = math.sqrt(dx * dx + dr * dr)
                dx /= ln
                dr /= ln
                t = (x - ax) * dx + (rho - ar) * dr
                if t < 0.0 or t > ln:
                    continue
                nx, nr = -dr, dx
                dist = (x - ax) * nx + (rho - ar) * nr
                if dist <= 0.0:
                    continue
            else:
                vx, vr = prof[i, 0], prof[i, 1]
                qx, qr = x - vx, rho - vr
                # region between the adjacent segments' end normals
                px, pr = vx - prof[i - 1, 0], vr - prof[i - 1, 1]
                nxx, nxr = prof[i + 1, 0] - vx, prof[i + 1, 1] - vr
                if qx * px + qr * pr <= 0.0 or qx * nxx + qr * nxr >= 0.0:
                    continue
                dist = math.sqrt(qx * qx + qr * qr)
                if dist <= 1e-12:
                    continue
                nx, nr = qx / dist, qr / dist
            depth = radius - dist
            if depth <= 0.0:
                continue
            n_l = (nx, nr * ey, nr * ez)
            F_w, cp_w, e_st, p_d, dd = _feature_force(RP, oP, vP, wP, rP, c_w, v_c, w_c, radius, n_l, depth,
                                                      k, c, mu, veps)
            pe += e_st
            pd += p_d
            if depth > dmax:
                dmax = depth
            for j in range(3):
                f_acc[j] += F_w[j]
            m = cross(sub(cp_w, c_w), F_w)
            for j in range(3):
                f_acc[3 + j] += m[j]
            _apply(rec, pair, mtv(RP, F_w), mtv(RP, sub(cp_w, oP)), n_l, depth, dd)
    return pe, pd, dmax


@njit(cache=True, error_model="numpy")
def guide_contacts(RP, oP, vP, wP, rP, sph, n_sph, lat, n_lat, prof, seg_pair, vert_pair, CP, rec, f_out):
    """Evaluate every contact pair of the probe-cone unit for the current poses (world frame inputs).

    sph rows: centre(3), velocity(3), body angular velocity(3), radius, kind (0 head, 1 limiter pad);
    lat rows: tip(3), velocity(3), engaged flag. Writes per-primitive world force and moment about the
    centre/tip into f_out (sphere rows first, then latches) and the pair records into rec (cone frame).
    Returns (stored energy, dissipated power, max depth).
    """
    rec[:, :] = 0.0
    f_out[:, :] = 0.0
    pe = 0.0
    pd = 0.0
    dmax = 0.0
    veps = CP[CP_VEPS]
    for s in range(n_sph):
        c_w = (sph[s, 0], sph[s, 1], sph[s, 2])
        v_c = (sph[s, 3], sph[s, 4], sph[s, 5])
        w_c = (sph[s, 6], sph[s, 7], sph[s, 8])
        if sph[s, 10] < 0.5:
            a, b, d = _sphere_vs_profile(RP, oP, vP, wP, rP, c_w, v_c, w_c, sph[s, 9], prof, seg_pair,
                                         vert_pair, PAIR_HEAD_CONE, PAIR_HEAD_SOCKET, CP[CP_K_HEAD], CP[CP_C_HEAD],
                                         CP[CP_MU_HEAD], veps, rec, f_out[s])
        else:
            a, b, d = _sphere_vs_profile(RP, oP, vP, wP, rP, c_w, v_c, w_c, sph[s, 9], prof, seg_pair,
                                         vert_pair, PAIR_LIMITER_CONE, -1, CP[CP_K_LIM], CP[CP_C_LIM],
                                         CP[CP_MU_LIM], veps, rec, f_out[s])
        pe += a
        pd += b
        dmax = max(dmax, d)
    # latches engaged behind the socket shoulder: tip point vs the shoulder's back face (normal -x)
    xf, rn, rc = CP[CP_X_FACE], CP[CP_R_NECK], CP[CP_R_CHAMBER]
    for j in range(n_lat):
        p_w = (lat[j, 0], lat[j, 1], lat[j, 2])
        pl = mtv(RP, sub(p_w, oP))
        rho = math.sqrt(pl[1] * pl[1] + pl[2] * pl[2])
        if lat[j, 6] < 0.5:
            # latch not yet engaged: the neck presses it in against its spring (45 deg latch nose)
            depth = rho - rn
            if depth <= 0.0 or pl[0] < xf or pl[0] > CP[CP_X_MOUTH] or rho < 1e-9:
                continue
            n_l = (0.7071067811865476, -0.7071067811865476 * pl[1] / rho, -0.7071067811865476 * pl[2] / rho)
            F_w, cp_w, e_st, p_d, dd = _feature_force(RP, oP, vP, wP, rP, p_w, (lat[j, 3], lat[j, 4], lat[j, 5]),
                                                      (0.0, 0.0, 0.0), 0.0, n_l, depth, CP[CP_K_LSPR], 0.0, 0.0,
                                                      veps)
            # the latch spring's energy is not returned to the craft (it snaps the latch out): count the
            # work done on it as absorbed, exactly, instead of as stored potential energy
            pd += norm(F_w) * dd
            row = n_sph + j
            for i in range(3):
                f_out[row, i] = F_w[i]
            _apply(rec, PAIR_LATCH_SLOT, mtv(RP, F_w), mtv(RP, sub(cp_w, oP)), n_l, depth, dd)
            continue
        depth = pl[0] - xf
        if depth <= 0.0 or rho < rn or rho > rc:
            continue
        F_w, cp_w, e_st, p_d, dd = _feature_force(RP, oP, vP, wP, rP, p_w, (lat[j, 3], lat[j, 4], lat[j, 5]),
                                                  (0.0, 0.0, 0.0), 0.0, (-1.0, 0.0, 0.0), depth,
                                                  CP[CP_K_LATCH], CP[CP_C_LATCH], CP[CP_MU_LATCH], veps)
        pe += e_st
        pd += p_d
        dmax = max(dmax, depth)
        row = n_sph + j
        for i in range(3):
            f_out[row, i] = F_w[i]
        _apply(rec, PAIR_LATCH_SLOT, mtv(RP, F_w), mtv(RP, sub(cp_w, oP)), (-1.0, 0.0, 0.0), depth, dd)
    for p in range(N_PAIRS):
        w = rec[p, 12]
        if rec[p, 0] > 0.0:
            if w > 0.0:
                for i in range(3):
                    rec[p, 4 + i] /= w
            nn = math.sqrt(rec[p, 7] ** 2 + rec[p, 8] ** 2 + rec[p, 9] ** 2)
            if nn > 0.0:
                for i in range(3):
                    rec[p, 7 + i] /= nn
    return pe, pd, dmax
