"""The interface a docking-mechanism type implements (no Qt): what the solver, the panes and the verdict ask of it.

A type is one `MechanismType` object registered in `solver.mechanisms`; the viewer and the app never name a
mechanism's channels, bodies or parts, they ask the run's type (`solver.mechanisms.for_run(run)`):

    name, title, variants, run_variants   what a scenario and a run file call it
    schema                                 its parameter schema (a module; None until one exists)
    build_model(scenario_path)             scenario TOML -> the solver's model
    run(model, scenario_path, out_path)    simulate into a run file (its runner drives solver.simulate.run_kernels)
    state_sizes()                          lengths of its solver's state vectors s, Z (a branch run checks them)
    kernel_units(model)                    its compiled units, callees first (solver.warmup compiles these only)
    channels(model)                        channels with units, labels, groups and device ranges
    part_colors, thin_kinds                scene: wireframe colour by part kind; kinds kept thin in contact
    scene                                  scene: plane Ld (title, the two bodies that span it), marker bodies
    device_layout(run)                     middle pane: sketch (Qt-free, see Sketch) and bar groups
    readouts_before, readouts_after        top pane's readout columns before and after capture
    base_loads, default_plots              the loads line under the scene; channels plotted when a run opens
    criteria_file                          capture verdict criteria (TOML read by solver.verdict)
    scenarios_dir                          its bundled scenarios
    pairs(model), summary_outputs          campaigns: a run's contact pairs; the type's columns of a summary row

Everything is data or a pure function, as PlotJuggler's state-publisher plug-in: narrow, named, documented.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

RGB = tuple[float, float, float]       # 0..1
RGB8 = tuple[int, int, int]            # 0..255
Point = tuple[float, float]            # pane pixels

# what every run of two craft writes (docs/run-format.md: groups spacecraft and base_loads)
BASE_LOADS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")


# ---- the middle pane's drawing: a pure function's output, drawn by the devices pane -------------------------------
@dataclass
class RunSettings:
    """The head every solver model starts with: scenario name, comment, input text and the run's time settings (s)."""
    name: str
    comment: str
    text: str
    step: float
    output_step: float
    duration: float


@dataclass(frozen=True)
class Pen:
    """How a sketch's line or point ring is drawn: colour, width (px), "solid" or "dot", round caps."""
    color: RGB8
    width: float
    dash: str = "solid"
    round_cap: bool = False

    def __post_init__(self):
        if self.dash not in ("solid", "dot"):
            raise ValueError(f"pen dash {self.dash!r}: one of solid, dot")


class Polyline(NamedTuple):
    """Connected line segments in pane pixels, drawn with the sketch's pen `pen`."""
    points: tuple[Point, ...]
    pen: str


class Mark(NamedTuple):
    """A labelled point: a small ring (pen `pen`) with a one- or two-character label, e.g. a numbered joint."""
    at: Point
    label: str
    pen: str


class Note(NamedTuple):
    """A value (with its unit) written at a point, its left end on the baseline; red if > 0, blue if < 0."""
    at: Point
    value: float
    unit: str


Shape = Polyline | Mark | Note


class RunFacts(Protocol):
    """What a sketch may know of a whole run (the devices pane answers from the run file)."""

    def has(self, channel: str) -> bool: ...
    def stroke(self, channel: str) -> float: ...     # the channel's full-scale range (NaN if none)
    def abs_max(self, channel: str) -> float: ...    # largest |value| over the run


@dataclass(frozen=True)
class SketchView:
    """One band of the sketch: a side view with its label (long, short) written at the band's top left."""
    key: str
    label: tuple[str, str]


@dataclass(frozen=True)
class Sketch:
    """The middle pane's left box: views drawn from the shown frame's channel values, and numbers beside them.

    `prepare(facts, width, height)` -> a mapping of run-level scales, once per run and size (width, height: one
    view's drawing room). `background(view, box, scale)` -> shapes that change with the run only (drawn once);
    `draw(view, values, box, scale)` -> the frame's shapes; `box` = (left, top, width, height) of the view's band
    in pane pixels; `values` maps channel names to their values at the frame (a channel the run lacks may be
    absent: read with .get(name, nan)).
    `footnote(scale)` is written under the numbers, which are (label, channel) lines."""
    titles: tuple[str, ...]                      # long to short
    channels: tuple[str, ...]                    # read at each frame
    numbers: tuple[tuple[str, str], ...]
    views: tuple[SketchView, ...]
    pens: Mapping[str, Pen]
    prepare: Callable[[RunFacts, float, float], Mapping[str, Any]]
    background: Callable[[str, tuple, Mapping], list]
    draw: Callable[[str, Mapping[str, float], tuple, Mapping], list]
    footnote: Callable[[Mapping], str] = lambda scale: ""
    width_px: float = 300.0                      # the box wants this wide (between share_min and share_max of the pane)
    share_min: float = 0.30
    share_max: float = 0.40
    numbers_px: float = 178.0                    # the numbers column, at the box's right


