"""Campaigns: many docking runs over an initial-condition envelope, run on Dask, summarised in DIR/summary.h5.

The campaign file, directory layout and resume semantics are described in docs/campaigns.md.
"""
from __future__ import annotations

import contextlib
import copy
import difflib
import errno
import hashlib
import itertools
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np
import tomlkit

from solver import schema
from solver.errors import InputError, read_toml, unknown
from solver.mechanisms import DEFAULT_TYPE
from solver.verdict import (DEFAULT_CRITERIA, Criteria, CriteriaError, channel_range, evaluate, load_criteria,
                            release_titles)

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "resources" / "scenarios"
FORMAT_NAME, FORMAT_VERSION = "dockmnemo-campaign", 1
SAMPLINGS = ("grid", "lhs", "random")
KEEPS = ("summary", "failures", "failures_and_extremes", "all")
DISTRIBUTIONS = ("uniform", "normal", "values")
STATUSES = ("ok", "diverged", "error")
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[(\d+)\])?$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SUMMARY_FILE, CAMPAIGN_FILE, MANIFEST_FILE = "summary.h5", "campaign.toml", "manifest.json"
ROWS_DIR, RUNS_DIR, BASE_DIR = "rows", "runs", "base"


class CampaignError(InputError):
    """Bad campaign input or directory: names the file, the key and what is wrong."""


class CampaignWriteError(OSError):
    """A file of the campaign directory could not be written (disk full, file too large): names it and the cause;
    nothing half-written is left (the rows before it are kept)."""

    def __init__(self, path, exc: BaseException | str):
        from solver.runfile import _write_problem
        self.path = str(path)
        super().__init__(f"{self.path}: writing failed: {exc if isinstance(exc, str) else _write_problem(exc)}")

    def __str__(self):
        return self.args[0]


@dataclass(frozen=True)
class VariedParameter:
    """One varied initial condition: column name, the dotted scenario key it sets, unit and axis label."""
    name: str
    key: str
    unit: str
    label: str


@dataclass(frozen=True)
class ParameterSpec:
    """A varied parameter and how it is sampled."""
    param: VariedParameter
    distribution: str = "uniform"
    lo: float = math.nan
    hi: float = math.nan
    mean: float = math.nan
    sd: float = math.nan
    values: tuple = ()
    levels: int = 0
    polar: tuple[str, ...] = ()          # a radius: these two keys get r cos(angle), r sin(angle)
    angle: VariedParameter | None = None     # and its angle column (deg, uniform over [0, 360))

    @property
    def columns(self) -> list[VariedParameter]:
        """The summary columns this parameter gives: itself, and a polar radius's angle."""
        return [self.param] if self.angle is None else [self.param, self.angle]

    def keys(self) -> tuple[str, ...]:
        """The scenario keys it sets."""
        return self.polar or (self.param.key,)

    def set(self, sc: dict, vals: dict[str, float]) -> None:
        """Set its scenario keys in `sc` from one run's values by column name."""
        if not self.polar:
            set_key(sc, self.param.key, vals[self.param.name])
            return
        r, a = vals[self.param.name], math.radians(vals[self.angle.name])
        set_key(sc, self.polar[0], r * math.cos(a))
        set_key(sc, self.polar[1], r * math.sin(a))

    def corner(self, highest: bool) -> dict:
        """Scenario keys at the envelope's lowest or highest corner (a polar pair: each component at -/+ the radius)."""
        lo, hi = self.extremes()
        if not self.polar:
            return {self.param.key: hi if highest else lo}
        return {k: hi if highest else -hi for k in self.polar}

    def grid(self) -> list[float]:
        """Grid levels: the listed values, or `levels` points from min to max."""
        if self.values:
            return list(self.values)
        if self.levels == 1:
            return [0.5 * (self.lo + self.hi)]
        return list(np.linspace(self.lo, self.hi, self.levels))

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Map uniform [0, 1) numbers to this parameter's distribution."""
        if self.distribution == "values":
            idx = np.minimum((u * len(self.values)).astype(int), len(self.values) - 1)
            return np.array(self.values, float)[idx]
        if self.distribution == "normal":
            nd = statistics.NormalDist(self.mean, self.sd)
            x = np.array([nd.inv_cdf(min(max(float(v), 1e-12), 1 - 1e-12)) for v in u])
            return np.clip(x, self.lo if math.isfinite(self.lo) else -np.inf, self.hi if math.isfinite(self.hi) else np.inf)
        return self.lo + u * (self.hi - self.lo)

    def extremes(self) -> tuple[float, float]:
        """Smallest and largest value the sampling can give (for checking the envelope against the scenario rules)."""
        if self.values:
            return min(self.values), max(self.values)
        if self.distribution == "normal":
            lo = self.lo if math.isfinite(self.lo) else self.mean - 8 * self.sd
            hi = self.hi if math.isfinite(self.hi) else self.mean + 8 * self.sd
            return lo, hi
        return self.lo, self.hi


@dataclass
class Campaign:
    """A validated campaign file: the base scenario (as a TOML dict), what varies and how, what to keep."""
    path: Path
    text: str
    name: str
    comment: str
    base_path: Path
    base_text: str
    base: dict
    mechanism: str
    variant: str
    t_end: float
    sampling: str
    count: int
    seed: int | None
    keep: str
    extreme_fraction: float
    criteria: Criteria
    specs: list[ParameterSpec]
    fixed: dict = field(default_factory=dict)
    pairs: list[tuple[str, str]] = field(default_factory=list)   # contact pairs of the mechanism: (name, label)
    criteria_path: Path = DEFAULT_CRITERIA
    criteria_text: str = ""
    mechanism_type: str = DEFAULT_TYPE                          # the base scenario's mechanism type (solver.mechanisms)
    end_uncaptured: bool = False     # a run not captured by the criteria's capture time ends there (verdict settled)
    _samples: np.ndarray | None = None

    @property
    def mtype(self):
        """The MechanismType of the campaign's runs."""
        from solver import mechanisms
        return mechanisms.mechanism_type(self.mechanism_type)

    @property
    def parameters(self) -> list[VariedParameter]:
        """Every varied column (a polar radius followed by its angle), in the samples' order."""
        return [c for s in self.specs for c in s.columns]

    def samples(self) -> np.ndarray:
        """(count, n_parameters) varied values; deterministic from the file (seed)."""
        if self._samples is None:
            self._samples = _sample(self)
        return self._samples

    def values(self, i: int) -> dict[str, float]:
        """The varied values of run i by parameter name."""
        row = self.samples()[i]
        return {p.name: float(v) for p, v in zip(self.parameters, row)}

    def scenario(self, i: int) -> dict:
        """The full scenario (TOML dict) of run i: the base with the fixed and varied keys set."""
        if not 0 <= i < self.count:
            raise IndexError(f"{self.path}: run index {i} outside 0..{self.count - 1}")
        sc = copy.deepcopy(self.base)
        for k, v in self.fixed.items():
            set_key(sc, k, v)
        vals = self.values(i)
        for s in self.specs:
            s.set(sc, vals)
        sc["name"] = f"{self.name}_{i:05d}"
        sc["comment"] = (f"campaign {self.name} run {i}: "
                         + ", ".join(f"{p.name} = {vals[p.name]:.6g} {p.unit}".rstrip() for p in self.parameters))
        return sc

    def outputs(self) -> dict[str, tuple[str, str]]:
        """Numeric output columns of the summary: name -> (unit, label)."""
        return output_columns(self.pairs, self.mtype)


# ---- TOML --------------------------------------------------------------------------------------------------

def dump_toml(d: dict) -> str:
    """TOML text of a dict of scalars, lists and tables (a scenario file); round-trips floats exactly (tomlkit)."""
    return tomlkit.dumps(d)


def split_key(key: str):
    """("section.key[2]") -> (["section", "key"], 2); None if it is not a dotted key with an optional [index]."""
    m = _KEY.match(key)
    if not m:
        return None
    return m.group(1).split("."), (int(m.group(2)) if m.group(2) is not None else None)


