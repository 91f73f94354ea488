"""A QWidget showing an off-screen VTK render window: each render is read back and painted with QPainter.

Presenting a GL window costs far more than rendering it on software GL (Xvfb, llvmpipe: ~14 ms to present a
690x392 window, ~1 ms to render it off screen and read it back); painting the image also lets QWidget.grab see it.
A frame shown while playing is rendered and read back in a render thread (`render_async`): VTK releases the GIL
while it renders, so the render (~6 ms of CPU on llvmpipe) runs on the second core while the GUI thread updates
and paints the other panes; the widget paints last (it is raised) and waits only for what is left of it.
All renders, in any widget, are serialized: anything that touches VTK first waits for the render thread
(`settle_renders`). Other renders (mouse interaction, resizes, images for export) run in the GUI thread.
Mouse events drive a vtkGenericRenderWindowInteractor as QVTKRenderWindowInteractor does.
"""
from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import threading
import weakref

import numpy as np

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkUnsignedCharArray
from vtkmodules.vtkRenderingCore import vtkRenderWindow
from vtkmodules.vtkRenderingUI import vtkGenericRenderWindowInteractor


def _gl_function(fn: str):
    """A GL function of the calling thread's current context (VTK's render window), called through ctypes (which
    releases the GIL while it runs), or None."""
    for name in ("libGL.so.1", ctypes.util.find_library("GL")):
        try:
            return getattr(ctypes.CDLL(name), fn) if name else None
        except (OSError, AttributeError):
            continue
    return None


_GL_FLUSH = _gl_function("glFlush")


class _GLRead:
    """glReadPixels of a framebuffer object through ctypes: the read waits for the rasterizer and copies without
    holding the GIL (VTK's GetRGBACharPixelData holds it throughout). The bindings it changes are restored."""
    READ_FRAMEBUFFER, READ_FRAMEBUFFER_BINDING, READ_BUFFER = 0x8CA8, 0x8CAA, 0x0C02
    COLOR_ATTACHMENT0, RGBA, UNSIGNED_BYTE = 0x8CE0, 0x1908, 0x1401

    def __init__(self):
        fns = [_gl_function(n) for n in ("glGetIntegerv", "glBindFramebuffer", "glReadBuffer", "glReadPixels")]
        self.ok = all(f is not None for f in fns)
        self.get, self.bind, self.read_buffer, self.read_pixels = fns
        self._int = ctypes.c_int()

    def _query(self, what: int) -> int:
        self.get(what, ctypes.byref(self._int))
        return self._int.value

    def __call__(self, fbo: int, w: int, h: int, out: np.ndarray):
        """Rows of colour attachment 0 of `fbo` (bottom-up RGBA) into `out` (h x 4w uint8)."""
        bound = self._query(self.READ_FRAMEBUFFER_BINDING)
        self.bind(self.READ_FRAMEBUFFER, fbo)
        try:
            buffer = self._query(self.READ_BUFFER)
            self.read_buffer(self.COLOR_ATTACHMENT0)
            self.read_pixels(0, 0, w, h, self.RGBA, self.UNSIGNED_BYTE, out.ctypes.data_as(ctypes.c_void_p))
            self.read_buffer(buffer)
        finally:
            self.bind(self.READ_FRAMEBUFFER, bound)


_GL_READ = _GLRead()


def use_headless_gl() -> bool:
    """Have this process's VTK render windows draw through EGL, without any display server, if EGL works here.

    True: VTK_DEFAULT_OPENGL_WINDOW is set and DISPLAY and WAYLAND_DISPLAY are removed from the environment, so that
    neither Qt nor the GL driver connects to a server. False (no EGL, or the user chose a window class): nothing is
    changed and VTK needs an X display. Call before any render window or QApplication exists."""
    if os.environ.get("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow") != "vtkEGLRenderWindow":
        return False
    from vtkmodules.vtkRenderingOpenGL2 import vtkEGLRenderWindow
    saved = {k: os.environ.pop(k) for k in ("DISPLAY", "WAYLAND_DISPLAY") if k in os.environ}
    probe = vtkEGLRenderWindow()   # (not the factory: its fallbacks would try X without DISPLAY and remember that)
    ok = bool(probe.SupportsOpenGL())
    probe.Finalize()
    del probe
    if ok:
        os.environ["VTK_DEFAULT_OPENGL_WINDOW"] = "vtkEGLRenderWindow"
    else:
        os.environ.update(saved)
    return ok


class _RenderThread(threading.Thread):
    """Runs one job at a time (a render and its read-back) while the GUI thread goes on."""

    def __init__(self):
        super().__init__(name="vtk-render", daemon=True)
        self._cv = threading.Condition()
        self._job = None
        self._error: BaseException | None = None

    def run(self):
        while True:
            with self._cv:
                while self._job is None:
                    self._cv.wait()
                job = self._job
            try:
                job()
            except BaseException as exc:   # (raised in the GUI thread by wait)
                self._error = exc
            with self._cv:
                self._job = None
                self._cv.notify_all()

    def submit(self, job):
        with self._cv:
            while self._job is not None:
                self._cv.wait()
            self._job = job
            self._cv.notify_all()

    def wait(self):
        """Until no job runs; re-raises the exception of a job that failed."""
        if self._job is not None:
            with self._cv:
                while self._job is not None:
                    self._cv.wait()
        if self._error is not None:
            exc, self._error = self._error, None
            raise exc


