"""The plots pane: the facts and readout box (facts.py) beside x-linked time plots of the chosen channels.

Plots scroll right to left in GraphStep steps (or show the whole run), with a yellow current-time line and a white
dashed capture line on a dark background. A click in a plot asks to seek there (seek.py). While playing, the next
scroll step is drawn ahead (ahead_plan.py: when and how much, from the playback model's next frame and stride;
trace.py, view.py: the drawings). pyqtgraph internals: pg_internals.py only.
"""
from __future__ import annotations

from collections import OrderedDict
import math

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QGraphicsItem, QHBoxLayout, QSplitter, QVBoxLayout, QWidget

from solver import mechanisms
from solver.runfile import TIME_CHUNK, RunFile
from viewer import style
from viewer.channel_blocks import ChannelBlocks
from viewer.playback import Playback
from viewer.plots.ahead_plan import (COST_AXIS, COST_BARS, COST_DATA, COST_DRAWN_AXIS, COST_LABELLED_AXIS, COST_LINE,
                                     DEFAULT_WINDOW, drawings_now, frames_in, plan_ahead, range_at, span_for)
from viewer.numbers import value_text
from viewer.plots.axes import TimeStrip, ValueAxis, label_px, label_room, label_time, style_plot
from viewer.plots.cursors import Cursors, measure_lines, value_at
from viewer.plots.facts import FactsPanel, restyle_scroll_areas, scroll_area
from viewer.plots.yscale import channel_span, unit_spans, with_floor
from viewer.plots.ghosts import difference_plot, difference_row, ghost_curves, measured_curves
from viewer.plots.live import load_curves
from viewer.plots.pg_internals import plain_follower, set_x_ranges
from viewer.plots.seek import clicked_time
from viewer.plots.trace import PlotLines, Trace, rasterize_plot_ahead
from viewer.plots.view import CursorLine, PlotsView, TimeCursor, keep_legend_clear, plot_label
from viewer.plots.xy import MIN_W as XY_MIN_W, XYPlot
from viewer.plots.yfit import YFits, readable_range, visible_bounds
from viewer.time_axis import TimeAxis

DOWNSAMPLE_PER_PX = 2.0   # samples per pixel drawn (min and max of each half pixel; pyqtgraph's default: 5)
MIN_PLOT_H = 52         # px of a plot's row at least: room for its legend and 3 labelled ticks (yfit.readable_range:
                        # 13 + 2 px legend, 2 x 14.2 px between labels, half a label under the lowest, the row's axis);
                        # more plots than fit scroll
TIME_AXIS_H = 40        # px of the labelled time axis under the last plot
STRIP_GRIP = 4          # px either side of the border between two plots where a drag resizes them
CHANNEL_MIME = "application/x-dockmnemo-channel"   # a channel dragged onto the plots (its name, UTF-8)


def legend_html(entries: list[tuple[str, str, bool]]) -> str:
    """A plot's legend in one line: (colour, text, dashed) per curve; a single solid curve is named alone."""
    if len(entries) == 1 and not entries[0][2]:
        return entries[0][1]
    return "&nbsp;&nbsp;".join(f"<span style='color:{c}'>{'┄┄' if dashed else '━━'}&nbsp;{t}</span>"
                               for c, t, dashed in entries)


def default_plots(run: RunFile) -> list[str]:
    """The run's mechanism type's default plots that it has, else its first four channels."""
    chosen = [n for n in mechanisms.for_run(run).default_plots if n in run.channels]
    return chosen or list(run.channels)[:4]


