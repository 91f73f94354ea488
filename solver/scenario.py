"""Scenario and mechanism TOML: validation (ScenarioError names file, key, problem) and the one dispatch to a mechanism
type's model builder (`load_model`); the typed readers every type's builder uses (`_Sec`, `_load`, `_craft`)."""
from __future__ import annotations

import difflib
import math
from pathlib import Path

import numpy as np

from solver import schema
from solver.errors import InputError, read_toml
from solver.mechanisms import DEFAULT_TYPE as MTYPE   # a mechanism file that declares no mechanism_type

ROOT = Path(__file__).resolve().parent.parent
MECHANISMS = ROOT / "resources" / "mechanisms"
GEOMETRY = ROOT / "resources" / "geometry"


class ScenarioError(InputError):
    """Bad scenario or mechanism input: names the file, the key and what is wrong."""


class _Read(dict):
    """A parsed TOML table that notes every key the loader asks for: a key it never asks for is unknown."""

    def __init__(self, data: dict):
        super().__init__((k, _Read(v) if isinstance(v, dict) else v) for k, v in data.items())
        self.asked: set[str] = set()

    def __getitem__(self, k):
        self.asked.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.asked.add(k)
        return super().get(k, default)

    def __contains__(self, k):
        self.asked.add(k)
        return super().__contains__(k)


def _refuse_unread(path, t: _Read, prefix=""):
    """ScenarioError for the first declared key or table of `t` the loader never asked for (not used in this
    configuration; an undeclared one is refused by the schema before)."""
    for k, v in dict.items(t):
        if k not in t.asked:
            raise ScenarioError(path, prefix + k, "not used by this mechanism configuration")
        if isinstance(v, _Read):
            _refuse_unread(path, v, f"{prefix}{k}.")


