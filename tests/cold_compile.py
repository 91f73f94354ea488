"""The suite's one cold compile: `dockmnemo run` of the 20 t central impact on an empty numba cache. On a fresh clone
the session's start (conftest) makes it, keeps what it said for tests/test_solver_compile.py and fills the session's
kernel cache from it; with a warm cache that module makes its own."""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
CMD = [sys.executable, "-m", "app", "run", str(SCEN), "--t-end", "0.02"]
COLD_ENV = "DOCKMNEMO_TEST_COLD_RUN"   # the folder of the session's cold run, for the workers


def env_with_cache(cache: Path) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))


def cold_start(folder: Path) -> subprocess.Popen:
    """Start CMD on an empty cache folder/numba_cache into folder/run.h5 (what it says goes to folder/stderr.txt)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "stderr.txt", "w") as err:
        return subprocess.Popen([*CMD, "-o", str(folder / "run.h5")], stdout=subprocess.DEVNULL, stderr=err,
                                env=env_with_cache(folder / "numba_cache"), cwd=ROOT)


def cold_finish(folder: Path, p: subprocess.Popen) -> tuple[Path, subprocess.CompletedProcess]:
    """The ended cold run of cold_start: what it said is kept in folder/said.json; (its cache, the process)."""
    stderr = (folder / "stderr.txt").read_text()
    (folder / "said.json").write_text(json.dumps({"returncode": p.returncode, "stderr": stderr}))
    return folder / "numba_cache", subprocess.CompletedProcess(CMD, p.returncode, "", stderr)


def cold_run(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Run CMD on an empty cache folder/numba_cache into folder/run.h5; what it said is kept in folder/said.json."""
    p = cold_start(folder)
    try:
        p.wait(timeout=1800)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return cold_finish(folder, p)


def session_cold_run() -> tuple[Path, subprocess.CompletedProcess] | None:
    """The session start's cold run, if it made one: (its cache, the finished process as it was)."""
    folder = os.environ.get(COLD_ENV)
    if not folder or not (Path(folder) / "said.json").is_file():
        return None
    said = json.loads((Path(folder) / "said.json").read_text())
    return Path(folder) / "numba_cache", subprocess.CompletedProcess(CMD, said["returncode"], "", said["stderr"])


WARM_CODE = """
import sys, tempfile
from pathlib import Path
from solver.scenario import load_model
from solver.simulate import run_scenario
p = Path(sys.argv[1])
m = load_model(p)
with tempfile.TemporaryDirectory() as d:
    run_scenario(p, Path(d) / "w.h5", t_end=2 * m.output_step)
"""


def typed_scenarios() -> list[tuple[str, Path]]:
    """(type name, scenario): one shipped scenario of each built-in mechanism type that has a solver (its first, by
    name); the name from the type's registry, so no scenario is loaded to learn it."""
    from solver import mechanisms
    out = []
    for name in mechanisms.names():
        t = mechanisms.mechanism_type(name)
        d = getattr(t, "scenarios_dir", None)
        first = sorted(Path(d).glob("*.toml"))[:1] if d and t.runner is not None else []
        out += [(name, p) for p in first]
    return out


def type_scenarios() -> list[Path]:
    """One shipped scenario of each built-in mechanism type that has a solver (its first, by name)."""
    return [p for _, p in typed_scenarios()]


def units_cached(scenario: Path) -> bool:
    """Whether the numba cache this process uses (NUMBA_CACHE_DIR) holds every kernel unit the scenario's type lists,
    as solver.warmup.compile_kernels checks (False for a type that lists none: only a run can tell)."""
    from solver.scenario import load_model
    from solver.warmup import _cached, _type_units
    units, _ = _type_units(load_model(scenario))
    return bool(units) and all(_cached(d, s) for _, d, s in units)


# CPU-s of each type's first compile on one core (a two-frame run on an empty cache; the probe-cone's: the cold run):
# the compile phase starts the longest first
COMPILE_CPU_S = {"probe_cone": 44, "peripheral": 41, "berthing": 30, "snare": 23, "rods": 16}


def _compile_cost(name: str) -> float:
    """CPU-s the type's first compile takes (COMPILE_CPU_S; an unlisted type by its source size, ~3 kB a CPU-s)."""
    from solver import mechanisms
    if name in COMPILE_CPU_S:
        return COMPILE_CPU_S[name]
    pkg = Path(mechanisms.__file__).parent / name
    return sum(f.stat().st_size for f in pkg.glob("*.py")) / 3000