class PlotsPane(QWidget):
    """Facts + readout box on the left; x-linked plots of the chosen channels on the right."""

    seekRequested = Signal(float)       # run time the user clicked in a plot
    graphStepEdited = Signal(float)     # GraphStep typed in the facts panel
    plotsChanged = Signal(list)         # the plotted channel names
    zoomChanged = Signal(object)        # the zoomed time range (t0, t1), or None: back to the playback's window
    menuRequested = Signal(int, QPointF)   # a right click: the plot's index (-1: none) and the screen position
    refused = Signal(str)               # a channel could not go where it was dropped: why

    def __init__(self, playback: Playback | None = None, parent=None):
        super().__init__(parent)
        self.playback = playback   # the model that owns time: the next frame and the stride come from it
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.names: list[str] = []          # the plotted channels, plot by plot (flat)
        self.groups: list[list[str]] = []   # the channels of each plot
        self.plot_of: list[int] = []        # per channel of `names`: the index of its plot
        self.weights: list[float] = []      # per time plot row (channels', difference plots): its share of the height
        self.xy_pairs: list[tuple[str, str]] = []   # the XY plots: (channel along x, channel along y)
        self.xy_plots: list[XYPlot] = []
        self.frame = 0
        self.t_current = 0.0
        self.scrolling = True
        self.window = DEFAULT_WINDOW
        self.graph_step = 0.1
        self.plots: list[pg.PlotItem] = []
        self.curves: list[pg.PlotDataItem] = []
        self._plot_lines: list[PlotLines] = []            # per plot of several channels: their lines' one image
        self.cursors: list[TimeCursor] = []
        self.capture_lines: list[pg.InfiniteLine] = []
        self.ranges: list[pg.LinearRegionItem] = []
        self.titles: list[pg.LabelItem] = []
        self.loop_range_t: tuple[float, float] | None = None
        self._xrange: tuple[float, float] | None = None
        self._early: tuple[float, float] | None = None   # the x range still shown while the next scroll step's is
                                                         # applied a frame ahead (see _scroll_ahead)
        self._playing = False                            # (without a playback model: set_playing)
        self._span: tuple[int, int] | None = None   # frames the curves hold (see _load_span)
        self.footer: pg.PlotItem | None = None   # e.g. the contact lanes: below the plots, same time axis
        self.footer_visible = True
        self.compare_run: RunFile | None = None  # run B drawn dashed on this run's time axis (t_A = t_B + offset)
        self.compare_offset = 0.0
        self.diff_name: str | None = None
        self.ghost_curves: list[pg.PlotDataItem] = []
        self._ghost_of: dict[int, pg.PlotDataItem] = {}   # plot index -> run B's dashed curve in it
        self._yfit: list = []                            # per plot: the y range last fitted (see _fit_y)
        self._yfits = YFits()                            # y ranges measured (see _y_range)
        self._next: tuple[float, float] | None = None    # the next scroll step's x range (see _prepare_next)
        self._pending: list = []                         # (cost, drawing ahead) still to do for it
        self._direct = False                             # the last scroll set each view's range (_scroll_views)
        self.diff_plot: pg.PlotItem | None = None
        self.diff_curve: pg.PlotDataItem | None = None
        self.diff_rows: list = []                        # ghosts.DifferenceRow of every difference plot shown
        self._top_px: list[float] = []                   # per plot: px its legend takes at the top (no data there)
        self._min_span: list[float] = []                 # per plot: its smallest y span (yscale.unit_spans)
        self.cursors_ab = Cursors(self)                  # the hover line and the measuring cursors A, B
        self.cursors_ab.changed.connect(self._update_readout)
        self._drag_strip = None                          # (row above the dragged border, y at press, the view
                                                         # heights of it and the row below then)
        self.measured = None                             # a solver.measured.Comparison drawn dashed (set_measured)
        self.measured_diff = False                       # its measured − run plots shown
        self._measured_of: dict[int, pg.PlotDataItem] = {}   # plot index -> the record's dashed curve in it
        self.measured_diff_plots: dict[str, tuple[pg.PlotItem, pg.PlotDataItem]] = {}   # channel -> plot, curve
        self.zoom: tuple[float, float] | None = None     # a wheel-zoomed time range (a view range, not playback)

        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        self.facts = FactsPanel(self.graph_step)
        self.facts.graphStepEdited.connect(self.graphStepEdited.emit)
        self.graph_step_box, self.fact_labels = self.facts.graph_step_box, self.facts.labels
        self.t_label, self.readout = self.facts.t_label, self.facts.readout
        lay.addWidget(self.facts)
        self.glw = PlotsView()
        self.glw.setBackground(style.BACKGROUND)
        self.glw.ci.setSpacing(2)
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        self.glw.viewport().installEventFilter(self)     # wheel zoom, hover readout, strip borders, dropped channels
        self.glw.viewport().setMouseTracking(True)
        self.glw.setAcceptDrops(True)
        self.glw.viewport().setAcceptDrops(True)
        self.plots_scroll = scroll_area(self.glw, style.BACKGROUND)   # plots keep MIN_PLOT_H; more scroll
        self.rows_scroll = True       # False (a video: nothing can scroll): the plots share the pane's height
        self.xy_view = pg.GraphicsLayoutWidget()                     # the XY plots, beside the time plots
        self.xy_view.setBackground(style.BACKGROUND)
        self.xy_view.setVisible(False)
        self.xy_view.setMinimumWidth(XY_MIN_W)
        self.split = QSplitter(Qt.Horizontal)
        self.split.setChildrenCollapsible(False)
        self.split.setHandleWidth(4)
        self.split.setStyleSheet(f"QSplitter::handle {{ background: {style.SPLITTER}; }}")
        self.time_strip = TimeStrip()     # a labelled time axis under the plots while they scroll (the last
        rows = QWidget()                  # plot's is then out of sight)
        rows_lay = QVBoxLayout(rows)
        rows_lay.setContentsMargins(0, 0, 0, 0)
        rows_lay.setSpacing(0)
        rows_lay.addWidget(self.plots_scroll, 1)
        rows_lay.addWidget(self.time_strip)
        self.split.addWidget(rows)
        self.split.addWidget(self.xy_view)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 1)
        lay.addWidget(self.split, 1)
        self._no_run_note()
        self.act_measure = QAction("&Measuring cursors", self, checkable=True, shortcut="Shift+C",
                                   toggled=self.set_measuring)
        self.act_measure.setShortcutContext(Qt.WindowShortcut)
        self.addAction(self.act_measure)
        style.observe(self.apply_theme)

    def apply_theme(self):
        """View → Theme: grounds, splitter and facts in the theme's colours and the plots built again in them
        (channels, strips, cursors, overlays and XY plots kept; style.observe calls it)."""
        for view in (self.glw, self.xy_view, self.time_strip):
            view.setBackground(style.BACKGROUND)
        self.split.setStyleSheet(f"QSplitter::handle {{ background: {style.SPLITTER}; }}")
        restyle_scroll_areas(self)
        self.facts.apply_theme()
        if self.run is None:
            self.glw.ci.clear()
            self._no_run_note()
        else:
            weights = list(self.weights)
            self.set_groups([list(g) for g in self.groups])
            if weights and len(weights) == len(self.weights):
                self.set_strip_weights(weights)
            self.show_frame(self.frame)

    def _no_run_note(self):
        """With no run open the plot area says so (as the scene and the devices do)."""
        self.glw.ci.addLabel("plots: no run open", color=style.KEY_TEXT)

    # ---- rows -----------------------------------------------------------------------------
    def _size_rows(self):
        """Room for every plotted value in the readout box and for MIN_PLOT_H per plot (the plots scroll)."""
        lines = len(self.names) + sum(2 for n in self.names if self._measured_at(n) is not None)
        self.facts.fit_rows(lines)
        rows = len(self.groups) + self._extra_rows()
        self._layout_strips()
        lay = self.glw.ci.layout    # its rows' floors (the footer's fixed height) plus its spacing and margins:
        self.glw.setMinimumHeight(  # all of it scrolls into view (the lanes' force scale at the bottom too)
            int(np.ceil(lay.effectiveSizeHint(Qt.MinimumSize).height())) if rows and self.rows_scroll else 0)
        self._place_time_strip()

    def _place_time_strip(self):
        """The time strip under the plots: shown while they scroll (more rows than fit), on the first plot's time
        axis and under its view box."""
        need = bool(self.plots) and self.rows_scroll and self.glw.minimumHeight() > self.plots_scroll.height() + (
            self.time_strip.height() if self.time_strip.isVisible() else 0)
        self.time_strip.follow(self.plots[0].getViewBox() if need else None, self.glw)

    def _strip_rows(self) -> list:
        """The time plots row by row (channels' plots, A − B, measured − run), as laid out."""
        return self.plots + [p for p in (self.diff_plot, *(p for p, _ in self.measured_diff_plots.values())) if p]

    def _layout_strips(self):
        """Each time plot's row: at least MIN_PLOT_H (rows_scroll; the labelled time axis on top of the last); with
        `weights` (a dragged border), the rows' heights in those shares of the height they have together."""
        rows = self._strip_rows()
        if not rows:
            return
        if len(self.weights) != len(rows):
            self.weights = []
        lay = self.glw.ci.layout
        floors = [self._strip_floor(r, len(rows)) for r in range(len(rows))]
        pref = floors
        if self.weights:
            total = sum(p.sceneBoundingRect().height() for p in rows)
            pref = [max(f, total * w / sum(self.weights)) for f, w in zip(floors, self.weights)]
        for r in range(len(rows)):
            lay.setRowMinimumHeight(r, floors[r])
            lay.setRowPreferredHeight(r, pref[r])
            lay.setRowStretchFactor(r, 1)

    def _strip_floor(self, r: int, n: int) -> float:
        """Row r's least height of n rows (the last holds the labelled time axis too)."""
        return (MIN_PLOT_H if self.rows_scroll else 24) + (TIME_AXIS_H if r == n - 1 else 0)

    def strip_heights(self) -> list[float]:
        """The time plots' heights on screen, px (their view boxes')."""
        return [p.getViewBox().sceneBoundingRect().height() for p in self._strip_rows()]

    def set_strip_weights(self, weights: list[float]):
        """The time plots' shares of the height (one per row: channels' plots, then difference plots)."""
        self.weights = [max(float(w), 1e-3) for w in weights]
        self._drop_early()
        self._layout_strips()

    def _strip_border_at(self, y: float) -> int:
        """Index of the row above the border between two time plots at viewport y (within STRIP_GRIP px), -1."""
        rows = self._strip_rows()
        for r in range(len(rows) - 1):
            bottom = self.glw.mapFromScene(rows[r].sceneBoundingRect().bottomLeft()).y()
            top = self.glw.mapFromScene(rows[r + 1].sceneBoundingRect().topLeft()).y()
            if bottom - STRIP_GRIP <= y <= top + STRIP_GRIP:
                return r
        return -1

    def _drag_strip_to(self, y: float):
        """Move the border being dragged to viewport y: the rows either side share their two heights anew, the
        others keep theirs."""
        r, y0, (h0, h1) = self._drag_strip
        rows = self._strip_rows()
        heights = [p.sceneBoundingRect().height() for p in rows]
        f0, f1 = (self._strip_floor(k, len(rows)) for k in (r, r + 1))
        pair = heights[r] + heights[r + 1]
        top = min(max(h0 + y - y0 + (heights[r] - self.strip_heights()[r]), f0), pair - f1)   # (row px: + axes)
        heights[r], heights[r + 1] = top, pair - top
        self.weights = heights
        self._layout_strips()
        self.glw.ci.layout.activate()

    def set_rows_scroll(self, on: bool):
        """Whether plots keep MIN_PLOT_H and scroll where they do not fit (off: they share the pane's height)."""
        self.rows_scroll = bool(on)
        self._size_footer()
        self._size_rows()

    def set_verdict(self, line: str, passed: bool | None, report: str = ""):
        """The capture verdict line (PASS green, FAIL red; None: could not be evaluated)."""
        self.facts.set_verdict(line, passed, report)

    def verdict_text(self) -> str:
        return self.fact_labels["Verdict"].text()

    # ---- run and variables ----------------------------------------------------------------
    def set_run(self, run: RunFile | None, blocks: ChannelBlocks | None = None, names: list[str] | None = None):
        """Attach a run and plot `names` (default: the mechanism type's default plots)."""
        self.run = run
        self.blocks = blocks or (ChannelBlocks(run) if run is not None else None)
        self.facts.set_run(run)
        if run is None:
            self.xy_pairs = []
            self.set_plotted([])
            return
        self.frame = 0
        self.t_current = float(run.time[0])
        self.zoom = None
        self.xy_pairs = [(x, y) for x, y in self.xy_pairs if x in run.channels and y in run.channels]
        self.set_plotted(names if names is not None else default_plots(run))

    def set_plotted(self, names: list[str]):
        """Rebuild the plots, one per channel (unknown names are dropped); loads only these channels."""
        self.set_groups([[n] for n in names])

    def add_channel(self, name: str, plot: int = -1) -> bool:
        """Plot `name` in plot `plot` with its channels (-1: a new plot under the others); False (and `refused`)
        for a channel the run lacks or whose unit is not the plot's."""
        run = self.run
        if run is None or name not in run.channels:
            self.refused.emit(f"{name}: not a channel of the open run")
            return False
        groups = [[n for n in g if n != name] for g in self.groups]
        if 0 <= plot < len(self.groups):
            unit = run.channels[self.groups[plot][0]].unit
            if run.channels[name].unit != unit:
                self.refused.emit(f"{name} [{run.channels[name].unit}] cannot share a plot with "
                                  f"{', '.join(self.groups[plot])} [{unit}]: one unit per plot")
                return False
            groups[plot].append(name)
        else:
            groups.append([name])
        self.set_groups([g for g in groups if g])
        return True

    def remove_channel(self, name: str):
        """Stop plotting `name` (its plot goes with its last channel)."""
        self.set_groups([[n for n in g if n != name] for g in self.groups])

    def plot_title(self, index: int) -> str:
        """The channels of plot `index`, comma separated."""
        return ", ".join(self.groups[index]) if 0 <= index < len(self.groups) else ""

    def set_groups(self, groups: list[list[str]]):
        """Rebuild the plots: one per group of channels, drawn together with a legend (unknown names dropped; a
        channel of another unit than its group's first gets a plot of its own unit)."""
        run = self.run
        seen, clean = set(), []
        for g in groups:
            g = [n for n in g if run is not None and n in run.channels and n not in seen]
            seen.update(g)
            by_unit: dict[str, list[str]] = {}
            for n in g:
                by_unit.setdefault(run.channels[n].unit, []).append(n)
            clean += [names for names in by_unit.values() if names]
        old_rows = len(self.groups)
        self.groups = clean
        names = [n for g in clean for n in g]
        if len(clean) != old_rows:
            self.weights = []
        for old in self.names:
            if old not in names and self.blocks is not None:
                self.blocks.drop_full(old)
        self.names = names
        self.plot_of = [i for i, g in enumerate(clean) for _ in g]
        self.time_strip.follow(None, self.glw)   # (off the plot before it goes)
        self.glw.ci.clear()
        for r in range(self.glw.ci.layout.rowCount()):
            self.glw.ci.layout.setRowFixedHeight(r, -1)      # a footer row's fixed height must not stay
            self.glw.ci.layout.setRowMinimumHeight(r, 0)
            self.glw.ci.layout.setRowPreferredHeight(r, -1)
            self.glw.ci.layout.setRowStretchFactor(r, 1)
        for lines in self._plot_lines:
            lines.release()
        self._plot_lines = []
        self.plots, self.curves, self.cursors, self.capture_lines, self.ranges = [], [], [], [], []
        self.titles, self._top_px, self._min_span = [], [], []
        self.ghost_curves, self.diff_plot, self.diff_curve, self.diff_rows = [], None, None, []
        self._measured_of, self.measured_diff_plots = {}, {}
        self._ghost_of, self._yfit = {}, []
        self._yfits.clear()
        self._next, self._pending = None, []
        self._xrange, self._early = None, None
        self.glw.release()
        self._span = None
        if run is None:
            self._no_run_note()
            self._build_xy()
            self._update_readout()
            self.plotsChanged.emit(list(self.names))
            return
        first = None
        spans = unit_spans(run, run.stored_abs_max)
        for i, group in enumerate(clean):
            unit = run.channels[group[0]].unit
            self._min_span.append(max(channel_span(run, n, spans) for n in group))
            plot = self.glw.addPlot(row=i, col=0, enableMenu=False,   # (no context menus built)
                                    axisItems={"bottom": TimeAxis("bottom"), "left": ValueAxis("left", unit)})
                                    # scrolls reuse tick drawings; the next step's are drawn ahead (_prepare_next)
            style_plot(plot)
            title = plot_label("", color=self.color_of(group[0]), size=style.PLOT_TITLE, tight=True)
            title.setParentItem(plot.getViewBox())
            title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 1))
            self.titles.append(title)
            self._top_px.append(0.0)
            for ax in ("left", "bottom"):
                plot.getAxis(ax).setStyle(maxTickLevel=1, maxTextLevel=1)   # major and minor ticks: half the work
            plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # a scroll mostly
            # keeps the y range: its text and grid are blitted (the time axes, curves change with every scroll)
            for ax in ("bottom", "top", "right"):   # no label re-layout on every scroll (hidden axes too)
                plot.getAxis(ax).enableAutoSIPrefix(False)
            label_time(plot, not (i < len(clean) - 1 or self._footer_shown() or self._extra_rows()))
            for name in group:
                curve = Trace(pen=pg.mkPen(self.color_of(name), width=1))   # data: the frames around the x range
                plot.addItem(curve)                                           # (_load_span)
                curve.opts["autoDownsampleFactor"] = DOWNSAMPLE_PER_PX
                curve.setDownsampling(auto=True, method="peak")
                curve.setClipToView(True)
                curve.setSkipFiniteCheck(True)
                self.curves.append(curve)
            if len(group) > 1:                   # overlaid channels: their lines drawn ahead into one image
                self._plot_lines.append(PlotLines([c.curve for c in self.curves[-len(group):]]))
            vb = plot.getViewBox()
            vb.setMouseEnabled(x=False, y=False)
            vb.disableAutoRange(axis="y")        # the y range is fitted to the shown data by _fit_y (cheaper)
            vb.sigResized.connect(lambda _vb, k=i: self._fit_y(k))
            self._yfit.append(None)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            if math.isfinite(run.t_capture):
                cap = CursorLine(run.t_capture, pg.mkPen(style.CAPTURE, width=1, style=Qt.DashLine))
                plot.addItem(cap, ignoreBounds=True)
                self.capture_lines.append(cap)
            region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(*style.LOOP_RANGE_FILL),
                                         pen=pg.mkPen(*style.LOOP_RANGE_EDGE))
            region.setZValue(-10)
            region.setVisible(False)
            plot.addItem(region, ignoreBounds=True)
            self.ranges.append(region)
            self.cursors.append(TimeCursor(self.t_current, pg.mkPen(style.CURSOR, width=1.5), plot))
            self.plots.append(plot)
        shared = OrderedDict()   # the plots' unlabelled time axes are built alike: they share their tick drawings
        for a in (p.getAxis("bottom") for p in self.plots):
            if isinstance(a, TimeAxis) and not a.style["showValues"]:
                a.share_drawings(shared)
        first = self._add_compare(first)
        first = self._add_measured(first)
        self._set_legends()
        self._add_footer(first)
        footer_cursor = getattr(self.footer, "cursor", None) if self._footer_shown() else None
        self.glw.set_cursors(self.cursors + ([footer_cursor] if isinstance(footer_cursor, TimeCursor) else []))
        self.cursors_ab.attach(self._strip_rows())
        self.set_loop_range_time(self.loop_range_t)
        self._size_rows()
        self._apply_xrange(force=True)
        self._fit_y()
        self._build_xy()
        self._update_readout()
        self.plotsChanged.emit(list(self.names))

    def color_of(self, name: str) -> str:
        """A plotted channel's colour (its place among the plotted channels; the readout box names it alike)."""
        k = self.names.index(name) if name in self.names else 0
        return style.TRACE_COLORS[k % len(style.TRACE_COLORS)]

    def _set_legends(self):
        """Each plot's legend (its channels with units; the measured record's and run B's dashed curves) and the
        px it takes at the top of its view, kept free of data (_y_range)."""
        units = self.run.channels
        for i, group in enumerate(self.groups):
            entries = [(self.color_of(n), f"{n} [{units[n].unit}]" if units[n].unit else n, False) for n in group]
            if any(n in self._measured_of for n in group):
                entries.append((style.MEASURED, "measured", True))
            if any(n in self._ghost_of for n in group):
                entries.append((style.KEY_TEXT, f"B: {self.compare_run.path.stem}", True))
            self.titles[i].setText(legend_html(entries), color=self.color_of(group[0]))
            self._top_px[i] = self.titles[i].item.boundingRect().height() + 2

    def legend_texts(self, index: int) -> str:
        """Plot `index`'s legend as plain text (what a user reads)."""
        from PySide6.QtGui import QTextDocument
        doc = QTextDocument()
        doc.setHtml(self.titles[index].text)
        return doc.toPlainText()

    def figure_spec(self) -> dict:
        """What the plots show, for a report figure: {"plots": [[channel, …], …], "xy": [(chx, chy), …],
        "t": (t0, t1)} (t: the shown time range, None without a run)."""
        rng = self.x_range()
        return {"plots": [list(g) for g in self.groups], "xy": list(self.xy_pairs),
                "t": (float(rng[0]), float(rng[1])) if rng is not None else None}

    # ---- XY plots ---------------------------------------------------------------------------
    def add_xy(self, chx: str, chy: str) -> bool:
        """An XY plot of chy against chx over the shown interval (False: a channel the run lacks)."""
        if self.run is None or chx not in self.run.channels or chy not in self.run.channels:
            self.refused.emit(f"XY plot {chy} against {chx}: not channels of the open run")
            return False
        if (chx, chy) not in self.xy_pairs:
            self.xy_pairs.append((chx, chy))
        self._build_xy()
        return True

    def remove_xy(self, index: int):
        if 0 <= index < len(self.xy_pairs):
            del self.xy_pairs[index]
            self._build_xy()

    def _build_xy(self):
        self.xy_view.ci.clear()
        self.xy_plots = []
        self.xy_view.setVisible(bool(self.xy_pairs) and self.run is not None)
        if self.run is None or not self.xy_pairs:
            return
        if self.split.sizes()[1] < 50:
            w = sum(self.split.sizes())
            self.split.setSizes([int(w * 0.6), int(w * 0.4)])
        for k, (chx, chy) in enumerate(self.xy_pairs):
            color = style.TRACE_COLORS[(len(self.names) + k) % len(style.TRACE_COLORS)]
            self.xy_plots.append(XYPlot(self.xy_view, k, self.run, chx, chy, color))
        self._update_xy(force=True)

    def _update_xy(self, force: bool = False):
        """The XY plots' curves over the shown interval (when it changed) and their T Current points."""
        if not self.xy_plots or self.run is None:
            return
        rng = self.x_range()
        if rng is None:
            return
        if force or getattr(self, "_xy_range", None) != rng:
            self._xy_range = rng
            t = self.run.time
            a, b = int(np.searchsorted(t, rng[0], side="left")), int(np.searchsorted(t, rng[1], side="right"))
            for xy in self.xy_plots:
                xy.set_data(self.blocks.window(xy.chx, a, b), self.blocks.window(xy.chy, a, b))
        for xy in self.xy_plots:
            xy.mark(self.blocks.value(xy.chx, self.frame), self.blocks.value(xy.chy, self.frame))

    # ---- cursors ------------------------------------------------------------------------------
    def set_measuring(self, on: bool):
        """The two measuring cursors A, B in every time plot (placed in the shown range), or none."""
        if self.act_measure.isChecked() != bool(on):
            self.act_measure.setChecked(bool(on))   # (toggled: comes back here)
            return
        self.cursors_ab.set_on(on, self.x_range())

    def measure_readout(self) -> list[str]:
        """The measuring cursors' readout lines (empty when they are off); made again only when the cursors or
        the plotted channels change (not each frame)."""
        ab = self.cursors_ab.times()
        if ab is None or self.run is None:
            return []
        key = (ab, tuple(self.names), id(self.run))
        if getattr(self, "_measure_memo", (None,))[0] == key:
            return self._measure_memo[1]
        rows = []
        for name in self.names:
            ya, yb = (self.value_at_time(name, t) for t in ab)
            rows.append((name, self.run.channels[name].unit, ya, yb))
        self._measure_memo = (key, measure_lines(*ab, rows))
        return self._measure_memo[1]

    def value_at_time(self, name: str, t: float) -> float:
        """A channel's value at run time t, linear between frames (NaN outside the run)."""
        time = self.run.time
        if not (time[0] <= t <= time[-1]):
            return math.nan
        i = min(max(int(np.searchsorted(time, t)), 1), self.run.n_frames - 1)
        y = np.array([self.blocks.value(name, i - 1), self.blocks.value(name, i)])   # (blocks kept: no read)
        return value_at(np.asarray(time[i - 1:i + 1]), y, t)

    def hover_at(self, t: float | None, index: int = -1):
        """The hover line at run time t in every time plot, the values of plot `index`'s channels beside it."""
        if t is None or self.run is None or not (0 <= index < len(self.plots)):
            self.cursors_ab.hover(None)
            return
        units = self.run.channels
        lines = [f"<span style='color:{style.TEXT}'>{t:.4f} s</span>"]
        for n in self.groups[index]:
            lines.append(f"<span style='color:{self.color_of(n)}'>{n} {value_text(self.value_at_time(n, t), units[n].unit)}"
                         "</span>")
            if self.measured is not None and n in self.measured.record:
                m = value_at(self.measured.record_time, self.measured.record[n], t)
                lines.append(f"<span style='color:{style.MEASURED}'>{n} measured {value_text(m, units[n].unit)}</span>")
        self.cursors_ab.hover(t, self.plots[index], lines)

    def add_plot_actions(self, menu, index: int):
        """Entries of the plots' context menu for plot `index` (-1: none): remove a channel, XY plots of its
        channels against the other plotted ones, the measuring cursors."""
        menu.addSeparator()
        if 0 <= index < len(self.groups):
            group = list(self.groups[index])
            for n in group:
                menu.addAction(f"Remove {n} from the plots", lambda n=n: self.remove_channel(n))
            others = [n for n in self.names if n not in group]
            if others:
                sub = menu.addMenu(f"XY plot: {group[0]} against…")
                for n in others:
                    sub.addAction(n, lambda n=n, y=group[0]: self.add_xy(n, y))
        for k, (chx, chy) in enumerate(self.xy_pairs):
            menu.addAction(f"Close XY plot {chy} against {chx}", lambda k=k: self.remove_xy(k))
        menu.addAction(self.act_measure)

    # ---- dropped channels -------------------------------------------------------------------
    def _drop_target(self, pos) -> int:
        """The plot under viewport position `pos` (-1: none; a drop there makes a new plot)."""
        return self._plot_at(self.glw.mapToScene(pos))

    # ---- footer (contact lanes) -----------------------------------------------------------
    def set_footer(self, item: pg.PlotItem | None):
        """Put a plot item (the contact lanes) under the plots, x-linked to them; it keeps its own height."""
        self.footer = item
        self.set_plotted(self.names)

    def set_footer_visible(self, on: bool):
        self.footer_visible = bool(on)
        self.set_plotted(self.names)

    def footer_changed(self):
        """The footer's wanted height changed (e.g. the lanes got a run's events): size its row again."""
        self._size_footer()

    def _footer_shown(self) -> bool:
        return self.footer is not None and self.footer_visible and self.run is not None

    def _add_footer(self, first):
        if not self._footer_shown():
            if self.footer is not None:
                self.footer.setVisible(False)
            return
        f = self.footer
        f.setVisible(True)
        row = len(self.groups) + self._extra_rows()
        self.glw.addItem(f, row=row, col=0)
        self._size_footer()
        self.glw.ci.layout.setRowStretchFactor(row, 0)
        f.setXLink(first if first is not None else None)

    def _size_footer(self):
        """The footer keeps its wanted height, but at most half the pane's height; where the plots' MIN_PLOT_H do
        not fit beside it, the pane scrolls and the footer gets all its wanted height."""
        if not self._footer_shown():
            return
        want = self.footer.height_px() if hasattr(self.footer, "height_px") else 80
        row = len(self.groups) + self._extra_rows()
        visible = self.plots_scroll.height()
        height = min(want, visible // 2)
        if self.rows_scroll and row * MIN_PLOT_H + TIME_AXIS_H + height > visible:   # the pane scrolls anyway:
            height = want                                                              # lanes at their height
        self.glw.ci.layout.setRowFixedHeight(row, max(30, height))
        self._size_rows()

    def resizeEvent(self, e):
        self._drop_early()
        super().resizeEvent(e)
        self._size_footer()
        self._place_time_strip()

    # ---- comparison with a second run (dashed curves, difference plot) --------------------
    def set_compare(self, run_b: RunFile | None, offset: float = 0.0, diff_name: str | None = None):
        """Draw run B's plotted channels dashed (B shifted by `offset` s) and A − B of `diff_name` below."""
        self.compare_run, self.compare_offset, self.diff_name = run_b, float(offset), diff_name
        self.set_plotted(self.names)

    def _diff_shown(self) -> bool:
        return (self.compare_run is not None and self.run is not None and self.diff_name is not None
                and self.diff_name in self.run.channels and self.diff_name in self.compare_run.channels)

    def _add_compare(self, first):
        """Dashed B curves in each plot that B has; the difference plot as the last row. Returns the x master."""
        b = self.compare_run
        if b is None or self.run is None:
            return first
        self._ghost_of = ghost_curves(self.plots, self.names, self.plot_of, b, self.compare_offset,
                                      [self.color_of(n) for n in self.names])
        self.ghost_curves = list(self._ghost_of.values())
        if not self._diff_shown():
            return first
        row = difference_plot(self.glw, len(self.groups), self.run, b, self.diff_name, self.compare_offset,
                              self.blocks, not (self._footer_shown() or self._measured_diff_names()))
        plot, self.diff_curve = row.plot, row.curve
        plot.getViewBox().sigResized.connect(lambda _vb, d=row: self._xrange is not None and self._fit_difference(d))
        self.diff_rows.append(row)
        self.diff_plot = plot
        self.titles.append(row.title)
        self.cursors.append(TimeCursor(self.t_current, pg.mkPen(style.CURSOR, width=1.5), plot))
        if first is None:
            return plot
        plot.setXLink(first)
        return first

    def _extra_rows(self) -> int:
        """Rows under the plots before the footer: the A − B plot and the measured − run plots."""
        return (1 if self._diff_shown() else 0) + len(self._measured_diff_names())

    # ---- a measured record (dashed at its own rate, measured − run plots) -------------------
    def set_measured(self, comparison, diff: bool | None = None):
        """Draw a measured record (a solver.measured.Comparison, None: none) dashed over its run channels' plots;
        `diff`: also a measured − run plot per plotted measured channel (None: as before)."""
        self.measured = comparison
        if diff is not None:
            self.measured_diff = bool(diff)
        self.set_plotted(self.names)

    def _measured_diff_names(self) -> list[str]:
        m = self.measured
        if m is None or not self.measured_diff or self.run is None:
            return []
        return [n for n in self.names if n in m.measured]

    def _add_measured(self, first):
        """The record's dashed curves; its difference plots as the last rows. Returns the x master."""
        m = self.measured
        if m is None or self.run is None:
            return first
        self._measured_of = measured_curves(self.plots, self.names, self.plot_of, m)
        diff_names = self._measured_diff_names()
        row = len(self.groups) + (1 if self._diff_shown() else 0)
        for k, name in enumerate(diff_names):
            unit = m.units.get(name, "")
            d = difference_row(self.glw, row + k, f"Δ {name} (measured − run) [{unit}]", m.time, m.difference(name),
                               unit, self.blocks.abs_max(name), k == len(diff_names) - 1 and not self._footer_shown())
            plot, curve, title = d.plot, d.curve, d.title
            plot.getViewBox().sigResized.connect(lambda _vb, d=d: self._xrange is not None and self._fit_difference(d))
            self.diff_rows.append(d)
            self.measured_diff_plots[name] = (plot, curve)
            self.titles.append(title)
            self.cursors.append(TimeCursor(self.t_current, pg.mkPen(style.CURSOR, width=1.5), plot))
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
        return first

    def measured_values(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The dashed measured curve of channel `name` as drawn (time, values); None if not drawn."""
        c = self._measured_of.get(name)
        return None if c is None else (np.asarray(c.xData), np.asarray(c.yData))

    def measured_difference_values(self, name: str) -> np.ndarray | None:
        """The measured − run plot's data of channel `name` (on the run's frames); None if not shown."""
        pc = self.measured_diff_plots.get(name)
        return None if pc is None else np.asarray(pc[1].yData)

    def difference_values(self) -> np.ndarray | None:
        """The difference curve's data (A − B on A's frames), None without one."""
        return None if self.diff_curve is None else np.asarray(self.diff_curve.yData)

    # ---- a run still being written ---------------------------------------------------------
    def refresh_live(self, blocks: ChannelBlocks):
        """The run grew: read the plotted frames around the x range again (layout kept)."""
        for _ in self.refresh_live_steps(blocks):
            pass
        self._apply_xrange(force=True)

    def refresh_live_steps(self, blocks: ChannelBlocks, frame: int | None = None):
        """`refresh_live` in steps (a generator, one curve per step), loading the frames around the x range
        that `frame` (default: the shown one) will have; showing that frame then only moves the x range."""
        self.blocks = blocks
        self.facts.set_running(self.run)   # (T capture known as soon as the solver has it)
        if not self.curves:
            return
        t = float(self.run.time[self.frame if frame is None else min(int(frame), self.run.n_frames - 1)])
        span = self._span_for(self._range_at(t))
        yield from load_curves(self.run, self.names, self.curves, blocks, span)
        self._span = span
        self._fit_y()
    # ---- time -----------------------------------------------------------------------------
    def set_graph_step(self, seconds: float):
        self.graph_step = float(seconds)
        self.facts.set_graph_step(seconds)
        self._apply_xrange(force=True)

    def set_scrolling(self, on: bool):
        """Scrolling window (True) or the whole run (False); a wheel zoom ends."""
        self.scrolling = bool(on)
        if self.zoom is not None:
            self.zoom = None
            self.zoomChanged.emit(None)
        self._apply_xrange(force=True)

    def set_window(self, seconds: float):
        self.window = max(float(seconds), 1e-3)
        self._apply_xrange(force=True)

    def set_loop_range_time(self, rng: tuple[float, float] | None):
        """Shade the loop range (run times) in every plot, or hide it for None."""
        self.loop_range_t = rng
        for reg in self.ranges:
            reg.setVisible(rng is not None)
            if rng is not None:
                reg.setRegion(rng)

    def show_frame(self, frame: int):
        """Move the yellow line and the readouts to this frame; scroll the window if needed."""
        if self.run is None:
            return
        self.frame = int(frame)
        self.t_current = float(self.run.time[self.frame])
        for c in self.cursors:
            c.place(self.t_current)
        shown = self.x_range()
        self._apply_xrange()
        self.glw.move_cursors(self.cursors)
        self._update_readout()
        if self.xy_plots:
            self._update_xy()
        if self.x_range() == shown:     # not in a frame that scrolls (it has enough to draw)
            self._prepare_next()
            self._scroll_ahead()

    @property
    def playing(self) -> bool:
        """Whether the playback model plays (while playing, a scroll step is applied a frame ahead)."""
        return self.playback.playing if self.playback is not None else self._playing

    def set_playing(self, on: bool):
        """Playing started or stopped (the model's playingChanged); a pause shows the step's range the paused
        frame belongs to."""
        self._playing = bool(on)
        if not on:
            self._drop_early()

    def _drop_early(self):
        """Back to the x range of the frame shown, if the next step's was applied ahead."""
        if self._early is not None:
            self._early = None
            self.glw.release()
            self._apply_xrange()

    def x_range(self) -> tuple[float, float] | None:
        """The x range shown."""
        return self._early if self._early is not None else self._xrange

    def _scroll_ahead(self):
        """While playing, when the next frame starts a scroll step whose drawings are all made (_prepare_next),
        apply its x range now and keep this frame's pixels (PlotsView.hold): that frame only paints. Pixels and
        cursors are those of the frame shown; anything else than the next frames drops it (_apply_xrange)."""
        if (not self.playing or not self.scrolling or self._early is not None or self._pending
                or self._xrange is None or self._x_master() is None):
            return
        nf = self._next_frame()
        if nf is None or nf >= self.run.n_frames:
            return
        nxt = self._range_at(float(self.run.time[nf]))
        if nxt == self._xrange or nxt != self._next or not self.glw.hold():
            return
        self._early = self._xrange
        self._load_span(nxt)
        self._set_xrange(nxt)

    def _x_master(self):
        if self.plots:
            return self.plots[0]
        return self.diff_plot or next((p for p, _ in self.measured_diff_plots.values()), None) or \
            (self.footer if self._footer_shown() else None)

    def _apply_xrange(self, force: bool = False):
        if self.run is None or self._x_master() is None:
            return
        rng = self._range_at(self.t_current)
        if self._early is not None:                # the next step's range applied ahead (_scroll_ahead)
            if not force and rng == self._early:   # still the shown step: its pixels are kept
                return
            self._early = None
            self.glw.release()
            if not force and rng == self._xrange:  # the step applied ahead: shown now
                return
        loaded = self._load_span(rng)
        if force or rng != self._xrange:
            self._set_xrange(rng, force)
        elif loaded:
            self._fit_y()
            self._settle_views()

    def _set_xrange(self, rng: tuple[float, float], force: bool = False):
        self._xrange = rng
        self._direct = not force and self._scroll_views(rng)
        if not self._direct:
            self._x_master().setXRange(*rng, padding=0)
        self._fit_y()
        self._settle_views()
        if self.xy_plots:
            self._update_xy()

    def _x_views(self) -> list:
        """The view boxes on the shared time axis: the plots, the difference plot, the footer."""
        return [p.getViewBox() for p in self._time_plots()]

    def _time_plots(self) -> list:
        """The plots on the shared time axis: the channels', the difference plots, the footer."""
        return self.plots + [p for p in (self.diff_plot, *(p for p, _ in self.measured_diff_plots.values()),
                                          self.footer if self._footer_shown() else None) if p]

    def _scroll_views(self, rng: tuple[float, float]) -> bool:
        """Give every x-linked view the x range `rng` in one pass, as their links would (same range, same
        signals to their items and axes) without each view passing the change on to the others; False (nothing
        done) when a view is not a plain follower of the master (auto range, limits, other screen width)."""
        views = self._x_views()
        master = self._x_master().getViewBox()
        x0, x1 = float(rng[0]), float(rng[1])
        if not all(plain_follower(vb, master, x0, x1) for vb in views):
            return False
        set_x_ranges(views, x0, x1)
        return True

    def _settle_views(self):
        """Apply the new ranges to the views' transforms now: done in the paint (pyqtgraph's default), the
        curves' geometry changes there and Qt paints the plots a second time on the next event-loop turn."""
        for vb in self._x_views():
            vb.prepareForPaint()

    def _fit_y(self, which: int | None = None):
        """Each plot's y range: its curves' data inside the x range, padded as pyqtgraph's auto range pads
        (a cosmetic pen's pixel margin, then the view's suggested padding), widened for 3 labelled ticks and its
        legend's strip (yfit.readable_range); set only when it changes. Difference plots: the same, spanning at
        least their floor (ghosts.difference_row)."""
        if self._xrange is None:
            return
        for i, plot in enumerate(self.plots):
            if which is not None and i != which:
                continue
            key = self._y_range(i, self._xrange)
            if key is not None and key != self._yfit[i]:
                self._yfit[i] = key
                plot.getViewBox().setRange(yRange=key, padding=0.0)
            self._clear_legend(plot, self._top_px[i])
        if which is None:
            for row in self.diff_rows:
                self._fit_difference(row)

    def _clear_legend(self, plot, top_px: float):
        """No time line crosses the plot's legend: they stop under its strip (view.keep_legend_clear)."""
        keep_legend_clear(plot, top_px)
        for c in self.cursors:
            if c.plot is plot and c.top_px != top_px:
                c.top_px = top_px
                if c.view is not None:
                    c.view.viewport().update()

    def _fit_difference(self, row):
        c, vb = row.curve, row.plot.getViewBox()
        b = visible_bounds(c.xData, c.yData, *self._xrange) if c.xData is not None and len(c.xData) else None
        lo, hi = b if b is not None else (0.0, 0.0)
        lo, hi = min(lo, -row.floor), max(hi, row.floor)
        if not hi > lo:
            lo, hi = -1.0, 1.0
        y = readable_range(lo, hi, vb.height(), label_px(), row.title.item.boundingRect().height() + 2, label_room())
        if y != vb.viewRange()[1]:
            vb.setRange(yRange=y, padding=0.0)
        self._clear_legend(row.plot, row.title.item.boundingRect().height() + 2)

    def _y_range(self, i: int, xrange: tuple[float, float]) -> tuple[float, float] | None:
        """Plot i's fitted y range for this x range (None: no finite data in it)."""
        names = self.groups[i]
        curves = [self.curves[k] for k, p in enumerate(self.plot_of) if p == i]
        curves += [c for n in names for c in (self._ghost_of.get(n), self._measured_of.get(n)) if c is not None]
        vb = self.plots[i].getViewBox()
        y = self._yfits.y_range(i, xrange, curves, vb)
        if y is None:
            return None
        y = with_floor(y[0], y[1], self._min_span[i])
        return readable_range(y[0], y[1], vb.height(), label_px(), self._top_px[i], label_room())

    def _prepare_next(self):
        """While playing in a scrolling window, make the next GraphStep's drawings ahead, spread evenly (by their
        rough cost) over the frames left before that step: each line's display data and image, the lane bars, the
        value axes whose range the step changes, the time axes. The scroll then only shows them."""
        if not self.scrolling or self._xrange is None or self.graph_step <= 0 or self.zoom is not None:
            self._pending = []
            return
        plan = plan_ahead(self.run.time, self._xrange, self.window, self.graph_step, self.frame, self._stride(),
                          self.playing and self.scrolling)
        if plan is None:
            self._pending = []
            return
        nxt = plan.next_range
        if nxt != self._next:
            self._next = nxt
            traces = [(self.plot_of[k], c) for k, c in enumerate(self.curves) if isinstance(c, Trace)]
            todo = [(COST_DATA, lambda c=c: c.prepare(*nxt, exact=self._direct)) for _, c in traces]   # display
            merged = {i for i, c in traces if c.curve.lines is not None}     # data, then images: one per line,
            todo += [(COST_LINE, lambda i=i, c=c: c.rasterize_ahead(*nxt, self._y_range(i, nxt), self.glw))  # one per
                     for i, c in traces if i not in merged]                                 # plot of several lines
            todo += [(COST_LINE, lambda i=i: rasterize_plot_ahead([c for k, c in traces if k == i], *nxt,
                                                                  self._y_range(i, nxt), self.glw)) for i in sorted(merged)]
            if self._footer_shown() and callable(getattr(self.footer, "prepare", None)):
                todo.append((COST_BARS, lambda f=self.footer: f.prepare(nxt)))              # (the contact lanes' bars)
            for i, p in enumerate(self.plots):
                y = self._y_range(i, nxt)
                if y is not None and y != self._yfit[i]:
                    todo.append((COST_LABELLED_AXIS, lambda a=p.getAxis("left"), y=y: a.prepare(y)))
            bottoms = [p.getAxis("bottom") for p in self.plots]
            if self._footer_shown():
                bottoms.append(self.footer.getAxis("bottom"))
            todo += [(COST_AXIS if a.has_drawing(nxt) else COST_LABELLED_AXIS if a.style["showValues"] else
                      COST_DRAWN_AXIS, lambda a=a: a.prepare(nxt)) for a in bottoms]
            self._pending = todo
        now = drawings_now([c for c, _ in self._pending], plan.frames_left)
        todo, self._pending = self._pending[:now], self._pending[now:]
        for _, make in todo:
            make()

    def _stride(self) -> int:
        """Frames per shown frame: the playback model's stride while playing, else 1 (a step)."""
        return self.playback.stride if self.playback is not None and self.playing else 1

    def _next_frame(self) -> int | None:
        """The frame the playback model expects to show next (frame + 1 without a model)."""
        if self.playback is None:
            return self.frame + 1
        return self.playback.next_frame

    def _range_at(self, t: float) -> tuple[float, float]:
        """The x range at run time t: the wheel-zoomed range, the scrolling window, or the whole run."""
        if self.zoom is not None:
            return self.zoom
        return range_at(self.run.time, t, self.scrolling, self.window, self.graph_step)

    def _span_for(self, rng: tuple[float, float]) -> tuple[int, int]:
        """Frames to load for an x range: those in it plus a window either side (all frames when not scrolling)."""
        return span_for(self.run.time, rng, self.scrolling, TIME_CHUNK)

    def _load_span(self, rng: tuple[float, float]):
        """Give the curves the frames of the x range plus a window either side (the whole run when not
        scrolling); read again only when the x range leaves the frames loaded."""
        a, b = frames_in(self.run.time, rng)
        if self._span is not None and self._span[0] <= a and b <= self._span[1]:
            return False
        self._span = self._span_for(rng)
        for _ in load_curves(self.run, self.names, self.curves, self.blocks, self._span):
            pass
        return True

    def loaded_span(self) -> tuple[int, int] | None:
        """Frames [a, b) the curves hold (the x range and a margin; all frames when not scrolling)."""
        return self._span

    def values(self) -> dict[str, float]:
        """The plotted channels' values at the shown frame (what the readout box prints)."""
        if self.run is None:
            return {}
        return {n: self.blocks.value(n, self.frame) for n in self.names}

    def _measured_at(self, name: str) -> float | None:
        """The measured record's value of a plotted channel at the shown frame (on the run's grid; NaN outside
        the record), None without a record of it."""
        m = self.measured
        if m is None or name not in m.measured or self.run is None:
            return None
        arr = m.measured[name]
        return float(arr[self.frame]) if self.frame < len(arr) else math.nan

    def _update_readout(self):
        if self.run is None:
            self.facts.show_values(None, [])
            self.facts.show_measure([])
            return
        units = self.run.channels
        self.facts.show_values(self.t_current, [(n, v, units[n].unit, self._measured_at(n))
                                                for n, v in self.values().items()],
                               [self.color_of(n) for n in self.names])
        self.facts.show_measure(self.measure_readout())

    # ---- seeking by click -----------------------------------------------------------------
    def _on_click(self, ev):
        if self.run is None:
            return
        if ev.button() == Qt.RightButton:
            ev.accept()
            i = self._plot_at(ev.scenePos())
            self.menuRequested.emit(i, QPointF(ev.screenPos()))
            return
        if ev.button() != Qt.LeftButton:
            return
        if ev.double():     # (the zoom's way back: eventFilter)
            return
        self._drop_early()   # (the view boxes map as the pixels show them)
        t = clicked_time(ev.scenePos(), self.plots + ([self.footer] if self._footer_shown() else []))
        if t is not None:
            ev.accept()
            self.seekRequested.emit(t)

    def _plot_at(self, scene_pos) -> int:
        """Index of the channel plot under a scene position, -1 if none."""
        return next((i for i, p in enumerate(self.plots) if p.sceneBoundingRect().contains(scene_pos)), -1)

    def _view_at(self, scene_pos) -> int:
        """Index of the channel plot whose view box (its data area) holds a scene position, -1 if none."""
        return next((i for i, p in enumerate(self.plots) if p.getViewBox().sceneBoundingRect().contains(scene_pos)),
                    -1)

    def _mouse(self, ev) -> bool:
        """Hover readout and the strips' borders (cursor shape, drag); True when the event is used up here."""
        et = ev.type()
        vp = self.glw.viewport()
        if et == QEvent.Leave:
            self.hover_at(None)
            return False
        pos = ev.position()
        if et == QEvent.MouseButtonPress and ev.button() == Qt.LeftButton:
            r = self._strip_border_at(pos.y())
            if r >= 0:
                hs = self.strip_heights()
                self._drag_strip = (r, pos.y(), (hs[r], hs[r + 1]))
                return True
            return False
        if et == QEvent.MouseButtonRelease and self._drag_strip is not None:
            self._drag_strip = None
            return True
        if et == QEvent.MouseMove:
            if self._drag_strip is not None:
                self._drag_strip_to(pos.y())
                return True
            if ev.buttons() == Qt.NoButton:
                over = self._strip_border_at(pos.y()) >= 0
                if over:
                    vp.setCursor(Qt.SplitVCursor)
                else:
                    vp.unsetCursor()
                scene_pos = self.glw.mapToScene(pos.toPoint())
                i = self._view_at(scene_pos)
                t = clicked_time(scene_pos, self.plots) if i >= 0 and not over else None
                self.hover_at(t, i)
        return False

    # ---- wheel zoom on the time axis (a view range; the playback model keeps time) ----------------
    def eventFilter(self, obj, ev):
        if obj is self.glw.viewport() and self.run is not None:
            et = ev.type()
            if et in (QEvent.MouseMove, QEvent.MouseButtonPress, QEvent.MouseButtonRelease, QEvent.Leave):
                if self._mouse(ev):
                    return True
            elif et in (QEvent.DragEnter, QEvent.DragMove):
                if ev.mimeData().hasFormat(CHANNEL_MIME) or ev.mimeData().hasText():
                    ev.acceptProposedAction()
                    return True
            elif et == QEvent.Drop:
                md = ev.mimeData()
                name = bytes(md.data(CHANNEL_MIME)).decode() if md.hasFormat(CHANNEL_MIME) else md.text().strip()
                if self.add_channel(name, self._drop_target(ev.position().toPoint())):
                    ev.acceptProposedAction()
                return True
        if obj is self.glw.viewport() and ev.type() == QEvent.Wheel and self.run is not None:
            steps = ev.angleDelta().y() / 120.0
            t = clicked_time(self.glw.mapToScene(ev.position().toPoint()), self._time_plots())
            if steps and t is not None:
                self.zoom_time(0.8 ** steps, t)
                ev.accept()
                return True
        if (obj is self.glw.viewport() and ev.type() == QEvent.MouseButtonDblClick
                and ev.button() == Qt.LeftButton):
            self.reset_zoom()          # a double-click: back to the window following T Current
        return super().eventFilter(obj, ev)

    def zoom_time(self, factor: float, about: float):
        """Scale the shown time range by `factor` (< 1: in) about run time `about`; it stays until reset_zoom."""
        x0, x1 = self.x_range() or self._range_at(self.t_current)
        t0, t1 = float(self.run.time[0]), float(self.run.time[-1])
        x0, x1 = max(x0, t0), min(x1, t1)                  # (a window wider than the run: the run)
        width = min(max((x1 - x0) * factor, 1e-3), t1 - t0)
        a = about - (about - x0) * width / (x1 - x0)
        a = min(max(a, t0), t1 - width)
        self._drop_early()
        self.zoom = (a, a + width)
        self._apply_xrange(force=True)
        self.zoomChanged.emit(self.zoom)

    def reset_zoom(self):
        """Back to the window that follows T Current (or the whole run)."""
        if self.zoom is None:
            return
        self.zoom = None
        self._apply_xrange(force=True)
        self.zoomChanged.emit(None)