class _Sec:
    """Typed, range-checked access to one TOML table of a `file` kind ("scenario", "mechanism", "geometry"): every
    key is read through its schema Param (solver/schema.py)."""

    def __init__(self, path, data: dict, prefix: str, file: str = "scenario", mtype: str = MTYPE):
        self.path, self.data, self.prefix, self.file, self.mtype = path, data, prefix, file, mtype

    def key(self, k):
        return f"{self.prefix}.{k}" if self.prefix else k

    def param(self, k) -> schema.Param:
        return schema.lookup(self.key(k), self.mtype, self.file)

    def missing(self, k, what="key", hint="") -> ScenarioError:
        """A required key is absent; a near key not read yet is named as a possible misspelling of it (it may also
        be a valid key read later, so it is not called unknown)."""
        asked = getattr(self.data, "asked", set())
        near = difflib.get_close_matches(k, [x for x in dict.keys(self.data) if x not in asked and x != k], n=1)
        problem = ("missing table" if what == "section" else "missing") + hint
        return ScenarioError(self.path, self.key(k), problem + (f" (is {near[0]} a misspelling of it?)" if near else ""))

    def unused(self, keys, why: str):
        """Refuse keys the loader does not read in this configuration (a value that would be silently ignored)."""
        for k in keys:
            if k in self.data:
                raise ScenarioError(self.path, self.key(k), f"not used: {why}")

    def sub(self, k) -> "_Sec":
        v = self.data.get(k)
        if v is None:
            raise self.missing(k, "section")
        if not isinstance(v, dict):
            raise ScenarioError(self.path, self.key(k), "must be a table")
        return _Sec(self.path, v, self.key(k), self.file, self.mtype)

    def get(self, k, *, lo=None, hi=None, n=None):
        """The value of key `k` checked as its Param says (kind, range, default); `lo`/`hi` tighten the range with a
        bound that depends on another key (the Param's `check`), `n` gives a vector's length."""
        p = self.param(k)
        lo = p.lo if lo is None else lo
        hi = p.hi if hi is None else hi
        if p.kind in ("number", "int"):
            v = self.num(k, lo, hi, p.default, p.lo_open)
            if p.kind == "int" and not float(v).is_integer():
                raise ScenarioError(self.path, self.key(k), f"must be a whole number, found {v:g}")
            return v
        if p.kind == "vector":
            return self.vec(k, n or p.size, lo, hi, p.default)
        if p.kind == "inertia":
            return self.inertia(k)
        if p.kind == "bool":
            v = self.data.get(k, p.default)
            if not isinstance(v, bool):
                raise ScenarioError(self.path, self.key(k), "must be true or false")
            return v
        if p.kind in ("string", "choice"):
            v = self.data.get(k, p.default)
            if v is None:
                raise self.missing(k)
            if p.kind == "choice" and v not in p.choices:
                raise ScenarioError(self.path, self.key(k), f"{v!r}: must be one of {', '.join(p.choices)}")
            if not isinstance(v, str):
                raise ScenarioError(self.path, self.key(k), f"must be a string, found {v!r}")
            return v
        raise TypeError(f"{self.key(k)}: a {p.kind} is read by its own code")

    def num(self, k, lo=-math.inf, hi=math.inf, default=None, lo_open=False):
        if k not in self.data:
            if default is not None:
                return float(default)
            raise self.missing(k)
        v = self.data[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ScenarioError(self.path, self.key(k), f"must be a number, found {v!r}")
        v = float(v)
        if not math.isfinite(v):
            raise ScenarioError(self.path, self.key(k), "must be finite")
        if v < lo or v > hi or (lo_open and v <= lo):
            rng = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
            raise ScenarioError(self.path, self.key(k), f"{v:g} is outside the allowed range {rng}")
        return v

    def vec(self, k, n, lo=-math.inf, hi=math.inf, default=None):
        if k not in self.data:
            if default is not None:
                return np.array(default, float)
            raise self.missing(k)
        v = self.data[k]
        if not isinstance(v, list) or len(v) != n or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in v):
            raise ScenarioError(self.path, self.key(k), f"must be a list of {n} numbers, found {v!r}")
        a = np.array(v, float)
        if not np.all(np.isfinite(a)) or np.any(a < lo) or np.any(a > hi):
            raise ScenarioError(self.path, self.key(k), f"values must lie in [{lo:g}, {hi:g}], found {v!r}")
        return a

    def table(self, kx, ky, increasing_y=True):
        """A (x, y) table of two list keys of kind "table": same length >= 2, from (0, 0), x increasing."""
        px, py = self.param(kx), self.param(ky)
        x = self.data.get(kx)
        if x is None:
            raise self.missing(kx)
        if not isinstance(x, list) or len(x) < 2:
            raise ScenarioError(self.path, self.key(kx), "must be a list of at least 2 numbers")
        x = self.vec(kx, len(x), px.lo, px.hi)
        y = self.vec(ky, len(x), py.lo, py.hi)
        if x[0] != 0.0 or y[0] != 0.0:
            raise ScenarioError(self.path, self.key(kx), "table must start at (0, 0)")
        if np.any(np.diff(x) <= 0):
            raise ScenarioError(self.path, self.key(kx), "must be strictly increasing")
        if increasing_y and np.any(np.diff(y) < 0):
            raise ScenarioError(self.path, self.key(ky), "must not decrease")
        return x, y

    def inertia(self, k):
        v = self.data.get(k)
        if v is None:
            raise self.missing(k)
        if not (isinstance(v, list) and len(v) == 3 and all(isinstance(r, list) and len(r) == 3 for r in v)):
            raise ScenarioError(self.path, self.key(k), "must be a 3x3 list of lists (kg*m^2)")
        if any(isinstance(x, bool) or not isinstance(x, (int, float)) for r in v for x in r):
            raise ScenarioError(self.path, self.key(k), f"must be a 3x3 list of lists of numbers, found {v!r}")
        a = np.array(v, float)
        if not np.all(np.isfinite(a)):
            raise ScenarioError(self.path, self.key(k), f"must be finite, found {v!r}")
        if not np.allclose(a, a.T, rtol=1e-9, atol=1e-9 * np.abs(a).max()):
            raise ScenarioError(self.path, self.key(k), "inertia tensor must be symmetric")
        ev = np.linalg.eigvalsh(a)
        if ev.min() <= 0:
            raise ScenarioError(self.path, self.key(k), "inertia tensor must be positive definite")
        if ev.max() > ev.min() + ev[1] + 1e-9 * ev.max():
            raise ScenarioError(self.path, self.key(k), "principal moments violate the triangle inequality")
        p = self.param(k)
        if ev.min() < p.lo or ev.max() > p.hi:
            raise ScenarioError(self.path, self.key(k), f"principal moments {', '.join(f'{x:g}' for x in ev)} must lie "
                                f"in the allowed range {p.range_text()} {p.unit}")
        return a

    def read_all(self):
        """Check every declared key of this file kind under this table (a table-pair kind is read by its own code)."""
        pre = self.prefix + "." if self.prefix else ""
        subs = []
        for p in schema.params(self.file, self.mtype):
            rest = p.key[len(pre):] if p.key.startswith(pre) else None
            if rest is None or p.kind in ("table", "changes"):
                continue
            if "." not in rest:
                self.get(rest)
            elif (s := rest.split(".")[0]) not in subs:
                subs.append(s)
        for s in subs:
            if s not in self.data and all(p.default is not None for p in schema.params(self.file, self.mtype)
                                          if p.key.startswith(f"{pre}{s}.")):
                continue                   # a table whose every key has a default may be left out
            self.sub(s).read_all()


