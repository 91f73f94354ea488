"""Contact geometry library (seed 003): primitives, dichotomy over ordered sets, the probe-cone pair set.

Solver entry points: `load` (TOML -> ContactGeometry), `evaluate_pairs` (numba, one call per step),
`raise_on_status` / `ContactAbort`, `PairSetOutput`, `quat_to_rot`. See docs/contact-library.md.
"""
from .geometry import BODIES, ContactGeometry, GeometryBuilder, build_probe_cone, load
from .pairset import (STATUS_DEPTH_EXCEEDED, STATUS_OK, ContactAbort, PairSetOutput, evaluate,
                      evaluate_pairs, quat_to_rot, raise_on_status)

__all__ = ["BODIES", "ContactGeometry", "GeometryBuilder", "build_probe_cone", "load", "ContactAbort",
           "PairSetOutput", "evaluate", "evaluate_pairs", "quat_to_rot", "raise_on_status", "STATUS_OK",
           "STATUS_DEPTH_EXCEEDED"]
