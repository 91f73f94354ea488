"""Contact lanes' force scale (a colour ramp in a row of its own, never over a bar) and the events dock's go to the
peak of an event / go to time, through the playback model (issue 32)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QTimer, Qt  # noqa: E402
from PySide6.QtGui import QColor  # noqa: E402
from PySide6.QtWidgets import QApplication, QInputDialog  # noqa: E402

from tests.gui_util import main_window, make_active, module_window  # noqa: E402
from viewer.contact_lanes import FORCE_COLORS  # noqa: E402
from viewer.plots.pg_internals import bar_drawing  # noqa: E402

pytestmark = pytest.mark.gui
EXPERT = Path(__file__).resolve().parent.parent / "sample_runs" / "expert_existing.h5"


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory):
    """One 1600x1000 window on the expert run for the module's tests (each leaves it as it found it)."""
    w = module_window(request, tmp_path_factory, EXPERT, size=(1600, 1000), activate=True)
    yield w
    w.close()


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window, active again (the keys go to it; another test's window may have taken the focus)."""
    make_active(qtbot, shared_window)
    return shared_window


def test_force_scale_is_under_every_lane_bar(window, qtbot):
    d = window.diagram
    lanes = d.lanes
    vb = lanes.getViewBox()
    for scrolling, t in ((True, 2.5), (True, 24.7), (True, 390.0), (False, 24.7)):
        d.act_scrolling.setChecked(scrolling)
        window.playback.seek_time(t)
        qtbot.wait(30)
        legend = lanes.force_legend.sceneBoundingRect()
        assert legend.width() > 40
        assert legend.top() >= vb.sceneBoundingRect().bottom() - 1e-6, (t, legend, vb.sceneBoundingRect())
        axis = lanes.getAxis("bottom")
        assert not legend.intersects(axis.label.sceneBoundingRect())           # "time (s)" stays readable
        assert lanes.sceneBoundingRect().contains(legend)
        rects, _, _ = bar_drawing(lanes.bars)
        for r in rects:
            assert not vb.mapViewToScene(r).boundingRect().intersects(legend), (t, r)
    d.act_scrolling.setChecked(True)


def test_force_scale_keeps_clear_of_the_time_label_in_a_narrow_window(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", EXPERT, size=(1280, 720))
    lanes = w.diagram.lanes
    qtbot.wait(50)
    legend = lanes.force_legend.sceneBoundingRect()
    label = lanes.getAxis("bottom").label.sceneBoundingRect()
    assert legend.left() >= label.right() + 4, (legend, label)
    assert lanes.force_legend.text.endswith("kN") and lanes.sceneBoundingRect().contains(legend)
    plots = w.diagram.plots                      # the plots scroll here: a labelled time strip stays in sight under
    strip, glw = plots.time_strip, plots.glw     # them (old main: the time axis scrolled out of sight)
    assert glw.minimumHeight() > plots.plots_scroll.height() and strip.isVisible()
    vb = plots.plots[0].getViewBox()
    assert strip.axis.linkedView() is vb and strip.axis.labelText == "time"
    box = vb.sceneBoundingRect()
    left = glw.mapToGlobal(glw.mapFromScene(box.topLeft())).x()
    ax = strip.axis.sceneBoundingRect()
    assert abs(strip.mapToGlobal(strip.mapFromScene(ax.topLeft())).x() - left) <= 1
    assert abs(ax.width() - box.width()) <= 1
    assert strip.mapTo(w, strip.rect().bottomLeft()).y() <= w.diagram.mapTo(w, w.diagram.rect().bottomLeft()).y()


def test_force_scale_is_a_colour_ramp(window, qtbot):
    lanes = window.diagram.lanes
    plots = window.diagram.plots
    qtbot.wait(50)
    bar = plots.plots_scroll.verticalScrollBar()     # the plots scroll here (1600x1000): the ramp at their bottom
    bar.setValue(bar.maximum())
    qtbot.wait(30)
    legend_box = lanes.force_legend.sceneBoundingRect()   # inside the plots' view, not under its bottom edge
    assert legend_box.bottom() <= plots.glw.height(), (legend_box, plots.glw.height())
    img = plots.grab().toImage()
    legend = lanes.force_legend
    ramp = legend.mapRectToScene(legend.ramp_rect())
    view = plots.glw if hasattr(plots, "glw") else None
    at = (view.mapFromScene(ramp).boundingRect() if view is not None else ramp.toRect())
    top_left = view.mapTo(plots, at.topLeft()) if view is not None else at.topLeft()
    y = top_left.y() + at.height() // 2
    row = [QColor(img.pixel(top_left.x() + k, y)) for k in range(2, at.width() - 2)]
    distinct = {c.rgb() for c in row}
    assert len(distinct) >= 12, len(distinct)
    first, last = row[0], row[-1]
    assert max(abs(a - b) for a, b in zip(first.getRgb()[:3], FORCE_COLORS[0])) <= 30
    assert max(abs(a - b) for a, b in zip(last.getRgb()[:3], FORCE_COLORS[-1])) <= 30
    assert lanes.force_legend.text.startswith("peak normal force 0") and lanes.force_legend.text.endswith("kN")
    bar.setValue(0)


def test_go_to_the_peak_of_an_event_and_its_end(window, qtbot):
    dock, pb, run = window.events_dock, window.playback, window.run
    t = dock.table
    row = int(np.nanargmax(t.peak_force))
    dock.view.selectRow(dock.proxy.mapFromSource(dock.model.index(row, 0)).row())
    pb.seek_frame(0)
    qtbot.keyClick(window, Qt.Key_K)                     # K: the selected event's peak
    assert t.start_frame[row] <= pb.frame <= max(t.start_frame[row], t.end_frame[row])
    assert abs(pb.t_current - t.peak_time[row]) <= run.meta.output_step + 1e-9
    assert pb.t_current <= t.peak_time[row] + 1e-9
    dock.view.clearSelection()                           # nothing selected: the event at T Current
    pb.seek_frame(int(t.start_frame[row]))
    assert dock.go_to_peak() and abs(pb.t_current - t.peak_time[row]) <= run.meta.output_step + 1e-9
    assert dock.go_to_end(row) and pb.frame in (int(t.end_frame[row]) - 1, int(t.end_frame[row]))


def test_go_to_time_from_the_context_menu_and_ctrl_g(window, qtbot):
    dock, pb = window.events_dock, window.playback
    idx = dock.proxy.index(3, 0)
    dock._context_menu(dock.view.visualRect(idx).center())
    texts = [a.text() for a in dock.context_menu.actions() if a.text()]
    assert texts[:3] == ["Go to the &start of this event", "Go to the &peak of this event",
                         "Go to the &end of this event"] and "&Go to time…" in texts
    dock.context_menu.close()
    dock.go_to_time(123.4567)
    assert abs(pb.t_current - 123.4567) <= window.run.meta.output_step
    with pytest.raises(ValueError, match="outside the run"):
        dock.go_to_time(1e6)

    def answer():
        dlg = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QInputDialog) and w.isVisible())
        dlg.setDoubleValue(42.0)
        dlg.accept()
    QTimer.singleShot(200, answer)
    qtbot.keyClick(window, Qt.Key_G, Qt.ControlModifier)
    assert abs(pb.t_current - 42.0) <= window.run.meta.output_step
