"""One compiled body per solver kernel for calls between kernels: a constant argument (`_contact(..., 2, ...)`, a
flag True) and a left-out scalar default are typed as their plain type (int64, float64, bool), not one value, so numba
compiles the callee once, not once per constant value or per call with and without the default; a callee that needs
the value (indexing a heterogeneous tuple) still gets the literal.
Installed by importing solver; the arithmetic is the same, only typing sees a plain int (bench/bit_identity.py)."""
from __future__ import annotations

from numba import typeof
from numba.core import errors, types
from numba.core.dispatcher import _DispatcherBase

PREFIX = "solver."        # whose kernels (their module) are compiled once for constant arguments
_literal_call_template = _DispatcherBase.get_call_template


def _plain(t):
    """The type of any value of t's kind: a literal's plain type, a left-out int/float/bool default's type."""
    if isinstance(t, types.Omitted):
        return typeof(t.value) if type(t.value) in (bool, int, float) else t
    return types.unliteral(t)


def _call_template(self, args, kws):
    """numba's get_call_template, with the arguments' plain types first for a solver kernel."""
    if getattr(getattr(self, "py_func", None), "__module__", "").startswith(PREFIX):
        _, folded = self._compiler.fold_argument_types(args, kws)   # keywords placed, defaults as Omitted
        plain = tuple(_plain(a) for a in folded)
        if plain != tuple(folded):
            try:
                return _literal_call_template(self, plain, {})
            except errors.TypingError:
                pass      # the callee needs the constant's value: compiled for it, as numba does
    return _literal_call_template(self, args, kws)


def install():
    """Calls between solver kernels typed with plain argument types from now on in this process (idempotent)."""
    _DispatcherBase.get_call_template = _call_template


install()