_RENDERS: _RenderThread | None = None   # one for the process: renders never overlap (VTK's GL loader is global)


def settle_renders():
    """Wait for the render thread's job, if any: call before touching VTK objects or rendering elsewhere."""
    if _RENDERS is not None:
        _RENDERS.wait()


atexit.register(settle_renders)   # (no render running while the interpreter shuts down)


class _Frames:
    """A render window's last frame as an image, read back after a render in the thread that rendered it or when
    asked for. The render thread holds this, not the widget (a widget is only released in the GUI thread)."""

    def __init__(self, rw: vtkRenderWindow, widget: QWidget):
        self.rw = rw
        self.buf = vtkUnsignedCharArray()
        self.raw: np.ndarray | None = None    # the last read, bottom-up
        self.rows: list[np.ndarray] = []      # two buffers the image's rows are in, in turn: the image shown keeps
        self.image = QImage()                 # its pixels while the next frame is read
        self.unread = False          # a render not read back yet
        self.renders = 0
        self.thread_renders = 0      # of those, rendered in the render thread
        self.widget = weakref.ref(widget)
        self.gui = threading.get_ident()

    def rendered(self, *_):
        """After each render (VTK's EndEvent): start the GL driver on it (flush) and, in the GUI thread, schedule
        a paint that reads it back (`render_async` schedules its own)."""
        if _GL_FLUSH is not None:
            _GL_FLUSH()
        self.unread = True
        self.renders += 1
        if threading.get_ident() == self.gui:
            w = self.widget()
            if w is not None:
                w.update()

    def read_back(self, dpr: float):
        """Read the last render back (RGBA: the GL driver's fast path, bottom-up) into the image."""
        self.unread = False
        w, h = self.rw.GetSize()
        if w <= 0 or h <= 0:
            return
        raw = self._read(w, h)
        if not self.rows or self.rows[0].shape != raw.shape:
            self.rows = [np.empty_like(raw), np.empty_like(raw)]
        self.rows.reverse()
        rows = self.rows[0]
        np.copyto(rows, raw[::-1])   # (top-down; numpy copies without the GIL)
        self.image = QImage(rows.data, w, h, 4 * w, QImage.Format_RGBX8888)
        self.image.setDevicePixelRatio(dpr)

    def _read(self, w: int, h: int) -> np.ndarray:
        """The render's pixels, bottom-up RGBA rows; from its framebuffer object without the GIL when possible."""
        fbo = self.rw.GetRenderFramebuffer() if _GL_READ.ok and hasattr(self.rw, "GetRenderFramebuffer") else None
        index = fbo.GetFBOIndex() if fbo is not None else 0
        if index:
            if self.raw is None or self.raw.shape != (h, 4 * w):
                self.raw = np.empty((h, 4 * w), np.uint8)
            self.rw.MakeCurrent()
            _GL_READ(index, w, h, self.raw)
            return self.raw
        self.rw.GetRGBACharPixelData(0, 0, w - 1, h - 1, 0, self.buf, 0)
        return vtk_to_numpy(self.buf).reshape(h, 4 * w)

    def render_and_read(self, dpr: float):
        """The render thread's job."""
        self.thread_renders += 1
        try:
            self.rw.Render()
            self.read_back(dpr)
        finally:
            self.rw.ReleaseCurrent()   # (the GUI thread may render it, or destroy it, next)


