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


# ---- report figures (File → Export figure…) ----------------------------------------------------------
FIGURE_FILTER = "PDF (*.pdf);;SVG (*.svg);;PNG (*.png)"


def add_figure_action(window, menu, before=None):
    """Add "Export figure…" (the report figure of the plots shown, drawn with matplotlib) to `menu`."""
    window.act_export_figure = QAction("Export &figure (PDF, SVG, PNG)…", window, shortcut=QKeySequence("Ctrl+Shift+E"),
                                       triggered=lambda: export_figure_dialog(window))
    menu.insertAction(before, window.act_export_figure)
    return window.act_export_figure


def figure_spec_of(window):
    """The report-figure spec of the window's plots as shown: the plots pane's `figure_spec()` where it has one,
    else one plot per plotted channel over the shown time range; T Current from the playback; size, dpi and theme
    from the settings (default 160x120 mm, 300 dpi, light)."""
    from viewer.report_figure import FigureSpec
    pane = window.diagram.plots
    if hasattr(pane, "figure_spec"):
        shown = pane.figure_spec()
    else:
        shown = {"plots": [[n] for n in pane.names], "xy": [], "t": pane.x_range()}
    t = shown.get("t")
    at = float(window.playback.t_current)
    if t is not None and not (t[0] <= at <= t[1]):
        at = None
    run = window.run
    t0, t1 = float(run.time[0]), float(run.time[-1])
    if t is not None:
        t = (max(float(t[0]), t0), min(float(t[1]), t1))
    from viewer.report_figure import FigureError, parse_size
    s = window.settings
    try:   # the size, dpi and theme kept in the settings (figure/size, figure/dpi, figure/theme), else report defaults
        dpi = int(s.value("figure/dpi", 300))
        size = parse_size(str(s.value("figure/size", "160x120mm")), dpi)
    except (FigureError, TypeError, ValueError):
        dpi, size = 300, parse_size("160x120mm", 300)
    theme = str(s.value("figure/theme", "light"))
    return FigureSpec(plots=[list(p) for p in shown.get("plots", []) if p], xy=[tuple(p) for p in shown.get("xy", [])],
                      t=t, at=at, size=size, dpi=dpi, theme=theme if theme in ("light", "dark") else "light")


def export_figure(window, path):
    """Write the report figure of the window's plots to `path` (.pdf, .svg, .png); the measured record and the
    compared run shown are drawn dashed over their channels."""
    from viewer.report_figure import save_figure
    measured = getattr(getattr(window, "measured", None), "comparison", None)
    d = window.diagram
    compare = (d.compare_run, d.compare_offset) if d.compare_run is not None else None
    return save_figure(window.run, figure_spec_of(window), path, measured, compare)


def export_figure_dialog(window, path=None):
    """Ask for a file (PDF, SVG or PNG) and write the report figure of the plots shown; a failure gives a dialog."""
    from pathlib import Path

    from PySide6.QtWidgets import QFileDialog
    if window.run is None:
        return None
    window.playback.pause()
    if path is None:
        start = Path(str(window.settings.value("export_dir", str(Path.cwd())))) / f"{window.run.path.stem}_figure.pdf"
        path, chosen = QFileDialog.getSaveFileName(window, "Export figure", str(start), FIGURE_FILTER)
        if not path:
            return None
        if Path(path).suffix.lower() not in (".pdf", ".svg", ".png"):
            path += "." + chosen.split("*.")[1].rstrip(")") if "*." in chosen else ".pdf"
    path = Path(path)
    try:
        export_figure(window, path)
    except Exception as exc:  # noqa: BLE001  (a failed figure becomes a message)
        window.show_error(f"{path}: cannot be written ({exc})", "Cannot export figure")
        return None
    window.settings.setValue("export_dir", str(path.parent))
    window.statusBar().showMessage(f"exported {path}", 10000)
    return path
