"""The probe-cone mechanism type's keys: its mechanism files (resources/mechanisms), its geometry file
(resources/geometry/probe_cone.toml) and its scenario [overrides]. Seed 000 gives the structure, not the numbers:
every value is "assumed" unless a source is named."""
from __future__ import annotations

from solver.mechanisms.probe_cone.variants import VARIANTS
from solver.schema import param

S000 = "seed 000 (structure; value assumed)"
FRICTION_LAWS = ("bristle", "ramp")
_BRISTLE = ("; numerical: stiff enough for a sub-mm stick stretch, soft enough for the sticking mode at the step "
            "(no public source gives it)")


def _t(file, section, group, rows):
    """Params of one table: rows of (key, unit, range, label, doc[, extra keywords])."""
    out = []
    for r in rows:
        kw = r[5] if len(r) > 5 else {}
        out.append(param(f"{section}.{r[0]}" if section else r[0], file, r[1], r[2], r[3], r[4], group=group, **kw))
    return out


OPT = {"default": float("nan")}          # a rating left out: its bar in the viewer has no range
INT = {"kind": "int"}

MECHANISM = (
    *_t("mechanism", "", "Mechanism", [
        ("variant", "", "", "variant", "the probe-cone variant (seed 000 §4)",
         {"kind": "choice", "choices": VARIANTS, "source": "seed 000"}),
        ("geometry", "", "", "geometry", "a file in resources/geometry: every part dimension and the contact law",
         {"kind": "string"}),
        ("geometry_changes", "", "", "geometry changes",
         "[geometry_changes] table.key = number: geometry values this mechanism changes", {"kind": "changes",
                                                                                          "required": False}),
    ]),
    *_t("mechanism", "housing", "Housing", [
        ("mass", "kg", "(0, 1000]", "housing mass", "gimballed housing mass (seed 000 item 4)"),
        ("com_distance", "m", "[0, 2]", "housing CoM distance", "CoM from the joint centre along the housing axis"),
        ("inertia_axial", "kg*m^2", "(0, 100]", "housing axial inertia", "about the housing axis"),
        ("inertia_transverse", "kg*m^2", "(0, 100]", "housing transverse inertia", "about a transverse axis through its CoM"),
    ]),
    *_t("mechanism", "probe", "Probe", [
        ("stroke_max", "m", "(0, 3]", "probe stroke", "axial stroke to the mechanical stop",
         {"check": "< probe.length (geometry)"}),
        ("mass", "kg", "(0, 500]", "probe mass", "screw rod and head"),
        ("com_from_head", "m", "[0, 3]", "probe CoM from head", "CoM from the head centre toward the housing"),
        ("inertia_axial", "kg*m^2", "(0, 10]", "probe axial inertia", "about the probe axis"),
        ("inertia_transverse", "kg*m^2", "(0, 100]", "probe transverse inertia", "about a transverse axis through its CoM"),
        ("bending_stiffness", "N*m/rad", "(0, 1e7]", "bending stiffness", "k_phi0 at full extension, scaled by L(0)/L(t)",
         {"source": S000}),
        ("bending_damping", "N*m*s/rad", "[0, 1e5]", "bending damping", "structural damping of the bending joints"),
        ("torsion_stiffness", "N*m/rad", "(0, 1e7]", "torsion stiffness", "probe torsion joint"),
        ("torsion_damping", "N*m*s/rad", "[0, 1e4]", "torsion damping", "structural damping of the torsion joint"),
        ("bending_hysteresis_stiffness", "N*m/rad", "(0, 1e7]", "bending hysteresis stiffness",
         "slider element (piecewise-linear hysteresis)", {"source": S000}),
        ("bending_hysteresis_moment", "N*m", "[0, 1e5]", "bending hysteresis moment", "slip moment of the slider"),
        ("torsion_hysteresis_stiffness", "N*m/rad", "(0, 1e7]", "torsion hysteresis stiffness", "slider element",
         {"source": S000}),
        ("torsion_hysteresis_moment", "N*m", "[0, 1e5]", "torsion hysteresis moment", "slip moment of the slider"),
        ("bending_limit_deg", "deg", "(0, 45]", "bending limit", "bending stop"),
        ("bending_stop_stiffness", "N*m/rad", "(0, 1e8]", "bending stop stiffness", "stiffness at the bending stop"),
        ("torsion_limit_deg", "deg", "(0, 45]", "torsion limit", "anti-rotation stop"),
        ("torsion_stop_stiffness", "N*m/rad", "(0, 1e8]", "torsion stop stiffness", "stiffness at the torsion stop"),
    ]),
    *_t("mechanism", "latches", "Probe", [
        ("spring_stiffness", "N/m", "(0, 1e6]", "latch spring stiffness", "latch spring while the socket neck presses it in"),
    ]),
    *_t("mechanism", "axial_damper", "Axial damper", [
        ("screw_pitch", "m/turn", "(0, 0.2]", "screw pitch", "ball-screw lead; i_Nut = 2*pi/pitch (seed 000 eq. 2.1)"),
        ("nut_inertia_total", "kg*m^2", "(0, 1]", "nut inertia", "I_Nut^tot incl. probe mass and brake rotors"),
        ("screw_friction", "", "[0, 0.5]", "screw friction", "k_NutFr (seed 000 eq. 2.1)"),
        ("screw_friction_speed", "m/s", "(0, 1]", "screw friction speed", "sign() regularization of the screw friction"),
        ("friction_chain_ratio", "", "(0, 100]", "friction chain ratio", "i_Nut,FR"),
        ("transmission_stiffness", "N*m/rad", "(0, 1e6]", "transmission stiffness", "at the friction chain input"),
        ("spring_preload_torque", "N*m", "[0, 1e3]", "spiral spring preload", "spiral spring mechanism preload torque",
         {"default": 0.0}),
        ("spring_stiffness", "N*m/rad", "(0, 1e3]", "spiral spring stiffness", "spiral spring mechanism stiffness",
         {"default": 1.0}),
        ("spring_stroke_turns", "turn", "[0, 1e3]", "spiral spring stroke", "turns to the spring's stop (0: no spring)"),
        ("friction_brake_torque_in", "N*m", "(0, 1e3]", "friction brake, stroking in", "FrT2 torque stroking in",
         {"check": "> fully wound spring torque"}),
        ("friction_brake_torque_out", "N*m", "(0, 1e3]", "friction brake, pulled out", "FrT2 torque pulled out"),
        ("first_brake_stroke_turns", "turn", "[0, 1e3]", "first brake stroke", "FrT1 stroke (0: no first brake)",
         {"default": 0.0, "source": S000}),
        ("first_brake_torque_in", "N*m", "(0, 1e3]", "first brake, stroking in", "FrT1 torque stroking in",
         {"required": False, "check": "<= friction_brake_torque_in; only with first_brake_stroke_turns > 0"}),
        ("first_brake_torque_out", "N*m", "(0, 1e3]", "first brake, pulled out", "FrT1 torque pulled out",
         {"required": False, "check": "<= friction_brake_torque_out; only with first_brake_stroke_turns > 0"}),
        ("structural_damping", "N*m*s/rad", "[0, 1]", "structural damping c_D", "c_D,FR of the friction chain"),
        ("magnetic_brake_ratio", "", "(0, 1e3]", "magnetic brake ratio", "rotor turns per nut turn"),
        ("stroke_stop_stiffness", "N/m", "(0, 1e9]", "stroke stop stiffness", "at stroke_max"),
        ("magnetic_brake_rpm", "rpm", "[0, inf]", "magnetic brake speeds", "rotor speed table, from 0, increasing",
         {"kind": "table"}),
        ("magnetic_brake_torque", "N*m", "[0, inf]", "magnetic brake torques", "torque at each speed, from 0, not decreasing",
         {"kind": "table", "source": "seed 000 eq. 2.2 (values assumed)"}),
        ("magnetic_brake_rpm_max", "rpm", "(0, 1e5]", "magnetic brake rated speed", "full scale of its bar", OPT),
        ("nut_rpm_max", "rpm", "(0, 1e5]", "nut rated speed", "full scale of the nut-rate bar", OPT),
        ("head_force_max", "N", "(0, 1e7]", "head force rating", "full scale of the head's axial force bar", OPT),
    ]),
    *_t("mechanism", "drive", "Cyclogram", [
        ("start_delay", "s", "[0, 1e4]", "drive start delay", "from capture to the drive start"),
        ("retraction_speed", "m/s", "(0, 1]", "retraction speed", "probe retraction at no load"),
        ("stall_force", "N", "(0, 1e6]", "drive stall force", "on the probe at stall"),
    ]),
    *_t("mechanism", "spring_pushers", "Cyclogram", [
        ("count", "", "[0, 16]", "pusher count", "separation pushers on the active ring", INT),
        ("radius", "m", "(0, 3]", "pusher radius", "on the docking ring"),
        ("stroke", "m", "(0, 0.5]", "pusher stroke", "protrusion beyond the active docking plane"),
        ("preload", "N", "[0, 1e5]", "pusher preload", "spring preload of each pusher"),
        ("stiffness", "N/m", "[0, 1e8]", "pusher stiffness", "spring stiffness of each pusher"),
        ("contact_stiffness", "N/m", "(0, 1e9]", "pusher contact stiffness", "at the pusher's stop",
         {"check": "> stiffness"}),
        ("damping", "N*s/m", "[0, 1e6]", "pusher damping", "damping of each pusher", {"default": 0.0}),
    ]),
    *_t("mechanism", "hooks", "Cyclogram", [
        ("close_gap", "m", "(0, 0.05]", "hooks close gap", "docking-plane gap at which the hooks close"),
    ]),
    *_t("mechanism", "alignment_levers", "Cyclogram", [
        ("cam_nut_turns", "turn", "[0, 1e4]", "cam nut turns", "cam table: nut turns, 2..24 values, increasing",
         {"kind": "vector", "required": False}),
        ("cam_lever_angle_deg", "deg", "[-90, 80]", "cam lever angle", "cam table: lever angle at each nut turn",
         {"kind": "vector", "required": False, "check": ">= alignment_lever.angle_retracted (geometry)"}),
    ]),
    *_t("mechanism", "movable_limiter", "Movable limiter", [
        ("mass", "kg", "(0, 100]", "limiter mass", "sliding limiter with its load pads (variant movable_limiter)"),
        ("spring_force_front", "N", "[0, 1e5]", "spring force, front", "the 3 guides together at the front stop",
         {"source": S000}),
        ("spring_force_back", "N", "[0, 1e5]", "spring force, back", "at the end of the stroke",
         {"check": ">= spring_force_front", "source": S000}),
        ("stroke", "m", "(0, 1]", "limiter stroke", "front stop to the retracted end position"),
        ("stop_stiffness", "N/m", "(0, 1e9]", "limiter stop stiffness", "front and end stops"),
        ("damping", "N*s/m", "[0, 1e5]", "limiter damping", "guide friction as viscous damping"),
    ]),
    *_t("mechanism", "lateral_damper", "Lateral damper", [
        ("spring_places_deg", "deg", "[-360, 360]", "spring mechanism places", "around the probe axis (y toward z)",
         {"kind": "vector", "size": 2, "components": ("1", "2")}),
        ("brake_places_deg", "deg", "[-360, 360]", "magnetic brake places", "around the probe axis (y toward z)",
         {"kind": "vector", "size": 2, "components": ("1", "2")}),
        ("coil_stroke", "m", "(0, 0.2]", "coil spring stroke", "to the coil's stop"),
        ("belleville_stroke", "m", "(0, 0.2]", "Belleville stroke", "then the mechanical stop"),
        ("coil_preload", "N", "[0, 1e5]", "coil spring preload", "soft coil spring preload"),
        ("belleville_preload", "N", "[0, 1e6]", "Belleville preload", "stiff Belleville stack preload"),
        ("coil_stiffness", "N/m", "(0, 1e8]", "coil spring stiffness", "soft coil spring"),
        ("belleville_stiffness", "N/m", "(0, 1e9]", "Belleville stiffness", "stiff Belleville stack"),
        ("spring_stop_stiffness", "N/m", "(0, 1e10]", "spring stop stiffness", "at the spring mechanism's stop"),
        ("spring_attach_distance", "m", "(0, 2]", "spring attach distance", "from the joint centre"),
        ("spring_attach_radius", "m", "(0, 1]", "spring attach radius", "strut end on the housing"),
        ("spring_base_radius", "m", "(0, 2]", "spring base radius", "strut end on the fixed base",
         {"check": "> spring_attach_radius"}),
        ("rod_mass", "kg", "(0, 100]", "strut mass", "strut moving mass (A_k of seed 000 eq. 2.4)"),
        ("spring_base_axial_offset", "m", "[-1, 1]", "strut base axial offset", "strut base moved toward the base",
         {"default": 0.0, "source": "seed 000 fig. 9b (value assumed)"}),
        ("brake_attach_distance", "m", "(0, 2]", "brake attach distance", "from the joint centre"),
        ("brake_attach_radius", "m", "(0, 1]", "brake attach radius", "connecting rod end on the housing"),
        ("crank_radius", "m", "(0, 1]", "crank radius", "magnetic brake crank"),
        ("rod_length", "m", "(0, 1]", "connecting rod length", "crank pin to housing"),
        ("brake_gear_ratio", "", "(0, 1e3]", "magnetic brake gear ratio", "rotor turns per crank turn"),
        ("crank_inertia", "kg*m^2", "(0, 10]", "crank inertia", "crank inertia"),
        ("rotor_inertia", "kg*m^2", "(0, 1]", "rotor inertia", "magnetic brake rotor inertia"),
        ("brake_rod_tilt_deg", "deg", "[-60, 60]", "brake rod tilt", "connecting rods turned toward the base",
         {"default": 0.0, "source": "seed 000 fig. 9b (value assumed)"}),
        ("hysteresis_stiffness", "N/m", "(0, 1e9]", "hysteresis stiffness", "slider element"),
        ("hysteresis_force", "N", "[0, 1e5]", "hysteresis slip force", "slip force at zero load"),
        ("hysteresis_ratio", "", "[0, 1]", "hysteresis ratio", "slip force grows with the spring force by this ratio"),
        ("spring_damping", "N*s/m", "[0, 1e6]", "spring mechanism damping", "structural damping"),
        ("crank_limit_deg", "deg", "(0, 90]", "crank limit", "stops in the brake chain", {"source": "seed 000 fig. 6b"}),
        ("crank_stop_stiffness", "N*m/rad", "(0, 1e8]", "crank stop stiffness", "at the crank stops"),
        ("brake_rpm", "rpm", "[0, inf]", "brake speeds", "rotor speed table, from 0, increasing", {"kind": "table"}),
        ("brake_torque", "N*m", "[0, inf]", "brake torques", "rotor torque at each speed, from 0, not decreasing",
         {"kind": "table"}),
        ("brake_rpm_max", "rpm", "(0, 1e5]", "brake rated speed", "full scale of the rotors' bars", OPT),
    ]),
)

