"""Main window: menus, opening runs (with error dialogs), recent runs, drag and drop."""
from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox

from solver.runfile import RunFile, RunFileError
from viewer.run_facts import RunFactsPanel

APP_NAME = "dockmnemo"
MAX_RECENT = 10


class MainWindow(QMainWindow):
    """The dockmnemo window; holds at most one open run and never closes on a bad file."""

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings(APP_NAME, APP_NAME)
        self.run: RunFile | None = None
        self.last_error: str = ""
        self.error_box: QMessageBox | None = None
        self.setWindowTitle(APP_NAME)
        self.setAcceptDrops(True)
        self.facts = RunFactsPanel()
        self.setCentralWidget(self.facts)
        self._build_menus()
        self.resize(1400, 900)

    # ---- menus ----------------------------------------------------------------------------
    def _build_menus(self):
        mb = self.menuBar()
        m = mb.addMenu("&File")
        a = QAction("&Open run…", self, shortcut=QKeySequence.Open, triggered=self.open_dialog)
        m.addAction(a)
        self.recent_menu = m.addMenu("Open &recent")
        self._refresh_recent()
        m.addSeparator()
        m.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))
        h = mb.addMenu("&Help")
        h.addAction(QAction("&About dockmnemo", self, triggered=self._about))

    def _about(self):
        QMessageBox.about(self, "About dockmnemo",
                          "dockmnemo: the dynamic mnemonic diagram of probe-cone docking.\n"
                          "Run files: HDF5, format dockmnemo-run v1.")

    def recent_runs(self) -> list[str]:
        v = self.settings.value("recent_runs", [])
        if isinstance(v, str):
            v = [v]
        return [str(x) for x in (v or [])]

    def _remember(self, path: Path):
        lst = [str(path)] + [p for p in self.recent_runs() if p != str(path)]
        self.settings.setValue("recent_runs", lst[:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self):
        self.recent_menu.clear()
        for p in self.recent_runs():
            self.recent_menu.addAction(QAction(p, self, triggered=lambda _=False, p=p: self.open_run(p)))
        self.recent_menu.setEnabled(bool(self.recent_runs()))

    def open_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, "Open run", str(Path.cwd()), "Run files (*.h5 *.hdf5);;All files (*)")
        if path:
            self.open_run(path)

    # ---- runs -----------------------------------------------------------------------------
    def open_run(self, path) -> bool:
        """Open a run; on a bad file show the reader's message in a dialog and keep the current run."""
        path = Path(path)
        try:
            run = RunFile(path)
        except RunFileError as exc:
            self.show_error(str(exc))
            return False
        old, self.run = self.run, run
        self.facts.set_run(run)
        if old is not None:
            old.close()
        self.setWindowTitle(f"{APP_NAME} — {path.name} [{run.meta.variant}]")
        self._remember(path.resolve())
        return True

    def show_error(self, message: str):
        self.last_error = message
        box = self.error_box = QMessageBox(QMessageBox.Critical, "Cannot open run file", message,
                                           QMessageBox.Ok, self)
        box.setTextInteractionFlags(Qt.TextSelectableByMouse)
        box.open()

    # ---- drag and drop --------------------------------------------------------------------
    def dragEnterEvent(self, e):
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e):
        for url in e.mimeData().urls():
            if url.isLocalFile():
                self.open_run(url.toLocalFile())
                break

    def closeEvent(self, e):
        if self.run is not None:
            self.run.close()
        super().closeEvent(e)


def run_app(path) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    w = MainWindow()
    w.show()
    w.open_run(path)
    return app.exec()
