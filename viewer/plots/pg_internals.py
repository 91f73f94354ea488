"""The one place in dockmnemo that touches pyqtgraph's private attributes and methods.

Why: playing a 1 kHz run at 60 updates/s, the plots pane draws the next scroll step's curves, axes and lane
bars ahead, gives each curve its display data without pyqtgraph re-applying every style option on a scroll,
and moves all x-linked views in one pass. pyqtgraph's public API (PlotDataItem with
`setDownsampling(auto=True, method='peak')`, `setClipToView(True)`, `setXRange`) does the same work once per
view and curve per scroll (measured: docs/plots-pane.md); the hooks below let that work be done ahead or once. Like pyvistaqt's `_no_base_plotter_init`, the hack lives here only:

- every private name used is listed in `NEEDED` ((pyqtgraph class, attribute)); tests/test_pg_internals.py
  checks each on real pyqtgraph objects and fails naming the one that is gone;
- pyproject.toml pins pyqtgraph to `TESTED_WITH`; a new pyqtgraph is taken after that test passes with it.

Outside this module, the plots code calls the functions and base classes below by public names.
"""
from __future__ import annotations

from contextlib import contextmanager

import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph as pg
import pyqtgraph.graphicsItems.PlotDataItem as _pdi

TESTED_WITH = "0.14.0"
"""The pyqtgraph version these hooks were written and measured against (pinned in pyproject.toml)."""

NEEDED = (
    ("PlotDataItem", "_dataset"),             # the item's data (x, y, finiteness)
    ("PlotDataItem", "_datasetDisplay"),      # the display data pyqtgraph keeps for the current view
    ("PlotDataItem", "_adsLastValue"),        # auto-downsampling's last factor (its hysteresis)
    ("PlotDataItem", "_getDisplayDataset"),   # method: makes the display data (hooked: display_dataset)
    ("PlotCurveItem", "_exportOpts"),         # False unless an exporter is painting
    ("PlotCurveItem", "_fillPathList"),       # cached drawings dropped when the data is given directly
    ("PlotCurveItem", "_mouseShape"),
    ("PlotCurveItem", "_lineSegmentsRendered"),
    ("ViewBox", "_matrixNeedsUpdate"),        # the view's transform is stale until its paint
    ("ViewBox", "_viewPixelSizeCache"),
    ("InfiniteLine", "_computeBoundingRect"),  # method: its bounds (hooked: compute_bounds)
    ("InfiniteLine", "_bounds"),              # the bounds it computed last
    ("AxisItem", "_tickSpacing"),             # fixed tick spacing, None: automatic
    ("AxisItem", "_tickDensity"),
    ("BarGraphItem", "_rectarray"),           # the bars' rectangles, pens and brushes as pyqtgraph drew them
    ("BarGraphItem", "_pens"),
    ("BarGraphItem", "_brushes"),
)
"""(pyqtgraph class, private attribute or method) used here."""


# ---- PlotDataItem ----------------------------------------------------------------------------------
@contextmanager
def curve_class(cls):
    """While in this block, a PlotDataItem being built makes its line as `cls` (a PlotCurveItem subclass)."""
    made, _pdi.PlotCurveItem = _pdi.PlotCurveItem, cls
    try:
        yield
    finally:
        _pdi.PlotCurveItem = made


class DataItemHooks(pg.PlotDataItem):
    """pg.PlotDataItem with its display data reachable by public names: a subclass overrides `display_dataset`
    (pyqtgraph's `_getDisplayDataset`) and calls `pyqtgraph_display_dataset` for pyqtgraph's own."""

    def dataset(self):
        """The item's data (a PlotDataset, None without data)."""
        return self._dataset

    @property
    def shown_dataset(self):
        """The display data pyqtgraph holds for the current view (None: to be made again)."""
        return self._datasetDisplay

    @shown_dataset.setter
    def shown_dataset(self, data):
        self._datasetDisplay = data

    @property
    def last_downsample(self):
        """Auto-downsampling's last factor (a new factor within 1 % of it keeps it: pyqtgraph's hysteresis)."""
        return self._adsLastValue

    @last_downsample.setter
    def last_downsample(self, ds):
        self._adsLastValue = ds

    def display_dataset(self):
        return self.pyqtgraph_display_dataset()

    def pyqtgraph_display_dataset(self):
        return super()._getDisplayDataset()

    def _getDisplayDataset(self):
        return self.display_dataset()


# ---- PlotCurveItem ---------------------------------------------------------------------------------
def exporting(curve: pg.PlotCurveItem) -> bool:
    """Whether an exporter is painting the curve now."""
    return curve._exportOpts is not False


def give_curve_data(curve: pg.PlotCurveItem, x, y, path) -> None:
    """Set the curve's data arrays (and the path made ahead for them, or None) as PlotCurveItem.updateData does
    for a plain line, without setting every style option again."""
    curve.yData, curve.xData = y, x
    curve.invalidateBounds()
    curve.prepareGeometryChange()
    curve.informViewBoundsChanged()
    curve.path = path
    curve.fillPath = curve._fillPathList = curve._mouseShape = None
    curve._lineSegmentsRendered = False
    curve.update()
    curve.sigPlotChanged.emit(curve)


