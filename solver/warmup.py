"""Compile the solver kernels before a run, one unit at a time with progress (first run only; cached after).

`compile_kernels(model, progress)` loads the step loop `_steps` from numba's cache, or compiles its units bottom-up
(narrow phase, pair set, force evaluation, ..., step loop), calling `progress(k, n)` before each unit the cache
lacks. numba compiles one unit at a time in a process, so a second Python process compiles the contact chain
(pair_eval, _pair_loop, pairs_step) into the same cache meanwhile; `evaluate` then loads it from there.
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
from pathlib import Path

import numpy as np

COMPILING = "compiling solver kernels, first run only"
LOCK_NAME = "dockmnemo-compile.lock"
N_CONTACT = 3   # kernel_units' first units, the contact chain (pair_eval .. pairs_step): a second process compiles them


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
         "k1": f1, "k2": f1, "k3": f1, "k4": f1, "st": f1, "ds": f1, "full": types.boolean}
    # the pair set's names for the same arrays (`evaluate` passes its own scratch rows as near and skip)
    t.update(prim=gprim, pint=gpint, pairs=gpairs, ppar=gppar, work=gwork, pos=f2, rot=f3, vel=f2, omega=f2,
             state=f1, active=u1, depth=f1, point=f2, normal=f2, force=f2, diag=f1, near=f1, first=types.boolean,
             skip=f1, hold=types.float64, mode=types.int64, k=types.int64, j=types.int64,
             w=gwork, ka=types.int64, ia=types.int64, kb=types.int64, ib=types.int64)
    return t


def kernel_units(m) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the compiled units of a run of model m, callees first."""
    from solver import dynamics as D
    from solver.contact import pairset as PS
    t = _arg_types(m)
    out = []
    from solver.contact.kernels import pair_eval
    for disp in (pair_eval, PS._pair_loop, PS.pairs_step,                     # the contact chain (N_CONTACT)
                 D.record, D.post_step, D.cyclogram, D.trig_table, D.evaluate, D._steps):
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


def compile_kernels(m, progress=None) -> int:
    """Load or compile the kernels a run of model m calls; `progress(k, n)` before compiling unit k of n.

    Returns the number of units compiled here (0: all from the cache)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1" or getattr(m, "mechanism_type", "probe_cone") != "probe_cone":
        return 0        # another mechanism type's kernels load or compile on their first call
    units = kernel_units(m)
    _, top, sig = units[-1]
    if _cached(top, sig):
        top.compile(sig)
        return 0
    with _compile_lock(top):
        if _cached(top, sig):                 # another process compiled it while this one waited
            top.compile(sig)
            return 0
        child = None
        if sum(not _cached(d, s) for _, d, s in units[:N_CONTACT]) > 1:
            child = _start_contact_compile(units[:N_CONTACT])
        try:
            return _compile_missing(units, progress, child)
        finally:
            if child is not None and child.poll() is None:   # interrupted: stop the second process too
                child.kill()
                child.wait()


def _compile_missing(units, progress, child) -> int:
    """Compile the units the cache lacks, callees first; with `child` (a second process compiling the contact chain
    into the same cache: numba compiles one unit at a time in a process) the others meanwhile, then load its units."""
    n, k, compiled = len(units), 0, 0
    say = progress or (lambda k, n: None)
    own = units[N_CONTACT:] if child is not None else units
    for i, (_, disp, sig) in enumerate(own):
        if child is not None and disp is units[-2][1]:     # evaluate calls the pair set: wait for the chain first
            if not _cached(disp, sig):                      # meanwhile its other callees
                _compile_callees(disp, sig, {"pairs_step": _pairs_step_stand_in()})
            for line in child.stdout:                       # one line per unit the other process starts
                if line.startswith(b"unit"):
                    k, compiled = k + 1, compiled + 1
                    say(k, n)
            child.wait()                                    # on failure this process compiles what is missing
            for _, d, s in units[:N_CONTACT]:
                if not _cached(d, s):
                    k, compiled = k + 1, compiled + 1
                    say(k, n)
                    d.compile(s)
            k = max(k, N_CONTACT + i)
        k += 1
        if tuple(sig) in disp.overloads:
            continue
        if not _cached(disp, sig):
            say(k, n)
            compiled += 1
        disp.compile(sig)
    return compiled


def _compile_callees(disp, sig, stand_ins: dict) -> None:
    """Type disp's function for sig with `stand_ins` (name: njit function) for some of its globals, no code: numba
    compiles, and caches, the callees it types on the way (evaluate's own, while the pair set compiles elsewhere)."""
    import types as pytypes

    from numba import njit
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.typed_passes import NopythonTypeInference

    class TypeOnly(CompilerBase):
        def define_pipelines(self):
            pm = DefaultPassBuilder.define_untyped_pipeline(self.state)
            pm.add_pass(NopythonTypeInference, "nopython frontend")
            pm.finalize()
            return [pm]
    f = disp.py_func
    g = pytypes.FunctionType(f.__code__, dict(f.__globals__, **stand_ins), f.__name__, f.__defaults__, f.__closure__)
    try:
        njit(g, pipeline_class=TypeOnly, **_opts(disp)).compile(sig)
    except Exception:   # noqa: BLE001  (typing stops without code; the callees it met are compiled)
        pass


def _pairs_step_stand_in():
    """An uncached njit function typed like `pairs_step` (any arguments, an int status), for `_compile_callees`."""
    from numba import njit

    @njit(_nrt=False)
    def pairs_step(*args):
        return 0
    return pairs_step


def _opts(disp) -> dict:
    """The dispatcher's compile options that change typing or code (not its cache)."""
    keep = ("error_model", "_nrt", "nogil", "fastmath", "boundscheck")
    return {k: v for k, v in disp.targetoptions.items() if k in keep}


def _start_contact_compile(units):
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
        if not _cached(disp, sig):
            sys.stdout.write(f"unit {mod}.{name}\n")
            sys.stdout.flush()
        disp.compile(sig)
