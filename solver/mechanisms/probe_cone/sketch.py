"""The probe-cone's sketch in the middle pane (no Qt): probe and housing in two side views, numbered points
1 head centre, 2 bending joint, 3 mechanism joint; angles magnified to keep the run's largest swing in view."""
from __future__ import annotations

import math

from solver.mechanisms.base import Mark, Note, Pen, Polyline, RunFacts, Sketch, SketchView, fill_fraction

FRAME = (90, 100, 130)
PROBE = (230, 230, 120)
HOUSING = (120, 200, 230)
ANGLE_GAINS = (10.0, 5.0, 2.0, 1.0)  # angles are drawn magnified by the largest gain that keeps the run in view
PENS = {"axis": Pen(FRAME, 1, "dot"), "housing": Pen(HOUSING, 5, round_cap=True),
        "probe": Pen(PROBE, 2.5, round_cap=True), "ring_housing": Pen(HOUSING, 1.5), "ring_probe": Pen(PROBE, 1.5)}
NUMBERS = (("1 head offset y", "head_offset_y"), ("1 head offset z", "head_offset_z"),
           ("2 bending y", "probe_bend_y"), ("2 bending z", "probe_bend_z"),
           ("3 housing y", "housing_angle_y"), ("3 housing z", "housing_angle_z"),
           ("probe stroke", "probe_stroke"))
CHANNELS = ("head_offset_y", "head_offset_z", "probe_bend_y", "probe_bend_z",
            "housing_angle_y", "housing_angle_z", "probe_stroke")


def gain(max_angle: float, length: float, room: float) -> float:
    """Largest magnification that keeps the probe's largest swing in the run inside its band."""
    for g in ANGLE_GAINS:
        if length * math.sin(math.radians(min(max_angle * g, 90.0))) <= room:
            return g
    return 1.0


def prepare(facts: RunFacts, width: float, height: float) -> dict:
    """The run's angle gain (from its largest housing + bending angle) and the stroke's full scale."""
    max_angle = max((sum(facts.abs_max(f"{k}_{a}") for k in ("housing_angle", "probe_bend")
                         if facts.has(f"{k}_{a}")) for a in "yz"), default=0.0)
    stroke = facts.stroke("probe_stroke") if facts.has("probe_stroke") else math.nan
    full = stroke if math.isfinite(stroke) else ((facts.abs_max("probe_stroke") or 1.0)
                                                 if facts.has("probe_stroke") else 1.0)
    return {"max_angle": max_angle, "gain": gain(max_angle, width - 30, height / 2 - 10), "stroke_full": full}


def footnote(scale) -> str:
    return f"angles drawn x{scale['gain']:g}"


def _joint(box) -> tuple[float, float]:
    """Point 3, the mechanism joint: at the band's left, on its middle line."""
    left, top, _, height = box
    return left + 14, top + height / 2


def background(view: str, box, scale) -> list:
    """The craft's axis through point 3."""
    x3, y3 = _joint(box)
    return [Polyline(((x3, y3), (box[0] + box[2], y3)), "axis")]


def draw(view: str, values, box, scale) -> list:
    """Side view in the x-<view> plane: 3 at the left, housing to 2, free probe to 1 (head), the head's offset."""
    hous = values.get(f"housing_angle_{view}", math.nan)
    bend = values.get(f"probe_bend_{view}", math.nan)
    off = values.get(f"head_offset_{view}", math.nan)
    stroke = values.get("probe_stroke", math.nan)
    hous = 0.0 if not math.isfinite(hous) else hous
    bend = 0.0 if not math.isfinite(bend) else bend
    length = box[2] - 30
    l_h = 0.35 * length
    l_p = 0.62 * length * (1.0 - 0.45 * fill_fraction(stroke, scale["stroke_full"]))
    x3, y3 = _joint(box)
    g = scale["gain"]
    a_h = math.radians(hous * g)
    x2, y2 = x3 + l_h * math.cos(a_h), y3 - l_h * math.sin(a_h)
    a_p = math.radians((hous + bend) * g)
    x1, y1 = x2 + l_p * math.cos(a_p), y2 - l_p * math.sin(a_p)
    out = [Polyline(((x2, y2), (x2 + l_p * math.cos(a_h), y2 - l_p * math.sin(a_h))), "axis"),  # housing axis on
           Polyline(((x3, y3), (x2, y2)), "housing"), Polyline(((x2, y2), (x1, y1)), "probe"),
           Mark((x3, y3), "3", "ring_housing"), Mark((x2, y2), "2", "ring_housing"), Mark((x1, y1), "1", "ring_probe")]
    if math.isfinite(off) and off:
        out.append(Note((x1 - 40, y1 + 20), off, "m"))
    return out


SKETCH = Sketch(
    titles=("probe and housing (1 head, 2 bending joint, 3 mechanism joint)", "probe and housing"),
    channels=CHANNELS, numbers=NUMBERS,
    views=(SketchView("y", ("plane x-y", "x-y")), SketchView("z", ("plane x-z", "x-z"))),
    pens=PENS, prepare=prepare, background=background, draw=draw, footnote=footnote)
