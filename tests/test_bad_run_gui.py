"""Any run file that cannot be opened or read gives a dialog naming the file (and dataset); the run shown before
stays, playback pauses on a bad chunk, nothing escapes and the app never exits (issue 21, item 8)."""
import os
import shutil
import threading

import pytest

pytest.importorskip("PySide6")

import h5py  # noqa: E402
import numpy as np  # noqa: E402

from app.cli import SYNTHETIC_RUN  # noqa: E402
from tests.gui_util import main_window, module_window  # noqa: E402

pytestmark = pytest.mark.gui

BAD_CHUNK = 2   # frames 8192..12287 of the 4096-frame chunks


def _copy(tmp_path, name):
    p = tmp_path / name
    shutil.copy(SYNTHETIC_RUN, p)
    return p


def link_loop(tmp_path):
    """/channels/Fx is a soft link to a soft link back to it."""
    p = _copy(tmp_path, "link_loop.h5")
    with h5py.File(p, "r+") as f:
        del f["channels/Fx"]
        f["channels/Fx"] = h5py.SoftLink("/channels/Fx_loop")
        f["channels/Fx_loop"] = h5py.SoftLink("/channels/Fx")
    return p, ""


def huge_points(tmp_path):
    """A part's points dataset declares 2**44 rows (nothing written: the file stays small)."""
    p = _copy(tmp_path, "huge_points.h5")
    with h5py.File(p, "r+") as f:
        g = f["geometry"][next(iter(f["geometry"]))]
        del g["points"]
        g.create_dataset("points", shape=(2 ** 44, 3), dtype="f8", chunks=(4096, 3))
    return p, ""


def corrupt_chunk(tmp_path, dataset, chunk=BAD_CHUNK, name=None):
    """64 bytes in the middle of one compressed chunk of `dataset` overwritten (its offset from HDF5's chunk index)."""
    p = _copy(tmp_path, name or f"bad_{dataset.replace('/', '_')}.h5")
    with h5py.File(p, "r") as f:
        info = f[dataset].id.get_chunk_info(chunk)
    with open(p, "r+b") as fh:
        fh.seek(info.byte_offset + info.size // 2)
        fh.write(bytes([0x5A]) * 64)
    return p


def plotted_chunk(tmp_path):
    """A chunk in the middle of a channel the plots show (read whole when the run is shown)."""
    return corrupt_chunk(tmp_path, "channels/probe_stroke"), "/channels/probe_stroke"


def fifo(tmp_path):
    p = tmp_path / "pipe.h5"
    os.mkfifo(p)
    return p, ""


def _boxes(title=None):
    from PySide6.QtWidgets import QApplication, QMessageBox
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible() and (title is None or w.windowTitle() == title)]


class _FifoGuard:
    """Opens a FIFO for writing after `after` s unless told the reader is done: an open that blocks on the pipe
    ends (and `unblocked` says it had to), instead of hanging the test."""

    def __init__(self, path, after=4.0):
        self.done, self.unblocked = threading.Event(), False
        self._t = threading.Thread(target=self._run, args=(path, after), daemon=True)
        self._t.start()

    def _run(self, path, after):
        if not self.done.wait(after):
            self.unblocked = True
            os.close(os.open(path, os.O_WRONLY))

    def finish(self):
        self.done.set()
        self._t.join()


@pytest.fixture(autouse=True)
def _close_boxes(qtbot):
    """No dialog outlives its test (a window-modal one would keep later windows from being activated)."""
    yield
    for box in _boxes():
        box.close()


@pytest.fixture(scope="module")
def shared_window(qapp, request, tmp_path_factory):
    """One window on the synthetic run for the module's tests."""
    w = module_window(request, tmp_path_factory, SYNTHETIC_RUN)
    yield w
    w.close()


