"""File-menu actions for report clips: edit the run's clip list, export video (dialogs in viewer.clip_dialogs)."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


def add_clip_actions(window, menu):
    """Add "Clips…" and "Export video…" to `menu`; they act on the window's open run."""
    window.act_clips = QAction("&Clips…", window, triggered=lambda: open_clip_list(window))
    window.act_export = QAction("&Export video…", window, shortcut=QKeySequence("Ctrl+E"),
                                triggered=lambda: open_export(window))
    menu.addAction(window.act_clips)
    menu.addAction(window.act_export)


def open_clip_list(window):
    """The clip-list dialog for the open run (None without a run)."""
    from viewer.clip_dialogs import ClipListDialog
    if window.run is None:
        return None
    window.playback.pause()
    dlg = window.clip_dialog = ClipListDialog(window.run, window.playback.t_current, parent=window)
    dlg.open()
    return dlg


def open_export(window):
    """The export dialog for the open run with the window's diagram as the look to export."""
    from viewer.clip_dialogs import ExportDialog
    if window.run is None:
        return None
    window.playback.pause()
    dlg = window.export_dialog = ExportDialog(window.run, window.diagram, parent=window)
    dlg.exported.connect(lambda p: window.statusBar().showMessage(f"exported {p}", 10000))
    dlg.open()
    return dlg
