"""Scene pane (issue 32): force labels never overlap over many frames (window and clip), 2D views zoom, pan and fit,
the peripheral run's 2D views whole at fit, 3D camera presets, no mouse hint in the image, a resize redraws at once."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("vtkmodules")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from solver.runfile import RunFile  # noqa: E402
from viewer.scene_geometry import pose_matrices  # noqa: E402
from viewer.scene_pane import ScenePane  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
EXPERT = ROOT / "sample_runs" / "expert_existing.h5"
PERIPHERAL = ROOT / "sample_runs" / "peripheral" / "central_impact_10t.h5"


@pytest.fixture(scope="module")
def expert():
    r = RunFile(EXPERT)
    yield r
    r.close()


@pytest.fixture(scope="module")
def peripheral():
    r = RunFile(PERIPHERAL)
    yield r
    r.close()


def _pane(qtbot, run, size=(794, 200)):
    """The scene pane at about its size in a 1280x720 window."""
    p = ScenePane()
    qtbot.addWidget(p)
    p.resize(*size)
    p.show()
    qtbot.waitExposed(p)
    p.set_run(run)
    return p


def _force_labels(pane) -> list[tuple]:
    titles = {v.title for v in pane.views.values()}
    return [t for t in pane.label_rects() if t[0] not in titles and not t[0].startswith(("ghost", "legs by"))]


def _overlaps(items) -> list[str]:
    out = []
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if a[5] == b[5] and a[2].intersects(b[2]):
                out.append(f"{a[0]!r} {a[2].getRect()} over {b[0]!r} {b[2].getRect()}")
    return out


@pytest.mark.parametrize("size", [(794, 200), (1088, 270)])
def test_force_labels_never_overlap_over_many_frames(qtbot, expert, size):
    """Every 7th frame from 0.05 s to 40 s of the expert run (up to 10 contacts at once), as playing shows them."""
    p = _pane(qtbot, expert, size)
    seen = crowded = merged = 0
    for f in range(50, expert.frame_at(40.0), 7):
        p.show_frame(f)
        items = p.label_rects()
        assert _overlaps(items) == [], (f, _overlaps(items))
        for _, _, rect, _, _, view in items:
            assert view.contains(rect), (f, rect, view)
        shown = len(p.force_labels())
        for view, labels in p.force_label_places().items():   # every force has its value in every view
            assert _represented(labels) == shown, (f, view, [t for _, t, _, _ in labels])
            seen += len(labels)
            merged += sum(1 for _, t, _, _ in labels if "," in t or " +" in t)
        crowded += shown >= 2
    assert seen > 100 and crowded > 20 and merged > 0


def _represented(labels) -> int:
    """How many forces the labels give: "837 N", "837 N, 802 N", "837 N, 802 N +2", "837 N +3"."""
    n = 0
    for _, text, _, _ in labels:
        head, _, more = text.partition(" +")
        n += 1 + head.count(", ") + (int(more) if more else 0)
    return n


def test_force_labels_of_a_clip_frame_never_overlap(qtbot, expert):
    from viewer.clip_render import DiagramRenderer
    r = DiagramRenderer(expert, (1280, 720))
    try:
        scene = r.diagram.scene
        for t in (0.25, 24.7, 25.3):
            r.render_time(t)
            items = scene.label_rects()
            assert _overlaps(items) == [], (t, _overlaps(items))
            assert not any("drag" in t[0] or "wheel" in t[0] for t in items)     # no mouse hint in a clip
        assert len(_force_labels(scene)) >= 2
        assert not scene.camera_buttons.isVisible()
    finally:
        r.close()


def _wheel(pane, pos: QPoint, notches: int):
    w = pane.vtk_widget
    ev = QWheelEvent(QPointF(pos), QPointF(w.mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 120 * notches),
                     Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(w, ev)


def _world_at(pane, key, pos: QPoint) -> np.ndarray:
    """The world point under a widget pixel, in the view's plane (its depth left out)."""
    ren = pane.views[key].renderer
    h = pane.render_window.GetSize()[1]
    ren.SetDisplayPoint(pos.x(), h - 1 - pos.y(), 0.0)   # (as the widget flips y for VTK)
    ren.DisplayToWorld()
    x, y, z, w = ren.GetWorldPoint()
    p = np.array([x, y, z]) / w
    dop = np.array(ren.GetActiveCamera().GetDirectionOfProjection())
    return p - dop * float(p @ dop)


