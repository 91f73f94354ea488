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
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGraphicsItem, QHBoxLayout, QWidget

from solver import mechanisms
from solver.runfile import TIME_CHUNK, RunFile
from viewer import style
from viewer.channel_blocks import ChannelBlocks
from viewer.playback import Playback
from viewer.plots.ahead_plan import (COST_AXIS, COST_BARS, COST_DATA, COST_DRAWN_AXIS, COST_LABELLED_AXIS, COST_LINE,
                                     DEFAULT_WINDOW, drawings_now, frames_in, plan_ahead, range_at, span_for)
from viewer.plots.axes import ValueAxis, label_time, style_plot
from viewer.plots.facts import FactsPanel, scroll_area
from viewer.plots.ghosts import difference_plot, ghost_curves
from viewer.plots.live import load_curves
from viewer.plots.pg_internals import plain_follower, set_x_ranges
from viewer.plots.seek import clicked_time
from viewer.plots.trace import Trace
from viewer.plots.view import CursorLine, PlotsView, TimeCursor, plot_label
from viewer.plots.yfit import YFits
from viewer.time_axis import TimeAxis

DOWNSAMPLE_PER_PX = 2.0   # samples per pixel drawn (min and max of each half pixel; pyqtgraph's default: 5)
MIN_PLOT_H = 36         # px of a plot's row at least: more plots than fit scroll (ticks and curve stay readable)
TIME_AXIS_H = 40        # px of the labelled time axis under the last plot


def default_plots(run: RunFile) -> list[str]:
    """The run's mechanism type's default plots that it has, else its first four channels."""
    chosen = [n for n in mechanisms.for_run(run).default_plots if n in run.channels]
    return chosen or list(run.channels)[:4]