def get_key(d: dict, key: str):
    """The number (or list) at a dotted key with an optional [index]; KeyError with the reason otherwise."""
    parts, idx = split_key(key)
    cur = d
    for p in parts:
        if not isinstance(cur, dict) or p not in cur:
            near = difflib.get_close_matches(p, list(cur), n=1) if isinstance(cur, dict) else []
            raise KeyError(f"no key {'.'.join(parts[:parts.index(p) + 1])!r}"
                           + (f" (did you mean {near[0]}?)" if near else ""))
        cur = cur[p]
    if idx is not None:
        if not isinstance(cur, list) or idx >= len(cur):
            raise KeyError(f"{'.'.join(parts)} is not a list with an element [{idx}]")
        cur = cur[idx]
    return cur


def set_key(d: dict, key: str, value):
    """Set the value at a dotted key with an optional [index], making the tables on the way."""
    parts, idx = split_key(key)
    cur = d
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    if idx is None:
        cur[parts[-1]] = value
    else:
        cur[parts[-1]][idx] = value


# ---- loading and validating a campaign file ----------------------------------------------------------------

def _read_toml(path, err) -> tuple[str, dict]:
    return read_toml(path, err, "campaign file" if err is CampaignError else "scenario file")


def _num(path, key, v, lo=-math.inf, hi=math.inf, integer=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise CampaignError(path, key, f"must be a finite number, found {v!r}")
    if integer and (not isinstance(v, int)):
        raise CampaignError(path, key, f"must be a whole number, found {v!r}")
    if not lo <= v <= hi:
        raise CampaignError(path, key, f"{v:g} is outside the allowed range [{lo:g}, {hi:g}]")
    return v


def resolve_base(campaign_path: Path, name: str) -> Path:
    """The base scenario: a path relative to the campaign file, else a file in a mechanism type's scenarios
    (resources/scenarios, resources/peripheral/scenarios)."""
    p = Path(name)
    dirs = scenario_dirs()
    for cand in ([p] if p.is_absolute() else [campaign_path.parent / p, *(d / p for d in dirs)]):
        if cand.is_file():
            return cand.resolve()
    raise CampaignError(campaign_path, "base_scenario", f"no scenario {name!r} next to the campaign file or in "
                        + " or ".join(str(d) for d in dirs))


def scenario_dirs() -> list[Path]:
    """The bundled scenario directories of the registered mechanism types, the default type's first."""
    from solver import mechanisms
    dirs = [SCENARIOS] + [mechanisms.mechanism_type(n).scenarios_dir for n in mechanisms.names()]
    return list(dict.fromkeys(d for d in dirs if d is not None))


def load_campaign(path, base_path=None, check_scenarios: bool = True, criteria_path=None) -> Campaign:
    """Read and validate a campaign TOML; raises CampaignError(file, key, problem).

    `base_path` / `criteria_path` override the file's base_scenario / criteria (a campaign directory's stored
    copies). `check_scenarios` loads the envelope's corner scenarios through the solver's validation; without it a
    base this version cannot load is no error (a directory read back: its rows stand as the version that made them ran
    them; its contact pairs are then unknown)."""
    from solver import mechanisms
    from solver.scenario import ScenarioError, load_model, mechanism_file_type
    path = Path(path)
    text, cfg = _read_toml(path, CampaignError)
    known = {"name", "comment", "base_scenario", "mechanism", "t_end", "sampling", "count", "seed", "keep",
             "extreme_fraction", "criteria", "fixed", "parameter", "end_uncaptured"}
    for k in cfg:
        if k not in known:
            raise CampaignError(path, k, unknown(k, known))
    name = cfg.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise CampaignError(path, "name", f"must be a name of letters, digits, _ . - (found {name!r})")
    comment = cfg.get("comment", "")
    if not isinstance(comment, str):
        raise CampaignError(path, "comment", "must be a string")
    bname = cfg.get("base_scenario")
    if not isinstance(bname, str) or not bname:
        raise CampaignError(path, "base_scenario", "missing: name a scenario TOML (e.g. \"nominal_existing.toml\")")
    bpath = Path(base_path).resolve() if base_path is not None else resolve_base(path, bname)
    try:
        btext, base = _read_toml(bpath, ScenarioError)
    except ScenarioError as exc:
        raise CampaignError(path, "base_scenario", str(exc)) from None
    mech = cfg.get("mechanism", base.get("mechanism"))
    if not isinstance(mech, str) or not mech:
        raise CampaignError(path, "mechanism", f"must name a mechanism (found {mech!r})")
    base["mechanism"] = mech
    if mech.endswith(".toml") and not Path(mech).is_absolute():   # a mechanism file next to the base scenario
        mpath = (bpath.parent / mech).resolve()
        if not mpath.is_file() and (bpath.parent / Path(mech).name).is_file():   # its copy in a campaign's DIR/base
            mpath = (bpath.parent / Path(mech).name).resolve()
        base["mechanism"] = str(mpath)
    mtype_name = mechanism_file_type(base["mechanism"], bpath.parent)
    try:
        mtype = mechanisms.mechanism_type(mtype_name)
    except KeyError as exc:
        raise CampaignError(path, "mechanism", exc.args[0]) from None
    if "t_end" not in cfg:
        raise CampaignError(path, "t_end", "missing: simulated seconds per run (a capture window, e.g. 20.0)")
    t_end = float(_num(path, "t_end", cfg["t_end"], 1e-3, 1e5))
    sampling = cfg.get("sampling", "random")
    if sampling not in SAMPLINGS:
        raise CampaignError(path, "sampling", f"{sampling!r}: must be one of {', '.join(SAMPLINGS)}")
    seed = cfg.get("seed")
    if sampling != "grid":
        if seed is None:
            raise CampaignError(path, "seed", f"missing: {sampling} sampling needs an integer seed")
        seed = int(_num(path, "seed", seed, 0, 2 ** 63 - 1, integer=True))
    keep = cfg.get("keep", "failures")
    if keep not in KEEPS:
        raise CampaignError(path, "keep", f"{keep!r}: must be one of {', '.join(KEEPS)}")
    xf = float(_num(path, "extreme_fraction", cfg.get("extreme_fraction", 0.8), 0.0, 10.0))
    if criteria_path is not None:
        cpath = Path(criteria_path)
    elif "criteria" in cfg:
        cname = cfg["criteria"]
        if not isinstance(cname, str):
            raise CampaignError(path, "criteria", "must be a path to a criteria TOML")
        cpath = Path(cname) if Path(cname).is_absolute() else path.parent / cname
        if not cpath.is_file() and (ROOT / "resources" / cname).is_file():
            cpath = ROOT / "resources" / cname
    else:
        cpath = mtype.criteria_file or DEFAULT_CRITERIA     # the mechanism type's capture criteria
    try:
        criteria = load_criteria(cpath)
    except CriteriaError as exc:
        raise CampaignError(path, "criteria", str(exc)) from None
    fixed = cfg.get("fixed", {})
    if not isinstance(fixed, dict):
        raise CampaignError(path, "fixed", "must be a table of \"dotted.scenario.key\" = value")
    for k, v in fixed.items():
        _check_key(path, f"fixed.{k!r}", k, base)
        _declared(path, f"fixed.{k!r}", k, mtype_name, numbers_only=False)
    plist = cfg.get("parameter")
    if not isinstance(plist, list) or not plist or not all(isinstance(p, dict) for p in plist):
        raise CampaignError(path, "parameter", "missing: add [[parameter]] tables (name, key, min, max, ...)")
    specs = [_parameter(path, k, p, base, sampling, mtype) for k, p in enumerate(plist)]
    names = [c.name for s in specs for c in s.columns]
    keys = [key for s in specs for key in s.keys()]
    for k, s in enumerate(specs):
        for c in s.columns:
            if names.count(c.name) > 1:
                raise CampaignError(path, f"parameter[{k}].name", f"{c.name!r} is used twice")
        for key in s.keys():
            if keys.count(key) > 1 or key in fixed:
                raise CampaignError(path, f"parameter[{k}].key", f"{key!r} is set twice")
    if sampling == "grid":
        n = math.prod(len(s.grid()) for s in specs)
        count = cfg.get("count", n)
        if count != n:
            raise CampaignError(path, "count", f"{count!r}: a grid of these levels has {n} runs (leave count out)")
    else:
        if "count" not in cfg:
            raise CampaignError(path, "count", "missing: the number of runs")
        count = int(_num(path, "count", cfg["count"], 1, 10_000_000, integer=True))
    c = Campaign(path, text, name, comment, bpath, btext, base, mech, "", t_end, sampling, count, seed, keep, xf,
                 criteria, specs, dict(fixed))
    c.mechanism_type = mtype_name
    c.end_uncaptured = cfg.get("end_uncaptured", False)
    if not isinstance(c.end_uncaptured, bool):
        raise CampaignError(path, "end_uncaptured", f"must be true or false (found {c.end_uncaptured!r})")
    if c.end_uncaptured and not math.isfinite(criteria.by_time):
        raise CampaignError(path, "end_uncaptured", "the criteria set no capture time ([capture] by_time)")
    c.criteria_path = cpath.resolve()
    c.criteria_text = cpath.read_text(encoding="utf-8")
    # the mechanism, its contact pairs, and the envelope's corners through the solver's own validation
    corners = {"base": {}, "lowest": {k: v for s in specs for k, v in s.corner(False).items()},
               "highest": {k: v for s in specs for k, v in s.corner(True).items()}}
    with tempfile.TemporaryDirectory(prefix="dockmnemo-campaign-") as td:
        for label, setv in corners.items():
            if label != "base" and not check_scenarios:
                break
            sc = copy.deepcopy(base)
            for k, v in {**fixed, **setv}.items():
                set_key(sc, k, v)
            sp = Path(td) / f"{name}_{label}.toml"
            sp.write_text(dump_toml(sc))
            try:
                m = load_model(sp)
            except ScenarioError as exc:
                if not check_scenarios:   # a directory read back: its rows stand as the version that made them ran them
                    c.variant = Path(str(base.get("mechanism", ""))).stem      # (its contact pairs unknown here)
                    break
                who = next((f"parameter {s.param.name!r} ({', '.join(s.keys())})" for s in specs
                            if label != "base" and any(key.split("[")[0] == exc.key or exc.key.startswith(key)
                                                       for key in s.keys())), None)
                where = (f"the {label} corner of the envelope, {who}" if who else
                         f"the base scenario {bpath.name}" + (" with [fixed]" if fixed else "")
                         if label == "base" else f"the {label} corner of the envelope")
                raise CampaignError(path, "parameter" if who else "base_scenario",
                                    f"{where}: scenario check fails: {exc.key}: {exc.problem}") from None
            if label == "base":
                c.variant = m.variant
                c.pairs = [(p.name, p.label) for p in mtype.pairs(m)]
    return c


def _check_key(path, where, key, base):
    if not isinstance(key, str) or split_key(key) is None:
        raise CampaignError(path, where, f"{key!r} is not a dotted scenario key like \"initial.lateral_miss[0]\"")
    if key.startswith("overrides.") and "[" not in key:   # load_model checks override names itself
        return
    try:
        v = get_key(base, key)
    except KeyError as exc:
        raise CampaignError(path, where, f"{key!r}: {exc.args[0]} in the base scenario") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if not (isinstance(v, str) and where.startswith("fixed")):
            raise CampaignError(path, where, f"{key!r} is {v!r} in the base scenario, not a number")


def _declared(path, where: str, key: str, mechanism_type: str, numbers_only: bool = True) -> schema.Param:
    """The schema's Param of a varied (a number) or fixed scenario key of the mechanism type; CampaignError if the
    schema does not declare it so."""
    try:
        p = schema.lookup(key, mechanism_type, file="scenario")
    except schema.UnknownKey as exc:
        raise CampaignError(path, where, f"{exc} among the scenario keys (docs/parameters.md)") from None
    if numbers_only and p.kind not in ("number", "int", "vector"):
        raise CampaignError(path, where, f"{key!r} is not a number a campaign can vary (its kind: {p.kind})")
    return p


def _parameter(path, k, p: dict, base: dict, sampling: str, mtype) -> ParameterSpec:
    w = f"parameter[{k}]"
    known = {"name", "key", "polar", "angle", "unit", "label", "distribution", "min", "max", "mean", "sd", "values",
             "levels"}
    for x in p:
        if x not in known:
            raise CampaignError(path, f"{w}.{x}", unknown(x, known))
    name = p.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise CampaignError(path, f"{w}.name", f"must be a column name of letters, digits and _ (found {name!r})")
    _column_name(path, f"{w}.name", name, mtype)
    w = f"parameter[{k}] ({name})"
    polar = _polar(path, w, p, base, sampling, mtype)
    key = p.get("key") if not polar else f"radius({', '.join(polar)})"
    if not polar:
        _check_key(path, f"{w}.key", key, base)
    decl = _declared(path, f"{w}.key", polar[0] if polar else key, mtype.name)
    unit = p.get("unit", decl.unit)                 # the schema's unit and label unless the campaign states its own
    label = p.get("label", f"{decl.label} (radial)" if polar else decl.component_label(split_key(key)[1]))
    angle_label = f"{p.get('label', decl.label)} direction"
    if not isinstance(unit, str) or not isinstance(label, str):
        raise CampaignError(path, f"{w}.unit", "unit and label must be strings")
    vp = VariedParameter(name, key, unit, label)
    angle = None
    if polar:
        aname = p.get("angle")
        _column_name(path, f"{w}.angle", aname, mtype)
        angle = VariedParameter(aname, f"angle({', '.join(polar)})", "deg", angle_label)
    dist = p.get("distribution", "values" if "values" in p else "uniform")
    if dist not in DISTRIBUTIONS:
        raise CampaignError(path, f"{w}.distribution", f"{dist!r}: must be one of {', '.join(DISTRIBUTIONS)}")
    lo = float(_num(path, f"{w}.min", p["min"])) if "min" in p else math.nan
    hi = float(_num(path, f"{w}.max", p["max"])) if "max" in p else math.nan
    if math.isfinite(lo) and math.isfinite(hi) and not lo <= hi:
        raise CampaignError(path, f"{w}.max", f"{hi:g} is below min {lo:g}")
    values, levels, mean, sd = (), 0, math.nan, math.nan
    if dist == "values":
        v = p.get("values")
        if not isinstance(v, list) or not v:
            raise CampaignError(path, f"{w}.values", "must be a non-empty list of numbers")
        values = tuple(float(_num(path, f"{w}.values", x)) for x in v)
    elif dist == "normal":
        if sampling == "grid":
            raise CampaignError(path, f"{w}.distribution", "a grid needs min/max with levels, or values")
        for x in ("mean", "sd"):
            if x not in p:
                raise CampaignError(path, f"{w}.{x}", "missing: a normal distribution needs mean and sd")
        mean, sd = float(_num(path, f"{w}.mean", p["mean"])), float(_num(path, f"{w}.sd", p["sd"], 0.0))
        if sd <= 0:
            raise CampaignError(path, f"{w}.sd", "must be positive")
    else:
        for x, v in (("min", lo), ("max", hi)):
            if not math.isfinite(v):
                raise CampaignError(path, f"{w}.{x}", "missing: a uniform range needs min and max")
    if sampling == "grid" and dist == "uniform":
        if "levels" not in p:
            raise CampaignError(path, f"{w}.levels", "missing: a grid needs the number of levels (or values)")
        levels = int(_num(path, f"{w}.levels", p["levels"], 1, 10_000, integer=True))
    elif "levels" in p:
        raise CampaignError(path, f"{w}.levels", f"only a grid has levels (sampling is {sampling!r})")
    spec = ParameterSpec(vp, dist, lo, hi, mean, sd, values, levels, polar, angle)
    if polar and spec.extremes()[0] < 0:
        raise CampaignError(path, f"{w}.min", f"a radius ({', '.join(polar)}) cannot be negative: {spec.extremes()[0]:g}")
    return spec


def _column_name(path, where, name, mtype):
    if not isinstance(name, str) or not _NAME.match(name):
        raise CampaignError(path, where, f"must be a column name of letters, digits and _ (found {name!r})")
    if name in output_columns([], mtype) or name in ("index", "status", "message", "captured", "passed", "verdict"):
        raise CampaignError(path, where, f"{name!r} is a summary output column; choose another name")


def _polar(path, w, p: dict, base: dict, sampling: str, mtype) -> tuple[str, ...]:
    """The two keys of a radius-and-angle parameter (`polar`, with `angle` naming the angle's column), or ()."""
    if "polar" not in p:
        if "angle" in p:
            raise CampaignError(path, f"{w}.angle", "only a polar parameter has an angle (give polar = [key, key])")
        return ()
    keys = p["polar"]
    if "key" in p:
        raise CampaignError(path, f"{w}.key", "give key or polar (two keys), not both")
    if not (isinstance(keys, list) and len(keys) == 2 and all(isinstance(x, str) for x in keys)) or keys[0] == keys[1]:
        raise CampaignError(path, f"{w}.polar", f"must be two different scenario keys, e.g. [\"initial.lateral_miss[0]\", "
                            f"\"initial.lateral_miss[1]\"] (found {keys!r})")
    for x in keys:
        _check_key(path, f"{w}.polar", x, base)
        _declared(path, f"{w}.polar", x, mtype.name)
    if "angle" not in p:
        raise CampaignError(path, f"{w}.angle", "missing: a polar parameter names its angle's column (deg, 0-360)")
    if sampling == "grid":
        raise CampaignError(path, f"{w}.polar", "a polar parameter needs lhs or random sampling")
    return tuple(keys)


def _sample(c: Campaign) -> np.ndarray:
    """Varied values (count, P): a full factorial grid (first parameter slowest), Latin hypercube or random."""
    P = len(c.parameters)
    if c.sampling == "grid":
        return np.array(list(itertools.product(*[s.grid() for s in c.specs])), float).reshape(c.count, P)
    rng = np.random.Generator(np.random.PCG64(c.seed))
    if c.sampling == "random":
        u = rng.random((c.count, P))
    else:   # Latin hypercube: one sample in each of `count` equal strata per parameter, strata shuffled
        u = np.empty((c.count, P))
        for j in range(P):
            u[:, j] = (rng.permutation(c.count) + rng.random(c.count)) / c.count
    cols, j = [], 0
    for s in c.specs:             # a polar radius's angle is the next column, uniform over [0, 360) deg
        cols.append(s.from_unit(u[:, j]))
        if s.angle is not None:
            cols.append(360.0 * u[:, j + 1])
        j += len(s.columns)
    return np.column_stack(cols)


# ---- one run's summary row ---------------------------------------------------------------------------------

HEAD_OUTPUTS = {
    "t_capture": ("s", "capture time (NaN: no capture)"),
    "t_final": ("s", "last simulated time"),
    "peak_base_force": ("N", "peak base force |F|"),
    "peak_base_moment": ("N*m", "peak base moment |M|"),
    "peak_Fx": ("N", "peak |Fx| on the mechanism base (axial)"),
    "peak_Fy": ("N", "peak |Fy| on the mechanism base"),
    "peak_Fz": ("N", "peak |Fz| on the mechanism base"),
    "peak_Mx": ("N*m", "peak |Mx| on the mechanism base (torsion)"),
    "peak_My": ("N*m", "peak |My| on the mechanism base"),
    "peak_Mz": ("N*m", "peak |Mz| on the mechanism base"),
}
TAIL_OUTPUTS = {
    "max_depth": ("m", "largest contact penetration"),
    "limit_use": ("", "largest fraction of a criteria limit reached (loads, strokes)"),
    "wall_time": ("s", "wall time of the run (solver + file)"),
}
KEY_OUTPUTS = ("t_capture", "peak_base_force", "peak_base_moment")   # the envelope map's hover, then the type's


def _type(mtype):
    from solver import mechanisms
    return mechanisms.mechanism_type(DEFAULT_TYPE) if mtype is None else mtype


def type_outputs(mtype=None) -> dict[str, tuple[str, str]]:
    """The columns every run has (capture, base loads, depth, limit use, wall time) around the mechanism type's own
    (MechanismType.summary_outputs; default the default type's): name -> (unit, label)."""
    own = {o.name: (o.unit, o.label) for o in _type(mtype).summary_outputs}
    return {**HEAD_OUTPUTS, **own, **TAIL_OUTPUTS}


def output_columns(pairs, mtype=None) -> dict[str, tuple[str, str]]:
    """Numeric output columns: the fixed ones and the type's (type_outputs), then peak_<pair> per contact pair."""
    return {**type_outputs(mtype), **{f"peak_{n}": ("N", f"peak contact force, {lab}") for n, lab in pairs}}


def _peak(run, name) -> float:
    """max |value| of a channel: at the solver's rate where the run file has its extrema (verdict.channel_range)."""
    if name not in run.channels:
        return math.nan
    lo, _, hi, _ = channel_range(run, name)
    return max(abs(lo), abs(hi)) if math.isfinite(lo) and math.isfinite(hi) else math.nan


def _max(run, name) -> float:
    if name not in run.channels:
        return math.nan
    return channel_range(run, name)[2]


def _first_time_at_least(run, name, least) -> float:
    if name not in run.channels:
        return math.nan
    hit = np.flatnonzero(run.channel(name) >= least)
    return float(run.time[hit[0]]) if len(hit) else math.nan


def summary_output(run, o) -> float:
    """One SummaryOutput of a RunFile (NaN where the run has none of its channels or never reaches it)."""
    if o.how == "time_at_least":
        vals = [_first_time_at_least(run, n, o.at_least) for n in o.channels]
        vals = [v for v in vals if math.isfinite(v)]
        return min(vals) if vals else math.nan
    f = _peak if o.how == "peak" else _max
    vals = [v for v in (f(run, n) for n in o.channels) if math.isfinite(v)]
    return max(vals) if vals else math.nan


def summarise_run(run, criteria: Criteria | None = None) -> dict:
    """Summary of one RunFile: numeric outputs (dict), captured, passed and the verdict line; the outputs and the
    default criteria are those of the run's mechanism type."""
    from solver import mechanisms
    from solver.verdict import criteria_file_for
    mtype = mechanisms.for_run(run)
    crit = criteria if criteria is not None else load_criteria(criteria_file_for(run))
    out = {k: math.nan for k in type_outputs(mtype)}
    out["t_capture"] = float(run.t_capture)
    out["t_final"] = float(run.time[-1])

    def norm(names):
        if not all(n in run.channels for n in names):
            return math.nan
        a = np.sqrt(sum(run.channel(n) ** 2 for n in names))
        return float(np.nanmax(a)) if np.isfinite(a).any() else math.nan
    out["peak_base_force"] = norm(("Fx", "Fy", "Fz"))
    out["peak_base_moment"] = norm(("Mx", "My", "Mz"))
    for n in ("Fx", "Fy", "Fz", "Mx", "My", "Mz"):
        out[f"peak_{n}"] = _peak(run, n)
    for o in mtype.summary_outputs:
        out[o.name] = summary_output(run, o)
    out["max_depth"] = _max(run, "max_depth")
    use = []
    for n, lim in {**crit.base_loads, **crit.interface_loads}.items():
        use.append(_peak(run, n) / lim)
    for n, (lo, hi) in crit.strokes.items():
        if n in run.channels:
            vmin, _, vmax, _ = channel_range(run, n)
            if math.isfinite(vmin) and math.isfinite(vmax):
                use.append(max(vmax / hi if hi > 0 else 0.0, vmin / lo if lo < 0 else 0.0))
    use = [u for u in use if math.isfinite(u)]
    out["limit_use"] = max(use) if use else math.nan
    for p in run.contact_pairs:
        f = run.contact_force(p)
        out[f"peak_{p}"] = float(np.sqrt(np.einsum("ij,ij->i", f, f)).max()) if len(f) else math.nan
    v = evaluate(run, crit)
    return {"outputs": {k: float(x) for k, x in out.items()}, "captured": bool(math.isfinite(run.t_capture)),
            "passed": bool(v.passed), "verdict": v.line()}


def _jit_compiles() -> int:
    """Functions numba compiled in this process so far (cache misses of the solver's cached kernels)."""
    import sys
    n = 0
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith("solver.") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            st = getattr(obj, "stats", None)
            if st is not None and hasattr(obj, "py_func") and hasattr(st, "cache_misses"):
                n += sum(st.cache_misses.values())
    return n


def keep_run(keep: str, status: str, passed: bool, limit_use: float, extreme_fraction: float) -> bool:
    """Whether a run's full file is kept: failures (diverged, error, verdict FAIL), extremes (limit_use high)."""
    if keep == "all":
        return True
    if keep == "summary":
        return False
    failed = status != "ok" or not passed
    if keep == "failures":
        return failed
    return failed or (math.isfinite(limit_use) and limit_use >= extreme_fraction)


def use_cache_dir(cache_dir) -> bool:
    """Point numba's kernel cache at `cache_dir` in this process, if the solver kernels are not imported yet (a
    fresh worker); True if it did. Workers sharing the directory compile the kernels once between them."""
    import sys
    if not cache_dir or any(n.startswith("solver.mechanisms.") and n.endswith(".dynamics") for n in sys.modules):
        return False
    from solver import kernel_cache
    kernel_cache.use(cache_dir)
    return True


WRITE_FAILED = "write_failed"   # a task's status (never a stored row's): its worker could not write its own files
_NO_SPACE = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


def out_of_space(exc: BaseException) -> bool:
    """A write failed because the disk (or the process's file size limit) is full: EFBIG, ENOSPC, EDQUOT."""
    from solver.runfile import write_errno
    return write_errno(exc) in _NO_SPACE


def _worker_write_problem(run_path: Path, exc: BaseException) -> str:
    """One line naming the worker and its file (the run file in its temporary folder, or the exception's own)."""
    from solver.runfile import RunWriteError, _write_problem
    what = getattr(exc, "filename", None) or (exc.path if isinstance(exc, RunWriteError) else None)
    problem = exc.problem if isinstance(exc, RunWriteError) else _write_problem(exc)
    return (f"worker {socket.gethostname()}:{os.getpid()} could not write "
            f"{what or f'its files (while making {run_path})'}: {problem}")


def run_task(task: dict) -> dict:
    """Dask task: simulate run `index` from its scenario text in a temp dir, summarise, keep or drop the file.

    Never raises for a failing run: the row says status ("ok" | "diverged" | "error") and why."""
    use_cache_dir(task.get("cache_dir"))
    from solver.runfile import RunFile
    from solver.scenario import ScenarioError
    from solver.simulate import SolverDiverged, run_scenario
    i = int(task["index"])
    row = {"index": i, "status": "ok", "message": "", "captured": False, "passed": False, "verdict": "",
           "outputs": {}, "worker": f"{socket.gethostname()}:{os.getpid()}", "run_bytes": None}
    jit0 = _jit_compiles()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dockmnemo-run-") as td:
        sp = Path(td) / f"run_{i:05d}.toml"
        rp = Path(td) / f"run_{i:05d}.h5"
        try:
            sp.write_text(task["scenario_text"], encoding="utf-8")
            end = task.get("end_uncaptured_at")     # a run not captured by the capture time ends there
            run_scenario(sp, rp, t_end=task["t_end"], **({} if end is None else {"end_uncaptured_at": end}))
        except SolverDiverged as exc:
            row["status"], row["message"] = "diverged", str(exc)
        except ScenarioError as exc:
            row["status"], row["message"] = "error", str(exc)
        except Exception as exc:   # noqa: BLE001  (a failing run must not stop the campaign)
            if out_of_space(exc):   # the worker's disk, not the run: the campaign stops, the row is not stored
                row["status"], row["message"] = WRITE_FAILED, _worker_write_problem(rp, exc)
                return row
            row["status"], row["message"] = "error", f"{type(exc).__name__}: {exc}"
        wall = time.perf_counter() - t0
        if rp.is_file() and row["status"] != "error":
            try:
                with RunFile(rp) as run:
                    s = summarise_run(run, task["criteria"])
                row.update(s)
            except Exception as exc:   # noqa: BLE001
                row["status"] = "error"
                row["message"] = (row["message"] + "; " if row["message"] else "") + \
                    f"summary failed: {type(exc).__name__}: {exc}"
        row["outputs"]["wall_time"] = wall
        if row["status"] != "ok":
            row["passed"] = False          # a run that failed numerically is never a successful capture
        lu = row["outputs"].get("limit_use", math.nan)
        if rp.is_file() and keep_run(task["keep"], row["status"], row["passed"], lu, task["extreme_fraction"]):
            row["run_bytes"] = rp.read_bytes()
    row["jit_compiled"] = _jit_compiles() - jit0
    return row


# ---- campaign directory ------------------------------------------------------------------------------------

def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _atomic_write(path: Path, data: bytes):
    """solver.atomic.write_bytes; CampaignWriteError if it fails (its temporary file removed)."""
    from solver.atomic import write_bytes
    try:
        write_bytes(path, data)
    except OSError as exc:
        raise CampaignWriteError(path, exc) from exc


def prepare_directory(c: Campaign, directory) -> Path:
    """Create DIR for campaign c, or check that DIR holds the same campaign (resume); CampaignError otherwise."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CampaignError(d, "/", "exists and is not a directory")
    man = d / MANIFEST_FILE
    if (d / CAMPAIGN_FILE).is_file():
        try:
            m = json.loads(man.read_text())
        except (OSError, ValueError) as exc:
            raise CampaignError(man, "/", f"campaign manifest unreadable ({exc})") from None
        if m.get("campaign_sha256") != _sha(c.text):
            raise CampaignError(c.path, "/", f"{d} holds a different campaign ({m.get('campaign_source')}, "
                                f"name {m.get('name')!r}); use another --out directory")
        if m.get("base_sha256") != _sha(c.base_text):
            raise CampaignError(c.base_path, "/", f"the base scenario changed since {d} was started; restore it "
                                "or use another --out directory")
        if m.get("criteria_sha256") != _sha(c.criteria_text):
            raise CampaignError(c.criteria_path, "/", f"the capture criteria changed since {d} was started; "
                                "restore them or use another --out directory")
        mech = _mechanism_copied(c)
        if mech and m.get("mechanism_sha256", _sha(mech.read_text(encoding="utf-8"))) != \
                _sha(mech.read_text(encoding="utf-8")):      # (directories before the check have no mechanism_sha256)
            raise CampaignError(mech, "/", f"the mechanism file changed since {d} was started (its runs used "
                                f"{BASE_DIR}/{mech.name}); restore it or use another --out directory")
        return d
    if d.is_dir() and any(d.iterdir()):
        raise CampaignError(d, "/", "directory is not empty and holds no campaign.toml; use an empty or new directory")
    (d / BASE_DIR).mkdir(parents=True, exist_ok=True)
    (d / ROWS_DIR).mkdir(exist_ok=True)
    base_copy = d / BASE_DIR / c.base_path.name
    shutil.copyfile(c.base_path, base_copy)
    mech = _mechanism_copied(c)
    if mech:
        shutil.copyfile(mech, d / BASE_DIR / mech.name)
    crit_copy = d / BASE_DIR / f"criteria_{c.criteria_path.name}"
    crit_copy.write_text(c.criteria_text, encoding="utf-8")
    manifest = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "name": c.name,
                "campaign_source": str(c.path.resolve()), "campaign_sha256": _sha(c.text),
                "base_scenario": str(c.base_path), "base_copy": f"{BASE_DIR}/{c.base_path.name}",
                "base_sha256": _sha(c.base_text), "criteria": str(c.criteria_path),
                "criteria_copy": f"{BASE_DIR}/{crit_copy.name}", "criteria_sha256": _sha(c.criteria_text),
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if mech:
        manifest["mechanism_sha256"] = _sha(mech.read_text(encoding="utf-8"))
    _atomic_write(man, json.dumps(manifest, indent=1).encode())
    _atomic_write(d / CAMPAIGN_FILE, c.text.encode("utf-8"))    # written last: DIR is a campaign from here on
    return d


def _mechanism_copied(c: Campaign) -> Path | None:
    """The mechanism file a campaign directory keeps a copy of (one named by a path, "x.toml"), else None."""
    mech = c.base.get("mechanism", "")
    return Path(mech) if mech.endswith(".toml") else None


def open_directory_campaign(directory) -> Campaign:
    """The campaign stored in DIR (its campaign.toml with the base scenario copy)."""
    d = Path(directory)
    if not d.is_dir():
        raise CampaignError(d, "/", "not a directory")
    if not (d / CAMPAIGN_FILE).is_file():
        raise CampaignError(d, CAMPAIGN_FILE, "not a campaign directory (no campaign.toml)")
    try:
        m = json.loads((d / MANIFEST_FILE).read_text())
        base, crit = d / m["base_copy"], d / m["criteria_copy"]
    except (OSError, ValueError, KeyError) as exc:
        raise CampaignError(d / MANIFEST_FILE, "/", f"campaign manifest missing or unreadable ({exc})") from None
    c = load_campaign(d / CAMPAIGN_FILE, base_path=base, check_scenarios=False, criteria_path=crit)
    mech = c.base.get("mechanism", "")
    if mech.endswith(".toml") and not Path(mech).is_file():   # edited mechanism: the copy in DIR/base
        c.base["mechanism"] = str((d / BASE_DIR / Path(mech).name).resolve())
    return c


def _row_path(d: Path, i: int) -> Path:
    return d / ROWS_DIR / f"run_{i:05d}.json"


def journal_rows(d: Path, clean: bool = False) -> dict[int, dict]:
    """Rows written one file each (atomic rename) as results arrived; unreadable leftovers are ignored."""
    out = {}
    rd = d / ROWS_DIR
    if not rd.is_dir():
        return out
    for p in rd.iterdir():
        if p.name.endswith(".tmp"):
            if clean:
                p.unlink(missing_ok=True)
            continue
        m = re.fullmatch(r"run_(\d+)\.json", p.name)
        if not m:
            continue
        try:
            row = json.loads(p.read_text(encoding="utf-8"))
            if int(row["index"]) != int(m.group(1)):
                raise ValueError("index mismatch")
        except (OSError, ValueError, KeyError, TypeError):
            if clean:
                p.unlink(missing_ok=True)
            continue
        out[int(row["index"])] = row
    return out


_STR_FIELDS = ("status", "message", "verdict", "run_file", "worker", "session")


def _h5_rows(path: Path) -> dict[int, dict]:
    """Rows of a consolidated summary.h5 ({} if absent); CampaignError if it is unreadable."""
    if not path.is_file():
        return {}
    try:
        with h5py.File(path, "r") as f:
            if f.attrs.get("format") != FORMAT_NAME + "-summary":
                raise CampaignError(path, "/@format", f"expected {FORMAT_NAME + '-summary'!r}")
            idx = f["index"][()]
            cols = {}
            for g in ("parameters", "outputs"):
                cols[g] = {k: d[()] for k, d in f[g].items()}
            strs = {k: [s.decode() if isinstance(s, bytes) else str(s) for s in f[k][()]] for k in _STR_FIELDS}
            cap, pas, jit = f["captured"][()], f["passed"][()], f["jit_compiled"][()]
    except CampaignError:
        raise
    except (OSError, KeyError, ValueError) as exc:
        raise CampaignError(path, "/", f"summary table unreadable ({exc})") from None
    rows = {}
    for r, i in enumerate(idx):
        rows[int(i)] = {"index": int(i), **{k: strs[k][r] for k in _STR_FIELDS},
                        "captured": bool(cap[r]), "passed": bool(pas[r]), "jit_compiled": int(jit[r]),
                        "values": {k: float(v[r]) for k, v in cols["parameters"].items()},
                        "outputs": {k: float(v[r]) for k, v in cols["outputs"].items()}}
    return rows


def all_rows(d: Path, clean: bool = False) -> dict[int, dict]:
    """Every finished row: the consolidated table, then the journal (newer) over it."""
    if clean:   # a summary rewrite or a kept run's copy cut short by a kill leaves its temp file behind
        for p in [*d.glob(f".{SUMMARY_FILE}.*.tmp"), *(d / RUNS_DIR).glob(".*.tmp")]:
            p.unlink(missing_ok=True)
    try:
        rows = _h5_rows(d / SUMMARY_FILE)
    except CampaignError:
        if not clean:
            raise
        rows = {}     # a table we cannot read is rebuilt from the journal
    rows.update(journal_rows(d, clean))
    return rows


def write_summary(c: Campaign, d: Path, rows: dict[int, dict], fsync: bool = True):
    """Rewrite DIR/summary.h5 from all rows, atomically (temp file + rename): a kill never leaves half a table."""
    from solver.atomic import replacing
    try:
        with replacing(d / SUMMARY_FILE, fsync=fsync) as tmp:
            _write_summary_file(c, tmp, rows)
    except OSError as exc:
        raise CampaignWriteError(d / SUMMARY_FILE, exc) from exc


def _write_summary_file(c: Campaign, tmp: Path, rows: dict[int, dict]):
    order = sorted(rows)
    n = len(order)
    with h5py.File(tmp, "w") as f:
        a = f.attrs
        a["format"], a["format_version"] = FORMAT_NAME + "-summary", FORMAT_VERSION
        a["name"], a["variant"], a["mechanism"] = c.name, c.variant, c.mechanism
        a["mechanism_type"] = c.mechanism_type
        a["n_planned"], a["n_done"], a["t_end"] = c.count, n, c.t_end
        a["sampling"], a["keep"], a["seed"] = c.sampling, c.keep, -1 if c.seed is None else c.seed
        a["campaign_sha256"] = _sha(c.text)
        f.create_dataset("index", data=np.array(order, np.int64))
        g = f.create_group("parameters")
        for p in c.parameters:
            ds = g.create_dataset(p.name, data=np.array(
                [rows[i].get("values", {}).get(p.name, math.nan) for i in order], float))
            ds.attrs["unit"], ds.attrs["label"], ds.attrs["key"] = p.unit, p.label, p.key
        g = f.create_group("outputs")
        for k, (unit, label) in c.outputs().items():
            ds = g.create_dataset(k, data=np.array([rows[i].get("outputs", {}).get(k, math.nan) for i in order], float))
            ds.attrs["unit"], ds.attrs["label"] = unit, label
        f.create_dataset("captured", data=np.array([bool(rows[i].get("captured")) for i in order], np.int8))
        f.create_dataset("passed", data=np.array([bool(rows[i].get("passed")) for i in order], np.int8))
        f.create_dataset("jit_compiled", data=np.array([int(rows[i].get("jit_compiled", 0)) for i in order], np.int32))
        for k in _STR_FIELDS:
            f.create_dataset(k, data=[str(rows[i].get(k, "")) for i in order], dtype=h5py.string_dtype())


# ---- running ----------------------------------------------------------------------------------------------

@dataclass
class CampaignResult:
    """What one `run_campaign` call did."""
    directory: Path
    n_planned: int
    n_before: int            # rows already there (resume)
    n_run: int               # rows added by this call
    cancelled: bool
    wall_time: float
    session: str


def make_task(c: Campaign, i: int, cache_dir=None) -> dict:
    """The picklable task of run i (`cache_dir`: the numba cache directory its worker should use)."""
    return {"index": i, "scenario_text": dump_toml(c.scenario(i)), "t_end": c.t_end, "criteria": c.criteria,
            "keep": c.keep, "extreme_fraction": c.extreme_fraction,
            "cache_dir": str(cache_dir) if cache_dir else None,
            "end_uncaptured_at": c.criteria.by_time if c.end_uncaptured else None}


def local_client(workers: int | None = None, cache_dir=None):
    """A Dask client on a LocalCluster of worker processes, one thread each (the solver is single-threaded);
    with `cache_dir`, the workers' numba cache (NUMBA_CACHE_DIR) is that directory."""
    import logging

    from distributed import Client, LocalCluster
    n = workers or os.cpu_count() or 1
    env = {"NUMBA_CACHE_DIR": str(cache_dir)} if cache_dir else {}
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR, env=env)
    return Client(cluster)


