"""Compile the solver kernels before a run, one unit at a time with progress (first run only; cached after).

`compile_kernels(model, progress)` loads the kernels from numba's cache, or compiles the units it lacks, callees
first, calling `progress(k, n)` before each. numba compiles one unit at a time in a process, so a second Python
process compiles the contact chain (pair_eval, _pair_loop, pairs_step) and `record` into the same cache meanwhile,
while this one compiles post_step, cyclogram, trig_table and `evaluate` (which calls pairs_step through its
address, so needs none of its code: solver/pointer_call.py); then the step loop `_steps`.
One process at a time compiles into a cache directory (a file lock there): a second process, e.g. another
Dask worker on the same cache, waits and loads what the first compiled.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

COMPILING = "compiling solver kernels, first run only"
LOCK_NAME = "dockmnemo-compile.lock"
N_CHILD = 4     # kernel_units' first units (the contact chain pair_eval .. pairs_step, and record): a second process
                # compiles them while this one compiles post_step, cyclogram, trig_table and `evaluate`


def _arg_types(m) -> dict:
    """numba types of the arrays and scalars the kernels take, by parameter name (as `run_scenario` and
    `run_block` allocate them)."""
    import numba
    from numba.core import types

    from solver.simulate import kernel_args
    ty = numba.typeof
    f1, f2, f3 = ty(np.zeros(1)), ty(np.zeros((1, 1))), ty(np.zeros((1, 1, 1)))
    u1, u2, i1 = ty(np.zeros(1, np.uint8)), ty(np.zeros((1, 1), np.uint8)), ty(np.zeros(1, np.int64))
    gprim, gpint, gpairs, gppar, gwork = (ty(a) for a in kernel_args(m))
    t = {"s": ty(m.s0.copy()), "Z": ty(m.Z0.copy()), "t0": types.float64, "t": types.float64, "h": types.float64,
         "n_out": types.int64, "spo": types.int64, "row": types.int64,
         "P": ty(m.P), "LAT": ty(m.LAT), "TLS": ty(m.TLS), "TAX": ty(m.TAX), "TMA": ty(m.TMA), "TML": ty(m.TML),
         "gprim": gprim, "gpint": gpint, "gpairs": gpairs, "gppar": gppar, "gwork": gwork,
         "c_diag": f1, "prev_act": i1, "ev": f2, "n_ev": i1, "out_t": f1, "out_ch": f2, "out_pos": f3, "out_q": f3,
         "out_act": u2, "out_f": f3, "out_p": f3, "out_n": f3, "out_d": f2, "out_vn": f2,
         "W": f2, "JV": f3, "JW": f3, "cpos": f2, "crot": f3, "cvel": f2, "cw": f2, "cst": f1, "c_act": u1,
         "c_dep": f1, "c_pnt": f2, "c_nrm": f2, "c_frc": f2, "c_vn": f1, "obs": f1, "pose": f2,
         "k1": f1, "k2": f1, "k3": f1, "k4": f1, "st": f1, "ds": f1, "full": types.boolean, "pairs_at": types.int64}
    # the pair set's names for the same arrays (`evaluate` passes its own scratch rows as near and skip)
    t.update(prim=gprim, pint=gpint, pairs=gpairs, ppar=gppar, work=gwork, pos=f2, rot=f3, vel=f2, omega=f2,
             state=f1, active=u1, depth=f1, point=f2, normal=f2, force=f2, diag=f1, near=f1, first=types.boolean,
             skip=f1, hold=types.float64, mode=types.int64, k=types.int64, j=types.int64,
             w=gwork, ka=types.int64, ia=types.int64, kb=types.int64, ib=types.int64)
    return t


def kernel_units(m) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the compiled units of a run of model m, callees first."""
    from solver.mechanisms.probe_cone import dynamics as D
    from solver.contact import pairset as PS
    t = _arg_types(m)
    out = []
    from solver.contact.kernels import pair_eval
    for disp in (pair_eval, PS._pair_loop, PS.pairs_step, D.record,                  # N_CHILD: the second process
                 D.post_step, D.cyclogram, D.trig_table, D.evaluate, D._steps):
        names = list(inspect.signature(disp.py_func).parameters)
        out.append((disp.py_func.__name__, disp, tuple(t[n] for n in names)))
    return out


