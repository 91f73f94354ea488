"""The cable-snare end effector capturing a grapple rod (seed 004): three ANCF cables between a fixed and a rotating
ring, cable-rod contact, the target on the rig's suspension or free on orbit. Solver: model.py (TOML -> arrays),
dynamics.py (the kernel on solver.core.ancf_cable and solver.contact.friction, the engine's bristle), simulate.py (run file)."""
from __future__ import annotations

from pathlib import Path

from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType, Readouts, SceneSpec, SummaryOutput
from solver.mechanisms.snare.sketch import SKETCH as SNARE_SKETCH

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "snare"
TENSIONS = tuple(f"tension_{e}_{i}" for e in ("fixed", "rotating") for i in (1, 2, 3))

LAYOUT = DeviceLayout(SNARE_SKETCH, (
    BarGroup("drive", ("ring angle and motor torque", "drive"), channels=("ring_angle", "motor_torque"), share=0.2),
    BarGroup("tensions", ("cable tensions at both ends", "tensions"), channels=TENSIONS),
    BarGroup("target", ("target offsets", "target"), channels=("radial_offset", "target_x", "target_y", "target_z",
                                                               "tilt")),
    BarGroup("contact", ("cables on the rod", "contact"), channels=("contact_force_1", "contact_force_2",
                                                                    "contact_force_3"), share=0.2),
))
TARGET = Readouts("ROD END rel. EE AXIS", ("radial_offset", "target_x", "target_y", "target_z"),
                  ("tilt", "ring_angle", "cables_in_contact"))


def _build_model(scenario_path: Path):
    from solver.mechanisms.snare.model import load_snare
    return load_snare(scenario_path)


def _run(model, scenario_path, out_path, **options):
    from solver.mechanisms.snare.simulate import run_snare
    return run_snare(model, scenario_path, out_path, **options)


def _state_sizes() -> dict[str, int]:
    from solver.mechanisms.snare import dynamics as D
    return {"s": D.state_size(10, 4), "Z": D.NZ}


def _channels(model) -> list:
    from solver.mechanisms.snare.simulate import channel_infos
    return channel_infos(model)


def _kernel_units(model) -> tuple[list, int]:
    from solver.mechanisms.snare.simulate import kernel_units
    return kernel_units(model), 0


def _pairs(model) -> list:
    from solver.mechanisms.snare.simulate import PAIRS
    return list(PAIRS)


SNARE = MechanismType(
    name="snare",
    title="cable-snare end effector (seed 004)",
    variants=("three_cable",),
    run_variants=("three_cable",),
    model_builder=_build_model,
    channel_lister=_channels,
    runner=_run,
    state_sizes=_state_sizes,
    part_colors={"fixed_ring": (0.52, 0.58, 0.66), "rotating_ring": (0.98, 0.92, 0.66),
                 "grapple_rod": (0.84, 0.96, 0.84), "target": (0.78, 0.84, 0.92), "cable": (1.0, 0.6, 0.2)},
    thin_kinds=("target",),
    scene=SceneSpec("EE axis and rod", ("end_effector", "target"), ("target",)),
    layout=LAYOUT,
    readouts_before=TARGET,
    readouts_after=TARGET,
    default_plots=("radial_offset", "Fx", "Fy", "Fz", "tension_rotating_1"),
    criteria_file=RESOURCES / "criteria.toml",
    scenarios_dir=RESOURCES / "scenarios",
    pair_lister=_pairs,
    kernel_lister=_kernel_units,
    schema_module="solver.mechanisms.snare.schema",
    summary_outputs=(SummaryOutput("t_centred", "s", "first time the rod end is centred (NaN: never)",
                                   "time_at_least", ("centred",), at_least=0.5, key=True),
                     SummaryOutput("max_tension", "N", "max cable tension (either end)", "max", TENSIONS, key=True)),
)
