"""GUI smoke test under Xvfb: the main window opens on the bundled run and survives a bad file."""
import pytest

pytest.importorskip("PySide6")

from app.cli import SYNTHETIC_RUN  # noqa: E402
from app.main_window import MainWindow  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_opens_bundled_run_and_saves_screenshot(window, qtbot, artifacts):
    assert window.open_run(SYNTHETIC_RUN)
    assert window.run is not None and window.run.n_frames > 1000
    assert "synthetic_approach.h5" in window.windowTitle()
    assert window.recent_runs()[0].endswith("synthetic_approach.h5")
    qtbot.wait(50)
    img = window.grab_image()  # the VTK scene composed in (QWidget.grab leaves it black)
    path = artifacts / "main_window.png"
    assert img.save(str(path))
    assert path.stat().st_size > 5000


def test_bad_file_shows_dialog_and_keeps_run(window, qtbot, tmp_path):
    assert window.open_run(SYNTHETIC_RUN)
    good = window.run
    bad = tmp_path / "broken.h5"
    bad.write_text("not hdf5")
    assert not window.open_run(bad)
    assert window.run is good and window.isVisible()
    assert "broken.h5" in window.last_error and "not an HDF5 file" in window.last_error
    box = window.error_box
    assert box is not None and box.isVisible() and "broken.h5" in box.text()
    box.accept()


def _with_nan_pose(tmp_path, frame):
    import shutil

    import h5py
    import numpy as np
    p = tmp_path / f"nan_pose_{frame}.h5"
    shutil.copy(SYNTHETIC_RUN, p)
    with h5py.File(p, "r+") as f:
        d = f["bodies/position"]
        row = d[frame]
        row[3, 0] = np.nan
        d[frame] = row
    return p


def test_nan_pose_in_first_block_refuses_the_run(window, qtbot, tmp_path):
    assert window.open_run(SYNTHETIC_RUN)
    good = window.run
    bad = _with_nan_pose(tmp_path, 100)
    assert not window.open_run(bad)
    assert window.run is good
    assert window.last_error == f"{bad}: /bodies/position: NaN or inf at frame 100"
    window.error_box.accept()


def test_nan_pose_met_while_playing_pauses_and_says_where(window, qtbot, tmp_path):
    """Poses are checked per block as they are read: a bad frame far into the run shows when reached."""
    bad = _with_nan_pose(tmp_path, 9000)
    assert window.open_run(bad)
    pb = window.playback
    pb.seek_frame(8000)
    assert window.diagram.scene.current_frame == 8000 and window.error_box is None
    pb.play()
    pb.seek_frame(8500)      # same block as frame 9000 (frames 8192..12287)
    assert not pb.playing
    assert window.last_error == f"{bad}: /bodies/position: NaN or inf at frame 9000"
    box = window.error_box
    assert box.isVisible() and box.windowTitle() == "Cannot read run file"
    assert window.diagram.scene.current_frame == 8000    # the scene keeps the last pose it could read
    box.accept()
