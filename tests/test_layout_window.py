"""The window on the screen it opens on: fitted to a 1280x720 screen (playback bar and events dock in sight), pane
titles maximise and restore a pane, named layouts, the light theme, and `view --screenshot` (headless pictures)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PIL import Image  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from tests.gui_util import main_window  # noqa: E402
from viewer import style  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "sample_runs" / "expert_existing.h5"
XVFB = shutil.which("xvfb-run")

FIT_SCRIPT = """
import json, sys
from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.main_window import MainWindow
s = QSettings(sys.argv[1], QSettings.IniFormat)
w = MainWindow(s)
w.show()
w.open_run(sys.argv[2])
for _ in range(30):
    app.processEvents()
avail = w.screen().availableGeometry()
def inside(x):
    return w.isVisible() and avail.contains(QRect(x.mapToGlobal(x.rect().topLeft()), x.size()))
print(json.dumps({"avail": avail.getRect(), "frame": w.frameGeometry().getRect(),
                  "bar": inside(w.diagram.play_button.parentWidget()), "dock": inside(w.events_dock),
                  "dock_share": w.events_dock.width() / w.width()}))
w.save_layout()
"""


@pytest.mark.skipif(XVFB is None, reason="needs xvfb-run")
def test_the_window_fits_a_1280x720_screen(tmp_path):
    """A first start and a start with a 1600x1000 window saved: within the screen, the bar and the dock in sight."""
    ini = tmp_path / "s.ini"
    for attempt in ("first start", "saved 1600x1000"):
        if attempt == "saved 1600x1000":
            text = ini.read_text()
            assert "geometry" in text
        r = subprocess.run([XVFB, "-a", "-s", "-screen 0 1280x720x24", sys.executable, "-c", FIT_SCRIPT, str(ini),
                            str(RUN)], capture_output=True, text=True, cwd=ROOT, timeout=120)
        got = json.loads(r.stdout.strip().splitlines()[-1])
        ax, ay, aw, ah = got["avail"]
        fx, fy, fw, fh = got["frame"]
        assert (aw, ah) == (1280, 720)
        assert ax <= fx and ay <= fy and fx + fw <= ax + aw and fy + fh <= ay + ah, (attempt, got)
        assert got["bar"] and got["dock"] and got["dock_share"] <= 0.3, (attempt, got)


def test_a_double_click_on_a_pane_title_maximises_it_and_restores(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", RUN, size=(1280, 720), activate=False)
    d = w.diagram
    d.set_pane_visible("devices", False)                       # the user's choice survives maximise and restore
    qtbot.mouseDClick(w.pane_titles["plots"], Qt.LeftButton)
    qtbot.wait(50)
    assert w.maximised == "plots"
    assert d.plots.isVisible() and not d.scene.isVisible() and not d.devices.isVisible()
    assert d.plots.height() > 560                              # the pane takes the diagram's height
    assert "restore" in w.pane_titles["plots"].text()
    qtbot.mouseDClick(w.pane_titles["plots"], Qt.LeftButton)
    qtbot.wait(50)
    assert w.maximised is None and d.scene.isVisible() and d.plots.isVisible() and not d.devices.isVisible()
    assert w.pane_titles["plots"].text() == "Plots"


def test_named_layouts_are_saved_and_loaded(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    w = main_window(qtbot, tmp_path / "s.ini", RUN, size=(1366, 768), activate=False)
    d = w.diagram
    d.plots.set_plotted(["Fx", "probe_stroke"])
    d.set_pane_visible("scene", False)
    d.splitter.setSizes([0, 150, 500])
    qtbot.wait(50)
    sizes = d.splitter.sizes()
    w.save_named_layout("review")
    d.plots.set_plotted(["Fy"])
    d.set_pane_visible("scene", True)
    w.toggle_maximised("devices")
    assert w.load_named_layout("review")
    qtbot.wait(50)
    assert d.plots.names == ["Fx", "probe_stroke"] and not d.scene.isVisible() and d.devices.isVisible()
    assert w.maximised is None and d.splitter.sizes() == sizes
    assert not w.load_named_layout("no such")
    names = [a.text() for a in w.layouts_menu.actions()]
    w._fill_layouts_menu()
    assert "review" in [a.text() for a in w.layouts_menu.actions()], names
    w2 = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))   # kept for the next start
    qtbot.addWidget(w2)
    assert w2.layout_names() == ["review"]
    w2.delete_named_layout("review")
    assert w2.layout_names() == []


def test_the_theme_choice_is_kept(qtbot, tmp_path):
    w = main_window(qtbot, tmp_path / "s.ini", None, size=(1280, 720), activate=False)
    try:
        w.choose_theme("light")
        assert w.settings.value("theme") == "light" and w.theme_actions["light"].isChecked()
    finally:
        w.choose_theme("dark")   # (the palette is the process's: the next tests' windows are dark)


def _shot(tmp_path, *args):
    out = tmp_path / f"shot{len(list(tmp_path.iterdir()))}.png"
    r = subprocess.run([sys.executable, "-m", "app", "view", str(RUN), *args, "--screenshot", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=180)
    return r, out


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])


def _theme_shown(out, theme, size):
    """The screenshot is `size` and its panes' ground is the theme's (light: mostly bright)."""
    im = np.asarray(Image.open(out).convert("RGB")).astype(int)
    assert im.shape[:2] == (size[1], size[0])
    background = _rgb(style.THEMES[theme]["BACKGROUND"])
    share = (np.abs(im - background).max(axis=2) <= 2).mean()    # the panes' ground is the theme's
    assert share > 0.2, share
    assert (im.mean(axis=2) > 200).mean() > (0.4 if theme == "light" else 0.0)


@pytest.mark.slow
def test_view_screenshot_renders_the_window_at_its_size_time_and_theme(tmp_path):
    """The dark theme at a set time (the light one: the playing screenshot below)."""
    r, out = _shot(tmp_path, "--at", "24.7", "--size", "1366x768", "--theme", "dark")
    assert r.returncode == 0, r.stderr
    assert "1366x768, T Current 24.700 s" in r.stdout
    _theme_shown(out, "dark", (1366, 768))


@pytest.mark.slow
def test_view_screenshot_while_playing_and_bad_requests(tmp_path, capsys):
    """Playing, in the light theme (one process for both); a bad size refused in this process (before any window)
    and a bad run file by the real command: exit 2, no picture."""
    r, out = _shot(tmp_path, "--at", "10", "--size", "1366x768", "--playing", "--theme", "light")
    assert r.returncode == 0 and ", playing" in r.stdout and "1366x768, T Current " in r.stdout, r.stderr
    t = float(r.stdout.split("T Current ")[1].split(" s")[0])
    assert 10.3 < t < 14.0                                   # played about a second of run time
    _theme_shown(out, "light", (1366, 768))
    from app.cli import main
    capsys.readouterr()
    out = tmp_path / "small.png"
    assert main(["view", str(RUN), "--size", "12x7", "--screenshot", str(out)]) == 2
    assert "--size" in capsys.readouterr().err and not out.exists()
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"no")
    r = subprocess.run([sys.executable, "-m", "app", "view", str(bad), "--screenshot", str(tmp_path / "b.png")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "bad.h5" in r.stderr and not (tmp_path / "b.png").exists()
