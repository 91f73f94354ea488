"""The probe-cone docking mechanism (Soyuz, Progress): the first mechanism type, with its three variants.

Its solver model is model.py (scenario -> arrays), dynamics.py (numba kernels) and simulate.py (channels, parts,\nthe kernels' runner); this module tells the rest what a probe-cone run holds.
"""
from __future__ import annotations

from pathlib import Path

from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType, Readouts, SceneSpec, SummaryOutput
from solver.mechanisms.probe_cone.sketch import SKETCH
from solver.mechanisms.probe_cone.variants import VARIANTS

RESOURCES = Path(__file__).resolve().parents[3] / "resources"

PART_COLORS = {  # light wireframe colours, by part kind (docs/run-format.md: /geometry/<part> kind)
    "cone": (0.78, 0.84, 0.92),
    "slot": (0.70, 0.78, 1.00),
    "ring": (0.52, 0.58, 0.66),
    "mechanism": (0.84, 0.96, 0.84),
    "latch": (0.98, 0.92, 0.66),
    "roller": (0.90, 0.82, 1.00),
    "limiter": (0.70, 0.95, 0.95),
    "pad": (0.95, 0.85, 0.75),
}

LAYOUT = DeviceLayout(SKETCH, (
    BarGroup("axial_damper", ("axial damper",), arrangement="stack",
             order=("spring", "friction", "magnetic", "xlimd", "lim"), empty="no axial damper channels"),
    BarGroup("lateral_damper", ("lateral damper (view from the probe head)", "lateral damper"),
             arrangement="around", share=0.37, axes=("+z", "+y"), empty="no lateral damper channels"),
))


def _build_model(scenario_path: Path):
    from solver.mechanisms.probe_cone.model import load_probe_cone
    return load_probe_cone(Path(scenario_path))


def _run(model, scenario_path, out_path, **options):
    from solver.mechanisms.probe_cone.simulate import run_probe_cone
    return run_probe_cone(model, scenario_path, out_path, **options)


def _state_sizes() -> dict[str, int]:
    from solver.mechanisms.probe_cone import dynamics as D
    return {"s": D.NS, "Z": D.NZ}


def _kernel_units(model) -> tuple[list, int]:
    from solver.mechanisms.probe_cone.simulate import N_CHILD, kernel_units
    return kernel_units(model), N_CHILD


def _channels(model) -> list:
    from solver.mechanisms.probe_cone.simulate import channel_infos
    return channel_infos(model)


def _pairs(model) -> list:
    from solver.mechanisms.probe_cone.simulate import LATCH_NECK
    return [*model.cgeo.pair_info, LATCH_NECK]


S = SummaryOutput
SUMMARY_OUTPUTS = (   # campaign summary columns of the probe-cone's devices (docs/campaigns.md)
    S("max_axial_stroke", "m", "max probe stroke-in (axial damper)", "max", ("probe_stroke",), key=True,
      short="stroke m"),
    S("max_friction_brake", "m", "max axial friction brake slip", "max", ("friction_brake",)),
    S("max_axial_spring", "m", "max axial spring mechanism stroke", "max", ("axial_spring",)),
    S("max_lateral_stroke", "m", "max |lateral spring mechanism stroke|", "peak",
      ("spring_mechanism_1", "spring_mechanism_2"), key=True),
    S("max_crank_angle", "deg", "max |lateral brake crank angle|", "peak", ("crank_angle_1", "crank_angle_2")),
    S("max_XLimD", "m", "max movable limiter spring compression", "max", ("XLimD",)),
)


PROBE_CONE = MechanismType(
    name="probe_cone",
    title="probe-cone docking mechanism",
    variants=VARIANTS,
    run_variants=VARIANTS + ("synthetic",),   # synthetic: a hand-built kinematic run (tests/synthetic_run.py)
    schema_module="solver.mechanisms.probe_cone.schema",
    model_builder=_build_model,
    channel_lister=_channels,
    runner=_run,
    state_sizes=_state_sizes,
    kernel_lister=_kernel_units,
    part_colors=PART_COLORS,
    thin_kinds=("cone", "ring"),              # red in contact but 1 px: a bold cone would hide the probe
    scene=SceneSpec("plane Ld (cone axis, gimbal, probe joint)", ("housing", "probe"), ("housing", "probe")),
    layout=LAYOUT,
    readouts_before=Readouts("HEAD rel. CONE", ("head_x", "head_y", "head_z", "probe_pitch", "probe_yaw"),
                             ("head_vx", "head_vy", "head_vz")),
    default_plots=("Fx", "Fy", "Fz", "probe_stroke"),
    criteria_file=RESOURCES / "capture_criteria.toml",
    criteria_sections={"damper_strokes": ("strokes", "damper strokes"), "latches": ("release", "latch release")},
    scenarios_dir=RESOURCES / "scenarios",
    pair_lister=_pairs,
    summary_outputs=SUMMARY_OUTPUTS,
)
