"""Contact-event inspection in the main window under Xvfb: N / P, the events dock, lanes, force labels, verdict.

Runs on the hand-built known-contacts run (tests/contact_run.py), so every expectation comes from the
records written, not from the code under test.
"""
import csv

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("vtkmodules")

from PySide6.QtCore import QPoint, QPointF, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit  # noqa: E402

from app.cli import SYNTHETIC_RUN  # noqa: E402
from tests.gui_util import main_window, make_active, module_window  # noqa: E402
from tests import contact_run  # noqa: E402
from tests.synthetic_run import PAIRS  # noqa: E402

PARTS = {p.name: (p.part_a, p.part_b) for p in PAIRS}


@pytest.fixture(scope="module")
def known_path(tmp_path_factory):
    return contact_run.make(tmp_path_factory.mktemp("gui") / "known.h5")


def make_window(qtbot, tmp_path, run):
    return main_window(qtbot, tmp_path / "settings.ini", run, size=(1700, 1000))


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory, known_path):
    """One window on the known-contacts run for the module's tests that only drive it (building one is the costly
    part), with what a new one shows."""
    w = module_window(request, tmp_path_factory, known_path, size=(1700, 1000), activate=True)
    yield w, fresh_state(w)
    w.close()


def fresh_state(w) -> dict:
    """What a test may change and a new window shows: frame, playing, dock rows, sort and filter, toggles."""
    d, dock = w.diagram, w.events_dock
    header = dock.view.horizontalHeader()
    return {"frame": w.playback.frame, "playing": w.playback.playing, "rows": dock.shown_rows(),
            "sort": (header.sortIndicatorSection(), header.sortIndicatorOrder()), "count": dock.count_label.text(),
            "pair": dock.pair_box.currentData(), "min": dock.min_force_box.value(), "red": red_parts(d.scene),
            "toggles": [a.isChecked() for a in (d.act_scrolling, d.act_show_lanes, d.act_show_forces)]}


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window set back to how a new window shows the run (checked, so no test sees another's state)."""
    w, fresh = shared_window
    d, dock = w.diagram, w.events_dock
    w.playback.pause()
    dock.set_filter(fresh["pair"] or "", fresh["min"])
    dock.view.sortByColumn(*fresh["sort"])
    for a, on in zip((d.act_scrolling, d.act_show_lanes, d.act_show_forces), fresh["toggles"]):
        a.setChecked(on)
    w.playback.seek_frame(fresh["frame"])
    make_active(qtbot, w)
    QApplication.processEvents()
    assert fresh_state(w) == fresh
    return w


def active_pairs(frame):
    """Pairs touching at a frame, from the records the test run was built from."""
    return {pair for pair, f, _, _ in contact_run.SHAPES if f[frame] > 0}


def expected_red(frame):
    return set().union(*(PARTS[p] for p in active_pairs(frame))) if active_pairs(frame) else set()


def red_parts(scene):
    return {n for n in scene.part_names() if scene.part_is_red(n)}


def test_n_and_p_walk_the_events_in_order_with_the_right_parts_red(window, qtbot):
    d, pb, scene, dock = window.diagram, window.playback, window.diagram.scene, window.events_dock
    starts = sorted({k.first for k in contact_run.EXPECTED})
    assert red_parts(scene) == set()
    seen = []
    for s in starts:
        qtbot.keyClick(window, Qt.Key_N)
        assert pb.frame == s
        seen.append(pb.frame)
        starting = {k.pair for k in contact_run.EXPECTED if k.first == s}
        assert red_parts(scene) == expected_red(s), f"frame {s}"
        for pair in starting:                              # the pair whose contact starts here is red
            assert set(PARTS[pair]) <= red_parts(scene)
        assert set(scene.force_arrows()) == active_pairs(s)
        # the dock marks the events in contact at this frame; the lanes' yellow line is at T Current
        assert {dock.table.pair(r) for r in dock.current_rows()} == active_pairs(s)
        assert d.lanes.cursor.value() == pytest.approx(window.run.time[s])
    assert seen == starts
    qtbot.keyClick(window, Qt.Key_N)                       # past the last event: stays
    assert pb.frame == starts[-1]
    back = []
    for _ in starts[:-1]:
        qtbot.keyClick(window, Qt.Key_P)
        back.append(pb.frame)
        assert red_parts(scene) == expected_red(pb.frame)
    assert back == starts[-2::-1]
    # between two events N goes to the next start, P to the previous
    pb.seek_frame(1200)
    assert red_parts(scene) == set()
    qtbot.keyClick(window, Qt.Key_P)
    assert pb.frame == 981 and red_parts(scene) == {"probe_head", "socket", "rollers", "receiving_cone"}


def test_dock_sorts_filters_and_double_click_seeks(window, qtbot):
    dock, pb = window.events_dock, window.playback
    exp = contact_run.EXPECTED
    assert dock.isVisible() and dock.proxy.rowCount() == len(exp)
    assert [dock.table.pair(r) for r in dock.shown_rows()] == [k.pair for k in exp]      # by start
    assert dock.count_label.text() == f"{len(exp)} of {len(exp)}"
    header = dock.view.horizontalHeader()
    x = header.sectionViewportPosition(4) + header.sectionSize(4) // 2
    qtbot.mouseClick(header.viewport(), Qt.LeftButton, pos=QPoint(x, header.height() // 2))
    peaks = [dock.table.peak_force[r] for r in dock.shown_rows()]
    assert peaks == sorted(peaks) or peaks == sorted(peaks, reverse=True)
    assert sorted(peaks) == pytest.approx(sorted(k.peak for k in exp), rel=1e-12)
    assert peaks != pytest.approx([k.peak for k in exp])
    qtbot.mouseClick(header.viewport(), Qt.LeftButton, pos=QPoint(x, header.height() // 2))
    assert [dock.table.peak_force[r] for r in dock.shown_rows()] == peaks[::-1]
    assert dock.cell(0, 4) in (f"{max(peaks):.1f}", f"{min(peaks):.1f}")
    # filter: limiter / cone only, then only its contacts of at least 1 kN
    dock.pair_box.setCurrentIndex(dock.pair_box.findData("limiter_cone"))
    assert sorted(dock.table.peak_force[r] for r in dock.shown_rows()) == pytest.approx([900.0, 1200.0, 1500.0])
    dock.min_force_box.setValue(1000.0)
    assert sorted(dock.table.peak_force[r] for r in dock.shown_rows()) == pytest.approx([1200.0, 1500.0])
    assert dock.count_label.text() == f"2 of {len(exp)}"
    dock.set_filter("", 1000.0)
    assert {dock.table.pair(r) for r in dock.shown_rows()} == {k.pair for k in exp if k.peak >= 1000.0}
    # double-click the 1200 N limiter contact: every pane goes to its start
    row = next(i for i, r in enumerate(dock.shown_rows()) if dock.table.peak_force[r] == pytest.approx(1200.0))
    rect = dock.view.visualRect(dock.proxy.index(row, 0))
    qtbot.mouseClick(dock.view.viewport(), Qt.LeftButton, pos=rect.center())     # a double click is a press,
    assert pb.frame != k_first(1200.0)                                            # a release (no seek yet) ...
    qtbot.mouseDClick(dock.view.viewport(), Qt.LeftButton, pos=rect.center())    # ... and the double click
    k = next(k for k in exp if k.peak == 1200.0)
    assert pb.frame == k.first and window.diagram.scene.current_frame == k.first
    assert window.diagram.scene.part_is_red("limiter")


def k_first(peak):
    return next(k.first for k in contact_run.EXPECTED if k.peak == peak)


def test_csv_export_from_the_file_menu(window, qtbot, tmp_path):
    dock = window.events_dock
    dock.set_filter("head_cone", 0.0)
    out = tmp_path / "head_cone.csv"

    def fill_dialog():
        dlg = QApplication.activeModalWidget()
        if isinstance(dlg, QFileDialog):                   # type the path into the file name box and press Enter
            edit = dlg.findChild(QLineEdit, "fileNameEdit")
            edit.setText(str(out))
            qtbot.keyClick(edit, Qt.Key_Return)

    QTimer.singleShot(300, fill_dialog)
    window.act_export_events.trigger()
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    head = [k for k in contact_run.EXPECTED if k.pair == "head_cone"]
    assert [r["pair"] for r in rows] == ["head_cone"] * len(head)                 # the rows shown in the dock
    assert [float(r["start_s"]) for r in rows] == pytest.approx([k.first * contact_run.DT for k in head])
    assert [float(r["impulse_Ns"]) for r in rows] == pytest.approx([k.impulse for k in head])
    assert [r["rebound"] for r in rows] == ["yes", "no"]
    assert dock.last_export == str(out)


def test_lanes_bars_colours_link_and_click(window, qtbot):
    d, pb, run = window.diagram, window.playback, window.run
    lanes, plots = d.lanes, d.plots
    exp = contact_run.EXPECTED
    assert lanes.pairs == list(run.contact_pairs)
    opts = lanes.bars.opts
    np.testing.assert_array_equal(opts["x0"], [k.first * contact_run.DT for k in exp])
    lane_y = [lanes.lane_of(k.pair) for k in exp]
    np.testing.assert_allclose(np.asarray(opts["y0"]) + 0.32, lane_y)
    colors = lanes.colors()
    hottest = int(np.argmax([k.peak for k in exp]))
    coldest = int(np.argmin([k.peak for k in exp]))
    assert colors[hottest] == (255, 40, 30)                 # the largest peak is red, the smallest bluish
    assert colors[coldest][2] > colors[coldest][0]
    # the lanes share the plots' time axis
    for t in (0.3, 2.1, 3.7):
        pb.seek_time(t)
        assert lanes.getViewBox().viewRange()[0] == pytest.approx(list(plots.x_range()), abs=1e-9)
    window.diagram.act_scrolling.setChecked(False)
    assert lanes.getViewBox().viewRange()[0] == pytest.approx([0.0, 4.0], abs=1e-9)
    # clicking in a lane goes to that time
    vb = lanes.getViewBox()
    pt = vb.mapViewToScene(QPointF(2.5, lanes.lane_of("limiter_cone")))
    view_pt = plots.glw.mapFromScene(pt)
    qtbot.mouseClick(plots.glw.viewport(), Qt.LeftButton, pos=QPoint(view_pt.x(), view_pt.y()))
    assert abs(pb.t_current - 2.5) < 0.02
    # the lanes sit under the plots and can be switched off from the View menu
    assert lanes.sceneBoundingRect().top() >= plots.plots[-1].sceneBoundingRect().bottom() - 1
    d.act_show_lanes.setChecked(False)
    assert not lanes.isVisible() and len(plots.plots) == 4
    d.act_show_lanes.setChecked(True)
    assert lanes.isVisible()


def test_force_vectors_and_magnitude_labels_toggle(window, qtbot):
    d, pb, scene = window.diagram, window.playback, window.diagram.scene
    f = 1000                                       # the head_socket peak (4 kN) while the rollers touch (300 N)
    pb.seek_frame(f)
    labels = scene.force_labels()
    assert set(labels) == {"head_socket", "roller_cone"}
    force = window.run.contact_state(f)
    for pair, (text, at) in labels.items():
        mag = float(np.linalg.norm(force[pair][1]))
        assert text == (f"{mag / 1000:.2f} kN" if mag >= 1000 else f"{mag:.0f} N")
        np.testing.assert_allclose(at, force[pair][2])
    assert labels["head_socket"][0] == f"{4000 * np.hypot(1, 0.3) / 1000:.2f} kN"
    qtbot.keyClick(window, Qt.Key_F)
    assert not d.act_show_forces.isChecked() and scene.force_arrows() == {} and scene.force_labels() == {}
    assert scene.part_is_red("socket")                     # contacts stay red without the vectors
    qtbot.keyClick(window, Qt.Key_F)
    assert set(scene.force_labels()) == {"head_socket", "roller_cone"}


def test_verdict_line_in_the_bottom_pane(window):
    text = window.diagram.plots.verdict_text()
    assert text == ("PASS: captured at 1.500 s; peak base loads within limits; damper strokes within range; "
                    "no latch release")
    assert "#66dd77" in window.diagram.plots.fact_labels["Verdict"].styleSheet()


def test_verdict_fail_and_bad_criteria_keep_the_app_up(qtbot, tmp_path):
    fx = np.zeros(contact_run.N)
    fx[3000] = 20000.0
    w = make_window(qtbot, tmp_path, contact_run.make(tmp_path / "heavy.h5", overrides={"Fx": fx}))
    plots = w.diagram.plots
    assert plots.verdict_text().startswith("FAIL: peak |Fx| 20.00 kN > 10.00 kN at 3.000 s")
    assert "#ff5a4a" in plots.fact_labels["Verdict"].styleSheet()
    bad = tmp_path / "bad.toml"
    bad.write_text("[base_loads]\nFx = -1\n")
    w.diagram.set_criteria(bad)
    assert plots.verdict_text() == f"verdict unavailable: {bad}: base_loads.Fx: limit must be positive, found -1.0"
    assert w.isVisible() and len(w.diagram.events) == len(contact_run.EXPECTED)


def test_screenshot_events_dock_and_lanes(qtbot, tmp_path, artifacts):
    """The bundled run at the limiter chatter: dock, lanes and force labels, for people to look at."""
    w = make_window(qtbot, tmp_path, SYNTHETIC_RUN)
    d = w.diagram
    d.act_scrolling.setChecked(False)                      # whole run in the plots and lanes
    frames = d.events.start_frames()
    limiter = d.events.start_frame[np.asarray(d.events.pair_index) == d.events.pairs.index("limiter_cone")]
    w.playback.seek_frame(int(limiter[3]))
    assert int(limiter[3]) in frames and d.scene.part_is_red("limiter")
    qtbot.wait(50)
    img = w.grab_image()
    assert img.save(str(artifacts / "events_dock_lanes.png"))
    assert (artifacts / "events_dock_lanes.png").stat().st_size > 20000


def test_many_pairs_share_lanes_by_kind_and_stay_readable(qtbot, tmp_path):
    """A real expert run touches ~20 of its 24 pairs: numbered siblings (latch_slot_1..4, load_pad_1..6, roller_1..3)
    share one lane, labels fit the axis, and the lanes get their height (up to half the plots area) once the
    events are known."""
    from app.cli import DEFAULT_RUN
    w = main_window(qtbot, tmp_path / "s.ini", DEFAULT_RUN)
    lanes, plots = w.diagram.lanes, w.diagram.plots
    touched = {w.diagram.events.pairs[int(i)] for i in w.diagram.events.pair_index}
    assert len(touched) > 8
    assert len(lanes.lanes) < len(touched)
    assert not any(k[-1].isdigit() for k in lanes.lanes), lanes.lanes
    slots = [p for p in touched if p.startswith("latch_slot_")]
    assert len(slots) >= 2 and len({lanes.lane_of(p) for p in slots}) == 1
    labels = [t for _, t in lanes.getAxis("left")._tickLevels[0]]
    assert len(labels) == len(lanes.lanes) and all(len(t) <= 20 for t in labels), labels
    qtbot.waitUntil(lambda: lanes.sceneBoundingRect().height() >= min(lanes.height_px(), plots.glw.height() // 2) - 2,
                    timeout=3000)
    bars = lanes.bars.opts
    assert len(bars["x0"]) == len(w.diagram.events)


def test_closing_the_window_waits_for_the_analysis_thread(qtbot, tmp_path, known_path):
    """Closing during the contact-event analysis lets it finish before the run file is closed."""
    w = main_window(qtbot, tmp_path / "settings.ini")
    assert w.open_run(known_path), w.last_error
    w.diagram._analyse_in_thread(w.run)
    jobs = list(w.diagram._analysis_jobs.values())
    assert jobs and jobs[0]._thread.is_alive()
    w.close()
    assert not jobs[0]._thread.is_alive()
    assert jobs[0].result[0] is not None, jobs[0].result[2]   # the events were computed, not cut off