def merge_cache(src: Path, dst: Path):
    """Add the numba cache src to dst without overwriting: a function's index dst lacks is copied with its code; one
    both hold (the same source) gains the signatures only src has, their code under free file numbers."""
    import pickle
    from numba.core.serialize import dumps
    for index in src.rglob("*.nbi"):
        to = dst / index.relative_to(src)
        to.parent.mkdir(parents=True, exist_ok=True)
        with open(index, "rb") as f:
            version, (stamp, overloads) = pickle.load(f), pickle.loads(f.read())
        if not to.exists():
            for name in overloads.values():
                shutil.copy2(index.with_name(name), to.with_name(name))
            shutil.copy2(index, to)
            continue
        with open(to, "rb") as f:
            version_to, (stamp_to, have) = pickle.load(f), pickle.loads(f.read())
        new = {k: n for k, n in overloads.items() if k not in have}
        if (version_to, stamp_to) != (version, stamp) or not new:
            continue
        for key, name in new.items():
            stem = name.rsplit(".", 2)[0]
            free = next(f"{stem}.{i}.nbc" for i in itertools.count(1)
                        if f"{stem}.{i}.nbc" not in have.values() and not to.with_name(f"{stem}.{i}.nbc").exists())
            shutil.copy2(index.with_name(name), to.with_name(free))
            have[key] = free
        with open(to, "wb") as f:
            pickle.dump(version, f, protocol=-1)
            f.write(dumps((stamp, have)))


PHASE_LOG: list = []   # (job, started s, ended s, CPU-s of the process and its children) of each compile_phase job


def _ended(p: subprocess.Popen, job: str, t0: float) -> bool:
    """Whether the job's process ended (reaped here, its CPU-s logged in PHASE_LOG)."""
    pid, status, ru = os.wait4(p.pid, os.WNOHANG)
    if pid == 0:
        return False
    p.returncode = os.waitstatus_to_exitcode(status)
    PHASE_LOG.append((job, getattr(p, "started", t0) - t0, time.monotonic() - t0, ru.ru_utime + ru.ru_stime))
    return True


def compile_phase(cache: Path, cold_folder: Path | None, parallel: int = 2) -> subprocess.CompletedProcess | None:
    """The session's compile: with `cold_folder` (`cache` new and empty), the probe-cone's cold run on an empty cache
    of its own (what tests/test_solver_compile.py checks) alongside a two-frame run of every other type; without, of
    every type whose kernels `cache` (this process's NUMBA_CACHE_DIR) lacks; `parallel` processes at a time, the
    longest first and the next as soon as one ends; then the cold run's cache is merged into `cache` without
    overwriting. Returns the cold run (None without)."""
    env = env_with_cache(cache)
    t0 = time.monotonic()
    running: dict = {}
    cold = None
    if cold_folder is not None:   # started at once: what is left to compile is found out meanwhile
        cold = cold_start(cold_folder)
        cold.started = time.monotonic()
        running[cold] = "cold"
    jobs = [(n, p) for n, p in typed_scenarios()   # (a new cache lacks them all: no checking it)
            if (n != "probe_cone" if cold is not None else not units_cached(p))]
    todo = sorted(jobs, key=lambda j: -_compile_cost(j[0]))
    deadline = t0 + 1800
    while todo or running:
        while todo and len(running) < parallel:
            name, s = todo.pop(0)
            p = subprocess.Popen([sys.executable, "-c", WARM_CODE, str(s)], cwd=ROOT, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            p.started = time.monotonic()
            running[p] = name
        time.sleep(0.1)
        running = {p: k for p, k in running.items() if not _ended(p, k, t0)}
        if time.monotonic() > deadline:
            for p in running:
                p.kill()
                p.wait()
            break
    if cold is None:
        return None
    cold_cache, done = cold_finish(cold_folder, cold)
    if done.returncode == 0:
        merge_cache(cold_cache, cache)
    else:
        compile_phase(cache, None, parallel)     # (the probe-cone's kernels then as the other types')
    return done


def warm_types(cache: Path, parallel: int = 2):
    """A two-frame run of the scenario of every type whose kernels `cache` lacks (this process's NUMBA_CACHE_DIR),
    `parallel` at a time, the longest first: each type's kernels compiled once, none run again when the cache is
    warm."""
    compile_phase(cache, None, parallel)
