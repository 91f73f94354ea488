"""A compiled kernel calling another through its address (solver/pointer_call.py), as `evaluate` calls `pairs_step`:
the same results and exceptions as a direct call."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit, typeof

from solver.pointer_call import call_status_at, status_address


@njit
def _press(depth, force, k):
    """A stand-in contact law: force = k * depth where pressed; the number of pressed points."""
    if k < 0.0:
        raise ValueError("negative stiffness")
    n = 0
    for i in range(depth.shape[0]):
        force[i] = k * depth[i] if depth[i] > 0.0 else 0.0
        n += depth[i] > 0.0
    return n


@njit
def _float_law(depth):
    return depth.sum()


@njit
def _through(at, depth, force, k):
    return call_status_at(at, (depth, force, k)) + 100


def _args(k=2.0):
    return np.array([0.5, -1.0, 0.25]), np.zeros(3), k


def test_call_through_the_address_is_the_direct_call():
    depth, force, k = _args()
    at = status_address(_press, tuple(typeof(a) for a in (depth, force, k)))
    assert _through(at, depth, force, k) == 100 + 2
    direct = np.zeros(3)
    assert _press(depth, direct, k) == 2
    assert np.array_equal(force, direct) and np.array_equal(force, [1.0, 0.0, 0.5])


def test_an_exception_in_the_callee_reaches_the_caller():
    depth, force, _ = _args()
    at = status_address(_press, tuple(typeof(a) for a in (depth, force, -1.0)))
    with pytest.raises(ValueError, match="negative stiffness"):
        _through(at, depth, force, -1.0)


def test_a_callee_not_returning_an_int64_status_is_refused():
    with pytest.raises(TypeError, match="_float_law.*int64"):
        status_address(_float_law, (typeof(np.zeros(3)),))
