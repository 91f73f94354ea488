"""Top pane under Xvfb: real VTK rendering of the synthetic run (poses, red contacts, conditional parts, text)."""
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("vtkmodules")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from solver import quat  # noqa: E402
from solver.runfile import ChannelInfo, PartGeometry, RunFile, RunMeta, RunWriter  # noqa: E402
from viewer.scene_pane import CONTACT_RED, ScenePane  # noqa: E402
from tests.gui_util import base_loads_line, label_texts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "synthetic_approach.h5"


@pytest.fixture(scope="module")
def run():
    r = RunFile(SAMPLE)
    yield r
    r.close()


@pytest.fixture
def pane(qtbot, run):
    p = ScenePane()
    qtbot.addWidget(p)
    p.resize(1600, 450)
    p.show()
    qtbot.waitExposed(p)
    p.set_run(run)
    return p


def _active(run):
    return {name: run.contact_active(name) for name in run.contact_pairs}


def _expected_red(run, active, frame):
    red = set()
    for name, info in run.contact_pairs.items():
        if active[name][frame]:
            red |= {info.part_a, info.part_b}
    return red


def test_head_actor_moves_to_the_runs_pose(pane, run):
    hi = run.bodies.index("probe_head")
    for f in (0, 400, run.frame_at(run.t_capture), 5000, run.n_frames - 1):
        pane.show_frame(f)
        assert pane.current_frame == f
        pos, q = run.poses(f)
        np.testing.assert_allclose(pane.part_matrix("probe_head")[:3, 3], pos[hi], atol=1e-12)
        np.testing.assert_allclose(pane.part_matrix("probe_head")[:3, :3], quat.to_matrix(q[hi]), atol=1e-12)
        li = run.bodies.index("limiter")
        np.testing.assert_allclose(pane.part_matrix("limiter")[:3, 3], pos[li], atol=1e-12)


