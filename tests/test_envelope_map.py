"""Envelope map of a REAL campaign (4 solver runs on Dask): axes and colour choices, hover text, clicking a
point opens the kept run or re-runs a summary-only one in the worker, refresh while a campaign writes,
bad directories. GUI tests drive the window as a person would."""
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("distributed")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from app.cli import SYNTHETIC_RUN  # noqa: E402
from solver.campaign import read_summary  # noqa: E402
from tests import campaign_dir  # noqa: E402
from tests.gui_util import main_window  # noqa: E402
from viewer.envelope_map import MISS, OUTCOMES, PASS, colour_map, fmt_quantity  # noqa: E402

PASSING = 3          # campaign_dir: fast closing at 3.066 deg yaw, captured and PASS, kept only in the summary
KEPT = 2             # fast closing at small yaw, not captured: its full run is kept


@pytest.fixture(scope="session")
def campaign(tmp_path_factory) -> Path:
    d = campaign_dir.make(tmp_path_factory.mktemp("campaign") / "envmap_test")
    s = read_summary(d)
    assert len(s.index) == 4 and s.passed[s.position(PASSING)] and s.run_path(PASSING) is None, s.table()
    assert s.run_path(KEPT) is not None and not s.captured[s.position(KEPT)], s.table()
    return d


@pytest.fixture
def window(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "settings.ini", size=(1700, 1000))
    w.settings.setValue("runs_dir", str(tmp_path / "runs"))
    yield w
    if w.runner.running:
        w.runner.kill()
        qtbot.waitUntil(lambda: not w.runner.running, timeout=10000)


def view_point(m, index) -> QPoint:
    """Where run `index` is drawn, in the map view's viewport pixels."""
    x, y = m.point_of(index)
    p = m.view.mapFromScene(m.plot.vb.mapViewToScene(QPointF(x, y)))
    return QPoint(p.x(), p.y())


def pick(combo, name):
    """Choose the entry of column `name` as a person would (the combo's popup selection)."""
    i = combo.findData(name)
    assert i >= 0, name
    combo.setCurrentIndex(i)
    combo.activated.emit(i)


def settle(qtbot):
    """Let the layout and the view range follow a change (as a person's next move would)."""
    qtbot.wait(150)


def brush_colours(m) -> list[str]:
    return [b.color().name() for b in m.scatter.data["brush"]]


