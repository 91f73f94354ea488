"""Calls between solver kernels with constant arguments compile the callee once (solver/kernel_calls.py)."""
from numba import njit
from numba.core import types

import solver  # noqa: F401  (installs the plain typing of calls between solver kernels)

SOURCE = '''
@njit
def scaled(x, k, bias=0.5):
    return x * k + bias

@njit
def pick(t, i):
    return t[i]

@njit
def calls_with_constants(x):
    return scaled(x, 2) + scaled(x, 3, 1.0) + scaled(x, 4, bias=0.25) + scaled(x, 5, 2.0) * (x > 0.0)

@njit
def needs_the_value():
    t = (1, 2.5)
    return pick(t, 0) + pick(t, 1)
'''


def _kernels(module: str) -> dict:
    """The SOURCE kernels as defined in a module of that name."""
    ns = {"__name__": module, "njit": njit}
    exec(compile(SOURCE, f"<{module}>", "exec"), ns)
    return ns


def test_constants_and_left_out_defaults_compile_a_solver_kernel_once():
    """Four calls with different constant ints (and with, without and by keyword the float default) give one
    body typed (float64, int64, float64); old main compiled one per literal value and per left-out default: 4."""
    k = _kernels("solver._kernel_calls_probe")
    assert k["calls_with_constants"](1.5) == (3.5) + (5.5) + (6.25) + (9.5)
    sigs = list(k["scaled"].overloads)
    assert sigs == [(types.float64, types.int64, types.float64)], sigs


def test_a_kernel_that_needs_the_constant_still_gets_it():
    """Indexing a tuple of an int and a float needs the index's value: that callee is compiled per value, as numba
    does, and gives the same result."""
    k = _kernels("solver._kernel_calls_probe2")
    assert k["needs_the_value"]() == 3.5
    assert all(isinstance(sig[1], types.IntegerLiteral) for sig in k["pick"].overloads)


def test_kernels_outside_the_solver_keep_numba_s_typing():
    """Only the solver's kernels are typed plainly: a module elsewhere keeps numba's literal specialisations."""
    k = _kernels("elsewhere._kernel_calls_probe")
    k["calls_with_constants"](1.5)
    assert len(k["scaled"].overloads) > 1