def test_parts_are_red_exactly_while_a_pair_naming_them_is_active(pane, run):
    active = _active(run)
    frames = {0, 100}
    for a in active.values():
        idx = np.flatnonzero(a)
        frames |= {int(idx[0]), int(idx[len(idx) // 2]), int(idx[-1]), int(idx[-1]) + 1}
    frames = sorted(f for f in frames if f < run.n_frames)
    saw_red = set()
    for f in frames:
        pane.show_frame(f)
        red = _expected_red(run, active, f)
        for name in pane.part_names():
            assert pane.part_is_red(name) == (name in red), (f, name)
            if name not in red:
                assert pane.part_color(name) != CONTACT_RED
        saw_red |= red
    # every part named by a pair has been seen red at least once
    assert saw_red == {p for info in run.contact_pairs.values() for p in (info.part_a, info.part_b)}


def test_latches_and_slots_appear_near_the_socket_and_rollers_when_levers_extend(pane, run):
    near = run.channel("head_near_socket")
    lever = run.channel("lever_extension")
    far = int(np.flatnonzero(near <= 0)[0])
    close = int(np.flatnonzero(near > 0)[0])
    pane.show_frame(far)
    assert not pane.part_visible("latches") and not pane.part_visible("socket_slots")
    assert pane.part_visible("probe_head") and pane.part_visible("receiving_cone")
    pane.show_frame(close)
    assert pane.part_visible("latches") and pane.part_visible("socket_slots")
    assert not pane.part_visible("rollers")
    pane.show_frame(int(np.flatnonzero(lever > 0)[0]))
    assert pane.part_visible("rollers")
    pane.show_frame(far)  # and back again when scrubbing backwards
    assert not pane.part_visible("latches") and not pane.part_visible("rollers")


def test_readouts_switch_at_t_capture(pane, run):
    fc = int(np.searchsorted(run.time, run.t_capture))  # first frame at or after T capture
    assert run.time[fc - 1] < run.t_capture <= run.time[fc]
    pane.show_frame(fc - 1)
    before = "\n".join(label_texts(pane))
    assert "HEAD rel. CONE" in before
    for name in ("head_x", "head_y", "head_z", "head_vx", "head_vy", "head_vz", "probe_pitch", "probe_yaw"):
        assert name in before
    assert "cm_vx" not in before and "att_yaw" not in before
    assert f"{run.channel_at('head_x', fc - 1):+9.4f}" in before
    assert "before capture" in pane.time_text()
    pane.show_frame(fc)
    after = "\n".join(label_texts(pane))
    assert "ACTIVE rel. PASSIVE" in after and "head_x" not in after
    for name in ("cm_vx", "cm_vy", "cm_vz", "rate_x", "rate_y", "rate_z", "att_roll", "att_pitch", "att_yaw"):
        assert name in after
    assert f"{run.channel_at('cm_vx', fc):+9.4f}" in after
    assert "after capture" in pane.time_text()


def test_base_loads_line_shows_the_forces_and_moments(pane, run):
    fx = run.channel("Fx")
    for f in (int(np.argmax(np.abs(fx))), 400, 0, run.n_frames - 1):  # 0 and the end: other chunk blocks
        pane.show_frame(f)
        line = base_loads_line(pane)
        assert f"Fx {fx[f]:.1f} N" in line
        assert f"Mz {run.channel_at('Mz', f):.1f} N·m" in line
    assert abs(fx[int(np.argmax(np.abs(fx)))]) > 1000


def test_force_arrows_start_at_the_contact_point_along_the_force(pane, run):
    f = int(np.flatnonzero(run.contact_active("head_socket"))[10])
    pane.show_frame(f)
    state = run.contact_state(f)
    arrows = pane.force_arrows()
    assert set(arrows) == {n for n, (on, _, _) in state.items() if on}
    tail, tip = arrows["head_socket"]
    _, force, point = state["head_socket"]
    np.testing.assert_allclose(tail, point, atol=1e-12)
    d = tip - tail
    assert np.linalg.norm(np.cross(d, force)) < 1e-9 * np.linalg.norm(force) and d @ force > 0
    assert np.linalg.norm(d) == pytest.approx(min(np.linalg.norm(force) * pane.force_scale, pane.force_max_length))
    pane.set_force_scale(1e-5)
    tail, tip = pane.force_arrows()["head_socket"]
    assert np.linalg.norm(tip - tail) == pytest.approx(np.linalg.norm(force) * 1e-5)
    pane.set_show_forces(False)
    assert pane.force_arrows() == {}
    pane.set_show_forces(True)
    assert "head_socket" in pane.force_arrows()


def test_ld_camera_looks_along_the_normal_of_the_plane_through_axis_gimbal_and_joint(pane, run):
    gi, pi_ = run.bodies.index("housing"), run.bodies.index("probe")
    cam = pane.views["ld"].camera
    for f in (0, 400, 1300, 2000):
        pane.show_frame(f)
        pos, _ = run.poses(f)
        dop = np.array(cam.GetDirectionOfProjection())
        up = np.array(cam.GetViewUp())
        assert abs(dop[0]) < 1e-9 and abs(up[0]) < 1e-9  # cone axis horizontal on screen
        assert np.cross(dop, up)[0] > 0.999               # +x to the right
        assert abs(dop @ pos[gi]) < 1e-9 and abs(dop @ pos[pi_]) < 1e-9
        assert cam.GetParallelProjection()
    top = pane.views["top"].camera
    np.testing.assert_allclose(top.GetDirectionOfProjection(), [0, 0, -1], atol=1e-12)


def _rgb(img):
    ptr = img.constBits()
    a = np.frombuffer(ptr, np.uint8, img.sizeInBytes()).reshape(img.height(), img.bytesPerLine())
    return a[:, : 3 * img.width()].reshape(img.height(), img.width(), 3)


def _red_pixels(img):
    a = _rgb(img).astype(int)
    return int(np.count_nonzero((a[..., 0] > 200) & (a[..., 1] < 90) & (a[..., 2] < 90)))


def test_screenshots_show_red_only_in_contact(pane, run, artifacts):
    active = _active(run)
    fc = int(np.searchsorted(run.time, run.t_capture))
    shots = {
        "before_contact": 100,
        "sliding_on_cone": int(np.flatnonzero(active["head_cone"])[200]),
        "capture": fc,
        "limiter_contact": int(np.flatnonzero(active["limiter_cone"])[5]),
        "roller_contact": int(np.flatnonzero(active["roller_cone"])[300]),
    }
    for label, f in shots.items():
        pane.show_frame(f)
        img = pane.grab_image()
        assert (img.width(), img.height()) == (pane.width(), pane.height())
        path = artifacts / f"scene_{label}.png"
        assert img.save(str(path))
        rgb = _rgb(img)
        assert rgb.std() > 10  # not a blank window
        red = _red_pixels(img)
        if _expected_red(run, active, f):
            assert red > 200, (label, red)
        else:
            assert red == 0, (label, red)


def test_only_the_3d_view_orbits_the_2d_views_pan(pane, qtbot):
    pane.show_frame(400)
    w = pane.vtk_widget
    ld, c3 = pane.views["ld"].camera, pane.views["3d"].camera
    ld_pos, pos3 = ld.GetPosition(), c3.GetPosition()

    def drag(x0, x1, y):
        QTest.mousePress(w, Qt.LeftButton, Qt.NoModifier, QPoint(x0, y))
        for x in range(x0, x1, 10):
            QTest.mouseMove(w, QPoint(x, y))
        QTest.mouseRelease(w, Qt.LeftButton, Qt.NoModifier, QPoint(x1, y))

    x_ld, x_3d = int(0.15 * w.width()), int(0.82 * w.width())
    ld_dop = ld.GetDirectionOfProjection()
    drag(x_ld, x_ld + 80, 200)  # inside plane Ld: it pans (the same direction), the 3D view stays
    np.testing.assert_allclose(ld.GetDirectionOfProjection(), ld_dop, atol=1e-12)
    assert ld.GetPosition() != ld_pos and c3.GetPosition() == pos3
    ld_pos = ld.GetPosition()
    drag(x_3d, x_3d + 80, 200)  # inside the 3D view
    assert c3.GetPosition() != pos3
    assert ld.GetPosition() == ld_pos
    pane.reset_3d_view()
    np.testing.assert_allclose(c3.GetPosition(), pos3, atol=1e-9)


def _tiny_run(path):
    """A run with only a cone, a head and two channels: no housing, probe, pairs or spacecraft channels."""
    chans = [ChannelInfo("head_x", "m", "head x", "kinematics"), ChannelInfo("Fx", "N", "Fx", "base_loads")]
    cone = PartGeometry("receiving_cone", "passive_craft", np.array([[0, 0.4, 0], [-0.45, 0.07, 0]]),
                        np.array([[0, 1]]), "cone")
    head = PartGeometry("probe_head", "probe_head", np.array([[0, 0, 0], [0.05, 0, 0]]), np.array([[0, 1]]))
    w = RunWriter(path, RunMeta(variant="synthetic", output_step=0.1), chans, ["passive_craft", "probe_head"],
                  [], [cone, head])
    n = 5
    pos = np.zeros((n, 2, 3))
    pos[:, 1, 0] = np.linspace(0.5, 0.1, n)
    q = np.tile([1.0, 0, 0, 0], (n, 2, 1))
    w.append(np.arange(n) * 0.1, np.stack([pos[:, 1, 0], np.arange(n) * 10.0], 1), pos, q)
    w.finish(t_capture=math.nan)
    return path


def test_run_without_optional_channels_and_bodies(qtbot, tmp_path):
    r = RunFile(_tiny_run(tmp_path / "tiny.h5"))
    p = ScenePane()
    qtbot.addWidget(p)
    p.resize(900, 300)
    p.show()
    qtbot.waitExposed(p)
    p.set_run(r)
    p.show_frame(3)
    np.testing.assert_allclose(p.part_matrix("probe_head")[:3, 3], [0.2, 0, 0], atol=1e-12)
    text = "\n".join(label_texts(p))
    assert "head_x" in text and "head_vx" not in text and "probe_pitch" not in text
    assert base_loads_line(p) == "base: Fx 30.0 N"
    assert "no capture" in p.time_text()
    cam = p.views["ld"].camera  # no housing or probe body: plane Ld falls back to the x-z plane
    np.testing.assert_allclose(cam.GetDirectionOfProjection(), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(cam.GetViewUp(), [0, 0, 1], atol=1e-12)
    p.show_frame(99)  # clamped to the last frame
    assert p.current_frame == 4
    assert p.grab_image().width() == p.width()
    p.set_run(None)
    assert p.part_names() == [] and not [t for t in label_texts(p) if "head_x" in t or "base:" in t]
    r.close()


def test_block_cache_reads_each_block_once_and_matches_the_file(run):
    from viewer.scene_pane import _BlockCache
    pairs = list(run.contact_pairs)
    c = _BlockCache(run, ["Fx", "head_x", "no_such_channel"], pairs, block=4096, keep=2)
    fx, hx = run.channel("Fx"), run.channel("head_x")
    for f in (0, 4095, 4096, 8191, 4096, 0, 12000, 4100):
        assert c.value("Fx", f) == fx[f] and c.value("head_x", f) == hx[f]
        assert math.isnan(c.value("no_such_channel", f))
        k = c.at(f)
        for j, p in enumerate(pairs):
            assert c.active[j, k] == run.contact_active(p, f, f + 1)[0]
            np.testing.assert_array_equal(c.point[j, k], run.contact_state(f)[p][2])
    # reads: block 0, block 1, (0 again: kept), block 2 evicting 1 (least recent), block 1 again
    assert c.loads == 4


def test_switching_runs_replaces_the_parts(pane, run, tmp_path):
    r = RunFile(_tiny_run(tmp_path / "tiny.h5"))
    pane.set_run(r)
    assert sorted(pane.part_names()) == ["probe_head", "receiving_cone"]
    pane.show_frame(2)
    np.testing.assert_allclose(pane.part_matrix("probe_head")[:3, 3], [0.3, 0, 0], atol=1e-12)
    pane.set_run(run)
    assert sorted(pane.part_names()) == sorted(run.geometry)
    pd = pane._parts["receiving_cone"]["pd"]
    g = run.geometry["receiving_cone"]
    assert pd.GetNumberOfPoints() == len(g.points) and pd.GetNumberOfLines() == len(g.lines)
    for c in (0, 5, len(g.lines) - 1):
        ids = pd.GetCell(c).GetPointIds()
        assert [ids.GetId(0), ids.GetId(1)] == list(g.lines[c])
    np.testing.assert_allclose(pd.GetPoint(int(g.lines[5, 1])), g.points[g.lines[5, 1]])
    r.close()


def test_frames_rendered_in_the_render_thread_look_as_rendered_in_the_gui_thread(pane, run):
    """While playing, show_frame renders and reads back in the render thread; the widget then shows what a render
    in the GUI thread shows (titles and force labels included), with opaque pixels (a grab is not transparent)."""
    active = _active(run)
    f = next(i for i in range(run.n_frames) if sum(bool(a[i]) for a in active.values()) >= 2)
    w = pane.vtk_widget
    assert pane.render_async
    before = w.thread_renders
    pane.show_frame(f)
    shown = w.grab().toImage().convertToFormat(QImage.Format_ARGB32)
    assert w.thread_renders == before + 1
    assert pane.force_labels(), "a frame with contacts draws their force labels"
    pane.render_async = False
    pane.show_frame(f)
    assert w.thread_renders == before + 1
    direct = w.grab().toImage().convertToFormat(QImage.Format_ARGB32)
    a = np.frombuffer(shown.constBits(), np.uint8).reshape(shown.height(), shown.width(), 4)
    b = np.frombuffer(direct.constBits(), np.uint8).reshape(direct.height(), direct.width(), 4)
    assert (a[..., 3] == 255).all() and (b[..., 3] == 255).all()
    diff = np.abs(a.astype(int) - b.astype(int)).max(axis=-1)
    assert (diff > 2).sum() == 0, f"{(diff > 2).sum()} pixels differ"
    assert len(np.unique(a.reshape(-1, 4), axis=0)) > 20    # (a drawing, not a blank widget)
    read = w.image().convertToFormat(QImage.Format_RGB888)   # the read-back itself, against VTK's own image filter
    views = pane.vtk_image()
    assert read.size() == views.size()
    c = np.frombuffer(read.constBits(), np.uint8).reshape(read.height(), read.bytesPerLine())[:, :3 * read.width()]
    d = np.frombuffer(views.constBits(), np.uint8).reshape(views.height(), views.bytesPerLine())[:, :3 * views.width()]
    assert (c == d).all(), f"{(c != d).any(axis=-1).sum()} rows differ from vtkWindowToImageFilter's"
