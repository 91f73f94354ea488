"""The snare mechanism type's keys (seed 004): its mechanism file (resources/snare/snare.toml) and its scenario keys.
Sources as in the TOML comments: "seed 004 Lnnn" (a line of the seed's notes), else assumed. The loader
(model.load_snare) takes every range from here and refuses an undeclared key."""
from __future__ import annotations

from solver.schema import param
from solver.scenario_schema import PARAMS as COMMON

SEED = "seed 004 L245"                     # the seed's stated numbers (E, rho, elements, rig, drive)
ORBIT = "seed 004 L300"                    # the on-orbit case
INT = {"kind": "int"}


def _t(file, section, group, rows):
    """Params of one table: rows of (key, unit, range, label, doc[, extra keywords])."""
    return [param(f"{section}.{r[0]}" if section else r[0], file, r[1], r[2], r[3], r[4], group=group,
                  **(r[5] if len(r) > 5 else {})) for r in rows]


def _v(n, names):
    return {"kind": "vector", "size": n, "components": names}


MECHANISM = (
    param("mechanism_type", "mechanism", kind="choice", choices=("snare",), group="Mechanism", label="mechanism type",
          doc="the mechanism type this file describes (the loader dispatches on it)", source="dockmnemo"),
    *_t("mechanism", "cable", "Cables", [
        ("count", "", "[3, 3]", "cables", "cables on equally spaced helices (three)",
         {**INT, "source": "seed 004 L60"}),
        ("elements", "", "[1, 64]", "elements per cable", "ANCF cable elements per cable", {**INT, "source": SEED}),
        ("gauss_points", "", "[3, 4]", "Gauss points", "per element, of the stretch and bending forces (the mass "
         "matrix is exact with 4)", INT),
        ("youngs_modulus", "Pa", "[1e6, 1e12]", "Young's modulus", "the cable's (effective) modulus",
         {"source": SEED}),
        ("density", "kg/m^3", "[1, 1e5]", "density", "the cable's density", {"source": SEED}),
        ("diameter", "m", "[1e-4, 0.05]", "diameter", "cable diameter: EA, EI and the contact section"),
        ("arc_length", "m", "[1e-3, 10]", "arc length", "L_a of the cable's projection on the ring plane (seed eq. "
         "16), between the chord sqrt(3) R_r and the half circle",
         {"check": "sqrt(3) radius < L_a < pi/2 sqrt(3) radius"}),
        ("axial_damping", "s", "[0, 1]", "axial damping", "Kelvin-Voigt time constant of the axial strain"),
        ("motion_damping", "1/s", "[0, 1e3]", "motion damping", "mass-proportional damping of the cables' motion"),
        ("rings_start_angles_deg", "deg", "[-360, 360]", "start angles", "alpha_0 of the three cables",
         {**_v(3, ("1", "2", "3")), "source": "seed 004 L164"}),
    ]),
    *_t("mechanism", "rings", "Rings", [
        ("radius", "m", "[1e-3, 10]", "ring radius", "R_r of the fixed and the rotating ring"),
        ("spacing", "m", "[1e-3, 10]", "ring spacing", "axial distance h between the fixed and the rotating ring"),
        ("sensor_offset", "m", "[0, 10]", "sensor offset", "the force sensor on the axis this far behind the rotating "
         "ring"),
    ]),
    *_t("mechanism", "grapple_rod", "Grapple rod", [
        ("radius", "m", "[1e-4, 1]", "rod radius", "grapple rod radius"),
        ("length", "m", "[1e-3, 10]", "rod length", "from the target adapter's face to the rod's end face"),
        ("lock_depth", "m", "[-10, 10]", "lock depth", "the rod's end face this far behind the rotating ring in the "
         "locked pose (the position error's origin)"),
    ]),
    *_t("mechanism", "contact", "Contact", [
        ("effective_modulus", "Pa", "[1e5, 1e13]", "E*", "Hertz F = 4/3 E* sqrt(R*) delta^1.5 + C delta_dot"),
        ("damping", "N*s/m", "[0, 1e6]", "contact damping", "C of the Hertz law"),
        ("friction", "", "[0, 2]", "friction", "Coulomb mu of the sticking bristle law (solver/friction.py)"),
        ("bristle_stiffness", "N/m", "[1, 1e9]", "bristle stiffness", "tangential spring k_t of the friction bristle "
         "per detection point (the stick stretch is mu F_n / k_t; numerical)"),
        ("bristle_damping", "N*s/m", "[0, 1e4]", "bristle damping", "tangential damping c_t per detection point "
         "(numerical)"),
        ("points_per_element", "", "[1, 32]", "detection points", "contact detection points per element",
         {**INT, "source": "seed 004 L187"}),
    ]),
    *_t("mechanism", "capture", "Capture", [
        ("centred_radius", "m", "[1e-5, 1]", "centred radius", "the rod's end within this of the axis is centred",
         {"source": "seed 004 L276"}),
    ]),
)

