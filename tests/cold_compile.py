"""The suite's one cold compile: `dockmnemo run` of the 20 t central impact on an empty numba cache. On a fresh clone
the session's start (conftest) makes it, keeps what it said for tests/test_solver_compile.py and fills the session's
kernel cache from it; with a warm cache that module makes its own."""
from __future__ import annotations

import json
import os
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


def cold_run(folder: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """Run CMD on an empty cache folder/numba_cache into folder/run.h5; what it said is kept in folder/said.json."""
    cache = folder / "numba_cache"
    p = subprocess.run([*CMD, "-o", str(folder / "run.h5")], capture_output=True, text=True, env=env_with_cache(cache),
                       cwd=ROOT, timeout=1800)
    (folder / "said.json").write_text(json.dumps({"returncode": p.returncode, "stderr": p.stderr}))
    return cache, p


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


def type_scenarios() -> list[Path]:
    """One shipped scenario of each built-in mechanism type that has a solver (its first, by name)."""
    from solver import mechanisms
    out = []
    for name in mechanisms.names():
        t = mechanisms.mechanism_type(name)
        d = getattr(t, "scenarios_dir", None)
        first = sorted(Path(d).glob("*.toml"))[:1] if d and t.runner is not None else []
        out += first
    return out


def units_cached(scenario: Path) -> bool:
    """Whether the numba cache this process uses (NUMBA_CACHE_DIR) holds every kernel unit the scenario's type lists,
    as solver.warmup.compile_kernels checks (False for a type that lists none: only a run can tell)."""
    from solver.scenario import load_model
    from solver.warmup import _cached, _type_units
    units, _ = _type_units(load_model(scenario))
    return bool(units) and all(_cached(d, s) for _, d, s in units)


def _source_size(scenario: Path) -> int:
    """Bytes of Python in the scenario's type package: a rough measure of how long its kernels take to compile."""
    from solver.scenario import load_model
    from solver import mechanisms
    pkg = Path(mechanisms.__file__).parent / getattr(load_model(scenario), "mechanism_type", mechanisms.DEFAULT_TYPE)
    return sum(f.stat().st_size for f in pkg.glob("*.py"))


def warm_types(cache: Path, parallel: int = 2):
    """A two-frame run of the scenario of every type whose kernels `cache` lacks (this process's NUMBA_CACHE_DIR),
    `parallel` at a time, the largest first and the next as soon as any ends: each type's kernels compiled once, none
    run again when the cache is warm."""
    env = env_with_cache(cache)
    todo = sorted((p for p in type_scenarios() if not units_cached(p)), key=_source_size, reverse=True)
    running: list[subprocess.Popen] = []
    deadline = time.monotonic() + 1800
    while todo or running:
        while todo and len(running) < parallel:
            running.append(subprocess.Popen([sys.executable, "-c", WARM_CODE, str(todo.pop(0))], cwd=ROOT, env=env,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.1)
        running = [r for r in running if r.poll() is None]
        if time.monotonic() > deadline:
            for r in running:
                r.kill()
            break
