"""At 1280x720, 1366x768 and 1920x1080, on a probe-cone run, a peripheral run and a run with a measured record over it,
paused and playing: the window is no larger than asked, the transport bar and the docks are in it, no widget is drawn
over a sibling, no label or button text is cut, and the plots' tick labels stay apart and inside their axes."""
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QRect, QSettings  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402

from tests.layout_check import cut_texts, painted, widget_problems  # noqa: E402
from tests.measured_truth import EXAMPLE_MAP, write_measured_csv  # noqa: E402

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
SIZES = [(1280, 720), (1366, 768), (1920, 1080)]
KINDS = ("probe_cone", "peripheral", "measured")


def _wait(app, ms: int):
    import time
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)


@pytest.fixture(scope="module", params=KINDS)
def shown(request, qapp, tmp_path_factory):
    """A window per kind of run (resized to each size by the tests), with default settings."""
    from app.main_window import MainWindow
    kind = request.param
    d = tmp_path_factory.mktemp(kind)
    w = MainWindow(QSettings(str(d / "settings.ini"), QSettings.IniFormat))
    w.resize(1280, 720)
    w.show()
    run = {"probe_cone": SAMPLES / "expert_existing.h5", "peripheral": SAMPLES / "peripheral" / "idss_envelope.h5",
           "measured": SAMPLES / "central_impact_20t.h5"}[kind]
    assert w.open_run(run), w.last_error
    if kind == "measured":
        record = write_measured_csv(run, d / "stand.csv", 0.1374, end_margin=0.5)
        assert w.measured.open(record, EXAMPLE_MAP), w.last_error
        w.measured.act_diff.setChecked(True)
    w.diagram.ensure_analysed()
    yield kind, w
    w.playback.pause()
    w.close()
    w.deleteLater()


def tick_text_problems(pane) -> list[str]:
    """Tick labels of every plot axis that overlap each other or stick out of their axis (pyqtgraph's draw specs:
    the texts and rects it paints)."""
    out = []
    img = QImage(8, 8, QImage.Format_ARGB32)
    for i, plot in enumerate(getattr(pane, "plots", [])):
        for side in ("left", "bottom"):
            ax = plot.getAxis(side)
            if not ax.isVisible() or not ax.style.get("showValues", True):
                continue
            p = QPainter(img)
            try:
                specs = ax.generateDrawSpecs(p)
            finally:
                p.end()
            if not specs:
                continue
            texts = [(r, t) for r, _, t in specs[2]]
            box = ax.boundingRect().adjusted(-1, -1, 1, 1)
            for k, (r, t) in enumerate(texts):
                if not box.contains(r):
                    out.append(f"plot {i} {side} tick {t!r} at {r.getRect()} outside its axis {box.getRect()}")
                for r2, t2 in texts[k + 1:]:
                    if r.intersects(r2):
                        out.append(f"plot {i} {side} ticks {t!r} and {t2!r} overlap")
    return out


def in_window(w, widget) -> bool:
    r = QRect(widget.mapTo(w, widget.rect().topLeft()), widget.size())
    return widget.isVisible() and w.rect().contains(r)


def check(w, size) -> list[str]:
    d = w.diagram
    problems = widget_problems(w) + tick_text_problems(d.plots) + painted(d.scene) + painted(d.devices)
    if w.size().toTuple() != size:
        problems.append(f"window is {w.size().toTuple()}, asked {size}")
    bar = d.play_button.parentWidget()
    dock = next(k for k in (w.events_dock, w.measured.dock)          # (tabified: one of them shows)
                if k.isVisible() and not k.visibleRegion().isEmpty())
    for name, widget in (("transport bar", bar), ("time slider", d.slider), ("right dock", dock)):
        if not in_window(w, widget):
            problems.append(f"{name} not inside the window")
    if dock.width() > 0.3 * w.width():
        problems.append(f"the right dock takes {dock.width() / w.width():.0%} of the width")
    return problems


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nothing_overlaps_or_is_cut_paused_and_playing(qapp, shown, size, artifacts):
    kind, w = shown
    w.resize(*size)
    w.playback.seek_time(min(2.0, w.run.t_final / 2))
    _wait(qapp, 150)
    w.grab_image().save(str(artifacts / f"screens_{kind}_{size[0]}x{size[1]}_paused.png"))
    assert check(w, size) == [], "paused"
    w.playback.play()
    _wait(qapp, 400)
    assert w.playback.playing
    problems = check(w, size)
    w.grab_image().save(str(artifacts / f"screens_{kind}_{size[0]}x{size[1]}_playing.png"))
    w.playback.pause()
    assert problems == [], "playing"


def test_every_frames_scene_readouts_fit_their_labels_without_an_event_loop_turn(qapp, shown):
    """Each frame's new text (the base loads wrap to the pane's width, so a line can grow by a digit or a sign) has
    the room it needs as soon as it is set: a label whose hint grew was shown cut until the next event-loop turn
    (the 1280x720 peripheral screenshot while playing: 'base: Fx …' needs 599 px, has 585)."""
    kind, w = shown
    w.resize(1280, 720)
    _wait(qapp, 100)
    scene = w.diagram.scene
    cut = []
    for i in range(0, min(w.run.time.size, 1500), 3):
        scene.show_frame(i)                       # no events between the frames
        cut += [(i, c) for c in cut_texts(scene)]
    assert cut == []
