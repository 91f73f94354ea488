"""The suite's own settings (tests/conftest.py): `-n auto --dist loadscope` gets the costliest modules first, so no
long module is left to run alone on one core at the end."""
from pathlib import Path
from types import SimpleNamespace

from tests import conftest

TESTS = Path(__file__).resolve().parent


def test_every_module_the_cost_table_names_exists():
    """A renamed or removed module would drop out of the order silently."""
    missing = [m for m in conftest.MODULE_CPU_S if not (TESTS / f"{m}.py").is_file()]
    assert missing == []


def test_modules_are_collected_costliest_first_each_in_its_own_order():
    def item(module, name):
        return SimpleNamespace(path=TESTS / f"{module}.py", name=name, fixturenames=(),
                               get_closest_marker=lambda _: None)
    items = [item("test_cli", "a"), item("test_cli", "b"), item("test_final_stage", "c"),
             item("test_solver_compile", "d"), item("test_solver_compile", "e"), item("test_figure", "f")]
    conftest.pytest_collection_modifyitems(None, items)
    cost = conftest.MODULE_CPU_S
    assert cost["test_final_stage"] > cost["test_figure"] > cost["test_solver_compile"] and "test_cli" not in cost
    assert [i.name for i in items] == ["c", "f", "d", "e", "a", "b"]


def test_loadscope_keeps_that_order():
    """xdist's own reorder (by number of tests per module) is turned off for loadscope only."""
    for dist, reorder in (("loadscope", False), ("load", True)):
        config = SimpleNamespace(option=SimpleNamespace(dist=dist, loadscopereorder=True))
        conftest.pytest_xdist_setupnodes(config, [])
        assert config.option.loadscopereorder is reorder


def _index(path: Path, overloads: dict, stamp=(1.0, 10), version="0.x"):
    import pickle
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, overloads)))
    for name in overloads.values():
        path.with_name(name).write_bytes(f"code of {path.stem} {name} in {path.parent.parent.name}".encode())


def _read_index(path: Path):
    import pickle
    with open(path, "rb") as f:
        return pickle.load(f), pickle.loads(f.read())


def test_the_cold_runs_cache_merges_into_the_suites_without_overwriting(tmp_path):
    """tests/cold_compile.merge_cache: a function only the cold cache holds is copied; one both hold keeps the
    suite's code and gains the cold run's other signatures under free file numbers; a stale one is left alone."""
    from tests.cold_compile import merge_cache
    src, dst = tmp_path / "cold", tmp_path / "suite"
    _index(src / "core_1" / "vec3.col-76.py311.nbi",
           {"sigA": "vec3.col-76.py311.1.nbc", "sigB": "vec3.col-76.py311.2.nbc"})
    _index(src / "probe_cone_2" / "dynamics.evaluate-584.py311.nbi", {"sigE": "dynamics.evaluate-584.py311.1.nbc"})
    _index(src / "core_1" / "vec3.sub-14.py311.nbi", {"sigS": "vec3.sub-14.py311.1.nbc"}, stamp=(2.0, 10))
    _index(dst / "core_1" / "vec3.col-76.py311.nbi",
           {"sigA": "vec3.col-76.py311.1.nbc", "sigC": "vec3.col-76.py311.2.nbc"})
    _index(dst / "core_1" / "vec3.sub-14.py311.nbi", {"sigT": "vec3.sub-14.py311.1.nbc"})
    kept = {f: f.read_bytes() for f in dst.rglob("*") if f.is_file()}
    merge_cache(src, dst)
    col = dst / "core_1" / "vec3.col-76.py311.nbi"
    version, (stamp, overloads) = _read_index(col)
    assert (version, stamp) == ("0.x", (1.0, 10))
    assert overloads == {"sigA": "vec3.col-76.py311.1.nbc", "sigC": "vec3.col-76.py311.2.nbc",
                         "sigB": "vec3.col-76.py311.3.nbc"}
    copied = col.with_name("vec3.col-76.py311.3.nbc").read_bytes()
    assert copied == b"code of vec3.col-76.py311 vec3.col-76.py311.2.nbc in cold"
    for f, b in kept.items():           # nothing the suite's cache held is overwritten (the index only gains sigB)
        assert f == col or f.read_bytes() == b, f
    assert _read_index(dst / "core_1" / "vec3.sub-14.py311.nbi")[1][1] == {"sigT": "vec3.sub-14.py311.1.nbc"}
    ev = dst / "probe_cone_2" / "dynamics.evaluate-584.py311.nbi"
    assert _read_index(ev)[1][1] == {"sigE": "dynamics.evaluate-584.py311.1.nbc"}
    assert ev.with_name("dynamics.evaluate-584.py311.1.nbc").is_file()
