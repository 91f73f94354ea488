"""Time alignment of a measured record with a run, resampling onto the run's time grid, and per-channel metrics."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.measured.channel_map import AlignSpec, ChannelMap, MeasuredSignals, convert, load_map
from solver.measured.record import MeasuredError, read_record

CROSSING_SMOOTH = 0.01   # s: the alignment's threshold crossings are found on moving averages this wide (a record's
                         # noise spike over the threshold before contact is then no crossing; both sides alike)


@dataclass(frozen=True)
class ChannelMetrics:
    """How far a run channel is from its measured record over their common span (measured - run)."""
    channel: str
    unit: str
    rms: float          # RMS error
    peak: float         # largest |error|
    t_peak: float       # run time of the largest |error|, s
    r: float            # correlation coefficient (NaN if either is constant)
    offset: float       # the time offset used, s (t_measured = t_run + offset)
    samples: int

    def line(self) -> str:
        return f"{self.channel} rms {self.rms:.4g} {self.unit} peak {self.peak:.4g} {self.unit} r {self.r:.4f}"


@dataclass
class Comparison:
    """A run and a measured record on the run's time grid: run[ch], measured[ch] (NaN outside the record), metrics;
    and the record at its own samples (record_time, record[ch]) for drawing it at its full rate."""
    offset: float
    time: np.ndarray
    run: dict[str, np.ndarray]
    measured: dict[str, np.ndarray]
    units: dict[str, str]
    metrics: list[ChannelMetrics] = field(default_factory=list)
    auto: bool = True
    record_time: np.ndarray | None = None     # the record's own samples in run time (t_measured - offset), s
    record: dict[str, np.ndarray] = field(default_factory=dict)   # ... and its channels there, in run units
    warnings: list[str] = field(default_factory=list)   # what looks wrong in the map (the numbers may be too)

    def difference(self, channel: str) -> np.ndarray:
        """measured - run on the run's grid (NaN outside the record)."""
        return self.measured[channel] - self.run[channel]

    def report(self) -> str:
        """`warning: ...` lines (if any), `time offset: <s> s`, then one line per channel."""
        return "\n".join([*(f"warning: {w}" for w in self.warnings), f"time offset: {self.offset:.6f} s",
                          *(m.line() for m in self.metrics)])


def first_crossing(t: np.ndarray, v: np.ndarray, threshold: float) -> float:
    """Time where |v| first reaches `threshold` (linear between samples); NaN if it never does."""
    a = np.abs(v)
    i = int(np.argmax(a >= threshold))
    if a[i] < threshold:
        return math.nan
    if i == 0:
        return float(t[0])
    f = (threshold - a[i - 1]) / (a[i] - a[i - 1])
    return float(t[i - 1] + f * (t[i] - t[i - 1]))


def moving_average(t: np.ndarray, v: np.ndarray, width: float) -> np.ndarray:
    """The centred moving average of v over `width` seconds (in samples of t's median step); v itself if that is one
    sample."""
    v = np.asarray(v, float)
    n = int(round(width / float(np.median(np.diff(t))))) if len(t) > 1 else 1
    if n <= 1:
        return v
    from scipy.ndimage import uniform_filter1d
    return uniform_filter1d(v, n, mode="nearest")


def settled_crossing(t: np.ndarray, v: np.ndarray, threshold: float, width: float = CROSSING_SMOOTH) -> float:
    """The first crossing of `threshold` by the moving average of v over `width` s (a noise spike over the threshold
    before contact is no crossing); by v itself if the average never reaches it (a peak shorter than `width`)."""
    tc = first_crossing(t, moving_average(t, v, width), threshold)
    return tc if math.isfinite(tc) else first_crossing(t, v, threshold)


