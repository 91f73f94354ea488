"""Measured data in the app (issue 25): a stand record made from a real solver run (friction brake x 1.25, lbf and
lbf*in in a turned sensor frame, ms, shifted 0.1374 s, noise) over the nominal run: dashed traces, the metrics dock
(equal to solver.measured's), the measured − run plots, refusals; plot exports (PNG, SVG, CSV) and the wheel zoom."""
from __future__ import annotations

import csv
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import tomlkit

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QImage, QWheelEvent  # noqa: E402

from solver.measured import compare_run  # noqa: E402
from solver.simulate import run_scenario  # noqa: E402
from tests.gui_util import main_window, module_window  # noqa: E402
from tests.layout_check import cut_texts, overlaps  # noqa: E402
from tests.measured_truth import EXAMPLE_MAP, write_measured_csv  # noqa: E402

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
MECHANISM = ROOT / "resources" / "mechanisms" / "existing.toml"
SHIFT = 0.1374
T_END = 2.5
PLOTTED = ["Fx", "probe_stroke", "Fy"]


@pytest.fixture(scope="module")
def stand(tmp_path_factory):
    """(nominal run, stand record with its map next to it as <stem>_map.toml): the record is the truth run's."""
    d = tmp_path_factory.mktemp("stand")
    mech = tomlkit.parse(MECHANISM.read_text())
    mech["axial_damper"]["friction_brake_torque_in"] = mech["axial_damper"]["friction_brake_torque_in"] * 1.25
    (d / "existing_truth.toml").write_text(tomlkit.dumps(mech))
    sc = tomlkit.parse(SCENARIO.read_text())
    sc["mechanism"] = "existing_truth.toml"
    (d / "truth.toml").write_text(tomlkit.dumps(sc))
    run_scenario(d / "truth.toml", d / "truth.h5", t_end=T_END)
    run_scenario(SCENARIO, d / "nominal.h5", t_end=T_END)
    record = write_measured_csv(d / "truth.h5", d / "stand.csv", SHIFT)
    shutil.copy(EXAMPLE_MAP, d / "stand_map.toml")
    return d / "nominal.h5", record


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory, stand):
    """One window on the nominal run for the module's tests that only drive it (building one is the costly part),
    with what a new one shows."""
    w = module_window(request, tmp_path_factory, stand[0])
    w.diagram.plots.set_plotted(PLOTTED)
    yield w, fresh_state(w)
    w.close()


