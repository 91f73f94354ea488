"""Offscreen rendering of the whole mnemonic diagram for clip export, driven frame by frame through Playback.

A hidden `MnemonicDiagram` (never mapped on screen, `WA_DontShowOnScreen`) is laid out at the export
size; each frame seeks its `Playback`, the panes redraw through their usual `frameChanged` slots, and
the frame is composed once: the Qt panes painted into a reused image around the VTK views, whose pixels
are read back from the scene's render window (VTK renders into its own framebuffer, so nothing depends
on the window being visible). VTK still needs an X display with OpenGL (Xvfb is enough).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from solver.runfile import RunFile
from viewer import style
from viewer.clips import ClipList
from viewer.title_card import ACCENT, TEXT, title_card
from viewer.video_export import ExportCancelled, FrameSink
from viewer.vtk_view import settle_renders

CAPTION_BG = QColor(*style.CAPTION_BACKGROUND)
CLIP_DROPS_FACTS = ("Comment", "Run Date", "GraphStep")
"""Facts a clip frame leaves out, in this order, until the rest fits the facts panel without a scroll bar (the
verdict is never cut; the caption names the run)."""
CLIP_FACTS_MIN_PT = 5.5   # then the facts' text gets smaller, down to this


def caption_height(height: int) -> int:
    """Height of the caption strip (run name, speed, T Current) under the diagram: even, about 1/30."""
    return max(16, int(round(height / 30 / 2)) * 2)


def speed_text(speed: float) -> str:
    """'2x', '1/4x', '0.3x' (speed_label of the playback bar rounds 1/speed)."""
    return f"1/{1 / speed:g}x" if speed < 1 and (1 / speed).is_integer() else f"{speed:g}x"


def bgra_view(img: QImage) -> np.ndarray:
    """(H, W, 4) uint8 view (B, G, R, A) of a Format_RGB32 image's pixels; valid while `img` lives."""
    h, bpl = img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.bits(), np.uint8, count=bpl * h).reshape(h, bpl)
    return buf[:, : 4 * img.width()].reshape(h, img.width(), 4)


