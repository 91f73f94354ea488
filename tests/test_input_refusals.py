"""A key or table the loader never reads (a typo) in a scenario, its mechanism or its geometry, or an unreadable file,
is refused: `dockmnemo run` exits 2 with one line naming the file, the key and the nearest key it reads, and writes
nothing; `dockmnemo campaign` and the scenario dialog say the same."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import main
from solver import scenario
from tests.test_solver_helpers import ROOT, SCEN

MECH = ROOT / "resources" / "mechanisms" / "existing.toml"
GEO = ROOT / "resources" / "geometry" / "probe_cone.toml"


def _edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def _inputs(tmp, monkeypatch, target: str, old: str, new: str, base="lateral_miss_7t.toml"):
    """Scenario `base` with copies of its mechanism and geometry in tmp, `old` replaced by `new` in the `target`
    file; returns (scenario path, path of the edited file)."""
    geo = tmp / "geometry"
    geo.mkdir()
    texts = {"scenario": _edited((SCEN / base).read_text(), 'mechanism = "existing"',
                                 'mechanism = "existing.mechanism.toml"'),
             "mechanism": MECH.read_text(), "geometry": GEO.read_text()}
    texts[target] = _edited(texts[target], old, new)
    paths = {"scenario": tmp / base, "mechanism": tmp / "existing.mechanism.toml", "geometry": geo / "probe_cone.toml"}
    for k, p in paths.items():
        p.write_text(texts[k])
    monkeypatch.setattr(scenario, "GEOMETRY", geo)     # where the mechanism's `geometry = "probe_cone"` is looked up
    return paths["scenario"], paths[target]


def _refused(capsys, tmp, args, path, key, problem):
    """`dockmnemo run` exits 2, prints one line `path: key: problem...`, and creates no run file."""
    out = tmp / "out" / "run.h5"
    assert main(["run", *map(str, args), "-o", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"dockmnemo: error: {path}: {key}: {problem}"), lines[0]
    assert not out.exists() and not out.parent.exists()


@pytest.mark.parametrize("target,old,new,key,problem", [
    ("scenario", "lateral_miss = ", "lateral_mis = ", "initial.lateral_mis", "unknown key (did you mean lateral_miss?)"),
    ("scenario", "closing_speed = ", "closing_sped = ", "initial.closing_speed",
     "missing (is closing_sped a misspelling of it?)"),                            # a required key misspelt
    ("scenario", "comment = ", "coment = ", "coment", "unknown key (did you mean comment?)"),
    ("scenario", "[solver]", "[solvr]\nstep = 1.0e-3\n\n[solver]", "solvr", "unknown section (did you mean solver?)"),
    ("scenario", "[initial]", "[initial]\nhead_start = 0.1", "initial.head_start",
     "unknown key (did you mean head_start_x?)"),
    ("mechanism", "rod_mass = 1.5", "rod_mass = 1.5\nspring_base_axial_ofset = 0.06", "lateral_damper.spring_base_axial_ofset",
     "unknown key (did you mean spring_base_axial_offset?)"),                       # an optional key misspelt
    ("mechanism", "crank_limit_deg = ", "crank_limt_deg = ", "lateral_damper.crank_limit_deg",
     "missing (is crank_limt_deg a misspelling of it?)"),
    ("mechanism", "[hooks]", "[hook]\nclose_gap = 1.0e-3\n\n[hooks]", "hook", "unknown section (did you mean hooks?)"),
    ("mechanism", "screw_friction = 0.05", "screw_friction = 0.05\nfirst_brake_torque_in = 0.6",
     "axial_damper.first_brake_torque_in", "not used: no first friction brake"),
    ("mechanism", "[hooks]", "[movable_limiter]\nmass = 8.0\n\n[hooks]",
     "movable_limiter", "not used: only variant movable_limiter has a movable limiter"),
    ("geometry", "flange_radius = ", "flange_radiu = ", "receiving_cone.flange_radius",
     "missing (is flange_radiu a misspelling of it?)"),                            # read by the contact library
    ("geometry", "[contact.ring]", "[contact.rings]\nk = 1.0\n\n[contact.ring]", "contact.rings",
     "unknown section (did you mean ring?)"),
])
def test_unknown_key_refused_naming_file_key_and_nearest(tmp_path, monkeypatch, capsys, target, old, new, key,
                                                        problem):
    sc, path = _inputs(tmp_path, monkeypatch, target, old, new)
    _refused(capsys, tmp_path, [sc], path, key, problem)


def test_fixed_craft_refuses_its_mass(tmp_path, monkeypatch, capsys):
    sc, path = _inputs(tmp_path, monkeypatch, "scenario", "fixed = true", "fixed = true\nmass = 4.0e5",
                       base="stand_fixed_base_7t.toml")
    _refused(capsys, tmp_path, [sc], path, "passive_craft.mass", "not used: the craft is fixed")


@pytest.mark.parametrize("target", ["scenario", "mechanism", "geometry"])
def test_unreadable_files_refused(tmp_path, monkeypatch, capsys, target):
    sc, path = _inputs(tmp_path, monkeypatch, target, "\n", "\n# caf\n")
    good = path.read_bytes()
    path.write_bytes(good.replace(b"# caf\n", b"# caf\xe9\n", 1))     # Latin-1: one byte 0xe9, not UTF-8
    _refused(capsys, tmp_path, [sc], path, "/", f"not UTF-8 text (byte 0xe9 at offset {good.index(b'# caf') + 5})")
    path.write_bytes(good.replace(b"# caf\n", b"oops =\n", 1))
    _refused(capsys, tmp_path, [sc], path, "/", "not valid TOML (Invalid value (at line 2, column 7))")


def test_directory_is_not_a_scenario(tmp_path, capsys):
    _refused(capsys, tmp_path, [tmp_path], tmp_path, "/", "is a directory, not a scenario file")


def test_run_command_refuses_a_typo(tmp_path):
    """As a user runs it: the command in a shell."""
    sc = tmp_path / "typo.toml"
    sc.write_text(_edited((SCEN / "lateral_miss_7t.toml").read_text(), "lateral_miss = ", "lateral_mis = "))
    p = subprocess.run([sys.executable, "-m", "app", "run", str(sc), "-o", str(tmp_path / "x.h5")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"dockmnemo: error: {sc}: initial.lateral_mis: unknown key (did you mean lateral_miss?)"
    assert not (tmp_path / "x.h5").exists()


def test_campaign_refuses_a_typo_in_its_base_scenario_and_in_itself(tmp_path, capsys):
    camp = tmp_path / "demo.toml"
    text = (ROOT / "resources" / "campaigns" / "demo_small.toml").read_text()
    (tmp_path / "nominal_existing.toml").write_text(    # found next to the campaign file first
        _edited((SCEN / "nominal_existing.toml").read_text(), "[initial]", "[initial]\nhead_start = 0.05"))
    camp.write_text(text)
    out = tmp_path / "camp"
    assert main(["campaign", str(camp), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "initial.head_start: unknown key (did you mean head_start_x?)" in err and not out.exists()
    (tmp_path / "nominal_existing.toml").unlink()
    camp.write_text(_edited(text, "keep = ", "kep = "))
    assert main(["campaign", str(camp), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"dockmnemo: error: {camp}: kep: unknown key (did you mean keep?)"
    assert not out.exists()


@pytest.mark.gui
def test_scenario_dialog_shows_the_refusal_and_starts_nothing(qtbot, tmp_path):
    from app.scenario_dialog import ScenarioDialog
    sc = tmp_path / "typo.toml"
    sc.write_text(_edited((SCEN / "lateral_miss_7t.toml").read_text(), "lateral_miss = ", "lateral_mis = "))
    dlg = ScenarioDialog(scenario_path=sc)
    qtbot.addWidget(dlg)
    assert "initial.lateral_mis: unknown key (did you mean lateral_miss?)" in dlg.message.text()
    assert not dlg.run_button.isEnabled()
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"# caf\xe9\n" + (SCEN / "lateral_miss_7t.toml").read_bytes())
    dlg.load_scenario(bad)
    assert dlg.validate() is False and not dlg.run_button.isEnabled()
    assert f"{bad}: /: not UTF-8 text (byte 0xe9 at offset 5)" in dlg.message.text()