@pytest.fixture
def window(shared_window, qtbot):
    """The module's window as each test starts it: the synthetic run open (again, if a test opened another), no
    comparison, no loop range, at frame 0."""
    w = shared_window
    if w.run is None or w.run.path.resolve() != SYNTHETIC_RUN.resolve():
        assert w.open_run(SYNTHETIC_RUN), w.last_error
        qtbot.waitUntil(lambda: w.diagram.analysed, timeout=10000)
    if w.diagram.compare_run is not None:
        w.compare_with(None)
    w.playback.set_loop_range(None, None)
    w.playback.seek_frame(0)
    assert not _boxes() and w.diagram.compare_run is None
    return w


@pytest.mark.parametrize("make", [link_loop, huge_points, plotted_chunk, fifo])
def test_bad_file_gives_dialog_and_keeps_the_run_shown(window, qtbot, tmp_path, make):
    bad, dataset = make(tmp_path)
    good, title, n = window.run, window.windowTitle(), window.playback.n_frames
    window.playback.set_loop_range(1000, 2000)
    window.playback.seek_frame(1234)
    plotted = list(window.diagram.plots.names)
    guard = _FifoGuard(bad) if make is fifo else None
    try:
        assert not window.open_path(bad)          # as File > Open and a drop do
    finally:
        if guard is not None:
            guard.finish()
    assert guard is None or not guard.unblocked, "opening the FIFO blocked"
    boxes = _boxes("Cannot open run file")
    assert len(boxes) == 1
    text = boxes[0].text()
    assert text.startswith(f"{bad}: ") and dataset in text
    assert window.isVisible() and window.windowTitle() == title
    assert window.run is good and window.diagram.run is good and window.playback.n_frames == n
    assert window.playback.frame == 1234 and window.diagram.scene.current_frame == 1234
    assert window.playback.loop_range == (1000, 2000) and window.diagram.plots.names == plotted
    assert window.recent_runs()[0].endswith("synthetic_approach.h5")
    boxes[0].accept()
    window.playback.step(1)                        # the run shown before still plays
    assert window.diagram.scene.current_frame == 1235 and not _boxes()


def test_bad_file_dialog_screenshot(window, qtbot, tmp_path, artifacts):
    """The dialog over the window, as a user sees it (the whole screen grabbed)."""
    from PySide6.QtWidgets import QApplication
    bad, _ = plotted_chunk(tmp_path)
    assert not window.open_run(bad)
    box = _boxes()[0]
    qtbot.waitExposed(box)
    qtbot.wait(200)
    path = artifacts / "bad_run_dialog.png"
    assert QApplication.primaryScreen().grabWindow(0).save(str(path))


def test_compare_with_a_bad_file_keeps_the_run_and_no_comparison(window, qtbot, tmp_path):
    bad, _ = huge_points(tmp_path)
    good = window.run
    assert not window.compare_with(bad)
    assert window.run is good and window.diagram.compare_run is None
    assert [b.text().startswith(f"{bad}: ") for b in _boxes()] == [True]


def test_corrupt_chunk_met_while_playing_pauses_once(qtbot, tmp_path, capfd, artifacts):
    """A device channel (read frame by frame) with a corrupt chunk: the run opens; playing into the chunk pauses
    with one message naming file and dataset; stepping and scrubbing inside it add none; scrubbing back works."""
    bad = corrupt_chunk(tmp_path, "channels/head_offset_y")
    w = main_window(qtbot, tmp_path / "settings.ini", run=bad, activate=False)
    messages = []
    w.diagram.readError.connect(messages.append)
    pb, devices = w.playback, w.diagram.devices
    pb.seek_frame(8150)
    pb.play()
    qtbot.waitUntil(lambda: not pb.playing, timeout=10000)
    assert 8192 <= pb.frame < 12288
    assert messages == [f"{bad}: /channels/head_offset_y: data cannot be read, file truncated or corrupt "
                        "(Can't synchronously read data (filter returned failure during read))"]
    assert [b.text() for b in _boxes("Cannot read run file")] == messages
    assert np.isfinite(devices.value("head_offset_y"))       # the last good picture stays
    qtbot.wait(200)
    from PySide6.QtWidgets import QApplication
    QApplication.primaryScreen().grabWindow(0).save(str(artifacts / "bad_chunk_while_playing.png"))
    for f in (pb.frame + 1, 9000, 12000):                     # scrubbing inside the bad chunk
        pb.seek_frame(f)
    pb.step(1)
    assert len(messages) == 1 and len(_boxes()) == 1
    with h5py.File(SYNTHETIC_RUN, "r") as f:
        expected = f["channels/head_offset_y"][100]
    pb.seek_frame(100)                                        # scrub back
    assert devices.value("head_offset_y") == expected and w.diagram.scene.current_frame == 100
    pb.seek_frame(12400)                                      # past the chunk
    assert w.diagram.scene.current_frame == 12400 and len(messages) == 1
    assert "Traceback" not in capfd.readouterr().err


