"""First run from an empty numba cache: the CLI and the app say they are compiling ("k of n") before the run's
progress, each solver unit is compiled for one signature only, the next run loads everything; campaign workers
sharing a cache compile once between them."""
from __future__ import annotations

import pickle
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cold_compile import CMD, ROOT, SCEN, cold_run as _cold_run, session_cold_run
from tests.cold_compile import env_with_cache as _env

SAYS = "compiling solver kernels, first run only: "


def _cached_signatures(cache: Path, unit: str) -> int:
    """Signatures numba's cache index in `cache` holds for the function `unit` (module.function)."""
    n = 0
    for f in cache.rglob(f"{unit}-*.nbi"):
        with open(f, "rb") as fh:
            pickle.load(fh)                                  # numba version
            _stamp, overloads = pickle.loads(fh.read())
        n += len(overloads)
    return n


@pytest.fixture(scope="module")
def cold_run(tmp_path_factory):
    """`dockmnemo run` on an empty numba cache: the session start's (a fresh clone) or this module's own, made once:
    (cache, finished process)."""
    return session_cold_run() or _cold_run(tmp_path_factory.mktemp("cold"))


def _cache_without_step_loop(cold_run, tmp_path, unit="_steps") -> Path:
    """A copy of the cold run's cache lacking the probe-cone `unit` (the step loop `_steps`, the last): the next run
    compiles that unit."""
    cache = tmp_path / "numba_cache"
    shutil.copytree(cold_run[0], cache)
    for f in [*cache.rglob(f"dynamics.{unit}-*.nbi"), *cache.rglob(f"dynamics.{unit}-*.nbc")]:
        f.unlink()
    return cache


@pytest.mark.slow
def test_first_run_says_it_is_compiling_then_loads_from_the_cache(cold_run, tmp_path):
    cache, p = cold_run
    assert p.returncode == 0, p.stderr
    said = [ln for ln in p.stderr.splitlines() if ln.startswith(SAYS)]
    assert said, p.stderr
    n = int(said[0].split()[-1])
    assert said == [f"{SAYS}{k} of {n}" for k in range(1, n + 1)], said
    assert p.stderr.index(said[-1]) < p.stderr.index("run central_impact_20t.toml [")   # then the run's bar
    # one compiled specialization per unit (a second one, e.g. for a literal argument, would double its time)
    for unit in ("dynamics._steps", "dynamics.evaluate", "pairset.pairs_step",
                 "pairset._pair_loop", "kernels.pair_eval", "dynamics.record",
                 "kernels.dichotomy", "kernels.set_char", "kernels.ring_point", "kernels.generator"):
        assert _cached_signatures(cache, unit) == 1, unit
    # warm: nothing compiled, nothing said
    p = subprocess.run([*CMD, "-o", str(tmp_path / "warm.h5")], capture_output=True, text=True, env=_env(cache),
                       cwd=ROOT, timeout=300)
    assert p.returncode == 0 and SAYS not in p.stderr, p.stderr


