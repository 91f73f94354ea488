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