def fresh_state(w) -> dict:
    """What a test may change and a new window shows: the run, plots, window, zoom, frame, measured data."""
    d, m = w.diagram, w.measured
    return {"run": w.run.path, "plots": list(d.plots.names), "window": d.plots.window, "zoom": d.plots.zoom,
            "x": d.plots.x_range(), "frame": w.playback.frame, "scrolling": d.act_scrolling.isChecked(),
            "measured": d.plots.measured_values("Fx"), "rows": m.dock.rows(), "diff": m.act_diff.isChecked(),
            "enabled": [a.isEnabled() for a in (m.act_close, m.act_diff, m.act_reset_zoom)]}


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window set back to how a new window shows the nominal run (checked, so no test sees another's)."""
    w, fresh = shared_window
    d, m = w.diagram, w.measured
    w.playback.pause()
    if w.error_box is not None:
        w.error_box.close()
    m.act_diff.setChecked(False)
    m.close()
    if w.run.path != fresh["run"]:
        assert w.open_run(fresh["run"]), w.last_error
        qtbot.waitUntil(lambda: d.analysed, timeout=10000)
    if m.act_reset_zoom.isEnabled():
        m.act_reset_zoom.trigger()
    d.act_scrolling.setChecked(fresh["scrolling"])
    d.plots.set_window(fresh["window"])
    d.plots.set_plotted(fresh["plots"])
    w.playback.seek_frame(fresh["frame"])
    assert fresh_state(w) == fresh
    return w


def test_open_measured_shows_dashed_traces_and_the_metrics_of_solver_measured(qtbot, window, stand, artifacts):
    run_path, record = stand
    assert window.measured.open(record), window.last_error          # the map found next to it (stand_map.toml)
    truth = compare_run(run_path, record, EXAMPLE_MAP)
    assert abs(truth.offset - SHIFT) < 2e-3
    pane = window.diagram.plots
    for name in ("Fx", "probe_stroke"):                               # dashed, at the record's own rate
        t, v = pane.measured_values(name)
        np.testing.assert_allclose(t, truth.record_time)
        np.testing.assert_allclose(v, truth.record[name])
    dock = window.measured.dock
    assert dock.isVisible()
    rows = {r[0]: r for r in dock.rows()}
    assert set(rows) == {m.channel for m in truth.metrics}
    for m in truth.metrics:                                            # the table says what validate says
        ch, rms, peak, t_peak, r, unit = rows[m.channel]
        assert math.isclose(float(rms), m.rms, rel_tol=1e-3) and math.isclose(float(peak), m.peak, rel_tol=1e-3)
        assert abs(float(t_peak) - m.t_peak) < 1e-4 and abs(float(r) - m.r) < 1e-4 and unit == m.unit
    fx = rows["Fx"]
    assert float(fx[1]) > 50.0                                         # the 1.25x brake shows (noise: 10 N)
    assert f"{truth.offset:.6f} s" in dock.offset_label.text()
    qtbot.wait(200)
    window.grab_image().save(str(artifacts / "measured_overlay_1600x1000.png"))
    truth_run = record.parent / "truth.h5"                             # another run: compared anew (in sync)
    assert window.open_run(truth_run), window.last_error
    again = compare_run(truth_run, record, EXAMPLE_MAP)
    fx = next(r for r in dock.rows() if r[0] == "Fx")
    assert fx[1] == f"{next(m.rms for m in again.metrics if m.channel == 'Fx'):.4g}" and float(fx[1]) < 20.0   # the truth against its own record
    window.measured.act_close.trigger()                                # File → Close measured data
    assert pane.measured_values("Fx") is None and dock.rows() == [] and window.run is not None
    assert not window.measured.act_close.isEnabled()


def test_measured_difference_plots_toggle(qtbot, window, stand):
    run_path, record = stand
    assert window.measured.open(record, EXAMPLE_MAP), window.last_error
    pane, act = window.diagram.plots, window.measured.act_diff
    assert act.isEnabled() and pane.measured_difference_values("Fx") is None
    act.setChecked(True)
    truth = compare_run(run_path, record, EXAMPLE_MAP)
    for name in ("Fx", "probe_stroke", "Fy"):
        np.testing.assert_allclose(pane.measured_difference_values(name), truth.difference(name), equal_nan=True)
    assert len(pane.titles) == len(PLOTTED) * 2
    act.setChecked(False)
    assert pane.measured_difference_values("Fx") is None and len(pane.titles) == len(PLOTTED)


def test_radians_declared_degrees_warned_in_the_dock_and_the_report(qtbot, window, stand, tmp_path):
    """`validate` warns of Euler angles in radians declared degrees; old main showed it neither in the measured-data
    dock nor in the HTML report (issue 31)."""
    from app.measured_report import write_report
    run_path, record = stand
    rad = ", ".join(f"{math.radians(a):.6f}" for a in (30.0, -15.0, 90.0))
    cmap = tmp_path / "radians_map.toml"
    cmap.write_text(EXAMPLE_MAP.read_text().replace("euler_deg = [30.0, -15.0, 90.0]", f"euler_deg = [{rad}]"))
    said = ("sensor[0].euler_deg: [0.523599, -0.261799, 1.570796] look like radians ([30.0, -15.0, 90.0] deg if "
            "they are): the angles are read as degrees")
    assert window.measured.open(record, cmap), window.last_error
    dock = window.measured.dock
    assert dock.warnings() == [f"warning: radians_map.toml: {said}"] and dock.warnings_label.isVisible()
    assert dock.rows()                                                 # the metrics are still shown beside it
    html = write_report(tmp_path / "r.html", window.measured.comparison, run_path, record, cmap, "", "").read_text()
    assert f"<li>{cmap}: {said}</li>" in html
    assert window.measured.open(record, EXAMPLE_MAP)                   # degrees: no warning left over
    assert dock.warnings() == [] and not dock.warnings_label.isVisible() and not window.measured.comparison.warnings


def test_bad_map_or_record_one_message_and_the_run_and_record_stay(qtbot, window, stand, tmp_path):
    run_path, record = stand
    assert window.measured.open(record, EXAMPLE_MAP)
    shown = window.measured.dock.rows()
    bad_map = tmp_path / "bad_map.toml"
    bad_map.write_text(EXAMPLE_MAP.read_text().replace('force_unit = "lbf"', 'force_unit = "in"'))
    bad_rec = tmp_path / "bad.csv"
    lines = record.read_text().splitlines()
    bad_rec.write_text("\n".join(lines[:3] + [lines[3].replace(lines[3].split(",")[1], "abc", 1)] + lines[4:]))
    lone = tmp_path / "lone.csv"
    shutil.copy(record, lone)
    cases = [(record, bad_map, f"{bad_map}: sensor[0].force_unit: 'in' cannot be converted to 'N'"),
             (bad_rec, EXAMPLE_MAP, f"{bad_rec}: line 4, column LC_Fx: not a number: 'abc'"),
             (lone, None, f"{lone}: channel map: none given and no lone_map.toml next to it"),
             (tmp_path / "missing.csv", EXAMPLE_MAP, f"{tmp_path / 'missing.csv'}:")]
    for rec, cmap, message in cases:
        assert not window.measured.open(rec, cmap)
        assert window.last_error.startswith(message), window.last_error
        assert window.error_box.isVisible()
        window.error_box.close()
        assert window.run is not None and window.run.path == run_path           # the run stays open
        assert window.measured.dock.rows() == shown                             # and the record shown before
        assert window.diagram.plots.measured_values("Fx") is not None
    assert window.isVisible()


def test_view_command_opens_run_and_measured(qtbot, stand):
    from app.main_window import start_app
    run_path, record = stand
    w, errors = start_app(run_path, record, EXAMPLE_MAP)
    try:
        qtbot.addWidget(w)
        assert w.run is not None and w.measured.comparison is not None, w.last_error
        assert w.measured.dock.rows()
    finally:
        errors.uninstall()


def test_exports_png_svg_and_shown_csv(qtbot, window, stand, tmp_path):
    from viewer.plots.export import export_csv, export_image
    run_path, record = stand
    assert window.measured.open(record)
    pane = window.diagram.plots
    pane.set_window(1.0)                                          # a 1 s window following T Current
    window.playback.seek_time(1.0)
    qtbot.wait(100)
    png_all, png_one = export_image(pane, tmp_path / "all.png"), export_image(pane, tmp_path / "fx.png", 0)
    for path, item in ((png_all, pane.glw.ci), (png_one, pane.plots[0])):
        img = QImage(str(path))
        assert not img.isNull() and abs(img.width() - item.sceneBoundingRect().width()) <= 2 and img.height() > 20
    assert QImage(str(png_all)).height() > QImage(str(png_one)).height()
    svg = ET.parse(export_image(pane, tmp_path / "all.svg")).getroot()
    assert svg.tag.endswith("svg") and any(e.tag.endswith("path") for e in svg.iter())
    with open(export_csv(pane, tmp_path / "shown.csv")) as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["time [s]", "Fx [N]", "Fx measured [N]", "probe_stroke [m]", "probe_stroke measured [m]",
                       "Fy [N]", "Fy measured [N]"]
    t = np.array([float(r[0]) for r in rows[1:]])
    x0, x1 = pane.x_range()
    assert x0 <= t[0] < x0 + 0.002 and x1 - 0.002 < t[-1] <= x1              # the shown interval, every frame
    truth = compare_run(run_path, record, EXAMPLE_MAP)
    k = np.searchsorted(truth.time, t)
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], truth.run["Fx"][k])
    np.testing.assert_allclose([float(r[2]) for r in rows[1:]], truth.measured["Fx"][k])


