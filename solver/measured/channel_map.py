"""The channel map (TOML): which measured column is which run channel, in what unit, sign and sensor frame.

Units are converted with pint; a 6-component sensor set is moved to the mechanism base frame by a rigid transform
(F_base = s R F_s, M_base = s (R M_s + r x R F_s)). docs/measured-data.md describes the file."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from solver.errors import read_toml, unknown
from solver.measured.record import MeasuredError, MeasuredRecord

BASE_CHANNELS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")


def _load_checks() -> dict[str, float]:
    """The plausibility limits of resources/measured/checks.toml (all assumed)."""
    import tomllib
    with open(Path(__file__).resolve().parents[2] / "resources" / "measured" / "checks.toml", "rb") as fh:
        return {k: float(v) for k, v in tomllib.load(fh).items()}


CHECKS = _load_checks()


@lru_cache(maxsize=1)
def units():
    """The one pint unit registry."""
    import pint
    return pint.UnitRegistry()


def unit_factor(path, key: str, unit: str, to: str) -> float:
    """Factor from `unit` to `to` (pint; `·` is read as `*`); MeasuredError(path, key) if either is unknown or
    they measure different things."""
    import pint
    ureg = units()
    a, b = (u.replace("·", "*").replace("^", "**").strip() for u in (unit, to))
    if a == b:
        return 1.0
    try:
        return float(ureg.Quantity(1.0, a or "dimensionless").to(b or "dimensionless").magnitude)
    except pint.errors.DimensionalityError:
        raise MeasuredError(path, key, f"{unit!r} cannot be converted to {to!r} (the run channel's unit)") from None
    except (pint.errors.UndefinedUnitError, pint.errors.DefinitionSyntaxError, AttributeError, TypeError,
            ValueError, AssertionError) as exc:
        bad = unit if not _known_unit(a) else to
        raise MeasuredError(path, key, f"unknown unit {bad!r} ({type(exc).__name__})") from None


def _known_unit(u: str) -> bool:
    try:
        units().Unit(u or "dimensionless")
        return True
    except Exception:   # noqa: BLE001  (pint raises several kinds)
        return False


@dataclass(frozen=True)
class MappedChannel:
    """One measured column compared with one run channel."""
    column: str
    run: str
    unit: str
    sign: float = 1.0
    weight: float = 1.0
    key: str = ""            # where in the map (for messages)


@dataclass(frozen=True)
class Sensor:
    """A six-component force/moment sensor: its columns (Fx Fy Fz Mx My Mz in the sensor frame), units, and the rigid
    transform to the mechanism base frame (rotation R: sensor axes -> base axes; origin r: sensor origin in base)."""
    columns: tuple[str, ...]
    channels: tuple[str, ...]
    force_unit: str
    moment_unit: str
    rotation: np.ndarray
    origin: np.ndarray       # m
    sign: float = 1.0
    weight: float = 1.0
    key: str = ""


@dataclass(frozen=True)
class AlignSpec:
    """How to find the time offset (t_measured = t_run + offset): fixed, or automatic on one channel."""
    channel: str = "Fx"
    threshold: float = math.nan      # in the run channel's unit
    window: tuple[float, float] = (-0.05, 0.3)   # s around the run's threshold crossing: cross-correlation
    max_shift: float = 0.05          # s, search of the cross-correlation around the threshold estimate
    offset: float | None = None      # s, fixed (no automatic alignment)


@dataclass
class ChannelMap:
    """A validated channel map."""
    path: Path
    time_column: str
    time_unit: str
    align: AlignSpec
    channels: list[MappedChannel] = field(default_factory=list)
    sensors: list[Sensor] = field(default_factory=list)
    comment: str = ""
    warnings: list[str] = field(default_factory=list)   # `map: key: what looks wrong` (radians as degrees, ...)

    @property
    def run_channels(self) -> list[str]:
        """Every run channel the map compares, in map order."""
        return [c.run for c in self.channels] + [n for s in self.sensors for n in s.channels]

    def weights(self) -> dict[str, float]:
        return {**{c.run: c.weight for c in self.channels}, **{n: s.weight for s in self.sensors for n in s.channels}}


@dataclass
class MeasuredSignals:
    """Measured channels in the run's units and base frame, on the record's own time (s)."""
    path: Path
    time: np.ndarray
    values: dict[str, np.ndarray]
    units: dict[str, str]


def _str(path, key, v) -> str:
    if not isinstance(v, str) or not v.strip():
        raise MeasuredError(path, key, f"must be a non-empty string, found {v!r}")
    return v.strip()


def _num(path, key, v, lo=-math.inf, hi=math.inf) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise MeasuredError(path, key, f"must be a finite number, found {v!r}")
    if not lo <= v <= hi:
        raise MeasuredError(path, key, f"{v:g} is outside the allowed range [{lo:g}, {hi:g}]")
    return float(v)


def _vec(path, key, v, n) -> np.ndarray:
    if not isinstance(v, list) or len(v) != n:
        raise MeasuredError(path, key, f"must be a list of {n} numbers, found {v!r}")
    return np.array([_num(path, key, x) for x in v], float)


def _sign(path, key, v) -> float:
    if v not in (1, -1) or isinstance(v, bool):
        raise MeasuredError(path, key, f"must be 1 or -1, found {v!r}")
    return float(v)


def _check_known(path, prefix, table: dict, known):
    for k in table:
        if k not in known:
            raise MeasuredError(path, prefix + k, unknown(k, known))


def _looks_like_radians(ang: np.ndarray) -> bool:
    """Euler angles that read as radians: none beyond 2 pi, and a non-zero one within 0.005 of a multiple of 15 deg
    in radians (0.2618, 0.5236, 1.5708, ...) that is not a whole number of degrees."""
    if not ang.any() or np.abs(ang).max() > 2 * math.pi:
        return False
    step = math.pi / 12
    return any(a != 0 and a != round(a) and abs(a / step - round(a / step)) * step < 0.005 for a in ang)


def _rotation(path, key, s: dict, warnings: list | None = None) -> np.ndarray:
    """R (v_base = R v_sensor: its columns are the sensor axes in base components) from `rotation` (3x3) or from
    `euler_deg` + `euler_sequence` (scipy Rotation.from_euler); the identity if neither is given."""
    if "rotation" in s and "euler_deg" in s:
        raise MeasuredError(path, f"{key}.rotation", "give rotation or euler_deg, not both")
    if "rotation" in s:
        m = s["rotation"]
        if not (isinstance(m, list) and len(m) == 3 and all(isinstance(r, list) and len(r) == 3 for r in m)):
            raise MeasuredError(path, f"{key}.rotation", "must be a 3x3 list of lists")
        R = np.array([[_num(path, f"{key}.rotation", x) for x in r] for r in m])
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise MeasuredError(path, f"{key}.rotation", f"not a rotation (R R^T = I and det R = +1 within 1e-6; "
                                f"det R = {np.linalg.det(R):.6g})")
        return R
    if "euler_deg" in s:
        from scipy.spatial.transform import Rotation
        ang = _vec(path, f"{key}.euler_deg", s["euler_deg"], 3)
        seq = s.get("euler_sequence", "ZYX")
        if not (isinstance(seq, str) and len(seq) == 3 and (set(seq) <= set("XYZ") or set(seq) <= set("xyz"))
                and seq[0] != seq[1] and seq[1] != seq[2]):
            raise MeasuredError(path, f"{key}.euler_sequence", f"{seq!r}: three axes like \"ZYX\" (upper case: "
                                "intrinsic, rotating axes) or \"xyz\" (lower case: extrinsic, fixed axes)")
        if warnings is not None and _looks_like_radians(ang):
            warnings.append(f"{path}: {key}.euler_deg: {ang.tolist()} look like radians "
                            f"({np.degrees(ang).round(2).tolist()} deg if they are): the angles are read as degrees")
        return Rotation.from_euler(seq, ang, degrees=True).as_matrix()
    if "euler_sequence" in s:
        raise MeasuredError(path, f"{key}.euler_sequence", "given without euler_deg")
    return np.eye(3)


def load_map(path) -> ChannelMap:
    """Read and check a channel map TOML (what can be checked without the measured file and the run)."""
    path = Path(path)
    _, d = read_toml(path, MeasuredError, "channel map")
    _check_known(path, "", d, {"comment", "time", "align", "channel", "sensor"})
    t = d.get("time")
    if not isinstance(t, dict):
        raise MeasuredError(path, "time", "missing table: [time] with column = \"<name of the time column>\"")
    _check_known(path, "time.", t, {"column", "unit"})
    tcol = _str(path, "time.column", t.get("column"))
    tunit = _str(path, "time.unit", t.get("unit", "s"))
    unit_factor(path, "time.unit", tunit, "s")
    a = d.get("align", {})
    if not isinstance(a, dict):
        raise MeasuredError(path, "align", "must be a table")
    _check_known(path, "align.", a, {"channel", "threshold", "window", "max_shift", "offset"})
    window = _vec(path, "align.window", a.get("window", [-0.05, 0.3]), 2)
    if not window[0] < window[1]:
        raise MeasuredError(path, "align.window", f"start {window[0]:g} s must be before end {window[1]:g} s")
    align = AlignSpec(channel=_str(path, "align.channel", a.get("channel", "Fx")),
                      threshold=_num(path, "align.threshold", a["threshold"], 0.0) if "threshold" in a else math.nan,
                      window=(float(window[0]), float(window[1])),
                      max_shift=_num(path, "align.max_shift", a.get("max_shift", 0.05), 0.0, 10.0),
                      offset=_num(path, "align.offset", a["offset"]) if "offset" in a else None)
    if align.offset is None and not math.isfinite(align.threshold):
        raise MeasuredError(path, "align.threshold", "missing: the force level (run unit) whose first crossing "
                            "aligns the records, or a fixed align.offset in seconds")
    cm = ChannelMap(path, tcol, tunit, align, comment=str(d.get("comment", "")))
    chans = d.get("channel", [])
    sensors = d.get("sensor", [])
    if not isinstance(chans, list) or not all(isinstance(c, dict) for c in chans):
        raise MeasuredError(path, "channel", "must be [[channel]] tables")
    if not isinstance(sensors, list) or not all(isinstance(c, dict) for c in sensors):
        raise MeasuredError(path, "sensor", "must be [[sensor]] tables")
    if not chans and not sensors:
        raise MeasuredError(path, "channel", "missing: the map compares no channel (add [[channel]] or [[sensor]])")
    for k, c in enumerate(chans):
        key = f"channel[{k}]"
        _check_known(path, key + ".", c, {"column", "run", "unit", "sign", "weight"})
        unit = _str(path, f"{key}.unit", c.get("unit")) if "unit" in c else ""
        if unit and not _known_unit(unit.replace("·", "*")):
            raise MeasuredError(path, f"{key}.unit", f"unknown unit {unit!r}")
        cm.channels.append(MappedChannel(_str(path, f"{key}.column", c.get("column")),
                                         _str(path, f"{key}.run", c.get("run")), unit,
                                         _sign(path, f"{key}.sign", c.get("sign", 1)),
                                         _num(path, f"{key}.weight", c.get("weight", 1.0), 0.0), key))
    for k, s in enumerate(sensors):
        key = f"sensor[{k}]"
        _check_known(path, key + ".", s, {"columns", "channels", "force_unit", "moment_unit", "rotation", "euler_deg",
                                          "euler_sequence", "origin", "origin_unit", "sign", "weight"})
        cols = s.get("columns")
        if not isinstance(cols, list) or len(cols) != 6:
            raise MeasuredError(path, f"{key}.columns", "must list 6 columns: Fx Fy Fz Mx My Mz in the sensor frame")
        chs = s.get("channels", list(BASE_CHANNELS))
        if not isinstance(chs, list) or len(chs) != 6:
            raise MeasuredError(path, f"{key}.channels", "must list 6 run channels (default Fx Fy Fz Mx My Mz)")
        fu = _str(path, f"{key}.force_unit", s.get("force_unit", "N"))
        mu = _str(path, f"{key}.moment_unit", s.get("moment_unit", "N*m"))
        unit_factor(path, f"{key}.force_unit", fu, "N")
        unit_factor(path, f"{key}.moment_unit", mu, "N*m")
        ou = _str(path, f"{key}.origin_unit", s.get("origin_unit", "m"))
        r = _vec(path, f"{key}.origin", s.get("origin", [0.0, 0.0, 0.0]), 3) * unit_factor(path, f"{key}.origin_unit",
                                                                                           ou, "m")
        if np.hypot.reduce(r) > CHECKS["origin_limit"]:   # (hypot: no overflow to inf)
            raise MeasuredError(path, f"{key}.origin", f"{np.hypot.reduce(r):.4g} m from the mechanism base "
                                f"(origin_unit {ou!r}): a load cell is within {CHECKS['origin_limit']:g} m of it; "
                                "is origin_unit right (default m)?")
        cm.sensors.append(Sensor(tuple(_str(path, f"{key}.columns", c) for c in cols),
                                 tuple(_str(path, f"{key}.channels", c) for c in chs), fu, mu,
                                 _rotation(path, key, s, cm.warnings), r, _sign(path, f"{key}.sign", s.get("sign", 1)),
                                 _num(path, f"{key}.weight", s.get("weight", 1.0), 0.0), key))
    used: dict[str, str] = {tcol: "time.column"}   # one column is one measured quantity
    for where, col in [(f"{c.key}.column", c.column) for c in cm.channels] + \
            [(f"{s.key}.columns", c) for s in cm.sensors for c in s.columns]:
        if col in used:
            raise MeasuredError(path, where, f"column {col!r} is already used by {used[col]}: each column is one "
                                "measured quantity, mapped once")
        used[col] = where
    seen: dict[str, str] = {}
    for c in cm.channels:
        if c.run in seen:
            raise MeasuredError(path, f"{c.key}.run", f"{c.run!r} is already compared by {seen[c.run]}")
        seen[c.run] = c.key
    for s in cm.sensors:
        for n in s.channels:
            if n in seen:
                raise MeasuredError(path, f"{s.key}.channels", f"{n!r} is already compared by {seen[n]}")
            seen[n] = s.key
    if align.offset is None and align.channel not in seen:
        raise MeasuredError(path, "align.channel", f"{align.channel!r} is not a compared run channel "
                            f"({', '.join(seen)})")
    return cm


def convert(cmap: ChannelMap, record: MeasuredRecord, run_units: dict[str, str]) -> MeasuredSignals:
    """The mapped columns in run units and the base frame, on the record's time in seconds. `run_units`: the run's
    channel -> unit; a channel the run does not have is refused (map key named)."""
    p = cmap.path
    t = record.column(cmap.time_column, "time.column", p) * unit_factor(p, "time.unit", cmap.time_unit, "s")
    n = len(t)
    if n < 2:
        raise MeasuredError(record.path, cmap.time_column, "needs at least 2 samples")
    if not np.all(np.isfinite(t)):
        bad = int(np.argmax(~np.isfinite(t)))
        raise MeasuredError(record.path, cmap.time_column, f"time must be a finite number (sample {bad}: {t[bad]})")
    dt = np.diff(t)
    if np.any(dt <= 0):
        bad = int(np.argmax(dt <= 0)) + 1
        what = "the same time stamp as" if dt[bad - 1] == 0 else "earlier than"
        raise MeasuredError(record.path, cmap.time_column, f"time must increase strictly: sample {bad} "
                            f"({float(t[bad]):.9g} s) is {what} sample {bad - 1} ({float(t[bad - 1]):.9g} s)")
    step, span = float(np.median(dt)), float(t[-1] - t[0])
    if not (CHECKS["min_sample_step"] <= step <= CHECKS["max_sample_step"] and span <= CHECKS["max_span"]):
        raise MeasuredError(p, "time.unit", f"{cmap.time_unit!r} makes the record's samples {step:.3g} s apart over "
                            f"{span:.3g} s: far outside a measured record ({CHECKS['min_sample_step']:g} to "
                            f"{CHECKS['max_sample_step']:g} s apart, at most {CHECKS['max_span']:g} s long); is the "
                            "unit of the time column right?")

    def col(name, where):
        v = record.column(name, where, p)
        if len(v) != n:
            raise MeasuredError(record.path, name, f"{len(v)} values, the time column {cmap.time_column!r} has {n}")
        return v

    def run_unit(name, where):
        if name not in run_units:
            raise MeasuredError(p, where, f"{name!r}: {unknown(name, run_units, 'run channel')}")
        return run_units[name]
    out, out_units = {}, {}
    for c in cmap.channels:
        ru = run_unit(c.run, f"{c.key}.run")
        out[c.run] = c.sign * col(c.column, f"{c.key}.column") * unit_factor(p, f"{c.key}.unit", c.unit or ru, ru)
        out_units[c.run] = ru
    for s in cmap.sensors:
        ru = [run_unit(ch, f"{s.key}.channels") for ch in s.channels]
        cols = [col(c, f"{s.key}.columns") for c in s.columns]
        fu = unit_factor(p, f"{s.key}.force_unit", s.force_unit, "N")
        mu = unit_factor(p, f"{s.key}.moment_unit", s.moment_unit, "N*m")
        R, r = s.rotation, s.origin

        def turned(first, k, factor):   # (R v_s)_k, one column at a time (memory: a few columns, not n x 6)
            v = (R[k, 0] * factor) * cols[first]
            v += (R[k, 1] * factor) * cols[first + 1]
            v += (R[k, 2] * factor) * cols[first + 2]
            return v
        F = [turned(0, k, fu) for k in range(3)]                 # R F_s
        M = [turned(3, k, mu) for k in range(3)]                 # R M_s + r x R F_s
        for k in range(3):
            a, b = (k + 1) % 3, (k + 2) % 3
            M[k] += r[a] * F[b]
            M[k] -= r[b] * F[a]
        for k, ch in enumerate(s.channels):
            si = unit_factor(p, f"{s.key}.channels", "N" if k < 3 else "N*m", ru[k])
            v = F[k] if k < 3 else M[k - 3]
            v *= s.sign * si
            out[ch] = v
            out_units[ch] = ru[k]
    for ch, v in out.items():
        if not np.all(np.isfinite(v)):
            bad = int(np.argmax(~np.isfinite(v)))
            raise MeasuredError(record.path, ch, f"not a finite number at sample {bad} (t = {t[bad]:g} s)")
    return MeasuredSignals(record.path, t, out, out_units)
