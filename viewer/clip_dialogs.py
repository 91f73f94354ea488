"""Dialogs for report clips: the clip list (intervals, speed, title cards; saved beside the run) and export.

The export runs in the GUI thread frame by frame under a modal QProgressDialog with Cancel; a cancelled
or failed export leaves no file (the encoder writes to a temporary name and renames at the end).
"""
from __future__ import annotations

from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QComboBox, QDialog, QDialogButtonBox,
                               QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QMessageBox, QProgressDialog, QPushButton, QSpinBox, QTableWidget,
                               QVBoxLayout, QWidget)

from solver.runfile import RunFile
from viewer import style
from viewer.clips import SIZES, Clip, ClipError, ClipList, sidecar_path
from viewer.video_export import ExportCancelled, OutputError, check_output

COLUMNS = ("start, s", "end, s", "speed, x", "title card text", "title, s")


def _error_style() -> str:
    return f"color: {style.ERROR_NOTE};"


def _ok_style() -> str:
    return f"color: {style.OK_NOTE};"


def load_clip_list(run_path) -> tuple[ClipList, str]:
    """The run's saved clip list (or an empty one) and a note saying what happened."""
    side = sidecar_path(run_path)
    if not side.exists():
        return ClipList(), ""
    try:
        return ClipList.load(side), f"loaded {side.name}"
    except (ClipError, OSError) as exc:
        return ClipList(), f"could not read the saved clips ({exc}); starting an empty list"


