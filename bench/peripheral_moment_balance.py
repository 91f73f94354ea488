"""Moment balance of the guide ring from a peripheral run file alone: I dw/dt + w x I w (ring CoM, from the stored
quaternions by central differences) against the moments of the leg forces (along the legs, at the ring points) and
of every contact pair acting on the ring (force at its stored point, plus the pairs' couples along their forces,
channels ring_couple_x/y/z, where the run has them). Prints the residual's median and max over the
frames before and after capture. Needs a fine output step (1 ms or less) for the differences.
    python bench/peripheral_moment_balance.py RUN.h5
"""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def residuals(path) -> tuple[np.ndarray, np.ndarray]:
    """(time, |residual moment| in N*m) at the interior frames."""
    from solver.quat import to_matrix
    from solver.runfile import RunFile
    with RunFile(path) as r:
        text = r.parameters_toml
        mech = tomllib.loads(text.split("# mechanism ", 1)[1].split("\n", 1)[1])
        m = mech["mass"]
        I = np.diag([m["guide_ring_inertia_axial"], m["guide_ring_inertia_lateral"], m["guide_ring_inertia_lateral"]])
        names = list(r.bodies)
        ir = names.index("ring")
        n = r.n_frames
        t = np.asarray(r.time)
        pos = np.array([r.poses(i)[0] for i in range(n)])
        q = np.array([r.poses(i)[1] for i in range(n)])
        Rr = to_matrix(q[:, ir])
        # body angular velocity from dR/dt: [w]x = R^T dR/dt (central differences)
        dR = np.gradient(Rr, t, axis=0)
        W = np.einsum("kji,kjl->kil", Rr, dR)
        w = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], 1)
        dw = np.gradient(w, t, axis=0)
        lhs = np.einsum("kij,kj->ki", Rr, dw @ I.T + np.cross(w, w @ I.T))      # world frame
        c = pos[:, ir]
        mom = np.zeros((n, 3))
        for k in range(1, 7):                         # legs: force along the leg (tension +) at the ring point
            up, lo = names.index(f"leg_{k}_upper"), names.index(f"leg_{k}_lower")
            p, b = pos[:, up], pos[:, lo]
            u = (p - b) / np.linalg.norm(p - b, axis=1, keepdims=True)
            f = -r.channel(f"leg_{k}_force")[:, None] * u
            mom += np.cross(p - c, f)
        ring_parts = {"active_ring", "latches", *(f"active_petal_{k}" for k in range(1, 4))}
        for name, pair in r.contact_pairs.items():
            sign = 1.0 if pair.part_a in ring_parts else (-1.0 if pair.part_b in ring_parts else 0.0)
            if sign == 0.0:
                continue
            f = sign * r.contact_force(name)
            p = r.contact_point(name)
            mom += np.cross(p - c, f)
        if "ring_couple_x" in r.channels:             # the pairs' couples along their forces (a force at a point
            mom += np.stack([r.channel(f"ring_couple_{a}") for a in "xyz"], 1)   # does not carry them)
        res = np.linalg.norm(lhs - mom, axis=1)
        return t[1:-1], res[1:-1], float(r.t_capture)


if __name__ == "__main__":
    t, res, tc = residuals(sys.argv[1])
    for label, sel in (("before capture", t < tc), ("after capture", t > tc + 0.01)):
        if sel.any():
            print(f"{label:15s} {sel.sum():6d} frames: median {np.median(res[sel]):.4g} N*m, max {res[sel].max():.4g} N*m")
