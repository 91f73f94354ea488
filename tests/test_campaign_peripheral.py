"""Campaigns of the peripheral (IDSS-class) mechanism type: the shipped IDSS-envelope campaigns load with the type's
criteria, outputs and pairs; a real 8-run campaign on a local Dask cluster (the CLI, 2 worker processes) gives rows
with the peripheral verdict and its failure reasons; campaign-rerun reproduces a row; the envelope map shows it."""
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from solver.campaign import (CampaignError, failure_reasons, load_campaign, read_summary, run_campaign,
                             summarise_run)
from solver.runfile import RunFile
from tests.cli_here import cli_here

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGNS = ROOT / "resources" / "peripheral" / "campaigns"
SMALL = CAMPAIGNS / "idss_envelope_small.toml"
ENVELOPE = CAMPAIGNS / "idss_envelope_200.toml"
CRITERIA = ROOT / "resources" / "peripheral" / "criteria.toml"
TYPE_OUTPUTS = ("max_leg_stroke", "max_leg_force", "t_hooks_closed")
PROBE_OUTPUTS = ("max_axial_stroke", "max_crank_angle", "max_XLimD")


def dockmnemo(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "app.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_idss_envelope_campaigns_load_as_peripheral():
    env = load_campaign(ENVELOPE)
    assert env.mechanism_type == "peripheral" and env.variant == "idss"
    assert env.count == 200 and env.sampling == "lhs" and env.keep == "failures" and env.t_end >= 20.0
    assert env.criteria_path == CRITERIA.resolve() and env.criteria.final == {"hooks_closed": 12.0}
    cols = env.outputs()
    assert all(n in cols for n in TYPE_OUTPUTS) and not any(n in cols for n in PROBE_OUTPUTS)
    assert {"peak_ring_ring", "peak_petal_ring_1", "peak_ring_petal_3", "peak_latch_1", "peak_interface", "peak_iface_F",
            "peak_iface_M"} <= set(cols)
    # the IDSS envelope: closing 0.05-0.10 m/s, rates per axis, the lateral miss and tilt radial (radius, angle)
    x = env.samples()
    col = {p.name: x[:, k] for k, p in enumerate(env.parameters)}
    assert col["closing_speed"].min() >= 0.05 and col["closing_speed"].max() <= 0.10
    assert np.abs(col["lateral_rate_y"]).max() <= 0.04 and np.abs(col["yaw_rate"]).max() <= 0.20
    assert 0.099 < col["lateral_miss"].max() <= 0.10 and 3.96 < col["tilt"].max() <= 4.0   # the rim is sampled
    assert np.abs(col["roll_deg"]).max() <= 4.0
    for k in (0, 57, 199):
        ini = env.scenario(k)["initial"]
        a, t = np.radians(col["lateral_miss_angle"][k]), np.radians(col["tilt_angle"][k])
        np.testing.assert_allclose(ini["lateral_miss"], col["lateral_miss"][k] * np.array([np.cos(a), np.sin(a)]))
        np.testing.assert_allclose(ini["angular_miss_deg"][1:], col["tilt"][k] * np.array([np.cos(t), np.sin(t)]))
    small = load_campaign(SMALL)     # no criteria key: the peripheral type's own
    assert small.mechanism_type == "peripheral" and small.criteria_path == CRITERIA.resolve()
    assert [p.key for p in small.parameters] == [p.key for p in env.parameters] and small.count <= 8


def test_peripheral_key_refused_by_a_probe_cone_campaign(tmp_path):
    """A varied key is checked against the base scenario's type: initial.face_gap is the peripheral's only."""
    text = (ROOT / "resources" / "campaigns" / "demo_small.toml").read_text()
    bad = tmp_path / "c.toml"
    bad.write_text(text.replace('key = "initial.closing_speed"', 'key = "initial.face_gap"'))
    with pytest.raises(CampaignError, match="initial.face_gap"):
        load_campaign(bad)
    ok = tmp_path / "p.toml"
    ok.write_text(SMALL.read_text().replace('base_scenario = "idss_envelope_base.toml"',
                                            f'base_scenario = "{(CAMPAIGNS / "idss_envelope_base.toml").as_posix()}"')
                  .replace('key = "initial.closing_speed"\nmin = 0.05\nmax = 0.10',
                           'key = "initial.face_gap"\nmin = 0.23\nmax = 0.25'))
    assert load_campaign(ok).parameters[0].key == "initial.face_gap"


POLAR = """name = "polar_test"
base_scenario = "{base}"
t_end = 1.0
sampling = "lhs"
count = 50
seed = 3

[[parameter]]
name = "miss"
polar = ["initial.lateral_miss[0]", "initial.lateral_miss[1]"]
angle = "miss_angle"
min = 0.02
max = 0.10
"""


def polar_file(tmp_path, **subs) -> Path:
    text = POLAR.format(base=(CAMPAIGNS / "idss_envelope_base.toml").as_posix())
    for a, b in subs.items():
        assert a in text, a
        text = text.replace(a, b)
    f = tmp_path / "polar.toml"
    f.write_text(text)
    return f


def test_polar_parameter_gives_radius_and_angle_columns(tmp_path):
    c = load_campaign(polar_file(tmp_path))
    assert [(p.name, p.unit, p.label) for p in c.parameters] == [
        ("miss", "m", "lateral miss (radial)"), ("miss_angle", "deg", "lateral miss direction")]
    r, a = c.samples()[:, 0], c.samples()[:, 1]
    assert 0.02 <= r.min() and r.max() <= 0.10 and 0.0 <= a.min() and a.max() < 360.0
    assert sorted(np.floor((r - 0.02) / 0.08 * 50).astype(int)) == list(range(50))   # stratified (LHS)
    y, z = np.array([c.scenario(i)["initial"]["lateral_miss"] for i in range(50)]).T
    np.testing.assert_allclose(np.hypot(y, z), r)
    np.testing.assert_allclose(np.degrees(np.arctan2(z, y)) % 360.0, a, atol=1e-9)


@pytest.mark.parametrize("subs, key, problem", [
    ({"min = 0.02": "min = -0.02"}, "parameter[0] (miss).min", "a radius"),
    ({'angle = "miss_angle"\n': ""}, "parameter[0] (miss).angle", "missing"),
    ({'angle = "miss_angle"': 'angle = "peak_Fx"'}, "parameter[0] (miss).angle", "summary output column"),
    ({'angle = "miss_angle"': 'angle = "miss"'}, "parameter[0].name", "'miss' is used twice"),
    ({', "initial.lateral_miss[1]"]': "]"}, "parameter[0] (miss).polar", "must be two different scenario keys"),
    ({"initial.lateral_miss[1]": "initial.lateral_mis[1]"}, "parameter[0] (miss).polar", "no key"),
    ({'name = "miss"': 'name = "miss"\nkey = "initial.closing_speed"'}, "parameter[0] (miss).key", "not both"),
    ({"max = 0.10": "max = 0.9"}, "parameter",
     "corner of the envelope, parameter 'miss' (initial.lateral_miss[0], initial.lateral_miss[1])"),
    ({'sampling = "lhs"': 'sampling = "grid"', "count = 50\n": ""}, "parameter[0] (miss).polar",
     "needs lhs or random"),
])
def test_bad_polar_parameters_say_file_key_problem(tmp_path, subs, key, problem):
    f = polar_file(tmp_path, **subs)
    with pytest.raises(CampaignError) as ei:
        load_campaign(f)
    assert ei.value.key == key and problem in ei.value.problem, str(ei.value)
    assert str(ei.value).startswith(f"{f}: {key}: ")


def test_failure_reasons_of_the_peripheral_verdict():
    line = ("FAIL: no capture; hooks_closed 0 < 12 at the end; peak base loads within limits; damper strokes within "
            "range; latch release n/a (no capture)")
    assert failure_reasons("ok", "", line) == ["not captured", "hooks_closed below 12 at the end"]
    line = ("FAIL: peak |Fx| 4.20 kN > 3.90 kN at 1.200 s; leg_3 0.0912 > 0.08 m at 2.000 s; captured at 3.100 s; "
            "no latch release; final state reached")
    assert failure_reasons("ok", "", line) == ["base load Fx over limit", "stroke leg_3 out of range"]
    assert failure_reasons("ok", "", "PASS: captured at 3.100 s; no latch release; final state reached") == []
    line = ("FAIL: peak |iface_F_soft| 8.37 kN > 3.90 kN at 20.734 s, peak |iface_M_soft| 5.94 kN*m > 2.80 kN*m at "
            "20.734 s; captured at 7.048 s; leg strokes within range; no latch release; final state reached")
    assert failure_reasons("ok", "", line) == ["interface load iface_F_soft over limit",
                                               "interface load iface_M_soft over limit"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    """The shipped small campaign, run by the CLI on a local Dask cluster of 2 worker processes."""
    d = tmp_path_factory.mktemp("pcamp") / "idss_small"
    r = dockmnemo("campaign", SMALL, "--out", d, "--workers", 2)
    assert r.returncode == 0, r.stderr
    assert f"{d}: 8 of 8 runs finished (8 now" in r.stdout, r.stdout
    return d


@pytest.mark.slow
def test_peripheral_campaign_rows_hold_the_peripheral_verdict(campaign):
    s = read_summary(campaign)
    assert s.campaign.mechanism_type == "peripheral" and len(s) == 8 and not s.missing()
    assert s.status == ["ok"] * 8, s.table()
    with h5py.File(campaign / "summary.h5") as f:
        assert f.attrs["mechanism_type"] == "peripheral"
        # one pair per latch (issue 33: the three carry the latches' couple), the interface load
        assert all(n in f["outputs"] for n in TYPE_OUTPUTS + ("peak_ring_ring", "peak_latch_1", "peak_iface_F"))
        assert not any(n in f["outputs"] for n in PROBE_OUTPUTS)
    assert len({w for w in s.worker}) == 2                      # two Dask worker processes ran them
    for k, i in enumerate(s.index):
        row = s.row(int(i))
        assert "hooks_closed" in row["verdict"] or "final state reached" in row["verdict"], row["verdict"]
        assert row["verdict"].startswith("PASS" if s.passed[k] else "FAIL")
        for why in s.reasons(int(i)):                            # reasons from the peripheral verdict
            assert not why.startswith("stroke hooks_closed") and why != "final state reached"
        if not s.captured[k]:
            assert "not captured" in s.reasons(int(i))
        if not s.passed[k]:                                     # a failure's full run is kept (keep = failures)
            assert s.run_path(int(i)) is not None
        path = s.run_path(int(i))
        if path is not None:                                    # the row is the summary of its run file
            with RunFile(path) as run:
                assert run.meta.mechanism_type == "peripheral"
                again = summarise_run(run)
            assert again["verdict"] == row["verdict"]
            for name, v in again["outputs"].items():
                if name != "wall_time":
                    assert v == pytest.approx(row["outputs"][name], nan_ok=True), name
        assert s.column("max_leg_stroke")[k] > 0 and math.isfinite(s.column("peak_base_force")[k])
    table = cli_here("campaign", "--table", campaign)
    # the type's own key column first: the interface load its verdict reads (issue 33), no probe-cone stroke
    assert table.returncode == 0 and "iface N" in table.stdout and "stroke m" not in table.stdout
    reasons = s.failure_counts()
    if reasons:
        assert "failure reasons" in table.stdout and next(iter(reasons)) in table.stdout
    # the same command again resumes: nothing is missing, nothing runs
    again = cli_here("campaign", SMALL, "--out", campaign, "--workers", 1)
    assert again.returncode == 0 and "8 of 8 runs finished (0 now" in again.stdout, again.stdout + again.stderr


@pytest.mark.slow
def test_peripheral_resume_runs_the_missing(campaign, tmp_path):
    """A directory missing rows (six journal rows of a killed campaign kept) runs exactly the other two."""
    d = tmp_path / "partial"
    shutil.copytree(campaign, d)
    full = read_summary(d)
    (d / "summary.h5").unlink()
    (d / "rows").mkdir()
    for i in (0, 2, 3, 5, 6, 7):
        (d / "rows" / f"run_{i:05d}.json").write_text(json.dumps(full.row(i)))
    from distributed import Client
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        res = run_campaign(SMALL, d, client=client)
    assert (res.n_before, res.n_run) == (6, 2)
    s = read_summary(d)
    assert list(s.index) == list(range(8)) and s.verdict == full.verdict


@pytest.mark.slow
def test_campaign_rerun_reproduces_a_peripheral_row(campaign, tmp_path):
    s = read_summary(campaign)
    i = 3
    out = tmp_path / "rerun_3.h5"
    r = cli_here("campaign-rerun", campaign, i, "-o", out)
    assert r.returncode == 0, r.stderr
    row = s.row(i)
    with RunFile(out) as run:
        assert run.meta.mechanism_type == "peripheral"
        again = summarise_run(run)
        kept = s.run_path(i)
        if kept is not None:
            with RunFile(kept) as k:
                for name in ("Fx", "leg_1", "leg_6_force", "latches_engaged"):
                    np.testing.assert_array_equal(run.channel(name), k.channel(name))
    assert again["verdict"] == row["verdict"] and again["captured"] == row["captured"]
    for name, v in again["outputs"].items():
        if name != "wall_time":
            assert v == pytest.approx(row["outputs"][name], nan_ok=True), name


@pytest.mark.gui
@pytest.mark.slow
def test_envelope_map_of_a_peripheral_campaign(campaign, qtbot, tmp_path, artifacts):
    """`dockmnemo view DIR` (MainWindow.open_path): the map, its hover, a kept run opening as a peripheral run, and a
    run whose file is gone re-run by the app's worker (campaign-rerun on the peripheral kernels)."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QPoint, QPointF, Qt

    from tests.gui_util import main_window
    from viewer.envelope_map import OUTCOMES, fmt_quantity, outcome_codes
    d = tmp_path / "idss_small"
    shutil.copytree(campaign, d)
    s = read_summary(d)
    kept = [int(i) for i in s.index if s.run_path(int(i)) is not None]
    assert len(kept) >= 2, s.table()
    gone = kept[-1]
    (d / s.row(gone)["run_file"]).unlink()          # its full run deleted: the map re-runs it
    w = main_window(qtbot, tmp_path / "settings.ini", size=(1700, 1000))
    w.settings.setValue("runs_dir", str(tmp_path / "runs"))
    assert w.open_path(d), w.last_error
    m = w.campaign.map
    qtbot.waitUntil(lambda: m.isVisible(), timeout=3000)
    s = m.summary
    head = m.header.text()
    assert "idss_envelope_small" in head and "<b>8</b> of 8 runs done" in head
    cap = 100.0 * s.captured.mean()
    assert f"capture success <b>{cap:.1f} %</b>" in head
    top = next(iter(s.failure_counts()), None)
    assert top is None or f"failures: {top} <b>" in head
    codes = outcome_codes(s)
    for code, (text, *_rest) in enumerate(OUTCOMES):
        assert f"{text} <b>{int(np.count_nonzero(codes == code))}</b>" in m.legend.text()
    assert (m.x_name, m.y_name) == ("closing_speed", "lateral_miss")
    assert "lateral miss (radial) (m)" in m.plot.getAxis("left").labelString()

    # the hover names the peripheral outputs: leg stroke and force, hooks, the largest contact pair
    i = kept[0]
    tip = m.tooltip(i)
    k = s.position(i)
    assert f"max |leg stroke| (six legs) = {fmt_quantity(s.column('max_leg_stroke')[k], 'm')}" in tip
    assert "max |leg force| (six legs) = " in tip and "time the hooks closed = " in tip
    assert "largest contact peak: peak contact force, " in tip
    assert "max probe stroke" not in tip
    if not s.passed[k]:
        assert s.verdict[k].split("; ")[0] in tip

    m.set_colour_by("max_leg_stroke")
    qtbot.wait(200)
    assert m.colour_bar.isVisible() and "max |leg stroke|" in m.colour_bar.axis.labelString()
    w.grab().save(str(artifacts / "envelope_map_peripheral.png"))
    m.set_colour_by("outcome")
    qtbot.wait(150)

    def click(index):
        x, y = m.point_of(index)
        p = m.view.mapFromScene(m.plot.vb.mapViewToScene(QPointF(x, y)))
        qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=QPoint(p.x(), p.y()))

    # a kept run opens at once as a peripheral run (its own bars), ringed on the map
    click(i)
    assert w.campaign.last_action == "opened"
    assert w.run is not None and w.run.meta.mechanism_type == "peripheral" and m.marked == i
    # the run whose file is gone: re-run by the worker, then opened; the same run as the campaign's
    click(gone)
    assert w.campaign.last_action == "rerun"
    qtbot.waitUntil(lambda: not w.runner.running, timeout=240000)
    out = w.campaign.rerun_path(gone)
    qtbot.waitUntil(lambda: w.run is not None and w.run.path.resolve() == out.resolve(), timeout=10000)
    assert w.last_run_message == "finished", w.runner.stderr
    assert w.run.meta.mechanism_type == "peripheral" and m.marked == gone
    F = np.sqrt(sum(w.run.channel(n) ** 2 for n in ("Fx", "Fy", "Fz")))
    assert float(np.nanmax(F)) == pytest.approx(s.column("peak_base_force")[s.position(gone)], rel=1e-9)
    w.grab().save(str(artifacts / "envelope_map_peripheral_run.png"))


def test_resume_refuses_a_changed_mechanism_file(tmp_path):
    """The peripheral campaigns name their mechanism by a path (copied into DIR/base): a directory started with one
    version of it does not resume with another (its runs would mix two mechanisms)."""
    from solver.campaign import prepare_directory
    src = tmp_path / "src" / "campaigns"
    src.mkdir(parents=True)
    shutil.copyfile(CAMPAIGNS / "idss_envelope_base.toml", src / "idss_envelope_base.toml")
    shutil.copyfile(SMALL, src / "small.toml")
    mech = tmp_path / "src" / "peripheral_idss.toml"
    shutil.copyfile(ROOT / "resources" / "peripheral" / "peripheral_idss.toml", mech)
    d = prepare_directory(load_campaign(src / "small.toml", criteria_path=CRITERIA), tmp_path / "dir")
    assert (d / "base" / "peripheral_idss.toml").read_text() == mech.read_text()
    prepare_directory(load_campaign(src / "small.toml", criteria_path=CRITERIA), d)         # unchanged: resumes
    mech.write_text(mech.read_text() + "# edited\n")
    with pytest.raises(CampaignError, match="the mechanism file changed since") as ei:
        prepare_directory(load_campaign(src / "small.toml", criteria_path=CRITERIA), d)
    assert ei.value.path == str(mech.resolve())
    assert read_summary(d).campaign.base["mechanism"] == str((d / "base" / "peripheral_idss.toml").resolve())
