"""The rods mechanism type's keys (seed 002): its rod-system file (resources/rods/rods_*.toml) and its own scenario
keys; the loader (model.py) reads its key sets and ranges from here. Sources: [002] seed 002 (Russkikh); else
assumed."""
from __future__ import annotations

from solver.schema import param

SEED = "seed 002 (Russkikh)"
CRAFT, IC, CONTROLS, CLAMPS, SOLVER = "Spacecraft", "Initial conditions", "Controls", "Clamps", "Solver"


def _m(key, unit, rng, label, doc, **kw):
    return param(key, "mechanism", unit, rng, label, doc, group=kw.pop("group", "Rods"), **kw)


def _s(key, unit, rng, label, doc, **kw):
    return param(key, "scenario", unit, rng, label, doc, **kw)


PER_ROD = {"kind": "vector", "source": SEED}       # one number per rod (rods.count of them)
MECHANISM = (
    param("mechanism_type", "mechanism", kind="choice", choices=("rods",), group="Mechanism",
          label="mechanism type", doc="the mechanism type this file describes (the loader dispatches on it)",
          source="dockmnemo"),
    _m("rods.count", "", "[1, 8]", "rods", "n: rods in the chain, hinge 0 on the craft", kind="int", source=SEED),
    _m("rods.length", "m", "[1e-3, 1e3]", "rod length", "l_k per rod", **PER_ROD),
    _m("rods.mass_per_length", "kg/m", "[0, 1e5]", "mass per length", "m_k per rod", **PER_ROD),
    _m("rods.EI", "N*m^2", "[1e-6, 1e12]", "bending stiffness", "EI_k per rod", **PER_ROD),
    _m("rods.node_mass", "kg", "[0, 1e5]", "node mass", "mu_k, lumped at rod k's far node", **PER_ROD),
    _m("hinges.stiffness", "N*m", "[0, 1e12]", "hinge stiffness", "kappa_{k-1} at rod k's root (per rod)",
       group="Hinges", **PER_ROD),
    _m("hinges.damping", "N*m*s", "[0, 1e12]", "hinge damping", "nu_{k-1} at rod k's root (per rod)",
       group="Hinges", **PER_ROD),
    _m("hinges.range_deg", "deg", "[1e-3, 360]", "hinge range", "a hinge-angle device bar's full scale (per rod)",
       group="Hinges", kind="vector"),
    _m("hinges.moment_range", "N*m", "[1e-6, 1e12]", "hinge moment range",
       "a hinge-moment device bar's full scale (per rod)", group="Hinges", kind="vector"),
    _m("attachment.position", "m", "[-1e3, 1e3]", "attachment", "hinge 0 (x0, y0) in the craft's axes from its c.g.",
       group="Hinges", kind="vector", size=2, components=("x", "y"), source=SEED),
)

SCENARIO = (
    _s("craft.mass", "kg", "[1e-3, 1e9]", "craft mass", "M0, the rigid craft without rods", group=CRAFT, source=SEED),
    _s("craft.inertia", "kg*m^2", "[1e-9, 1e12]", "craft inertia", "J0 about its c.g. (the rods' plane normal)",
       group=CRAFT, source=SEED),
    _s("craft.half_size", "m", "[1e-3, 1e3]", "craft half size", "half width and height of the drawn outline",
       kind="vector", size=2, components=("x", "y"), group=CRAFT),
    _s("initial.phi", "rad", "[-1e9, 1e9]", "chord angles", "phi_k from the craft's x axis (per rod)", kind="vector",
       group=IC, source=SEED),
    _s("initial.phi_rate", "rad/s", "[-1e9, 1e9]", "chord rates", "phi_k rates (per rod); zero if left out",
       kind="vector", group=IC, required=False),
    _s("initial.Omega", "rad/s", "[-1e3, 1e3]", "craft rate", "Omega at t = 0", group=IC, default=0.0, source=SEED),
    _s("initial.v_C", "m/s", "[-1e9, 1e9]", "craft velocity", "c.g. velocity in the craft's axes at t = 0",
       kind="vector", size=2, components=("x", "y"), group=IC, default=[0.0, 0.0]),
    _s("controls.times", "s", "[0, 1e5]", "control times", "rows of the time table, increasing (each row held to "
       "the next)", kind="vector", group=CONTROLS, required=False),
    _s("controls.X_C", "N", "[-1e9, 1e9]", "force X_C", "per row, craft axes; zero if left out", kind="vector",
       group=CONTROLS, required=False, source=SEED),
    _s("controls.Y_C", "N", "[-1e9, 1e9]", "force Y_C", "per row, craft axes; zero if left out", kind="vector",
       group=CONTROLS, required=False, source=SEED),
    _s("controls.M_C", "N*m", "[-1e9, 1e9]", "moment M_C", "per row; zero if left out", kind="vector",
       group=CONTROLS, required=False, source=SEED),
    _s("clamps.enabled", "", "", "clamps", "lock each hinge at its stop", kind="bool", group=CLAMPS, default=False),
    _s("clamps.rule", "", "", "lock rule", "band: |angle| < tolerance (the text); crossing: the angle crosses zero "
       "(the paper's times); frames: crossed, checked at the output frames only", kind="choice",
       choices=("band", "crossing", "frames"), group=CLAMPS, default="band"),
    _s("clamps.lock", "", "", "lock", "spring: the clamp's spring takes hold (the paper's); plastic: the hinge's "
       "rate absorbed at once, momentum kept, then the spring holds", kind="choice", choices=("spring", "plastic"),
       group=CLAMPS, default="spring"),
    _s("clamps.tolerance", "rad", "[0, 1]", "lock tolerance", "the band rule's |angle|", group=CLAMPS, source=SEED),
    _s("clamps.stiffness", "N*m", "[0, 1e12]", "clamp stiffness", "a locked hinge's stiffness", group=CLAMPS,
       source=SEED),
    _s("clamps.damping", "N*m*s", "[0, 1e12]", "clamp damping", "a locked hinge's damping", group=CLAMPS,
       source=SEED),
    _s("solver.formulation", "", "", "formulation", "general (3n+3 equations) or reduced (n+3, quasi-static "
       "bending)", kind="choice", choices=("general", "reduced"), group=SOLVER, default="general", source=SEED),
)

PARAMS = (*MECHANISM, *SCENARIO)
NOT_READ = ("passive_craft.fixed", "passive_craft.mass", "passive_craft.inertia", "passive_craft.com",
            "active_craft.mass", "active_craft.inertia", "active_craft.com", "initial.closing_speed",
            "initial.lateral_velocity", "initial.lateral_miss", "initial.angular_miss_deg",
            "initial.angular_rate_deg_s")
