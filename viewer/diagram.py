"""The dynamic mnemonic diagram: scene, devices and plots panes stacked in a splitter, plus the transport bar.

One `Playback` owns time; every pane's `show_frame` is connected to its `frameChanged` signal.
"""
from __future__ import annotations

import logging
import threading
import time

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup, QImage, QKeySequence, QPainter
from PySide6.QtWidgets import (QAbstractSlider, QComboBox, QHBoxLayout, QLabel, QSizePolicy, QSlider, QSplitter,
                               QStyle, QStyleOptionSlider, QToolButton, QVBoxLayout, QWidget)

from solver.contact_events import EventTable, table_from_run
from solver.runfile import RunFile, RunFileError
from viewer.capture_verdict import CriteriaError, Verdict, evaluate, load_criteria
from viewer.channel_blocks import ChannelBlocks
from viewer.contact_lanes import ContactLanes
from viewer.devices_pane import DevicesPane
from viewer.playback import SPEEDS, Playback, speed_label
from viewer.plots.pane import PlotsPane
from viewer import style
from viewer.steady_label import SteadyLabel

try:  # the VTK scene pane; a placeholder keeps the diagram usable where it cannot load
    from viewer.scene_pane import ScenePane
except Exception as _exc:  # pragma: no cover - only where VTK is missing
    ScenePane = None
    _SCENE_ERROR = str(_exc)
else:
    _SCENE_ERROR = ""

log = logging.getLogger("dockmnemo")


def describe_failure(path, exc: BaseException, where: str = "") -> str:
    """`file: [where: ]problem` for any exception met reading a run (a RunFileError names file and dataset itself)."""
    if isinstance(exc, RunFileError):
        return str(exc)
    text = str(exc) or "no details"
    return f"{path}: {where + ': ' if where else ''}cannot be read ({type(exc).__name__}: {text})"


def failure_key(exc: BaseException) -> tuple:
    """What makes two read failures the same one (the same dataset and problem; any frame of a bad chunk)."""
    if isinstance(exc, RunFileError):
        return (exc.path, exc.dataset, exc.problem)
    return (type(exc).__name__, str(exc))


def analyse_run(run: RunFile | None, criteria_path, failures: list | None = None
                ) -> tuple[EventTable | None, Verdict | None, str]:
    """(contact-event table, capture verdict, why either is missing) of a run; no Qt, safe in a thread.
    `failures` collects the RunFileErrors met (a corrupt chunk): the window shows them in its read-error dialog."""
    events, verdict, error = None, None, ""
    failures = [] if failures is None else failures
    if run is not None and run.live:
        error = "run still being written: events and verdict when it ends"
    elif run is not None:
        try:
            events = table_from_run(run)
        except RunFileError as exc:
            error = f"contact events unavailable: {exc}"
            failures.append(exc)
        try:
            verdict = evaluate(run, load_criteria(criteria_path) if criteria_path else None)
        except (CriteriaError, RunFileError) as exc:
            error = (error + "; " if error else "") + f"verdict unavailable: {exc}"
            if isinstance(exc, RunFileError):
                failures.append(exc)
    return events, verdict, error


class _AnalysisSignals(QObject):
    done = Signal(object)   # the run analysed


class _AnalysisJob:
    """`analyse_run` in a daemon thread; `signals.done` arrives on the GUI thread (queued)."""

    def __init__(self, run: RunFile, criteria_path):
        self.run, self.criteria_path = run, criteria_path
        self.result: tuple = (None, None, "contact events unavailable: analysis did not finish")
        self.failures: list = []   # RunFileErrors met (shown in the read-error dialog)
        self.signals = _AnalysisSignals()
        self._thread = threading.Thread(target=self._work, name="run-analysis", daemon=True)

    def start(self):
        self._thread.start()

    def join(self, timeout: float | None = None):
        self._thread.join(timeout)

    def _work(self):
        try:
            self.result = analyse_run(self.run, self.criteria_path, self.failures)
        except Exception as exc:  # noqa: BLE001  (e.g. the run was closed meanwhile; shown only if still open)
            self.result = (None, None, f"contact events unavailable: {exc}")
        try:
            self.signals.done.emit(self.run)
        except RuntimeError:    # the window was closed meanwhile and Qt deleted the signal's source
            pass


