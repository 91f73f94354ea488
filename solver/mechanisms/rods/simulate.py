"""A rods run: channels named as the paper names its state, the craft and the rods' deflection lines (flexible
parts), the clamps' lock events; the kernel driven by the one runner (solver.simulate.run_kernels)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from solver.core import planar_chain as PC
from solver.mechanisms.rods import dynamics as D
from solver.runfile import ChannelInfo, FlexiblePart, PartGeometry, RunWriter
from solver.simulate import BlockKernels, run_kernels, run_plan
from solver.wireframe import Wire

SOLVER_VERSION = "dockmnemo rods 1"


def channel_names(n: int) -> list[str]:
    """The kernel's channel columns, in order."""
    r = range(1, n + 1)
    h = range(n)
    return (["u_Cx", "u_Cy", "theta_C", "v_Cx", "v_Cy", "Omega"] + [f"phi{k}" for k in r] + [f"alpha{k}" for k in r]
            + [f"beta{k}" for k in r] + [f"hinge{k}_angle" for k in h] + [f"hinge{k}_moment" for k in h]
            + [f"M_root{k}" for k in r] + [f"M_tip{k}" for k in r] + [f"clamp{k}" for k in h]
            + ["kinetic_energy", "potential_energy", "dissipated_energy", "control_work", "total_energy",
               "u_Cx_per_component", "u_Cy_per_component", "u_Cx_sign_flipped", "u_Cy_sign_flipped",
               "X_C", "Y_C", "M_C"])


def channel_infos(m) -> list[ChannelInfo]:
    """Units, labels, groups and device ranges (hinge angles: the range of the rod-system file)."""
    n = m.RODS.shape[0]
    C = ChannelInfo
    out = [C("u_Cx", "m", "craft c.g. displacement x (craft axes, as the text defines it)", "spacecraft"),
           C("u_Cy", "m", "craft c.g. displacement y (craft axes, as the text defines it)", "spacecraft"),
           C("theta_C", "deg", "craft rotation angle", "spacecraft"),
           C("v_Cx", "m/s", "craft c.g. velocity x (craft axes)", "spacecraft"),
           C("v_Cy", "m/s", "craft c.g. velocity y (craft axes)", "spacecraft"),
           C("Omega", "deg/s", "craft angular rate", "spacecraft")]
    out += [C(f"phi{k}", "deg", f"rod {k} chord angle (from the craft's x axis)", "mechanism") for k in range(1, n + 1)]
    out += [C(f"alpha{k}", "deg", f"rod {k} end slope at its root (against the chord)", "mechanism")
            for k in range(1, n + 1)]
    out += [C(f"beta{k}", "deg", f"rod {k} end slope at its tip (against the chord)", "mechanism")
            for k in range(1, n + 1)]
    out += [C(f"hinge{k}_angle", "deg", f"hinge {k} angle ({'craft' if k == 0 else f'rod {k}'} to rod {k + 1})",
              "mechanism", m.hinge_range_deg[k]) for k in range(n)]
    out += [C(f"hinge{k}_moment", "N*m", f"hinge {k} moment (spring, damper, clamp)", "mechanism", m.moment_range[k])
            for k in range(n)]
    out += [C(f"M_root{k}", "N*m", f"rod {k} bending moment at its root", "mechanism") for k in range(1, n + 1)]
    out += [C(f"M_tip{k}", "N*m", f"rod {k} bending moment at its tip", "mechanism") for k in range(1, n + 1)]
    out += [C(f"clamp{k}", "", f"clamp of hinge {k} locked (1)", "mechanism", 1.0) for k in range(n)]
    out += [C(x, "J", x.replace("_", " "), "energy") for x in
            ("kinetic_energy", "potential_energy", "dissipated_energy", "control_work", "total_energy")]
    out += [C("u_Cx_per_component", "m", "u_Cx from u_dot = v - Omega u per component (Table 1's variant)",
              "spacecraft"),
            C("u_Cy_per_component", "m", "u_Cy from u_dot = v - Omega u per component (Table 1's variant)",
              "spacecraft"),
            C("u_Cx_sign_flipped", "m", "u_Cx from v = u_dot - Omega z x u (the text's relation, sign flipped)",
              "spacecraft"),
            C("u_Cy_sign_flipped", "m", "u_Cy from v = u_dot - Omega z x u (the text's relation, sign flipped)",
              "spacecraft"),
            C("X_C", "N", "control force X_C (craft axes)", "spacecraft"),
            C("Y_C", "N", "control force Y_C (craft axes)", "spacecraft"),
            C("M_C", "N*m", "control moment M_C", "spacecraft")]
    assert [c.name for c in out] == channel_names(n)
    return out