def find_offset(t_run, run, t_meas, meas, spec: AlignSpec, where=("run", "measured")) -> float:
    """t_measured - t_run: the first crossing of spec.threshold in both (of their 10 ms moving averages: a noise spike
    is no crossing), refined by the peak of the normalised cross-correlation over spec.window around the run's
    crossing, with a parabola through the peak for sub-sample accuracy. MeasuredError names the side that never
    reaches the threshold."""
    tr = settled_crossing(t_run, run, spec.threshold)
    tm = settled_crossing(t_meas, meas, spec.threshold)
    for tx, name, sig in ((tr, where[0], run), (tm, where[1], meas)):
        if not math.isfinite(tx):
            raise MeasuredError(name, "align.threshold", f"{spec.channel} never reaches {spec.threshold:g} (largest "
                                f"|value| {np.nanmax(np.abs(sig)):.4g}): lower the threshold or give --offset")
    coarse = tm - tr
    dt = float(np.median(np.diff(t_run)))
    sel = (t_run >= tr + spec.window[0]) & (t_run <= tr + spec.window[1])
    tw, x = t_run[sel], run[sel]
    if len(tw) < 8 or spec.max_shift <= 0:
        return coarse
    x = x - x.mean()
    K = max(1, int(round(spec.max_shift / dt)))
    lags = coarse + dt * np.arange(-K, K + 1)
    c = np.full(len(lags), -np.inf)
    for k, lag in enumerate(lags):
        q = tw + lag
        if q[0] < t_meas[0] or q[-1] > t_meas[-1]:
            continue
        y = np.interp(q, t_meas, meas)
        y = y - y.mean()
        den = math.sqrt(float(x @ x) * float(y @ y))
        c[k] = float(x @ y) / den if den > 0 else -np.inf
    k = int(np.argmax(c))
    if not np.isfinite(c[k]):
        return coarse
    if 0 < k < len(c) - 1 and np.isfinite(c[k - 1]) and np.isfinite(c[k + 1]):
        den = c[k - 1] - 2 * c[k] + c[k + 1]
        frac = 0.5 * (c[k - 1] - c[k + 1]) / den if den < 0 else 0.0
        return float(lags[k] + np.clip(frac, -1, 1) * dt)
    return float(lags[k])


def metrics_of(channel, unit, t, run, meas, offset) -> ChannelMetrics:
    """RMS and peak error, its time, and the correlation over the samples where the record has a value."""
    ok = np.isfinite(meas) & np.isfinite(run)
    if not ok.any():
        return ChannelMetrics(channel, unit, math.nan, math.nan, math.nan, math.nan, offset, 0)
    e = meas[ok] - run[ok]
    i = int(np.argmax(np.abs(e)))
    a, b = run[ok], meas[ok]
    r = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else math.nan
    return ChannelMetrics(channel, unit, float(np.sqrt(np.mean(e * e))), float(abs(e[i])), float(t[ok][i]), r,
                          offset, int(ok.sum()))


def compare_arrays(t_run, run: dict[str, np.ndarray], sig: MeasuredSignals, cmap: ChannelMap,
                   offset: float | None = None, run_name="run") -> Comparison:
    """Align (the given offset, the map's fixed one, or automatic), resample the record onto t_run, compute metrics."""
    auto = offset is None and cmap.align.offset is None
    if offset is None:
        offset = cmap.align.offset
    if offset is None:
        ch = cmap.align.channel
        offset = find_offset(t_run, run[ch], sig.time, sig.values[ch], cmap.align, (str(run_name), str(sig.path)))
    q = t_run + offset
    inside = (q >= sig.time[0] - 1e-12) & (q <= sig.time[-1] + 1e-12)
    if not inside.any():
        raise MeasuredError(sig.path, cmap.time_column, f"no overlap with the run with time offset {offset:g} s "
                            f"(record {sig.time[0]:g}..{sig.time[-1]:g} s, run {t_run[0]:g}..{t_run[-1]:g} s)")
    meas = {ch: np.where(inside, np.interp(q, sig.time, v), np.nan) for ch, v in sig.values.items()}
    names = cmap.run_channels
    cmp_ = Comparison(float(offset), t_run, {ch: run[ch] for ch in names}, {ch: meas[ch] for ch in names},
                      dict(sig.units), auto=auto, record_time=sig.time - offset,
                      record={ch: sig.values[ch] for ch in names}, warnings=list(cmap.warnings))
    cmp_.metrics = [metrics_of(ch, sig.units[ch], t_run, run[ch], meas[ch], float(offset)) for ch in names]
    return cmp_


def load_measured(measured_path, map_path, run_units: dict[str, str]) -> tuple[ChannelMap, MeasuredSignals]:
    """The checked map and the measured channels in run units; MeasuredError on a bad map or file."""
    cmap = load_map(map_path)
    return cmap, convert(cmap, read_record(measured_path), run_units)


def compare_run(run_path, measured_path, map_path, offset: float | None = None) -> Comparison:
    """Compare a run file with a measured record through a channel map (the app's and `dockmnemo validate`'s entry).
    Raises MeasuredError (map or measured file) or solver.runfile.RunFileError (run file)."""
    from solver.runfile import RunFile
    with RunFile(run_path) as run:
        units = {n: c.unit for n, c in run.channels.items()}
        cmap, sig = load_measured(measured_path, map_path, units)
        t = np.asarray(run.time, float)
        values = {ch: np.asarray(run.channel(ch), float) for ch in cmap.run_channels}
    return compare_arrays(t, values, sig, cmap, offset, Path(run_path))