def run_campaign(campaign_path, directory, scheduler: str | None = None, workers: int | None = None,
                 client=None, progress=None, cancel=None, flush_every: float = 1.0,
                 cache_dir=None) -> CampaignResult:
    """Run the campaign's missing runs on Dask into DIR; resumable. Raises CampaignError on bad input.

    `progress(done, total)` after each row; `cancel()` -> True stops (rows so far kept). A given `client` is used
    (and left open); else `scheduler` (tcp://host:port) or a LocalCluster of `workers` processes. `cache_dir`: the
    numba cache directory the workers share (default: numba's own, next to the solver or NUMBA_CACHE_DIR)."""
    c = load_campaign(campaign_path)
    d = prepare_directory(c, directory)
    rows = all_rows(d, clean=True)
    rows = {i: r for i, r in rows.items() if 0 <= i < c.count}
    n_before = len(rows)
    missing = [i for i in range(c.count) if i not in rows]
    write_summary(c, d, rows)
    session = uuid.uuid4().hex[:12]
    t0 = time.perf_counter()
    if progress:
        progress(n_before, c.count)
    if not missing:
        return CampaignResult(d, c.count, n_before, 0, False, 0.0, session)
    own = client is None
    if own:
        if scheduler:
            from distributed import Client
            client = Client(scheduler)
        else:
            client = local_client(workers, cache_dir)
    (d / RUNS_DIR).mkdir(exist_ok=True)
    futures = {}
    cancelled = False
    n_run = 0
    last_flush = time.perf_counter()
    try:
        for i in missing:
            fut = client.submit(run_task, make_task(c, i, cache_dir), key=f"dockmnemo-{c.name}-{session}-{i}", pure=False)
            futures[fut] = i
        for done, pending in finished_futures(futures, 0.1):
            for fut in done:
                i = futures[fut]
                try:
                    row = fut.result()
                except Exception as exc:   # noqa: BLE001  (a worker died, the task was lost, ...)
                    if out_of_space(exc):
                        raise CampaignWriteError(f"run {i}'s worker", exc) from None
                    row = {"index": i, "status": "error", "message": f"task failed: {type(exc).__name__}: {exc}",
                           "captured": False, "passed": False, "verdict": "", "outputs": {}, "worker": "",
                           "jit_compiled": 0, "run_bytes": None}
                if row["status"] == WRITE_FAILED:   # its worker's disk is full: stop, the row is not a run's result
                    raise CampaignWriteError(f"run {i}", row["message"])
                _store_row(c, d, row, session)
                rows[i] = row
                n_run += 1
                if progress:
                    progress(len(rows), c.count)
            if time.perf_counter() - last_flush > flush_every:
                write_summary(c, d, rows)
                last_flush = time.perf_counter()
            if pending and cancel is not None and cancel():
                cancelled = True
                if not own:   # (an own cluster's workers are stopped with it)
                    client.cancel(list(pending))
                break
    except BaseException:   # a signal (the caller's exception), a failed write: the workers are not waited for
        cancelled = True
        raise
    finally:
        try:
            if own:
                _close_client(client, not scheduler, cancelled)
        finally:
            write_summary(c, d, rows, fsync=not cancelled)   # (cancelled: within the second; the rows are synced)
    if len(rows) == c.count and not cancelled:   # complete: the table holds everything, the journal can go
        write_summary(c, d, rows)
        shutil.rmtree(d / ROWS_DIR, ignore_errors=True)
    return CampaignResult(d, c.count, n_before, n_run, cancelled, time.perf_counter() - t0, session)


