"""Berthing by a space manipulator (seed 001 ch. VIII): a 7-joint SSRMS-like arm with flexible, servoed, braked drives
carries MRM-1's probe into the station's receptacle (1 mm radial clearance), scripted or with an operator in the loop.
Its solver: model.py (TOML -> arrays), dynamics.py (kernels on solver/core and solver/contact), simulate.py."""
from __future__ import annotations

import tomllib
from pathlib import Path

from solver.mechanisms.base import (BarGroup, DeviceLayout, MechanismType, OperatorSession, Readouts, RideCamera, SceneSpec,
                                   SummaryOutput)

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "berthing"
JOINTS = tuple(f"joint_{j + 1}" for j in range(7))
TORQUES = tuple(f"tau_{j + 1}" for j in range(7))


def _ride_camera() -> RideCamera:
    """The end effector's camera (the last link, which holds the payload) from the arm TOML's [camera] table."""
    cam = tomllib.loads((RESOURCES / "ssrms_mrm1.toml").read_text())["camera"]
    return RideCamera(f"link_{len(JOINTS)}", tuple(cam["eye"]), tuple(cam["target"]), tuple(cam["up"]),
                      "3D view from a camera on the end effector, looking along the probe")


def _build_model(scenario_path: Path):
    from solver.mechanisms.berthing.model import load_berthing
    return load_berthing(scenario_path)


def _run(model, scenario_path, out_path, **options):
    from solver.mechanisms.berthing.simulate import run_berthing
    return run_berthing(model, scenario_path, out_path, **options)


def _state_sizes() -> dict[str, int]:
    from solver.mechanisms.berthing import model as M
    return {"s": M.NS, "Z": M.NZ}


def _kernel_units(model) -> tuple[list, int]:
    from solver.mechanisms.berthing.simulate import kernel_units
    return kernel_units(model), 0


def _operator_settings() -> dict:
    """The arm TOML's [operator] table (hand controllers: dead zone, full-deflection rates)."""
    return tomllib.loads((RESOURCES / "ssrms_mrm1.toml").read_text())["operator"]


def _operator_link(model, speed: float = 1.0):
    """The plain link of a session of `model`: full deflection as its [operator] table says."""
    import math

    from solver.mechanisms.berthing.simulate import OperatorLink
    op = model.geometry["operator"]
    return OperatorLink(float(op.get("translation", 0.03)), math.radians(float(op.get("rotation_deg_s", 0.3))),
                        speed=speed)


def _channels(model) -> list:
    from solver.mechanisms.berthing.simulate import channel_infos
    return channel_infos(model)


def _pairs(model) -> list:
    from solver.mechanisms.berthing.simulate import PAIRS
    return list(PAIRS)


BERTHING = MechanismType(
    name="berthing",
    title="berthing by a space manipulator (SSRMS-like arm, MRM-1)",
    variants=("ssrms_mrm1",),
    run_variants=("ssrms_mrm1",),
    model_builder=_build_model,
    channel_lister=_channels,
    runner=_run,
    state_sizes=_state_sizes,
    kernel_lister=_kernel_units,
    part_colors={"arm": (0.84, 0.96, 0.84), "payload": (0.78, 0.84, 0.92), "probe": (1.0, 0.0, 1.0),
                 "cone": (0.98, 0.92, 0.66)},
    thin_kinds=("payload",),
    scene=SceneSpec("side view (x-z plane)", None, ("link_7",), ride_camera=_ride_camera()),
    layout=DeviceLayout(None, (
        BarGroup("joints", ("arm joints (+-270 deg)", "joints"), channels=JOINTS),
        BarGroup("torques", ("gear torques", "torques"), channels=TORQUES, share=0.3),
        BarGroup("probe", ("probe in the receptacle", "probe"), channels=("insertion", "lateral_error", "tilt"),
                 share=0.2),
    )),
    readouts_before=Readouts("PROBE rel. RECEPTACLE", ("insertion", "lateral_error", "tilt"),
                             ("contact_force", "manipulability", "brakes")),
    readouts_after=Readouts("PROBE rel. RECEPTACLE", ("insertion", "lateral_error", "tilt"),
                            ("contact_force", "manipulability", "brakes")),
    base_loads=("contact_axial", "contact_lateral", "contact_force"),
    default_plots=("contact_force", "tau_4", "lateral_error"),
    criteria_file=RESOURCES / "criteria.toml",
    scenarios_dir=RESOURCES / "scenarios",
    pair_lister=_pairs,
    summary_outputs=(SummaryOutput("max_joint_torque", "N*m", "max |gear torque| (seven joints)", "peak", TORQUES,
                                   key=True),),
    operator=OperatorSession(RESOURCES / "scenarios" / "mrm1_operator.toml", _operator_settings, _operator_link, _run),
)
