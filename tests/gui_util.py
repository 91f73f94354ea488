"""Shared GUI-test helper: the main window shown under Xvfb with its own settings file."""
from pathlib import Path


def main_window(qtbot, settings_path: Path, run=None, size=(1600, 1000), activate=True):
    """A shown (and, by default, active) MainWindow with isolated QSettings, optionally on `run`."""
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    w = MainWindow(QSettings(str(settings_path), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    if activate:
        make_active(qtbot, w)
    if run is not None:
        assert w.open_run(run), w.last_error
        qtbot.waitUntil(lambda: w.diagram.analysed, timeout=10000)   # contact events and verdict (worker thread)
    return w


def make_active(qtbot, w, timeout_s: float = 15.0):
    """Give `w` the keyboard focus and wait until it holds it, asking again every 0.5 s (under load the X server's
    focus change can come late, or another window's earlier request can land after ours)."""
    import time
    end = time.monotonic() + timeout_s
    while True:
        w.activateWindow()
        w.raise_()
        try:
            qtbot.waitUntil(w.isActiveWindow, timeout=500)
            return
        except qtbot.TimeoutError:
            if time.monotonic() > end:
                raise AssertionError(f"{type(w).__name__} did not become the active window in {timeout_s:g} s")


def label_texts(widget) -> list[str]:
    """The texts of the labels a widget shows (what a user reads), in creation order; empty ones left out."""
    from PySide6.QtWidgets import QLabel
    return [lab.text() for lab in widget.findChildren(QLabel) if lab.text()]


def base_loads_line(scene) -> str:
    """The scene's base loads line ("base: Fx 30.0 N …")."""
    return next((t for t in label_texts(scene) if t.startswith("base:")), "")


def module_window(request, tmp_path_factory, run=None, size=(1600, 1000), activate=False):
    """One main window for a whole test module (the costly part of a GUI test is building and opening it): shown,
    on `run`, with its own settings; the caller closes it (`w.close()`) when the module is done."""
    from pytestqt.qtbot import QtBot
    qtbot = QtBot(request)
    name = request.module.__name__.rsplit(".", 1)[-1]
    return main_window(qtbot, tmp_path_factory.mktemp(name) / "s.ini", run, size=size, activate=activate)
