"""Main window: the mnemonic diagram, menus, opening runs (with error dialogs), recent runs, drag and drop.

Window layout, pane visibility, plotted variables, scrolling mode, speed and theme are kept per user in QSettings;
named layouts (View → Layouts) too. The window fits the screen it opens on; a pane's title maximises it (double-click).
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QApplication, QDialog, QFileDialog, QInputDialog, QLabel, QMainWindow, QMenu,
                               QMessageBox, QVBoxLayout, QWidget)

from solver.runfile import RunFile, RunFileError, seal_if_orphaned
from viewer.diagram import PANES, MnemonicDiagram, compose_grab, describe_failure
from viewer.events_dock import EventsDock
from viewer.playback import SPEEDS
from viewer.run_facts import RunFactsPanel
from viewer.variable_chooser import VariableChooser
from viewer import style

APP_NAME = "dockmnemo"
MAX_RECENT = 10
DEFAULT_SIZE = (1600, 1000)   # px, where the screen has the room
EVENTS_DOCK_W = 480           # px of the events dock where the window is wide ...
EVENTS_DOCK_SHARE = 0.30      # ... and at most this share of the window's width
PANE_TITLES = {"scene": "Scene", "devices": "Devices", "plots": "Plots"}
KEYS_HELP = """<table>
<tr><td><b>Space</b></td><td>play / pause</td></tr>
<tr><td><b>Left / Right</b></td><td>step one frame back / forward</td></tr>
<tr><td><b>Shift+Left / Shift+Right</b></td><td>step one GraphStep</td></tr>
<tr><td><b>Home / End</b></td><td>start / end of the run</td></tr>
<tr><td><b>- / =</b></td><td>slower / faster (1/16x .. 16x of real time; "every frame" in the speed box)</td></tr>
<tr><td><b>L</b></td><td>loop on / off</td></tr>
<tr><td><b>I / O</b></td><td>loop range starts / ends at T Current; <b>Shift+L</b> clears it</td></tr>
<tr><td><b>W</b></td><td>scrolling plots / whole run</td></tr>
<tr><td><b>N / P</b></td><td>next / previous contact event start</td></tr>
<tr><td><b>F</b></td><td>contact points and force vectors on / off</td></tr>
<tr><td><b>click in a plot</b></td><td>go to that time</td></tr>
<tr><td><b>mouse wheel in a plot</b></td><td>zoom the time axis; <b>double-click</b> or <b>Ctrl+0</b>: back</td></tr>
<tr><td><b>right click in a plot</b></td><td>export the figure (PDF, SVG, PNG), the shown data (CSV)</td></tr>
<tr><td><b>double-click a pane's title</b></td><td>maximise the pane / restore the layout</td></tr>
</table>"""


class PaneTitle(QLabel):
    """A pane's slim title bar: double-click maximises the pane (the others hidden) and restores the layout."""

    def __init__(self, key: str, on_double_click, parent=None):
        super().__init__(parent)
        self.key, self._on_double_click = key, on_double_click
        self.setObjectName("paneTitle")
        self.apply_theme()
        self.set_maximised(False)

    def apply_theme(self):
        self.setStyleSheet(f"QLabel#paneTitle {{ background: {style.TRANSPORT_BACKGROUND}; color: {style.KEY_TEXT}; "
                           f"padding: 0px 6px; font-size: {style.SMALL_PT}pt; }}")

    def set_maximised(self, on: bool):
        name = PANE_TITLES[self.key]
        self.setText(f"{name}  (maximised: double-click to restore)" if on else name)
        self.setToolTip("Double-click: restore the layout" if on else f"Double-click: maximise the {self.key} pane")

    def mouseDoubleClickEvent(self, e):
        self._on_double_click(self.key)
        e.accept()


