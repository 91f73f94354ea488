"""A rods scenario (TOML) and its rod-system file packed into the kernel's arrays (docs/rods.md)."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.core import planar_chain as PC
from solver.mechanisms.rods import dynamics as D

FORMULATIONS = ("general", "reduced")
CLAMP_RULES = ("band", "crossing", "frames")
CLAMP_LOCKS = ("spring", "plastic")


@dataclass
class RodsModel:
    name: str
    comment: str
    text: str
    P: np.ndarray
    RODS: np.ndarray
    TAB: np.ndarray
    s0: np.ndarray
    Z0: np.ndarray
    step: float
    output_step: float
    duration: float
    formulation: str
    craft_half: tuple = (0.35, 0.35)
    hinge_range_deg: tuple = ()
    moment_range: tuple = ()
    points_per_rod: int = 21
    variant: str = "general"
    mechanism_type: str = "rods"
    extra: dict = field(default_factory=dict)


def _err(path, key, problem):
    from solver.scenario import ScenarioError
    return ScenarioError(path, key, problem)


def _range(where, key) -> tuple[float, float]:
    """The key's range as the parameter schema declares it (schema.py: one place)."""
    from solver import schema
    p = schema.lookup(where + key, "rods")
    return p.lo, p.hi


def _num(path, tab, key, where, lo=None, hi=None, default=None):
    if lo is None:
        lo, hi = _range(where, key)
    v = tab.get(key, default)
    if v is None:
        raise _err(path, f"{where}{key}", "missing")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        raise _err(path, f"{where}{key}", f"must be a number in [{lo:g}, {hi:g}], found {v!r}")
    return float(v)


def _list(path, tab, key, where, n, lo=None, hi=None):
    if lo is None:
        lo, hi = _range(where, key)
    v = tab.get(key)
    if not isinstance(v, list) or len(v) != n:
        raise _err(path, f"{where}{key}", f"must be a list of {n} numbers, found {v!r}")
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not lo <= x <= hi:
            raise _err(path, f"{where}{key}[{i}]", f"must be a number in [{lo:g}, {hi:g}], found {x!r}")
    return [float(x) for x in v]