class DiagramRenderer:
    """A hidden three-pane diagram at a fixed export size; `render_time(t)` returns the composed frame.

    Sizes below the diagram's minimum (about 840x450) are laid out larger and scaled down smoothly.
    """

    def __init__(self, run: RunFile, size: tuple[int, int], plotted: list[str] | None = None,
                 graph_step: float | None = None, scrolling: bool = True, splitter_sizes=None,
                 caption: str = ""):
        if QApplication.instance() is None:
            raise RuntimeError("DiagramRenderer needs a QApplication (and an X display for VTK)")
        from viewer.diagram import MnemonicDiagram
        self.run = run
        self.size = (int(size[0]), int(size[1]))
        self.caption = caption or f"{Path(run.path).name}  ·  {run.meta.variant}"
        w, h = self.size
        settle_renders()   # (the window's scene may be rendering in the render thread)
        d = self.diagram = MnemonicDiagram()
        d.setAttribute(Qt.WA_DontShowOnScreen, True)
        if hasattr(d.scene, "render_async"):
            d.scene.render_async = False   # each seek renders at once: its pixels are read from VTK's buffer
        d.plots.set_rows_scroll(False)   # a video cannot scroll: the plots share the pane's height
        self.read_errors: list[str] = []   # data a pane could not show (a corrupt chunk): the export fails
        d.readError.connect(self.read_errors.append)
        d.set_run(run, plotted)
        for name in ("transport", "camera_buttons"):   # controls, not the diagram: never in a clip frame (after the
            control = d.findChild(QWidget, name)       # run: the scene shows its camera buttons for a run)
            if control is not None:
                control.hide()
        d.ensure_analysed()   # lanes and verdict in every exported frame
        d.act_scrolling.setChecked(bool(scrolling))
        if graph_step:
            d.playback.set_graph_step(float(graph_step))
        self.playback = d.playback
        need = d.minimumSizeHint()
        scale = max(1.0, need.width() / w, need.height() / max(h - caption_height(h), 1))
        self.layout_size = (int(math.ceil(w * scale)), int(math.ceil(h * scale)))
        lw, lh = self.layout_size
        self.caption_h = caption_height(lh)
        d.setFixedSize(lw, lh - self.caption_h)
        d.show()
        self._settle()
        if splitter_sizes:
            self.set_splitter_proportions(splitter_sizes)
        self.fit_facts()
        if hasattr(d.scene, "render_window"):
            d.scene.render_window.SetOffScreenRendering(1)  # render into VTK's framebuffer; no window blit
        self.canvas = QImage(lw, lh, QImage.Format_RGB32)
        self.canvas.fill(CAPTION_BG)
        self._canvas_pixels = bgra_view(self.canvas)
        self.image = self.canvas if (lw, lh) == (w, h) else QImage(w, h, QImage.Format_RGB32)
        self.pixels = bgra_view(self.image)
        self._vtk = _VtkReadback(d.scene) if hasattr(d.scene, "render_window") else None
        self._cap_font = QFont(style.CAPTION_FAMILY)
        self._cap_font.setPixelSize(max(10, int(self.caption_h * 0.62)))
        self.frame = -1

    def set_splitter_proportions(self, sizes):
        """Share the height among scene, devices and plots as in the user's window."""
        d = self.diagram
        total = float(sum(sizes))
        if total <= 0:
            return
        room = d.splitter.height() - d.splitter.handleWidth() * 2
        d.splitter.setSizes([int(round(v * room / total)) for v in sizes])
        self._settle()
        self.fit_facts()

    dropped_facts: list[str] = []

    def fit_facts(self):
        """The plots pane's facts in a clip frame: no scroll bar, and rows of CLIP_DROPS_FACTS left out until the
        others (the verdict last of all) are shown whole."""
        from PySide6.QtWidgets import QGridLayout, QScrollArea
        self.dropped_facts = []
        for area in self.diagram.plots.findChildren(QScrollArea):
            content = area.widget()
            grid = content.layout() if content is not None else None
            if not isinstance(grid, QGridLayout):
                continue
            area.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
            rows = {}
            for r in range(grid.rowCount()):
                key = grid.itemAtPosition(r, 0)
                if key is not None and hasattr(key.widget(), "text"):
                    rows[key.widget().text()] = [grid.itemAtPosition(r, c).widget() for c in range(grid.columnCount())
                                                 if grid.itemAtPosition(r, c) is not None]

            def fits() -> bool:
                self._settle()
                w = area.viewport().width()
                need = content.heightForWidth(w) if content.hasHeightForWidth() else content.sizeHint().height()
                return need <= area.viewport().height()

            for name in CLIP_DROPS_FACTS:
                if fits():
                    break
                for widget in rows.get(name, ()):
                    widget.hide()
                self.dropped_facts.append(name)
            font = content.font()
            size = font.pointSizeF()
            while not fits() and size > CLIP_FACTS_MIN_PT:   # a small clip: smaller text, the verdict still whole
                size -= 0.5
                font.setPointSizeF(size)
                for widget in [content] + content.findChildren(QWidget):
                    widget.setFont(font)
        self.frame = -1

    def copy_view(self, camera):
        """Use a 3D camera (e.g. the window's, after the user orbited) for the free 3D view."""
        views = getattr(self.diagram.scene, "views", None)
        if views is not None and camera is not None:
            views["3d"].camera.DeepCopy(camera)
            views["3d"].renderer.ResetCameraClippingRange()
            self.frame = -1

    def _settle(self):
        """Let layouts and pending resizes happen (the diagram is hidden, so nothing paints)."""
        app = QApplication.instance()
        for _ in range(3):
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
            app.processEvents()
        if hasattr(self.diagram.scene, "_layout"):
            self.diagram.scene._layout()  # noqa: SLF001  (viewports after the final size)

    def close(self):
        self.diagram.hide()
        self.diagram.deleteLater()
        if hasattr(self.diagram.scene, "vtk_widget"):
            self.diagram.scene.vtk_widget.Finalize()

    # ---- one frame ---------------------------------------------------------------------------
    def render_time(self, t: float, speed: float | None = None, note: str = "") -> np.ndarray:
        """Seek the diagram's Playback to run time t and compose the frame; a BGRA view of the reused image."""
        pb = self.playback
        before = pb.frame
        pb.seek_time(t)  # the panes redraw through frameChanged when the frame changes
        if self.read_errors:   # a pane kept its last picture: never encode it as this frame
            raise ValueError(f"frame {pb.frame} cannot be shown: {self.read_errors[0]}")
        if pb.frame != self.frame or self.frame < 0:
            if pb.frame == before and self._vtk is not None:
                self._vtk.rw.Render()  # same frame, changed view (camera, pane sizes): render the scene again
            self.frame = pb.frame
            self._compose()
        self._draw_caption(pb.t_current, speed, note)
        if self.image is not self.canvas:
            p = QPainter(self.image)
            p.setRenderHint(QPainter.SmoothPixmapTransform)
            p.drawImage(QRect(0, 0, *self.size), self.canvas)
            p.end()
        return self.pixels

    def render_frame(self, frame: int, speed: float | None = None, note: str = "") -> np.ndarray:
        return self.render_time(float(self.run.time[min(max(int(frame), 0), self.run.n_frames - 1)]),
                                speed, note)

    def _compose(self):
        d = self.diagram
        p = QPainter(self.canvas)
        vtk = self._vtk
        if vtk is None:
            d.render(p, QPoint(0, 0))
        else:
            rect = vtk.rect_in(d)
            region = QRegion(QRect(0, 0, d.width(), d.height())).subtracted(QRegion(rect))
            d.render(p, QPoint(0, 0), region)  # the VTK widget is left out (its paintEvent re-renders)
        p.end()
        if vtk is not None:
            vtk.paste(self._canvas_pixels, d)
            overlay = getattr(vtk.scene.vtk_widget, "overlay", None)
            if overlay is not None:          # (the scene's titles and force labels: painted over its image)
                p = QPainter(self.canvas)
                p.translate(vtk.rect_in(d).topLeft())
                overlay(p)
                p.end()

    def _draw_caption(self, t: float, speed: float | None, note: str):
        w, h = self.layout_size
        y = h - self.caption_h
        p = QPainter(self.canvas)
        p.fillRect(0, y, w, self.caption_h, CAPTION_BG)
        p.setFont(self._cap_font)
        p.setPen(TEXT)
        r = QRect(10, y, w - 20, self.caption_h)
        left = self.caption + (f"  ·  {note}" if note else "")
        p.drawText(r, Qt.AlignLeft | Qt.AlignVCenter, left)
        p.setPen(ACCENT)
        sp = "" if speed is None else f"{speed_text(speed)}   "
        p.drawText(r, Qt.AlignRight | Qt.AlignVCenter, f"{sp}T Current {t:9.3f} s")
        p.end()

    def rgb(self) -> np.ndarray:
        """The current frame as an (H, W, 3) RGB copy."""
        return np.ascontiguousarray(self.pixels[..., 2::-1])


