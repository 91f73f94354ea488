"""A run followed while it is written: the footer never calls its last frame the end while it runs, and when the
run ends and its file is opened again the view stays at the time it showed (not T = 0) (issue 32)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from tests.gui_util import main_window  # noqa: E402
from tests.test_live_refresh import BLOCK, writer  # noqa: E402,F401  (the fixture)

pytestmark = pytest.mark.gui


def _live(qtbot, tmp_path, writer):
    path, send = writer
    send()
    w = main_window(qtbot, tmp_path / "settings.ini")
    assert w.open_run(path), w.last_error
    assert w.run.live
    return w, path, send


def test_the_footer_of_a_running_run_says_so_far(qtbot, tmp_path, writer):  # noqa: F811
    w, _, _ = _live(qtbot, tmp_path, writer)
    w.playback.seek_frame(BLOCK - 1)                          # following the end of the growing file
    footer = w.diagram.time_text()
    assert f"frame {BLOCK} of {BLOCK} so far" in footer and f"{BLOCK}/{BLOCK}" not in footer


def test_the_view_stays_at_its_time_when_the_run_ends(qtbot, tmp_path, writer):  # noqa: F811
    w, path, send = _live(qtbot, tmp_path, writer)
    pb, d = w.playback, w.diagram
    pb.seek_frame(2000)
    t = pb.t_current
    send("end")                                               # the solver finished; the window opens the file again
    d.cancel_live_refresh()                                   # (as MainWindow._run_finished: the live handle closed)
    w.run.close()
    assert w.open_run(path), w.last_error
    assert not w.run.live and w.run.meta.complete
    assert pb.frame == 2000 and pb.t_current == pytest.approx(t)
    assert d.scene.current_frame == 2000 and f"{t:.4f}" in d.time_text()
    assert d.time_text().endswith(f"frame 2001/{BLOCK}")


def test_a_different_run_opens_at_its_start(qtbot, tmp_path, small_run):
    from pathlib import Path
    w = main_window(qtbot, tmp_path / "settings.ini", small_run)
    w.playback.seek_frame(300)
    assert w.open_run(Path(__file__).resolve().parent.parent / "sample_runs" / "synthetic_approach.h5")
    assert w.playback.frame == 0
