"""Clip lists and the PyAV encoder: frame counts, sizes, formats, atomic writes, decoded content."""
import av
import numpy as np
import pytest

from viewer.clips import Clip, ClipError, ClipList, parse_clip, parse_size, sidecar_path
from viewer.video_export import ExportCancelled, encode


def test_parse_clip_and_size():
    c = parse_clip("177:180@0.25")
    assert (c.start, c.end, c.speed) == (177.0, 180.0, 0.25)
    assert parse_clip("0:12").speed == 1.0
    for bad in ("12:3", "a:b", "1:2@0", "1:2@-1", "5"):
        with pytest.raises(ClipError):
            parse_clip(bad)
    assert parse_size("720p") == (1280, 720) and parse_size("640x360") == (640, 360)
    with pytest.raises(ClipError, match="even"):
        parse_size("641x360")


def test_schedule_frame_count_and_times():
    cl = ClipList([Clip(0, 12, 1.0, "Capture", 2.0), Clip(177, 180, 0.25)], fps=30)
    assert cl.total_frames() == 12 * 30 + 2 * 30 + int(3 * 30 / 0.25)
    sched = list(cl.schedule())
    assert len(sched) == cl.total_frames()
    assert sched[0] == ("title", 0, 0) and sched[60] == ("frame", 0, 0.0)
    frames2 = [s for s in sched if s[0] == "frame" and s[1] == 1]
    assert frames2[0][2] == 177.0 and frames2[1][2] == pytest.approx(177 + 0.25 / 30)
    assert frames2[-1][2] < 180.0


def test_sidecar_roundtrip(tmp_path):
    cl = ClipList([Clip(1, 2, 0.5, "Impact", 1.5)], fps=25, size=(1920, 1080))
    p = sidecar_path(tmp_path / "run.h5")
    assert p.name == "run.clips.json"
    cl.save(p)
    back = ClipList.load(p)
    assert back == cl
    p.write_text('{"clips": [{"start": 5, "end": 1}]}')
    with pytest.raises(ClipError, match="end must be after start"):
        ClipList.load(p)


def _frames(n, w=320, h=240):
    for k in range(n):
        a = np.zeros((h, w, 3), np.uint8)
        a[:, : (k * 7) % w] = (200, 40, 40)
        yield a


def test_mp4_decodes_with_count_size_and_content(tmp_path):
    out = encode(_frames(45), tmp_path / "clip.mp4", 30, (320, 240))
    with av.open(str(out)) as c:
        s = c.streams.video[0]
        assert s.codec_context.name == "h264" and s.codec_context.pix_fmt == "yuv420p"
        frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    assert len(frames) == 45 and frames[0].shape == (240, 320, 3)
    # frame 30: red band up to x = 210; check content survived encoding
    f = frames[30].astype(int)
    assert abs(f[120, 100] - [200, 40, 40]).max() < 30 and f[120, 300].max() < 30
    assert not list(tmp_path.glob(".*part*"))


def test_gif_and_png_sequence(tmp_path):
    g = encode(_frames(10), tmp_path / "clip.gif", 10, (320, 240))
    with av.open(str(g)) as c:
        assert sum(1 for _ in c.decode(video=0)) == 10
    d = encode(_frames(4), tmp_path / "frames", 10, (320, 240), fmt="png")
    assert sorted(x.name for x in d.iterdir()) == [f"frame_{i:06d}.png" for i in range(4)]


def test_cancel_and_failure_leave_no_file(tmp_path):
    with pytest.raises(ExportCancelled):
        encode(_frames(50), tmp_path / "c.mp4", 30, (320, 240), progress=lambda n: n < 10)
    bad = (np.zeros((10, 10, 3), np.uint8) for _ in range(3))
    with pytest.raises(ValueError, match="export size"):
        encode(bad, tmp_path / "d.mp4", 30, (320, 240))
    assert list(tmp_path.iterdir()) == []


def test_title_card(qapp, artifacts):
    from viewer.title_card import rgb_to_qimage, title_card
    card = title_card((640, 360), "Interval 1: capture", "0-12 s at 1x", "existing mechanism, expert case")
    assert card.shape == (360, 640, 3)
    assert card[120:200].max() > 200 and card[5, 5].tolist() == [12, 16, 24]   # text drawn on dark ground
    rgb_to_qimage(card).save(str(artifacts / "title_card.png"))