def _cached(disp, sig) -> bool:
    """Whether numba's cache holds this dispatcher's code for these argument types (False if it cannot tell)."""
    if tuple(sig) in disp.overloads:
        return True
    try:
        cache = disp._cache
        key = cache._index_key(tuple(sig), disp.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:   # noqa: BLE001  (numba internals: treat as not cached, the compile still loads or builds)
        return False


@contextlib.contextmanager
def _compile_lock(disp):
    """An exclusive lock file in the dispatcher's cache directory (none if it cannot be made there)."""
    try:
        import fcntl
        path = Path(disp._cache._cache_path) / LOCK_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a")
    except Exception:   # noqa: BLE001  (no lock: both processes compile, as numba alone would)
        yield
        return
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


def _compile_other_type(m, progress) -> int:
    """Another mechanism type's units (its simulate module's `kernel_units(m)`), compiled in this process, saying so."""
    import importlib
    try:
        units = importlib.import_module(f"solver.mechanisms.{m.mechanism_type}.simulate").kernel_units(m)
    except (ImportError, AttributeError):
        return 0        # a type without listed units compiles on its first call
    missing = [(d, sig) for _, d, sig in units if not _cached(d, sig)]
    for _, d, sig in units:
        if (d, sig) not in missing:
            d.compile(sig)
    if not missing:
        return 0
    with _compile_lock(missing[-1][0]):
        for k, (d, sig) in enumerate(missing, 1):
            if progress is not None:
                progress(k, len(missing))
            d.compile(sig)
    return len(missing)


def compile_kernels(m, progress=None) -> int:
    """Load or compile the kernels a run of model m calls; `progress(k, n)` before compiling unit k of n.

    Returns the number of units compiled, by this process or its second one (0: all from the cache)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return 0
    if getattr(m, "mechanism_type", "probe_cone") != "probe_cone":
        return _compile_other_type(m, progress)
    units = kernel_units(m)
    if all(_cached(d, s) for _, d, s in units):
        for _, d, s in units:
            d.compile(s)
        return 0
    _, top, sig = units[-1]
    with _compile_lock(top):
        child = None
        if sum(not _cached(d, s) for _, d, s in units[:N_CHILD]) > 1:
            child = _start_compile_process(units[:N_CHILD])
        try:
            return _compile_missing(units, progress, child)
        finally:
            if child is not None and child.poll() is None:   # interrupted: stop the second process too
                child.kill()
                child.wait()


def _compile_missing(units, progress, child) -> int:
    """Compile the units the cache lacks, callees first; with `child` (a second process compiling units[:N_CHILD]
    into the same cache: numba compiles one unit at a time in a process) the others meanwhile, the step loop last."""
    n = len(units)
    count = {"k": 0, "compiled": 0}
    lock = threading.Lock()

    def step(compiles: bool):   # a unit starts compiling (or is found in the cache) in either process: "k of n"
        with lock:
            count["k"] += 1
            if compiles:
                count["compiled"] += 1
                if progress is not None:
                    progress(count["k"], n)

    said = set()

    def follow():   # the other process prints one line per unit it comes to
        for line in child.stdout:
            kind, _, name = line.decode().partition(" ")
            if kind in ("unit", "cached"):
                said.add(name.strip())
                step(kind == "unit")
    reader = None
    if child is not None:
        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
    own = units[N_CHILD:] if child is not None else units
    for _, disp, sig in own:
        if disp is own[-1][1] and reader is not None:     # the step loop links the other process's `record`
            reader.join()
            child.wait()
            for _, d, s in units[:N_CHILD]:                # (on failure there, this process compiles what is missing)
                if _unit_name(d) not in said:
                    step(not _cached(d, s))
                d.compile(s)
        step(tuple(sig) not in disp.overloads and not _cached(disp, sig))
        disp.compile(sig)
    return count["compiled"]


def _unit_name(disp) -> str:
    return f"{disp.py_func.__module__}.{disp.py_func.__name__}"


def _start_compile_process(units):
    """A Python process compiling these units into the same numba cache (None if it cannot start)."""
    spec = [(disp.py_func.__module__, disp.py_func.__name__, tuple(sig)) for _, disp, sig in units]
    try:
        p = subprocess.Popen([sys.executable, "-c", "from solver.warmup import _compile_child; _compile_child()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(d for d in sys.path if d)))
        p.stdin.write(pickle.dumps(spec))
        p.stdin.close()
    except Exception:   # noqa: BLE001  (no second process: this one compiles everything)
        return None
    return p


def _compile_child():
    """The second process: compile the units pickled on stdin, one line on stdout as each starts."""
    import importlib
    spec = pickle.loads(sys.stdin.buffer.read())
    for mod, name, sig in spec:
        disp = getattr(importlib.import_module(mod), name)
        sys.stdout.write(f"{'cached' if _cached(disp, sig) else 'unit'} {_unit_name(disp)}\n")
        sys.stdout.flush()
        disp.compile(sig)