class OffscreenVTKWidget(QWidget):
    """Off-screen vtkRenderWindow shown as an image; `GetRenderWindow`, `Initialize`, `Finalize` as in QVTK."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAttribute(Qt.WA_OpaquePaintEvent)   # (its parents paint nothing under it)
        self._marker: QWidget | None = None          # see _stay_in_stacking_order
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.setMouseTracking(False)
        self._rw = vtkRenderWindow()
        self._rw.SetOffScreenRendering(1)
        self._rw.SetMultiSamples(0)
        self._rw.SetSwapBuffers(0)   # frames are read from the back (render) buffer: no copy to a front buffer
        self._Iren = vtkGenericRenderWindowInteractor()
        self._Iren.SetRenderWindow(self._rw)
        self._frames = _Frames(self._rw, self)
        self._rw.AddObserver("EndEvent", self._frames.rendered)
        self._wheel = 0
        self._button = Qt.NoButton
        self.overlay = None    # callable(painter) drawing over the image (e.g. the scene's force labels)
        self.resized = None    # callable() after the render window took a new size (the scene re-lays its views out)
        self.placeholder: tuple | None = None   # (text, ground QColor, text QColor) painted instead of the image

    # ---- QVTKRenderWindowInteractor's interface used by the panes --------------------------------
    def GetRenderWindow(self) -> vtkRenderWindow:
        return self._rw

    def Initialize(self):
        self._Iren.Initialize()

    def Finalize(self):
        self.settle()
        self._rw.Finalize()

    # ---- rendering in the render thread -----------------------------------------------------------
    def render_async(self):
        """Render and read back in the render thread, and schedule a paint; the GUI thread goes on. Nothing may
        touch VTK objects until `settle` (the paint settles before it reads the image)."""
        global _RENDERS
        if _RENDERS is None:
            _RENDERS = _RenderThread()
            _RENDERS.start()
        self._rw.ReleaseCurrent()   # (the GL context is current in one thread at a time)
        _RENDERS.submit(lambda f=self._frames, dpr=self.devicePixelRatioF(): f.render_and_read(dpr))
        self.update()

    @staticmethod
    def settle():
        settle_renders()

    @property
    def renders(self) -> int:
        return self._frames.renders

    @property
    def thread_renders(self) -> int:
        return self._frames.thread_renders

    # ---- image ---------------------------------------------------------------------------------
    def image(self) -> QImage:
        """The last rendered frame."""
        self.settle()
        if self._frames.unread:
            self._frames.read_back(self.devicePixelRatioF())
        return self._frames.image

    def paintEvent(self, _ev):
        if self.placeholder is not None:    # nothing to show (no run open): the pane's ground and a note, no black box
            text, ground, ink = self.placeholder
            p = QPainter(self)
            p.fillRect(self.rect(), ground)
            p.setPen(ink)
            p.drawText(self.rect(), Qt.AlignCenter, text)
            p.end()
            return
        img = self.image()
        p = QPainter(self)
        s = self.devicePixelRatioF()
        if not img.isNull() and (img.width(), img.height()) != (max(1, round(s * self.width())),
                                                                max(1, round(s * self.height()))):
            img = QImage()   # rendered at another size (no render since the resize): never shown stretched or spilled
        if img.isNull():
            p.fillRect(self.rect(), Qt.black)
        else:
            p.drawImage(0, 0, img)
            if self.overlay is not None:
                self.overlay(p)
        p.end()

    def _stay_in_stacking_order(self):
        """Qt paints an opaque widget that no sibling overlaps before all other widgets of the window. A 1-px
        transparent sibling over this one's corner has it painted in stacking order instead: raised, it is painted
        after the other panes, and the render thread has their paint time to finish the frame."""
        parent = self.parentWidget()
        if parent is None:
            return
        if self._marker is None or self._marker.parentWidget() is not parent:
            self._marker = QWidget(parent)
            self._marker.setAttribute(Qt.WA_TransparentForMouseEvents)
            self._marker.setStyleSheet("background: transparent;")
            self._marker.show()
        self._marker.setGeometry(self.x(), self.y(), 1, 1)
        self._marker.raise_()

    def moveEvent(self, ev):
        super().moveEvent(ev)
        self._stay_in_stacking_order()

    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._stay_in_stacking_order()
        self.image()   # (the last render read back at the size it was rendered at)
        s = self.devicePixelRatioF()
        w, h = max(1, round(s * self.width())), max(1, round(s * self.height()))
        self._rw.SetSize(w, h)
        self._Iren.SetSize(w, h)
        self._Iren.ConfigureEvent()
        if self.resized is not None:
            self.resized()

    # ---- mouse ---------------------------------------------------------------------------------
    def _event_info(self, ev, repeat: int = 0):
        s = self.devicePixelRatioF()
        pos = ev.position() if hasattr(ev, "position") else ev.pos()
        mods = ev.modifiers()
        self._Iren.SetEventInformationFlipY(int(round(pos.x() * s)), int(round(pos.y() * s)),
                                            bool(mods & Qt.ControlModifier), bool(mods & Qt.ShiftModifier),
                                            chr(0), repeat, None)

    def mousePressEvent(self, ev):
        self.settle()
        self._event_info(ev, 1 if ev.type() == QEvent.Type.MouseButtonDblClick else 0)
        self._button = ev.button()
        {Qt.LeftButton: self._Iren.LeftButtonPressEvent, Qt.RightButton: self._Iren.RightButtonPressEvent,
         Qt.MiddleButton: self._Iren.MiddleButtonPressEvent}.get(self._button, lambda: None)()

    def mouseReleaseEvent(self, ev):
        self.settle()
        self._event_info(ev)
        {Qt.LeftButton: self._Iren.LeftButtonReleaseEvent, Qt.RightButton: self._Iren.RightButtonReleaseEvent,
         Qt.MiddleButton: self._Iren.MiddleButtonReleaseEvent}.get(self._button, lambda: None)()
        self._button = Qt.NoButton

    def mouseMoveEvent(self, ev):
        self.settle()
        self._event_info(ev)
        self._Iren.MouseMoveEvent()

    def wheelEvent(self, ev):
        self.settle()
        self._event_info(ev)
        self._wheel += ev.angleDelta().y()
        while self._wheel >= 120:      # a notch per 120 eighths of a degree (fine-grained wheels add up)
            self._Iren.MouseWheelForwardEvent()
            self._wheel -= 120
        while self._wheel <= -120:
            self._Iren.MouseWheelBackwardEvent()
            self._wheel += 120
