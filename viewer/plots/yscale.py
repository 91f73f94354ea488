"""The smallest y span of a plot (resources/plot_scale.toml): a channel of solver noise reads as ~0, not as a signal
scaled up to fill its plot."""
from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path

SCALE_FILE = Path(__file__).resolve().parents[2] / "resources" / "plot_scale.toml"


@functools.lru_cache(maxsize=1)
def scale_rules() -> tuple[float, dict[str, float]]:
    """(fraction of a unit's full scale, {unit: smallest span}) from resources/plot_scale.toml."""
    with open(SCALE_FILE, "rb") as fh:
        d = tomllib.load(fh)
    try:
        frac = float(d["fraction"])
        spans = {str(k): float(v) for k, v in d["min_span"].items()}
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{SCALE_FILE}: needs 'fraction' and a [min_span] table of numbers ({e})") from None
    if not (0.0 <= frac < 1.0) or any(not (math.isfinite(v) and v >= 0.0) for v in spans.values()):
        raise ValueError(f"{SCALE_FILE}: fraction must be in [0, 1) and every min_span finite and >= 0")
    return frac, spans


def unit_spans(run, abs_max) -> dict[str, float]:
    """Per unit of the run's channels, the smallest span a plot of it shows: the larger of the unit's min_span and
    fraction x the largest stroke or |value| (`abs_max(name)`, NaN when unknown) among the run's channels of it."""
    frac, spans = scale_rules()
    full: dict[str, float] = {}
    for name, info in run.channels.items():
        v = max((x for x in (info.stroke, abs_max(name)) if math.isfinite(x)), default=0.0)
        full[info.unit] = max(full.get(info.unit, 0.0), v)
    return {u: max(spans.get(u, 0.0), frac * v) for u, v in full.items()}


def channel_span(run, name: str, unit_span: dict[str, float]) -> float:
    """The smallest span a plot of channel `name` shows: with a device range of its own (stroke), the larger of its
    unit's min_span and fraction x that range (a 10 mm lateral error is not floored by a 0.6 m insertion); else its
    unit's (unit_spans)."""
    info = run.channels[name]
    if math.isfinite(info.stroke) and info.stroke > 0:
        frac, spans = scale_rules()
        return max(spans.get(info.unit, 0.0), frac * info.stroke)
    return unit_span.get(info.unit, 0.0)


def with_floor(lo: float, hi: float, span: float) -> tuple[float, float]:
    """[lo, hi] widened about its middle to at least `span`."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo >= span:
        return lo, hi
    mid = 0.5 * (lo + hi)
    return mid - 0.5 * span, mid + 0.5 * span
