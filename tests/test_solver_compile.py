"""First run from an empty numba cache: the CLI says it is compiling ("k of n") before the run's progress, the run
then compiles nothing more, the next run loads everything; campaign workers sharing a cache compile once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"

# in a fresh process on `cache`: compile the units (progress lines), then count numba compiles during a short run
_PROBE = """
import sys
import numba.core.event as ev
from solver.scenario import load_model
from solver.simulate import run_scenario
from solver.warmup import compile_kernels
m = load_model(sys.argv[1])
n = compile_kernels(m, lambda k, n: print("UNIT", k, n, flush=True))
with ev.install_recorder("numba:compile") as rec:
    run_scenario(sys.argv[1], sys.argv[2], t_end=0.01)
print("COMPILED_UNITS", n, "LATER_COMPILES", sum(1 for _, e in rec.buffer if e.is_start), flush=True)
"""


def _env(cache: Path) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))


@pytest.mark.slow
def test_first_run_says_it_is_compiling_then_loads_from_the_cache(tmp_path):
    cache = tmp_path / "numba_cache"
    out = tmp_path / "run.h5"
    p = subprocess.run([sys.executable, "-m", "app", "run", str(SCEN), "--t-end", "0.02", "-o", str(out),
                        "--progress-lines"], capture_output=True, text=True, env=_env(cache), cwd=ROOT, timeout=900)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    comp = [ln.split() for ln in lines if ln.startswith("COMPILING")]
    assert comp, p.stdout
    n = int(comp[0][2])
    assert [int(c[1]) for c in comp] == list(range(1, n + 1)) and all(int(c[2]) == n for c in comp)
    kinds = [ln.split()[0] for ln in lines]
    assert kinds.index("PROGRESS") > kinds.index("COMPILING") and "COMPILING" not in kinds[kinds.index("PROGRESS"):]
    # the terminal (no --progress-lines) says the same on stderr; a warm cache: nothing compiled, nothing said
    p = subprocess.run([sys.executable, "-m", "app", "run", str(SCEN), "--t-end", "0.02", "-o", str(out)],
                       capture_output=True, text=True, env=_env(cache), cwd=ROOT, timeout=300)
    assert p.returncode == 0 and "compiling solver kernels" not in p.stderr, p.stderr
    # the units compiled bottom-up are exactly what the run calls: after them a run compiles nothing
    probe = subprocess.run([sys.executable, "-c", _PROBE, str(SCEN), str(tmp_path / "probe.h5")], capture_output=True,
                           text=True, env=_env(tmp_path / "other_cache"), cwd=ROOT, timeout=900)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split()[-4:] == ["COMPILED_UNITS", str(n), "LATER_COMPILES", "0"], probe.stdout


@pytest.mark.slow
def test_terminal_says_compiling_k_of_n(tmp_path):
    """Without --progress-lines the message is the user's line on stderr, before the run's bar."""
    cache = tmp_path / "numba_cache"
    p = subprocess.run([sys.executable, "-m", "app", "run", str(SCEN), "--t-end", "0.02", "-o",
                        str(tmp_path / "run.h5")], capture_output=True, text=True, env=_env(cache), cwd=ROOT,
                       timeout=900)
    assert p.returncode == 0, p.stderr
    said = [ln for ln in p.stderr.splitlines() if ln.startswith("compiling solver kernels, first run only: ")]
    assert said and said[0].endswith(f"1 of {said[0].split()[-1]}"), p.stderr
    assert p.stderr.index(said[-1]) < p.stderr.index("run central_impact_20t.toml [")


@pytest.mark.slow
def test_campaign_workers_sharing_a_cache_compile_once(tmp_path):
    """2 fresh local workers with `cache_dir` an empty directory: one worker compiles, the other waits and loads."""
    from solver.campaign import read_summary, run_campaign
    f = tmp_path / "c.toml"
    f.write_text(f'name = "share"\nbase_scenario = "{SCEN.as_posix()}"\nt_end = 0.05\nsampling = "grid"\ncount = 4\n'
                 'keep = "summary"\n\n[[parameter]]\nname = "closing_speed"\nkey = "initial.closing_speed"\n'
                 'values = [0.1, 0.12, 0.14, 0.16]\n')
    run_campaign(f, tmp_path / "dir", workers=2, cache_dir=tmp_path / "shared_cache")
    s = read_summary(tmp_path / "dir")
    assert list(s.status) == ["ok"] * 4
    assert len(set(s.worker)) == 2                      # both workers ran something
    assert sum(1 for j in s.jit_compiled if j > 0) == 1, list(zip(s.worker, s.jit_compiled))
    assert any((tmp_path / "shared_cache").rglob("*.nbi"))