class _VtkReadback:
    """Reads the scene's last rendered VTK frame (no re-render) into a BGRA frame at the widget's place."""

    def __init__(self, scene):
        from vtkmodules.vtkCommonCore import vtkUnsignedCharArray
        self.scene = scene
        self.rw = scene.render_window
        self.buf = vtkUnsignedCharArray()

    def rect_in(self, top: QWidget) -> QRect:
        vw = self.scene.vtk_widget
        return QRect(vw.mapTo(top, QPoint(0, 0)), vw.size())

    def paste(self, bgra: np.ndarray, top: QWidget):
        from vtkmodules.util.numpy_support import vtk_to_numpy
        rect = self.rect_in(top)
        settle_renders()
        w, h = self.rw.GetSize()
        # back buffer holds the frame the scene rendered in its show_frame slot
        self.rw.GetPixelData(0, 0, w - 1, h - 1, 0, self.buf, 0)
        rgb = vtk_to_numpy(self.buf).reshape(h, w, 3)[::-1]
        hh, ww = min(h, rect.height()), min(w, rect.width())
        x, y = rect.x(), rect.y()
        bgra[y:y + hh, x:x + ww, 0] = rgb[:hh, :ww, 2]
        bgra[y:y + hh, x:x + ww, 1] = rgb[:hh, :ww, 1]
        bgra[y:y + hh, x:x + ww, 2] = rgb[:hh, :ww, 0]


def export_clips(run: RunFile, clips: ClipList, out, fmt: str | None = None,
                 progress: Callable[[int, int], bool | None] | None = None, renderer: DiagramRenderer | None = None,
                 cancel: Callable[[], bool] | None = None, **renderer_options) -> Path:
    """Render the clip list's title cards and intervals and encode them to `out` (MP4, GIF or PNG folder).

    `progress(done, total)` is called after each frame; it returning False, or `cancel()` returning True before a
    frame or the final rename, cancels (ExportCancelled). A cancelled or failed export leaves no file: frames go to
    a temporary name renamed at the end.
    """
    t0, t1 = float(run.time[0]), float(run.time[-1])
    if not clips.clips:
        raise ValueError("the clip list is empty: add at least one interval")
    for c in clips.clips:
        c.validate(t0, t1)
    total = clips.total_frames()
    own = renderer is None
    cancelled = cancel or (lambda: False)
    sink = FrameSink(out, clips.fps, clips.size, fmt, threaded=True)   # a bad output fails before any rendering
    r = renderer
    n = len(clips.clips)
    try:
        if r is None:
            r = DiagramRenderer(run, clips.size, **renderer_options)
        card, card_clip = None, -1
        done = 0
        for kind, ci, value in clips.schedule():
            if cancelled():
                raise ExportCancelled(f"export to {out} cancelled after {done} of {total} frames")
            c = clips.clips[ci]
            if kind == "title":
                if card_clip != ci:
                    sub = f"{c.start:g}–{c.end:g} s of the run at {speed_text(c.speed)}"
                    card = title_card(clips.size, c.title, sub, r.caption)
                    card_clip = ci
                sink.write(card)
            else:
                sink.write(r.render_time(value, c.speed, f"interval {ci + 1}/{n}" if n > 1 else ""))
            done += 1
            if progress is not None and progress(done, total) is False:
                raise ExportCancelled(f"export to {out} cancelled after {done} of {total} frames")
        return sink.commit(cancelled)
    except BaseException:
        sink.abort()
        raise
    finally:
        if own and r is not None:
            r.close()
