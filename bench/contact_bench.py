"""Cost of one full probe-cone contact evaluation (all pairs, forces included), numba vs pure Python.

The pure-Python figure runs the very same kernels un-jitted (each function's `.py_func`, numpy arrays
indexed element by element), in the same process. Pose: head on the cone wall, housing offset so load
pads touch, levers extended near the cone, latches extended (the expensive branches all run).
    python bench/contact_bench.py
"""
from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.contact import BODIES, load  # noqa: E402
from solver.contact import kernels, pairset  # noqa: E402
from solver.contact.pairset import PairSetOutput  # noqa: E402


def scene():
    g = load()
    nb = len(BODIES)
    B = {n: i for i, n in enumerate(BODIES)}
    pos, rot = np.zeros((nb, 3)), np.tile(np.eye(3), (nb, 1, 1))
    vel, om = np.zeros((nb, 3)), np.zeros((nb, 3))
    alpha = math.atan2(0.33, 0.45)
    u = np.array([0.0, math.cos(0.4), math.sin(0.4)])
    n = math.sin(alpha) * np.array([1.0, 0, 0]) - math.cos(alpha) * u
    foot = -0.2 * np.array([1.0, 0, 0]) + (0.07 + 0.25 * math.tan(alpha)) * u
    pos[B["probe_head"]] = foot + 0.049 * n
    pos[B["housing"]] = [0.05, 0.013, 0.0]   # three load pads on the cone (flat pad facings of probe_cone.toml)
    pos[B["limiter"]] = pos[B["housing"]] + [-0.1925, 0, 0]
    vel[B["probe_head"]] = [-0.1, 0.01, 0.0]
    om[B["housing"]] = [0.0, 0.0, 0.02]
    state = np.array([1.0, 0.6])
    return g, pos, rot, vel, om, state


def _unjitted():
    """Swap every kernel's module global for its .py_func so nested calls stay in Python."""
    saved = {}
    for mod in (kernels, pairset):
        for name, obj in list(vars(mod).items()):
            if hasattr(obj, "py_func"):
                saved[(mod, name)] = obj
                setattr(mod, name, obj.py_func)
    return saved


def _restore(saved):
    for (mod, name), obj in saved.items():
        setattr(mod, name, obj)


@njit(cache=False)
def _solver_loop(n, prim, pint, pairs, ppar, pos, rot, vel, om, state, work, a, d, p, nrm, f, diag):
    """What the solver does: call evaluate_pairs once per step from compiled code."""
    s = 0
    for i in range(n):
        pos[4, 0] += 1e-12 if i & 1 else -1e-12          # a changing pose each step
        s += pairset.evaluate_pairs(prim, pint, pairs, ppar, pos, rot, vel, om, state, work, a, d, p,
                                    nrm, f, diag)
    return s


def timed_loop(args, repeats, n):
    _solver_loop(10, *args)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        _solver_loop(n, *args)
        samples.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(samples)


def timed(fn, args, repeats, inner):
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn(*args)
        samples.append((time.perf_counter_ns() - t0) / inner / 1e3)
    return statistics.median(samples)


def main():
    g, pos, rot, vel, om, state = scene()
    out = PairSetOutput(len(g.pair_names))
    args = (g.prim, g.pint, g.pairs, g.ppar, pos, rot, vel, om, state, g.work, out.active, out.depth,
            out.point, out.normal, out.force, out.diag)
    jit = pairset.evaluate_pairs
    assert jit(*args) == 0
    active = [g.pair_names[k] for k in np.flatnonzero(out.active)]
    ref = out.force.copy()
    t_numba = timed_loop(args, repeats=200, n=2000)
    t_call = timed(jit, args, repeats=200, inner=2000)
    saved = _unjitted()
    try:
        py = pairset.evaluate_pairs
        assert py(*args) == 0
        assert np.allclose(out.force, ref, rtol=1e-12, atol=1e-9), "un-jitted result differs"
        t_py = timed(py, args, repeats=15, inner=20)
    finally:
        _restore(saved)
    print(f"pairs: {len(g.pair_names)}, primitives: {len(g.prim_names)}, active in this pose: {', '.join(active)}")
    print(f"numba   evaluate_pairs: {t_numba:9.2f} us per step, called from a jitted step loop "
          f"(median of 200 x 2000 steps)")
    print(f"numba   evaluate_pairs: {t_call:9.2f} us per call from Python (adds the dispatcher's "
          f"unboxing of 16 array arguments)")
    print(f"python  evaluate_pairs: {t_py:9.2f} us per step (same kernels un-jitted via .py_func, "
          f"numpy arrays indexed per element; median of 15 x 20 calls)")
    print(f"ratio python/numba: {t_py / t_numba:.0f}x; target < 5 us: {'met' if t_numba < 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