class _StepJob(QObject):
    """Runs a generator one step per event-loop turn (a zero-interval timer), so no step holds the GUI long."""

    finished = Signal(float, int)   # busy seconds in all steps, number of steps

    def __init__(self, steps, parent=None, step_ms: list | None = None):
        """`step_ms` collects (the step's label, ms of GUI time) of every step."""
        super().__init__(parent)
        self._steps = iter(steps)
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self.step_ms = step_ms if step_ms is not None else []
        self.busy, self.n = 0.0, 0

    @property
    def running(self) -> bool:
        return self._timer.isActive()

    def start(self):
        self._timer.start()

    def cancel(self):
        self._timer.stop()
        self._steps = iter(())

    def _step(self):
        t0 = time.perf_counter()
        try:
            self.last = next(self._steps)
            done = False
        except StopIteration:
            done = True
        except Exception as exc:  # noqa: BLE001  (the run was closed or replaced meanwhile, or cannot be read)
            done = True
            if not isinstance(exc, (RunFileError, OSError, ValueError, IndexError)):
                log.error("live refresh step", exc_info=exc)
        dt = time.perf_counter() - t0
        self.busy += dt
        self.n += 1
        self.step_ms.append((None if done else self.last, dt * 1000))
        if done:
            self._timer.stop()
            self.finished.emit(self.busy, self.n)


class ScenePlaceholder(QLabel):
    """Stand-in for the VTK scene when it cannot be created."""

    def __init__(self, parent=None):
        super().__init__(f"scene pane unavailable: {_SCENE_ERROR or 'not built'}", parent)
        self.setAlignment(Qt.AlignCenter)
        self.setStyleSheet(f"background: {style.BACKGROUND}; color: {style.KEY_TEXT};")
        self.current_frame = -1

    def set_run(self, run):
        self.current_frame = -1

    def show_frame(self, i: int):
        self.current_frame = int(i)


PANES = ("scene", "devices", "plots")
ANALYSE_AFTER_MS = 30   # contact events and verdict start once the first frame has been painted
ANALYSE_UNPAINTED_MS = 1000   # ... or after this long if no pane paints (window hidden or minimised)


def compose_grab(top: QWidget, diagram: "MnemonicDiagram") -> QImage:
    """Grab `top` (the diagram or a window holding it) and paint the scene pane's own image over it."""
    img = top.grab().toImage()
    scene = diagram.scene
    if scene.isVisible() and hasattr(scene, "grab_image"):
        shot = scene.grab_image()
        ratio = img.width() / max(top.width(), 1)
        pos = scene.mapTo(top, QPoint(0, 0))
        p = QPainter(img)
        p.drawImage(QRect(int(pos.x() * ratio), int(pos.y() * ratio), int(scene.width() * ratio),
                          int(scene.height() * ratio)), shot)
        p.end()
    return img


class TimelineSlider(QSlider):
    """The transport's frame slider: a new value repaints only when the handle moves (a pixel spans hundreds
    of frames of a long run, and playing sets a new value every tick)."""

    def __init__(self, *args):
        super().__init__(*args)
        self._geometry = None   # (minimum, maximum, handle span in px, upside down), see _handle_pos
        self._asked = None      # handle position of the last repaint asked for

    def _handle_pos(self) -> int:
        if self._geometry is None:     # measured again after a resize, range, style or direction change
            opt = QStyleOptionSlider()
            self.initStyleOption(opt)
            st = self.style()
            groove = st.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderGroove, self)
            handle = st.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderHandle, self)
            span = (groove.width() - handle.width() if self.orientation() == Qt.Horizontal
                    else groove.height() - handle.height())
            self._geometry = (self.minimum(), self.maximum(), span, opt.upsideDown)
        lo, hi, span, upside_down = self._geometry
        return QStyle.sliderPositionFromValue(lo, hi, self.sliderPosition(), span, upside_down)

    def sliderChange(self, change):
        if change == QAbstractSlider.SliderValueChange and not self.isSliderDown():
            pos = self._handle_pos()
            if pos == self._asked:
                return
            self._asked = pos
        else:
            self._asked = self._geometry = None
        super().sliderChange(change)

    def resizeEvent(self, ev):
        self._asked = self._geometry = None
        super().resizeEvent(ev)

    def changeEvent(self, ev):
        self._asked = self._geometry = None
        super().changeEvent(ev)