def test_axes_colour_and_hover(window, qtbot, campaign, artifacts):
    w = window
    assert w.open_campaign(campaign), w.last_error
    m = w.campaign.map
    s = m.summary
    qtbot.waitUntil(lambda: m.isVisible(), timeout=3000)
    assert "<b>4</b> of 4 runs done" in m.header.text()
    assert "capture success <b>25.0 %</b>" in m.header.text()
    assert "failures: not captured <b>" in m.header.text()
    legend = m.legend.text()
    assert f"{OUTCOMES[MISS][0]} <b>3</b>" in legend and f"{OUTCOMES[PASS][0]} <b>1</b>" in legend
    assert "full run kept <b>3</b>" in legend

    # default axes: the first two parameters; switch y to the yaw misalignment
    assert (m.x_name, m.y_name) == ("closing_speed", "lateral_miss_y")
    assert "closing speed (m/s)" in m.plot.getAxis("bottom").labelString()
    pick(m.y_combo, "yaw_deg")
    assert m.y_name == "yaw_deg"
    assert "yaw misalignment (deg)" in m.plot.getAxis("left").labelString()
    xs, ys = m.scatter.data["x"], m.scatter.data["y"]
    np.testing.assert_array_equal(ys, s.column("yaw_deg")[m.rows])
    np.testing.assert_array_equal(xs, s.column("closing_speed")[m.rows])
    assert len(set(zip(xs, ys))) == 4                      # the four runs at four places

    # colour by outcome: each point has its outcome's colour
    assert not m.colour_bar.isVisible()
    want = {PASSING: OUTCOMES[PASS][1], KEPT: OUTCOMES[MISS][1]}
    got = dict(zip((int(s.index[r]) for r in m.rows), brush_colours(m)))
    assert all(got[i] == want[i] for i in want)

    # colour by peak base force: a colour bar in kN, the largest force at the top of the colour map
    pick(m.colour_combo, "peak_base_force")
    assert m.colour_bar.isVisible()
    assert "peak base force" in m.colour_bar.axis.labelString() and "kN" in m.colour_bar.axis.labelString()
    F = s.column("peak_base_force")
    top = int(s.index[np.nanargmax(F)])
    got = dict(zip((int(s.index[r]) for r in m.rows), brush_colours(m)))
    assert got[top] == colour_map().map(1.0, mode="qcolor").name()
    assert m.colour_range == (float(np.nanmin(F)), float(np.nanmax(F)))
    qtbot.wait(100)
    m.grab().save(str(artifacts / "envelope_map_test_force.png"))
    pick(m.colour_combo, "outcome")
    assert not m.colour_bar.isVisible()
    settle(qtbot)

    # hover over the passing run: its outcome, ICs, key outputs and what a click does
    k = s.position(PASSING)
    QTest.mouseMove(m.view.viewport(), view_point(m, PASSING))
    qtbot.waitUntil(lambda: m.plot.vb.toolTip() != "", timeout=3000)
    tip = m.plot.vb.toolTip()
    assert tip == m.tooltip(PASSING)
    assert tip.startswith(f"run {PASSING}: captured, verdict PASS\n")
    for p in s.parameters:
        assert f"{p.label} = {fmt_quantity(s.column(p.name)[k], p.unit)}\n" in tip
    assert "closing speed = 0.16 m/s" in tip and "yaw misalignment = 3.066 deg" in tip
    assert f"capture time = {fmt_quantity(s.column('t_capture')[k], 's')}" in tip
    unit, label = m._unit_label("peak_base_force")
    assert f"{label} = {fmt_quantity(s.column('peak_base_force')[k], unit)}" in tip and " kN\n" in tip
    pairs = {n: s.column(n)[k] for n, (_u, lab) in s.outputs.items() if lab.startswith("peak contact force")}
    biggest = max(pairs, key=lambda n: np.nan_to_num(pairs[n], nan=-1.0))
    assert f"largest contact peak: {s.outputs[biggest][1]} = {fmt_quantity(pairs[biggest], 'N')}\n" in tip
    assert tip.endswith("summary only: click re-runs it")
    assert m.tooltip(KEPT).endswith(f"click: open full run {s.run_path(KEPT).name}")
    assert m.tooltip(KEPT).startswith(f"run {KEPT}: {OUTCOMES[MISS][0]}\n  FAIL: no capture\n")


def test_click_opens_kept_run_and_reruns_a_summary_only_run(window, qtbot, campaign):
    w = window
    assert w.open_campaign(campaign), w.last_error
    m = w.campaign.map
    s = m.summary
    pick(m.y_combo, "yaw_deg")
    settle(qtbot)

    # a run the campaign kept: opens at once in the mnemonic diagram, ringed on the map
    qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=view_point(m, KEPT))
    assert w.campaign.last_action == "opened"
    assert w.run is not None and w.run.path.resolve() == s.run_path(KEPT).resolve()
    assert m.marked == KEPT and len(m.ring.data) == 1

    # a run kept only in the summary: re-run in the worker process; Cancel leaves nothing behind
    out = w.campaign.rerun_path(PASSING)
    part = out.with_name(out.name + ".part")
    qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=view_point(m, PASSING))
    assert w.campaign.last_action == "rerun"
    assert w.runner.running and w.run_bar.isVisible()
    qtbot.waitUntil(lambda: w.runner.t > 0.0, timeout=240000)          # solving (progress arrived)
    w.cancel_button.click()
    qtbot.waitUntil(lambda: not w.runner.running, timeout=30000)
    assert "cancelled" in w.last_run_message, w.runner.stderr
    assert not out.exists() and not part.exists()
    assert w.run.path.resolve() == s.run_path(KEPT).resolve()          # the open run stays
    assert "re-run ended" in m.status.text()

    # again, to the end: opened when done
    qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=view_point(m, PASSING))
    assert w.campaign.last_action == "rerun"
    qtbot.waitUntil(lambda: not w.runner.running, timeout=240000)
    qtbot.waitUntil(lambda: w.run is not None and w.run.path.resolve() == out.resolve(), timeout=10000)
    assert w.last_run_message == "finished", w.runner.stderr
    assert not part.exists()
    assert m.marked == PASSING
    # the same run as the campaign's: same capture time and peak base force (deterministic solver)
    k = s.position(PASSING)
    assert w.run.t_capture == pytest.approx(s.column("t_capture")[k], abs=1e-9)
    F = np.sqrt(sum(w.run.channel(n) ** 2 for n in ("Fx", "Fy", "Fz")))
    assert float(np.nanmax(F)) == pytest.approx(s.column("peak_base_force")[k], rel=1e-9)

    # back to the kept run, then the re-run again: now from the runs folder, no second simulation
    qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=view_point(m, KEPT))
    assert w.run.path.resolve() == s.run_path(KEPT).resolve() and m.marked == KEPT
    qtbot.mouseClick(m.view.viewport(), Qt.LeftButton, pos=view_point(m, PASSING))
    assert w.campaign.last_action == "cached" and not w.runner.running
    assert w.run.path.resolve() == out.resolve() and m.marked == PASSING
    # a run opened from elsewhere is not one of the campaign's: no ring
    assert w.open_run(SYNTHETIC_RUN) and m.marked is None and len(m.ring.data) == 0


