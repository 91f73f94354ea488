"""The kernels' numba cache is chosen per version of the solver's sources (a stale kernel cannot be served)."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from solver import kernel_cache

ROOT = Path(__file__).resolve().parent.parent
SHOW = "import os, solver, numba; print(numba.config.CACHE_DIR); print(os.environ['NUMBA_CACHE_DIR'])"


def _cache_dir_of_new_process(env_dir: str) -> list[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=env_dir, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", SHOW], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_a_process_caches_under_its_solver_versions_folder(tmp_path):
    want = str(tmp_path / f"src-{kernel_cache.sources_hash()}")
    assert _cache_dir_of_new_process(str(tmp_path)) == [want, want]
    # a folder of another version (inherited from a parent process of another checkout) stands for its parent
    assert _cache_dir_of_new_process(str(tmp_path / "src-0123456789abcdef")) == [want, want]


def test_the_hash_follows_every_source_file_and_nothing_else(tmp_path):
    copy = tmp_path / "solver"
    shutil.copytree(kernel_cache.SOLVER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    same = kernel_cache.sources_hash(copy)
    assert same == kernel_cache.sources_hash()                      # the checkout's path is not part of it
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.nbi").write_bytes(b"cache")
    assert kernel_cache.sources_hash(copy) == same                  # cache files are not sources
    callee = copy / "vec3.py"
    callee.write_text(callee.read_text() + "\n# a callee changed, its callers' files not\n")
    assert kernel_cache.sources_hash(copy) != same


def test_other_versions_unused_for_a_month_are_removed(tmp_path):
    mine, recent, old = (tmp_path / f"src-{n}" for n in ("a" * 16, "b" * 16, "c" * 16))
    for d in (recent, old):
        (d / "solver_1").mkdir(parents=True)
    month_ago = time.time() - (kernel_cache.UNUSED_DAYS + 1) * 86400
    os.utime(old, (month_ago, month_ago))
    kernel_cache._prune(mine)
    assert mine.is_dir() and recent.is_dir() and not old.exists()
