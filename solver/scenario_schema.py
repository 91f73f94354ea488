"""Scenario keys common to every mechanism type: run, spacecraft, initial conditions, solver settings."""
from __future__ import annotations

from solver.schema import param

RUN, PASSIVE, ACTIVE, IC, SOLVER = "Run", "Passive craft", "Active craft", "Initial conditions", "Solver"


def _s(key, unit="", rng="", label="", doc="", **kw):
    return param(key, "scenario", unit, rng, label, doc, **kw)


def _craft(t: str, group: str, who: str, fixed: bool):
    out = [_s(f"{t}.fixed", kind="bool", default=False, group=group, label=f"{who} fixed",
              doc="true: a test stand, the craft does not move (then mass, inertia and com are left out)")] if fixed else []
    return out + [
        _s(f"{t}.mass", "kg", "[1, 1e7]", f"{who} mass", f"{who} mass (assumed limits: no craft docks below 1 kg)",
           group=group),
        _s(f"{t}.inertia", "kg*m^2", "[1e-3, 1e10]", label=f"{who} inertia", kind="inertia", group=group,
           doc=f"{who} inertia tensor about its CoM, 3x3, symmetric, positive definite, triangle inequality; the range "
               "bounds its principal moments (assumed)"),
        _s(f"{t}.com", "m", "[-100, 100]", f"{who} CoM", kind="vector", size=3, components=("x", "y", "z"), group=group,
           doc=f"{who} centre of mass in its docking frame (x along the docking axis)"),
    ]


PARAMS = (
    _s("name", kind="string", group=RUN, label="name", doc="scenario name, stored in the run file"),
    _s("comment", kind="string", default="", group=RUN, label="comment", doc="one line shown with the run"),
    _s("mechanism", kind="string", group=RUN, label="mechanism",
       doc="the mechanism file: a name from the type's mechanisms folder, or \"x.toml\" next to the scenario "
           "(an edited copy)"),
    *_craft("passive_craft", PASSIVE, "passive craft", True),
    *_craft("active_craft", ACTIVE, "active craft", False),
    _s("initial.closing_speed", "m/s", "(0, 1]", "closing speed", "closing speed of the active craft along -x",
       group=IC, source="seed 000 §3 (envelope values assumed)"),
    _s("initial.lateral_velocity", "m/s", "[-0.3, 0.3]", "lateral velocity", "lateral velocity (y, z)",
       components=("y", "z"), kind="vector", size=2, default=[0.0, 0.0], group=IC),
    _s("initial.lateral_miss", "m", "[-0.5, 0.5]", "lateral miss", "offset (y, z) of the active docking-plane centre",
       components=("y", "z"), kind="vector", size=2, default=[0.0, 0.0], group=IC),
    _s("initial.angular_miss_deg", "deg", "[-15, 15]", "angular miss", "attitude miss (roll, pitch, yaw)",
       components=("roll", "pitch", "yaw"), kind="vector", size=3, default=[0.0, 0.0, 0.0], group=IC),
    _s("initial.angular_rate_deg_s", "deg/s", "[-5, 5]", "angular rate", "angular rate (x, y, z) of the active craft",
       components=("x", "y", "z"), kind="vector", size=3, default=[0.0, 0.0, 0.0], group=IC),
    _s("solver.step", "s", "(0, 0.01]", "integration step", "the integrator's step (the type's docs name its method)",
       group=SOLVER,
       check="divides output_step; omega_max*step <= 1, decay*step <= 2"),
    _s("solver.output_step", "s", "(0, 1]", "output step", "interval of the frames written to the run file",
       default=1e-3, group=SOLVER),
    _s("solver.duration", "s", "(0, 1e4]", "duration", "end time of the run (hard dock ends it earlier)",
       group=SOLVER),
)
