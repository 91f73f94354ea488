"""The viewer's number formatter: a value and its unit as a pane prints it, decimals chosen by magnitude."""
from __future__ import annotations

import math

NO_VALUE = "—"
READOUT = ((1000.0, 1), (10.0, 2), (0.0, 4))
"""The plots' readout box: 1 decimal from 1000, 2 from 10, else 4."""
GAUGE = ((100.0, 0), (1.0, 2), (0.0, 3))
"""The devices pane's bars: 0 decimals from 100, 2 from 1, else 3 (signed; lengths in mm)."""


def fixed(v: float, digits: int, signed: bool = False, width: int = 0) -> str:
    """`v` with `digits` decimals; a value that rounds to zero prints without a minus ("0.0", "+0.0", never "-0.0")."""
    if v != 0.0 and round(v, digits) == 0.0:
        v = 0.0
    v = v + 0.0   # (-0.0 + 0.0 is +0.0)
    return f"{v:{'+' if signed else ''}{width or ''}.{digits}f}"


def value_text(v: float, unit: str = "", steps=READOUT, signed: bool = False) -> str:
    """`v` with the decimals of the first (threshold, decimals) step whose threshold |v| reaches, then its unit;
    NO_VALUE for NaN or infinity."""
    if not math.isfinite(v):
        return NO_VALUE
    a = abs(v)
    digits = next((d for limit, d in steps if a >= limit), steps[-1][1])
    return f"{fixed(v, digits, signed)} {unit}".rstrip()


def length_text(metres: float, signed: bool = False) -> str:
    """A length in mm with one decimal (the devices' strokes and offsets): `+12.3 mm`, `0.0 mm`."""
    return NO_VALUE if not math.isfinite(metres) else f"{fixed(metres * 1000.0, 1, signed)} mm"


def count_text(v: float, unit: str = "") -> str:
    """A count (latches engaged, hooks closed) as a whole number, unsigned: `3`, `0`."""
    return NO_VALUE if not math.isfinite(v) else f"{int(round(v))} {unit}".rstrip()


def is_count(unit: str, full_scale: float) -> bool:
    """A channel that counts things: no unit and a whole-number range of at least 1 (e.g. 3 latches)."""
    return unit in ("", "-", "1") and math.isfinite(full_scale) and full_scale >= 1 and full_scale == int(full_scale)


def force_text(newtons: float) -> str:
    """A force as the lanes and the scene label it: `850 N`, `1.23 kN`."""
    return f"{fixed(newtons / 1000, 2)} kN" if abs(newtons) >= 1000 else f"{fixed(newtons, 0)} N"
