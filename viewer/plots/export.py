"""Plot exports: one plot or all plots as PNG or SVG (pyqtgraph's exporters), the shown channels over the shown time
range as CSV (measured channels too, when a record is shown)."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import viewer.qt_compat  # noqa: F401  (before any PySide6 call; see the module)
import pyqtgraph.exporters as pg_exporters

from viewer.plots.pg_internals import export_svg


IMAGE_SUFFIXES = (".png", ".svg")


def export_image(pane, path, index: int = -1) -> Path:
    """Plot `index` of the pane (-1: all plots, as laid out) to `path`: SVG for .svg, else a PNG at screen size."""
    path = Path(path)
    item = pane.plots[index] if 0 <= index < len(pane.plots) else pane.glw.ci
    pane._drop_early()   # (the x range of the frame shown)
    if path.suffix.lower() == ".svg":
        export_svg(item, path)   # (pyqtgraph's SVGExporter; pg_internals: its closed-path bug)
    else:
        exp = pg_exporters.ImageExporter(item)
        exp.parameters()["width"] = max(int(item.sceneBoundingRect().width()), 16)
        exp.export(str(path))
    if not path.is_file():
        raise OSError(f"{path}: the exporter wrote nothing")
    return path


def shown_table(pane) -> tuple[list[str], np.ndarray]:
    """Header and rows of the shown channels over the shown time range: time, each channel (and its measured
    record, resampled onto the run's frames, when shown), each with its unit."""
    run, rng = pane.run, pane.x_range()
    if run is None or rng is None:
        return [], np.empty((0, 0))
    t = np.asarray(run.time)
    a, b = int(np.searchsorted(t, rng[0], side="left")), int(np.searchsorted(t, rng[1], side="right"))
    header, cols = ["time [s]"], [np.asarray(run.time[a:b], float)]
    m = pane.measured
    for name in pane.names:
        unit = run.channels[name].unit
        header.append(f"{name} [{unit}]" if unit else name)
        cols.append(np.asarray(pane.blocks.full(name) if pane.blocks is not None else run.channel(name), float)[a:b])
        if m is not None and name in m.measured:
            header.append(f"{name} measured [{unit}]" if unit else f"{name} measured")
            cols.append(np.asarray(m.measured[name], float)[a:b])
    return header, np.column_stack(cols)


def time_decimals(step: float) -> int:
    """Decimals that write every time of a run with output step `step` exactly: the step's own and 3 more (a
    time is i × step, so 2.5300000000000002 is 2.53), at most 12."""
    if not (math.isfinite(step) and step > 0):
        return 12
    return min(12, max(0, -math.floor(math.log10(step))) + 3)


def time_text(t: float, decimals: int) -> str:
    """A time rounded to `decimals` without trailing zeros: 2.53, 0.0, 12.0."""
    return repr(round(float(t), decimals) + 0.0)


def export_csv(pane, path) -> Path:
    """Write `shown_table` as CSV (empty cells where a measured record has no value; times without float noise)."""
    path = Path(path)
    header, rows = shown_table(pane)
    digits = time_decimals(pane.run.meta.output_step) if pane.run is not None else 12
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow([time_text(r[0], digits)] + ["" if not np.isfinite(x) else repr(float(x)) for x in r[1:]])
    return path
