"""The peripheral (androgynous, IDSS-class) docking mechanism: the second mechanism type (issue 26).

Its solver model is solver/mechanisms/peripheral/model.py (scenario -> arrays), dynamics.py (numba kernels) and
simulate.py (run file); this module tells the rest what a peripheral run holds."""
from __future__ import annotations

from pathlib import Path

from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType, Readouts, SceneSpec, SummaryOutput
from solver.mechanisms.peripheral.sketch import LEGS, SKETCH

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "peripheral"

PART_COLORS = {
    "ring": (0.52, 0.58, 0.66),
    "petal": (0.78, 0.84, 0.92),
    "latch": (0.98, 0.92, 0.66),
    "leg": (0.84, 0.96, 0.84),
}

LAYOUT = DeviceLayout(SKETCH, (
    BarGroup("legs", ("six legs (stroke, range +-0.12 m)", "six legs"), channels=LEGS),
    BarGroup("leg_forces", ("leg forces",), channels=tuple(f"{n}_force" for n in LEGS), share=0.22),
    BarGroup("capture", ("latches and hooks", "capture"), channels=("latches_engaged", "hooks_closed"), share=0.16),
))
RING_POSE = Readouts("RING rel. PASSIVE RING", ("ring_x", "ring_y", "ring_z", "ring_vx", "ring_vy", "ring_vz"),
                     ("ring_roll", "ring_pitch", "ring_yaw", "latches_engaged", "hooks_closed"))


def _build_model(scenario_path: Path):
    from solver.mechanisms.peripheral.model import load_peripheral
    return load_peripheral(scenario_path)


def _run(model, scenario_path, out_path, **options):
    from solver.mechanisms.peripheral.simulate import run_peripheral
    return run_peripheral(model, scenario_path, out_path, **options)


def _state_sizes() -> dict[str, int]:
    from solver.mechanisms.peripheral import dynamics as D
    return {"s": D.NS, "Z": D.NZ}


def _kernel_units(model) -> tuple[list, int]:
    from solver.mechanisms.peripheral.simulate import kernel_units
    return kernel_units(model), 0


def _channels(model) -> list:
    from solver.mechanisms.peripheral.simulate import channel_infos
    return channel_infos(model)


def _pairs(model) -> list:
    from solver.mechanisms.peripheral.simulate import PAIRS
    return list(PAIRS)


SUMMARY_OUTPUTS = (   # campaign summary columns of the interface loads, legs, latches and hooks (docs/campaigns.md)
    SummaryOutput("peak_iface_F", "N", "peak interface force |F| (solver rate; the verdict's)", "peak", ("iface_F",),
                  key=True, short="iface N"),
    SummaryOutput("peak_iface_M", "N*m", "peak interface moment |M| (solver rate; the verdict's)", "peak",
                  ("iface_M",), key=True, short="iface N*m"),
    SummaryOutput("max_leg_stroke", "m", "max |leg stroke| (six legs)", "peak", LEGS, key=True, short="leg m"),
    SummaryOutput("max_leg_force", "N", "max |leg force| (six legs)", "peak", tuple(f"{n}_force" for n in LEGS),
                  key=True),
    SummaryOutput("t_hooks_closed", "s", "time the hooks closed (NaN: not closed)", "time_at_least",
                  ("hooks_closed",), at_least=0.5, key=True),
)


PERIPHERAL = MechanismType(
    name="peripheral",
    title="peripheral (androgynous, IDSS-class) docking mechanism",
    variants=("idss",),
    run_variants=("idss",),
    schema_module="solver.mechanisms.peripheral.schema",
    model_builder=_build_model,
    channel_lister=_channels,
    runner=_run,
    state_sizes=_state_sizes,
    kernel_lister=_kernel_units,
    part_colors=PART_COLORS,
    thin_kinds=("ring",),
    scene=SceneSpec("plane Ld (docking axis, guide ring)", ("passive_craft", "ring"), ("passive_craft", "ring"),
                    tinted_parts={f"{n}_{half}": f"{n}_force" for n in LEGS for half in ("cylinder", "rod")},
                    tint_title="legs by force"),
    layout=LAYOUT,
    readouts_before=RING_POSE,
    readouts_after=RING_POSE,
    default_plots=("Fx", "Fy", "Fz", "leg_1"),
    criteria_file=RESOURCES / "criteria.toml",
    criteria_sections={"leg_strokes": ("strokes", "leg strokes"), "latches": ("release", "latch release")},
    scenarios_dir=RESOURCES / "scenarios",
    pair_lister=_pairs,
    summary_outputs=SUMMARY_OUTPUTS,
)