def test_map_follows_a_campaign_still_writing(window, qtbot, tmp_path):
    w = window
    d = tmp_path / "growing"
    worker = threading.Thread(target=campaign_dir.make, args=(d, (0.05,)), daemon=True)   # 2 slow runs
    worker.start()
    qtbot.waitUntil(lambda: (d / "campaign.toml").is_file(), timeout=60000)
    assert w.open_campaign(d), w.last_error
    m = w.campaign.map
    first = len(m.summary.index)
    assert first < 2 and m.timer.isActive()
    shown = []
    m.summaryChanged.connect(lambda: shown.append(len(m.summary.index)))
    qtbot.waitUntil(lambda: len(m.summary.index) == 2, timeout=240000)
    worker.join(60)
    assert "<b>2</b> of 2 runs done" in m.header.text()
    assert not m.timer.isActive()                     # complete: no more polling
    # the campaign's last summary rewrite may land after the read that showed 2 rows: let that read settle
    qtbot.waitUntil(lambda: not m._reading and m.poll() is False, timeout=60000)
    assert "<b>2</b> of 2 runs done" in m.header.text()
    assert m.poll() is False                          # and nothing changed since the last read
    assert shown == sorted(shown)
    m.refresh_button.click()                           # the button re-reads too
    assert m.read_error == "" and len(m.summary.index) == 2


def test_bad_campaign_directories(window, qtbot, campaign, tmp_path):
    w = window
    empty = tmp_path / "empty"
    empty.mkdir()
    assert w.open_campaign(empty) is False
    assert str(empty) in w.last_error and "campaign.toml" in w.last_error
    assert w.error_box.windowTitle() == "Cannot open campaign"
    w.error_box.close()
    assert w.open_campaign(tmp_path / "missing") is False and "not a directory" in w.last_error
    w.error_box.close()
    broken = tmp_path / "broken"
    shutil.copytree(campaign, broken)
    (broken / "summary.h5").write_bytes(b"not an HDF5 file")
    assert w.open_campaign(broken) is False
    assert "summary.h5" in w.last_error
    w.error_box.close()
    assert w.isVisible()
    # a good campaign, then a bad one: the map keeps the good one
    assert w.open_campaign(campaign)
    assert w.open_campaign(empty) is False
    w.error_box.close()
    assert w.campaign.map.summary.directory == campaign


def test_open_path_of_a_directory_and_rerun_cli_errors(window, campaign, tmp_path, capsys):
    from app.cli import main
    assert window.open_path(campaign) and window.campaign.map.summary.name == "envmap_test"
    assert main(["campaign-rerun", str(campaign), "17", "-o", str(tmp_path / "r.h5")]) == 2
    err = capsys.readouterr().err
    assert "run 17: not among the 4 finished runs of campaign envmap_test" in err
    assert main(["campaign-rerun", str(tmp_path), "0", "-o", str(tmp_path / "r.h5")]) == 2
    assert "no campaign.toml" in capsys.readouterr().err
    assert not (tmp_path / "r.h5").exists()