def _close_client(client, own_cluster: bool, cancelled: bool):
    """Close the client (and its local cluster): a cancelled campaign's workers are stopped, not waited for."""
    if client is None:   # stopped while it started
        return
    cluster = getattr(client, "cluster", None) if own_cluster else None
    if cancelled and cluster is not None:   # workers deep in a kernel do not stop on request: their processes end now
        for w in list(getattr(cluster, "workers", {}).values()):
            proc = getattr(getattr(w, "process", None), "process", None)   # the nanny's worker process
            pid = getattr(proc, "pid", None)
            if pid:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(Exception) if cancelled else contextlib.nullcontext():   # (cancelled: best effort)
        client.close(timeout=0.5 if cancelled else None)
        if cluster is not None:
            cluster.close(timeout=0.5 if cancelled else None)


def finished_futures(futures, timeout: float):
    """Yield (futures finished in this wait, still pending) after each wait of at most `timeout` s (done is empty when
    none finished) until none is pending: between yields a caller stores results and polls for a cancel."""
    from distributed import wait
    pending = set(futures)
    while pending:
        try:
            res = wait(pending, timeout=timeout, return_when="FIRST_COMPLETED")
            done, pending = res.done, res.not_done
        except TimeoutError:
            done = set()
        yield done, pending


def _store_row(c: Campaign, d: Path, row: dict, session: str):
    """Kept run file first, then the row (both by atomic rename): a row never names a missing file."""
    i = int(row["index"])
    data = row.pop("run_bytes", None)
    row["run_file"] = ""
    if data:
        rel = f"{RUNS_DIR}/run_{i:05d}.h5"
        _atomic_write(d / rel, data)
        row["run_file"] = rel
    row["values"] = c.values(i)
    row["session"] = session
    (d / ROWS_DIR).mkdir(exist_ok=True)
    _atomic_write(_row_path(d, i), json.dumps(row, allow_nan=True).encode("utf-8"))


