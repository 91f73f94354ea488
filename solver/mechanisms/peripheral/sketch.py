"""The peripheral unit's sketch in the middle pane (no Qt): the guide ring on its six legs in two side views,
base plane at the left, each leg's length neutral + stroke (strokes magnified), legs numbered at the ring end."""
from __future__ import annotations

import math

from solver.mechanisms.base import Mark, Pen, Polyline, RunFacts, Sketch, SketchView

FRAME = (90, 100, 130)
LEG = (230, 230, 120)
RING = (120, 200, 230)
LEGS = tuple(f"leg_{k}" for k in range(1, 7))
# ring attachment angles about +x from +y of the nominal 6-6 layout (solver.mechanisms.peripheral.hexapod.hexapod_layout, 10 deg pairs)
RING_ANGLES = tuple(120.0 * (k // 2) + 60.0 + (-10.0 if k % 2 == 0 else 10.0) for k in range(6))
PENS = {"axis": Pen(FRAME, 1, "dot"), "base": Pen(FRAME, 4, round_cap=True), "leg": Pen(LEG, 2, round_cap=True),
        "ring": Pen(RING, 4, round_cap=True), "mark": Pen(LEG, 1.5)}
NUMBERS = (("ring x", "ring_x"), ("ring y", "ring_y"), ("ring z", "ring_z"), ("ring roll", "ring_roll"),
           ("ring pitch", "ring_pitch"), ("ring yaw", "ring_yaw"), ("latches", "latches_engaged"),
           ("hooks", "hooks_closed"))
GAINS = (10.0, 5.0, 2.0, 1.0)
MARK_STEP = 16.0   # px between two numbered marks' centres (their rings have radius 7)


def prepare(facts: RunFacts, width: float, height: float) -> dict:
    """The strokes' magnification: the largest that keeps the run's largest stroke within a third of the neutral."""
    top = max((facts.abs_max(n) for n in LEGS if facts.has(n)), default=0.0)
    rng = facts.stroke("leg_1") if facts.has("leg_1") else math.nan
    full = rng if math.isfinite(rng) and rng > 0 else 0.12
    gain = next((g for g in GAINS if top * g <= full), 1.0)
    return {"gain": gain, "full": full}


def footnote(scale) -> str:
    return f"strokes drawn x{scale['gain']:g}"


def _frame(box):
    left, top, width, height = box
    return left + 14, top + height / 2, 0.45 * (width - 40), 0.42 * height


def background(view: str, box, scale) -> list:
    x0, y0, _, half = _frame(box)
    return [Polyline(((x0, y0), (box[0] + box[2], y0)), "axis"), Polyline(((x0, y0 - half), (x0, y0 + half)), "base")]


def draw(view: str, values, box, scale) -> list:
    """Legs from the base (left) to the ring (right): leg k's ring end at neutral + gain x stroke (a third of the
    band's width per leg range), at its attachment's height in the view's plane."""
    x0, y0, neutral, half = _frame(box)
    per_m = neutral / scale["full"] / 3.0
    ends = []
    out = []
    for k, name in enumerate(LEGS):
        st = values.get(name, math.nan)
        st = st if math.isfinite(st) else 0.0
        a = math.radians(RING_ANGLES[k])
        c = math.cos(a) if view == "y" else math.sin(a)
        yb = y0 - half * c
        xe = x0 + neutral + per_m * scale["gain"] * st
        ye = y0 - 0.85 * half * c
        out.append(Polyline(((x0, yb), (xe, ye)), "leg"))
        ends.append((ye, xe, k))
    ends.sort()
    out.append(Polyline(tuple((x, y) for y, x, _ in ends), "ring"))
    out += [Mark(at, str(k + 1), "mark") for at, k in _mark_places(ends)]
    return out      # (the ring's offsets are in the numbers column: a note in the view had no room past the marks)


def _mark_places(ends) -> list:
    """Each leg's number beside its ring end, top to bottom, in the first column (16 px apart from 12 px right of the
    ring) where its ring (radius 7 px) meets no number placed before: the pairs' ends lie a few px apart."""
    placed = []
    for y, x, k in ends:
        at = next((x + 12 + MARK_STEP * c, y) for c in range(len(ends)) if all(
            abs(x + 12 + MARK_STEP * c - px) >= MARK_STEP or abs(y - py) >= MARK_STEP for (px, py), _ in placed))
        placed.append((at, k))
    return placed


SKETCH = Sketch(
    titles=("guide ring on six legs (legs numbered at the ring)", "ring on six legs"),
    channels=(*LEGS, "ring_x", "ring_y", "ring_z", "ring_roll", "ring_pitch", "ring_yaw", "latches_engaged",
              "hooks_closed"),
    numbers=NUMBERS,
    views=(SketchView("y", ("plane x-y", "x-y")), SketchView("z", ("plane x-z", "x-z"))),
    pens=PENS, prepare=prepare, background=background, draw=draw, footnote=footnote,
    width_px=400.0, share_max=0.42, numbers_px=150.0)
