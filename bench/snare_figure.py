"""The cables of a snare run at 0 s, at first contact and at the end (as seed 004's fig. 6), from the run file's
flexible parts and the target's pose: an axial view (y-z) over a side view (x-y). Usage:
python -m bench.snare_figure RUN.h5 OUT.png"""
from __future__ import annotations

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from solver.runfile import RunFile  # noqa: E402


def _rot(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def figure(run_path, out_png):
    with RunFile(run_path) as r:
        first = min((e.time for e in r.events if e.kind == "first_contact"), default=r.time[-1] / 2)
        frames = [0, int(np.searchsorted(r.time, first)), r.n_frames - 1]
        rod = r.geometry["grapple_rod"].points
        L, rr = -rod[:, 0].min(), np.abs(rod[:, 1]).max()
        ring = r.geometry["fixed_ring"].points
        R = np.hypot(ring[:, 1], ring[:, 2]).max()
        ti = r.bodies.index("target") if hasattr(r, "bodies") else 2
        fig, ax = plt.subplots(2, 3, figsize=(12, 7.5), gridspec_kw={"height_ratios": [1.1, 1]})
        a = np.linspace(0, 2 * np.pi, 200)
        for k, fr in enumerate(frames):
            pos, quat = r.poses(fr)
            Rt = _rot(quat[2])
            axis = np.array([pos[2], pos[2] - L * Rt[:, 0]])      # adapter face to the rod's end
            top, side = ax[0, k], ax[1, k]
            top.plot(R * np.cos(a), R * np.sin(a), color="0.6", lw=1)
            for i, c in enumerate(("tab:orange", "tab:green", "tab:blue")):
                p = r.flexible_points(f"cable_{i + 1}", fr)
                top.plot(p[:, 1], p[:, 2], color=c, lw=2, label=f"cable {i + 1}")
                side.plot(p[:, 1], p[:, 0], color=c, lw=2)
                act = r.contact_active(f"cable_{i + 1}_rod", fr) if hasattr(r, "contact_active") else False
            tip = axis[1]
            top.add_patch(plt.Circle((tip[1], tip[2]), rr, color="red" if fr else "0.3", alpha=0.6))
            side.plot(axis[:, 1], axis[:, 0], color="0.3", lw=rr * 2 * 300)
            side.axhline(0.0, color="0.6", lw=1)
            side.axhline(r.poses(fr)[0][1][0], color="goldenrod", lw=1)
            ang = r.channel("ring_angle")[fr]
            top.set_title(f"t = {r.time[fr]:.2f} s, ring {ang:.0f} deg, rod end offset "
                          f"{1000 * r.channel('radial_offset')[fr]:.1f} mm", fontsize=9)
            for g in (top, side):
                g.set_aspect("equal")
                g.grid(alpha=0.3)
            top.set_xlim(-1.15 * R, 1.15 * R)
            top.set_ylim(-1.15 * R, 1.15 * R)
            top.set_xlabel("y, m")
            top.set_ylabel("z, m")
            side.set_xlabel("y, m")
            side.set_ylabel("x (EE axis), m")
            side.set_xlim(-1.15 * R, 1.15 * R)
        ax[0, 0].legend(fontsize=8, loc="lower left")
        fig.suptitle(f"{r.meta.scenario}: cables at 0 s, first contact, end (fixed ring grey line x = 0, rotating "
                     f"ring gold)", fontsize=10)
        fig.tight_layout()
        fig.savefig(out_png, dpi=110)


if __name__ == "__main__":
    figure(sys.argv[1], sys.argv[2])
