"""Peripheral runs checked from their stored poses alone (not the solver's flags): at the hooks' closing and at hard
dock, the tilt between the two interface planes and the gap of the active interface face all round (its drawn
points, passive frame); over the run, the guide ring's least clearance ahead of the leg base plane; the verdict.
    python bench/peripheral_checks.py RUN.h5 [RUN.h5 ...]
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _rot(q):
    from solver.quat import to_matrix
    return to_matrix(np.asarray(q, float))


def interface_at(run, frame: int) -> tuple[float, float, float]:
    """(tilt deg, least gap m, largest gap m) of the active interface face over the passive interface plane."""
    names = list(run.bodies)
    pos, q = run.poses(frame)
    ip, ia = names.index("passive_craft"), names.index("active_craft")
    RP, RA = _rot(q[ip]), _rot(q[ia])
    pts = run.geometry["active_interface"].points
    world = pos[ia] + pts @ RA.T
    x = (world - pos[ip]) @ RP[:, 0]
    tilt = math.degrees(math.acos(min(1.0, float(RP[:, 0] @ RA[:, 0]))))
    return tilt, float(x.min()), float(x.max())


def ring_clearance(run) -> tuple[float, float]:
    """Least height of the guide ring's leg points ahead of the leg base plane over the run, and its time (the
    ring's leg points are the upper legs' body origins)."""
    names = list(run.bodies)
    ia = names.index("active_craft")
    up = [names.index(f"leg_{k}_upper") for k in range(1, 7)]
    best, tb = math.inf, math.nan
    for i in range(0, run.n_frames, max(1, run.n_frames // 4000)):
        pos, q = run.poses(i)
        RA = _rot(q[ia])
        h = -((pos[up] - pos[ia]) @ RA[:, 0])       # the ring lies at -x of the active frame
        if h.min() < best:
            best, tb = float(h.min()), float(run.time[i])
    return best, tb


def report(path) -> str:
    from solver.runfile import RunFile
    from solver.verdict import evaluate
    with RunFile(path) as run:
        out = [f"{Path(path).name}"]
        ev = {e.text.split(":")[0]: e.time for e in run.events if e.kind in ("phase", "hard_dock")}
        for label in ("hooks closed", "hard dock"):
            if label in ev:
                i = run.frame_at(ev[label])
                i += 1 if run.time[i] < ev[label] and i + 1 < run.n_frames else 0      # the first frame at/after it
                t, g0, g1 = interface_at(run, i)
                out.append(f"  {label:<13} {ev[label]:7.3f} s: tilt {t:.4f} deg, interface gap {g0 * 1e3:+.3f} .. "
                           f"{g1 * 1e3:+.3f} mm")
            else:
                out.append(f"  {label:<13} not reached")
        tr = [e.time for e in run.events if e.kind == "phase" and e.text.startswith("retraction")]
        if tr:
            i = run.frame_at(tr[0])
            out.append(f"  retraction    {tr[0]:7.3f} s: relative kinetic energy {run.channel('kinetic_energy')[i]:.3f} J "
                       f"(soft capture {run.t_capture:.3f} s)")
        tot, ke = run.channel("total_energy"), run.channel("kinetic_energy")
        out.append(f"  energy balance: max |E - E0| {np.max(np.abs(tot - tot[0])):.3g} J = "
                   f"{np.max(np.abs(tot - tot[0])) / ke[0]:.2g} of KE0 {ke[0]:.2f} J")
        c, tc = ring_clearance(run)
        out.append(f"  ring clearance ahead of the leg base plane: least {c * 1e3:.1f} mm at {tc:.2f} s")
        out.append("  " + evaluate(run).line())
    return "\n".join(out)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(report(p))
