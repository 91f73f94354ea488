import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"
KERNEL_CACHE = ROOT / ".numba_cache"   # the suite's numba cache (the workers inherit NUMBA_CACHE_DIR)


def pytest_configure(config):
    """Before any worker starts: the built-in types' kernels compiled once into the suite's cache (on a fresh clone
    the probe-cone's compile is the cold run tests/test_solver_compile.py checks), so no worker compiles or waits;
    a type whose listed units the cache holds already is not run again."""
    if hasattr(config, "workerinput") or "NUMBA_CACHE_DIR" in os.environ or config.option.collectonly:
        return
    from tests.cold_compile import COLD_ENV, cold_run, warm_types
    os.environ["NUMBA_CACHE_DIR"] = str(KERNEL_CACHE)
    if not KERNEL_CACHE.is_dir():
        folder = Path(tempfile.mkdtemp(prefix="dockmnemo-cold-"))
        cache, p = cold_run(folder)
        if p.returncode == 0:
            shutil.copytree(cache, KERNEL_CACHE)
            os.environ[COLD_ENV] = str(folder)
    warm_types(KERNEL_CACHE)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots and other files a person looks at after the run."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """A small synthetic run (6 s at 100 Hz) written by the real writer."""
    from tests.synthetic_run import make
    return make(tmp_path_factory.mktemp("runs") / "small.h5", duration=6.0, step=0.01)


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Keep QSettings of tests out of the user's real settings."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", os.environ.get("HOME", str(tmp_path)))


def pytest_collection_modifyitems(config, items):
    """Every test that drives Qt (its fixtures include qtbot) is a `gui` test, so `-m "not gui"` runs the headless ones."""
    for item in items:
        if "qtbot" in getattr(item, "fixturenames", ()) and item.get_closest_marker("gui") is None:
            item.add_marker(pytest.mark.gui)
