"""Mechanism types: the registry (see solver/mechanisms/base.py for the interface, docs/architecture.md).

A run file names its type in the root attribute `mechanism_type`; `for_run` picks the type from it, infers
probe_cone for files written before the attribute (variant one of the probe-cone's), and falls back to the
generic type for anything else, so every readable run opens.
"""
from __future__ import annotations

from solver.mechanisms.base import MechanismType
from solver.mechanisms.berthing import BERTHING
from solver.mechanisms.generic import GENERIC
from solver.mechanisms.peripheral import PERIPHERAL
from solver.mechanisms.probe_cone import PROBE_CONE
from solver.mechanisms.rods import RODS
from solver.mechanisms.snare import SNARE

_TYPES: dict[str, MechanismType] = {}
DEFAULT_TYPE = PROBE_CONE.name   # of a mechanism file that declares no mechanism_type, and of a run without one
BUILT_IN_TYPES = (PROBE_CONE.name, PERIPHERAL.name, RODS.name, SNARE.name)   # the types with a parameter schema (solver.schema)


def register(mtype: MechanismType) -> MechanismType:
    """Make a type known by its name (a type registered again under its name replaces the old one)."""
    _TYPES[mtype.name] = mtype
    return mtype


def unregister(name: str) -> None:
    _TYPES.pop(name, None)


def names() -> list[str]:
    """Registered type names, the generic fallback excluded."""
    return [n for n in _TYPES if n != GENERIC.name]


def mechanism_type(name: str) -> MechanismType:
    """The registered type `name` (KeyError naming the known ones if none)."""
    try:
        return _TYPES[name]
    except KeyError:
        raise KeyError(f"unknown mechanism type {name!r} (known: {', '.join(names())})") from None


def type_name_for(declared: str, variant: str) -> str:
    """The type a run file is of: its declared `mechanism_type`, else inferred from its variant; generic if unknown."""
    if declared:
        return declared if declared in _TYPES else GENERIC.name
    return next((t.name for t in _TYPES.values() if variant in t.run_variants), GENERIC.name)


def with_operator() -> MechanismType:
    """The first registered type with an operator-in-the-loop session (KeyError if none has one)."""
    for name in names():
        if mechanism_type(name).operator is not None:
            return mechanism_type(name)
    raise KeyError("no mechanism type has an operator session")


def for_run(run) -> MechanismType:
    """The mechanism type of an open RunFile (or anything with .meta.mechanism_type and .meta.variant); with no
    run, the default type (the first registered: probe_cone), whose titles an empty window shows."""
    if run is None:
        return next(iter(_TYPES.values()))
    meta = run.meta
    return _TYPES[type_name_for(getattr(meta, "mechanism_type", ""), meta.variant)]


register(PROBE_CONE)
register(PERIPHERAL)
register(RODS)
register(SNARE)
register(BERTHING)
register(GENERIC)
