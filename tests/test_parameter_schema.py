"""The parameter schema (solver/schema.py): every key of every bundled scenario, mechanism, geometry and campaign
file is declared once; the loader refuses what it does not declare; `dockmnemo run --describe`, docs/parameters.md,
the scenario dialog and campaign tables are built from it."""
from __future__ import annotations

import re
import tomllib

import pytest

from app.cli import main
from solver import scenario
from tests.test_solver_helpers import ROOT, SCEN

RES = ROOT / "resources"
FILES = {"scenario": sorted(p for p in SCEN.glob("*.toml") if p.name != "synthetic_approach.toml"),
         "mechanism": sorted((RES / "mechanisms").glob("*.toml")), "geometry": sorted((RES / "geometry").glob("*.toml"))}


def _keys(d: dict, pre: str = ""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _keys(v, f"{pre}{k}.")
        else:
            yield pre + k


def _bundled_keys() -> set[tuple[str, str]]:
    """(file kind, dotted key) of every key in the bundled TOMLs; a mechanism's geometry_changes.x is geometry key x,
    a campaign's varied or fixed key a scenario key."""
    out = set()
    for file, paths in FILES.items():
        for p in paths:
            for k in _keys(tomllib.loads(p.read_text())):
                out.add(("geometry", k.removeprefix("geometry_changes.")) if k.startswith("geometry_changes.")
                        else (file, k))
    for p in (RES / "campaigns").glob("*.toml"):
        c = tomllib.loads(p.read_text())
        for k in [*(x["key"] for x in c.get("parameter", [])), *c.get("fixed", {})]:
            out.add(("scenario", k.split("[")[0]))
    return out


def test_describe_of_a_scenario_lists_its_mechanism_types_keys(capsys, tmp_path):
    scen = ROOT / "resources" / "peripheral" / "scenarios" / "nominal_10t.toml"
    assert main(["run", "--describe", str(scen)]) == 0
    out = capsys.readouterr().out
    assert "hexapod.neutral_height" in out and "probe.stroke_max" not in out
    assert main(["run", "--describe", str(tmp_path / "none.toml")]) == 2
    assert "none.toml: no such scenario file" in capsys.readouterr().err


def test_describe_lists_every_key_found_in_the_bundled_tomls(capsys):
    assert main(["run", "--describe"]) == 0
    out = capsys.readouterr().out
    rows = {tuple(line.split()[:2]) for line in out.splitlines()[1:]}
    keys = _bundled_keys()
    assert len(keys) > 150
    assert keys - rows == set()
    for line in out.splitlines()[1:]:          # every row: unit, range, default, group, label, doc, [source]
        assert re.search(r"\[(assumed|seed \d{3}[^\]]*)\]$", line), line


@pytest.mark.parametrize("mechanism_type", ["probe_cone", "peripheral", "rods", "snare"])
def test_units_parse_and_the_reference_doc_is_up_to_date(mechanism_type):
    from solver.schema import reference, reference_file, unit_check
    assert unit_check() == []
    assert (ROOT / reference_file(mechanism_type)).read_text() == reference(mechanism_type), \
        f"regenerate: python -m solver.schema {mechanism_type} > {reference_file(mechanism_type)}"


def _tables(d: dict, pre=""):
    """Dotted names of every table in d (and "" for the top level)."""
    yield pre.rstrip(".")
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _tables(v, f"{pre}{k}.")


def _case(file, path, table):
    return pytest.param(file, path, table, id=f"{path.name}:{table or '/'}")


@pytest.mark.parametrize("file,path,table", [
    _case(f, p, t) for f, ps in FILES.items() for p in ps for t in _tables(tomllib.loads(p.read_text()))
    if t != "geometry_changes" and (not t or re.search(rf"(?m)^\[{re.escape(t)}\]", p.read_text()))])
def test_an_undeclared_key_in_any_bundled_file_is_refused_naming_file_and_key(tmp_path, monkeypatch, file, path, table):
    """`sprng_stiffness = 1.0` added to any table of any bundled file: the loader names the file and the key, and
    the schema says the same of the parsed file."""
    from solver import schema
    geo = tmp_path / "geometry"
    geo.mkdir()
    mech = "existing.toml" if file != "mechanism" else path.name
    paths = {"scenario": tmp_path / (path.name if file == "scenario" else "lateral_miss_7t.toml"),
             "mechanism": tmp_path / "m.mechanism.toml", "geometry": geo / "probe_cone.toml"}
    texts = {"scenario": (path if file == "scenario" else SCEN / "lateral_miss_7t.toml").read_text(),
             "mechanism": (RES / "mechanisms" / mech).read_text(), "geometry": (RES / "geometry" / "probe_cone.toml").read_text()}
    texts["scenario"] = re.sub(r'(?m)^mechanism = "\w+"', 'mechanism = "m.mechanism.toml"', texts["scenario"])
    text = texts[file]
    if table:
        head = re.search(rf"(?m)^\[{re.escape(table)}\][^\n]*\n", text)
        text = text[:head.end()] + "sprng_stiffness = 1.0\n" + text[head.end():]
    else:
        text = "sprng_stiffness = 1.0\n" + text
    texts[file] = text
    for k, p in paths.items():
        p.write_text(texts[k])
    monkeypatch.setattr(scenario, "GEOMETRY", geo)
    key = f"{table}.sprng_stiffness" if table else "sprng_stiffness"
    with pytest.raises(scenario.ScenarioError) as ei:
        scenario.load_model(paths["scenario"])
    assert ei.value.path == str(paths[file]) and ei.value.key == key, str(ei.value)
    assert "unknown key" in ei.value.problem or "unknown override" in ei.value.problem, str(ei.value)
    bad = schema.undeclared(tomllib.loads(text), file)
    assert bad is not None and bad[0] == key and bad[1].startswith("unknown key")


@pytest.mark.parametrize("table,old,new,problem", [
    ("contact.ring", "k = 2.0e7", "k = -2.0e7", "-2e+07 is outside the allowed range (0, 1e+10]"),
    ("limiter", "bisection_steps = 5              # N: 2^(N+1) = 64",
     "bisection_steps = 2.5              # N: 2^(N+1) = 64", "must be a whole number, found 2.5"),
    ("docking_ring", "inner_radius = 0.55", 'inner_radius = "wide"', "must be a number, found 'wide'"),
])
def test_a_bad_value_only_the_contact_library_reads_is_refused_naming_its_key(tmp_path, monkeypatch, table, old, new,
                                                                             problem):
    """Keys only the contact library reads are checked by their schema range too (main said "cannot build the
    contact geometry" under key "/", or built a geometry from the bad value)."""
    geo = tmp_path / "geometry"
    geo.mkdir()
    text = (RES / "geometry" / "probe_cone.toml").read_text()
    assert old in text
    (geo / "probe_cone.toml").write_text(text.replace(old, new, 1))
    monkeypatch.setattr(scenario, "GEOMETRY", geo)
    with pytest.raises(scenario.ScenarioError) as ei:
        scenario.load_model(SCEN / "lateral_miss_7t.toml")
    assert ei.value.key == f"{table}.{new.split()[0]}" and problem in ei.value.problem, str(ei.value)


def test_p_vector_names_are_literal_constants():
    """Each P-vector name is a `P_NAME = index` line in solver/mechanisms/probe_cone/dynamics.py (greppable, lintable), matching P_INDEX."""
    from solver.mechanisms.probe_cone import dynamics as D
    src = (ROOT / "solver" / "mechanisms" / "probe_cone" / "dynamics.py").read_text()
    assert 'globals()["P_"' not in src
    lines = dict(re.findall(r"(?m)^(P_[A-Z0-9_]+) = (\d+)\b", src))
    for name, i in D.P_INDEX.items():
        if re.fullmatch(r"cam_[xy]([1-9]|1\d|2\d)|(ft_[kc]|sub)([1-9]|[12]\d|3[01])", name):
            continue                               # blocks: P_CAM_X0 / P_CAM_Y0, P_FT_K0 / P_FT_C0, P_SUB0 + k
        assert int(lines[f"P_{name.upper()}"]) == i, name
    assert D.NP == len(D.P_INDEX)


def test_campaign_units_and_labels_come_from_the_schema(tmp_path):
    from solver.campaign import CampaignError, load_campaign
    camp = tmp_path / "c.toml"
    base = 'name = "c"\n' + f'base_scenario = "{SCEN / "nominal_existing.toml"}"\nmechanism = "existing"\nt_end = 1.0\n' \
           'sampling = "random"\ncount = 2\nseed = 1\n'
    camp.write_text(base + '[[parameter]]\nname = "station_com_z"\nkey = "passive_craft.com[2]"\nmin = 2.5\nmax = 3.5\n')
    p = load_campaign(camp).specs[0].param
    assert (p.unit, p.label) == ("m", "passive craft CoM z")
    camp.write_text(base + '[[parameter]]\nname = "v"\nkey = "initial.closing_sped"\nmin = 0.1\nmax = 0.2\n')
    with pytest.raises(CampaignError) as ei:
        load_campaign(camp)
    assert "closing_sped" in str(ei.value) and "did you mean" in str(ei.value)
    camp.write_text(base + '[fixed]\n"overrides.head_frction" = 0.1\n[[parameter]]\nname = "v"\n'
                    'key = "initial.closing_speed"\nmin = 0.1\nmax = 0.2\n')
    with pytest.raises(CampaignError) as ei:
        load_campaign(camp)
    assert "fixed" in ei.value.key and "did you mean overrides.head_friction?" in str(ei.value)


@pytest.mark.gui
def test_dialog_shows_every_schema_key_of_a_scenario(qtbot):
    """Every key of the scenario, its mechanism and its geometry has an edit box holding the file's value (the
    scenario's `mechanism` is the mechanism box)."""
    from PySide6.QtWidgets import QLineEdit

    from app.scenario_dialog import ScenarioDialog
    from solver import schema
    sc = SCEN / "expert_movable_limiter.toml"
    dlg = ScenarioDialog(scenario_path=sc)
    qtbot.addWidget(dlg)
    assert dlg.validate(), dlg.message.text()
    docs = {"scenario": tomllib.loads(sc.read_text()),
            "mechanism": tomllib.loads((RES / "mechanisms" / "movable_limiter.toml").read_text()),
            "geometry": tomllib.loads((RES / "geometry" / "probe_cone.toml").read_text())}
    for t, kv in docs["mechanism"]["geometry_changes"].items():
        docs["geometry"][t].update(kv)
    shown = 0
    for p in schema.params():
        if p.kind == "changes" or p.key == "mechanism" and p.file == "scenario":
            continue
        names = [f"{p.key}[{i}]" for i in range(p.size)] if p.kind == "vector" and p.size else [p.key]
        for i, name in enumerate(names):
            edits = [e for e in dlg.findChildren(QLineEdit, name)]
            assert len(edits) == 1, (p.file, name)
            v = docs[p.file]
            for part in p.key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if v is None:
                continue
            v = v[i] if len(names) > 1 else v
            text = edits[0].text()
            got = tomllib.loads(f"v = {text}")["v"] if text.startswith("[") else \
                (text if isinstance(v, str) else float(text))
            assert got == v or float(text) == pytest.approx(v), (name, text, v)
            shown += 1
    assert shown > 200


@pytest.mark.gui
def test_dialog_saves_a_geometry_edit_as_the_mechanisms_geometry_change(qtbot, tmp_path):
    """A geometry value edited in the dialog goes to the saved mechanism's [geometry_changes] (the shared geometry
    file stays as it is), and the loader applies it."""
    from app.scenario_dialog import ScenarioDialog
    dlg = ScenarioDialog(scenario_path=SCEN / "central_impact_20t.toml")
    qtbot.addWidget(dlg)
    edit = dlg.field("contact.ring", "mu")
    assert edit.text() == "0.2" and dlg.group_boxes["Contact law"].isVisibleTo(dlg)
    edit.setText("0.35")
    path = dlg.save_as(tmp_path / "edited.toml")
    assert path is not None, dlg.message.text()
    mech = tomllib.loads((tmp_path / "edited.mechanism.toml").read_text())
    assert mech["geometry_changes"] == {"contact": {"ring": {"mu": 0.35}}}
    m = scenario.load_model(path)
    from solver.contact.pairset import PAR_MU
    assert {m.cgeo.ppar[j, PAR_MU] for j, g in enumerate(m.cgeo.pair_groups) if g == "ring_ring"} == {0.35}
