"""Clip export of the whole diagram, decoded back with PyAV: frame counts, size, codec, content, cancel, CLI."""
import os
import subprocess
import sys

import av
import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QWidget  # noqa: E402

from solver.runfile import RunFile  # noqa: E402
from viewer.clip_render import DiagramRenderer, caption_height, export_clips  # noqa: E402
from viewer.clips import Clip, ClipList  # noqa: E402
from viewer.title_card import qimage_to_rgb, rgb_to_qimage  # noqa: E402
from viewer.video_export import ExportCancelled  # noqa: E402

SIZE = (1280, 720)   # 720p: laid out at this size without scaling (the lanes raised the minimum over 480p)
FPS = 20


def decode(path):
    with av.open(str(path)) as c:
        cc = c.streams.video[0].codec_context
        info = dict(codec=cc.name, pix_fmt=cc.pix_fmt, width=cc.width, height=cc.height)
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    return info, frames


@pytest.fixture(scope="module")
def run(small_run):
    r = RunFile(small_run)
    yield r
    r.close()


@pytest.fixture(scope="module")
def clips():
    # 0.5 s title + 1.0 s at 1x, then 0.5 s at quarter speed (2 s of video) without a title
    return ClipList([Clip(0.5, 1.5, 1.0, "Approach to the cone", 0.5), Clip(2.0, 2.5, 0.25)], fps=FPS, size=SIZE)


@pytest.fixture(scope="module")
def exported(qapp, run, clips, tmp_path_factory):
    out = tmp_path_factory.mktemp("clip") / "clip.mp4"
    return export_clips(run, clips, out)