def _load(path, kind: str) -> tuple[str, _Read]:
    """Text and tables of a scenario, mechanism or geometry file (ScenarioError on an unreadable one)."""
    text, data = read_toml(path, ScenarioError, kind)
    return text, _Read(data)


def _craft(sec: _Sec, fixed_allowed: bool):
    if not fixed_allowed:
        sec.unused(["fixed"], "only the passive craft can be fixed (a test stand)")
    fixed = sec.get("fixed") if fixed_allowed else False
    if fixed:
        sec.unused(["mass", "inertia", "com"], "the craft is fixed (fixed = true)")
        return fixed, 1.0, np.eye(3), np.zeros(3)
    return fixed, sec.get("mass"), sec.get("inertia"), sec.get("com")


def mechanism_type_of(scenario_path) -> str:
    """The mechanism type of a scenario: its mechanism file's `mechanism_type` (the default type when the file declares
    none or cannot be read: that type's loader then names the problem)."""
    import tomllib
    spath = Path(scenario_path)
    try:
        mech = tomllib.loads(spath.read_text(encoding="utf-8")).get("mechanism")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return MTYPE
    return mechanism_file_type(mech, spath.parent)


def mechanism_file_type(mechanism, parent) -> str:
    """The `mechanism_type` a scenario's `mechanism` value names ("x.toml" relative to `parent`, else a file in
    resources/mechanisms); the default type when the file declares none or cannot be read."""
    import tomllib
    try:
        mpath = Path(parent) / mechanism if mechanism.endswith(".toml") else MECHANISMS / f"{mechanism}.toml"
        declared = tomllib.loads(mpath.read_text(encoding="utf-8")).get("mechanism_type", MTYPE)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, TypeError):
        return MTYPE
    return declared if isinstance(declared, str) else MTYPE


def load_model(scenario_path):
    """Read, validate and pack a scenario and the mechanism it names; the mechanism file's type builds the model
     (`mechanism_type` in it: the one place the solver dispatches on the type)."""
    spath = Path(scenario_path)
    mtype = mechanism_type_of(spath)
    from solver import mechanisms
    try:
        builder = mechanisms.mechanism_type(mtype).build_model
    except KeyError as exc:
        raise ScenarioError(spath, "mechanism", f"its mechanism_type: {exc.args[0]}") from None
    return builder(spath)