class MainWindow(QMainWindow):
    """The dockmnemo window; holds at most one open run and never closes on a bad file."""

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings(APP_NAME, APP_NAME)
        self.run: RunFile | None = None
        self.last_error: str = ""
        self.error_box: QMessageBox | None = None
        self.campaign = None          # app.campaign_actions.CampaignView once a campaign is opened
        self.setWindowTitle(APP_NAME)
        self.setAcceptDrops(True)
        self.diagram = MnemonicDiagram(self)
        self.setCentralWidget(self.diagram)
        self.playback = self.diagram.playback
        self.maximised: str | None = None       # the pane maximised by a double-click on its title
        self._shown_before_max: dict[str, bool] = {}
        self._build_pane_titles()
        self.apply_theme()
        style.observe(self.apply_theme)
        self._build_menus()
        self._build_events_ui()
        self._build_run_ui()
        from app.measured_actions import MeasuredView   # measured data, its metrics dock; plot exports and zoom
        self.measured = MeasuredView(self)
        from app.export_actions import add_figure_action   # File → Export figure… (matplotlib, the plots shown)
        add_figure_action(self, self._file_menu(), before=self.measured.act_csv)
        state = self.settings.value("window/state")   # after every dock exists: a dock tabified with the events
        if state is not None:                         # dock, restored before it was made, left its tab bars
            self.restoreState(state)                  # over the menu and the diagram
        self.resize(self.fitted_size(QSize(*DEFAULT_SIZE)))
        self._restore_settings()
        self._build_layout_menus()
        self.playback.speedChanged.connect(lambda s: self.settings.setValue("speed", float(s)))
        self.diagram.plots.plotsChanged.connect(self._plots_changed)
        self.diagram.act_scrolling.toggled.connect(lambda on: self.settings.setValue("scrolling", bool(on)))
        self.diagram.paneVisibilityChanged.connect(lambda k, on: self.settings.setValue(f"panes/{k}", bool(on)))
        self.diagram.readError.connect(lambda msg: self.show_error(msg, "Cannot read run file"))

    # ---- menus ----------------------------------------------------------------------------
    def _build_menus(self):
        mb = self.menuBar()
        d = self.diagram
        m = mb.addMenu("&File")
        m.addAction(QAction("&Open run…", self, shortcut=QKeySequence.Open, triggered=self.open_dialog))
        self.recent_menu = m.addMenu("Open &recent")
        self._refresh_recent()
        m.addAction(QAction("Open &campaign…", self, shortcut=QKeySequence("Ctrl+Shift+O"),
                            triggered=self.open_campaign_dialog))
        m.addSeparator()
        from app.export_actions import add_clip_actions  # report clips: clip list and video export
        add_clip_actions(self, m)
        m.addSeparator()
        m.addAction(QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close))

        v = mb.addMenu("&View")
        for key in PANES:
            v.addAction(d.pane_actions[key])
        v.addSeparator()
        v.addAction(d.act_scrolling)
        self.act_choose = QAction("&Plotted variables…", self, shortcut=QKeySequence("Ctrl+P"),
                                  triggered=self.choose_variables)
        v.addAction(self.act_choose)
        self.plot_menu = v.addMenu("Plot &variable")
        self.plot_menu.aboutToShow.connect(self._fill_plot_menu)
        v.addAction(QAction("&XY plot…", self, triggered=self.xy_dialog))
        v.addAction(d.plots.act_measure)
        d.plots.refused.connect(lambda msg: self.statusBar().showMessage(msg, 10000))
        v.addSeparator()
        v.addAction(QAction("Run &summary…", self, triggered=self.show_summary))

        p = mb.addMenu("&Playback")
        for a in d.playback_actions():
            if a is None:
                p.addSeparator()
            else:
                p.addAction(a)
        sp = p.addMenu("&Speed")
        for a in d.speed_actions:
            sp.addAction(a)

        h = mb.addMenu("&Help")
        h.addAction(QAction("&Keys", self, shortcut=QKeySequence("F1"), triggered=self._keys))
        h.addAction(QAction("&About dockmnemo", self, triggered=self._about))

    # ---- contact events (dock, CSV export, scene and lane toggles) ------------------------------
    def _build_events_ui(self):
        """The contact-events dock and its menu entries (File: CSV export; View: dock, lanes, forces)."""
        d = self.diagram
        self.events_dock = EventsDock(d, self)
        self.addDockWidget(Qt.RightDockWidgetArea, self.events_dock)
        self.resizeDocks([self.events_dock], [EVENTS_DOCK_W], Qt.Horizontal)
        self.act_export_events = QAction("Export contact &events as CSV…", self, triggered=self.export_events_dialog)
        menus = {a.text(): a.menu() for a in self.menuBar().actions() if a.menu() is not None}
        file_menu, view_menu = menus["&File"], menus["&View"]
        seps = [a for a in file_menu.actions() if a.isSeparator()]
        file_menu.insertAction(seps[-1] if seps else None, self.act_export_events)
        view_menu.addSeparator()
        self.events_dock.toggleViewAction().setText("Contact &events dock")
        for a in (self.events_dock.toggleViewAction(), d.act_show_lanes, d.act_show_forces):
            view_menu.addAction(a)

    # ---- running the solver: scenario dialog, worker, live view, re-run, compare ---------------
    def _build_run_ui(self):
        """Run menu, the status-bar progress (bar, ETA, Cancel) and the worker controller."""
        from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton
        from app.run_controller import RunController
        self.runner = RunController(self)
        self.runner.started.connect(self._run_started)
        self.runner.progress.connect(self._run_progress)
        self.runner.compiling.connect(self._run_compiling)
        self.runner.finished.connect(self._run_finished)
        self.live_path: Path | None = None
        self.live_timings: list[tuple[str, int, float]] = []   # (open | refresh, frames, s) of the live view
        self.diagram.liveRefreshed.connect(
            lambda n, busy: self.live_timings.append(("refresh", self.run.n_frames if self.run else n, busy)))
        self.last_run_message = ""
        self.scenario_dialog = None
        self.compare_path: Path | None = None
        m = self.menuBar().addMenu("&Run")
        self.act_new_run = QAction("&New run…", self, shortcut=QKeySequence("Ctrl+R"), triggered=self.new_run_dialog)
        self.act_rerun = QAction("Re-run from &T Current…", self, shortcut=QKeySequence("Ctrl+Shift+R"),
                                 triggered=self.rerun_dialog)
        self.act_cancel_run = QAction("&Cancel run", self, triggered=self.cancel_run, enabled=False)
        self.act_operator = QAction("&Berthing (operator…)", self, triggered=self.operator_dialog)
        self.act_compare = QAction("C&ompare with run…", self, triggered=self.compare_dialog)
        self.act_align_contact = QAction("Align comparison on &first contact", self, checkable=True,
                                         toggled=lambda on: self.set_compare_alignment("first_contact" if on else "t0"))
        self.act_difference = QAction("&Difference plot of…", self, triggered=self.difference_dialog)
        self.act_clear_compare = QAction("C&lear comparison", self, triggered=lambda: self.compare_with(None))
        for a in (self.act_new_run, self.act_rerun, self.act_cancel_run, self.act_operator, None, self.act_compare,
                  self.act_align_contact, self.act_difference, self.act_clear_compare):
            m.addSeparator() if a is None else m.addAction(a)
        sb = self.statusBar()
        self.run_label = QLabel("")
        self.run_bar = QProgressBar()
        self.run_bar.setRange(0, 1000)
        self.run_bar.setMaximumWidth(260)
        self.run_bar.setFormat("%p%")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_run)
        for w in (self.run_label, self.run_bar, self.cancel_button):
            sb.addPermanentWidget(w)
        self._show_run_widgets(False)

    def runs_dir(self) -> Path:
        return Path(str(self.settings.value("runs_dir", str(Path.home() / "dockmnemo_runs"))))

    def _show_run_widgets(self, running: bool):
        self.run_bar.setVisible(running)
        self.cancel_button.setVisible(running)
        self.act_cancel_run.setEnabled(running)
        self.act_new_run.setEnabled(not running)
        self.act_rerun.setEnabled(not running)

    def new_run_dialog(self, scenario_path=None):
        """The scenario dialog; Run starts the worker (only on valid input)."""
        from app.scenario_dialog import ScenarioDialog
        dlg = self.scenario_dialog = ScenarioDialog(self, scenario_path=scenario_path)
        dlg.accepted.connect(lambda: self._start_from_dialog(dlg))
        dlg.open()
        return dlg

    def operator_dialog(self, scenario=None):
        """Run -> Berthing (operator…): an operator session locked to wall time, the panes following it."""
        from app.operator_dialog import OperatorDialog
        dlg = self.operator = OperatorDialog(self, scenario)
        dlg.show()
        return dlg

    def rerun_dialog(self):
        """The scenario dialog on the open run's parameters; Run branches a new run at T Current."""
        from app.scenario_dialog import ScenarioDialog
        run = self.run
        if run is None:
            return None
        if not run.state_sizes:
            self.show_error(f"{run.path.name}: /state: this run holds no solver state to re-run from "
                            "(written before branch runs existed, or not by the solver); run its scenario anew")
            return None
        frame = self.playback.frame
        t = float(run.time[frame])
        dlg = self.scenario_dialog = ScenarioDialog(self, parameters_text=run.parameters_toml, branch_time=t,
                                                    t_end=float(run.time[-1]),
                                                    source_label=f"{run.path.name}, branching at T Current = {t:.4f} s")
        dlg.accepted.connect(lambda: self._start_from_dialog(dlg, branch_of=run.path, at=t))
        dlg.open()
        return dlg

    def _start_from_dialog(self, dlg, branch_of=None, at=None):
        import datetime as dt
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        stem = f"{dlg.scenario_name}{'_branch' if branch_of else ''}_{stamp}"
        folder = self.runs_dir()
        scen = dlg.write(folder, stem + ".scenario")
        self.start_run(scen, folder / f"{stem}.h5", dlg.t_end(), branch_of=branch_of, at=at)

    def start_run(self, scenario, out, t_end: float, branch_of=None, at=None):
        """Start the worker process; the window follows the run file as it grows."""
        self.live_path = Path(out)
        self.run_bar.setValue(0)
        self.run_label.setText(f"starting {Path(out).name} …")
        self._show_run_widgets(True)
        self._live_t = 0.0
        self.runner.start(scenario, out, t_end, branch_of=branch_of, at=at, t_start=at or 0.0)

    def start_campaign_rerun(self, directory, index: int, out):
        """Re-simulate run `index` of a campaign in the worker; the status bar shows progress, Cancel stops it."""
        self.live_path = Path(out)
        self.run_bar.setValue(0)
        self.run_label.setText(f"re-running run {index} of the campaign …")
        self._show_run_widgets(True)
        self._live_t = 0.0
        self.runner.start_campaign_rerun(directory, index, out)

    def cancel_run(self):
        self.runner.cancel()

    def _run_started(self, path: str):
        self.run_label.setText(f"running {Path(path).name}")

    def _run_compiling(self, k: int, n: int):
        from solver.warmup import COMPILING
        self.run_bar.setValue(0)
        self.run_label.setText(f"{COMPILING}: {k} of {n}")

    def _run_progress(self, t: float, t_end: float, eta: float):
        import math
        import time
        t0 = self.runner.t_start
        frac = (t - t0) / (t_end - t0) if t_end > t0 else 1.0
        self.run_bar.setValue(int(round(1000 * min(max(frac, 0.0), 1.0))))
        eta_text = f"ETA {eta:.0f} s" if math.isfinite(eta) else "ETA —"
        self.run_label.setText(f"{self.live_path.name}: t = {t:.2f} / {t_end:.2f} s   {eta_text}")
        now = time.perf_counter()
        if now - getattr(self, "_live_t", 0.0) < 0.25:   # at most 4 refreshes a second
            return
        self._live_t = now
        self._follow_live()

    def _follow_live(self):
        """Show the growing run: open it once, then take in new frames (panes keep their layout)."""
        import time
        path = self.live_path
        if path is None or not path.exists():
            return
        t0 = time.perf_counter()
        if self.run is not None and self.run.path == path and self.run.live:
            self.diagram.start_live_refresh(follow=True)   # in steps of a few ms; a refresh under way goes on
            return
        run = self._load_run(path, quiet=True)   # nothing flushed yet, or caught mid-write: tried again later
        if run is None or not self._show_run(run, f"{APP_NAME} — {path.name} (running)", quiet=True):
            return
        self.playback.seek_frame(run.n_frames - 1)
        self.live_timings.append(("open", run.n_frames, time.perf_counter() - t0))

    def _run_finished(self, path: str, code: int, message: str):
        self._show_run_widgets(False)
        self.last_run_message = message
        self.run_label.setText(f"{Path(path).name}: {message}")
        if self.campaign is not None and self.campaign.run_finished(path, code, message):
            return
        if self.run is not None and self.run.live:
            self.diagram.cancel_live_refresh()
            self.run.close()
            self.run = None
        if Path(path).exists() and code != 2:
            self.open_run(path)   # the saved run (complete, or truncated and marked incomplete), in recent runs
        elif code == 2:
            self.show_error(message)
        if self.run is None and self.diagram.run is not None:   # the live run was closed and no run replaced it
            self.diagram.set_run(None)
            self.setWindowTitle(APP_NAME)

    # ---- comparison ---------------------------------------------------------------------------
    def compare_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, "Compare with run", str(self.runs_dir()),
                                              "Run files (*.h5 *.hdf5);;All files (*)")
        if path:
            self.compare_with(path)

    def compare_with(self, path, align: str | None = None, diff: str | None = None) -> bool:
        """Open a second run as a ghost and dashed curves (None clears); keeps the current run."""
        d = self.diagram
        if path is None:
            old = d.compare_run
            d.set_compare(None)
            if old is not None:
                old.close()
            self.compare_path = None
            return True
        run_b = self._load_run(path)
        if run_b is None:
            return False
        old = d.compare_run
        align = align or ("first_contact" if self.act_align_contact.isChecked() else "t0")
        note = self._set_compare(run_b, align, diff if diff is not None else d.compare_diff)
        if note is None:
            run_b.close()
            return False
        if old is not None and old is not run_b:
            old.close()
        self.compare_path = Path(path)
        self.statusBar().showMessage(f"comparing with {Path(path).name}: {note}", 10000)
        return True

    def set_compare_alignment(self, mode: str):
        d = self.diagram
        if self.act_align_contact.isChecked() != (mode == "first_contact"):
            self.act_align_contact.setChecked(mode == "first_contact")
            return
        if d.compare_run is not None:
            self._set_compare(d.compare_run, mode, d.compare_diff)

    def set_difference(self, name: str | None):
        d = self.diagram
        if d.compare_run is not None:
            self._set_compare(d.compare_run, d.compare_align, name)

    def _set_compare(self, run_b: RunFile, align: str, diff: str | None) -> str | None:
        """The diagram compares with run B; if B (or A) cannot be read for it, a dialog says why and the
        comparison shown before stays (None returned)."""
        d = self.diagram
        before = (d.compare_run, d.compare_align, d.compare_diff)
        try:
            return d.set_compare(run_b, align, diff)
        except Exception as exc:  # noqa: BLE001  (any failure to read a run becomes a message)
            self.show_error(describe_failure(run_b.path, exc), "Cannot compare runs")
            try:
                d.set_compare(*before)
            except Exception:  # noqa: BLE001
                d.set_compare(None)
            return None

    def difference_dialog(self):
        from PySide6.QtWidgets import QInputDialog
        d = self.diagram
        if self.run is None or d.compare_run is None:
            return
        names = sorted(set(self.run.channels) & set(d.compare_run.channels))
        cur = d.compare_diff if d.compare_diff in names else (d.plots.names[0] if d.plots.names else names[0])
        name, ok = QInputDialog.getItem(self, "Difference plot", "A − B of", names, names.index(cur), False)
        if ok:
            self.set_difference(name)

    def export_events_dialog(self):
        """Ask for a file and write the event table's rows shown in the dock as CSV."""
        return self.events_dock.export_dialog()

    def _about(self):
        QMessageBox.about(self, "About dockmnemo",
                          "dockmnemo: the dynamic mnemonic diagram of probe-cone docking.\n"
                          "Run files: HDF5, format dockmnemo-run v1.")

    def _keys(self):
        QMessageBox.information(self, "dockmnemo keys", KEYS_HELP)

    def _fill_plot_menu(self):
        """One submenu per channel group, a checkable entry per channel."""
        self.plot_menu.clear()
        if self.run is None:
            self.plot_menu.addAction("(no run open)").setEnabled(False)
            return
        plotted = self.diagram.plots.names
        for group, names in sorted(self.run.groups().items()):
            sub = QMenu(group, self.plot_menu)
            for n in sorted(names):
                a = sub.addAction(n)
                a.setCheckable(True)
                a.setChecked(n in plotted)
                a.toggled.connect(lambda on, n=n: self.toggle_plot(n, on))
            self.plot_menu.addMenu(sub)

    def toggle_plot(self, name: str, on: bool):
        plots = self.diagram.plots
        if on and name not in plots.names:
            plots.add_channel(name)
        elif not on and name in plots.names:
            plots.remove_channel(name)

    def xy_dialog(self):
        """Ask for two channels; an XY plot of the second against the first beside the time plots."""
        from PySide6.QtWidgets import QInputDialog
        if self.run is None:
            return
        names = sorted(self.run.channels)
        plotted = self.diagram.plots.names
        x0 = next((i for i, n in enumerate(names) if n.endswith("_stroke")), 0)   # a stroke: a damper's loop
        chx, ok = QInputDialog.getItem(self, "XY plot", "along x (horizontal)", names, x0, False)
        if not ok:
            return
        y0 = names.index(plotted[0]) if plotted else 0
        chy, ok = QInputDialog.getItem(self, "XY plot", f"along y, against {chx}", names, y0, False)
        if ok:
            self.diagram.plots.add_xy(chx, chy)

    def choose_variables(self):
        """The searchable tree of channels; OK plots the checked ones."""
        if self.run is None:
            return None
        dlg = self.chooser = VariableChooser(self.run, self.diagram.plots.names, self, self.diagram.plots.groups)
        dlg.chosenGroups.connect(self.diagram.plots.set_groups)
        dlg.open()
        return dlg

    def show_summary(self):
        if self.run is None:
            return
        dlg = QDialog(self)
        dlg.setWindowTitle("Run summary")
        lay = QVBoxLayout(dlg)
        panel = RunFactsPanel()
        panel.set_run(self.run)
        lay.addWidget(panel)
        dlg.resize(700, 600)
        dlg.open()

    def grab_image(self):
        """The window as shown, VTK scene included."""
        return compose_grab(self, self.diagram)

    # ---- fitting the screen, pane titles (maximise), named layouts, theme ------------------------
    def available_size(self) -> QSize | None:
        """The room of the screen the window is on (its available geometry less the window frame), None if unknown."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return None
        avail = screen.availableGeometry().size()
        frame = self.frameGeometry().size() - self.geometry().size() if self.isVisible() else QSize(0, 0)
        return QSize(max(avail.width() - frame.width(), 1), max(avail.height() - frame.height(), 1))

    def fitted_size(self, want: QSize) -> QSize:
        """`want`, made no larger than the screen's available room."""
        room = self.available_size()
        return want if room is None else want.boundedTo(room)

    def fit_to_screen(self):
        """Shrink the window to the screen's available room (and move it onto it); the events dock keeps at most
        EVENTS_DOCK_SHARE of the width."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None or self.isMaximized() or self.isFullScreen():
            return
        size = self.fitted_size(self.size())
        if size != self.size():
            self.resize(size)
        avail = screen.availableGeometry()
        geo = self.frameGeometry()
        if not avail.contains(geo):
            self.move(max(avail.left(), min(geo.left(), avail.right() - geo.width() + 1)),
                      max(avail.top(), min(geo.top(), avail.bottom() - geo.height() + 1)))
        self.fit_docks()

    def fit_docks(self):
        """The right-hand docks take at most EVENTS_DOCK_SHARE of the window's width."""
        dock = self.events_dock
        most = int(self.width() * EVENTS_DOCK_SHARE)
        if dock.isVisible() and not dock.isFloating() and dock.width() > most:
            self.resizeDocks([dock], [min(EVENTS_DOCK_W, most)], Qt.Horizontal)

    def resizeEvent(self, e):
        super().resizeEvent(e)
        if e.size().width() < e.oldSize().width():   # a narrower window: the docks give up their share too
            self.fit_docks()

    def showEvent(self, e):
        super().showEvent(e)
        if not getattr(self, "_fitted", False):
            self._fitted = True
            self.fit_to_screen()

    def _build_pane_titles(self):
        """Wrap each pane of the diagram's splitter in a box under a slim title (double-click: maximise)."""
        d = self.diagram
        self.pane_titles: dict[str, PaneTitle] = {}
        self.pane_boxes: dict[str, QWidget] = {}
        for i, key in enumerate(PANES):
            pane = d.pane(key)
            box = QWidget(objectName=f"paneBox_{key}")
            lay = QVBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(0)
            title = PaneTitle(key, self.toggle_maximised)
            d.splitter.replaceWidget(i, box)
            lay.addWidget(title)
            lay.addWidget(pane, 1)
            pane.show()
            self.pane_titles[key], self.pane_boxes[key] = title, box
        d.scene.raise_()   # painted after the other panes (see MnemonicDiagram)
        d.paneVisibilityChanged.connect(lambda key, on: self.pane_boxes[key].setVisible(on))

    def toggle_maximised(self, key: str):
        """Maximise pane `key` (the other panes hidden), or restore the panes shown before."""
        d = self.diagram
        if self.maximised is None:
            self._shown_before_max = {k: d.pane_actions[k].isChecked() for k in PANES}
            self.maximised = key
            d.set_pane_visible(key, True)
            for k in PANES:
                if k != key:
                    d.set_pane_visible(k, False)
        else:
            self.maximised = None
            for k, on in self._shown_before_max.items():
                d.set_pane_visible(k, on)
        for k, t in self.pane_titles.items():
            t.set_maximised(self.maximised == k)

    def _build_layout_menus(self):
        """View → Layouts (save, load, delete named layouts) and View → Theme (dark, light)."""
        v = self.view_menu()
        v.addSeparator()
        self.layouts_menu = v.addMenu("La&youts")
        self.layouts_menu.aboutToShow.connect(self._fill_layouts_menu)
        self._fill_layouts_menu()
        tm = v.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        self.theme_actions = {}
        for name in ("dark", "light"):
            a = QAction(name.capitalize(), self, checkable=True, checked=style.theme() == name)
            a.triggered.connect(lambda _=False, n=name: self.choose_theme(n))
            self.theme_group.addAction(a)
            tm.addAction(a)
            self.theme_actions[name] = a

    def _fill_layouts_menu(self):
        m = self.layouts_menu
        m.clear()
        m.addAction(QAction("&Save layout as…", m, triggered=self.save_layout_dialog))
        names = self.layout_names()
        if names:
            m.addSeparator()
            for n in names:
                m.addAction(QAction(n, m, triggered=lambda _=False, n=n: self.load_named_layout(n)))
            delete = m.addMenu("&Delete layout")
            for n in names:
                delete.addAction(QAction(n, delete, triggered=lambda _=False, n=n: self.delete_named_layout(n)))

    def layout_names(self) -> list[str]:
        self.settings.beginGroup("layouts")
        try:
            return sorted(self.settings.childGroups())
        finally:
            self.settings.endGroup()

    def save_layout_dialog(self):
        name, ok = QInputDialog.getText(self, "Save layout", "Name of this layout:")
        if ok and name.strip():
            self.save_named_layout(name.strip())

    def save_named_layout(self, name: str):
        """Keep the window's layout under `name`: docks, pane sizes, panes shown, maximised pane, plotted channels."""
        s, d = self.settings, self.diagram
        key = "layouts/" + name.replace("/", "_")
        s.setValue(f"{key}/state", self.saveState())
        s.setValue(f"{key}/splitter", d.splitter.saveState())
        shown = self._shown_before_max if self.maximised else {k: d.pane_actions[k].isChecked() for k in PANES}
        for k in PANES:
            s.setValue(f"{key}/panes/{k}", bool(shown[k]))
        s.setValue(f"{key}/maximised", self.maximised or "")
        s.setValue(f"{key}/plots", list(d.plots.names))
        s.setValue(f"{key}/scrolling", bool(d.act_scrolling.isChecked()))
        s.sync()
        self.statusBar().showMessage(f"layout '{name}' saved", 5000)

    def load_named_layout(self, name: str) -> bool:
        """Put back the layout saved under `name` (channels the open run lacks are left out); False if none."""
        s, d = self.settings, self.diagram
        key = "layouts/" + name.replace("/", "_")
        if name not in self.layout_names():
            self.statusBar().showMessage(f"no layout '{name}'", 5000)
            return False
        if self.maximised:
            self.toggle_maximised(self.maximised)
        for k in PANES:
            d.set_pane_visible(k, _as_bool(s.value(f"{key}/panes/{k}", True)))
        state, split = s.value(f"{key}/state"), s.value(f"{key}/splitter")
        if state is not None:
            self.restoreState(state)
        if split is not None:
            d.splitter.restoreState(split)
        d.act_scrolling.setChecked(_as_bool(s.value(f"{key}/scrolling", True)))
        plots = s.value(f"{key}/plots")
        plots = [plots] if isinstance(plots, str) and plots else list(plots or [])
        if self.run is not None and plots:
            keep = [str(n) for n in plots if str(n) in self.run.channels]
            if keep:
                d.plots.set_plotted(keep)
        maxed = str(s.value(f"{key}/maximised", "") or "")
        if maxed in PANES:
            self.toggle_maximised(maxed)
        self.fit_docks()
        self.statusBar().showMessage(f"layout '{name}'", 5000)
        return True

    def delete_named_layout(self, name: str):
        self.settings.remove("layouts/" + name.replace("/", "_"))
        self.settings.sync()

    def choose_theme(self, name: str):
        """Keep `name` as the theme and apply it at once: every pane, dock and bar observes the change
        (style.observe), the window's palette is the theme's."""
        self.settings.setValue("theme", name)
        self.settings.sync()
        for n, a in self.theme_actions.items():
            a.setChecked(n == name)
        if name != style.theme():
            style.set_theme(name)

    def apply_theme(self):
        """The application's palette (docks, tables, menus, dialogs), the separators and the pane titles in the
        theme's colours (at build and on View → Theme: style.observe calls it). The stylesheet is set after the
        palette: the widgets under it are polished again with the new palette."""
        QApplication.setPalette(style.qt_palette())
        self.setStyleSheet(f"QMainWindow::separator {{ background: {style.SPLITTER}; width: 4px; height: 4px; }} "
                           f"QMenuBar {{ color: {style.TEXT}; }}")   # (Fusion draws its names in ButtonText)
        for t in getattr(self, "pane_titles", {}).values():
            t.apply_theme()

    # ---- settings -------------------------------------------------------------------------
    def _restore_settings(self):
        s = self.settings
        geo = s.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)
        split = s.value("window/splitter")
        if split is not None:
            self.diagram.splitter.restoreState(split)
        try:
            speed = float(s.value("speed", 1.0))
        except (TypeError, ValueError):
            speed = 1.0
        if speed in SPEEDS:
            self.playback.set_speed(speed)
        self.diagram.act_scrolling.setChecked(_as_bool(s.value("scrolling", True)))
        for key in PANES:
            self.diagram.set_pane_visible(key, _as_bool(s.value(f"panes/{key}", True)))

    def saved_plots(self) -> list[str] | None:
        v = self.settings.value("plots")
        if v is None:
            return None
        if isinstance(v, str):
            v = [v] if v else []
        return [str(x) for x in v]

    def _plots_changed(self, names: list[str]):
        if self.run is not None:
            self.settings.setValue("plots", list(names))

    def save_layout(self):
        if self.maximised:                            # the layout kept is the one a double-click restores
            self.toggle_maximised(self.maximised)
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/splitter", self.diagram.splitter.saveState())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    # ---- recent runs ----------------------------------------------------------------------
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

    # ---- campaigns ----------------------------------------------------------------------------
    def _file_menu(self) -> QMenu:
        return {a.text(): a.menu() for a in self.menuBar().actions() if a.menu() is not None}["&File"]

    def view_menu(self) -> QMenu:
        return {a.text(): a.menu() for a in self.menuBar().actions() if a.menu() is not None}["&View"]

    def open_campaign(self, directory) -> bool:
        """Show a campaign directory's envelope map in a dock; a bad directory gives a dialog, nothing else."""
        if self.campaign is None:
            from app.campaign_actions import CampaignView
            self.campaign = CampaignView(self)
        ok = self.campaign.open(directory)
        if ok:
            self.settings.setValue("campaign_dir", str(Path(directory).resolve().parent))
        return ok

    def open_path(self, path) -> bool:
        """A run file, or a campaign directory (its envelope map)."""
        return self.open_campaign(path) if Path(path).is_dir() else self.open_run(path)

    def open_campaign_dialog(self):
        start = str(self.settings.value("campaign_dir", str(Path.cwd())))
        path = QFileDialog.getExistingDirectory(self, "Open campaign directory", start)
        if path:
            self.open_campaign(path)

    def open_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, "Open run", str(Path.cwd()), "Run files (*.h5 *.hdf5);;All files (*)")
        if path:
            self.open_run(path)

    # ---- runs -----------------------------------------------------------------------------
    def open_run(self, path) -> bool:
        """Open a run: read and check it first, then show it; on any failure a dialog names the file (and the
        dataset) and the run shown before stays, under its title."""
        path = Path(path)
        try:
            seal_if_orphaned(path)   # left open by a killed writer: sealed as an incomplete run, then opened
        except (RunFileError, OSError):
            pass                     # read as it is below (RunFile says what is wrong)
        run = self._load_run(path)
        if run is None or not self._show_run(run, f"{APP_NAME} — {path.name} [{run.meta.variant}]"):
            return False
        self._remember(path.resolve())
        if self.campaign is not None:
            self.campaign.run_opened(path)
        return True

    def _load_run(self, path, quiet: bool = False) -> RunFile | None:
        """The run file opened and its first poses read (checked finite); None after a dialog (or silently)."""
        path = Path(path)
        run = None
        try:
            run = RunFile(path)   # refuses a FIFO, socket or device before opening it
            run.poses(0)   # the first frame's block of poses (poses are checked finite as they are read)
            return run
        except Exception as exc:  # noqa: BLE001  (any failure to open a run becomes a message)
            if run is not None:
                run.close()
            if not isinstance(exc, RunFileError):
                logging.getLogger(APP_NAME).info("opening %s", path, exc_info=exc)
            if not quiet:
                self.show_error(describe_failure(path, exc))
            return None

    def _show_run(self, run: RunFile, title: str, quiet: bool = False) -> bool:
        """Swap an opened run into the window (panes, playback, title); if a pane cannot show it, a dialog
        says why and the run shown before stays."""
        saved = self.saved_plots()
        plotted = [n for n in saved if n in run.channels] if saved else None
        try:
            self.diagram.set_run(run, plotted or None)
        except Exception as exc:  # noqa: BLE001  (the diagram put the previous run back)
            run.close()
            if not quiet:
                self.show_error(describe_failure(run.path, exc))
            return False
        old, self.run = self.run, run
        if old is not None and old is not run:
            old.close()
        self.setWindowTitle(title)
        if getattr(self, "measured", None) is not None and old is not run:
            self.measured.run_changed()
        return True

    def show_error(self, message: str, title: str = "Cannot open run file"):
        """A dialog over the window (it does not block); a message already on screen is not shown twice."""
        box = self.error_box
        if box is not None and box.isVisible():
            if box.text() == message:
                return
            box.close()
        self.last_error = message
        box = self.error_box = QMessageBox(QMessageBox.Critical, title, message, QMessageBox.Ok, self)
        box.setTextInteractionFlags(Qt.TextSelectableByMouse)
        box.open()

    # ---- drag and drop --------------------------------------------------------------------
    def dragEnterEvent(self, e):
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e):
        for url in e.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                break

    def closeEvent(self, e):
        if getattr(self, "runner", None) is not None and self.runner.running:
            self.runner.cancel()
            self.runner.proc.waitForFinished(5000)
        self.playback.pause()
        self.save_layout()
        style.unobserve(self)          # (its panes hold a run closed below)
        self.diagram.wait_for_analysis()
        if self.run is not None:
            self.run.close()
        super().closeEvent(e)