SCENARIO = (
    *_t("scenario", "", "Solver", [
        ("step", "s", "[1e-8, 1e-3]", "integration step", "the explicit step (under the cable's stability bound, "
         "docs/snare.md)"),
        ("output_step", "s", "[1e-8, 10]", "output step", "interval of the frames written to the run file",
         {"check": ">= step"}),
        ("duration", "s", "[1e-8, 1e4]", "duration", "end time of the run", {"check": ">= step"}),
    ]),
    *_t("scenario", "drive", "Drive", [
        ("rate_deg_s", "deg/s", "[0, 360]", "ring rate", "the rotating ring's rate omega", {"source": SEED}),
        ("angle_deg", "deg", "[0, 360]", "ring end angle", "the ring stops at this angle", {"source": SEED}),
    ]),
    *_t("scenario", "target", "Target", [
        ("mode", "", "", "target mode", '"suspension" (the rig) or "free" (on orbit, relative to the base)',
         {"kind": "choice", "choices": ("suspension", "free")}),
        ("position_error", "m", "[-10, 10]", "position error", "the target adapter's offset (axial, y, z) from the "
         "locked pose", {**_v(3, ("x", "y", "z")), "source": SEED}),
        ("quaternion", "", "[-1, 1]", "attitude quaternion", "(w, x, y, z) of the target; or euler_deg",
         {**_v(4, ("w", "x", "y", "z")), "required": False, "source": SEED}),
        ("euler_deg", "deg", "[-180, 180]", "attitude", "rotations about x, y, z (roll, pitch, yaw); used where no "
         "quaternion is given", {**_v(3, ("roll", "pitch", "yaw")), "required": False}),
        ("mass", "kg", "[1e-3, 1e7]", "target mass", "the target's mass",
         {"source": ORBIT + " (on orbit; the rig's assumed)"}),
        ("inertia", "kg*m^2", "[1e-6, 1e9]", "target inertia", "principal moments about the centre of mass",
         _v(3, ("x", "y", "z"))),
        ("com_offset", "m", "[-100, 100]", "CoM offset", "centre of mass behind the adapter face along the target's "
         "x axis"),
        ("gravity", "m/s^2", "[0, 100]", "gravity", "along -x (the EE axis vertical on the rig)"),
        ("base_mass", "kg", "[1e-3, 1e9]", "base mass", "the chaser base's mass (free mode only)",
         {"required": False, "source": ORBIT}),
    ]),
    *_t("scenario", "suspension", "Suspension", [
        ("stiffness", "N/m", "[0, 1e9]", "suspension stiffness", "the rig's spring along the EE axis",
         {"required": False, "source": SEED}),
        ("pendulum_length", "m", "[1e-3, 1e3]", "pendulum length", "lateral stiffness m g / l", {"required": False}),
        ("damping_ratio", "", "[0, 10]", "damping ratio", "of the suspension's three springs", {"required": False}),
        ("hang_height", "m", "[0, 100]", "hang height", "hung this far above the centre of mass: tilt stiffness m g d",
         {"required": False}),
    ]),
)

PARAMS = (*MECHANISM, *SCENARIO)
KEEP = ("name", "comment", "mechanism")
NOT_READ = tuple(p.key for p in COMMON if p.key not in KEEP)   # the common keys the snare does not read (refused)