@dataclass(frozen=True)
class BarGroup:
    """A box of device bars (|value| / range, red +, blue -): the run's channels among `channels` (in that order),
    or where `channels` is empty every channel of run-file group `group`.

    arrangement "stack": one bar under another, a group's channels ordered by the first of `order` a name
    contains (then by name); "around": each bar placed on a 3x3 grid by its channel's `place` (deg around the
    mechanism axis, 0 left, 90 up), `axes` naming the up and left directions."""
    group: str                                   # the box's key (and the run-file group its bars come from)
    titles: tuple[str, ...]                      # long to short
    channels: tuple[str, ...] = ()
    arrangement: str = "stack"
    share: float | None = None                   # of the pane's width; None: what the others leave
    order: tuple[str, ...] = ()
    axes: tuple[str, str] = ("+z", "+y")
    empty: str = ""                              # shown when the run has none of the group's channels

    def __post_init__(self):
        if self.arrangement not in ("stack", "around"):
            raise ValueError(f"bar group {self.group}: arrangement {self.arrangement!r}: one of stack, around")


@dataclass(frozen=True)
class DeviceLayout:
    """The middle pane: an optional sketch box at the left, then the bar groups left to right."""
    sketch: Sketch | None
    groups: tuple[BarGroup, ...]


# ---- the top pane ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Readouts:
    """The scene's readout columns (shown where the run has the channels) under one heading."""
    head: str
    left: tuple[str, ...]
    right: tuple[str, ...]


ACTIVE_REL_PASSIVE = Readouts("ACTIVE rel. PASSIVE", ("cm_vx", "cm_vy", "cm_vz"),
                              ("rate_x", "rate_y", "rate_z", "att_roll", "att_pitch", "att_yaw"))


@dataclass(frozen=True)
class RideCamera:
    """A 3D camera that rides on a body: eye, target and up in that body's frame (m); `title`: its button's tip."""
    body: str
    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    up: tuple[float, float, float]
    title: str = "3D view riding on a body"


@dataclass(frozen=True)
class OperatorSession:
    """A type's operator-in-the-loop session: its default scenario, the hand controllers' settings (a mapping: dead
    zone, full-deflection rates), `link(model, speed)` -> the plain link the controllers set, and `run(model, scenario,
    out, link=..., **run options)` -> the run file, locked to wall time."""
    scenario: Path
    settings: Callable[[], Mapping[str, Any]]
    link: Callable[..., Any]
    run: Callable[..., Path]


@dataclass(frozen=True)
class SceneSpec:
    """Plane Ld (the side view): its title and the two bodies whose origins, with the x axis, span it (none:
    the x-z plane); the bodies marked by a dot at their origin; parts drawn in a colour by a channel's value
    (`tinted_parts`: part -> channel; + orange, - blue, full at the largest |value| of those channels in the run),
    what that colour means written at the 3D view's foot (`tint_title`); `ride_camera`: a camera on a body."""
    ld_title: str = "side view (x-z plane)"
    ld_bodies: tuple[str, str] | None = None
    marker_bodies: tuple[str, ...] = ()
    tinted_parts: Mapping[str, str] = field(default_factory=dict)
    tint_title: str = ""
    ride_camera: RideCamera | None = None   # the 3D view's "Ride" preset follows this body (None: no such preset)


DEFAULT_PART_COLOR: RGB = (0.85, 0.88, 0.90)


# ---- campaigns -------------------------------------------------------------------------------------------------
SUMMARY_HOWS = ("max", "peak", "time_at_least")


@dataclass(frozen=True)
class SummaryOutput:
    """A campaign summary column from a run's channels: "max" (largest value) or "peak" (largest |value|) over the
    run's `channels`, or "time_at_least" (first time one reaches `at_least`); NaN where the run has none of them.
    `key`: shown in the envelope map's hover; `short`: the campaign table's header (its first output with one);
    `column`: "force" or "moment": the table's column it fills instead of the base force / moment (a type without
    base loads), under its `short`."""
    name: str
    unit: str
    label: str
    how: str
    channels: tuple[str, ...]
    at_least: float = math.nan
    key: bool = False
    short: str = ""
    column: str = ""

    def __post_init__(self):
        if self.how not in SUMMARY_HOWS:
            raise ValueError(f"summary output {self.name}: how {self.how!r}: one of {', '.join(SUMMARY_HOWS)}")
        if self.column not in ("", "force", "moment") or (self.column and not self.short):
            raise ValueError(f"summary output {self.name}: column {self.column!r}: \"force\" or \"moment\", "
                             "with a short header")