# ---- reading a campaign directory --------------------------------------------------------------------------

_PASS_SUMMARY = re.compile(r"^(captured at [\d.]+ s|peak .+ within limits|.+ within range|final state reached)$|n/a")


def failure_reasons(status: str, message: str, verdict: str, criteria: Criteria | None = None) -> list[str]:
    """Why one run failed, as short categories (several per run possible); [] for a passing run.

    Diverged and error runs give one reason from their message; a FAIL verdict one per failed quantity, in the
    words of the type's `criteria` ([titles]: "tau_4 over limit (contact force and joint torques)")."""
    own = criteria.titles if criteria is not None else {}
    if status == "diverged":
        m = re.search(r"pair '([^']+)'", message)
        if m:
            return [f"diverged: penetration {m.group(1)}"]
        return ["diverged: NaN state" if "NaN" in message else "diverged: other"]
    if status != "ok":
        m = re.search(r"(\w+(?:Error|Exception))", message)
        return [f"error: {m.group(1) if m else 'other'}"]
    if not verdict.startswith("FAIL"):
        return []
    released = release_titles(criteria)          # the release check's words in the type's criteria
    out = []
    for part in verdict.split(":", 1)[1].split(";"):
        part = part.strip()
        if not part or _PASS_SUMMARY.search(part) or part in {f"no {w}" for w in released}:
            continue
        for item in part.split(", "):
            if item == "no capture":
                out.append("not captured")
            elif item.startswith("captured at"):
                out.append("captured late")
            elif (w := next((w for w in released if item.startswith(f"{w} at ")), None)):
                out.append(w)
            elif (m := re.match(r"peak \|(\w+)\|", item)):
                iface = (m.group(1) in criteria.interface_loads if criteria is not None
                         else m.group(1).startswith("iface_"))
                check = "interface_loads" if iface else "base_loads"
                if own.get(check):
                    out.append(f"{m.group(1)} over limit ({own[check]})")
                else:
                    out.append(f"{check[:-1].replace('_', ' ')} {m.group(1)} over limit")
            elif (m := re.match(r"(\w+) \S+ < (\S+) at the end$", item)):     # a [final] criterion (hooks closed)
                out.append(f"{m.group(1)} below {m.group(2)} at the end")
            elif (m := re.match(r"(\w+) -?[\d.]", item)):
                out.append(f"{m.group(1)} out of range ({own['strokes']})" if own.get("strokes") else
                           f"stroke {m.group(1)} out of range")
            else:
                out.append(item)
    return list(dict.fromkeys(out))