@pytest.mark.gui
@pytest.mark.slow
def test_app_run_shows_compiling_then_its_eta(cold_run, qtbot, tmp_path, monkeypatch, artifacts):
    """Run → New run… while a unit is missing from the cache: the status bar says "compiling … k of n", then t and
    the ETA. The missing unit is `trig_table`, the one that compiles quickest (about 0.5 s; the step loop 4 s)."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    from solver.scenario import load_model
    from solver.warmup import kernel_units
    k = [name for name, _, _ in kernel_units(load_model(SCEN))].index("trig_table") + 1
    cache = _cache_without_step_loop(cold_run, tmp_path, "trig_table")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))   # the worker process inherits it
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    texts = []
    w.runner.compiling.connect(lambda k, n: texts.append(w.run_label.text()))
    w.start_run(SCEN, tmp_path / "run.h5", 20.0)   # (long enough to show its ETA on a quiet machine)
    qtbot.waitUntil(lambda: bool(texts) or not w.runner.running, timeout=120000)
    n = int(cold_run[1].stderr.split(SAYS)[1].split()[2])       # the units of a cold compile
    assert texts == [f"{SAYS}{k} of {n}"], (texts, w.run_label.text(), w.runner.stderr)   # only trig_table
    qtbot.wait(200)
    assert w.grab_image().save(str(artifacts / "run_compiling.png"))
    qtbot.waitUntil(lambda: "ETA" in w.run_label.text() or not w.runner.running, timeout=900000)
    assert "ETA" in w.run_label.text(), w.run_label.text()
    w.runner.cancel()                                            # (the rest of the run shows nothing more)
    qtbot.waitUntil(lambda: not w.runner.running, timeout=120000)


@pytest.mark.slow
def test_campaign_workers_sharing_a_cache_compile_once(cold_run, tmp_path):
    """2 fresh local workers sharing `cache_dir`, which lacks a unit (`trig_table`, the quickest to compile): one
    worker compiles it, the other waits and loads."""
    from solver.campaign import read_summary, run_campaign
    f = tmp_path / "c.toml"
    f.write_text(f'name = "share"\nbase_scenario = "{SCEN.as_posix()}"\nt_end = 0.05\nsampling = "grid"\ncount = 4\n'
                 'keep = "summary"\n\n[[parameter]]\nname = "closing_speed"\nkey = "initial.closing_speed"\n'
                 'values = [0.1, 0.12, 0.14, 0.16]\n')
    run_campaign(f, tmp_path / "dir", workers=2, cache_dir=_cache_without_step_loop(cold_run, tmp_path, "trig_table"))
    s = read_summary(tmp_path / "dir")
    assert list(s.status) == ["ok"] * 4
    assert len(set(s.worker)) == 2                      # both workers ran something
    assert sum(1 for j in s.jit_compiled if j > 0) == 1, list(zip(s.worker, s.jit_compiled))
    assert any((tmp_path / "numba_cache").rglob("dynamics.trig_table-*.nbi"))      # compiled back into the cache


def _linked(cache: Path, package: str, unit: str) -> set[str]:
    """The functions (module.name) whose machine code the cached `unit` (module.function) of `package` holds: numba
    links a jitted callee's code into its caller's, an address call links none."""
    names = set()
    for f in cache.glob(f"**/{package}_*/{unit}-*.nbc"):
        b = f.read_bytes()
        for m in re.finditer(rb"_ZN(?=\d)", b):
            i, parts = m.end(), []
            while i < len(b) and b[i:i + 1].isdigit():
                j = i
                while b[j:j + 1].isdigit():
                    j += 1
                n = int(b[i:j])
                parts.append(b[j:j + n].decode("ascii", "replace"))
                i = j + n
            names.add(".".join(parts))
    return names


def test_evaluate_links_none_of_the_pair_set(cold_run):
    """`evaluate` calls pairs_step through its address: its compiled code holds none of the contact chain, so a second
    process compiles that chain at the same time (fails where `evaluate` links the pair set's code, as the step loop,
    which calls `evaluate` as a function, holds evaluate's, and pairs_step the chain's)."""
    cache, p = cold_run
    assert p.returncode == 0, p.stderr
    evaluate = "solver.mechanisms.probe_cone.dynamics.evaluate"
    linked = _linked(cache, "probe_cone", "dynamics.evaluate")
    assert evaluate in linked and "solver.mechanisms.probe_cone.dynamics.cam_hold" in linked, linked
    assert sorted(f for f in linked if "solver.contact." in f) == []
    assert evaluate in _linked(cache, "probe_cone", "dynamics._steps")
    chain = _linked(cache, "contact", "pairset.pairs_step")
    assert {"solver.contact.pairset._pair_loop", "solver.contact.kernels.pair_eval"} <= chain, chain


def test_the_session_warm_up_skips_every_type_whose_units_the_cache_holds():
    """tests/conftest.py's warm-up checks the cache first, as compile_kernels does: after it, every type that lists
    kernel units finds them all cached, so a warm session starts no two-frame run of those types."""
    from solver.scenario import load_model
    from solver.warmup import kernel_units
    from tests.cold_compile import type_scenarios, units_cached
    listed = [p for p in type_scenarios() if kernel_units(load_model(p))]
    assert any("berthing" in p.parts for p in listed) and any("peripheral" in p.parts for p in listed)
    assert [p.name for p in listed if not units_cached(p)] == []