_FRICTION = "friction coefficient for the pairs {} (instead of the geometry file's mu)"
OVERRIDES = tuple(_t("scenario", "overrides", "Overrides", [
    ("head_friction", "", "[0, 1]", "head on cone / socket", _FRICTION.format("head_cone, head_socket"),
     {"required": False}),
    ("latch_friction", "", "[0, 1]", "latch on socket stop", _FRICTION.format("latch_slot, latch_stop"),
     {"required": False}),
    ("limiter_friction", "", "[0, 1]", "limiter on cone", _FRICTION.format("limiter_cone, load_pad_cone"),
     {"required": False}),
    ("roller_friction", "", "[0, 1]", "roller on cone", _FRICTION.format("roller_cone"), {"required": False}),
    ("ring_friction", "", "[0, 1]", "ring on ring", _FRICTION.format("ring_ring"), {"required": False}),
    ("max_depth", "m", "(0, 1]", "max contact depth", "depth_max of every contact pair",
     {"required": False, "check": "<= probe_head.radius"}),
    ("drive_delay", "s", "[0, 1e4]", "drive start delay", "test variants: drive.start_delay", {"required": False}),
    ("retraction_speed", "m/s", "(0, 1]", "retraction speed", "test variants: drive.retraction_speed",
     {"required": False}),
    ("friction", "", "", "friction law", "A/B of the friction law: the geometry's [contact] friction for this run",
     {"kind": "choice", "choices": FRICTION_LAWS, "required": False}),
]))