@pytest.mark.parametrize("key, frac", [("ld", 0.18), ("top", 0.5)])
def test_2d_views_zoom_about_the_pointer_pan_and_fit(qtbot, expert, key, frac):
    p = _pane(qtbot, expert, (1200, 400))
    p.show_frame(1000)
    cam = p.views[key].camera
    fit_scale, fit_focus = cam.GetParallelScale(), np.array(cam.GetFocalPoint())
    at = QPoint(int(frac * p.vtk_widget.width()) + 30, 150)
    before = _world_at(p, key, at)
    _wheel(p, at, 2)
    assert cam.GetParallelScale() == pytest.approx(fit_scale / 1.25 ** 2)
    np.testing.assert_allclose(_world_at(p, key, at), before, atol=1e-6)      # the point under the pointer stays
    other = "top" if key == "ld" else "ld"
    assert p.views[other].camera.GetParallelScale() == pytest.approx(fit_scale)
    w = p.vtk_widget
    focus = np.array(cam.GetFocalPoint())
    QTest.mousePress(w, Qt.LeftButton, Qt.NoModifier, at)
    for k in range(1, 6):
        QTest.mouseMove(w, at + QPoint(8 * k, 0))
    QTest.mouseRelease(w, Qt.LeftButton, Qt.NoModifier, at + QPoint(40, 0))
    moved = np.array(cam.GetFocalPoint()) - focus
    assert np.linalg.norm(moved) == pytest.approx(40 * 2 * cam.GetParallelScale() / p.render_window.GetSize()[1],
                                                  rel=0.05)
    p.resize(1100, 380)                                  # the zoom is kept over a resize
    qtbot.wait(20)
    assert p.view_zoom[key] == pytest.approx(1.25 ** 2)
    QTest.mouseDClick(w, Qt.LeftButton, Qt.NoModifier, at)
    assert p.view_zoom[key] == 1.0
    np.testing.assert_allclose(cam.GetFocalPoint(), fit_focus, atol=1e-9)
    p.resize(1200, 400)
    qtbot.wait(20)
    assert cam.GetParallelScale() == pytest.approx(fit_scale)


@pytest.mark.parametrize("size", [(794, 200), (700, 400), (1400, 330)])
def test_peripheral_2d_views_show_every_part_whole_at_fit(qtbot, peripheral, size):
    p = _pane(qtbot, peripheral, size)
    h = p.render_window.GetSize()[1]
    for f in (0, peripheral.frame_at(0.5), peripheral.n_frames // 2):
        p.show_frame(f)
        p.vtk_widget.settle()
        pos, q = peripheral.poses(f)
        mats = pose_matrices(pos, q)
        pts = np.concatenate([g.points @ mats[peripheral.bodies.index(g.body)][:3, :3].T
                              + mats[peripheral.bodies.index(g.body)][:3, 3] for g in peripheral.geometry.values()])
        for key in ("ld", "top"):
            ren = p.views[key].renderer
            x0, y0, x1, y1 = ren.GetViewport()
            w = p.render_window.GetSize()[0]
            for pt in pts:
                ren.SetWorldPoint(*pt, 1.0)
                ren.WorldToDisplay()
                dx, dy, _ = ren.GetDisplayPoint()
                assert x0 * w <= dx <= x1 * w and y0 * h <= dy <= y1 * h, (key, f, pt, dx, dy)


def test_3d_camera_presets(qtbot, expert):
    p = _pane(qtbot, expert, (1200, 400))
    cam = p.views["3d"].camera
    expect = {"front": (1, 0, 0), "side": (0, 1, 0), "top": (0, 0, -1)}
    for name, dop in expect.items():
        p.preset_buttons[name].click()
        np.testing.assert_allclose(cam.GetDirectionOfProjection(), dop, atol=1e-9)
    p.preset_buttons["iso"].click()
    iso = np.array(cam.GetDirectionOfProjection())
    assert all(abs(c) > 0.2 for c in iso)
    p.set_camera_preset("front")
    QTest.mouseDClick(p.vtk_widget, Qt.LeftButton, Qt.NoModifier, QPoint(int(0.85 * p.vtk_widget.width()), 200))
    np.testing.assert_allclose(cam.GetDirectionOfProjection(), (1, 0, 0), atol=1e-9)   # fit keeps the preset
    with pytest.raises(ValueError, match="camera preset 'back'"):
        p.set_camera_preset("back")


def test_no_mouse_hint_is_painted(qtbot, expert):
    p = _pane(qtbot, expert)
    texts = " ".join(t[0] for t in p.label_rects())
    assert "drag" not in texts and "wheel" not in texts and "3D" in texts
    assert "orbit" in p.views["3d"].hint


def test_a_resize_while_paused_redraws_at_once(qtbot, expert):
    p = _pane(qtbot, expert, (900, 300))
    p.show_frame(1000)
    qtbot.wait(50)
    renders = p.vtk_widget.renders
    p.resize(1300, 420)
    qtbot.wait(50)
    img = p.vtk_widget.image()
    w = p.vtk_widget
    assert (img.width(), img.height()) == (round(w.width() * w.devicePixelRatioF()),
                                           round(w.height() * w.devicePixelRatioF()))
    assert p.vtk_widget.renders > renders and p.current_frame == 1000
    # the views' edges are where the new viewports put them (no old image spilled across them)
    col = int(0.35 * img.width())
    assert any(img.pixelColor(x, img.height() // 2).blue() > 60 for x in range(col - 2, col + 3))
