"""The parameter schema: every scenario, mechanism and geometry key declared once (unit, range or check, default,
label, group, one-line doc, source); the loader, the scenario dialog, campaigns, `dockmnemo run --describe` and
docs/parameters.md read it. Keys common to every mechanism type are in solver/scenario_schema.py, a mechanism
type's own in solver/mechanisms/<type>/schema.py (a tuple PARAMS)."""
from __future__ import annotations

import difflib
import importlib
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from solver.errors import unknown
from solver.mechanisms import BUILT_IN_TYPES as MECHANISM_TYPES, DEFAULT_TYPE

FILES = ("scenario", "mechanism", "geometry")
KINDS = ("number", "int", "vector", "table", "inertia", "string", "choice", "bool", "changes")


@dataclass(frozen=True)
class Param:
    """One key of a scenario, mechanism or geometry file."""
    key: str                   # "section.key" as in the TOML file ("name" at the top level)
    file: str                  # "scenario" | "mechanism" | "geometry"
    kind: str = "number"       # one of KINDS
    unit: str = ""             # pint-parsable, "" if none
    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    size: int = 0              # vector length (0: any length, e.g. a table)
    components: tuple = ()     # names of a vector's components ("y", "z")
    choices: tuple = ()
    default: object = None     # None: required
    label: str = ""
    group: str = ""
    doc: str = ""
    source: str = "assumed"
    check: str = ""            # a check beyond the range, as the loader applies it
    required: bool = True      # False: optional without a default (the key may be left out)

    @property
    def section(self) -> str:
        return self.key.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.key.rpartition(".")[2]

    def component_label(self, index: int | None) -> str:
        """The label of one component of a vector ("lateral miss z"), or the label."""
        if index is None:
            return self.label
        return f"{self.label} {self.components[index] if index < len(self.components) else index + 1}"

    def range_text(self) -> str:
        """'[lo, hi]' / '(lo, hi]' for numbers, the choices for a choice, '' otherwise."""
        if self.choices:
            return " | ".join(map(str, self.choices))
        if self.kind not in ("number", "int", "vector", "table", "inertia") or (self.lo == -math.inf and self.hi == math.inf):
            return ""
        return f"{'(' if self.lo_open else '['}{_g(self.lo)}, {_g(self.hi)}]"

    def default_text(self) -> str:
        if self.default is None:
            return "required" if self.required else "optional"
        if isinstance(self.default, float) and math.isnan(self.default):
            return "none"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, (list, tuple)):
            return "[" + ", ".join(_g(x) for x in self.default) + "]"
        if isinstance(self.default, float):
            return _g(self.default)
        return str(self.default) if self.default != "" else '""'


def _g(x: float) -> str:
    """A number as written in the TOML files: 0.05, 1e7, inf."""
    return f"{x:g}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")


# the least mass and inertia of any part a range "(0, hi]" admits (assumed: a gram; a gram at a millimetre), so a
# value like 1e-300 is refused, for every mechanism type
PHYSICAL_FLOOR = {"kg": 1e-3, "kg*m^2": 1e-9}
_RANGE = re.compile(r"^\s*([\[(])\s*([-+0-9.einf]+)\s*,\s*([-+0-9.einf]+)\s*\]\s*$")


def param(key: str, file: str, unit: str = "", rng: str = "", label: str = "", doc: str = "", *, kind: str = "number",
          group: str = "", **kw) -> Param:
    """A Param with its range written as in the docs: "(0, 2]" (lower end open) or "[-1, 1]"."""
    if rng:
        m = _RANGE.match(rng)
        if not m:
            raise ValueError(f"{key}: bad range {rng!r}")
        kw.update(lo=float(m.group(2)), hi=float(m.group(3)), lo_open=m.group(1) == "(")
        if kw["lo"] == 0.0 and kw["lo_open"] and unit in PHYSICAL_FLOOR:
            kw.update(lo=PHYSICAL_FLOOR[unit], lo_open=False)
    assert kind in KINDS and file in FILES, key
    return Param(key, file, kind, unit, label=label or key.rpartition(".")[2].replace("_", " "), doc=doc,
                 group=group, **kw)


@lru_cache(maxsize=None)
def _all(mechanism_type: str) -> tuple[Param, ...]:
    if mechanism_type not in MECHANISM_TYPES:
        raise KeyError(f"unknown mechanism type {mechanism_type!r} (known: {', '.join(MECHANISM_TYPES)})")
    from solver.scenario_schema import PARAMS as common
    mod = importlib.import_module(f"solver.mechanisms.{mechanism_type}.schema")
    skip = set(getattr(mod, "NOT_READ", ()))         # common keys the type does not read: not its keys
    out = (*(p for p in common if p.key not in skip), *mod.PARAMS)
    seen = set()
    for p in out:
        assert (p.file, p.key) not in seen, f"{p.file}: {p.key} declared twice"
        seen.add((p.file, p.key))
    return out


@lru_cache(maxsize=None)
def _index(mechanism_type: str) -> dict[tuple[str, str], Param]:
    return {(p.file, p.key): p for p in _all(mechanism_type)}


