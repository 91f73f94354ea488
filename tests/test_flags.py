"""Flags and sizes refused with one line naming the flag or key, nothing written: --at (finite, inside the source run,
only with --from), --t-end within the scenario's limit, craft and part masses and inertias physically sized."""
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.cli import main
from solver.scenario import ScenarioError, load_model

ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "resources" / "scenarios" / "expert_existing.toml"
PERIPHERAL = ROOT / "resources" / "peripheral" / "scenarios" / "central_impact_10t.toml"
SOURCE = ROOT / "sample_runs" / "synthetic_approach.h5"   # a run with /time (its --at range)


def run(capsys, *args):
    """`dockmnemo run ARGS` in this process (app.cli.main, as the command calls it): its exit status and stderr."""
    capsys.readouterr()
    status = main(["run", *map(str, args)])
    return SimpleNamespace(returncode=status, stderr=capsys.readouterr().err)


@pytest.mark.parametrize("flags, words", [
    (["--t-end", "1e9"], "--t-end: 1e+09 s is beyond the longest run, 10000 s"),
    (["--t-end", "10000.5"], "--t-end: 10000.5 s is beyond the longest run"),
    (["--at", "2"], "--at: needs --from"),
    (["--from", SOURCE, "--at", "nan"], "--at: nan s is not a time of the run"),
    (["--from", SOURCE, "--at", "inf"], "--at: inf s is not a time of the run"),
    (["--from", SOURCE, "--at", "-5"], "--at: -5 s is not a time of the run"),
    (["--from", SOURCE, "--at", "1e9"], "--at: 1e+09 s is not a time of the run"),
])
def test_bad_flags_exit_2_naming_the_flag_and_write_nothing(tmp_path, capsys, flags, words):
    """Each refused at once (old main: --t-end 1e9 ran, --at 1e9 / nan / -5 branched from the last or first frame,
    --at without --from was ignored)."""
    out = tmp_path / "o.h5"
    r = run(capsys, EXPERT, "-o", out, *flags)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("dockmnemo: error: ") and words in line, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_t_end_limit_holds_in_the_solver_too(tmp_path):
    """run_scenario (the app's worker, campaigns) refuses it as well, for both types."""
    from solver.simulate import run_scenario
    for scen in (EXPERT, PERIPHERAL):
        with pytest.raises(ScenarioError, match=r"t_end: 1e\+06 s is beyond the longest run, 10000 s"):
            run_scenario(scen, tmp_path / "x.h5", t_end=1e6)
    assert list(tmp_path.iterdir()) == []


def _edited(tmp_path, src, old, new, name="s.toml"):
    text = src.read_text()
    assert re.search(old, text, re.M), old
    p = tmp_path / name
    p.write_text(re.sub(old, new, text, count=1, flags=re.M))
    return p


@pytest.mark.parametrize("scenario, mech", [(EXPERT, None), (PERIPHERAL, "peripheral_idss.toml")])
@pytest.mark.parametrize("old, new, words", [
    (r"^mass = [0-9.]+", "mass = 1e-300", "mass: 1e-300 is outside the allowed range [1, 1e+07]"),
    (r"^mass = [0-9.]+", "mass = 0.5", "mass: 0.5 is outside the allowed range [1, 1e+07]"),
    (r"^inertia = \[\[([0-9.e]+), 0.0, 0.0\]", r"inertia = [[nan, 0.0, 0.0]", "inertia: must be finite"),
    (r"^inertia = \[\[([0-9.e]+), 0.0, 0.0\], \[0.0, ([0-9.e]+), 0.0\], \[0.0, 0.0, ([0-9.e]+)\]\]",
     "inertia = [[1e-9, 0.0, 0.0], [0.0, 1e-9, 0.0], [0.0, 0.0, 1e-9]]", "inertia: principal moments 1e-09"),
])
def test_craft_mass_and_inertia_physically_sized(tmp_path, capsys, scenario, mech, old, new, words):
    """Both mechanism types, one check (solver/scenario_schema.py); a NaN inertia gives only the clean message
    (old main: 1e-300 kg accepted, NaN printed a numpy RuntimeWarning first)."""
    if mech:   # the peripheral scenario names its mechanism file relative to itself
        (tmp_path / "scen").mkdir()
        (tmp_path / mech).write_text((scenario.parent.parent / mech).read_text())
        p = _edited(tmp_path / "scen", scenario, old, new)
    else:
        p = _edited(tmp_path, scenario, old, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # any numpy warning fails the test
        with pytest.raises(ScenarioError) as e:
            load_model(p)
    assert words in str(e.value) and str(e.value).startswith(str(p))
    r = run(capsys, p, "-o", tmp_path / "o.h5")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"dockmnemo: error: {e.value}"], r.stderr
    assert not (tmp_path / "o.h5").exists()


def test_part_masses_and_inertias_have_a_physical_floor(tmp_path):
    """A mechanism part of 1e-300 kg or 1e-300 kg*m^2 is refused, for every type (schema.PHYSICAL_FLOOR)."""
    from solver import schema
    for mtype in schema.MECHANISM_TYPES:
        for p in schema.params("mechanism", mtype):
            if p.unit in schema.PHYSICAL_FLOOR and p.kind == "number":
                assert p.lo >= schema.PHYSICAL_FLOOR[p.unit], (mtype, p.key, p.lo)
    mech = tmp_path / "m.toml"
    mech.write_text(re.sub(r"^(\[probe\][^\[]*?)^mass = [0-9.]+", r"\1mass = 1e-300",
                           (ROOT / "resources" / "mechanisms" / "existing.toml").read_text(), count=1,
                           flags=re.M | re.S))
    assert "mass = 1e-300" in mech.read_text()
    scen = _edited(tmp_path, EXPERT, r'^mechanism = "existing"', 'mechanism = "m.toml"')
    with pytest.raises(ScenarioError, match=r"mass: 1e-300 is outside the allowed range \[0.001, "):
        load_model(scen)