# ---- the type ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MechanismType:
    """One docking-mechanism type (see the module docstring for who asks what)."""
    name: str
    title: str
    variants: tuple[str, ...] = ()
    run_variants: tuple[str, ...] = ()           # variants a run file of this type may name (variants and more)
    schema_module: str = ""                      # imported on first use of `schema`
    model_builder: Callable[[Path], Any] | None = None
    channel_lister: Callable[[Any], list] | None = None
    runner: Callable[..., Path] | None = None    # (model, scenario_path, out_path, **run options) -> out_path
    state_sizes: Callable[[], dict[str, int]] | None = None   # its solver's state vectors
    kernel_lister: Callable[[Any], tuple[list, int]] | None = None  # model -> ([(name, dispatcher, types)], n to a
                                                                  # second compile process); None: compiled on call
    part_colors: Mapping[str, RGB] = field(default_factory=dict)
    thin_kinds: tuple[str, ...] = ()             # part kinds drawn 1 px even in contact (large surfaces)
    scene: SceneSpec = SceneSpec()
    layout: Callable[[Any], DeviceLayout] | DeviceLayout = DeviceLayout(None, ())
    readouts_before: Readouts = ACTIVE_REL_PASSIVE
    readouts_after: Readouts = ACTIVE_REL_PASSIVE
    base_loads: tuple[str, ...] = BASE_LOADS
    default_plots: tuple[str, ...] = BASE_LOADS[:3]
    criteria_file: Path | None = None
    criteria_sections: Mapping[str, tuple[str, str]] = field(default_factory=dict)   # its criteria files' own
    #   names of verdict sections: name -> (generic section of solver.verdict, the check's words)
    scenarios_dir: Path | None = None
    pair_lister: Callable[[Any], list] | None = None    # model -> ContactPairInfo of every pair its run writes
    summary_outputs: tuple[SummaryOutput, ...] = ()
    operator: OperatorSession | None = None      # an operator-in-the-loop session, if the type has one

    @property
    def schema(self):
        """The type's parameter-schema module, or None where it has none (yet)."""
        if not self.schema_module:
            return None
        import importlib
        try:
            return importlib.import_module(self.schema_module)
        except ImportError:
            return None

    def build_model(self, scenario_path):
        """The solver's model of a scenario of this type (InputError on bad input)."""
        if self.model_builder is None:
            raise NotImplementedError(f"mechanism type {self.name!r} has no solver model")
        return self.model_builder(Path(scenario_path))

    def run(self, model, scenario_path, out_path, **options) -> Path:
        """Simulate `model` into a run file (progress, t_end, cancel, live, start as solver.simulate.run_scenario)."""
        if self.runner is None:
            raise NotImplementedError(f"mechanism type {self.name!r} has no runner of its own")
        return self.runner(model, scenario_path, out_path, **options)

    def kernel_units(self, model) -> tuple[list, int]:
        """(name, dispatcher, argument types) of the compiled units a run of `model` calls, callees first, and how
        many of the first a second process compiles meanwhile (solver.warmup); ([], 0): compiled on first call."""
        return ([], 0) if self.kernel_lister is None else self.kernel_lister(model)

    def channels(self, model) -> list:
        """ChannelInfo of every channel a run of `model` writes (units, labels, groups, device ranges)."""
        return [] if self.channel_lister is None else self.channel_lister(model)

    def pairs(self, model) -> list:
        """ContactPairInfo of every contact pair a run of `model` writes (a campaign's peak_<pair> columns)."""
        return [] if self.pair_lister is None else self.pair_lister(model)

    def device_layout(self, run=None) -> DeviceLayout:
        """The middle pane's layout for `run` (a generic type builds it from the run's channels)."""
        return self.layout(run) if callable(self.layout) else self.layout

    def part_color(self, kind: str) -> RGB:
        return self.part_colors.get(kind, DEFAULT_PART_COLOR)

    def readouts(self, after_capture: bool) -> Readouts:
        return self.readouts_after if after_capture else self.readouts_before

    def readout_channels(self) -> tuple[str, ...]:
        """Every channel the scene's readouts and loads line may show."""
        r = (self.readouts_before, self.readouts_after)
        return tuple(dict.fromkeys([n for x in r for n in x.left + x.right] + list(self.base_loads)))


def fill_fraction(value: float, full_scale: float) -> float:
    """Share of a bar to fill: |value| / full scale, clamped to [0, 1]; 0 for NaN."""
    if not math.isfinite(value) or not (full_scale > 0):
        return 0.0
    return min(abs(value) / full_scale, 1.0)


def bar_order(order: Sequence[str]) -> Callable[[str], tuple[int, str]]:
    """Sort key of a "stack" group: rank of the first of `order` the name contains (case-blind), then the name."""
    keys = [k.lower() for k in order]

    def key(name: str) -> tuple[int, str]:
        n = name.lower()
        return next((rank for rank, k in enumerate(keys) if k in n), len(keys)), n
    return key