def _toml(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise _err(path, "/", f"cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise _err(path, "/", f"not valid TOML ({exc})") from None


def _key_sets(file: str) -> dict[str, set]:
    """{section: its key names} of a file kind, from the parameter schema ("" the top level)."""
    from solver import schema
    out: dict[str, set] = {"": set()}
    for p in schema.params(file, "rods"):
        sec, _, name = p.key.rpartition(".")
        out.setdefault(sec, set()).add(name)
        out[""].add(sec or name)
    return out


def _known(path, data: dict, keys: dict):
    """Refuse a key the type does not read (a misspelt key would be ignored silently)."""
    for sec, allowed in keys.items():
        tab = data if sec == "" else data.get(sec, {})
        if not isinstance(tab, dict):
            raise _err(path, sec, "must be a table")
        for k in tab:
            if k not in allowed:
                raise _err(path, f"{sec + '.' if sec else ''}{k}",
                           f"unknown key (expected one of {', '.join(sorted(allowed))})")


def load_rod_system(mpath: Path) -> tuple[str, np.ndarray, list, list, list]:
    """A rod-system file (its keys as schema.py declares them) -> (its text, RODS, hinge ranges (deg), hinge moment
    ranges, attachment x0 y0): the rods type's reader, also of a chain another type carries (an appendage)."""
    mtext, mt = _toml(mpath)
    _known(mpath, mt, _key_sets("mechanism"))
    rods = mt.get("rods", {})
    n = int(_num(mpath, rods, "count", "rods.", 1, 8))
    L = _list(mpath, rods, "length", "rods.", n)
    m = _list(mpath, rods, "mass_per_length", "rods.", n)
    EI = _list(mpath, rods, "EI", "rods.", n)
    mu = _list(mpath, rods, "node_mass", "rods.", n)
    hinges = mt.get("hinges", {})
    kap = _list(mpath, hinges, "stiffness", "hinges.", n)
    nu = _list(mpath, hinges, "damping", "hinges.", n)
    rng = _list(mpath, hinges, "range_deg", "hinges.", n)
    mrng = _list(mpath, hinges, "moment_range", "hinges.", n)
    att = _list(mpath, mt.get("attachment", {}), "position", "attachment.", 2, -1e3, 1e3)
    RODS = np.zeros((n, PC.NR))
    RODS[:, PC.R_L], RODS[:, PC.R_M], RODS[:, PC.R_EI], RODS[:, PC.R_MU] = L, m, EI, mu
    RODS[:, PC.R_KAPPA], RODS[:, PC.R_NU] = kap, nu
    return mtext, RODS, rng, mrng, att


def load_rods(spath: Path) -> RodsModel:
    """Scenario (craft, initial state, controls, clamps, solver) and its rod-system file -> RodsModel."""
    stext, sc = _toml(spath)
    _known(spath, sc, _key_sets("scenario"))
    mech = sc.get("mechanism")
    if not isinstance(mech, str):
        raise _err(spath, "mechanism", "must name the rod-system TOML file")
    mpath = spath.parent / mech
    mtext, RODS, rng, mrng, att = load_rod_system(mpath)
    n = RODS.shape[0]

    craft = sc.get("craft", {})
    M0 = _num(spath, craft, "mass", "craft.")
    J0 = _num(spath, craft, "inertia", "craft.")
    half = _list(spath, craft, "half_size", "craft.", 2)
    solver = sc.get("solver", {})
    form = solver.get("formulation", "general")
    if form not in FORMULATIONS:
        raise _err(spath, "solver.formulation", f"must be one of {', '.join(FORMULATIONS)}, found {form!r}")
    step = _num(spath, solver, "step", "solver.", 1e-7, 1.0)
    out = _num(spath, solver, "output_step", "solver.", step, 10.0)
    if abs(out / step - round(out / step)) > 1e-6:
        raise _err(spath, "solver.output_step", f"{out:g} s must be a multiple of the step {step:g} s")
    duration = _num(spath, solver, "duration", "solver.", out, 1e5)

    ini = sc.get("initial", {})
    phi = _list(spath, ini, "phi", "initial.", n)
    phid = _list(spath, ini, "phi_rate", "initial.", n) if "phi_rate" in ini else [0.0] * n
    om0 = _num(spath, ini, "Omega", "initial.", default=0.0)
    v0 = _list(spath, ini, "v_C", "initial.", 2) if "v_C" in ini else [0.0, 0.0]

    ctl = sc.get("controls", {})
    times = _list(spath, ctl, "times", "controls.", len(ctl.get("times", [0.0]))) if ctl else [0.0]
    cols = [(_list(spath, ctl, k, "controls.", len(times)) if k in ctl else [0.0] * len(times))
            for k in ("X_C", "Y_C", "M_C")]
    if any(b <= a for a, b in zip(times, times[1:])):
        raise _err(spath, "controls.times", "must be increasing")
    TAB = np.array([[t, *(c[i] for c in cols)] for i, t in enumerate(times)], float)

    cl = sc.get("clamps", {})
    use = bool(cl.get("enabled", False))
    rule = cl.get("rule", "band")
    if rule not in CLAMP_RULES:
        raise _err(spath, "clamps.rule", f"must be one of {', '.join(CLAMP_RULES)}, found {rule!r}")
    P = np.zeros(D.NP)
    P[D.P_M0], P[D.P_J0], P[D.P_X0], P[D.P_Y0] = M0, J0, *att
    P[D.P_FORM] = FORMULATIONS.index(form)
    lock = cl.get("lock", "spring")
    if lock not in CLAMP_LOCKS:
        raise _err(spath, "clamps.lock", f"must be one of {', '.join(CLAMP_LOCKS)}, found {lock!r}")
    P[D.P_CLAMPS], P[D.P_RULE], P[D.P_PLASTIC] = float(use), CLAMP_RULES.index(rule), CLAMP_LOCKS.index(lock)
    if use:
        P[D.P_TOL] = _num(spath, cl, "tolerance", "clamps.")
        P[D.P_KLOCK] = _num(spath, cl, "stiffness", "clamps.")
        P[D.P_NULOCK] = _num(spath, cl, "damping", "clamps.")
    ns, nz = D.sizes(n)
    s0 = np.zeros(ns)
    s0[3:3 + n] = phi
    iv = 3 + 3 * n
    s0[iv], s0[iv + 1], s0[iv + 2] = *v0, om0
    s0[iv + 3:iv + 3 + n] = phid
    Z0 = np.zeros(nz)
    for k in range(n):
        Z0[2 * n + k] = phi[k] - (phi[k - 1] if k else 0.0)
    Z0[3 * n + 1] = math.nan
    text = f"# scenario {spath.name}\n{stext}\n# rod system {mpath.name}\n{mtext}"
    return RodsModel(str(sc.get("name", spath.stem)), str(sc.get("comment", "")), text, P, RODS, TAB, s0, Z0, step,
                     out, duration, form, tuple(half), tuple(rng), tuple(mrng), variant=form)
