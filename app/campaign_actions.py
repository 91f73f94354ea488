"""The main window's campaign view: the envelope map dock, and opening a clicked run (re-running it if needed).

A run kept by the campaign opens at once; a run kept only in the summary is re-simulated in the worker
process (`dockmnemo campaign-rerun`) into the runs folder and opened when done. Re-runs are kept there
(runs_dir/campaign_reruns/NAME_HASH/run_NNNNN.h5), so a second click opens the file without re-running.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget

from viewer.envelope_map import EnvelopeMap

DOCK_WIDTH = 640


class CampaignView(QObject):
    """The envelope-map dock of a MainWindow and what its clicks do."""

    def __init__(self, window):
        super().__init__(window)
        self.w = window
        self.dock = QDockWidget("Envelope map", window)
        self.dock.setObjectName("envelope_dock")
        self.map = EnvelopeMap(self.dock)
        self.dock.setWidget(self.map)
        window.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        if window.events_dock.isVisible() and not window.events_dock.isFloating():
            window.tabifyDockWidget(window.events_dock, self.dock)
        self.dock.toggleViewAction().setText("Envelope &map dock")
        window.view_menu().addAction(self.dock.toggleViewAction())
        self.map.runRequested.connect(self.open_run)
        self.pending: tuple[int, Path] | None = None     # (run index, file) being re-run in the worker
        self.opened: dict[Path, int] = {}                 # run files opened from the map -> campaign run index
        self.last_action = ""                             # "opened" | "cached" | "rerun" | "busy" (for tests)

    @property
    def summary(self):
        return self.map.summary

    def open(self, directory) -> bool:
        """Show the campaign in `directory`; on a bad one, a dialog names what is wrong and nothing changes."""
        from solver.campaign import CampaignError
        try:
            self.map.open(directory)
        except Exception as exc:  # noqa: BLE001  (any failure to read a campaign becomes a message)
            text = (str(exc) if isinstance(exc, (CampaignError, OSError))
                    else f"{directory}: cannot be read ({type(exc).__name__}: {exc})")
            self.w.show_error(text, title="Cannot open campaign")
            return False
        self.opened.clear()
        self.dock.show()
        self.dock.raise_()
        self.w.resizeDocks([self.dock], [DOCK_WIDTH], Qt.Horizontal)
        self.map.show_status("hover a point for its run; click to open it in the mnemonic diagram")
        return True

    def rerun_path(self, index: int) -> Path:
        """Where a re-run of run `index` is kept: per campaign (directory and campaign file) in the runs folder."""
        s = self.summary
        h = hashlib.sha1(str(Path(s.directory).resolve()).encode())
        toml = Path(s.directory) / "campaign.toml"
        if toml.is_file():
            h.update(toml.read_bytes())
        return self.w.runs_dir() / "campaign_reruns" / f"{s.name}_{h.hexdigest()[:8]}" / f"run_{int(index):05d}.h5"

    def open_run(self, index: int) -> str:
        """Open run `index`: the campaign's kept file, an earlier re-run, or re-run it now in the worker."""
        s = self.summary
        kept = s.run_path(int(index))
        for action, path in (("opened", kept), ("cached", self.rerun_path(index))):
            if path is not None and Path(path).is_file():
                self.opened[Path(path).resolve()] = int(index)
                if self.w.open_run(path):
                    self.map.show_status(f"run {index}: {Path(path).name} open in the mnemonic diagram")
                    self.last_action = action
                    return action
                self.opened.pop(Path(path).resolve(), None)
        if self.w.runner.running:
            self.map.show_status(f"run {index}: another run is being simulated; wait for it or cancel it "
                                 "(Run \u25b8 Cancel run), then click again")
            self.last_action = "busy"
            return "busy"
        out = self.rerun_path(index)
        self.pending = (int(index), out)
        self.w.start_campaign_rerun(s.directory, int(index), out)
        self.map.show_status(f"run {index}: kept only in the summary, re-running it (progress in the status bar)")
        self.last_action = "rerun"
        return "rerun"

    def run_finished(self, path: str, code: int, message: str) -> bool:
        """The worker ended; True if it was a re-run of ours (then opened, or its failure shown)."""
        if self.pending is None or Path(path) != self.pending[1]:
            return False
        index, out = self.pending
        self.pending = None
        if code == 0 and out.is_file():
            self.opened[out.resolve()] = index
            if self.w.open_run(out):
                self.map.show_status(f"run {index}: re-run, open in the mnemonic diagram ({out})")
            return True
        self.map.show_status(f"run {index}: re-run ended: {message}")
        if code not in (4, -1):       # cancelled or killed: the user knows; a failure gets a dialog
            self.w.show_error(f"re-running run {index} of campaign {self.summary.name}: {message}",
                              title="Re-run failed")
        return True

    def run_opened(self, path: Path) -> None:
        """Ring the run on the map if the main window's run is one of the campaign's."""
        self.map.mark_run(self.opened.get(Path(path).resolve()))
