"""Top pane: wireframe scene in plane Ld, top view and a free 3D view, with readouts and base loads (VTK).

Part colours, plane Ld's bodies and title, the marked bodies and the readouts come from the run's mechanism type
(solver.mechanisms)."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import vtkmodules.qt

vtkmodules.qt.PyQtImpl = "PySide6"

import vtkmodules.vtkInteractionStyle  # noqa: E402,F401  (interactor styles)
import vtkmodules.vtkRenderingFreeType  # noqa: E402,F401  (text)
import vtkmodules.vtkRenderingOpenGL2  # noqa: E402,F401  (rendering back end)
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal, Slot  # noqa: E402
from PySide6.QtGui import (QColor, QFont, QFontDatabase, QFontMetricsF, QImage, QPainter, QStaticText, QTextOption,  # noqa: E402
                           QTransform)
from PySide6.QtWidgets import (QApplication, QGridLayout, QHBoxLayout, QLabel, QPushButton, QToolTip,  # noqa: E402
                               QVBoxLayout, QWidget)
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy  # noqa: E402
from vtkmodules.vtkCommonCore import vtkIdTypeArray, vtkPoints  # noqa: E402
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData  # noqa: E402
from vtkmodules.vtkCommonMath import vtkMatrix4x4  # noqa: E402
from vtkmodules.vtkFiltersSources import vtkArrowSource  # noqa: E402
from vtkmodules.vtkInteractionStyle import vtkInteractorStyleTrackballCamera  # noqa: E402
from vtkmodules.vtkRenderingCore import (vtkActor, vtkActor2D, vtkCoordinate,  # noqa: E402
                                         vtkPolyDataMapper, vtkPolyDataMapper2D, vtkProperty,
                                         vtkRenderer, vtkWindowToImageFilter)

from solver import mechanisms  # noqa: E402
from solver.runfile import TIME_CHUNK, PartGeometry, RunFile, RunFileError  # noqa: E402
from viewer.scene_geometry import arrow_elements, cross3, ld_plane, lateral_direction, pose_matrices  # noqa: E402
from viewer.flow_row import FlowRow  # noqa: E402
from viewer.numbers import count_text, fixed, force_text, is_count  # noqa: E402
from viewer.steady_label import SteadyLabel  # noqa: E402
from viewer.vtk_view import OffscreenVTKWidget  # noqa: E402

# ---- look -------------------------------------------------------------------------------------
from viewer import style as _style  # noqa: E402
from viewer.style import CONTACT_RED, FORCE_COLOR, FORCE_LABEL_BOX, VIEW_BACKGROUND  # noqa: E402
from viewer.style import LABEL_FAMILY, SCENE_BACKGROUND as BACKGROUND, SCENE_HEADER as HEADER_COLOR  # noqa: E402
from viewer.style import GHOST_COLOR, SCENE_TEXT as TEXT_COLOR, VIEW_TITLE  # noqa: E402
from viewer.style import TINT_NEGATIVE, TINT_POSITIVE  # noqa: E402


def _theme_colours():
    """The scene pane's themed colours (its ground and readouts; the views keep theirs) from the palette in use."""
    global BACKGROUND, HEADER_COLOR, TEXT_COLOR
    BACKGROUND, HEADER_COLOR, TEXT_COLOR = _style.SCENE_BACKGROUND, _style.SCENE_HEADER, _style.SCENE_TEXT


_style.observe(_theme_colours)

# ---- layout, px -------------------------------------------------------------------------------
STRIP_W = 212      # readout columns (Qt labels) left and right of the VTK views
FONT = 12
VIEW_3D_SHARE = 0.30
LABEL_OFFSET_PX = 7   # force magnitude label: right of and above the contact point (its first place)
LABEL_GAP_PX = 2      # force labels keep this far from each other and from the views' captions
LABEL_MERGE_PX = 6    # contact points closer than this on screen share one label ("837 N, 802 N", "+n" beyond two)
LABEL_RINGS_PX = (10, 22, 36, 52, 72, 96)   # farther places tried (a leader line joins the label to its point)
ZOOM_STEP = 1.25      # one wheel notch zooms a 2D view by this factor
VIEW_HINTS = {"ld": "wheel: zoom, drag: pan, double-click: fit", "top": "wheel: zoom, drag: pan, double-click: fit",
              "3d": "drag: orbit, wheel: zoom, double-click: fit; presets below the readouts"}
"""What the mouse does in each view: the views' tooltips (never painted into the image, so never into a clip)."""
CAMERA_PRESETS = ("front", "side", "top", "iso", "ride")   # ride: on the body the type names (scene.ride_camera)
CAPTION_MARGIN = 6    # views' titles and the ghost's caption: from the view's edges
TINT_LEVELS = 8       # a tinted part's colour steps from 0 to the full |value| (each step rebuilds its body's lines)


def _hex(rgb) -> str:
    return "#" + "".join(f"{int(round(255 * c)):02x}" for c in rgb)


_ID = np.int64 if vtkIdTypeArray().GetDataTypeSize() == 8 else np.int32


def _wire_polydata(points: np.ndarray, lines: np.ndarray) -> vtkPolyData:
    """Line-segment polydata from (P, 3) points and (L, 2) index pairs (built once per part)."""
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3), deep=True))
    conn = np.ascontiguousarray(lines, dtype=_ID).reshape(-1)
    offsets = np.arange(0, conn.size + 1, 2, dtype=_ID)
    cells = vtkCellArray()
    cells.SetData(numpy_to_vtkIdTypeArray(offsets, deep=True), numpy_to_vtkIdTypeArray(conn, deep=True))
    pd = vtkPolyData()
    pd.SetPoints(pts)
    pd.SetLines(cells)
    return pd


def _vertex_polydata(points) -> vtkPolyData:
    pts = vtkPoints()
    verts = vtkCellArray()
    for i, p in enumerate(points):
        pts.InsertNextPoint(*p)
        verts.InsertNextCell(1)
        verts.InsertCellPoint(i)
    pd = vtkPolyData()
    pd.SetPoints(pts)
    pd.SetVerts(verts)
    return pd


def _static_mapper(pd: vtkPolyData) -> vtkPolyDataMapper:
    """A mapper of geometry built once: Static skips the pipeline check on every render."""
    mapper = vtkPolyDataMapper()
    mapper.SetInputData(pd)
    mapper.StaticOn()
    return mapper


def _draw_on_top(actor: vtkActor):
    """Fragments at the near plane: the actor stays visible through every wireframe (no extra layer)."""
    actor.GetShaderProperty().AddFragmentShaderReplacement(
        "//VTK::Depth::Impl", True, "//VTK::Depth::Impl\n  gl_FragDepth = 0.0;\n", False)


def _fmt(name: str, value: float, unit: str, width: int, count: bool = False) -> str:
    """A readout line: name, value (a count as a whole number), unit; never "-0.0000"."""
    v = "       —" if not math.isfinite(value) else f"{count_text(value):>9}" if count else \
        fixed(value, 4, True, 9) if abs(value) < 1e4 else f"{value:+9.3g}"
    return f"{name:<{width}}{v} {unit}".rstrip()


def _fmt_load(name: str, value: float, unit: str) -> str:
    return f"{name} {'—' if not math.isfinite(value) else fixed(value, 1)} {unit}"


