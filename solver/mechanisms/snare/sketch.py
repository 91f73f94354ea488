"""The snare's sketch in the middle pane (no Qt): the rings seen down the end effector's axis, the three cables as
chords from their fixed-ring ends to their rotating-ring ends (turning with ring_angle; red while on the rod,
numbered at the rotating end) and the rod's end (R) at its offset, all to scale."""
from __future__ import annotations

import math

from solver.mechanisms.base import Mark, Pen, Polyline, RunFacts, Sketch, SketchView

FRAME = (90, 100, 130)
CABLE = (255, 153, 51)
ON_ROD = (235, 80, 70)
ROD = (150, 230, 150)
PENS = {"ring": Pen(FRAME, 1.5), "axis": Pen(FRAME, 1, "dot"), "cable": Pen(CABLE, 2, round_cap=True),
        "cable_on": Pen(ON_ROD, 3, round_cap=True), "mark": Pen(CABLE, 1.5), "rod": Pen(ROD, 2)}
NUMBERS = (("ring", "ring_angle"), ("torque", "motor_torque"), ("R radial", "radial_offset"),
           ("R y", "target_y"), ("R z", "target_z"), ("tilt", "tilt"), ("on rod", "cables_in_contact"))
# the cables' fixed ends 120 deg apart, each running a third of a turn to the rotating ring (seed 004 L60-64, L164)
FIXED_DEG = (120.0, 0.0, -120.0)


def prepare(facts: RunFacts, width: float, height: float) -> dict:
    """The ring radius (the radial offset's full scale, m) and the pixels per metre that fit the ring in the band."""
    r = facts.stroke("radial_offset") if facts.has("radial_offset") else math.nan
    ring = r if math.isfinite(r) and r > 0 else 0.25
    return {"ring": ring, "px": 0.40 * min(width, height) / ring}


def footnote(scale) -> str:
    return f"to scale, ring {scale['ring'] * 1000:.0f} mm"


def _centre(box):
    left, top, width, height = box
    return left + width / 2, top + height / 2 + 8        # below the view's label


def _pt(box, scale, y, z):
    cx, cy = _centre(box)
    return cx + y * scale["px"], cy - z * scale["px"]


def background(view: str, box, scale) -> list:
    """The rings' circle and the axis cross."""
    R = scale["ring"]
    ring = tuple(_pt(box, scale, R * math.cos(2 * math.pi * k / 72), R * math.sin(2 * math.pi * k / 72))
                 for k in range(73))
    a, b = _pt(box, scale, -1.1 * R, 0.0), _pt(box, scale, 1.1 * R, 0.0)
    c, d = _pt(box, scale, 0.0, -1.1 * R), _pt(box, scale, 0.0, 1.1 * R)
    return [Polyline(ring, "ring"), Polyline((a, b), "axis"), Polyline((c, d), "axis")]


def draw(view: str, values, box, scale) -> list:
    """Cable i from its fixed end to its rotating end (fixed angle + 120 deg + ring angle); the rod's end."""
    R = scale["ring"]
    alpha = values.get("ring_angle", math.nan)
    alpha = alpha if math.isfinite(alpha) else 0.0
    out = []
    for i, f in enumerate(FIXED_DEG):
        a0, a1 = math.radians(f), math.radians(f + 120.0 + alpha)
        p0 = _pt(box, scale, R * math.cos(a0), R * math.sin(a0))
        p1 = _pt(box, scale, R * math.cos(a1), R * math.sin(a1))
        on = values.get(f"contact_force_{i + 1}", 0.0)
        out.append(Polyline((p0, p1), "cable_on" if math.isfinite(on) and on > 0 else "cable"))
        out.append(Mark(p1, str(i + 1), "mark"))
    y, z = values.get("target_y", math.nan), values.get("target_z", math.nan)
    if math.isfinite(y) and math.isfinite(z):
        out.append(Mark(_pt(box, scale, y, z), "R", "rod"))
    return out


SKETCH = Sketch(
    titles=("rings down the EE axis: cables 1-3 (red on the rod), rod end R", "cables and rod end"),
    channels=("ring_angle", "motor_torque", "radial_offset", "target_y", "target_z", "tilt", "cables_in_contact",
              "contact_force_1", "contact_force_2", "contact_force_3"),
    numbers=NUMBERS,
    views=(SketchView("end", ("down the EE axis (y right, z up)", "y-z")),),
    pens=PENS, prepare=prepare, background=background, draw=draw, footnote=footnote,
    width_px=330.0, share_max=0.40, numbers_px=150.0)
