"""The plots pane as a package (import what you need from its modules; this file imports nothing, so the Qt-free
ahead_plan.py loads without Qt):

- pane.py: `PlotsPane`, the widget; default_plots (the mechanism type's)
- facts.py: the facts and T Current readout panel, the readout's number format
- view.py: `PlotsView` (draws the yellow time cursors over a kept picture), `CursorLine`, `plot_label`
- trace.py: `Trace` / `TraceCurve`, a channel's display data and line drawn ahead
- ahead_plan.py: the scrolling window and the draw-ahead plan, plain Python
- yfit.py: y ranges fitted to the shown data; ghosts.py: comparison run and difference plot
- live.py: loading frames into the curves (scroll, live refresh); seek.py: click-to-seek
- axes.py: value axis and the plots' shared look
- pg_internals.py: the only module that touches pyqtgraph's private attributes
"""