class CampaignSummary:
    """The finished rows of a campaign directory, ordered by run index (`index`)."""

    def __init__(self, directory: Path, campaign: Campaign, rows: dict[int, dict]):
        self.directory = Path(directory)
        self.campaign = campaign
        self.name, self.variant = campaign.name, campaign.variant
        self.base_scenario = campaign.base_path
        self.parameters = campaign.parameters
        self.outputs = campaign.outputs()
        own = campaign.mtype.summary_outputs
        self.key_outputs = [*KEY_OUTPUTS, *(o.name for o in own if o.key)]     # the envelope map's hover
        self.pair_outputs = [f"peak_{n}" for n, _ in campaign.pairs]           # peak contact force per pair
        self.stroke_output = next(((o.name, o.short) for o in own if o.short and not o.column), ("", "stroke m"))
        self.load_outputs = [next(((o.name, o.short) for o in own if o.column == c), d)     # the table's load columns
                             for c, d in (("force", ("peak_base_force", "|F| N")),
                                          ("moment", ("peak_base_moment", "|M| N*m")))]
        self.n_planned = campaign.count
        order = sorted(i for i in rows if 0 <= i < campaign.count)
        self._rows = [rows[i] for i in order]
        self.index = np.array(order, dtype=np.int64)
        self._pos = {i: k for k, i in enumerate(order)}
        self.captured = np.array([bool(r.get("captured")) for r in self._rows], bool)
        self.passed = np.array([bool(r.get("passed")) for r in self._rows], bool)
        self.status = [str(r.get("status", "")) for r in self._rows]
        self.message = [str(r.get("message", "")) for r in self._rows]
        self.verdict = [str(r.get("verdict", "")) for r in self._rows]
        self.worker = [str(r.get("worker", "")) for r in self._rows]
        self.session = [str(r.get("session", "")) for r in self._rows]
        self.jit_compiled = np.array([int(r.get("jit_compiled", 0)) for r in self._rows], np.int64)

    def __len__(self) -> int:
        return len(self._rows)

    def column(self, name: str) -> np.ndarray:
        """(n_done,) floats of a varied parameter or numeric output (NaN = n/a); KeyError for an unknown name."""
        if any(p.name == name for p in self.parameters):
            return np.array([r.get("values", {}).get(name, math.nan) for r in self._rows], float)
        if name in self.outputs:
            return np.array([r.get("outputs", {}).get(name, math.nan) for r in self._rows], float)
        raise KeyError(f"{self.directory}: no column {name!r} (parameters: "
                       f"{', '.join(p.name for p in self.parameters)}; outputs: {', '.join(self.outputs)})")

    def position(self, i: int) -> int:
        """Row position of run index i (KeyError if run i has not finished)."""
        return self._pos[int(i)]

    def row(self, i: int) -> dict:
        """The stored row of run index i."""
        return self._rows[self.position(i)]

    def run_path(self, i: int) -> Path | None:
        """The full run file kept for run index i, else None."""
        rel = self.row(i).get("run_file", "") if int(i) in self._pos else ""
        p = self.directory / rel if rel else None
        return p if p is not None and p.is_file() else None

    def scenario_for(self, i: int) -> dict:
        """The full scenario (TOML dict) of run index i, as the campaign ran it."""
        return self.campaign.scenario(int(i))

    def missing(self) -> list[int]:
        """Run indices not finished yet."""
        return [i for i in range(self.n_planned) if i not in self._pos]

    def table(self, failures_only: bool = False) -> str:
        """The success/fail table: totals, then one line per run (or per failed run)."""
        n = len(self)
        ok = self.status.count("ok")
        lines = [f"campaign {self.name}  variant {self.variant}  base {self.base_scenario.name}  "
                 f"t_end {self.campaign.t_end:g} s  {self.campaign.sampling} x {self.n_planned}",
                 f"finished {n} of {self.n_planned}; ok {ok}, diverged {self.status.count('diverged')}, "
                 f"error {self.status.count('error')}; captured {int(self.captured.sum())} "
                 f"({100 * self.captured.mean() if n else 0:.1f} %); verdict PASS {int(self.passed.sum())} "
                 f"({100 * self.passed.mean() if n else 0:.1f} %)"]
        if n:
            F, M = self.column("peak_base_force"), self.column("peak_base_moment")
            if np.isfinite(F).any():
                lines.append(f"peak base force max {np.nanmax(F):.0f} N (run {self.index[np.nanargmax(F)]}), "
                             f"median {np.nanmedian(F):.0f} N; peak base moment max {np.nanmax(M):.0f} N*m")
        stroke, head = self.stroke_output
        (fk, fh), (mk, mh) = self.load_outputs
        lines.append(f"{'run':>5}  {'status':<8} {'capt':<4} {'T capt s':>8} {fh:>8} {mh:>8} "
                     f"{head:>8}  verdict / reason")
        tc, F, M = (self.column(k) for k in ("t_capture", fk, mk))
        S = self.column(stroke) if stroke else np.full(len(self), math.nan)
        for k, i in enumerate(self.index):
            bad = self.status[k] != "ok" or not self.passed[k]
            if failures_only and not bad:
                continue
            why = self.message[k] if self.status[k] != "ok" else self.verdict[k]
            lines.append(f"{i:>5}  {self.status[k]:<8} {'yes' if self.captured[k] else 'no':<4} {tc[k]:>8.3f} "
                         f"{F[k]:>8.0f} {M[k]:>8.0f} {S[k]:>8.3f}  {why}")
        counts = self.failure_counts()
        if counts:
            lines.append("failure reasons (runs; a run may have several):")
            for why, runs in counts.items():
                ex = ", ".join(str(i) for i in runs[:5]) + (", ..." if len(runs) > 5 else "")
                lines.append(f"  {len(runs):>5}  {why}  (runs {ex})")
        if self.missing():
            lines.append(f"missing: {len(self.missing())} runs (rerun the campaign command to resume)")
        return "\n".join(lines)

    def reasons(self, i: int) -> list[str]:
        """Failure categories of run index i ([] if it passed)."""
        k = self.position(i)
        return failure_reasons(self.status[k], self.message[k], self.verdict[k], self.campaign.criteria)

    def failure_counts(self) -> dict[str, list[int]]:
        """Failure category -> run indices, most frequent first."""
        out: dict[str, list[int]] = {}
        for i in self.index:
            for why in self.reasons(int(i)):
                out.setdefault(why, []).append(int(i))
        return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def read_summary(directory) -> CampaignSummary:
    """The campaign in DIR and every finished row (also while it runs); raises CampaignError with a clear message."""
    d = Path(directory)
    c = open_directory_campaign(d)
    return CampaignSummary(d, c, all_rows(d))


def rerun(summary: CampaignSummary, i: int, out_path, progress=None, cancel=None) -> Path:
    """Re-simulate run index i into a full run file, as the campaign ran it (same scenario, same t_end).

    A run that diverged diverges again: its partial run file (incomplete, with the diagnostic event) is returned;
    `cancel()` -> True stops after the current block with solver.simulate.RunCancelled."""
    from solver.simulate import SolverDiverged, run_scenario
    out_path = Path(out_path)
    c = summary.campaign
    with tempfile.TemporaryDirectory(prefix="dockmnemo-rerun-") as td:
        sp = Path(td) / f"run_{int(i):05d}.toml"
        sp.write_text(dump_toml(c.scenario(int(i))), encoding="utf-8")
        try:
            run_scenario(sp, out_path, progress=progress, t_end=c.t_end, cancel=cancel)
        except SolverDiverged:
            pass
    return out_path
