"""View → Theme applies at once, without a restart: a plot, the scene pane's ground, the devices pane and a dock take
the chosen theme's colours in the same window (and back), read from their pixels (issue 32)."""
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from tests.gui_util import module_window  # noqa: E402
from viewer import style  # noqa: E402

pytestmark = pytest.mark.gui
RUN = Path(__file__).resolve().parent.parent / "sample_runs" / "expert_existing.h5"


def _pixels(widget) -> np.ndarray:
    """The widget as painted (RGB array)."""
    im = widget.grab().toImage().convertToFormat(widget.grab().toImage().Format.Format_RGB888)
    a = np.frombuffer(im.constBits(), np.uint8, im.sizeInBytes()).reshape(im.height(), im.bytesPerLine())
    return a[:, :im.width() * 3].reshape(im.height(), im.width(), 3).astype(int)


def _rgb(colour) -> np.ndarray:
    if isinstance(colour, str):
        return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    c = np.array(colour[:3], float)
    return np.round(c * 255).astype(int) if c.max() <= 1.0 else c.astype(int)


def _share(pixels: np.ndarray, colour) -> float:
    """The share of pixels within 3 levels of `colour`."""
    return float((np.abs(pixels - _rgb(colour)).max(axis=2) <= 3).mean())


@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory, request):
    style.set_theme("dark")
    w = module_window(request, tmp_path_factory, RUN, size=(1366, 768))
    w.playback.seek_time(24.7)
    qapp.processEvents()
    yield w
    w.choose_theme("dark")
    w.close()


@pytest.mark.parametrize("name", ["light", "dark"])
def test_the_theme_chosen_in_the_view_menu_colours_every_pane_and_dock_at_once(window, qapp, name):
    w, d = window, window.diagram
    w.theme_actions[name].trigger()          # View → Theme → Light (then back to Dark): the same window
    for _ in range(5):
        qapp.processEvents()
    pal = style.THEMES[name]
    assert style.theme() == name and w.settings.value("theme") == name and w.isVisible()
    # a plot: its view's ground and its traces in the theme's colours
    plots = _pixels(d.plots.glw)
    assert _share(plots, pal["BACKGROUND"]) > 0.5
    assert [c.opts["pen"].color().name() for c in d.plots.curves[:3]] == list(pal["TRACE_COLORS"][:3])
    assert _share(plots, pal["TRACE_COLORS"][0]) > 0.0005             # Fx's line drawn in it
    assert d.plots.cursors[0].pen.color().name() == pal["CURSOR"]
    # the scene pane's ground (its readout columns) and its readouts' text
    left = _pixels(d.scene._columns[0])
    scene_ground = pal.get("SCENE_BACKGROUND", style.DARK["SCENE_BACKGROUND"]) if name == "light" else \
        style.SCENE_BACKGROUND
    assert _share(left, scene_ground) > 0.6
    assert d.scene._left.label.palette().windowText().color().name() == _hex(style.SCENE_TEXT)
    # the devices pane's ground
    assert _share(_pixels(d.devices), pal["BACKGROUND"]) > 0.4
    # a dock: the events dock's ground and its table's
    dock = _pixels(w.events_dock.widget())
    assert _share(dock, style.WINDOW) > 0.05
    assert _share(_pixels(w.events_dock.view.viewport()), pal["BACKGROUND"]) > 0.3
    # the transport bar and a pane title
    assert _share(_pixels(d.transport), pal["TRANSPORT_BACKGROUND"]) > 0.3
    assert _share(_pixels(w.pane_titles["plots"]), pal["TRANSPORT_BACKGROUND"]) > 0.5


def _hex(rgb) -> str:
    return "#" + "".join(f"{int(round(255 * c)):02x}" for c in rgb)


def test_the_envelope_map_takes_the_theme_at_once(qtbot):
    from viewer.envelope_map import EnvelopeMap
    m = EnvelopeMap()
    qtbot.addWidget(m)
    m.resize(600, 400)
    m.show()
    qtbot.waitExposed(m)
    try:
        for name in ("light", "dark"):
            style.set_theme(name)
            qtbot.wait(20)
            assert _share(_pixels(m.view), style.THEMES[name]["BACKGROUND"]) > 0.5, name
            assert m.plot.getAxis("left").pen().color().name() == style.THEMES[name]["FRAME"]
    finally:
        style.set_theme("dark")