def _as_bool(v) -> bool:
    if isinstance(v, str):
        return v.lower() in ("1", "true", "yes")
    return bool(v)


class UnexpectedErrors:
    """Last resort (sys.excepthook) for an exception no code caught, e.g. in a Qt slot: the traceback is logged
    and a non-modal dialog says what happened, once per kind of error; the app goes on."""

    def __init__(self, window: MainWindow):
        self.window = window
        self.seen: dict[tuple, int] = {}   # (type, message, where) -> times met
        self.box: QMessageBox | None = None
        self._previous = None

    def install(self) -> "UnexpectedErrors":
        self._previous, sys.excepthook = sys.excepthook, self
        return self

    def uninstall(self):
        if sys.excepthook is self:
            sys.excepthook = self._previous

    def __call__(self, etype, exc, tb):
        if issubclass(etype, KeyboardInterrupt):
            (self._previous or sys.__excepthook__)(etype, exc, tb)
            return
        last = tb
        while last is not None and last.tb_next is not None:
            last = last.tb_next
        where = (last.tb_frame.f_code.co_filename, last.tb_lineno) if last is not None else ("", 0)
        key = (etype.__name__, str(exc), where)
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.seen[key] > 1:
            return   # logged and shown the first time
        logging.getLogger(APP_NAME).error("unexpected error", exc_info=(etype, exc, tb))
        try:
            box = self.box = QMessageBox(QMessageBox.Warning, "Unexpected error",
                                         f"dockmnemo met an unexpected error and carries on:\n{etype.__name__}: {exc}"
                                         "\n\nThe details are in the log (standard error).",
                                         QMessageBox.Ok, self.window)
            box.setModal(False)
            box.setTextInteractionFlags(Qt.TextSelectableByMouse)
            box.show()
        except Exception:  # noqa: BLE001  (the window is gone: the log has it)
            pass


