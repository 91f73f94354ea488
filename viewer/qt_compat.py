"""Work-around for PySide6 6.12 on CPython 3.11: it returns None, True and False without a new reference.

Every `painter.drawRect(...)`, `label.setText(...)`, `widget.isVisible()` ... then drops the singleton's
refcount by one until CPython aborts ("none_dealloc", "bool_dealloc"). CPython >= 3.12 makes these
immortal (PEP 683); on older CPython we give them the same effectively unbounded refcount once.
Remove when PySide6 is fixed or the project needs Python >= 3.12.
"""
from __future__ import annotations

import ctypes
import sys

_BOOST = 1 << 40


def keep_none_alive() -> bool:
    """Make the refcounts of None, True, False effectively unbounded on CPython < 3.12; True if raised now."""
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    raised = False
    for obj in (None, True, False, NotImplemented, Ellipsis):
        ref = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is the first field of every PyObject
        if ref.value < _BOOST:
            ref.value += _BOOST
            raised = True
    return raised


keep_none_alive()