def test_unexpected_error_in_a_slot_is_one_dialog_and_the_app_goes_on(window, qtbot):
    """The last-resort hook: an exception no code caught (here raised in a timer slot, five times) is logged
    and shown once, non-modal."""
    from PySide6.QtCore import QTimer

    from app.main_window import UnexpectedErrors

    def boom():
        raise ValueError("a bug in a slot")
    hook = UnexpectedErrors(window).install()
    try:
        for _ in range(5):
            QTimer.singleShot(0, boom)
        qtbot.waitUntil(lambda: sum(hook.seen.values()) == 5, timeout=3000)
    finally:
        hook.uninstall()
    boxes = _boxes("Unexpected error")
    assert len(boxes) == 1 and "ValueError: a bug in a slot" in boxes[0].text() and not boxes[0].isModal()
    assert window.isVisible() and window.run is not None


def test_view_command_on_a_bad_file_opens_the_window_with_the_dialog(qtbot, tmp_path, artifacts):
    """`dockmnemo view BAD.h5` (cmd_view -> run_app -> start_app, then the event loop) does not exit: the window
    opens empty and the dialog names the file."""
    from app.main_window import start_app
    bad, _ = huge_points(tmp_path)
    w, errors = start_app(bad)
    errors.uninstall()
    qtbot.addWidget(w)
    assert w.isVisible() and w.windowTitle() == "dockmnemo" and w.run is None
    boxes = _boxes("Cannot open run file")
    assert len(boxes) == 1 and boxes[0].text().startswith(f"{bad}: ")
    for b in boxes:
        b.close()
    w.resize(1280, 720)
    qtbot.wait(100)
    w.grab().save(str(artifacts / "no_run_open_1280x720.png"))
    # the scene's views with no run: the pane's ground and a note, not a black box (before: a black rectangle
    # across the views and camera buttons that aim at nothing)
    scene = w.diagram.scene
    img = scene.vtk_widget.grab().toImage()
    black = sum(img.pixelColor(x, y).value() < 4 for x in range(0, img.width(), 8) for y in range(0, img.height(), 8))
    assert black == 0
    assert scene.vtk_widget.placeholder[0] == "scene: no run open"
    assert not scene.camera_buttons.isVisible()
    labels = [it.text for it in w.diagram.plots.glw.ci.items if hasattr(it, "text")]
    assert labels == ["plots: no run open"]


def test_a_recent_run_damaged_since_gives_dialog_from_the_menu(window, qtbot, tmp_path):
    """File > Open recent on a run that was fine when opened and is now damaged (a soft-link loop)."""
    path = _copy(tmp_path, "was_fine.h5")
    assert window.open_run(path) and window.open_run(SYNTHETIC_RUN)
    good, title = window.run, window.windowTitle()
    loop, _ = link_loop(tmp_path)
    os.replace(loop, path)
    action = next(a for a in window.recent_menu.actions() if a.text() == str(path.resolve()))
    action.trigger()
    boxes = _boxes("Cannot open run file")
    assert len(boxes) == 1 and boxes[0].text().startswith(f"{path}: ")
    assert window.run is good and window.windowTitle() == title