def start_app(path, measured=None, map_path=None, at=None, size=None,
              settings: QSettings | None = None) -> tuple[MainWindow, UnexpectedErrors]:
    """The shown window on `path` (and a measured record over it, at T Current `at`, `size` px fitted to the screen)
    with the last-resort error hook installed; a file that cannot be opened leaves the window empty (or without
    the record) with a dialog (never an exit)."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    logging.basicConfig(format="%(name)s: %(levelname)s: %(message)s")
    w = MainWindow(settings)
    errors = UnexpectedErrors(w).install()
    if size is not None:
        w.resize(w.fitted_size(QSize(*size)))
    w.show()
    try:
        if w.open_path(path) and measured is not None:
            w.measured.open(measured, map_path)
        if at is not None and w.run is not None:
            w.playback.seek_time(float(at))
    except Exception:  # noqa: BLE001  (never an exit: the dialog says what happened)
        errors(*sys.exc_info())
    return w, errors


def screenshot(path, out, size: tuple[int, int], at=None, playing: bool = False, measured=None,
               map_path=None) -> int:
    """`dockmnemo view RUN --size WxH --at T --screenshot OUT.png`: the whole window at that size and time, with
    default settings (a temporary settings file), written to OUT.png; exit 2 if the run, record or size fails."""
    import tempfile
    import time

    from app.progress import fail
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="dockmnemo-shot-") as tmp:
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.IniFormat)
        w, errors = start_app(path, measured, map_path, at, None, settings)
        try:
            w.resize(*size)            # exactly: a screenshot is not fitted to the screen
            t_end = time.monotonic() + 0.3
            while time.monotonic() < t_end:
                app.processEvents()
            if w.last_error or w.run is None:
                return fail(w.last_error or f"{path}: not a run file")
            if w.size().toTuple() != tuple(size):
                return fail(f"--size: the window is {w.width()}x{w.height()}, not {size[0]}x{size[1]}: the screen "
                            f"is too small (xvfb-run -a -s '-screen 0 1920x1200x24')")
            w.diagram.ensure_analysed()
            if at is not None:
                w.playback.seek_time(float(at))
            if playing:
                w.playback.play()
            t_end = time.monotonic() + (1.0 if playing else 0.3)
            while time.monotonic() < t_end:
                app.processEvents()
                time.sleep(0.005)
            img = w.grab_image()
            if playing and not w.playback.playing:
                return fail(f"{path}: --playing: playback stopped before the screenshot (the run ended?)")
            w.playback.pause()
            if not img.save(str(out)):
                return fail(f"{out}: cannot be written")
            print(f"wrote {out} ({img.width()}x{img.height()}, T Current {w.playback.t_current:.3f} s"
                  f"{', playing' if playing else ''})")
            return 0
        finally:
            errors.uninstall()
            w.close()
            app.processEvents()


def run_app(path, measured=None, map_path=None, at=None, size=None) -> int:
    """`dockmnemo view`: the window until it is closed."""
    w, errors = start_app(path, measured, map_path, at, size)
    try:
        return QApplication.instance().exec()
    finally:
        errors.uninstall()