# ---- ViewBox -------------------------------------------------------------------------------------
def settle_matrix(vb: pg.ViewBox) -> None:
    """Bring the view's transform up to date with its range now (pyqtgraph does it in the paint)."""
    if vb._matrixNeedsUpdate:
        vb.updateMatrix()


def plain_follower(vb: pg.ViewBox, master: pg.ViewBox, x0: float, x1: float) -> bool:
    """Whether `vb` takes the x range [x0, x1] as a plain x-link follower of `master` would (no auto range, aspect
    lock, inversion, limits; same place and width on screen)."""
    st = vb.state
    lo, hi = st["limits"]["xLimits"]
    if (st["autoRange"][0] is not False or st["aspectLocked"] is not False or st["xInverted"]
            or (lo is not None and x0 < lo) or (hi is not None and x1 > hi)
            or st["limits"]["xRange"] != [None, None]
            or (vb is not master and vb.linkedView(0) is not master)):
        return False
    r, g = vb.sceneBoundingRect(), master.sceneBoundingRect()
    return abs(r.left() - g.left()) <= 1e-6 and abs(r.width() - g.width()) <= 1e-6


def set_x_ranges(views: list, x0: float, x1: float) -> None:
    """Give every view the x range [x0, x1] in one pass, with the signals pyqtgraph's updateViewRange and
    setRange send for an x change, without each view passing the change on to the views linked to it."""
    changed = []
    for vb in views:
        vb.blockLink(True)
    try:
        for vb in views:
            st = vb.state
            if st["viewRange"][0] == [x0, x1] and st["targetRange"][0] == [x0, x1]:
                continue
            vb._viewPixelSizeCache = None
            st["targetRange"][0] = [x0, x1]
            st["viewRange"] = [[x0, x1], st["viewRange"][1][:]]
            vb._matrixNeedsUpdate = True
            vb.update()
            changed.append(vb)
        for vb in changed:
            vb.sigXRangeChanged.emit(vb, (x0, x1))
            vb.sigRangeChanged.emit(vb, vb.state["viewRange"], [True, False])
            vb.sigStateChanged.emit(vb)
    finally:
        for vb in views:
            vb.blockLink(False)


# ---- InfiniteLine ------------------------------------------------------------------------------------
class LineBoundsHook(pg.InfiniteLine):
    """pg.InfiniteLine whose bounds come from `compute_bounds` (pyqtgraph's `_computeBoundingRect`);
    `pyqtgraph_bounds` computes pyqtgraph's, `last_bounds` is what it computed last."""

    def compute_bounds(self):
        return self.pyqtgraph_bounds()

    def pyqtgraph_bounds(self):
        return super()._computeBoundingRect()

    def last_bounds(self):
        return self._bounds

    def _computeBoundingRect(self):
        return self.compute_bounds()


def set_line_span(line: pg.InfiniteLine, mn: float, mx: float) -> None:
    """line.setSpan, its bounds and end points computed again (pyqtgraph's setSpan keeps the old bounding rect
    until the view changes)."""
    line.setSpan(mn, mx)
    line._boundingRect = None
    line.prepareGeometryChange()
    line.update()


# ---- AxisItem, BarGraphItem ----------------------------------------------------------------------
def tick_settings(axis: pg.AxisItem) -> tuple:
    """(fixed tick spacing or None, tick density) the axis' tickSpacing uses."""
    return axis._tickSpacing, axis._tickDensity


def bar_drawing(bars: pg.BarGraphItem) -> tuple:
    """(QRectF per bar, pen per bar, brush per bar) as pyqtgraph draws them (after its drawPicture)."""
    return bars._rectarray.instances(), bars._pens, bars._brushes


# ---- SVGExporter ---------------------------------------------------------------------------------------
SVG_MODULE_NEEDS = ("correctCoordinates",)
"""Functions of pyqtgraph.exporters.SVGExporter's module replaced for a moment by `export_svg`."""


def export_svg(item, path) -> None:
    """pyqtgraph's SVGExporter on `item`, with closed paths written open: Qt 6 writes a rectangle (every view box's
    border rect) as `M… L… Z`, and pyqtgraph 0.14.0's `correctCoordinates` cannot read the `Z` (ValueError; pyqtgraph
    issue #3495). The last `L` of such a path returns to its start, so the drawing is the same."""
    import re
    import sys

    import pyqtgraph.exporters as pg_exporters
    module = sys.modules["pyqtgraph.exporters.SVGExporter"]
    original = module.correctCoordinates

    def correct(node, defs, svg_item, options):
        for p in node.getElementsByTagName("path"):
            d = p.getAttribute("d")
            if "Z" in d or "z" in d:
                p.setAttribute("d", re.sub(r"\s*[Zz]\s*", " ", d).strip())
        return original(node, defs, svg_item, options)

    module.correctCoordinates = correct
    try:
        pg_exporters.SVGExporter(item).export(str(path))
    finally:
        module.correctCoordinates = original