class _BlockCache:
    """Readout/visibility channels and contact active, force, point, read in time-chunk-aligned blocks;
    the last `keep` blocks stay in memory (about 2 MB each), so scrubbing reads each block once."""

    def __init__(self, run: RunFile, channels, pairs, block: int = TIME_CHUNK, keep: int = 8):
        self.run = run
        self.channels = [c for c in channels if c in run.channels]
        self.pairs = list(pairs)
        self.block = int(block)
        self.keep = int(keep)
        self.start = self.stop = -1
        self.ch: dict[str, np.ndarray] = {}
        self.active = np.zeros((0, 0), bool)
        self.force = np.zeros((0, 0, 3))
        self.point = np.zeros((0, 0, 3))
        self.loads = 0
        self._blocks: OrderedDict[int, tuple] = OrderedDict()

    def _read(self, a: int, b: int) -> tuple:
        out = None
        for out in self._read_steps(a, b):
            pass
        return out

    def _read_steps(self, a: int, b: int, per_step: int = 8):
        """Read frames [a, b) a few datasets per step (a generator; the last item is the block)."""
        r = self.run
        ch = {}
        for i, c in enumerate(self.channels):
            ch[c] = r.channel(c, a, b)
            if i % per_step == per_step - 1:
                yield None
        k, n = b - a, len(self.pairs)
        active, force, point = np.zeros((n, k), bool), np.zeros((n, k, 3)), np.zeros((n, k, 3))
        for j, p in enumerate(self.pairs):
            active[j] = r.contact_active(p, a, b)
            force[j] = r.contact_force(p, a, b)
            point[j] = _contact_points(r, p, a, b)
            if j % (per_step // 3) == per_step // 3 - 1:
                yield None
        self.loads += 1
        yield a, b, ch, active, force, point

    def load_steps(self, frame: int):
        """Read the block holding `frame` into the cache, a few datasets per step (a generator)."""
        a = (frame // self.block) * self.block
        if a in self._blocks:
            return
        blk = None
        for blk in self._read_steps(a, min(a + self.block, self.run.n_frames)):
            if blk is None:
                yield
        self._blocks[a] = blk
        while len(self._blocks) > self.keep:
            self._blocks.popitem(last=False)

    def at(self, frame: int) -> int:
        """Index of `frame` inside the current block (switching or loading the block if needed)."""
        if not (self.start <= frame < self.stop):
            a = (frame // self.block) * self.block
            blk = self._blocks.get(a)
            if blk is None:
                blk = self._blocks[a] = self._read(a, min(a + self.block, self.run.n_frames))
                while len(self._blocks) > self.keep:
                    self._blocks.popitem(last=False)
            self._blocks.move_to_end(a)
            self.start, self.stop, self.ch, self.active, self.force, self.point = blk
        return frame - self.start

    def extend(self, n_old: int):
        """The run grew from `n_old` frames: forget blocks that may have been cut short at the old end."""
        for a in [a for a in self._blocks if a + self.block > n_old]:
            del self._blocks[a]
        if self.start >= 0 and self.start + self.block > n_old:
            self.start = self.stop = -1

    def value(self, name: str, frame: int) -> float:
        return self.value_at(name, self.at(frame))

    def value_at(self, name: str, k: int) -> float:
        """A channel's value at index k of the current block (see `at`); NaN if the run has no such channel."""
        arr = self.ch.get(name)
        return float(arr[k]) if arr is not None else math.nan


def _contact_points(run: RunFile, pair: str, start: int, stop: int) -> np.ndarray:
    """Contact points of one pair over [start, stop) (RunFile has no public block reader for them yet)."""
    if hasattr(run, "contact_point"):
        return run.contact_point(pair, start, stop)
    return np.asarray(run._f["contacts"][pair]["point"][start:stop])  # noqa: SLF001


class _View:
    """One projection: its renderer, camera, title and right-hand edge line."""

    def __init__(self, name: str, label: str, interactive: bool):
        self.name = name
        self.renderer = vtkRenderer()
        self.renderer.SetErase(0)  # the background renderer clears the whole window once
        self.renderer.SetInteractive(int(interactive))
        self.title = label   # drawn over the rendered image, top left (ScenePane._paint_overlays)
        self.hint = VIEW_HINTS.get(name, "")   # what the mouse does here: a tooltip, never painted
        edge = vtkPolyData()
        pts = vtkPoints()
        pts.InsertNextPoint(1.0, 0.0, 0.0)
        pts.InsertNextPoint(1.0, 1.0, 0.0)
        edge.SetPoints(pts)
        cells = vtkCellArray()
        cells.InsertNextCell(2)
        cells.InsertCellPoint(0)
        cells.InsertCellPoint(1)
        edge.SetLines(cells)
        coord = vtkCoordinate()
        coord.SetCoordinateSystemToNormalizedViewport()
        m2 = vtkPolyDataMapper2D()
        m2.SetInputData(edge)
        m2.SetTransformCoordinate(coord)
        self.edge = vtkActor2D()
        self.edge.SetMapper(m2)
        self.edge.GetProperty().SetColor(0.22, 0.26, 0.34)
        self.renderer.AddViewProp(self.edge)

    @property
    def camera(self):
        return self.renderer.GetActiveCamera()

    def set_viewport(self, x0, y0, x1, y1):
        self.renderer.SetViewport(x0, y0, x1, y1)


class ScenePane(QWidget):
    """The upper window: wireframe parts and contacts in plane Ld, the top view and a free 3D view."""

    readError = Signal(str)   # a frame's poses could not be read (RunFileError text); the scene keeps the last pose

    def __init__(self, parent=None):
        super().__init__(parent)
        self.run: RunFile | None = None
        self.current_frame = -1
        self.show_forces = True
        self.force_scale = 2.0e-4      # m per N (1 kN draws 0.2 m)
        self.force_max_length = 0.40   # m
        self.mtype = mechanisms.for_run(None)   # the shown run's mechanism type
        self.ld_up = np.array([0.0, 0.0, 1.0])
        self.ld_normal = np.array([0.0, -1.0, 0.0])
        self._ld_reference = np.array([0.0, 0.0, 1.0])
        self._initialized = False
        self._dirty = False
        self.render_async = True   # show_frame renders in the widget's render thread (see OffscreenVTKWidget)

        self.vtk_widget = OffscreenVTKWidget()  # rendered off screen, painted as an image (see viewer/vtk_view.py)
        self.vtk_widget.setFocusPolicy(Qt.NoFocus)      # keys stay with the window (playback shortcuts)
        self._build_labels()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(0)
        self._columns = (self._column(self._left_head, self._left), self._column(self._right_head, self._right))
        self.camera_buttons = self._camera_row()
        self._columns[1].layout().addWidget(self.camera_buttons)
        grid.addWidget(self._columns[0], 0, 0)
        grid.addWidget(self.vtk_widget, 0, 1)
        grid.addWidget(self._columns[1], 0, 2)
        grid.addWidget(FlowRow([self._loads, self._time]), 1, 0, 1, 3)   # T Current below the loads if narrow
        self.vtk_widget.raise_()   # painted after its siblings (see OffscreenVTKWidget: the render runs meanwhile)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 1)
        self._style_ground()
        self.render_window = self.vtk_widget.GetRenderWindow()
        self.render_window.SetMultiSamples(0)

        self.views = {
            "ld": _View("ld", self.mtype.scene.ld_title, False),
            "top": _View("top", "top view", False),
            "3d": _View("3d", "3D", True),
        }
        self.background = vtkRenderer()  # one full-window clear is cheaper than three scissored ones
        self.background.SetBackground(*VIEW_BACKGROUND)
        self.background.SetBackgroundAlpha(1.0)   # opaque pixels read back (QImage RGBX8888 takes alpha as 255)
        self.background.SetInteractive(0)
        self.render_window.AddRenderer(self.background)
        for v in self.views.values():
            self.render_window.AddRenderer(v.renderer)
        for key in ("ld", "top"):
            self.views[key].camera.ParallelProjectionOn()
        self.views["3d"].edge.SetVisibility(False)

        iren = self.vtk_widget._Iren  # noqa: SLF001  (the generic interactor behind the widget)
        self._style = vtkInteractorStyleTrackballCamera()
        iren.SetInteractorStyle(self._style)
        self._install_mouse_filter(iren)

        self._parts: dict[str, dict] = {}
        self._bodies: dict[str, dict] = {}   # body -> its parts merged into one wireframe (see _add_bodies)
        self._body_matrix: dict[str, vtkMatrix4x4] = {}
        self._pairs: list[str] = []
        self._arrows: list[dict] = []
        self._label_font = QFont(LABEL_FAMILY)              # force magnitude labels (see _paint_overlays)
        self._label_font.setPixelSize(FONT)
        self._label_font.setBold(True)
        self._label_pen = QColor.fromRgbF(*FORCE_COLOR)
        self._label_box = QColor.fromRgbF(*FORCE_LABEL_BOX)
        self._title_font = QFont(LABEL_FAMILY)              # the views' titles
        self._title_font.setPixelSize(FONT)
        self._title_pen = QColor.fromRgbF(*VIEW_TITLE)
        self._texts_laid: dict = {}                    # (text, font, width) -> QStaticText (see _static_text)
        self._captions_laid = None                     # (size and ghost caption, laid-out captions) (see _captions)
        self.vtk_widget.overlay = self._paint_overlays
        self.vtk_widget.resized = self._views_resized
        self._static_actors: list[tuple[vtkRenderer, vtkActor]] = []
        self._cache: _BlockCache | None = None
        self._texts = {"left": "", "right": "", "loads": ""}
        self._text_layouts: dict[bool, tuple] = {}   # after capture -> readout names of the run (see _text_layout)
        self._counts: set[str] = set()                 # readouts that count things (latches engaged): whole numbers
        self._extent = (-0.6, 0.8, 0.7)  # x min, x max, radial extent (m)
        self.view_zoom = {"ld": 1.0, "top": 1.0}   # 2D views: magnification over the fit (wheel)
        self._pan: tuple | None = None           # a drag panning a 2D view: (view key, last x, last y) in pixels
        self._label_slots: dict = {}             # (view, pair) -> the place its force label had last (kept if free)
        self.camera_preset = "iso"
        self._ghost: dict | None = None   # a second run drawn as a ghost wireframe (see set_ghost)
        self._tints: dict[str, str] = {}  # part -> channel it is coloured by (the type's scene.tinted_parts)
        self._tint_full = math.nan        # |value| drawn in the full tint colour
        self.tint_caption = ""            # what the tint means, at the 3D view's foot
        self._layout()
        self._show_placeholder()
        _style.observe(self.apply_theme)

    # ---- construction helpers ----------------------------------------------------------------
    def _build_labels(self):
        mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        mono.setPixelSize(FONT)
        mono.setStyleStrategy(QFont.PreferNoShaping)   # (no kerning in a fixed font: same pixels, ~25% less time)
        bold = QFont(mono)
        bold.setBold(True)

        def label(font, color, align=Qt.AlignLeft | Qt.AlignTop):
            lab = QLabel()
            lab.setFont(font)
            lab.setProperty("head", color is HEADER_COLOR)
            lab.setAlignment(align)
            lab.setTextFormat(Qt.PlainText)
            return lab

        self._left_head, self._left = label(bold, HEADER_COLOR), SteadyLabel(label(mono, TEXT_COLOR))
        self._right_head, self._right = label(bold, HEADER_COLOR), SteadyLabel(label(mono, TEXT_COLOR))
        self._loads = SteadyLabel(label(mono, TEXT_COLOR, Qt.AlignLeft | Qt.AlignVCenter),   # new text each frame;
                                  grow_only=True)                                 # it has the rest of its row
        self._time = SteadyLabel(label(mono, TEXT_COLOR, Qt.AlignRight | Qt.AlignVCenter))

    def _column(self, head: QLabel, body: QLabel) -> QWidget:
        col = QWidget()
        col.setFixedWidth(STRIP_W)
        lay = QVBoxLayout(col)
        lay.setContentsMargins(8, 6, 4, 4)
        lay.setSpacing(6)
        lay.addWidget(head)
        lay.addWidget(body, 1)  # fills the column: new text never changes the layout
        return col

    def _camera_row(self) -> QWidget:
        """Buttons under the right readouts: the 3D view's camera presets and Fit (every view back to its fit).
        They are widgets beside the views, so neither a grab of the views nor a clip frame shows them."""
        row = QWidget()
        row.setObjectName("camera_buttons")
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.preset_buttons: dict[str, QPushButton] = {}
        for key, text, tip in (("front", "Front", "3D view along the docking axis"),
                               ("side", "Side", "3D view from the side (x to the right, z up)"),
                               ("top", "Top", "3D view from above (x to the right, y up)"),
                               ("iso", "Iso", "3D view: the oblique overview"),
                               ("ride", "Ride", "3D view riding on a body (for the types that name one)"),
                               ("fit", "Fit", "every view: the whole scene (also: double-click a view)")):
            b = self.preset_buttons[key] = QPushButton(text)
            b.setToolTip(tip)
            b.setFocusPolicy(Qt.NoFocus)        # keys stay with the window (playback shortcuts)
            b.clicked.connect(self.fit_views if key == "fit" else (lambda _=False, k=key: self.set_camera_preset(k)))
            lay.addWidget(b)
        lay.addStretch(1)
        self.preset_buttons["ride"].setVisible(False)   # shown for a run whose type names a body to ride on
        return row

    def _style_ground(self):
        """The pane's ground, readouts and camera buttons in the theme's colours (the views keep their own)."""
        self.setStyleSheet(f"ScenePane, QWidget {{ background: {_hex(BACKGROUND)}; }} "
                           f"QLabel {{ color: {_hex(TEXT_COLOR)}; }} "
                           f"QLabel[head=\"true\"] {{ color: {_hex(HEADER_COLOR)}; }} "
                           f"QPushButton {{ color: {_hex(TEXT_COLOR)}; background: {_hex(BACKGROUND)}; "
                           f"border: 1px solid {_hex(VIEW_TITLE)}; padding: 1px 3px; }}")

    def apply_theme(self):
        """View → Theme: the ground, readouts and buttons again (style.observe calls it)."""
        self._style_ground()
        self._show_placeholder()
        self.update()

    def _show_placeholder(self):
        """With no run open the views say so on the pane's ground, and the camera buttons (nothing to aim) hide."""
        none = self.run is None
        self.vtk_widget.placeholder = (("scene: no run open", QColor.fromRgbF(*BACKGROUND), QColor(_style.KEY_TEXT))
                                       if none else None)
        self.camera_buttons.setVisible(not none)
        self.vtk_widget.update()

    def view_at(self, x: float, y: float) -> str | None:
        """The view under display point (x, y) (VTK pixels, origin bottom left), or None."""
        for key, v in self.views.items():
            if v.renderer.IsInViewport(int(x), int(y)):
                return key
        return None

    def _install_mouse_filter(self, iren):
        """The 3D view orbits and zooms (VTK's trackball); the 2D views zoom about the pointer (wheel) and pan
        (left drag); a double-click fits the view it is in."""
        style = self._style

        def where():
            x, y = iren.GetEventPosition()
            return self.view_at(x, y), x, y

        def press(action):
            def handler(obj, ev):
                key, x, y = where()
                if key is None:
                    return
                if iren.GetRepeatCount() and ev == "LeftButtonPressEvent":
                    self.fit_view(key)
                elif key == "3d":
                    action()
                elif ev == "LeftButtonPressEvent":
                    self._pan = (key, x, y)
            return handler

        def wheel(action, notches):
            def handler(obj, ev):
                key, x, y = where()
                if key == "3d":
                    action()
                elif key is not None:
                    self.zoom_view(key, ZOOM_STEP ** notches, (x, y))
            return handler

        def move(obj, ev):
            if self._pan is None:
                style.OnMouseMove()
                return
            key, x0, y0 = self._pan
            x, y = iren.GetEventPosition()
            self._pan = (key, x, y)
            self.pan_view(key, x - x0, y - y0)

        def release(obj, ev):
            if self._pan is not None:
                self._pan = None
            else:
                style.OnLeftButtonUp()

        style.AddObserver("LeftButtonPressEvent", press(style.OnLeftButtonDown))
        style.AddObserver("LeftButtonReleaseEvent", release)
        style.AddObserver("MouseMoveEvent", move)
        style.AddObserver("MiddleButtonPressEvent", press(style.OnMiddleButtonDown))
        style.AddObserver("RightButtonPressEvent", press(style.OnRightButtonDown))
        style.AddObserver("MouseWheelForwardEvent", wheel(style.OnMouseWheelForward, 1))
        style.AddObserver("MouseWheelBackwardEvent", wheel(style.OnMouseWheelBackward, -1))
        style.AddObserver("CharEvent", lambda o, e: None)      # no 'q' exit, 'w'/'s' render modes
        style.AddObserver("KeyPressEvent", lambda o, e: None)
        self.vtk_widget.installEventFilter(self)

    def eventFilter(self, obj, ev):
        """The views' tooltips: what the mouse does in the view under the pointer."""
        if obj is self.vtk_widget and ev.type() == QEvent.Type.ToolTip:
            dpr = self.vtk_widget.devicePixelRatioF() or 1.0
            h = self.render_window.GetSize()[1]
            key = self.view_at(ev.pos().x() * dpr, h - ev.pos().y() * dpr)
            if key is not None:
                QToolTip.showText(ev.globalPos(), f"{self.views[key].title}: {self.views[key].hint}", self.vtk_widget)
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(obj, ev)

    # ---- 2D zoom, pan and fit; 3D presets --------------------------------------------------------
    def _world_per_pixel(self, key: str) -> float:
        """Metres per display pixel of a 2D view (parallel projection)."""
        v = self.views[key]
        _, y0, _, y1 = v.renderer.GetViewport()
        h = max((y1 - y0) * self.render_window.GetSize()[1], 1.0)
        return 2.0 * v.camera.GetParallelScale() / h

    def _shift_camera(self, key: str, d):
        cam = self.views[key].camera
        cam.SetFocalPoint(*(np.array(cam.GetFocalPoint()) + d))
        cam.SetPosition(*(np.array(cam.GetPosition()) + d))

    def pan_view(self, key: str, dx: float, dy: float):
        """Move a 2D view's picture by (dx, dy) display pixels (y up), as a drag does."""
        self.vtk_widget.settle()
        cam = self.views[key].camera
        up = np.array(cam.GetViewUp())
        right = cross3(np.array(cam.GetDirectionOfProjection()), up)
        self._shift_camera(key, -self._world_per_pixel(key) * (dx * right + dy * up))
        self._render()

    def zoom_view(self, key: str, factor: float, at=None):
        """Magnify a 2D view by `factor` about display point `at` (VTK pixels; None: the view's centre)."""
        self.vtk_widget.settle()
        v = self.views[key]
        if at is not None:   # the world point under the pointer stays under it
            ren = v.renderer
            ren.SetDisplayPoint(float(at[0]), float(at[1]), 0.0)
            ren.DisplayToWorld()
            wx, wy, wz, ww = ren.GetWorldPoint()
            p = np.array([wx, wy, wz]) / (ww or 1.0)
            f = np.array(v.camera.GetFocalPoint())
            dop = np.array(v.camera.GetDirectionOfProjection())
            off = (p - f) - dop * float(np.dot(p - f, dop))
            self._shift_camera(key, off * (1.0 - 1.0 / factor))
        self.view_zoom[key] *= factor
        v.camera.SetParallelScale(v.camera.GetParallelScale() / factor)
        self._render()

    def fit_view(self, key: str):
        """A view back to the whole scene: 2D views at zoom 1 on the scene's centre, the 3D view to its preset."""
        self.vtk_widget.settle()
        if key == "3d":
            self.set_camera_preset(self.camera_preset)
            return
        x0, x1, _ = self._extent
        f = np.array(self.views[key].camera.GetFocalPoint())
        self._shift_camera(key, np.array([0.5 * (x0 + x1), 0.0, 0.0]) - f)
        self.view_zoom[key] = 1.0
        self._layout()
        self._render()

    def fit_views(self):
        """Every view back to the whole scene (the Fit button)."""
        for key in self.views:
            self.fit_view(key)

    def set_camera_preset(self, name: str):
        """The 3D camera from the front (along the docking axis), side, top or the oblique iso overview."""
        if name not in CAMERA_PRESETS:
            raise ValueError(f"camera preset {name!r}: one of {', '.join(CAMERA_PRESETS)}")
        if name == "ride" and self._ride() is None:
            raise ValueError("camera preset 'ride': the shown run's mechanism type names no body to ride on "
                             f"({self.mtype.name})")
        self.camera_preset = name
        self.reset_3d_view(name)

    def _ride(self):
        """(body index, RideCamera) of the shown run's riding camera, or None."""
        rc = self.mtype.scene.ride_camera
        if rc is None or self.run is None or rc.body not in self.run.bodies:
            return None
        return self.run.bodies.index(rc.body), rc

    def _place_ride_camera(self, mats) -> bool:
        """The 3D camera on its body at this frame's pose (`mats`: the bodies' 4x4 matrices); False if none."""
        ride = self._ride()
        if ride is None:
            return False
        b, rc = ride
        r, p = mats[b][:3, :3], mats[b][:3, 3]
        r3 = self.views["3d"].renderer
        cam = r3.GetActiveCamera()
        cam.ParallelProjectionOff()
        cam.SetPosition(*(r @ np.asarray(rc.eye, float) + p))
        cam.SetFocalPoint(*(r @ np.asarray(rc.target, float) + p))
        cam.SetViewUp(*(r @ np.asarray(rc.up, float)))
        cam.OrthogonalizeViewUp()
        x0, x1, rad = self._extent
        r3.ResetCameraClippingRange(x0 - 1, x1 + 1, -rad - 1, rad + 1, -rad - 1, rad + 1)
        return True

    # ---- layout ------------------------------------------------------------------------------
    def resizeEvent(self, ev):
        super().resizeEvent(ev)
        self._layout()
        if self.run is not None and self.current_frame >= 0:
            self._update_text(self.current_frame)     # the base loads' lines follow the pane's width

    def _views_resized(self):
        """The VTK widget changed size (a window resize, a splitter, wider readouts): new viewports and, with a run,
        a render at once, so the old image never shows stretched or spilling across the views."""
        self._layout()
        if self.run is not None and self.current_frame >= 0:
            self._render()

    def _layout(self):
        """Viewports of the VTK window: [plane Ld | top view | 3D]."""
        self.vtk_widget.settle()
        w = max(self.vtk_widget.width(), 1)
        h = max(self.vtk_widget.height(), 1)
        wp = (1.0 - VIEW_3D_SHARE) / 2
        self.views["ld"].set_viewport(0.0, 0.0, wp, 1.0)
        self.views["top"].set_viewport(wp, 0.0, 2 * wp, 1.0)
        self.views["3d"].set_viewport(2 * wp, 0.0, 1.0, 1.0)
        self._frame_projections(wp * w, h)

    def _frame_projections(self, vw: float, vh: float):
        """Parallel scale so the whole scene fits both projections at the same scale (at zoom 1; the wheel's zoom
        is kept over a resize)."""
        x0, x1, rad = self._extent
        half_h = 1.08 * rad
        half_w = 0.54 * (x1 - x0)
        scale = max(half_h, half_w * vh / max(vw, 1.0))
        for key in ("ld", "top"):
            self.views[key].camera.SetParallelScale(scale / self.view_zoom[key])

    # ---- run -----------------------------------------------------------------------------------
    def set_run(self, run: RunFile | None):
        """Build each part's wireframe once; frames then only move actors and recolour them."""
        self._clear()
        self.run = run
        self.current_frame = -1
        self.mtype = mechanisms.for_run(run)
        self.views["ld"].title = self.mtype.scene.ld_title
        ride = self.mtype.scene.ride_camera
        can_ride = ride is not None and run is not None and ride.body in run.bodies
        self.preset_buttons["ride"].setVisible(can_ride)
        if ride is not None:
            self.preset_buttons["ride"].setToolTip(ride.title)
        if self.camera_preset == "ride" and not can_ride:
            self.camera_preset = "iso"
        self._show_placeholder()
        if run is None:
            return
        self._body_matrix = {b: vtkMatrix4x4() for b in run.bodies}
        for name, g in run.geometry.items():
            self._add_part(name, g)
        self._flexible = []
        for fp in run.flexible_parts:   # parts whose points change per frame (docs/run-format.md), any type's
            try:
                pts = run.flexible_points(fp.name, 0)
            except RunFileError as exc:
                self.readError.emit(str(exc))
                pts = np.zeros((fp.n_points, 3))
            self._add_part(fp.name, PartGeometry(fp.name, fp.body, pts, fp.lines, fp.kind))
            self._flexible.append(fp.name)
        self._add_bodies()
        self._pairs = list(run.contact_pairs)
        self._add_markers(run)
        self._add_arrows()
        self._set_tints(run)
        vis = tuple(g.visible_channel for g in run.geometry.values() if g.visible_channel)
        self._cache = _BlockCache(run, dict.fromkeys(self.mtype.readout_channels() + vis +
                                                     tuple(self._tints.values())), self._pairs)
        self._fit_columns()
        self._compute_extent(run)
        self.view_zoom = {"ld": 1.0, "top": 1.0}
        self._label_slots.clear()
        self._setup_cameras()
        self.show_frame(0)

    def _set_tints(self, run: RunFile, since: int | None = None):
        """The parts the type colours by a channel's value, the full-colour |value| (the largest of those channels
        over the run; `since`: a live run grew from that many frames, the new ones may raise it) and the caption."""
        spec = self.mtype.scene
        self._tints = {n: c for n, c in spec.tinted_parts.items() if n in self._parts and c in run.channels}
        full = 0.0 if since is None else self._tint_full
        for c in dict.fromkeys(self._tints.values()):
            m = run.stored_abs_max(c) if since is None else math.nan
            if not math.isfinite(m):              # (a live run: not stored yet)
                m = float(np.nanmax(np.abs(run.channel(c, since or 0, run.n_frames)), initial=0.0))
            full = max(full, m)
        self._tint_full = full
        unit = run.channels[next(iter(self._tints.values()))].unit if self._tints else ""
        scale = force_text(full) if unit == "N" else f"{full:.3g} {unit}"
        self.tint_caption = (f"{spec.tint_title or 'colour by value'}: orange +, blue \u2212, full at {scale}"
                             if self._tints and full > 0 else "")
        self._captions_laid = None

    def _tint(self, value: float):
        """(sign, level 1..TINT_LEVELS) of a tinted part's value, or None (about zero, or no value)."""
        if not (math.isfinite(value) and self._tint_full > 0):
            return None
        level = min(round(TINT_LEVELS * abs(value) / self._tint_full), TINT_LEVELS)
        return (1 if value > 0 else -1, level) if level else None

    def _fit_columns(self):
        """Each readout column STRIP_W px wide, or wider when the run's longest readout line would be cut."""
        fm, head = QFontMetricsF(self._left.label.font()), QFontMetricsF(self._left_head.font())
        for side, col in enumerate(self._columns):
            need = 0.0
            for after in (False, True):
                lay = self._text_layout(after)
                names, w = (lay[2], lay[4]) if side == 0 else (lay[3], lay[5])
                need = max([need, head.horizontalAdvance(lay[side])]
                           + [fm.horizontalAdvance(_fmt(n, -1234.5678, u, w)) for n, u in names])
            m = col.layout().contentsMargins()
            col.setFixedWidth(max(STRIP_W, math.ceil(need + m.left() + m.right() + 2)))

    def _clear(self):
        self.vtk_widget.settle()
        for b in self._bodies.values():
            for ren, actor in b["actors"]:
                ren.RemoveActor(actor)
        self._bodies.clear()
        for ren, actor in self._static_actors:
            ren.RemoveActor(actor)
        for a in self._arrows:
            for ren, actor in a["actors"]:
                ren.RemoveActor(actor)
        self._parts.clear()
        self._static_actors.clear()
        self._arrows.clear()
        self._body_matrix = {}
        self._cache = None
        for t in (self._left_head, self._left, self._right_head, self._right, self._loads, self._time):
            t.setText("")
        self._texts = {"left": "", "right": "", "loads": ""}
        self._text_layouts = {}
        self._counts = set()
        self._tints, self.tint_caption = {}, ""

    def _add_part(self, name: str, g):
        pd = _wire_polydata(g.points, g.lines)
        base = self.mtype.part_color(g.kind)
        self._parts[name] = dict(geometry=g, base=base, red=False, visible=True, pd=pd, body=g.body, tint=None)

    def _add_bodies(self):
        """Each body's parts as one wireframe with a colour per point (cell colours cost a lookup per pixel; two actors per view: width 1, and
        width 2 for red contact parts other than the type's thin kinds); a frame sets the body's matrix, and
        the lines are rebuilt only when a part turns red or appears (a dozen draws per view, not 40)."""
        for body in dict.fromkeys(p["body"] for p in self._parts.values()):
            names = [n for n, p in self._parts.items() if p["body"] == body]
            pts, lines, part_of, point_of, off = [], [], [], [], 0
            for k, n in enumerate(names):
                g = self._parts[n]["geometry"]
                pts.append(np.asarray(g.points, dtype=np.float64).reshape(-1, 3))
                lines.append(np.asarray(g.lines, dtype=_ID).reshape(-1, 2) + off)
                part_of.append(np.full(len(g.lines), k))
                point_of.append(np.full(len(g.points), k))
                off += len(g.points)
            points = vtkPoints()
            points.SetData(numpy_to_vtk(np.concatenate(pts), deep=True))
            flex, off = [], 0
            for n in names:   # where each flexible part's points lie in the body's point array
                size = len(self._parts[n]["geometry"].points)
                if n in self._flexible:
                    flex.append((n, off, size))
                off += size
            base = np.array([[round(255 * c) for c in self._parts[n]["base"]] for n in names], dtype=np.uint8)
            rec = dict(names=names, points=points, flex=flex,
                       lines=np.concatenate(lines), part_of=np.concatenate(part_of), base=base,
                       point_of=np.concatenate(point_of), pds=[], actors=[], key=None, drawn=[np.zeros(0, int), np.zeros(0, int)])
            for width in (1.0, 2.0):
                pd = vtkPolyData()
                pd.SetPoints(points)
                rec["pds"].append(pd)
            for v in self.views.values():
                for pd, width in zip(rec["pds"], (1.0, 2.0)):
                    m = _static_mapper(pd)     # a mapper per view: shared, it rebuilt its shaders on every render
                    m.SetColorModeToDirectScalars()  # (parallel and perspective cameras take different shaders)
                    a = vtkActor()
                    a.SetMapper(m)
                    a.GetProperty().LightingOff()
                    a.GetProperty().SetLineWidth(width)
                    a.SetUserMatrix(self._body_matrix[body])
                    v.renderer.AddActor(a)
                    rec["actors"].append((v.renderer, a))
            self._bodies[body] = rec
            self._set_body_lines(body)

    def _set_body_lines(self, body: str):
        """Rebuild a body's two wireframes from its parts' red and visible states (when they changed)."""
        rec = self._bodies[body]
        parts = [self._parts[n] for n in rec["names"]]
        key = tuple((p["visible"], p["red"], p["tint"]) for p in parts)
        if key == rec["key"]:
            return
        rec["key"] = key
        built = rec.setdefault("built", OrderedDict())   # the few contact states recur: keep their arrays
        got = built.get(key)
        if got is None:
            got = built[key] = self._body_lines(rec, parts)
            while len(built) > 32:
                built.popitem(last=False)
        else:
            built.move_to_end(key)
        rgb, wires = got
        for w, (sel, cells, drawn) in enumerate(wires):
            pd, actors = rec["pds"][w], rec["actors"][w::2]
            rec["drawn"][w] = sel
            pd.SetLines(cells)
            pd.GetPointData().SetScalars(rgb)
            pd.Modified()
            for _, a in actors:
                a.SetVisibility(drawn)

    def _body_lines(self, rec: dict, parts: list) -> tuple:
        """(point colours, per wireframe (line indices drawn, cells, any drawn)) for the parts' states."""
        visible = np.array([p["visible"] for p in parts])
        red = np.array([p["red"] for p in parts])
        thin = self.mtype.thin_kinds
        wide = red & np.array([p["geometry"].kind not in thin for p in parts])
        colors = rec["base"].copy()
        for k, p in enumerate(parts):
            if p["tint"] is not None:        # from a third of the way to the tint at level 1 to the tint at full
                sign, level = p["tint"]
                f = 0.35 + 0.65 * (level - 1) / (TINT_LEVELS - 1)
                target = TINT_POSITIVE if sign > 0 else TINT_NEGATIVE
                colors[k] = [round(255 * ((1 - f) * b + f * t)) for b, t in zip(p["base"], target)]
        colors[red] = [round(255 * c) for c in CONTACT_RED]
        part_of = rec["part_of"]
        rgb = numpy_to_vtk(np.ascontiguousarray(colors[rec["point_of"]]), deep=True)
        rgb.SetName("part_colors")
        wires = []
        for keep in (visible & ~wide, visible & wide):
            sel = np.flatnonzero(keep[part_of])   # the body's lines drawn in this wireframe
            conn = np.ascontiguousarray(rec["lines"][sel]).reshape(-1)
            cells = vtkCellArray()
            cells.SetData(numpy_to_vtkIdTypeArray(np.arange(0, conn.size + 1, 2, dtype=_ID), deep=True),
                          numpy_to_vtkIdTypeArray(conn, deep=True))
            wires.append((sel, cells, bool(conn.size)))
        return rgb, wires

    def _add_markers(self, run: RunFile):
        """The x axis line and a dot at each of the type's marker bodies' origins (e.g. gimbal, bending joint)."""
        axis = _wire_polydata(np.array([[-0.75, 0, 0], [1.0, 0, 0]]), np.array([[0, 1]]))
        self._static(axis, (0.30, 0.34, 0.42), run.bodies[0] if "passive_craft" not in run.bodies
                     else "passive_craft", point_size=0)
        for body in self.mtype.scene.marker_bodies:
            if body in run.bodies:
                self._static(_vertex_polydata([(0.0, 0.0, 0.0)]), (0.35, 0.9, 1.0), body, point_size=6)

    def _static(self, pd, color, body, point_size):
        for v in self.views.values():
            a = vtkActor()
            a.SetMapper(_static_mapper(pd))
            a.GetProperty().SetColor(*color)
            a.GetProperty().LightingOff()
            if point_size:
                a.GetProperty().SetPointSize(point_size)
            a.SetUserMatrix(self._body_matrix[body])
            if point_size:
                _draw_on_top(a)
            v.renderer.AddActor(a)
            self._static_actors.append((v.renderer, a))

    def _add_arrows(self):
        """One force arrow and contact-point dot per contact pair, drawn on top of the wireframes."""
        src = vtkArrowSource()
        src.SetTipResolution(10)
        src.SetShaftResolution(8)
        src.SetTipLength(0.25)
        src.SetTipRadius(0.09)
        src.SetShaftRadius(0.03)
        src.Update()
        arrow_pd = src.GetOutput()
        dot_pd = _vertex_polydata([(0.0, 0.0, 0.0)])
        for pair in self._pairs:
            am, dm = vtkMatrix4x4(), vtkMatrix4x4()
            actors = []
            for v in self.views.values():
                for pd, m, is_dot in ((arrow_pd, am, False), (dot_pd, dm, True)):
                    mapper = _static_mapper(pd)
                    a = vtkActor()
                    a.SetMapper(mapper)
                    _draw_on_top(a)
                    p = a.GetProperty()
                    p.SetColor(*(CONTACT_RED if is_dot else FORCE_COLOR))
                    p.LightingOff()
                    p.SetPointSize(7)
                    a.SetUserMatrix(m)
                    a.SetVisibility(False)
                    v.renderer.AddActor(a)
                    actors.append((v.renderer, a))
            self._arrows.append(dict(pair=pair, arrow=am, dot=dm, actors=actors, visible=False, text="", magnitude=0.0,
                                     point=(0.0, 0.0, 0.0)))   # (its label: drawn by _paint_overlays)

    def _compute_extent(self, run: RunFile):
        """Scene extent: every part (the passive craft's far end, petals reaching through the ring plane) at the start,
        at capture and at nine frames spread over the run (a ring that extends or retracts, rods that deploy)."""
        frames = {int(f) for f in np.linspace(0, max(run.n_frames - 1, 0), 9)}
        if math.isfinite(run.t_capture):
            frames.add(run.frame_at(run.t_capture))
        xs, rs = [], []
        for fr in sorted(frames):
            try:
                pos, q = run.poses(fr)
            except RunFileError:
                continue   # reported when the frame is shown
            mats = pose_matrices(pos, q)
            flex = []
            for fp in run.flexible_parts:
                try:
                    flex.append((fp.body, run.flexible_points(fp.name, fr)))
                except RunFileError:
                    continue   # reported when the frame is shown
            for body, points in [(g.body, g.points) for g in run.geometry.values()] + flex:
                m = mats[run.bodies.index(body)]
                w = points @ m[:3, :3].T + m[:3, 3]
                if len(w):
                    xs += [w[:, 0].min(), w[:, 0].max()]
                    rs.append(np.hypot(w[:, 1], w[:, 2]).max())
        if xs:
            self._extent = (float(min(xs)), float(max(xs)), float(max(rs)))
        ref = None
        for fr in sorted(frames):
            try:
                pos, _ = run.poses(fr)
            except RunFileError:
                continue
            ld = self._ld_bodies()
            if ld:
                ref = lateral_direction(pos[ld[0]], pos[ld[1]])
            if ref is not None:
                break
        self._ld_reference = ref if ref is not None else np.array([0.0, 0.0, 1.0])

    def _setup_cameras(self):
        x0, x1, rad = self._extent
        xc = 0.5 * (x0 + x1)
        top = self.views["top"].camera
        top.SetFocalPoint(xc, 0.0, 0.0)
        top.SetPosition(xc, 0.0, 10.0)
        top.SetViewUp(0.0, 1.0, 0.0)
        top.SetClippingRange(5.0, 15.0)
        ld = self.views["ld"].camera
        ld.SetFocalPoint(xc, 0.0, 0.0)
        ld.SetClippingRange(5.0, 15.0)
        self._update_ld(np.zeros(3), np.zeros(3))  # plane Ld along the reference until poses say more
        self._layout()
        self.reset_3d_view()

    def reset_3d_view(self, preset: str | None = None):
        """Put the free 3D view back to a preset (default: the current one, the oblique overview at first): "front"
        looks along the docking axis (+x away from the viewer), "side" from -y, "top" from +z, "iso" obliquely."""
        self.vtk_widget.settle()
        preset = preset or self.camera_preset
        if preset == "ride" and self.run is not None and self.current_frame >= 0:
            try:
                pos, quat = self.run.poses(self.current_frame)
            except RunFileError:
                return
            if self._place_ride_camera(pose_matrices(pos, quat)):
                self._render()
                return
        x0, x1, rad = self._extent
        xc = 0.5 * (x0 + x1)
        r3 = self.views["3d"].renderer
        cam = r3.GetActiveCamera()
        cam.ParallelProjectionOff()
        cam.SetFocalPoint(xc, 0.0, 0.0)
        offset, up = {"front": ((-1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), "side": ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
                      "top": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)), "iso": ((0.9, -1.6, 1.0), (0.0, 0.0, 1.0)),
                      "ride": ((0.9, -1.6, 1.0), (0.0, 0.0, 1.0))}[preset]   # (ride: until a frame places it)
        cam.SetPosition(xc + offset[0], offset[1], offset[2])
        cam.SetViewUp(*up)
        r3.ResetCamera(x0, x1, -rad, rad, -rad, rad)
        cam.Zoom(1.25)
        r3.ResetCameraClippingRange(x0 - 1, x1 + 1, -rad - 1, rad + 1, -rad - 1, rad + 1)
        if self.run is not None and self.current_frame >= 0:
            self._render()

    # ---- per frame -----------------------------------------------------------------------------
    @Slot(int)
    def show_frame(self, i: int):
        """Move, recolour and relabel the scene for frame i, then render once."""
        run = self.run
        if run is None:
            return
        self.vtk_widget.settle()
        i = min(max(int(i), 0), run.n_frames - 1)
        try:
            pos, quat = run.poses(i)
        except RunFileError as exc:
            self.readError.emit(str(exc))
            return
        self.current_frame = i
        mats = pose_matrices(pos, quat)
        for b, name in enumerate(run.bodies):
            self._body_matrix[name].DeepCopy(mats[b].ravel())
        if self.camera_preset == "ride":
            self._place_ride_camera(mats)
        cache = self._cache
        k = cache.at(i)
        active = cache.active[:, k]
        red = set()
        for j, pair in enumerate(self._pairs):
            if active[j]:
                info = run.contact_pairs[pair]
                red.add(info.part_a)
                red.add(info.part_b)
        changed = set()
        for name, channel in self._tints.items():
            p = self._parts[name]
            tint = self._tint(cache.value_at(channel, k))
            if tint != p["tint"]:
                p["tint"] = tint
                changed.add(p["body"])
        for name, p in self._parts.items():
            vc = p["geometry"].visible_channel
            visible = True if not vc else cache.value(vc, i) > 0
            if visible != p["visible"] or (name in red) != p["red"]:
                p["visible"], p["red"] = visible, name in red
                changed.add(p["body"])
        for body in changed:
            self._set_body_lines(body)
        self._update_flexible(i)
        self._update_arrows(cache, k, active)
        ld = self._ld_bodies()
        if ld:
            self._update_ld(pos[ld[0]], pos[ld[1]])
        self._update_text(i)
        self._show_ghost(float(run.time[i]))
        self._render()

    def _update_flexible(self, i: int):
        """Move the flexible parts' points to frame i (in their body's frame; its matrix places them)."""
        for rec in self._bodies.values():
            if not rec["flex"]:
                continue
            arr = vtk_to_numpy(rec["points"].GetData())
            for name, off, size in rec["flex"]:
                try:
                    arr[off:off + size] = self.run.flexible_points(name, i)
                except RunFileError as exc:
                    self.readError.emit(str(exc))
                    return
            rec["points"].Modified()

    def _update_arrows(self, cache: _BlockCache, k: int, active):
        show = self.show_forces
        for j, a in enumerate(self._arrows):
            m = None
            if show and active[j]:
                point, force = cache.point[j, k].tolist(), cache.force[j, k].tolist()
                m = arrow_elements(point, force, self.force_scale, self.force_max_length, 0.12)
            if m is not None:
                a["arrow"].DeepCopy(m)
                x, y, z = point
                a["dot"].DeepCopy((1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z, 0.0, 0.0, 0.0, 1.0))
                a["magnitude"] = math.sqrt(force[0] * force[0] + force[1] * force[1] + force[2] * force[2])
                a["text"] = force_text(a["magnitude"])
                a["point"] = (x, y, z)
            vis = m is not None
            if vis != a["visible"]:
                a["visible"] = vis
                for _, actor in a["actors"]:
                    actor.SetVisibility(vis)

    def _ld_bodies(self) -> tuple[int, int] | None:
        """Indices of the two bodies whose origins (with the x axis) span plane Ld, if the run has both."""
        names = self.mtype.scene.ld_bodies
        if not names or not all(b in self.run.bodies for b in names):
            return None
        return self.run.bodies.index(names[0]), self.run.bodies.index(names[1])

    def _update_ld(self, gimbal, joint):
        up, normal = ld_plane(gimbal, joint, self._ld_reference)
        self.ld_up, self.ld_normal = up, normal
        cam = self.views["ld"].camera
        f = np.array(cam.GetFocalPoint())
        view_dir = cross3(up, (1.0, 0.0, 0.0))  # screen right = +x (cone axis horizontal)
        cam.SetPosition(*(f - 10.0 * view_dir))
        cam.SetViewUp(*up)

    def _text_layout(self, after: bool) -> tuple:
        """(left head, right head, [(name, unit)] left and right, their name widths, [(name, unit)] base loads)
        of the readouts before or after capture; made once per run."""
        got = self._text_layouts.get(after)
        if got is None:
            run = self.run
            ro = self.mtype.readouts(after)
            lh = rh = ro.head
            ln = [(n, run.channels[n].unit) for n in ro.left if n in run.channels]
            rn = [(n, run.channels[n].unit) for n in ro.right if n in run.channels]
            self._counts.update(n for n, u in ln + rn if is_count(u, run.channels[n].stroke))
            lw = max((len(n) for n, _ in ln), default=0) + 1
            rw = max((len(n) for n, _ in rn), default=0) + 1
            loads = [(n, run.channels[n].unit.replace("*", "·")) for n in self.mtype.base_loads if n in run.channels]
            got = self._text_layouts[after] = (lh, rh, ln, rn, lw, rw, loads)
        return got

    def _wrap_loads(self, items: list[str]) -> str:
        """'base: Fx … N   Fy … N …' on as many lines as the pane's width needs (never cut at a narrow pane)."""
        if not items:
            return ""
        fm = QFontMetricsF(self._loads.label.font())
        room = max(self.width() - 24, 1)
        lines = ["base: " + items[0]]
        for item in items[1:]:
            wide = lines[-1] + "   " + item
            if fm.horizontalAdvance(wide) <= room:
                lines[-1] = wide
            else:
                lines.append("      " + item)
        return "\n".join(lines)

    def _update_text(self, i: int):
        run = self.run
        cache = self._cache
        t = float(run.time[i])
        tc = run.t_capture
        after = math.isfinite(tc) and t >= tc
        lh, rh, ln, rn, lw, rw, load_names = self._text_layout(after)
        k = cache.at(i)
        counts = self._counts
        left = "\n".join(_fmt(n, cache.value_at(n, k), u, lw, n in counts) for n, u in ln)
        right = "\n".join(_fmt(n, cache.value_at(n, k), u, rw, n in counts) for n, u in rn)
        loads = self._wrap_loads([_fmt_load(n, cache.value_at(n, k), u) for n, u in load_names])
        if left != self._texts["left"]:
            self._left_head.setText(lh if ln else "")
            self._left.setText(left)
        if right != self._texts["right"]:
            self._right_head.setText(rh if rn else "")
            self._right.setText(right)
        if loads != self._texts["loads"]:
            self._loads.setText(loads)
        self._texts = {"left": left, "right": right, "loads": loads}
        phase = "after capture" if after else "before capture" if math.isfinite(tc) else \
            "no capture yet" if run.live else "no capture"
        self._time.setText(f"T Current {t:8.3f} s  ({phase})")

    # ---- a second run as a ghost wireframe (comparison) ----------------------------------------
    GHOST_COLOR = GHOST_COLOR

    def set_ghost(self, run_b: RunFile | None, offset: float = 0.0, label: str = ""):
        """Draw run B's parts as a violet, see-through wireframe at B's frame for t_A − offset (None removes it)."""
        self.vtk_widget.settle()
        from viewer.channel_blocks import ChannelBlocks
        if self._ghost is not None:
            for ren, actor in self._ghost["actors"]:
                ren.RemoveViewProp(actor)
        self._ghost = None
        if run_b is not None:
            mats = {b: vtkMatrix4x4() for b in run_b.bodies}
            prop = vtkProperty()
            prop.SetColor(*self.GHOST_COLOR)
            prop.SetOpacity(0.6)
            prop.LightingOff()
            prop.SetLineWidth(1.5)
            parts, actors = [], []
            passive = "passive_craft" if "passive_craft" in run_b.bodies else run_b.bodies[0]
            for g in run_b.geometry.values():
                if g.body == passive:   # the station barely moves: its ghost would only hide run A's cone
                    continue
                pd = _wire_polydata(g.points, g.lines)
                mine = []
                for v in self.views.values():
                    a = vtkActor()
                    a.SetMapper(_static_mapper(pd))
                    a.SetProperty(prop)
                    a.SetUserMatrix(mats[g.body])
                    v.renderer.AddActor(a)
                    mine.append((v.renderer, a))
                parts.append((g, mine))
                actors += mine
            self._ghost = dict(run=run_b, offset=float(offset), mats=mats, parts=parts, actors=actors,
                               blocks=ChannelBlocks(run_b), frame=-1, shown=True,
                               text=f"ghost: {label or run_b.path.name}")   # painted at the plane Ld view's foot
        if self.run is not None and self.current_frame >= 0:
            self.show_frame(self.current_frame)

    def _show_ghost(self, t_a: float):
        g = self._ghost
        if g is None:
            return
        rb = g["run"]
        tb = t_a - g["offset"]
        inside = bool(rb.time[0] - 1e-9 <= tb <= rb.time[-1] + 1e-9)
        j = rb.frame_at(tb + 1e-9) if inside else -1   # 1 ns: summed float times
        if inside and j != g["frame"]:
            try:
                pos, quat = rb.poses(j)
            except RunFileError as exc:
                self.readError.emit(str(exc))
                return
            for b, m in zip(rb.bodies, pose_matrices(pos, quat)):
                g["mats"][b].DeepCopy(m.ravel())
        g["frame"] = j
        for part, actors in g["parts"]:
            vc = part.visible_channel
            vis = bool(inside and (not vc or g["blocks"].value(vc, j) > 0))
            for _, a in actors:
                a.SetVisibility(vis)

    def ghost_frame(self) -> int:
        """Run B's frame drawn as the ghost (-1: none, or A's time is outside B)."""
        return -1 if self._ghost is None else int(self._ghost["frame"])

    def ghost_matrix(self, body: str) -> np.ndarray:
        self.vtk_widget.settle()
        m = self._ghost["mats"][body]
        return np.array([[m.GetElement(r, c) for c in range(4)] for r in range(4)])

    # ---- a run still being written -------------------------------------------------------------
    def refresh_live(self, n_old: int | None = None):
        """The run grew from `n_old` frames: forget the cached (possibly short) last block; geometry and cameras
        stay. `prefetch_live` then reads the new last frame's block (a step of its own in a live refresh)."""
        self.vtk_widget.settle()
        if self.run is not None and self._cache is not None:
            if n_old is None:
                self._cache = _BlockCache(self.run, self._cache.channels, self._pairs)
            else:
                self._cache.extend(n_old)
            if self._tints:
                self._set_tints(self.run, n_old or 0)

    def prefetch_steps(self, frame: int):
        """Read the readouts, contacts and poses of `frame` a few datasets per step (a generator), so that
        showing the frame then only renders."""
        if self.run is None or self._cache is None:
            return
        frame = min(max(int(frame), 0), self.run.n_frames - 1)
        yield from self._cache.load_steps(frame)
        try:
            self.run.poses(frame)
        except RunFileError:
            pass   # reported when the frame is shown

    # ---- rendering -----------------------------------------------------------------------------
    def showEvent(self, ev):
        self.vtk_widget.settle()
        super().showEvent(ev)
        if not self._initialized:
            self._initialized = True
            self.vtk_widget.Initialize()
        if self._dirty:
            self._render()

    def hold_render(self):
        """Frames shown from now on move the actors but do not render until `release_render` (one render per
        live refresh, in an event-loop turn of its own)."""
        self._held = True

    def release_render(self):
        self._held = False
        if self._dirty:
            self._render()

    def _render(self):
        if not self.isVisible() or getattr(self, "_held", False):
            self._dirty = True
            return
        self._dirty = False
        if self.render_async:
            self.vtk_widget.render_async()
        else:
            self.render_window.Render()

    def vtk_image(self) -> QImage:
        """The three views as rendered now, read back with vtkWindowToImageFilter."""
        self.vtk_widget.settle()
        self.render_window.Render()
        f = vtkWindowToImageFilter()
        f.SetInput(self.render_window)
        f.SetInputBufferTypeToRGB()
        f.ReadFrontBufferOff()
        f.ShouldRerenderOff()
        f.Update()
        img = f.GetOutput()
        w, h, _ = img.GetDimensions()
        arr = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, 3)[::-1]
        arr = np.ascontiguousarray(arr, dtype=np.uint8)
        return QImage(arr.data, w, h, 3 * w, QImage.Format_RGB888).copy()

    def grab_image(self) -> QImage:
        """The whole pane (readouts and views) as an RGB image; QWidget.grab alone is black for VTK."""
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        views = self.vtk_image()
        img = self.grab().toImage().convertToFormat(QImage.Format_RGB888)
        views.setDevicePixelRatio(img.devicePixelRatio())
        painter = QPainter(img)
        painter.drawImage(self.vtk_widget.geometry().topLeft(), views)
        painter.translate(self.vtk_widget.geometry().topLeft())
        self._paint_overlays(painter)
        painter.end()
        return img

    # ---- options and what is shown (for tests and the window) ---------------------------------
    def set_show_forces(self, on: bool):
        """Show or hide contact points and force arrows of active pairs."""
        self.show_forces = bool(on)
        if self.run is not None and self.current_frame >= 0:
            self.show_frame(self.current_frame)

    def set_force_scale(self, metres_per_newton: float):
        self.force_scale = float(metres_per_newton)
        if self.run is not None and self.current_frame >= 0:
            self.show_frame(self.current_frame)

    def part_names(self) -> list[str]:
        return list(self._parts)

    def _drawn_line(self, name: str) -> tuple[int, int]:
        """(wireframe 0 or 1, index of the part's first line in it) as drawn now; (-1, -1): not drawn."""
        self.vtk_widget.settle()
        p = self._parts[name]
        rec = self._bodies[p["body"]]
        first = int(np.flatnonzero(rec["part_of"] == rec["names"].index(name))[0])
        for w, drawn in enumerate(rec["drawn"]):
            j = int(np.searchsorted(drawn, first))
            if j < len(drawn) and drawn[j] == first and rec["pds"][w].GetNumberOfLines() == len(drawn):
                return w, j
        return -1, -1

    def part_color(self, name: str) -> tuple[float, float, float]:
        """The colour the part's lines are drawn in (its base colour when hidden)."""
        p = self._parts[name]
        w, j = self._drawn_line(name)
        if w < 0:
            return tuple(p["base"])
        pd = self._bodies[p["body"]]["pds"][w]
        rgb = tuple(round(c) for c in pd.GetPointData().GetScalars().GetTuple3(pd.GetCell(j).GetPointId(0)))
        for c in (CONTACT_RED, p["base"]):
            if rgb == tuple(round(255 * x) for x in c):
                return tuple(c)
        return tuple(x / 255.0 for x in rgb)

    def part_is_red(self, name: str) -> bool:
        return self.part_color(name) == CONTACT_RED

    def part_visible(self, name: str) -> bool:
        w, _ = self._drawn_line(name)
        return w >= 0 and all(bool(a.GetVisibility()) for _, a in
                              self._bodies[self._parts[name]["body"]]["actors"][w::2])

    def part_matrix(self, name: str) -> np.ndarray:
        self.vtk_widget.settle()
        m = self._bodies[self._parts[name]["body"]]["actors"][0][1].GetUserMatrix()
        return np.array([[m.GetElement(r, c) for c in range(4)] for r in range(4)])

    def force_arrows(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Visible arrows: pair -> (tail point, tip point), read back from the actors' matrices."""
        self.vtk_widget.settle()
        out = {}
        for a in self._arrows:
            if a["visible"]:
                m = np.array([[a["arrow"].GetElement(r, c) for c in range(4)] for r in range(4)])
                out[a["pair"]] = (m[:3, 3].copy(), m[:3, 3] + m[:3, 0])
        return out

    def force_labels(self) -> dict[str, tuple[str, np.ndarray]]:
        """Visible magnitude labels: pair -> (text, the contact point they are drawn next to)."""
        return {a["pair"]: (a["text"], np.array(a["point"])) for a in self._arrows if a["visible"]}

    def _static_text(self, text: str, font: QFont, width: float = -1.0) -> QStaticText:
        """A laid-out text, kept per string, font and wrapping width (one of the pane's own: the labels' few values
        recur); width > 0 wraps it at word boundaries."""
        key = (text, id(font), width)
        st = self._texts_laid.get(key)
        if st is None:
            if len(self._texts_laid) > 256:
                self._texts_laid.clear()
            st = self._texts_laid[key] = QStaticText(text)
            st.setTextFormat(Qt.TextFormat.PlainText)
            st.setTextWidth(width)
            if width > 0:   # a file name longer than the line breaks anywhere
                opt = QTextOption(Qt.AlignmentFlag.AlignLeft)
                opt.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
                st.setTextOption(opt)
            st.prepare(QTransform(), font)
        return st

    def _captions(self) -> list[tuple]:
        """Per view: (view, its rect in the widget, [(text, rect, QStaticText, pen)]): its title at the top, wrapped
        to the view's width, and in plane Ld the ghost run's caption at the foot."""
        w, h = self.render_window.GetSize()
        dpr = self.vtk_widget.devicePixelRatioF() or 1.0
        ghost = self._ghost["text"] if self._ghost is not None else ""
        key = (w, h, dpr, ghost, self.views["ld"].title, self.tint_caption)
        if self._captions_laid is not None and self._captions_laid[0] == key:
            return self._captions_laid[1]
        out = []
        for v in self.views.values():
            x0, y0, x1, y1 = v.renderer.GetViewport()
            view = QRectF(x0 * w / dpr, (1.0 - y1) * h / dpr, (x1 - x0) * w / dpr, (y1 - y0) * h / dpr)
            inner = view.adjusted(CAPTION_MARGIN, CAPTION_MARGIN, -CAPTION_MARGIN, -CAPTION_MARGIN)
            texts = []
            foot = (ghost, QColor.fromRgbF(*self.GHOST_COLOR)) if v.name == "ld" else \
                (self.tint_caption, self._title_pen) if v.name == "3d" else ("", None)
            for text, pen, top in ((v.title, self._title_pen, True), (*foot, False)):
                if not text:
                    continue
                st = self._static_text(text, self._title_font, max(inner.width(), 1.0))
                size = st.size()
                y = inner.top() if top else inner.bottom() - size.height()
                texts.append((text, QRectF(inner.left(), y, size.width(), size.height()), st, pen))
            out.append((v, view, texts))
        self._captions_laid = (key, out)
        return out

    def label_rects(self) -> list[tuple]:
        """The texts painted over the views (titles, the ghost's caption, the force labels) as laid out: (text shown,
        full text, rect in the scene widget, font, QPainter text flags, view rect); the rects of one view never
        intersect."""
        off = QPointF(self.vtk_widget.pos())
        self.vtk_widget.settle()
        out = [(text, text, rect.translated(off), self._title_font, int(Qt.TextWrapAnywhere), view.translated(off))
               for _, view, texts in self._captions() for text, rect, _, _ in texts]
        out += [(text, text, rect.translated(off), self._label_font, int(Qt.AlignLeft | Qt.AlignTop),
                 view.translated(off)) for _, view, labels in self._force_label_places() for _, text, rect, _ in labels]
        return out

    def force_label_places(self) -> dict[str, list[tuple[str, str, QRectF, QPointF]]]:
        """Per view: (pair, text, rect, its contact point) of each force label as painted now (VTK widget pixels)."""
        self.vtk_widget.settle()
        return {v.name: labels for v, _, labels in self._force_label_places()}

    def _force_label_places(self) -> list[tuple]:
        """(view, view rect, [(pair, text, rect, anchor)]) of the visible arrows' magnitude labels, placed by a rule:
        points closer than LABEL_MERGE_PX on screen merged into one label (largest first); the largest force first; each label right of and above its contact point if that is free, else at the place it
        had last, else the nearest free place on rings around the point (a leader line then joins them); free means
        inside the view, clear of the view's captions and of the labels placed before it by LABEL_GAP_PX. A label
        with no free place is left out (never drawn over another)."""
        shown = sorted((a for a in self._arrows if a["visible"]), key=lambda a: -a["magnitude"])
        if not shown:
            return []
        h = self.render_window.GetSize()[1]
        dpr = self.vtk_widget.devicePixelRatioF() or 1.0
        gap = LABEL_GAP_PX
        out = []
        for v, view, texts in self._captions():
            inner = view.adjusted(1, 1, -1, -1)
            taken = [rect.adjusted(-gap, -gap, gap, gap) for _, rect, _, _ in texts]
            groups: list[list] = []      # [anchor, [arrows]]: points closer than LABEL_MERGE_PX share one label
            for a in shown:
                v.renderer.SetWorldPoint(*a["point"], 1.0)
                v.renderer.WorldToDisplay()
                dx, dy, _ = v.renderer.GetDisplayPoint()
                anchor = QPointF(dx / dpr, (h - dy) / dpr)
                near = next((g for g in groups if abs(g[0].x() - anchor.x()) <= LABEL_MERGE_PX
                             and abs(g[0].y() - anchor.y()) <= LABEL_MERGE_PX), None)
                if near is None:
                    groups.append([anchor, [a]])
                else:
                    near[1].append(a)
            labels = []
            for anchor, arrows in groups:
                values = [a["text"] for a in arrows]
                forms = [", ".join(values[:2]) + (f" +{len(values) - 2}" if len(values) > 2 else "")]
                if len(values) > 1:
                    forms.append(f"{values[0]} +{len(values) - 1}")      # shorter, where the longer has no room
                key = (v.name, arrows[0]["pair"])
                rect = None
                for text in forms:
                    size = self._static_text(text, self._label_font).size()
                    for slot in self._slots(key):
                        r = self._slot_rect(slot, anchor, size.width(), size.height())
                        if inner.contains(r) and not any(r.intersects(t) for t in taken):
                            rect = r
                            self._label_slots[key] = slot
                            break
                    if rect is not None:
                        break
                if rect is None:
                    continue
                taken.append(rect.adjusted(-gap, -gap, gap, gap))
                labels.append((arrows[0]["pair"], text, rect, anchor))
            out.append((v, view, labels))
        return out

    def _slots(self, key):
        """Places tried for a label, in order: the first (right, above), the one it had last, then ring by ring."""
        last = self._label_slots.get(key)
        yield (0, 0)
        if last is not None and last != (0, 0):
            yield last
        for ring in range(len(LABEL_RINGS_PX)):
            for k in range(12):
                yield (ring + 1, k)

    @staticmethod
    def _slot_rect(slot, anchor: QPointF, w: float, h: float) -> QRectF:
        """A label's rect at a place: (0, 0) right of and above the point; (ring, k) centred at angle 30k degrees,
        its edge LABEL_RINGS_PX[ring - 1] from the point."""
        ring, k = slot
        if ring == 0:
            return QRectF(anchor.x() + LABEL_OFFSET_PX, anchor.y() - LABEL_OFFSET_PX - h, w, h)
        r = LABEL_RINGS_PX[ring - 1]
        ang = math.radians(30.0 * k + 45.0)
        c, s_ = math.cos(ang), -math.sin(ang)
        cx = anchor.x() + c * (r + w / 2)
        cy = anchor.y() + s_ * (r + h / 2)
        return QRectF(cx - w / 2, cy - h / 2, w, h)

    def _paint_overlays(self, p: QPainter):
        """Over the rendered image: each view's title, top left, its caption at the foot, and each visible arrow's
        magnitude label in every view, placed clear of the others (`_force_label_places`), all on a translucent box
        (QPainter text: a VTK text actor cost ~0.25 ms a render each). Nothing here is a UI hint: this is what a clip
        frame shows too."""
        p.save()
        try:
            places = {id(v): labels for v, _, labels in self._force_label_places()}
            for v, view, texts in self._captions():
                p.setClipRect(view)
                p.setFont(self._title_font)
                for _, rect, st, pen in texts:      # on the translucent box: legible over the wireframes
                    p.fillRect(rect.adjusted(-1, -1, 1, 1), self._label_box)
                    p.setPen(pen)
                    p.drawStaticText(rect.topLeft(), st)
                labels = places.get(id(v), [])
                if not labels:
                    continue
                p.setFont(self._label_font)
                for _, text, rect, anchor in labels:
                    if not rect.adjusted(-LABEL_OFFSET_PX - 1, -1, 1, LABEL_OFFSET_PX + 1).contains(anchor):
                        p.setPen(self._label_pen)      # a leader line from the point to the label's nearest edge
                        p.drawLine(anchor, QPointF(min(max(anchor.x(), rect.left()), rect.right()),
                                                   min(max(anchor.y(), rect.top()), rect.bottom())))
                for _, text, rect, anchor in labels:
                    p.fillRect(rect.adjusted(-1, -1, 1, 1), self._label_box)
                    p.setPen(self._label_pen)
                    p.drawStaticText(rect.topLeft(), self._static_text(text, self._label_font))
        finally:
            p.restore()

    def time_text(self) -> str:
        return self._time.text()