def params(file: str | None = None, mechanism_type: str = DEFAULT_TYPE) -> list[Param]:
    """The declared keys (of one file kind, or all), in declaration order."""
    return [p for p in _all(mechanism_type) if file is None or p.file == file]


class UnknownKey(KeyError):
    """A key the schema does not declare; its message names the nearest declared key."""

    def __str__(self):
        return self.args[0]


def lookup(key: str, mechanism_type: str = DEFAULT_TYPE, file: str | None = None) -> Param:
    """The Param of `key` ("section.key"; "initial.lateral_miss[0]" names the vector); UnknownKey with the nearest."""
    key = key.split("[")[0]
    idx = _index(mechanism_type)
    for f in ([file] if file else FILES):
        if (f, key) in idx:
            return idx[(f, key)]
    keys = sorted({p.key for p in _all(mechanism_type) if file is None or p.file == file})
    near = difflib.get_close_matches(key, keys, n=1)
    raise UnknownKey(f"{key}: unknown key" + (f" (did you mean {near[0]}?)" if near else ""))


def sections(file: str, mechanism_type: str = DEFAULT_TYPE) -> set[str]:
    """Every declared table name of a file kind ("contact" and "contact.<table>" both)."""
    out = set()
    for p in params(file, mechanism_type):
        parts = p.key.split(".")[:-1]
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out


def undeclared(data: dict, file: str, mechanism_type: str = DEFAULT_TYPE, prefix: str = ""):
    """(dotted key, problem) of the first key or table of parsed `data` the schema does not declare, or None."""
    decl = {p.key: p for p in params(file, mechanism_type)}
    tables = sections(file, mechanism_type)
    for k, v in data.items():
        full = prefix + k
        if full in decl:
            if decl[full].kind == "changes":   # its tables and keys are the geometry's, checked by the loader
                continue
            if isinstance(v, dict):
                return full, "must be a value, not a table"
            continue
        if isinstance(v, dict) and full in tables:
            r = undeclared(v, file, mechanism_type, full + ".")
            if r:
                return r
            continue
        here = {x[len(prefix):].split(".")[0] for x in (*decl, *tables) if x.startswith(prefix)}
        return full, unknown(k, here, "section" if isinstance(v, dict) else "key")
    return None


def describe(file: str | None = None, mechanism_type: str = DEFAULT_TYPE, markdown: bool = False) -> str:
    """Every declared key as a readable table: key, unit, range, default, group, label, doc, source."""
    head = ["file", "key", "unit", "range", "default", "group", "label", "doc", "source"]
    rows = []
    for p in params(file, mechanism_type):
        size = f" x{p.size}" if p.kind == "vector" and p.size else ""
        doc = p.doc + (f" (check: {p.check})" if p.check else "")
        rows.append([p.file, p.key, p.unit or "-", (p.range_text() or "-") + size, p.default_text(), p.group,
                     p.label, doc, p.source])
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in rows]
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                          *("| " + " | ".join(r) + " |" for r in esc)]) + "\n"
    w = [max(len(h), *(len(r[i]) for r in rows)) if i < 7 else 0 for i, h in enumerate(head)]
    out = []
    for r in [head, *rows]:
        out.append("  ".join(c.ljust(w[i]) for i, c in enumerate(r[:7]))
                   + (f"  {r[7]} [{r[8]}]" if r is not head else "  doc [source]"))
    return "\n".join(out) + "\n"


def unit_check() -> list[str]:
    """Units that pint cannot parse (empty when all are valid)."""
    import pint
    ureg = pint.UnitRegistry()
    bad = []
    for t in MECHANISM_TYPES:
        for p in params(None, t):
            if p.unit:
                try:
                    ureg.parse_units(p.unit)
                except Exception:                      # pint raises several kinds
                    bad.append(f"{p.key}: {p.unit}")
    return bad


def reference_file(mechanism_type: str = DEFAULT_TYPE) -> str:
    """The reference doc of a mechanism type: docs/parameters.md (the default type) or docs/parameters-<type>.md."""
    return "docs/parameters.md" if mechanism_type == DEFAULT_TYPE else f"docs/parameters-{mechanism_type}.md"


def reference(mechanism_type: str = DEFAULT_TYPE) -> str:
    """The type's reference doc: the schema as Markdown tables, one per file kind (`python -m solver.schema TYPE`)."""
    cmd = "python -m solver.schema" + ("" if mechanism_type == DEFAULT_TYPE else f" {mechanism_type}")
    out = [f"# Parameter reference ({mechanism_type})\n",
           "Generated from the parameter schema (solver/schema.py, solver/scenario_schema.py,",
           f"solver/mechanisms/{mechanism_type}/schema.py) by `{cmd} > {reference_file(mechanism_type)}`;",
           "`dockmnemo run --describe` prints the same. A test keeps this file up to date. Ranges: `(` open, `[`",
           "closed; `xN` a list of N numbers; a key with a default may be left out; \"optional\" keys are read only",
           "where the doc says. A key not listed here is refused (`file: key: unknown key (did you mean ...)`).\n"]
    for f in FILES:
        out += [f"## {f} files\n", describe(f, mechanism_type, markdown=True)]
    return "\n".join(out)


if __name__ == "__main__":
    import sys
    print(reference(*sys.argv[1:2]), end="")
