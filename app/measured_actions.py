"""File → Open / Close measured data, the measured − run plots, the metrics dock; the plots' CSV export, their context
menu (with File → Export figure…, app.export_actions) and the wheel zoom's way back. Dialogs here; drawing in viewer.plots, numbers in solver.measured."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from solver.measured import compare_arrays, load_measured
from viewer.diagram import describe_failure
from viewer.measured_dock import MeasuredDock
from viewer.plots.export import export_csv

RECORD_FILTER = "Measured records (*.csv *.txt *.tsv *.dat *.h5 *.hdf5 *.hdf *.mat);;All files (*)"


def map_next_to(record) -> Path | None:
    """The channel map found next to a record: `<stem>_map.toml`, else None."""
    p = Path(record)
    m = p.with_name(p.stem + "_map.toml")
    return m if m.is_file() else None


def compare_open_run(run, record, map_path, offset: float | None = None):
    """A solver.measured.Comparison of the open RunFile with a record through a map (MeasuredError on bad input)."""
    cmap, sig = load_measured(record, map_path, {n: c.unit for n, c in run.channels.items()})
    t = np.asarray(run.time, float)
    values = {ch: np.asarray(run.channel(ch), float) for ch in cmap.run_channels}
    return compare_arrays(t, values, sig, cmap, offset, run.path)


class MeasuredView:
    """The window's measured record (record, map, comparison) and the plot export and zoom actions."""

    def __init__(self, window):
        self.w = window
        self.record: Path | None = None
        self.map: Path | None = None
        self.offset: float | None = None
        self.comparison = None
        self.dock = MeasuredDock(window)
        window.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        if getattr(window, "events_dock", None) is not None:
            window.tabifyDockWidget(window.events_dock, self.dock)
            window.events_dock.raise_()
        self.dock.hide()
        pane = window.diagram.plots
        self.act_open = QAction("Open &measured data…", window, shortcut=QKeySequence("Ctrl+M"),
                                triggered=self.open_dialog)
        self.act_close = QAction("C&lose measured data", window, triggered=self.close, enabled=False)
        self.act_diff = QAction("&Measured − run difference plots", window, checkable=True, enabled=False,
                                toggled=self.set_difference)
        self.act_csv = QAction("Export shown plot &data as CSV…", window, triggered=self.export_csv_dialog)
        self.act_reset_zoom = QAction("&Reset plot zoom", window, shortcut=QKeySequence("Ctrl+0"),
                                      triggered=pane.reset_zoom, enabled=False)
        pane.zoomChanged.connect(lambda z: self.act_reset_zoom.setEnabled(z is not None))
        pane.menuRequested.connect(self.plot_menu)
        menus = {a.text(): a.menu() for a in window.menuBar().actions() if a.menu() is not None}
        file_menu, view_menu = menus["&File"], menus["&View"]
        seps = [a for a in file_menu.actions() if a.isSeparator()]
        anchor = seps[0] if seps else None
        for a in (self.act_open, self.act_close):
            file_menu.insertAction(anchor, a)
        last = seps[-1] if seps else None
        file_menu.insertAction(last, self.act_csv)
        view_menu.addSeparator()
        self.dock.toggleViewAction().setText("Measured data &metrics dock")
        for a in (self.act_diff, self.dock.toggleViewAction(), self.act_reset_zoom):
            view_menu.addAction(a)

    # ---- measured data ------------------------------------------------------------------------
    def open_dialog(self):
        w = self.w
        if w.run is None:
            w.show_error("open a run first: measured data is compared with the open run", "Cannot open measured data")
            return False
        start = str(w.settings.value("measured_dir", str(Path.cwd())))
        record, _ = QFileDialog.getOpenFileName(w, "Open measured record", start, RECORD_FILTER)
        if not record:
            return False
        w.settings.setValue("measured_dir", str(Path(record).parent))
        cmap = map_next_to(record)
        if cmap is None:
            cmap, _ = QFileDialog.getOpenFileName(w, "Channel map for " + Path(record).name, str(Path(record).parent),
                                                  "Channel maps (*.toml);;All files (*)")
            if not cmap:
                return False
        return self.open(record, cmap)

    def open(self, record, map_path=None, offset: float | None = None) -> bool:
        """Compare the open run with a record (map: given, else `<stem>_map.toml` next to it); on any failure one
        message `file: key: problem` and what was shown stays."""
        w = self.w
        map_path = map_path or map_next_to(record)
        if w.run is None:
            w.show_error(f"{record}: open a run first: measured data is compared with the open run",
                         "Cannot open measured data")
            return False
        if map_path is None:
            w.show_error(f"{record}: channel map: none given and no {Path(record).stem}_map.toml next to it",
                         "Cannot open measured data")
            return False
        try:
            comparison = compare_open_run(w.run, record, map_path, offset)
        except Exception as exc:  # noqa: BLE001  (any failure to read a record or map becomes a message)
            w.show_error(self._message(record, exc), "Cannot open measured data")
            return False
        return self._show(comparison, Path(record), Path(map_path), offset)

    def _message(self, record, exc) -> str:
        from solver.errors import InputError
        return str(exc) if isinstance(exc, InputError) else describe_failure(record, exc)

    def _show(self, comparison, record, map_path, offset) -> bool:
        pane = self.w.diagram.plots
        before = pane.measured
        try:
            pane.set_measured(comparison)
        except Exception as exc:  # noqa: BLE001  (the plots keep what they showed)
            pane.set_measured(before)
            self.w.show_error(self._message(record, exc), "Cannot open measured data")
            return False
        self.record, self.map, self.offset, self.comparison = record, map_path, offset, comparison
        self.dock.set_comparison(comparison, f"{record.name} (map {map_path.name}) against {self.w.run.path.name}")
        self.dock.show()
        self.dock.raise_()
        for a in (self.act_close, self.act_diff):
            a.setEnabled(True)
        self.w.statusBar().showMessage(f"measured data {record.name}: time offset {comparison.offset:.6f} s", 10000)
        return True

    def close(self):
        """Drop the measured record from the plots and the dock."""
        self.record = self.map = self.offset = self.comparison = None
        self.w.diagram.plots.set_measured(None)
        self.dock.set_comparison(None)
        for a in (self.act_close, self.act_diff):
            a.setEnabled(False)

    def set_difference(self, on: bool):
        self.w.diagram.plots.set_measured(self.comparison, diff=on)

    def run_changed(self):
        """Another run opened: compare the record with it, or close it (status bar says why)."""
        if self.record is None or self.w.run is None:
            return
        try:
            comparison = compare_open_run(self.w.run, self.record, self.map, self.offset)
        except Exception as exc:  # noqa: BLE001
            note = self._message(self.record, exc)
            self.close()
            self.w.statusBar().showMessage(f"measured data closed: {note}", 15000)
            return
        self._show(comparison, self.record, self.map, self.offset)

    # ---- plot exports -----------------------------------------------------------------------------
    def export_csv_dialog(self):
        w = self.w
        if w.run is None:
            return None
        start = str(Path(str(w.settings.value("export_dir", str(Path.cwd())))) / f"{w.run.path.stem}_shown.csv")
        path, _ = QFileDialog.getSaveFileName(w, "Export the shown plot data as CSV", start, "CSV (*.csv)")
        if not path:
            return None
        return self._export(lambda: export_csv(w.diagram.plots, path), Path(path))

    def _export(self, write, path: Path):
        try:
            write()
        except Exception as exc:  # noqa: BLE001  (a failed write becomes a message)
            self.w.show_error(f"{path}: cannot be written ({type(exc).__name__}: {exc})", "Cannot export")
            return None
        self.w.settings.setValue("export_dir", str(path.parent))
        self.w.statusBar().showMessage(f"exported {path}", 10000)
        return path

    def plot_menu(self, index: int, screen_pos):
        """The plots' context menu: the report figure of the plots shown, the shown data, reset the zoom."""
        menu = QMenu(self.w)
        self.w.diagram.plots.add_plot_actions(menu, index)   # (remove a channel, XY plots, measuring cursors)
        for a in (getattr(self.w, "act_export_figure", None), self.act_csv, None, self.act_reset_zoom, self.act_diff):
            menu.addSeparator() if a is None else menu.addAction(a)
        self.menu = menu
        menu.popup(screen_pos.toPoint())
        return menu