class ClipListDialog(QDialog):
    """Edit the clip list of a run: intervals with speed and title cards; Save writes RUN.clips.json."""

    saved = Signal(object)   # the ClipList written to the sidecar

    def __init__(self, run: RunFile, t_current: float = 0.0, clip_list: ClipList | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Clips — {Path(run.path).name}")
        self.resize(760, 420)
        self.run = run
        self.t0, self.t1 = float(run.time[0]), float(run.time[-1])
        self.t_current = float(t_current)
        self.sidecar = sidecar_path(run.path)
        note = ""
        if clip_list is None:
            clip_list, note = load_clip_list(run.path)
        self.fps, self.size = clip_list.fps, clip_list.size

        v = QVBoxLayout(self)
        v.addWidget(QLabel(f"Intervals of the run ({self.t0:g}–{self.t1:g} s), each played at its speed and "
                           f"preceded by its title card if it has text. Saved to {self.sidecar.name}."))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        hh = self.table.horizontalHeader()
        for c in range(len(COLUMNS)):
            hh.setSectionResizeMode(c, QHeaderView.Stretch if c == 3 else QHeaderView.ResizeToContents)
        v.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_button = QPushButton("&Add interval at T Current")
        self.remove_button = QPushButton("&Remove")
        self.up_button = QPushButton("Move &up")
        self.down_button = QPushButton("Move &down")
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            row.addWidget(b)
        row.addStretch(1)
        v.addLayout(row)
        self.add_button.clicked.connect(lambda: self.add_clip())
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.message = QLabel(wordWrap=True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        v.addWidget(self.message)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        v.addWidget(self.buttons)
        for c in clip_list.clips:
            self.add_clip(c, validate=False)
        self._note = note
        self.validate()

    # ---- rows ---------------------------------------------------------------------------------
    def _spin(self, lo, hi, value, decimals=3, step=0.1):
        s = QDoubleSpinBox()
        s.setRange(lo, hi)
        s.setDecimals(decimals)
        s.setSingleStep(step)
        s.setValue(value)
        s.setKeyboardTracking(True)
        s.valueChanged.connect(lambda _v: self.validate())
        return s

    def add_clip(self, clip: Clip | None = None, validate: bool = True):
        """Append a row (default: 2 s from T Current at 1x) and select it."""
        if clip is None:
            start = min(max(self.t_current, self.t0), self.t1)
            if start >= self.t1:
                start = max(self.t0, self.t1 - 2.0)
            clip = Clip(start, min(start + 2.0, self.t1), 1.0)
        r = self.table.rowCount()
        self.table.insertRow(r)
        self._set_row(r, clip)
        self.table.selectRow(r)
        if validate:
            self.validate()

    def _set_row(self, r: int, c: Clip):
        lo, hi = -1e6, 1e6  # not clamped to the run: a time outside it gets a message instead
        self.table.setCellWidget(r, 0, self._spin(lo, hi, c.start))
        self.table.setCellWidget(r, 1, self._spin(lo, hi, c.end))
        self.table.setCellWidget(r, 2, self._spin(0.0, 64.0, c.speed, step=0.25))
        title = QLineEdit(c.title)
        title.setPlaceholderText("(no title card)")
        title.textChanged.connect(lambda _t: self.validate())
        self.table.setCellWidget(r, 3, title)
        self.table.setCellWidget(r, 4, self._spin(0.0, 60.0, c.title_duration, decimals=1, step=0.5))

    def row_clip(self, r: int) -> Clip:
        w = self.table.cellWidget
        return Clip(w(r, 0).value(), w(r, 1).value(), w(r, 2).value(), w(r, 3).text().strip(), w(r, 4).value())

    def clips(self) -> list[Clip]:
        return [self.row_clip(r) for r in range(self.table.rowCount())]

    def clip_list(self) -> ClipList:
        return ClipList(self.clips(), self.fps, self.size)

    def selected_row(self) -> int:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    def remove_selected(self):
        r = self.selected_row()
        if r >= 0:
            self.table.removeRow(r)
            if self.table.rowCount():
                self.table.selectRow(min(r, self.table.rowCount() - 1))
            self.validate()

    def move_selected(self, d: int):
        r = self.selected_row()
        s = r + d
        if r < 0 or not 0 <= s < self.table.rowCount():
            return
        a, b = self.row_clip(r), self.row_clip(s)
        self._set_row(r, b)
        self._set_row(s, a)
        self.table.selectRow(s)
        self.validate()

    # ---- checks and saving --------------------------------------------------------------------
    def problems(self) -> list[str]:
        out = []
        for i, c in enumerate(self.clips()):
            try:
                c.validate(self.t0, self.t1)
            except ClipError as exc:
                out.append(f"interval {i + 1}: {exc}")
        return out

    def validate(self) -> bool:
        """Show what is wrong (or the video's length) and enable Save only for a valid list."""
        probs = self.problems()
        save = self.buttons.button(QDialogButtonBox.Save)
        n = self.table.rowCount()
        self.remove_button.setEnabled(n > 0)
        self.up_button.setEnabled(n > 1)
        self.down_button.setEnabled(n > 1)
        if probs:
            self.message.setStyleSheet(_error_style())
            self.message.setText("\n".join(probs))
        else:
            cl = self.clip_list()
            frames = cl.total_frames()
            text = (f"{n} interval{'s' if n != 1 else ''}: {frames / cl.fps:.1f} s of video "
                    f"({frames} frames at {cl.fps} fps)" if n else "no intervals: add one")
            if self._note_text():
                text = f"{self._note_text()}. {text}"
            self.message.setStyleSheet(_ok_style() if n else "")
            self.message.setText(text)
        save.setEnabled(not probs)
        return not probs

    def _note_text(self) -> str:
        return getattr(self, "_note", "")

    def save(self) -> bool:
        """Write the clip list beside the run; an unwritable folder shows a message and keeps the dialog."""
        if not self.validate():
            return False
        cl = self.clip_list()
        try:
            cl.save(self.sidecar)
        except OSError as exc:
            self.message.setStyleSheet(_error_style())
            self.message.setText(f"cannot save {self.sidecar}: {exc.strerror or exc}")
            return False
        self.saved.emit(cl)
        self.accept()
        return True


class ExportDialog(QDialog):
    """Choose format, resolution, frame rate and output file; Export renders with a progress dialog."""

    exported = Signal(object)   # Path of the written file or folder

    def __init__(self, run: RunFile, diagram=None, clip_list: ClipList | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Export video — {Path(run.path).name}")
        self.run = run
        self.diagram = diagram
        self.last_error = ""
        self.progress: QProgressDialog | None = None
        self.clip_list = clip_list if clip_list is not None else load_clip_list(run.path)[0]
        form = QFormLayout(self)
        self.format_combo = QComboBox()
        for key, text in (("mp4", "MP4 (H.264)"), ("gif", "GIF"), ("png", "PNG sequence (folder)")):
            self.format_combo.addItem(text, key)
        self.size_combo = QComboBox()
        for key in ("720p", "1080p", "480p"):
            w, h = SIZES[key]
            self.size_combo.addItem(f"{key} ({w}×{h})", f"{w}x{h}")
        w, h = self.clip_list.size
        i = self.size_combo.findData(f"{w}x{h}")
        if i < 0:
            self.size_combo.addItem(f"{w}×{h}", f"{w}x{h}")
            i = self.size_combo.count() - 1
        self.size_combo.setCurrentIndex(i)
        self.fps_spin = QSpinBox()
        self.fps_spin.setRange(1, 120)
        self.fps_spin.setValue(self.clip_list.fps)
        self.fps_spin.setSuffix(" fps")
        out_row = QWidget()
        h = QHBoxLayout(out_row)
        h.setContentsMargins(0, 0, 0, 0)
        self.output_edit = QLineEdit(str(self._default_output("mp4")))
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self.browse)
        h.addWidget(self.output_edit, 1)
        h.addWidget(self.browse_button)
        self.summary = QLabel(wordWrap=True)
        self.edit_clips_button = QPushButton("Edit clips…")
        self.edit_clips_button.clicked.connect(self.edit_clips)
        form.addRow("Clips", self.summary)
        form.addRow("", self.edit_clips_button)
        form.addRow("Format", self.format_combo)
        form.addRow("Resolution", self.size_combo)
        form.addRow("Frame rate", self.fps_spin)
        form.addRow("Output", out_row)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.export_button = self.buttons.addButton("&Export", QDialogButtonBox.AcceptRole)
        self.buttons.accepted.connect(self.export)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
        self.size_combo.currentIndexChanged.connect(lambda _i: self._update())
        self.fps_spin.valueChanged.connect(lambda _v: self._update())
        self.output_edit.textChanged.connect(lambda _t: self._update())
        self.resize(620, 0)
        self._update()

    def _default_output(self, fmt: str) -> Path:
        p = Path(self.run.path)
        return p.with_name(p.stem + "_clip" + ("" if fmt == "png" else f".{fmt}"))

    def _format_changed(self):
        fmt = self.format_combo.currentData()
        cur = Path(self.output_edit.text())
        stem = cur.stem if cur.suffix.lower() in (".mp4", ".gif") else cur.name
        self.output_edit.setText(str(cur.with_name(stem + ("" if fmt == "png" else f".{fmt}"))))

    def current_clip_list(self) -> ClipList:
        return ClipList(list(self.clip_list.clips), self.fps_spin.value(), self.export_size())

    def export_size(self) -> tuple[int, int]:
        w, h = self.size_combo.currentData().split("x")
        return int(w), int(h)

    def problems(self) -> list[str]:
        cl = self.current_clip_list()
        if not cl.clips:
            return ["no intervals: use Edit clips… to add one"]
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        out = []
        for i, c in enumerate(cl.clips):
            try:
                c.validate(t0, t1)
            except ClipError as exc:
                out.append(f"interval {i + 1}: {exc}")
        text = self.output_edit.text().strip()
        if not text:
            out.append("choose an output file")
        else:
            try:
                check_output(text, self.format_combo.currentData(), probe=False)
            except OutputError as exc:
                out.append(f"output: {exc.problem}")
        return out

    def _update(self):
        cl = self.current_clip_list()
        probs = self.problems()
        lines = [f"{i + 1}. {c.start:g}–{c.end:g} s at {c.speed:g}x" + (f", title “{c.title}”" if c.title else "")
                 for i, c in enumerate(cl.clips)]
        if cl.clips:
            n = cl.total_frames()
            lines.append(f"{n} frames, {n / cl.fps:.1f} s of video")
        lines += probs
        self.summary.setText("\n".join(lines))
        self.summary.setStyleSheet(_error_style() if probs else "")
        self.export_button.setEnabled(not probs)
        h = self.layout().heightForWidth(self.width())
        if h > self.height():   # (a longer message: grow so that it is read whole)
            self.resize(self.width(), h)

    def browse(self):
        fmt = self.format_combo.currentData()
        if fmt == "png":
            path = QFileDialog.getExistingDirectory(self, "Folder for the PNG sequence",
                                                    str(Path(self.output_edit.text()).parent))
            if path:
                path = str(Path(path) / self._default_output("png").name)
        else:
            path, _ = QFileDialog.getSaveFileName(self, "Export video", self.output_edit.text(),
                                                  f"{fmt.upper()} (*.{fmt})")
        if path:
            self.output_edit.setText(path)

    def edit_clips(self):
        t = self.diagram.playback.t_current if self.diagram is not None else float(self.run.time[0])
        dlg = self.clip_dialog = ClipListDialog(self.run, t, parent=self)
        dlg.saved.connect(self._clips_saved)
        dlg.open()
        return dlg

    def _clips_saved(self, cl: ClipList):
        self.clip_list = cl
        self._update()

    def renderer_options(self) -> dict:
        """What the user sees in the window: plotted channels, GraphStep, scrolling, pane heights."""
        d = self.diagram
        if d is None:
            return {}
        return dict(plotted=list(d.plots.names) or None, graph_step=d.playback.graph_step,
                    scrolling=d.act_scrolling.isChecked(), splitter_sizes=d.splitter.sizes())

    def export(self):
        """Render and encode with a modal progress dialog; returns the written path or None."""
        if self.problems():
            self._update()
            return None
        from viewer.clip_render import DiagramRenderer, export_clips
        cl = self.current_clip_list()
        out = Path(self.output_edit.text().strip()).expanduser()
        fmt = self.format_combo.currentData()
        total = cl.total_frames()
        prog = self.progress = QProgressDialog("Laying out the offscreen diagram…", "Cancel", 0, total, self)
        prog.setWindowTitle("Export video")
        prog.setWindowModality(Qt.WindowModal)
        prog.setMinimumDuration(0)
        prog.setAutoClose(False)
        prog.setAutoReset(False)
        prog.setValue(0)
        QApplication.processEvents()
        self.last_error = ""

        def progress(done, n):
            prog.setValue(done)
            QApplication.processEvents()
            return not prog.wasCanceled()

        renderer = None
        try:
            renderer = DiagramRenderer(self.run, cl.size, **self.renderer_options())
            if self.diagram is not None and hasattr(self.diagram.scene, "views"):
                renderer.copy_view(self.diagram.scene.views["3d"].camera)
            prog.setLabelText(f"Exporting {total} frames to {out.name}…")
            if prog.wasCanceled():
                raise ExportCancelled("cancelled before the first frame")
            path = export_clips(self.run, cl, out, fmt, progress=progress, renderer=renderer)
        except ExportCancelled:
            self.last_error = f"export cancelled; {out.name} was not written"
            prog.close()
            self.summary.setText(self.last_error)
            return None
        except Exception as exc:  # any failure: say what, leave the app up, no partial file
            self.last_error = f"export to {out} failed: {exc}"
            prog.close()
            QMessageBox.critical(self, "Export failed", self.last_error)
            return None
        finally:
            if renderer is not None:
                renderer.close()
        prog.close()
        self.exported.emit(path)
        self.accept()
        return path