class _ShowWatcher(QObject):
    """Calls `on_show(widget)` once a watched widget has been shown (after its own showEvent has run)."""

    def __init__(self, on_show, parent=None):
        super().__init__(parent)
        self._on_show = on_show

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Show:
            QTimer.singleShot(0, self, lambda w=obj: self._on_show(w))
        return False


class MnemonicDiagram(QWidget):
    """Three synchronized panes and a transport bar over one Playback model."""

    paneVisibilityChanged = Signal(str, bool)
    eventsChanged = Signal(object)      # the run's EventTable (None without a run)
    readError = Signal(str)             # a frame could not be read while showing it (playback pauses)
    liveRefreshed = Signal(int, float)  # a live refresh ended: frames added, seconds of GUI time it took

    def __init__(self, parent=None, with_scene: bool = True):
        super().__init__(parent)
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.playback = Playback(self)
        self.scene = ScenePane() if (with_scene and ScenePane is not None) else ScenePlaceholder()
        self.devices = DevicesPane()
        self.plots = PlotsPane(self.playback)
        self.events: EventTable | None = None
        self.verdict: Verdict | None = None
        self._analysed_run: RunFile | None = None
        self._pending_analysis: RunFile | None = None   # analysed once a pane has painted its first frame
        self._analysis_jobs: dict[RunFile, _AnalysisJob] = {}
        self.criteria_path = None   # None: the run's mechanism type's criteria (set_criteria chooses a file)
        self.compare_run: RunFile | None = None
        self.compare_align, self.compare_diff, self.compare_offset, self.compare_note = "t0", None, 0.0, ""
        self._live_job: _StepJob | None = None
        self.live_step_ms: list[tuple] = []   # (label, GUI ms) of each live-refresh step (bench and tests)
        self.lanes = ContactLanes()
        self.plots.set_footer(self.lanes)
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(4)
        for w in (self.scene, self.devices, self.plots):
            self.splitter.addWidget(w)
        self.scene.raise_()   # painted after the other panes: the GL driver rasterizes the scene meanwhile
        self.splitter.setStretchFactor(0, 4)     # the plots get the room for 5 plots (MIN_PLOT_H each) and the lanes
        self.splitter.setStretchFactor(1, 2)     # at 1600x1000; where they do not fit, they scroll
        self.splitter.setStretchFactor(2, 5)
        self.splitter.setSizes([380, 190, 430])

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.splitter, 1)
        lay.addWidget(self._build_transport())
        self._build_actions()
        self.apply_theme()
        style.observe(self.apply_theme)

        pb = self.playback
        if hasattr(self.scene, "readError"):
            self.scene.readError.connect(self._read_error)
        self._read_errors_shown: set = set()   # failures of the shown run already reported (once each)
        self._stale: set[QWidget] = set()       # hidden panes that skipped frames (caught up when shown)
        self._show_watcher = _ShowWatcher(self._catch_up, self)
        for w in (self.scene, self.plots):
            w.installEventFilter(self._show_watcher)
        pb.frameChanged.connect(self._show_frame_panes)
        pb.frameChanged.connect(self._show_frame_transport)
        pb.playingChanged.connect(self._show_playing)
        pb.playingChanged.connect(self.plots.set_playing)
        pb.speedChanged.connect(self._show_speed)
        pb.loopChanged.connect(self._show_loop)
        pb.loopRangeChanged.connect(self._show_loop_range)
        pb.graphStepChanged.connect(self.plots.set_graph_step)
        self.plots.seekRequested.connect(pb.seek_time)
        self.plots.graphStepEdited.connect(pb.set_graph_step)
        self._show_playing(False)
        self._show_speed(pb.speed)

    def _show_frame_panes(self, frame: int):
        """Every pane's show_frame; a hidden scene or plots pane (and its lanes) skips it until shown again."""
        scene, plots = self.scene, self.plots
        if scene.isHidden():
            self._stale.add(scene)
        else:
            self._show_in(scene, frame)
        self._show_in(self.devices, frame)    # cheap: its values stay current for readers while hidden
        if plots.isHidden():
            self._stale.add(plots)
        elif self._show_in(plots, frame):
            self._show_in(self.lanes, frame)

    def _show_in(self, pane: QWidget, frame: int) -> bool:
        """One pane's show_frame. Any failure (an unreadable chunk, ...) pauses playback and is reported once;
        the pane keeps its last picture. False if it failed."""
        try:
            pane.show_frame(frame)
            return True
        except Exception as exc:  # noqa: BLE001  (any exception on the user's path becomes a message)
            key = failure_key(exc)
            if not isinstance(exc, RunFileError) and key not in self._read_errors_shown:
                log.error("showing frame %d in the %s", frame, type(pane).__name__, exc_info=exc)
            path = self.run.path if self.run is not None else "(no run)"
            self._read_error(describe_failure(path, exc, f"frame {frame}"), key)
            return False

    def _catch_up(self, w: QWidget):
        """A pane shown again: bring it to the playback's frame if it skipped frames while hidden."""
        if w in self._stale and not w.isHidden():
            self._stale.discard(w)
            frame = self.playback.frame
            if self._show_in(w, frame) and w is self.plots:
                self._show_in(self.lanes, frame)

    def _read_error(self, message: str, key=None):
        """A pane met unreadable data (a NaN pose, a corrupt chunk): pause, and say so once per failure and run."""
        self.playback.pause()
        key = message if key is None else key
        if key not in self._read_errors_shown:
            self._read_errors_shown.add(key)
            self.readError.emit(message)

    # ---- transport bar --------------------------------------------------------------------
    def _build_transport(self) -> QWidget:
        bar = QWidget(objectName="transport")
        bar.setAttribute(Qt.WA_StyledBackground)
        h = QHBoxLayout(bar)
        h.setContentsMargins(6, 3, 6, 3)
        st = self.style()

        def button(icon, tip, slot, checkable=False):
            b = QToolButton()
            b.setIcon(st.standardIcon(icon))
            b.setToolTip(tip)
            b.setCheckable(checkable)
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(slot)
            h.addWidget(b)
            return b

        button(QStyle.SP_MediaSkipBackward, "Start (Home)", lambda: self.playback.home())
        button(QStyle.SP_MediaSeekBackward, "Step back one frame (Left)", lambda: self.playback.step(-1))
        self.play_button = button(QStyle.SP_MediaPlay, "Play / pause (Space)", lambda: self.playback.toggle())
        button(QStyle.SP_MediaSeekForward, "Step one frame (Right)", lambda: self.playback.step(1))
        button(QStyle.SP_MediaSkipForward, "End (End)", lambda: self.playback.end())
        self.slider = TimelineSlider(Qt.Horizontal)
        self.slider.setFocusPolicy(Qt.NoFocus)
        self.slider.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.sliderPressed.connect(self._scrub_start)
        self.slider.sliderReleased.connect(self._scrub_end)
        self._resume_after_scrub = False
        h.addWidget(self.slider, 1)
        self.speed_combo = QComboBox()
        self.speed_combo.setFocusPolicy(Qt.NoFocus)
        for s in SPEEDS:
            self.speed_combo.addItem(speed_label(s), s)
        self.speed_combo.setToolTip("Playback speed, relative to real time (- / = keys)")
        self.speed_combo.activated.connect(lambda i: self.playback.set_speed(self.speed_combo.itemData(i)))
        h.addWidget(self.speed_combo)
        self.loop_button = QToolButton()
        self.loop_button.setText("Loop")
        self.loop_button.setCheckable(True)
        self.loop_button.setFocusPolicy(Qt.NoFocus)
        self.loop_button.setToolTip("Loop the run or the marked range (L; mark with I / O)")
        self.loop_button.toggled.connect(lambda on: self.playback.set_loop(on))
        h.addWidget(self.loop_button)
        self.time_label = QLabel()
        self.time_label.setMinimumWidth(330)
        self.time_label = SteadyLabel(self.time_label)   # new text each frame
        h.addWidget(self.time_label)
        self._show_frame_transport(0)
        self.transport = bar
        return bar

    def apply_theme(self):
        """The splitter and transport bar in the theme's colours (at build and on View → Theme: style.observe)."""
        self.splitter.setStyleSheet(f"QSplitter::handle {{ background: {style.SPLITTER}; }}")
        self.transport.setStyleSheet(f"QWidget#transport {{ background: {style.TRANSPORT_BACKGROUND}; }} "
                                     f"QLabel {{ color: {style.TEXT}; }}")
        self.time_label.label.setStyleSheet(f"font-family: {style.MONO}; color: {style.CURSOR};")
        if isinstance(self.scene, ScenePlaceholder):
            self.scene.setStyleSheet(f"background: {style.BACKGROUND}; color: {style.KEY_TEXT};")

    def _slider_moved(self, v: int):
        if v != self.playback.frame:
            self.playback.seek_frame(v)

    def _scrub_start(self):
        self._resume_after_scrub = self.playback.playing
        self.playback.pause()

    def _scrub_end(self):
        if self._resume_after_scrub:
            self.playback.play()

    def time_text(self) -> str:
        return self.time_label.text()

    def _show_frame_transport(self, frame: int):
        pb = self.playback
        if self.slider.value() != frame:
            self.slider.blockSignals(True)
            self.slider.setValue(frame)
            self.slider.blockSignals(False)
        self.time_label.setText(f"T Current {pb.t_current:9.4f} s   {pb.frame_text()}")

    def _show_playing(self, on: bool):
        self.play_button.setIcon(self.style().standardIcon(QStyle.SP_MediaPause if on else QStyle.SP_MediaPlay))
        if hasattr(self, "act_play"):
            self.act_play.setChecked(on)

    def _show_speed(self, speed: float):
        i = self.speed_combo.findData(speed)
        if i >= 0:
            self.speed_combo.setCurrentIndex(i)
        for a in getattr(self, "speed_actions", []):
            a.setChecked(a.data() == speed)

    def _show_loop(self, on: bool):
        self.loop_button.blockSignals(True)
        self.loop_button.setChecked(on)
        self.loop_button.blockSignals(False)
        if hasattr(self, "act_loop"):
            self.act_loop.setChecked(on)

    def _show_loop_range(self, rng):
        if rng is None or self.run is None:
            self.plots.set_loop_range_time(None)
            self.loop_button.setText("Loop")
        else:
            t = self.run.time
            self.plots.set_loop_range_time((float(t[rng[0]]), float(t[rng[1]])))
            self.loop_button.setText(f"Loop {t[rng[0]]:.2f}–{t[rng[1]]:.2f} s")

    # ---- actions (keys) -------------------------------------------------------------------
    def _build_actions(self):
        pb = self.playback

        def act(text, keys, slot, checkable=False):
            a = QAction(text, self)
            a.setShortcuts([QKeySequence(k) for k in keys])
            a.setShortcutContext(Qt.WindowShortcut)
            a.setCheckable(checkable)
            a.triggered.connect(slot)
            self.addAction(a)
            return a

        self.act_play = act("&Play / pause", ["Space"], lambda: pb.toggle(), checkable=True)
        self.act_step_fwd = act("Step &forward one frame", ["Right", "."], lambda: pb.step(1))
        self.act_step_back = act("Step &back one frame", ["Left", ","], lambda: pb.step(-1))
        self.act_graph_fwd = act("Step forward one &GraphStep", ["Shift+Right"], lambda: pb.step_graph(1))
        self.act_graph_back = act("Step back one G&raphStep", ["Shift+Left"], lambda: pb.step_graph(-1))
        self.act_home = act("Go to &start", ["Home"], lambda: pb.home())
        self.act_end = act("Go to &end", ["End"], lambda: pb.end())
        self.act_faster = act("F&aster", ["=", "+", "]"], lambda: pb.faster())
        self.act_slower = act("S&lower", ["-", "["], lambda: pb.slower())
        self.act_loop = act("&Loop", ["L"], lambda on: pb.set_loop(on), checkable=True)
        self.act_mark_in = act("Loop range starts &here", ["I"], lambda: pb.mark_in())
        self.act_mark_out = act("Loop range ends here", ["O"], lambda: pb.mark_out())
        self.act_clear_range = act("&Clear loop range", ["Shift+L"], lambda: pb.set_loop_range(None, None))
        self.speed_group = QActionGroup(self)
        self.speed_actions = []
        for s in SPEEDS:
            a = QAction(speed_label(s), self, checkable=True)
            a.setData(s)
            a.setChecked(s == pb.speed)
            a.triggered.connect(lambda _=False, s=s: pb.set_speed(s))
            self.speed_group.addAction(a)
            self.speed_actions.append(a)
        self.act_scrolling = QAction("&Scrolling plots (off: whole run)", self, checkable=True, checked=True)
        self.act_scrolling.setShortcut(QKeySequence("W"))
        self.act_scrolling.setShortcutContext(Qt.WindowShortcut)
        self.act_scrolling.toggled.connect(self.plots.set_scrolling)
        self.addAction(self.act_scrolling)
        self._build_event_actions(act)
        self.pane_actions = {}
        for key, w in zip(PANES, (self.scene, self.devices, self.plots)):
            a = QAction(f"Show {key} pane", self, checkable=True, checked=True)
            a.toggled.connect(lambda on, key=key: self.set_pane_visible(key, on))
            self.pane_actions[key] = a

    def _build_event_actions(self, act):
        """Contact-event keys: N / P jump between event starts; F shows force vectors; lanes on/off."""
        pb = self.playback
        self.act_next_event = act("&Next contact event", ["N"], lambda: pb.next_event())
        self.act_prev_event = act("Pre&vious contact event", ["P"], lambda: pb.prev_event())
        self.act_show_forces = act("Contact points and &force vectors", ["F"],
                                   lambda on: self.set_show_forces(on), checkable=True)
        self.act_show_forces.setChecked(True)
        self.act_show_lanes = QAction("Contact &lanes under the plots", self, checkable=True, checked=True)
        self.act_show_lanes.toggled.connect(self.plots.set_footer_visible)

    def set_show_forces(self, on: bool):
        """Show or hide contact points, force vectors and their magnitudes in the scene views."""
        if hasattr(self.scene, "set_show_forces"):
            self.scene.set_show_forces(on)
        if self.act_show_forces.isChecked() != bool(on):
            self.act_show_forces.setChecked(bool(on))

    def playback_actions(self) -> list[QAction | None]:
        """The transport actions in menu order (None = separator)."""
        return [self.act_play, None, self.act_step_fwd, self.act_step_back, self.act_graph_fwd,
                self.act_graph_back, self.act_home, self.act_end, None, self.act_next_event,
                self.act_prev_event, None, self.act_faster, self.act_slower,
                None, self.act_loop, self.act_mark_in, self.act_mark_out, self.act_clear_range]

    # ---- panes ----------------------------------------------------------------------------
    def pane(self, key: str) -> QWidget:
        return {"scene": self.scene, "devices": self.devices, "plots": self.plots}[key]

    def set_pane_visible(self, key: str, on: bool):
        """Show or hide one pane (the scene, devices or plots)."""
        w = self.pane(key)
        w.setVisible(on)
        if on:
            self._catch_up(w)
        a = self.pane_actions[key]
        if a.isChecked() != on:
            a.setChecked(on)
        self.paneVisibilityChanged.emit(key, on)

    def grab_image(self) -> QImage:
        """The whole diagram as shown, with the VTK scene pasted in (QWidget.grab leaves it black)."""
        return compose_grab(self, self)

    # ---- run ------------------------------------------------------------------------------
    def set_run(self, run: RunFile | None, plotted: list[str] | None = None):
        """Show a run in all panes (plotted: channels for the bottom pane, default if None). If a pane cannot
        show it, the run shown before comes back (same frame, plots and loop range) and the exception is raised."""
        old, names, frame, loop = self.run, list(self.plots.names), self.playback.frame, self.playback.loop_range
        try:
            self._set_run(run, plotted)
        except Exception:
            if old is run:
                self._set_run(None)
                raise
            try:
                self._set_run(old, names)
                self.playback.seek_frame(frame)
                if loop is not None:
                    self.playback.set_loop_range(*loop)
            except Exception:  # noqa: BLE001  (the old run cannot be shown again either: show none)
                self._set_run(None)
            raise

    def _set_run(self, run: RunFile | None, plotted: list[str] | None = None):
        self.cancel_live_refresh()
        self._read_errors_shown.clear()
        self.run = run
        self.blocks = ChannelBlocks(run) if run is not None else None
        self._analyse(None)
        self.scene.set_run(run)
        self.devices.set_run(run, self.blocks)
        self.plots.set_run(run, self.blocks, plotted)
        n = run.n_frames if run is not None else 1
        self.slider.blockSignals(True)
        self.slider.setRange(0, n - 1)
        self.slider.setPageStep(max(1, n // 50))
        self.slider.blockSignals(False)
        self.playback.set_run(run)
        if getattr(self, "compare_run", None) is not None:  # keep comparing with B against the new run A
            self.set_compare(self.compare_run, self.compare_align, self.compare_diff)
        self._analysed_run = None
        self.playback.set_event_frames([])
        self._show_verdict()
        self.eventsChanged.emit(None)
        if run is not None:   # the first frame shows first; events and verdict follow once a pane has painted
            self.plots.set_verdict("analysing contact events…", None)
            self._analyse_when_painted(run)

    def _analyse_when_painted(self, run: RunFile):
        """Start the contact-event analysis once a pane has painted `run`'s first frame (or after
        ANALYSE_UNPAINTED_MS if none paints); it reads and computes in a worker thread."""
        if self._pending_analysis is None:
            for w in (self.scene, self.devices, self.plots):
                w.installEventFilter(self)
        self._pending_analysis = run
        QTimer.singleShot(ANALYSE_UNPAINTED_MS, self, lambda r=run: self._painted(r))

    def _painted(self, run: RunFile):
        if self._pending_analysis is not run:
            return
        self._pending_analysis = None
        for w in (self.scene, self.devices, self.plots):
            w.removeEventFilter(self)
        QTimer.singleShot(ANALYSE_AFTER_MS, self, lambda r=run: self._analyse_in_thread(r))

    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and self._pending_analysis is not None:
            self._painted(self._pending_analysis)   # the timer fires after this paint has finished
        return False

    def _analyse_in_thread(self, run: RunFile):
        """Events and verdict computed off the GUI thread; shown when done (if `run` is still shown)."""
        if run is not self.run or self._analysed_run is run or run in self._analysis_jobs:
            return
        job = self._analysis_jobs[run] = _AnalysisJob(run, self.criteria_path)
        job.signals.done.connect(self._analysis_done, Qt.QueuedConnection)
        job.start()

    def wait_for_analysis(self, timeout: float = 5.0):
        """Let analysis threads under way finish (before the run files they read are closed)."""
        for job in list(self._analysis_jobs.values()):
            job.join(timeout)

    @Slot(object)
    def _analysis_done(self, run: RunFile):
        job = self._analysis_jobs.pop(run, None)
        if job is not None and run is self.run and self._analysed_run is not run:
            self._apply_analysis(run, job.result, job.failures)

    @property
    def analysed(self) -> bool:
        """The shown run's contact events and verdict are computed and shown."""
        return self.run is not None and self._analysed_run is self.run

    def ensure_analysed(self, run: RunFile | None = None):
        """Compute the run's contact events and verdict now if not done yet (idempotent)."""
        run = run if run is not None else self.run
        if run is None or run is not self.run or self._analysed_run is run:
            return
        job = self._analysis_jobs.pop(run, None)
        failures: list = []
        if job is not None:
            job.join()          # under way in a thread: wait for it rather than compute twice
            result, failures = job.result, job.failures
        else:
            result = analyse_run(run, self.criteria_path, failures)
        self._apply_analysis(run, result, failures)

    def _apply_analysis(self, run: RunFile, result, failures=()):
        """Show the events and verdict; data found corrupt on the way (RunFileError) gets the read-error dialog."""
        self._analysed_run = run
        self.events, self.verdict, self.analysis_error = result
        for exc in failures:
            self._read_error(str(exc), failure_key(exc))
        self._show_events(run)
        self.playback.set_event_frames(self.events.start_frame if self.events is not None else [])
        self._show_verdict()
        self.eventsChanged.emit(self.events)

    # ---- a run still being written (live view) ------------------------------------------
    def refresh_live(self, follow: bool = True) -> bool:
        """Take in the frames the solver flushed since, all at once; panes keep their layout. True if the run grew."""
        self.cancel_live_refresh()
        last = None
        for last in self._live_steps(follow):
            pass
        return last == "rendered"   # the last step of a refresh that took in new frames

    def start_live_refresh(self, follow: bool = True) -> bool:
        """`refresh_live` in steps, one per event-loop turn (each a few ms); False if one is still under way.
        `liveRefreshed(frames, busy seconds)` follows when the panes show the new frames."""
        if self._live_job is not None and self._live_job.running:
            return False
        job = self._live_job = _StepJob(self._live_steps(follow), self, self.live_step_ms)
        n0 = self.run.n_frames if self.run is not None else 0
        job.finished.connect(lambda busy, n: self.liveRefreshed.emit(
            self.run.n_frames - n0 if self.run is not None else 0, busy))
        job.start()
        return True

    def cancel_live_refresh(self):
        if self._live_job is not None:
            self._live_job.cancel()
            self._live_job = None

    @property
    def live_refreshing(self) -> bool:
        return self._live_job is not None and self._live_job.running

    def _live_steps(self, follow: bool):
        """The steps of a live refresh: the run's dataset shapes and new frames, then each pane's data around
        the frame to show, then the playback model's new end (the panes show the frame; the scene renders)."""
        run = self.run
        if run is None:
            return
        n_old = run.n_frames
        grew = False
        for r in run.refresh_steps():
            if r is None:
                yield "run file"
            grew = bool(r)
        if not grew or run is not self.run:
            return
        self.blocks.extend(n_old)              # bar ranges stay those of the first frames
        self.lanes.time = run.time             # (the lanes' cursor stayed at the end of the first frames)
        frame = run.n_frames - 1 if follow else self.playback.frame
        yield "caches"
        for _ in self.plots.refresh_live_steps(self.blocks, frame):
            yield "plots"
        if hasattr(self.scene, "refresh_live"):
            self.scene.refresh_live(n_old)
            for _ in self.scene.prefetch_steps(frame):
                yield "scene"
        names = list(dict.fromkeys(self.devices.shown_channels() + self.plots.names))   # values read ahead
        for i in range(0, len(names), 8):
            self.blocks.values(names[i:i + 8], frame)
            yield "values"
        if run is not self.run:
            return
        n = run.n_frames
        self.slider.blockSignals(True)
        self.slider.setRange(0, n - 1)
        self.slider.setPageStep(max(1, n // 50))
        self.slider.blockSignals(False)
        hold = hasattr(self.scene, "hold_render")
        if hold:
            self.scene.hold_render()
        try:
            self.playback.extend_run(follow)   # every pane shows the new frame (the scene's render waits)
        finally:
            if hold and run is not self.run:
                self.scene.release_render()
        if hold and run is self.run:
            yield "shown"
            self.scene.release_render()
        yield "rendered"

    # ---- comparison with a second run ---------------------------------------------------------
    def set_compare(self, run_b: RunFile | None, align: str = "t0", diff_name: str | None = None) -> str:
        """Show run B as a ghost in the scene and dashed in the plots, aligned on t = 0 or first contact;
        `diff_name` adds an A − B plot. Returns the alignment note."""
        from viewer.compare import alignment_offset
        self.compare_run, self.compare_align, self.compare_diff = run_b, align, diff_name
        if run_b is None or self.run is None:
            self.compare_offset, self.compare_note = 0.0, ""
            self.plots.set_compare(None)
            if hasattr(self.scene, "set_ghost"):
                self.scene.set_ghost(None)
            return ""
        self.compare_offset, self.compare_note = alignment_offset(self.run, run_b, align)
        self.plots.set_compare(run_b, self.compare_offset, diff_name)
        if hasattr(self.scene, "set_ghost"):
            self.scene.set_ghost(run_b, self.compare_offset, f"{run_b.path.name}, {self.compare_note}")
        return self.compare_note

    # ---- contact events and capture verdict -----------------------------------------------
    def _analyse(self, run: RunFile | None):
        """Contact-event table and capture verdict of `run`, computed now (the lanes get the events)."""
        self.events, self.verdict, self.analysis_error = analyse_run(run, self.criteria_path)
        self._show_events(run)

    def _show_events(self, run: RunFile | None):
        """The lanes show the run's contact events; their height follows their number."""
        self.lanes.set_events(self.events, run)
        self.plots.footer_changed()

    def _show_verdict(self):
        v = self.verdict
        if v is not None:
            self.plots.set_verdict(v.line(), v.passed, v.report())
        else:
            self.plots.set_verdict(self.analysis_error, None)

    def set_criteria(self, path):
        """Use another capture-criteria TOML and re-evaluate the open run."""
        self.criteria_path = path
        if self.run is not None:
            try:
                self.verdict, self.analysis_error = evaluate(self.run, load_criteria(path) if path else None), ""
            except (CriteriaError, RunFileError) as exc:
                self.verdict, self.analysis_error = None, f"verdict unavailable: {exc}"
            self._show_verdict()
