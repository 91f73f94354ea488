"""Elastic rod systems on a free spacecraft (seed 002, Russkikh): a planar chain of elastic rods on visco-elastic
hinges, general (3n+3) and reduced (n+3) formulations, clamps; docs/rods.md. Solver: model.py, dynamics.py,
simulate.py on solver.core.planar_chain."""
from __future__ import annotations

from pathlib import Path

from solver.mechanisms.base import BarGroup, DeviceLayout, MechanismType, Readouts, SceneSpec, SummaryOutput

RESOURCES = Path(__file__).resolve().parents[3] / "resources" / "rods"

PART_COLORS = {"craft": (0.52, 0.58, 0.66), "hinge": (0.98, 0.92, 0.66), "rod": (0.84, 0.96, 0.84)}


def _build_model(scenario_path: Path):
    from solver.mechanisms.rods.model import load_rods
    return load_rods(scenario_path)


def _run(model, scenario_path, out_path, **options):
    from solver.mechanisms.rods.simulate import run_rods
    return run_rods(model, scenario_path, out_path, **options)


def _state_sizes() -> dict[str, int]:
    from solver.mechanisms.rods import dynamics as D
    ns, nz = D.sizes(2)
    return {"s": ns, "Z": nz}


def _kernel_units(model) -> tuple[list, int]:
    from solver.mechanisms.rods.simulate import kernel_units
    return kernel_units(model), 0


def _channels(model) -> list:
    from solver.mechanisms.rods.simulate import channel_infos
    return channel_infos(model)


def _layout(run=None) -> DeviceLayout:
    """Hinge angles against their ranges, hinge moments, clamp states (as many hinges as the run has)."""
    names = list(run.channels) if run is not None else []
    pick = lambda pre, post: tuple(c for c in names if c.startswith(pre) and c.endswith(post))   # noqa: E731
    return DeviceLayout(None, (
        BarGroup("hinge_angles", ("hinge angles (against their ranges)", "hinge angles"),
                 channels=pick("hinge", "_angle") or ("hinge0_angle", "hinge1_angle")),
        BarGroup("hinge_moments", ("hinge moments", "moments"), channels=pick("hinge", "_moment")
                 or ("hinge0_moment", "hinge1_moment")),
        BarGroup("clamps", ("clamps locked", "clamps"), channels=pick("clamp", "") or ("clamp0", "clamp1"),
                 share=0.16),
    ))


RODS = MechanismType(
    name="rods",
    title="elastic rod system on a free spacecraft (seed 002)",
    variants=("general", "reduced"),
    run_variants=("general", "reduced"),
    model_builder=_build_model,
    channel_lister=_channels,
    runner=_run,
    state_sizes=_state_sizes,
    kernel_lister=_kernel_units,
    part_colors=PART_COLORS,
    scene=SceneSpec("side view (x-z plane; the rods in the top view)", None, ("craft",)),
    layout=_layout,
    readouts_before=Readouts("CRAFT", ("u_Cx", "u_Cy", "v_Cx", "v_Cy"), ("theta_C", "Omega", "phi1", "phi2")),
    readouts_after=Readouts("CRAFT", ("u_Cx", "u_Cy", "v_Cx", "v_Cy"), ("theta_C", "Omega", "phi1", "phi2")),
    base_loads=("hinge0_moment", "M_root1"),
    default_plots=("phi1", "phi2", "alpha1", "beta1"),
    criteria_file=RESOURCES / "criteria.toml",
    scenarios_dir=RESOURCES / "scenarios",
    schema_module="solver.mechanisms.rods.schema",
    summary_outputs=(
        SummaryOutput("peak_root_moment", "N*m", "peak |bending moment at rod 1's root|", "peak", ("M_root1",),
                      key=True, short="M_root1 N*m", column="force"),
        SummaryOutput("peak_hinge0_moment", "N*m", "peak |hinge 0 moment|", "peak", ("hinge0_moment",),
                      short="hinge0 N*m", column="moment"),
        SummaryOutput("t_clamp0", "s", "clamp 0 locked at", "time_at_least", ("clamp0",), at_least=1.0,
                      short="clamp0 s"),
    ),
)