GEOMETRY = (
    *_t("geometry", "receiving_cone", "Cone and socket", [
        ("entrance_radius", "m", "(0, 2]", "cone entrance radius", "receiving cone radius at the docking plane"),
        ("depth", "m", "(0, 2]", "cone depth", "entrance plane to socket mouth"),
        ("entry_edge_radius", "m", "(0, 0.1]", "entry edge radius", "rounding of the entry edge (torus tube)"),
        ("flange_radius", "m", "(0, 5]", "flange radius", "flat face from the entry edge out to the docking ring"),
    ]),
    *_t("geometry", "socket", "Cone and socket", [
        ("radius", "m", "(0, 2]", "socket radius", "socket bore radius", {"check": "<= receiving_cone.entrance_radius"}),
        ("depth", "m", "(0, 1]", "socket depth", "mouth to bottom"),
        ("mouth_edge_radius", "m", "(0, 0.1]", "socket mouth edge radius", "rounding of the cone/socket edge"),
    ]),
    *_t("geometry", "socket_slots", "Cone and socket", [
        ("count", "", "[1, 16]", "slot count", "tapered slots in the socket bore (the solver models 4)",
         {**INT, "source": "seed 000 fig. 4"}),
        ("first_angle", "deg", "[-360, 360]", "first slot angle", "about +x from +y", {"check": "= latches.first_angle"}),
        ("stop_below_mouth", "m", "(0, 1]", "stop below mouth", "stop face below the socket mouth",
         {"check": "<= socket.depth"}),
        ("length", "m", "(0, 1]", "slot length", "along -x from the stop face", {"check": "<= socket.depth"}),
        ("width_at_stop", "m", "(0, 0.2]", "slot width at stop", "narrow end, where latches bear on the stops"),
        ("width_far", "m", "(0, 0.2]", "slot width far", "wide end deeper in the socket"),
        ("radial_depth", "m", "(0, 1]", "slot radial depth", "slot floor radius = socket radius + radial_depth"),
    ]),
    *_t("geometry", "probe_head", "Probe and latches", [
        ("radius", "m", "(0, 2]", "head radius", "probe head sphere", {"check": "< socket.radius"}),
    ]),
    *_t("geometry", "latches", "Probe and latches", [
        ("count", "", "[1, 16]", "latch count", "latches on the head (the solver models 4)",
         {**INT, "source": "seed 000"}),
        ("first_angle", "deg", "[-360, 360]", "first latch angle", "about +x from +y"),
        ("tip_x", "m", "[-0.5, 0.5]", "latch tip x", "tip behind the head centre (+x)"),
        ("tip_radius_retracted", "m", "(0, 1]", "tip radius retracted", "tip distance from the axis when retracted",
         {"check": "+ tip_sphere_radius < socket.radius"}),
        ("tip_radius_extended", "m", "(0, 1]", "tip radius extended", "tip distance from the axis when extended",
         {"check": "past the bore, inside the slots"}),
        ("tip_sphere_radius", "m", "[0, 0.1]", "tip sphere radius", "rounding of the latch tip"),
    ]),
    *_t("geometry", "housing", "Housing and probe", [
        ("length", "m", "(0, 2]", "housing length", "gimbal centre to the housing exit (probe bending joint)"),
        ("radius", "m", "(0, 1]", "housing radius", "drawn radius of the housing"),
        ("gimbal_offset", "m", "[-1, 1]", "gimbal offset", "gimbal centre behind the active docking plane"),
    ]),
    *_t("geometry", "probe", "Housing and probe", [
        ("length", "m", "(0, 3]", "probe length", "free length L_Pr(0): housing exit to head centre, fully extended"),
        ("radius", "m", "(0, 1]", "probe rod radius", "drawn radius of the rod", {"check": "<= probe_head.radius"}),
    ]),
    *_t("geometry", "limiter", "Limiter and levers", [
        ("radius_front", "m", "(0, 2]", "limiter front radius", "limiter frustum, front"),
        ("radius_back", "m", "(0, 2]", "limiter back radius", "limiter frustum, back rim"),
        ("length", "m", "(0, 1]", "limiter length", "frustum length"),
        ("back_rim_x_in_housing", "m", "[-2, 2]", "limiter back rim x", "back rim position in the housing frame"),
        ("rim_edge_radius", "m", "(0, 0.1]", "rim edge radius", "rounding of the back rim (torus tube)"),
        ("bisection_steps", "", "[0, 10]", "rim bisection steps", "2^(N+1) rim spheres / generators",
         {**INT, "source": "seed 003 (dichotomy)"}),
    ]),
    *_t("geometry", "load_pads", "Limiter and levers", [
        ("count", "", "[0, 32]", "load pad count", "pads around the limiter", {**INT, "source": S000}),
        ("first_angle", "deg", "[-360, 360]", "first pad angle", "about +x from +y"),
        ("at_fraction", "", "[0, 1]", "pad position", "along the limiter generator, front (0) to back (1)"),
        ("radius", "m", "(0, 1]", "pad crown radius", "crown radius of the pad facing"),
        ("height", "m", "(0, 1]", "pad height", "pad protrusion above the limiter cone"),
    ]),
    *_t("geometry", "alignment_lever", "Limiter and levers", [
        ("count", "", "[0, 16]", "lever count", "one master and two slave levers", {**INT, "source": "seed 000 fig. 2c"}),
        ("first_angle", "deg", "[-360, 360]", "first lever angle", "about +x from +y"),
        ("pivot_x", "m", "[-2, 2]", "lever pivot x", "pivot plane in the housing frame"),
        ("pivot_radius", "m", "(0, 2]", "lever pivot radius", "pivot distance from the axis"),
        ("length", "m", "(0, 2]", "lever length", "pivot to roller centre"),
        ("angle_retracted", "deg", "[-90, 90]", "lever angle retracted", "from the probe direction, folded in"),
        ("angle_extended", "deg", "[-90, 90]", "lever angle extended", "from the probe direction, extended"),
        ("roller_radius", "m", "(0, 0.5]", "roller radius", "roller outer radius"),
        ("roller_tyre_radius", "m", "(0, 0.5]", "roller tyre radius", "tube radius of the roller torus"),
        ("bisection_steps", "", "[0, 10]", "roller bisection steps", "spheres per roller torus",
         {**INT, "source": "seed 003 fig. 7"}),
    ]),
    *_t("geometry", "docking_ring", "Limiter and levers", [
        ("inner_radius", "m", "(0, 5]", "ring inner radius", "docking ring"),
        ("outer_radius", "m", "(0, 5]", "ring outer radius", "docking ring"),
    ]),
    *_t("geometry", "contact", "Contact law", [
        ("friction", "", "", "friction law", '"bristle": elasto-plastic bristle per pair, sticks (docs/solver.md '
         'Friction); "ramp": Coulomb with a linear ramp below slip_speed, creeps (the old law, for A/B). A numerical '
         'choice: the bristle holds a part still below mu N, the ramp cannot',
         {"kind": "choice", "choices": FRICTION_LAWS, "default": "bristle"}),
    ]),
    *(p for g, w in (("head_cone", "head on cone"), ("head_socket", "head in socket"), ("latch", "latch on stop"),
                     ("latch_slot", "latch in slot"), ("limiter", "limiter on cone"), ("roller", "roller on cone"),
                     ("ring", "ring on ring"))
      for p in _t("geometry", f"contact.{g}", "Contact law", [
          ("k", "N/m", "(0, 1e10]", f"{w}: stiffness", f"normal stiffness of the {g} pairs"),
          ("c", "N*s/m", "[0, 1e8]", f"{w}: damping", f"normal damping of the {g} pairs"),
          ("mu", "", "[0, 2]", f"{w}: friction", f"Coulomb friction of the {g} pairs"),
          ("slip_speed", "m/s", "(0, 10]", f"{w}: slip speed", 'stick ramp below it (numerical; friction = "ramp")'),
          ("k_t", "N/m", "(0, 1e9]", f"{w}: bristle stiffness", "tangential stiffness of the friction bristle: the "
           "stick stretch is mu F_n / k_t" + _BRISTLE, {"check": "its sticking mode in solver.step's check"}),
          ("c_t", "N*s/m", "[0, 1e6]", f"{w}: bristle damping", "tangential damping of the friction bristle "
           "(damps the sticking mode)" + _BRISTLE, {"check": "its sticking mode in solver.step's check"}),
          ("depth_max", "m", "(0, 1]", f"{w}: depth max", "a deeper contact aborts the run (seed 003 premise 5)"),
      ])),
)

