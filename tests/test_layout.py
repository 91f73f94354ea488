"""What the user sees must be true: at 1280x720, 1600x1000 and 1920x1080 no widget is drawn over a sibling, no
label, button, group-box title or painted name is cut (a shortened one keeps its whole text in a tooltip), and
every plotted variable has its value in the T Current box."""
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtGui import QFontMetricsF  # noqa: E402

from tests.gui_util import module_window  # noqa: E402
from tests.layout_check import painted, text_size, widget_problems  # noqa: E402

pytestmark = pytest.mark.gui

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
SIZES = [(1280, 720), (1600, 1000), (1920, 1080)]
FIVE = ["Fx", "Fy", "Fz", "probe_stroke", "Mx"]


@pytest.fixture(scope="module", params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def size(request):
    return request.param


@pytest.fixture(scope="module")
def window(qapp, request, tmp_path_factory, size):
    """One window per size on the expert run compared with the modified dampers, for all the module's tests at that
    size (the tests run size by size; the scene titles' test, which resizes the scene, runs last)."""
    from pytestqt.qtbot import QtBot
    w = module_window(request, tmp_path_factory, SAMPLES / "expert_existing.h5", size=size)
    assert w.compare_with(SAMPLES / "expert_modified_dampers.h5")
    for key in ("scene", "devices", "plots"):
        assert w.diagram.pane(key).isVisible()
    QtBot(request).wait(200)
    yield w
    w.close()


def test_main_window_texts_fit_and_nothing_overlaps(qtbot, window, size, artifacts):
    from viewer.diagram import compose_grab
    d = window.diagram
    d.plots.set_plotted(FIVE)
    qtbot.wait(200)
    compose_grab(window, d).save(str(artifacts / f"layout_main_{size[0]}x{size[1]}.png"))
    assert window.size().toTuple() == size            # nothing asks for more width or height than the window has
    assert widget_problems(window) == []
    assert painted(d.scene) == []
    assert painted(d.devices) == []
    titles = [t[0] for t in d.scene.label_rects()]
    assert "plane Ld (cone axis, gimbal, probe joint)" in titles and any(t.startswith("ghost: ") for t in titles)


def test_shortened_device_names_have_their_whole_name_as_tooltip(qtbot, window):
    dv = window.diagram.devices
    items = dv.label_rects()
    for name in dv.bar_names():             # each device is named (in full or shortened)
        assert any(full.split(" ")[0] == name for _, full, *_ in items), name
    for shown, full, rect, *_ in items:
        assert shown == full or dv.full_text_at(rect.center()) == full, (shown, full)


def test_every_plotted_value_is_in_the_t_current_box(qtbot, window, size, artifacts):
    p = window.diagram.plots
    p.set_plotted(FIVE)
    window.playback.seek_time(12.0)
    qtbot.wait(200)
    p.grab().save(str(artifacts / f"layout_plots_{size[0]}x{size[1]}.png"))
    assert p.names == FIVE
    label = p.readout.label
    rows = label.text().split("<br>")
    assert len(rows) == len(FIVE)
    for name, row in zip(FIVE, rows):
        assert name in row and p.values()[name] is not None
    need_w, need_h = text_size(label)
    assert label.isVisible() and need_h <= label.contentsRect().height() + 1 and need_w <= label.width() + 1, \
        (need_w, need_h, label.size().toTuple())
    for plot in p.plots:                       # a curve and its ticks get room (the plots scroll where needed)
        assert plot.getViewBox().height() >= 32, plot.getViewBox().height()
        ax = plot.getAxis("left")              # its value labels do not touch
        lo, hi = ax.range
        h = ax.boundingRect().height()
        text_h = QFontMetricsF(ax.style["tickFont"] or ax.font()).height()
        assert ax.tickSpacing(lo, hi, h)[0][0] * h / (hi - lo) >= text_h, (h, lo, hi)
    lanes = window.diagram.lanes                # the contact lanes' names get their lines (they scroll with the plots)
    assert lanes.sceneBoundingRect().height() >= lanes.height_px() - 2, (lanes.sceneBoundingRect(), lanes.height_px())


def test_dialogs_boxes_apart_and_texts_whole(qtbot, window, size, artifacts):
    """Run → New run…, the same dialog as Re-run from T Current, the clip list and the video export dialog."""
    from app.scenario_dialog import ScenarioDialog
    from viewer.clip_dialogs import ClipListDialog, ExportDialog
    run = window.run
    rerun = ScenarioDialog(window, parameters_text=run.parameters_toml, branch_time=12.0, t_end=float(run.time[-1]),
                           source_label=f"{run.path.name}, branching at T Current = 12.0000 s")   # (as Re-run)
    clips, export = ClipListDialog(run, 1.0, parent=window), ExportDialog(run, window.diagram, parent=window)
    for dlg in (rerun, clips, export):
        qtbot.addWidget(dlg)
        dlg.open()
    for name, dlg in (("scenario", window.new_run_dialog()), ("rerun", rerun), ("clips", clips), ("export", export)):
        qtbot.waitExposed(dlg)
        qtbot.wait(50)
        dlg.grab().save(str(artifacts / f"layout_{name}_{size[0]}x{size[1]}.png"))
        assert dlg.height() <= size[1] and dlg.width() <= size[0]
        assert widget_problems(dlg) == [], name
        dlg.reject()


def test_scene_titles_wrap_inside_their_view(qtbot, window):
    """At any scene width the three titles and the ghost caption stay inside their views, one over none."""
    sc = window.diagram.scene
    for width in (700, 1000, 1500):
        sc.resize(width, sc.height())
        qtbot.wait(20)
        assert painted(sc) == [], width
