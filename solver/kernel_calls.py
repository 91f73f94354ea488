"""One compiled body per solver kernel for calls between kernels: a constant argument (`_contact(..., 2, ...)`, a
flag True) is typed as its plain type (int64, bool), not one literal value, so numba compiles the callee once, not
once per constant value; a callee that needs the value (indexing a heterogeneous tuple) still gets the literal.
Installed by importing solver; the arithmetic is the same, only typing sees a plain int (bench/bit_identity.py)."""
from __future__ import annotations

from numba.core import errors, types
from numba.core.dispatcher import _DispatcherBase

PREFIX = "solver."        # whose kernels (their module) are compiled once for constant arguments
_literal_call_template = _DispatcherBase.get_call_template


def _plain(t):
    return types.unliteral(t)


def _call_template(self, args, kws):
    """numba's get_call_template, with the arguments' plain types first for a solver kernel."""
    if getattr(getattr(self, "py_func", None), "__module__", "").startswith(PREFIX):
        plain = tuple(_plain(a) for a in args)
        plain_kws = {k: _plain(v) for k, v in kws.items()}
        if plain != tuple(args) or plain_kws != kws:
            try:
                return _literal_call_template(self, plain, plain_kws)
            except errors.TypingError:
                pass      # the callee needs the constant's value: compiled for it, as numba does
    return _literal_call_template(self, args, kws)


def install():
    """Calls between solver kernels typed with plain argument types from now on in this process (idempotent)."""
    _DispatcherBase.get_call_template = _call_template


install()