SCENARIO = (
    param("initial.head_start_x", "scenario", "m", "[-inf, 1]", "head start x",
          "start position of the probe head on the cone axis (0 = cone entrance plane, +x toward the ship)",
          group="Initial conditions", check=">= head at the socket bottom"),
)

_APP = "the rod chain on the active craft (docs/rods.md: two-way coupled with the craft's motion)"
APPENDAGE = tuple(_t("scenario", "appendage", "Appendage", [
    ("name", "", "", "appendage name", "prefix of its channels and drawn rods (e.g. wing: wing_phi1, wing_M_root1)",
     {"kind": "string", "required": False}),
    ("system", "", "", "rod system", "a rods type's rod-system file (rods.count, length, mass_per_length, EI, "
     "node_mass; hinges): a name in resources/rods, or \"x.toml\" next to the scenario; " + _APP,
     {"kind": "string", "required": False}),
    ("root", "m", "[-100, 100]", "root", "hinge 0 in the active docking frame (as active_craft.com)",
     {"kind": "vector", "size": 3, "components": ("x", "y", "z"), "required": False}),
    ("axis", "", "[-1, 1]", "chord axis", "direction of chord angle 0 (the deployed chain) in the active docking frame",
     {"kind": "vector", "size": 3, "components": ("x", "y", "z"), "required": False}),
    ("normal", "", "[-1, 1]", "plane normal", "normal of the chain's plane (chord angles turn about it), "
     "at right angles to axis", {"kind": "vector", "size": 3, "components": ("x", "y", "z"), "required": False}),
    ("phi", "rad", "[-3.15, 3.15]", "chord angles", "initial chord angles (one per rod; default 0: deployed)",
     {"kind": "vector", "required": False}),
    ("formulation", "", "", "formulation", "general (every rod rate) or reduced (quasi-static bending), seed 002",
     {"kind": "choice", "choices": ("general", "reduced"), "default": "general"}),
]))

PARAMS = (*SCENARIO, *OVERRIDES, *APPENDAGE, *MECHANISM, *GEOMETRY)