def test_mp4_frame_count_size_and_codec(exported, clips):
    info, frames = decode(exported)
    expected = round(0.5 * FPS) + round((1.5 - 0.5) * FPS / 1.0) + round((2.5 - 2.0) * FPS / 0.25)
    assert len(frames) == expected == 10 + 20 + 40
    assert info == dict(codec="h264", pix_fmt="yuv420p", width=SIZE[0], height=SIZE[1])
    assert frames[0].shape == (SIZE[1], SIZE[0], 3)
    assert not [p for p in exported.parent.iterdir() if p != exported], "no temporary files left"
    # title frames: dark ground with the title's light text in the middle
    card = frames[5].astype(int)
    assert card[5, 5].max() < 40 and card[SIZE[1] // 5: SIZE[1] // 2].max() > 180


def _screenshot(qtbot, run, t, layout_size):
    """The diagram shown on screen (transport bar hidden) at the export's layout size, at run time t."""
    from viewer.diagram import MnemonicDiagram
    w, h = layout_size
    d = MnemonicDiagram()
    qtbot.addWidget(d)
    d.findChild(QWidget, "transport").hide()
    d.plots.set_rows_scroll(False)   # as in the export (a video cannot scroll)
    d.set_run(run)
    d.ensure_analysed()
    d.setFixedSize(w, h - caption_height(h))
    d.show()
    qtbot.waitExposed(d)
    d.playback.seek_time(t)
    qtbot.wait(20)
    return qimage_to_rgb(d.grab_image())


def test_frame_matches_screenshot_of_diagram_at_that_time(exported, run, qtbot, artifacts):
    _, frames = decode(exported)
    # frame 10 + 12 is the 13th frame of interval 1: t = 0.5 + 12 / 20 = 1.1 s; frame 30 + 20: t = 2.0 + 20 * 0.25 / 20
    k1, t1 = 10 + 12, 0.5 + 12 / FPS
    k2, t2 = 30 + 20, 2.0 + 20 * 0.25 / FPS
    hd = SIZE[1] - caption_height(SIZE[1])
    shot1 = _screenshot(qtbot, run, t1, SIZE)
    shot2 = _screenshot(qtbot, run, t2, SIZE)
    assert shot1.shape == (hd, SIZE[0], 3)
    f1, f2 = frames[k1][:hd].astype(int), frames[k2][:hd].astype(int)
    same1, same2 = np.abs(f1 - shot1).mean(), np.abs(f2 - shot2).mean()
    cross = np.abs(f1 - shot2).mean()
    rgb_to_qimage(np.vstack([frames[k1], np.pad(shot1, ((0, SIZE[1] - hd), (0, 0), (0, 0)))])).save(
        str(artifacts / "clip_frame_vs_screenshot.png"))
    assert same1 < 4.0 and same2 < 4.0, (same1, same2)   # H.264 at crf 20 on thin coloured lines
    assert cross > 1.5 * max(same1, same2), (same1, same2, cross)
    # the changing part of the picture (scene and plots move between the two times) matches too
    moving = np.abs(shot1 - shot2).max(axis=2) > 40
    assert moving.sum() > 500
    assert np.abs(f1 - shot1).max(axis=2)[moving].mean() < np.abs(f1 - shot2).max(axis=2)[moving].mean() / 2


def test_burned_in_time_and_speed_in_caption(qapp, run):
    r = DiagramRenderer(run, SIZE)
    try:
        a = r.render_time(1.0, 1.0).copy()
        b = r.render_time(2.0, 0.25).copy()
        c = r.render_time(1.0, 1.0).copy()
    finally:
        r.close()
    cap = SIZE[1] - r.caption_h
    assert np.array_equal(a, c), "same time, same frame"
    right = slice(SIZE[0] // 2, None)
    assert not np.array_equal(a[cap:, right], b[cap:, right]), "T Current and speed change in the caption"
    yellow = (a[cap:, right, 2] > 150) & (a[cap:, right, 1] > 130) & (a[cap:, right, 0] < 110)  # BGRA
    assert yellow.sum() > 50, "T Current drawn in the accent colour"


def test_3d_camera_of_the_window_is_used(qapp, run):
    r = DiagramRenderer(run, SIZE)
    try:
        r.render_time(1.0)
        before = r.rgb()
        views = r.diagram.scene.views
        cam = type(views["3d"].camera)()
        cam.DeepCopy(views["3d"].camera)
        cam.Azimuth(70)
        r.copy_view(cam)
        r.render_time(1.0)
        after = r.rgb()
    finally:
        r.close()
    vw = r._vtk.rect_in(r.diagram)  # noqa: SLF001
    x3d = vw.x() + int(vw.width() * 0.72)   # the 3D view is the right 30 % of the VTK views
    y = slice(vw.y(), vw.y() + vw.height())
    assert np.abs(after[y, x3d:vw.right()].astype(int) - before[y, x3d:vw.right()]).mean() > 1.0
    np.testing.assert_array_equal(after[y, vw.x():vw.x() + vw.width() // 3],
                                  before[y, vw.x():vw.x() + vw.width() // 3])  # plane Ld unchanged


def test_small_size_is_laid_out_larger_and_scaled(qapp, run, tmp_path):
    clips = ClipList([Clip(1.0, 1.5, 1.0)], fps=10, size=(640, 360))
    out = export_clips(run, clips, tmp_path / "small.gif")
    with av.open(str(out)) as c:
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == 5 and frames[0].shape == (360, 640, 3)
    png = export_clips(run, clips, tmp_path / "frames", fmt="png")
    assert sorted(p.name for p in png.iterdir()) == [f"frame_{i:06d}.png" for i in range(5)]


def test_cancel_and_failure_leave_no_file(qapp, run, clips, tmp_path):
    seen = []

    def cancel_at_7(done, total):
        seen.append((done, total))
        return done < 7

    with pytest.raises(ExportCancelled):
        export_clips(run, clips, tmp_path / "c.mp4", progress=cancel_at_7)
    assert seen[-1] == (7, 70)
    assert list(tmp_path.iterdir()) == []

    def fail(done, total):
        if done == 35:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        export_clips(run, clips, tmp_path / "d.mp4", progress=fail)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(Exception, match="outside the run"):
        export_clips(run, ClipList([Clip(5.0, 9.0)], fps=FPS, size=SIZE), tmp_path / "e.mp4")
    assert list(tmp_path.iterdir()) == []


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "app", "export", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_cli_export_with_titles(small_run, tmp_path):
    out = tmp_path / "cli.mp4"
    p = _cli(str(small_run), "--clip", "0.5:1.0", "--title", "Capture", "--clip", "2:2.2@0.5",
             "--title", "Impact", "--title-duration", "0.5", "--size", "480p", "--fps", "10", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "wrote" in p.stdout and "export cli.mp4" in p.stderr and "100.0%" in p.stderr
    info, frames = decode(out)
    assert len(frames) == 5 + 5 + 5 + 4
    assert (info["width"], info["height"]) == (854, 480)


@pytest.mark.parametrize("args, words", [
    (["--clip", "3:1"], ["end must be after start"]),
    (["--clip", "0:60"], ["outside the run"]),
    (["--clip", "1:2@0"], ["speed must be positive"]),
    (["--clip", "1:2", "--size", "701x400"], ["even"]),
    (["--clip", "1:2", "--plots", "Fx,nope"], ["'nope'"]),
    ([], ["no --clip given", "small.clips.json"]),
])
def test_cli_bad_input_exits_2_with_one_line(small_run, tmp_path, args, words):
    """By app.cli.main in this process (the refusal comes before Qt; test_cli_bad_run runs the real process)."""
    from tests.cli_here import cli_here
    out = tmp_path / "x.mp4"
    p = cli_here("export", small_run, *args, "-o", out)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dockmnemo: error:") and "Traceback" not in p.stderr
    for w in words:
        assert w in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_cli_bad_run(tmp_path):
    """(Without a display the export renders through EGL: tests/test_export_interrupt.py.)"""
    bad = tmp_path / "bad.h5"
    bad.write_text("not hdf5")
    p = _cli(str(bad), "--clip", "0:1", "-o", str(tmp_path / "x.mp4"))
    assert p.returncode == 2 and "bad.h5" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "xvfb-run" in _cli("--help").stdout


def test_cli_with_qt_offscreen_platform_still_renders(small_run, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = tmp_path / "f"
    p = _cli(str(small_run), "--clip", "1:1.3", "--fps", "10", "--size", "480p", "--format", "png", "-o", str(out),
             env=env)
    assert p.returncode == 0, p.stderr
    assert len(list(out.iterdir())) == 3
    from tests.cli_here import cli_here                # (the refusal: in this process)
    p = cli_here("export", small_run, "--clip", "1:1.3", "--format", "png", "-o", tmp_path / "f" / "frame_000000.png")
    assert p.returncode == 2 and "is a file" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_scene_titles_painted_over_the_views_in_the_frame(qapp, run):
    """The scene's titles are painted by Qt over the rendered views; an exported frame has them too."""
    r = DiagramRenderer(run, SIZE)
    try:
        with_text = r.render_time(1.0).copy()
        overlay, r.diagram.scene.vtk_widget.overlay = r.diagram.scene.vtk_widget.overlay, None
        r.frame = -1                                   # (compose the same frame again)
        without = r.render_time(1.0).copy()
        r.diagram.scene.vtk_widget.overlay = overlay
    finally:
        r.close()
    vw = r._vtk.rect_in(r.diagram)  # noqa: SLF001
    rows, cols = slice(vw.y(), vw.y() + 24), slice(vw.x(), vw.x() + vw.width() // 3)   # top left of plane Ld
    band, plain = with_text[rows, cols, :3].astype(int), without[rows, cols, :3].astype(int)
    changed = np.abs(band - plain).max(axis=2) > 30
    title = (np.abs(band[..., 0] - 184) < 40) & (np.abs(band[..., 1] - 158) < 40) & (np.abs(band[..., 2] - 140) < 40)
    assert changed.sum() > 50 and (title & changed).sum() > 20