def test_right_click_in_a_plot_offers_its_exports(qtbot, window):
    pane = window.diagram.plots
    qtbot.wait(100)
    centre = pane.glw.mapFromScene(pane.plots[1].getViewBox().sceneBoundingRect().center())
    with qtbot.waitSignal(pane.menuRequested, timeout=2000) as sig:
        qtbot.mouseClick(pane.glw.viewport(), Qt.RightButton, pos=centre)
    assert sig.args[0] == 1
    texts = [a.text() for a in window.measured.menu.actions()]
    assert window.act_export_figure.text() in texts               # the report figure (app/export_actions.py)
    assert window.measured.act_csv.text() in texts
    window.measured.menu.close()


def wheel(pane, plot_index: int, steps: int):
    vb = pane.plots[plot_index].getViewBox()
    pos = QPointF(pane.glw.mapFromScene(vb.sceneBoundingRect().center()))
    t = float(vb.mapSceneToView(vb.sceneBoundingRect().center()).x())
    ev = QWheelEvent(pos, QPointF(pane.glw.viewport().mapToGlobal(pos.toPoint())), QPoint(0, 0),
                     QPoint(0, 120 * steps), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    from PySide6.QtWidgets import QApplication
    QApplication.sendEvent(pane.glw.viewport(), ev)
    return t


def test_wheel_zooms_the_time_axis_and_the_way_back_restores_the_window(qtbot, window, artifacts):
    pane, pb = window.diagram.plots, window.playback
    pane.set_window(1.0)                                          # a 1 s window following T Current
    pb.seek_time(1.2)
    qtbot.wait(100)
    before = pane.x_range()
    t = wheel(pane, 0, 2)                                         # two notches in, about the time under the mouse
    x0, x1 = pane.x_range()
    assert math.isclose(x1 - x0, (before[1] - before[0]) * 0.64, rel_tol=1e-6)
    assert abs((t - x0) / (x1 - x0) - (t - before[0]) / (before[1] - before[0])) < 2e-3   # (to the pixel)
    frame = pb.frame
    pb.step(5)                                                    # playback keeps time; the zoom is a view range
    assert pb.frame == frame + 5 and pane.x_range() == (x0, x1)
    qtbot.wait(100)
    window.grab_image().save(str(artifacts / "measured_zoomed.png"))
    assert window.measured.act_reset_zoom.isEnabled()
    window.measured.act_reset_zoom.trigger()                      # Ctrl+0 (View → Reset plot zoom)
    assert pane.zoom is None
    pb.seek_time(1.2)
    assert pane.x_range() == before
    wheel(pane, 0, -1)                                            # out, then a double-click is the way back too
    assert pane.x_range()[1] - pane.x_range()[0] > before[1] - before[0]
    centre = pane.glw.mapFromScene(pane.plots[0].getViewBox().sceneBoundingRect().center())
    qtbot.mouseDClick(pane.glw.viewport(), Qt.LeftButton, pos=centre)
    assert pane.zoom is None                                      # (its first click also went to that time)
    pb.seek_time(1.2)
    assert pane.x_range() == before
    wheel(pane, 0, 1)
    window.diagram.act_scrolling.toggle()                          # W (whole run) ends a zoom too
    assert pane.zoom is None and pane.x_range() == (0.0, T_END) and not window.measured.act_reset_zoom.isEnabled()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_with_measured_data(qtbot, tmp_path, stand, size, artifacts):
    from viewer.diagram import compose_grab
    w = main_window(qtbot, tmp_path / "settings.ini", stand[0], size=size, activate=False)
    w.diagram.plots.set_plotted(PLOTTED)
    assert w.measured.open(stand[1])
    w.measured.act_diff.setChecked(True)
    w.playback.seek_time(1.0)
    qtbot.wait(300)
    compose_grab(w, w.diagram).save(str(artifacts / f"measured_layout_{size[0]}x{size[1]}.png"))
    assert w.size().toTuple() == size
    assert w.measured.dock.isVisible()
    from tests.layout_check import stacking_marker
    assert overlaps(w, stacking_marker) + cut_texts(w) == []
    area = w.diagram.plots.facts.readout_area                      # T Current box: at 1080 px every row (value,
    if size[1] >= 1080:                                            # measured, Δ) in sight without scrolling
        assert area.verticalScrollBar().maximum() == 0, (area.height(), w.diagram.plots.readout.minimumHeight())
    table = w.measured.dock.table                                  # every metric is readable in its cell
    for c in range(table.columnCount()):
        for r in range(table.rowCount()):
            text = table.item(r, c).text()
            assert table.fontMetrics().horizontalAdvance(text) <= table.columnWidth(c), (text, table.columnWidth(c))


def test_measured_data_without_a_run_is_refused_with_a_message(qtbot, tmp_path, stand):
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    assert not w.measured.open(stand[1], EXAMPLE_MAP)
    assert w.last_error == f"{stand[1]}: open a run first: measured data is compared with the open run"
    assert w.isVisible() and w.measured.dock.rows() == []
