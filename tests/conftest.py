import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"
KERNEL_CACHE = ROOT / ".numba_cache"   # the suite's numba cache (the workers inherit NUMBA_CACHE_DIR)


WORKER_SCREEN = (1920, 1200)          # each worker's own X screen, as the README's xvfb-run gives the controller
_worker_display = None


def _own_display(config):
    """An xdist worker under an X display gets an X server of its own (Xvfb, by pyvirtualdisplay): windows of
    different workers then cannot take each other's keyboard focus (a window waiting to become active timed out)."""
    global _worker_display
    import shutil
    if not os.environ.get("DISPLAY") or not shutil.which("Xvfb"):
        return
    from pyvirtualdisplay import Display
    _worker_display = Display(backend="xvfb", size=WORKER_SCREEN, color_depth=24)
    _worker_display.start()              # sets DISPLAY for this worker and the processes it starts


def pytest_unconfigure(config):
    """A worker's X server stopped; at the session's end the cold run's folder (its cache merged, its checks done by
    the workers) removed: one was left in the temporary folder by every run on a fresh clone."""
    if _worker_display is not None:
        _worker_display.stop()
    if not hasattr(config, "workerinput"):
        import shutil
        from tests.cold_compile import COLD_ENV
        folder = os.environ.get(COLD_ENV, "")
        if Path(folder).name.startswith("dockmnemo-cold-"):
            shutil.rmtree(folder, ignore_errors=True)


def pytest_configure(config):
    """Before any worker starts: the built-in types' kernels compiled once into the suite's cache, two processes at a
    time (on a fresh clone the probe-cone's is the cold run tests/test_solver_compile.py checks, merged in after), so
    no worker compiles or waits; a type whose listed units the cache holds already is not run again."""
    if hasattr(config, "workerinput"):
        _own_display(config)
        return
    if "NUMBA_CACHE_DIR" in os.environ or config.option.collectonly:
        return
    from tests.cold_compile import COLD_ENV, compile_phase
    os.environ["NUMBA_CACHE_DIR"] = str(KERNEL_CACHE)
    folder = None if KERNEL_CACHE.is_dir() else Path(tempfile.mkdtemp(prefix="dockmnemo-cold-"))
    KERNEL_CACHE.mkdir(exist_ok=True)
    cold = compile_phase(KERNEL_CACHE, folder)
    if cold is not None and cold.returncode == 0:
        os.environ[COLD_ENV] = str(folder)


def pytest_report_header(config):
    """The session's compile phase, job by job (wall from its start, and CPU-s), when it compiled anything."""
    from tests.cold_compile import PHASE_LOG
    if PHASE_LOG:
        return ["compile phase: " + ", ".join(f"{job} {t0:.0f}-{t1:.0f} s ({cpu:.0f} CPU-s)"
                                              for job, t0, t1, cpu in PHASE_LOG)]


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


# CPU-s of the costliest modules on a fresh clone (the suite's profile, -n 2 on a fresh clone, per module; the rest
# take less): `-n auto --dist loadscope` hands the modules out in this order, the longest first, so none is left to run
# alone at the end. Keep it roughly right when a module gets much cheaper or dearer (tests/test_suite_order.py)
MODULE_CPU_S = {
    "test_calibrate_truths": 37, "test_final_stage": 27, "test_campaign_peripheral": 26, "test_measured_truth": 25,
    "test_run_crash_safety": 24, "test_peripheral_physics": 23, "test_interrupts": 23, "test_export_interrupt": 21,
    "test_contact_peripheral": 20, "test_campaign": 18, "test_disk_full": 18, "test_peripheral_gui": 17,
    "test_layout_screens": 16, "test_runfile_bad_input": 15, "test_run_from_app": 15, "test_calibrate": 15, "test_figure": 14,
    "test_layout_window": 13, "test_ancf_cable": 13, "test_runfile_consistency": 11, "test_plots_pane": 11,
    "test_rods_appendage": 11, "test_clip_export": 10, "test_engine_core_arm": 10,
    "test_solver_compile": 10, "test_measured_gui": 10, "test_viewer_diagram": 10, "test_envelope_map": 9,
    "test_snare": 9, "test_live_refresh": 8, "test_peripheral_interface": 8, "test_viewer_panes": 8,
    "test_friction_stick": 8, "test_contact_pairset": 7, "test_layout": 7, "test_solver_speed": 7, "test_hexapod": 6,
    "test_run_cli_and_state": 5, "test_contact_statistics": 5, "test_clip_dialogs": 5, "test_contact_dichotomy": 5,
    "test_peripheral_type": 5, "test_berthing_operator_gui": 4, "test_events_gui": 4,
}


def _module_cost(item) -> float:
    return MODULE_CPU_S.get(item.path.stem, 0.0)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """`--dist loadscope` hands modules out in collection order, not by their number of tests (xdist's default
    reorder puts the few long tests of a module at the end, where one core runs them alone)."""
    if getattr(config.option, "dist", "no") == "loadscope":
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)   # (before --ff / --nf reorder, so theirs wins)
def pytest_collection_modifyitems(config, items):
    """Every test that drives Qt (its fixtures include qtbot) is a `gui` test, so `-m "not gui"` runs the headless ones.
    Modules are collected the costliest first (MODULE_CPU_S; a stable sort keeps each module's own order)."""
    for item in items:
        if "qtbot" in getattr(item, "fixturenames", ()) and item.get_closest_marker("gui") is None:
            item.add_marker(pytest.mark.gui)
    items.sort(key=_module_cost, reverse=True)