def parts(m) -> tuple[list[PartGeometry], list[FlexiblePart]]:
    """The craft's outline and the hinge node on it (static), the rods' deflection lines (flexible)."""
    hx, hy = m.craft_half
    x0, y0 = m.P[D.P_X0], m.P[D.P_Y0]
    craft = Wire().polyline([(-hx, -hy, 0), (hx, -hy, 0), (hx, hy, 0), (-hx, hy, 0), (-hx, -hy, 0)]).build()
    static = [PartGeometry("craft", "craft", *craft, "craft"),
              PartGeometry("hinge0", "craft", *Wire().polyline(
                  [(x0 + 0.04 * math.cos(a), y0 + 0.04 * math.sin(a), 0)
                   for a in np.linspace(0, 2 * math.pi, 13)]).build(), "hinge")]
    P = m.points_per_rod
    lines = np.array([[i, i + 1] for i in range(P - 1)], np.int32)
    flex = [FlexiblePart(f"rod{k + 1}", "craft", P, lines, "rod", f"rod {k + 1} deflection line")
            for k in range(m.RODS.shape[0])]
    return static, flex


class RodsKernels(BlockKernels):
    """BlockKernels of the rods kernel, with the rods' deflection lines of each block's frames."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.state["contact_prev"] = np.zeros(1, np.int64)   # no contact pairs: one unused flag (a snapshot row)

    def flexible_frames(self, rows: int) -> dict[str, np.ndarray]:
        n = self.m.RODS.shape[0]
        ch = self.outs[1][:rows]
        phi = np.radians(ch[:, 6:6 + n])
        al, be = np.radians(ch[:, 6 + n:6 + 2 * n]), np.radians(ch[:, 6 + 2 * n:6 + 3 * n])
        pts = np.zeros((rows, n, self.m.points_per_rod, 3))
        PC.deflection_lines(np.ascontiguousarray(phi), np.ascontiguousarray(al), np.ascontiguousarray(be),
                            self.m.RODS, self.m.P[D.P_X0], self.m.P[D.P_Y0], pts)
        return {f"rod{k + 1}": pts[:, k] for k in range(n)}


def kernel_units(m) -> list:
    """The compiled units of a rods run, callees first."""
    from numba import types as T
    a1, a2, a3 = T.float64[::1], T.float64[:, ::1], T.float64[:, :, ::1]
    u8, i8 = T.uint8[:, ::1], T.int64[::1]
    a4 = T.float64[:, :, :, ::1]
    return [("core.deflection_lines", PC.deflection_lines, (a2, a2, a2, a2, T.float64, T.float64, a4)),
            ("rods.run_block", D.run_block,
             (a1, a1, T.float64, T.float64, T.int64, T.int64, a1, a2, a2, a2, i8, i8, a1, a2, a3, a3, u8, a3, a3, a3,
              a2, a2))]


def run_rods(m, scenario_path, out_path, progress=None, t_end=None, cancel=None, live=False, start=None,
             block: int = 500, end_uncaptured_at: float = math.inf) -> Path:
    """Plan, writer (channels, the craft body, parts, flexible parts), kernels through run_kernels."""
    n = m.RODS.shape[0]
    T = float(t_end) if t_end is not None else m.duration
    t0 = float(start.t) if start is not None else 0.0
    spo, n_total, meta = run_plan(m, T, t0, start, "rods", SOLVER_VERSION)
    chans = channel_infos(m)
    static, flex = parts(m)
    ns, nz = D.sizes(n)
    w = RunWriter(Path(out_path), meta, chans, ["craft"], [], static, parameters_toml=m.text,
                  state_sizes={"s": ns, "Z": nz, "contact_prev": 1}, live=live, contact_statistics=True,
                  flexible=flex)
    events = {k: ("phase", f"clamp {k} locked (hinge {k})") for k in range(n)}
    k = RodsKernels(D.run_block, m, (m.P, m.RODS, m.TAB), spo, block, (len(chans), 1, 0), events, [],
                    (3 * n, 3 * n + 1))
    return run_kernels(w, k, [], m.output_step, scenario_path, T, t0, n_total, start=start, progress=progress,
                       cancel=cancel, block=block, end_uncaptured_at=end_uncaptured_at)


TABLE_STATE = ("u_Cx_per_component", "u_Cy_per_component", "theta_C", "v_Cx", "v_Cy", "Omega", "phi1", "phi2",
               "alpha1", "alpha2", "beta1", "beta2")


def lock_states(run, names=TABLE_STATE) -> list[tuple[float, dict[str, float]]]:
    """Per clamp lock event of a rods RunFile: (its time, the state at that instant, before the clamp acts), SI units
    and radians; the two frames before the lock extrapolated to its time (the state the paper's Tables 2-3 print)."""
    out = []
    for e in run.events:
        if e.kind != "phase" or not e.text.startswith("clamp "):
            continue
        i = int(np.searchsorted(run.time, e.time - 1e-12)) - 1     # the last frame before the lock
        if i < 1:
            continue
        t0, t1 = run.time[i - 1], run.time[i]
        state = {}
        for n in names:
            a, b = run.channel_at(n, i - 1), run.channel_at(n, i)
            v = b + (b - a) * (e.time - t1) / (t1 - t0)
            state[n] = math.radians(v) if run.channels[n].unit.startswith("deg") else float(v)
        out.append((float(e.time), state))
    return out
