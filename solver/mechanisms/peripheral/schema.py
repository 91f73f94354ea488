"""The peripheral (IDSS-class) mechanism type's keys: its mechanism file (resources/peripheral/peripheral_idss.toml)
and its own scenario keys. Sources as in the TOML comments: [IDD] IDSS IDD, [NDS], [APAS]; else assumed."""
from __future__ import annotations

from solver.schema import param

IDD, NDS, APAS = "IDSS IDD Rev F", "NASA Docking System Block 1", "APAS (Syromiatnikov)"
INT = {"kind": "int"}


def _t(file, section, group, rows):
    """Params of one table: rows of (key, unit, range, label, doc[, extra keywords])."""
    return [param(f"{section}.{r[0]}" if section else r[0], file, r[1], r[2], r[3], r[4], group=group,
                  **(r[5] if len(r) > 5 else {})) for r in rows]


def _contact(pair, label):
    return _t("mechanism", f"contact.{pair}", "Contact", [
        ("k", "N/m", "(0, 1e9]", f"{label} stiffness", "normal force k*depth + c*depth rate, never pulling"),
        ("c", "N*s/m", "[0, 1e7]", f"{label} damping", "normal damping"),
        ("mu", "", "[0, 2]", f"{label} friction", "Coulomb friction coefficient"),
        ("k_t", "N/m", "(0, 1e10]", f"{label} bristle stiffness", "tangential stiffness of the friction bristle "
         "(solver/friction.py; per point as k): the stick stretch is mu F_n / k_t (numerical)"),
        ("c_t", "N*s/m", "[0, 1e7]", f"{label} bristle damping", "tangential damping of the friction bristle "
         "(damps the sticking mode; numerical)"),
        ("depth_max", "m", "(0, 0.1]", f"{label} depth max", "admissible penetration"),
    ])


