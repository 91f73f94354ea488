"""File → Export figure…: the report figure of the plots shown (viewer/report_figure.py, matplotlib), in one step;
the old screen-grab exports (826x49 px strips) are gone from the menus."""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PIL import Image  # noqa: E402

from tests.gui_util import module_window  # noqa: E402

pytestmark = pytest.mark.gui
SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory):
    """One 1280x720 window on the expert run for the module's tests."""
    w = module_window(request, tmp_path_factory, SAMPLES / "expert_existing.h5", size=(1280, 720))
    yield w
    w.close()


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window as each test starts it: Fx and probe_stroke plotted at 12 s, the figure settings and the
    plots pane's own figure spec as built (a test may have set them)."""
    w = shared_window
    w.diagram.plots.__dict__.pop("figure_spec", None)
    for k in ("figure/size", "figure/dpi", "figure/theme"):
        w.settings.remove(k)
    w.diagram.plots.set_plotted(["Fx", "probe_stroke"])
    w.playback.seek_time(12.0)
    qtbot.wait(50)
    return w


def test_export_figure_draws_the_plots_shown_at_report_size(window, tmp_path):
    from app.export_actions import export_figure_dialog, figure_spec_of
    spec = figure_spec_of(window)
    rng = window.diagram.plots.x_range()
    assert spec.plots == [["Fx"], ["probe_stroke"]] and spec.xy == [] and spec.theme == "light"
    assert spec.t == pytest.approx(rng) and spec.at == pytest.approx(12.0)
    out = export_figure_dialog(window, tmp_path / "fig.png")
    im = np.asarray(Image.open(out).convert("RGB"))
    assert im.shape[:2] == (1417, 1890) and (im[2, 2] == 255).all()     # 160x120 mm at 300 dpi, on white
    assert "exported" in window.statusBar().currentMessage()
    assert export_figure_dialog(window, tmp_path / "fig.svg").read_text().startswith("<?xml")
    assert export_figure_dialog(window, tmp_path / "fig.pdf").read_bytes().startswith(b"%PDF")


def test_the_plots_panes_own_figure_spec_is_used_where_it_has_one(window, tmp_path):
    from app.export_actions import export_figure_dialog, figure_spec_of
    pane = window.diagram.plots
    own = {"plots": [["Fx", "Fy"]], "xy": [("probe_stroke", "Fx")], "t": (5.0, 15.0)}
    pane.figure_spec = lambda: own            # (the plots pane's multi-channel plots and XY plots say so)
    spec = figure_spec_of(window)
    assert spec.plots == [["Fx", "Fy"]] and spec.xy == [("probe_stroke", "Fx")] and spec.t == (5.0, 15.0)
    assert export_figure_dialog(window, tmp_path / "own.png").is_file()


def test_size_dpi_and_theme_come_from_the_settings(window, tmp_path):
    from app.export_actions import export_figure_dialog
    for k, v in (("figure/size", "85x60mm"), ("figure/dpi", 200), ("figure/theme", "dark")):
        window.settings.setValue(k, v)
    im = np.asarray(Image.open(export_figure_dialog(window, tmp_path / "small.png")).convert("RGB"))
    assert im.shape[:2] == (round(60 / 25.4 * 200), round(85 / 25.4 * 200)) and im[2, 2].max() < 40   # dark ground


def test_a_figure_that_cannot_be_written_says_why(window, tmp_path):
    from app.export_actions import export_figure_dialog
    assert export_figure_dialog(window, tmp_path / "nowhere" / "fig.png") is None
    assert "nowhere" in window.last_error and "cannot be written" in window.last_error


def test_the_menus_offer_the_figure_not_screen_grabs(window):
    texts = [a.text() for a in window._file_menu().actions()]
    assert window.act_export_figure.text() in texts
    assert not any("as PNG" in t or "as SVG" in t for t in texts), texts
    window.measured.plot_menu(0, window.diagram.plots.mapToGlobal(window.diagram.plots.rect().center()).toPointF())
    menu = [a.text() for a in window.measured.menu.actions()]
    assert window.act_export_figure.text() in menu and not any("as PNG" in t for t in menu), menu
    window.measured.menu.close()
