"""Wireframe builders (points + line segments) for drawing parts; axis x is the part's own axis."""
from __future__ import annotations

import numpy as np


class Wire:
    """Accumulates points (P, 3) and line index pairs (L, 2)."""

    def __init__(self):
        self.points: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self._n = 0

    def polyline(self, pts, closed=False):
        pts = np.asarray(pts, dtype=float).reshape(-1, 3)
        k = len(pts)
        idx = np.arange(k) + self._n
        segs = np.stack([idx[:-1], idx[1:]], axis=1)
        if closed and k > 2:
            segs = np.vstack([segs, [[idx[-1], idx[0]]]])
        self.points.append(pts)
        self.lines.append(segs)
        self._n += k
        return self

    def circle(self, x, r, n=48, y0=0.0, z0=0.0):
        a = np.linspace(0, 2 * np.pi, n, endpoint=False)
        return self.polyline(np.stack([np.full(n, x), y0 + r * np.cos(a), z0 + r * np.sin(a)], 1), closed=True)

    def frustum(self, x0, r0, x1, r1, n_generators=12, n_circles=2, n=48):
        for x, r in zip(np.linspace(x0, x1, n_circles), np.linspace(r0, r1, n_circles)):
            self.circle(x, r, n)
        for a in np.linspace(0, 2 * np.pi, n_generators, endpoint=False):
            c, s = np.cos(a), np.sin(a)
            self.polyline([[x0, r0 * c, r0 * s], [x1, r1 * c, r1 * s]])
        return self

    def sphere(self, r, center=(0.0, 0.0, 0.0), n_lat=5, n_meridians=6, n=36):
        cx, cy, cz = center
        for phi in np.linspace(-np.pi / 2, np.pi / 2, n_lat + 2)[1:-1]:
            self.circle(cx + r * np.sin(phi), r * np.cos(phi), n, cy, cz)
        b = np.linspace(0, np.pi, n // 2 + 1)
        for a in np.linspace(0, np.pi, n_meridians, endpoint=False):
            pts = np.stack([cx + r * np.cos(b), cy + r * np.sin(b) * np.cos(a), cz + r * np.sin(b) * np.sin(a)], 1)
            self.polyline(np.vstack([pts, pts[::-1][1:-1] * [1, -1, -1] + [0, 2 * cy, 2 * cz]]), closed=True)
        return self

    def box(self, lo, hi):
        (x0, y0, z0), (x1, y1, z1) = lo, hi
        c = np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)], float)
        base = self._n
        self.points.append(c)
        e = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)]
        self.lines.append(np.array(e) + base)
        self._n += 8
        return self

    def transformed(self, rot, shift):
        """A copy with every point mapped p -> rot @ p + shift."""
        w = Wire()
        p, l = self.build()
        w.points, w.lines, w._n = [p @ np.asarray(rot).T + shift], [l], len(p)
        return w

    def extend(self, other: "Wire"):
        p, l = other.build()
        self.points.append(p)
        self.lines.append(l + self._n)
        self._n += len(p)
        return self

    def build(self):
        if not self.points:
            return np.zeros((0, 3)), np.zeros((0, 2), np.int32)
        return np.vstack(self.points), np.vstack(self.lines).astype(np.int32)


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
