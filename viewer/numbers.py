"""The viewer's number formatter: a value and its unit as a pane prints it, decimals chosen by magnitude."""
from __future__ import annotations

import math

NO_VALUE = "—"
READOUT = ((1000.0, 1), (10.0, 2), (0.0, 4))
"""The plots' readout box: 1 decimal from 1000, 2 from 10, else 4."""
GAUGE = ((100.0, 0), (1.0, 2), (0.0, 3))
"""The devices pane's bars: 0 decimals from 100, 2 from 1, else 3 (signed; lengths in mm)."""


def value_text(v: float, unit: str = "", steps=READOUT, signed: bool = False) -> str:
    """`v` with the decimals of the first (threshold, decimals) step whose threshold |v| reaches, then its unit;
    NO_VALUE for NaN or infinity."""
    if not math.isfinite(v):
        return NO_VALUE
    a = abs(v)
    digits = next((d for limit, d in steps if a >= limit), steps[-1][1])
    s = f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"
    return f"{s} {unit}".rstrip()


def force_text(newtons: float) -> str:
    """A force as the lanes and the scene label it: `850 N`, `1.23 kN`."""
    return f"{newtons / 1000:.2f} kN" if abs(newtons) >= 1000 else f"{newtons:.0f} N"
