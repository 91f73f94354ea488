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
    assert [i.name for i in items] == ["d", "e", "c", "f", "a", "b"]


def test_loadscope_keeps_that_order():
    """xdist's own reorder (by number of tests per module) is turned off for loadscope only."""
    for dist, reorder in (("loadscope", False), ("load", True)):
        config = SimpleNamespace(option=SimpleNamespace(dist=dist, loadscopereorder=True))
        conftest.pytest_xdist_setupnodes(config, [])
        assert config.option.loadscopereorder is reorder