class PlotsPane(QWidget):
    """Facts + readout box on the left; x-linked plots of the chosen channels on the right."""

    seekRequested = Signal(float)       # run time the user clicked in a plot
    graphStepEdited = Signal(float)     # GraphStep typed in the facts panel
    plotsChanged = Signal(list)         # the plotted channel names

    def __init__(self, playback: Playback | None = None, parent=None):
        super().__init__(parent)
        self.playback = playback   # the model that owns time: the next frame and the stride come from it
        self.run: RunFile | None = None
        self.blocks: ChannelBlocks | None = None
        self.names: list[str] = []
        self.frame = 0
        self.t_current = 0.0
        self.scrolling = True
        self.window = DEFAULT_WINDOW
        self.graph_step = 0.1
        self.plots: list[pg.PlotItem] = []
        self.curves: list[pg.PlotDataItem] = []
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
        self.plots_scroll = scroll_area(self.glw, style.BACKGROUND)   # plots keep MIN_PLOT_H; more scroll
        self.rows_scroll = True       # False (a video: nothing can scroll): the plots share the pane's height
        lay.addWidget(self.plots_scroll, 1)

    # ---- rows -----------------------------------------------------------------------------
    def _size_rows(self):
        """Room for every plotted value in the readout box and for MIN_PLOT_H per plot (the plots scroll)."""
        lines = len(self.names)
        self.facts.fit_rows(lines)
        rows = lines + (1 if self._diff_shown() else 0)
        footer = self.glw.ci.layout.rowMinimumHeight(rows) if self._footer_shown() else 0
        self.glw.setMinimumHeight(rows * MIN_PLOT_H + max(footer, 0) + TIME_AXIS_H if rows and self.rows_scroll else 0)

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
            self.set_plotted([])
            return
        self.frame = 0
        self.t_current = float(run.time[0])
        self.set_plotted(names if names is not None else default_plots(run))

    def set_plotted(self, names: list[str]):
        """Rebuild the plots for these channels (unknown names are dropped); loads only these channels."""
        run = self.run
        names = [n for n in dict.fromkeys(names) if run is not None and n in run.channels]
        for old in self.names:
            if old not in names and self.blocks is not None:
                self.blocks.drop_full(old)
        self.names = names
        self.glw.ci.clear()
        for r in range(self.glw.ci.layout.rowCount()):
            self.glw.ci.layout.setRowFixedHeight(r, -1)      # a footer row's fixed height must not stay
            self.glw.ci.layout.setRowStretchFactor(r, 1)
        self.plots, self.curves, self.cursors, self.capture_lines, self.ranges = [], [], [], [], []
        self.titles = []
        self.ghost_curves, self.diff_plot, self.diff_curve = [], None, None
        self._ghost_of, self._yfit = {}, []
        self._yfits.clear()
        self._next, self._pending = None, []
        self._xrange, self._early = None, None
        self.glw.release()
        self._span = None
        if run is None:
            self._update_readout()
            self.plotsChanged.emit(list(self.names))
            return
        first = None
        for i, name in enumerate(names):
            info = run.channels[name]
            plot = self.glw.addPlot(row=i, col=0, enableMenu=False,   # (no context menus built)
                                    axisItems={"bottom": TimeAxis("bottom"), "left": ValueAxis("left")})
                                    # scrolls reuse tick drawings; the next step's are drawn ahead (_prepare_next)
            style_plot(plot)
            color = style.TRACE_COLORS[i % len(style.TRACE_COLORS)]
            title = plot_label(f"{name} [{info.unit}]" if info.unit else name, color=color, size=style.PLOT_TITLE)
            title.setParentItem(plot.getViewBox())
            title.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=(4, 0))
            self.titles.append(title)
            for ax in ("left", "bottom"):
                plot.getAxis(ax).setStyle(maxTickLevel=1, maxTextLevel=1)   # major and minor ticks: half the work
            plot.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)   # a scroll mostly
            # keeps the y range: its text and grid are blitted (the time axes, curves change with every scroll)
            for ax in ("bottom", "top", "right"):   # no label re-layout on every scroll (hidden axes too)
                plot.getAxis(ax).enableAutoSIPrefix(False)
            label_time(plot, not (i < len(names) - 1 or self._footer_shown() or self._diff_shown()))
            curve = Trace(pen=pg.mkPen(color, width=1))   # data: the frames around the x range (_load_span)
            plot.addItem(curve)
            curve.opts["autoDownsampleFactor"] = DOWNSAMPLE_PER_PX
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            curve.setSkipFiniteCheck(True)
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
            self.curves.append(curve)
        shared = OrderedDict()   # the plots' unlabelled time axes are built alike: they share their tick drawings
        for a in (p.getAxis("bottom") for p in self.plots):
            if isinstance(a, TimeAxis) and not a.style["showValues"]:
                a.share_drawings(shared)
        first = self._add_compare(first)
        self._add_footer(first)
        footer_cursor = getattr(self.footer, "cursor", None) if self._footer_shown() else None
        self.glw.set_cursors(self.cursors + ([footer_cursor] if isinstance(footer_cursor, TimeCursor) else []))
        self.set_loop_range_time(self.loop_range_t)
        self._apply_xrange(force=True)
        self._fit_y()
        self._size_rows()
        self._update_readout()
        self.plotsChanged.emit(list(self.names))

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
        row = len(self.names) + (1 if self._diff_shown() else 0)
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
        row = len(self.names) + (1 if self._diff_shown() else 0)
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
        self._ghost_of = ghost_curves(self.plots, self.names, b, self.compare_offset)
        self.ghost_curves = list(self._ghost_of.values())
        if not self._diff_shown():
            return first
        plot, self.diff_curve, title = difference_plot(self.glw, len(self.names), self.run, b, self.diff_name,
                                                       self.compare_offset, self.blocks, not self._footer_shown())
        self.diff_plot = plot
        self.titles.append(title)
        self.cursors.append(TimeCursor(self.t_current, pg.mkPen(style.CURSOR, width=1.5), plot))
        if first is None:
            return plot
        plot.setXLink(first)
        return first

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
        """Scrolling window (True) or the whole run (False)."""
        self.scrolling = bool(on)
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
        return self.diff_plot or (self.footer if self._footer_shown() else None)

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

    def _x_views(self) -> list:
        """The view boxes on the shared time axis: the plots, the difference plot, the footer."""
        return [p.getViewBox() for p in
                self.plots + [p for p in (self.diff_plot, self.footer if self._footer_shown() else None) if p]]

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
        (a cosmetic pen's pixel margin, then the view's suggested padding); set only when it changes."""
        if self._xrange is None:
            return
        for i, plot in enumerate(self.plots):
            if which is not None and i != which:
                continue
            key = self._y_range(i, self._xrange)
            if key is not None and key != self._yfit[i]:
                self._yfit[i] = key
                plot.getViewBox().setRange(yRange=key, padding=0.0)

    def _y_range(self, i: int, xrange: tuple[float, float]) -> tuple[float, float] | None:
        """Plot i's fitted y range for this x range (None: no finite data in it)."""
        curves = [c for c in (self.curves[i], self._ghost_of.get(i)) if c is not None]
        return self._yfits.y_range(i, xrange, curves, self.plots[i].getViewBox())

    def _prepare_next(self):
        """While playing in a scrolling window, make the next GraphStep's drawings ahead, spread evenly (by their
        rough cost) over the frames left before that step: each line's display data and image, the lane bars, the
        value axes whose range the step changes, the time axes. The scroll then only shows them."""
        if not self.scrolling or self._xrange is None or self.graph_step <= 0:
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
            traces = [(i, c) for i, c in enumerate(self.curves) if isinstance(c, Trace)]
            todo = [(COST_DATA, lambda c=c: c.prepare(*nxt, exact=self._direct)) for _, c in traces]   # display
            todo += [(COST_LINE, lambda i=i, c=c: c.rasterize_ahead(*nxt, self._y_range(i, nxt), self.glw))  # data,
                     for i, c in traces]                                                            # then images
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
        """The x range at run time t: the scrolling window, or the whole run."""
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

    def _update_readout(self):
        if self.run is None:
            self.facts.show_values(None, [])
            return
        units = self.run.channels
        self.facts.show_values(self.t_current, [(n, v, units[n].unit) for n, v in self.values().items()])

    # ---- seeking by click -----------------------------------------------------------------
    def _on_click(self, ev):
        if ev.button() != Qt.LeftButton or self.run is None:
            return
        self._drop_early()   # (the view boxes map as the pixels show them)
        t = clicked_time(ev.scenePos(), self.plots + ([self.footer] if self._footer_shown() else []))
        if t is not None:
            ev.accept()
            self.seekRequested.emit(t)
