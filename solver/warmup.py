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
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path


COMPILING = "compiling solver kernels, first run only"
LOCK_NAME = "dockmnemo-compile.lock"
_CHILDREN: set = set()   # second compile processes running (`stop_compiling` kills them)


def kernel_units(m) -> list[tuple[str, object, tuple]]:
    """(name, dispatcher, argument types) of the compiled units of a run of model m, callees first."""
    return _type_units(m)[0]


def _type_units(m) -> tuple[list, int]:
    """The units of model m's mechanism type and how many of the first a second process compiles meanwhile."""
    from solver import mechanisms
    return mechanisms.mechanism_type(getattr(m, "mechanism_type", mechanisms.DEFAULT_TYPE)).kernel_units(m)


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

    Returns the number of units compiled, by this process or its second one (0: all from the cache)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return 0
    units, n_child = _type_units(m)
    if not units:
        return 0        # a type without listed units compiles on its first call
    if all(_cached(d, s) for _, d, s in units):
        for _, d, s in units:
            d.compile(s)
        return 0
    _, top, sig = units[-1]
    with _compile_lock(top):
        child = None
        if sum(not _cached(d, s) for _, d, s in units[:n_child]) > 1:
            child = _start_compile_process(units[:n_child])
        try:
            return _compile_missing(units, progress, child, n_child)
        finally:
            if child is not None and child.poll() is None:   # interrupted: stop the second process too
                child.kill()
                child.wait()


def _compile_missing(units, progress, child, n_child: int) -> int:
    """Compile the units the cache lacks, callees first; with `child` (a second process compiling units[:n_child]
    into the same cache: numba compiles one unit at a time in a process) the others meanwhile, the step loop last."""
    n = len(units)
    count = {"k": 0, "compiled": 0}
    lock = threading.Lock()
    ended = threading.Event()   # this process stopped (done, or interrupted): the reader reports no more progress

    def step(compiles: bool):   # a unit starts compiling (or is found in the cache) in either process: "k of n"
        with lock:
            count["k"] += 1
            if compiles:
                count["compiled"] += 1
                if progress is not None and not ended.is_set():
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
    own = units[n_child:] if child is not None else units
    try:
        for _, disp, sig in own:
            if disp is own[-1][1] and reader is not None:     # the step loop links the other process's `record`
                reader.join()
                child.wait()
                for _, d, s in units[:n_child]:      # (on failure there, this process compiles what is missing)
                    if _unit_name(d) not in said:
                        step(not _cached(d, s))
                    d.compile(s)
            step(tuple(sig) not in disp.overloads and not _cached(disp, sig))
            disp.compile(sig)
    finally:
        with lock:              # a progress line under way ends first; none follows (e.g. after the cancel message)
            ended.set()
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
        _CHILDREN.add(p)
        p.stdin.write(pickle.dumps(spec))
        p.stdin.close()
    except Exception:   # noqa: BLE001  (no second process: this one compiles everything)
        return None
    return p


def stop_compiling():
    """Kill the second compile processes still running (a run cancelled while its kernels compile)."""
    for p in list(_CHILDREN):
        if p.poll() is None:
            p.kill()
        _CHILDREN.discard(p)


def _compile_child():
    """The second process: compile the units pickled on stdin, one line on stdout as each starts."""
    import importlib
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM):   # a Ctrl+C to the process group: ended without a traceback
        signal.signal(sig, signal.SIG_DFL)
    spec = pickle.loads(sys.stdin.buffer.read())
    for mod, name, sig in spec:
        disp = getattr(importlib.import_module(mod), name)
        sys.stdout.write(f"{'cached' if _cached(disp, sig) else 'unit'} {_unit_name(disp)}\n")
        sys.stdout.flush()
        disp.compile(sig)