MECHANISM = (
    param("mechanism_type", "mechanism", kind="choice", choices=("peripheral",), group="Mechanism",
          label="mechanism type", doc="the mechanism type this file describes (the loader dispatches on it)",
          source="dockmnemo"),
    *_t("mechanism", "interface", "Interface", [
        ("passage_diameter", "m", "(0, 2]", "passage", "transfer passage, petals included", {"source": NDS}),
        ("passage_without_petals", "m", "(0, 2]", "passage w/o petals", "passage without petals", {"source": NDS}),
        ("hook_pairs", "", "[1, 48]", "hook pairs", "hard-capture hook pairs", {**INT, "source": IDD}),
        ("apas89_outer_diameter", "m", "(0, 3]", "APAS-89 outer diameter", "reference only", {"source": APAS}),
        ("apas89_passage", "m", "(0, 2]", "APAS-89 passage", "reference only", {"source": APAS}),
        ("offset", "m", "[0, 0.3]", "interface plane offset",
         "the active interface (hook) plane's distance ahead of the leg base plane; the ring face retracts to it",
         {"default": 0.05}),
        ("face_inner_radius", "m", "(0, 2]", "interface face inner radius", "the hard-capture face and seal around "
         "the guide ring (both halves, at their interface planes): its inner radius", {"default": 0.62}),
        ("face_outer_radius", "m", "(0, 2]", "interface face outer radius", "its outer radius (the hooks on its mean "
         "radius)", {"default": 0.70, "check": "> face_inner_radius"}),
        ("seal_height", "m", "[0, 0.01]", "seal height", "the seal on the active interface face: compressed this far "
         "before the structures meet", {"default": 0.001}),
        ("seal_stiffness", "N/m", "(0, 1e9]", "seal stiffness", "the whole seal's stiffness (the structures' is "
         "contact.interface.k)", {"default": 5.0e5}),
    ]),
    *_t("mechanism", "mass", "Mass", [
        ("active_unit", "kg", "(0, 2000]", "active unit mass", "active docking unit (reference)", {"source": NDS}),
        ("guide_ring", "kg", "(0, 500]", "guide ring mass", "ring, petals and latches (the platform body)"),
        ("guide_ring_inertia_axial", "kg*m^2", "(0, 500]", "ring axial inertia", "about the docking axis"),
        ("guide_ring_inertia_lateral", "kg*m^2", "(0, 500]", "ring lateral inertia", "about a ring diameter"),
    ]),
    *_t("mechanism", "guide_ring", "Guide ring", [
        ("face_inner_radius", "m", "(0, 1.5]", "ring face inner radius", "contact face, inner radius (bore edge)"),
        ("face_outer_radius", "m", "(0, 1.5]", "ring face outer radius", "contact face, outer radius",
         {"check": "> face_inner_radius"}),
        ("inner_edge_radius", "m", "[0, 0.05]", "inner edge rounding", "rounding of the bore edge"),
        ("outer_edge_radius", "m", "[0, 0.05]", "outer edge rounding", "rounding of the outer edge"),
        ("face_axial", "m", "[-0.1, 0.1]", "face axial position", "face position in the ring frame"),
        ("bore_depth", "m", "(0, 0.5]", "ring solid depth", "depth of the ring's solid behind its face (petal "
         "points deeper than this pass)", {"default": 0.08}),
    ]),
    *_t("mechanism", "guide_petals", "Guide petals", [
        ("count", "", "[3, 3]", "petals", "guide petals per half", {**INT, "source": NDS}),
        ("first_angle", "deg", "[-180, 180]", "first petal angle", "about +x from +y"),
        ("height", "m", "(0, 0.5]", "petal height", "petal tip ahead of the ring face"),
        ("root_radius", "m", "(0, 1.5]", "petal root radius", "inner surface radius at the root"),
        ("lean", "deg", "[0, 45]", "petal lean", "petal surface lean toward the axis"),
        ("root_half_angle", "deg", "(0, 60]", "petal root half width", "half angular width at the root"),
        ("tip_half_angle", "deg", "[0, 60]", "petal tip half width", "half angular width at the tip"),
        ("generators", "", "[2, 9]", "petal generators", "straight generators across the petal (at most 9: the "
         "kernel's friction state holds one bristle per petal point)", INT),
        ("thickness", "m", "(0, 0.05]", "petal thickness", "petal plate thickness"),
    ]),
    *_t("mechanism", "hexapod", "Hexapod", [
        ("base_radius", "m", "(0, 2]", "leg base radius", "base attachments' circle radius"),
        ("ring_radius", "m", "(0, 2]", "leg ring radius", "ring attachments' circle radius"),
        ("base_half_angle", "deg", "[0, 60]", "base pair half angle", "base pairs at 0/120/240 deg +- this",
         {"check": "base + ring half angles < 60"}),
        ("ring_half_angle", "deg", "[0, 60]", "ring pair half angle", "ring pairs at 60/180/300 deg +- this"),
        ("neutral_height", "m", "(0, 1]", "neutral height", "ring face ahead of the base plane, ready to capture"),
        ("stroke_retract", "m", "[0, 0.5]", "leg stroke in", "leg shortening from neutral to its stop"),
        ("stroke_extend", "m", "[0, 0.5]", "leg stroke out", "leg lengthening from neutral to its stop"),
    ]),
    *_t("mechanism", "legs", "Legs", [
        ("stiffness", "N/m", "[0, 1e7]", "leg stiffness", "spring about the (commanded) neutral length"),
        ("damping", "N*s/m", "[0, 1e6]", "leg damping", "viscous damper"),
        ("brake_force", "N", "[0, 1e5]", "leg brake force", "electromagnetic brake level (Coulomb) after soft capture"),
        ("brake_before_capture", "N", "[0, 1e5]", "leg brake before capture",
         "brake level until all three latches have caught (the ring compliant while the petals align it); "
         "without it, brake_force throughout", {"default": -1.0}),
        ("brake_stiffness", "N/m", "(0, 1e9]", "leg brake bristle stiffness", "the brake as a sticking slider "
         "(solver/friction.py): its stick stretch is brake / this (numerical)", {"default": 2.0e5}),
        ("brake_damping", "N*s/m", "[0, 1e6]", "leg brake bristle damping", "damps the brake's sticking mode "
         "(numerical)", {"default": 1.0e3}),
        ("drive_stiffness", "N/m", "(0, 1e9]", "retraction servo stiffness", "each leg's servo during the "
         "retraction: force per metre off its path", {"default": 2.0e5}),
        ("drive_damping", "N*s/m", "[0, 1e7]", "retraction servo damping", "each leg's servo during the retraction: "
         "force per m/s off its path's rate", {"default": 1.0e3}),
        ("drive_force", "N", "(0, 1e5]", "retraction servo force limit", "each leg's servo force limit during the "
         "retraction", {"default": 250.0}),
        ("drive_rate_filter", "s", "[0, 1]", "retraction servo rate filter", "time constant of the first-order "
         "filter through which each leg's servo measures its rate (0: the leg rate itself)", {"default": 0.0}),
        ("stop_stiffness", "N/m", "(0, 1e9]", "leg stop stiffness", "end-of-stroke stop"),
        ("retraction_speed", "m/s", "(0, 0.5]", "retraction speed", "leg shortening rate while retracting"),
        ("retraction_delay", "s", "[0, 60]", "retraction delay", "from capture to the start of retraction",
         {"default": 2.0}),
        ("settle_rate", "m/s", "(0, 1]", "settled leg rate", "the retraction starts once every leg's rate has stayed "
         "below this for settle_time (the relative motion attenuated)", {"default": 1.0}),
        ("settle_time", "s", "[0, 60]", "settle time", "how long the legs' rates stay below settle_rate before the "
         "retraction starts", {"default": 0.0}),
        ("settle_max", "s", "[0, 600]", "longest wait to settle", "from capture: the retraction starts then even if "
         "the motion has not settled", {"default": 0.0}),
        ("align_accel", "deg/s^2", "[0, 100]", "alignment acceleration", "the retraction's path is slow enough that "
         "aligning the craft's tilt needs at most this angular acceleration (0: no limit)", {"default": 0.0}),
    ]),
    *_t("mechanism", "soft_capture", "Soft capture", [
        ("active", "", "", "active soft capture", "until all latches have caught, the legs' actuators make the ring "
         "yield to its measured load (an admittance per axis, c x' + k x = load) instead of the legs' springs",
         {"kind": "bool", "default": False}),
        ("axial_stiffness", "N/m", "[0, 1e6]", "admittance axial stiffness", "pulls the ring back to neutral along "
         "the axis", {"default": 0.0}),
        ("axial_damping", "N*s/m", "(0, 1e7]", "admittance axial damping", "takes the craft's approach",
         {"default": 1.0e4}),
        ("lateral_stiffness", "N/m", "[0, 1e6]", "admittance lateral stiffness", "across the axis",
         {"default": 0.0}),
        ("lateral_damping", "N*s/m", "(0, 1e7]", "admittance lateral damping", "across the axis",
         {"default": 1.0e4}),
        ("tilt_stiffness", "N*m/rad", "[0, 1e6]", "admittance tilt stiffness", "about the ring's diameters (and "
         "its axis)", {"default": 0.0}),
        ("tilt_damping", "N*m*s/rad", "(0, 1e7]", "admittance tilt damping", "about the ring's diameters (and its "
         "axis)", {"default": 1.0e3}),
        ("servo_stiffness", "N/m", "(0, 1e9]", "pose servo stiffness", "the actuators follow the admittance's "
         "offset: force per metre off it (times the legs' ring radius squared about the axes)", {"default": 2.0e5}),
        ("servo_damping", "N*s/m", "[0, 1e7]", "pose servo damping", "force per m/s off the offset's rate",
         {"default": 5.0e3}),
        ("force_limit", "N", "(0, 1e5]", "actuator force limit", "each leg's actuator force limit in soft capture",
         {"default": 500.0}),
        ("handover_time", "s", "[0, 60]", "handover time", "after capture the actuators bring the ring back to "
         "neutral along a smooth path of this duration, then the braked legs take over (0: at capture)",
         {"default": 0.0}),
    ]),
    *_t("mechanism", "latches", "Latches", [
        ("count", "", "[3, 3]", "latches", "soft-capture latches, one per petal", INT),
        ("striker_radius", "m", "(0, 0.05]", "striker radius", "striker pin radius"),
        ("striker_length", "m", "(0, 0.2]", "striker length", "striker pin length"),
        ("striker_axial", "m", "[0, 0.3]", "striker axial", "pin ahead of its ring face"),
        ("hook_edge_radius", "m", "(0, 0.05]", "latch edge radius", "latch hook edge as a capsule"),
        ("engage_travel", "m", "(0, 0.1]", "capture tolerance",
         "a latch catches its striker within this distance across the axis; soft capture when all three have"),
        ("capture_gap", "m", "[0, 0.05]", "capture gap", "a latch catches (the ring faces touching) with its "
         "striker within this distance along the axis (the latch's reach)", {"default": 0.005}),
        ("radius", "m", "(0, 1.5]", "latch radius", "latch and striker points' radius on the ring face",
         {"default": 0.54}),
    ]),
    *_t("mechanism", "hooks", "Hooks", [
        ("count", "", "[1, 48]", "hooks", "structural hook pairs", {**INT, "source": IDD}),
        ("preload", "N", "[0, 1e6]", "hook preload", "per hook: pulls the interface faces together, ramped in over "
         "close_time"),
        ("close_time", "s", "[0, 100]", "hook close time", "from the hooks closing to the full preload (hard dock)"),
        ("gap", "m", "(0, 0.05]", "hook gap", "hooks close when every hook point of the active interface face is "
         "within this gap of the passive one (the seal gap, all round)",
         {"default": 0.002}),
    ]),
    *_t("mechanism", "separation_springs", "Separation springs", [
        ("count", "", "[0, 12]", "separation springs", "not modelled in this slice", INT),
        ("force", "N", "[0, 1e5]", "separation spring force", "each at full compression"),
        ("stroke", "m", "[0, 0.2]", "separation spring stroke", "stroke"),
    ]),
    *_t("mechanism", "limits", "Limits", [
        ("soft_capture_tension", "N", "(0, 1e6]", "soft-capture tension limit", "verdict", {"source": IDD}),
        ("soft_capture_bending", "N*m", "(0, 1e6]", "soft-capture bending limit", "verdict", {"source": IDD}),
        ("hard_capture_axial", "N", "(0, 1e7]", "hard-capture axial limit", "reference", {"source": IDD}),
        ("hard_capture_bending", "N*m", "(0, 1e7]", "hard-capture bending limit", "reference", {"source": IDD}),
    ]),
    *_t("mechanism", "initial_conditions", "IDSS envelope", [
        ("closing_speed_min", "m/s", "(0, 1]", "closing speed min", "IDSS envelope", {"source": IDD}),
        ("closing_speed_max", "m/s", "(0, 1]", "closing speed max", "IDSS envelope", {"source": IDD}),
        ("lateral_rate", "m/s", "[0, 1]", "lateral rate", "IDSS envelope", {"source": IDD}),
        ("angular_rate", "deg/s", "[0, 5]", "angular rate", "IDSS envelope", {"source": IDD}),
        ("lateral_misalignment", "m", "[0, 1]", "lateral misalignment", "IDSS envelope", {"source": IDD}),
        ("angular_misalignment", "deg", "[0, 30]", "angular misalignment", "IDSS envelope", {"source": IDD}),
    ]),
    *_contact("petal_petal", "petal/petal"),
    *_contact("petal_ring", "petal/ring"),
    *_contact("ring_ring", "ring/ring"),
    *_contact("latch_striker", "latch/striker"),
    *_contact("interface", "interface faces"),
)

SCENARIO = (
    param("initial.face_gap", "scenario", "m", "[0, 1]", "ring face gap",
          "start distance between the ring faces along the axis (with start_clearance: the largest searched)",
          group="Initial conditions"),
    param("initial.start_clearance", "scenario", "m", "[0, 0.1]", "start clearance",
          "when > 0, the run starts this far before the first contact of the initial pose (found by bisection "
          "below face_gap): the IDSS conditions hold at first contact, whatever the miss and tilt",
          group="Initial conditions", default=0.0),
)

PARAMS = (*MECHANISM, *SCENARIO)
NOT_READ = ()   # common scenario keys this type does not read (not listed, refused if given)
