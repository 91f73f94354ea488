"""The plots' boundary with pyqtgraph: every private attribute viewer/plots/pg_internals.py needs exists on real
pyqtgraph objects, no other module names one, and pyproject.toml pins the pyqtgraph it was tested with."""
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _objects():
    """Real pyqtgraph objects as the plots use them (a curve with data in a view box, drawn bars, an axis)."""
    import viewer.qt_compat  # noqa: F401
    import pyqtgraph as pg
    plot = pg.PlotItem()
    item = pg.PlotDataItem(np.arange(10.0), np.sin(np.arange(10.0)))
    plot.addItem(item)
    bars = pg.BarGraphItem(x0=[0.0, 2.0], x1=[1.0, 3.0], y0=[0.0, 0.0], height=[1.0, 1.0], brush="r")
    bars.drawPicture()
    line = pg.InfiniteLine(1.0, angle=90)
    plot.addItem(line)
    line.boundingRect()
    return {"PlotDataItem": item, "PlotCurveItem": item.curve, "ViewBox": plot.getViewBox(), "InfiniteLine": line,
            "AxisItem": plot.getAxis("bottom"), "BarGraphItem": bars}


def test_every_pyqtgraph_internal_the_plots_need_is_there(qtbot):
    from viewer.plots.pg_internals import NEEDED
    objects = _objects()
    missing = [f"{cls}.{attr}" for cls, attr in NEEDED if not hasattr(objects[cls], attr)]
    assert not missing, ("pyqtgraph no longer has " + ", ".join(missing) + ": viewer/plots/pg_internals.py needs it "
                         "(adapt that module, or pin the pyqtgraph it was tested with)")


def test_the_hooks_work_on_real_objects(qtbot):
    """Each accessor reads what pyqtgraph holds (a renamed attribute that still exists but is no longer used by
    pyqtgraph would pass the check above and fail here)."""
    from viewer.plots import pg_internals as pgi
    from viewer.plots.trace import Trace
    import pyqtgraph as pg
    plot = pg.PlotItem()
    t = Trace(np.arange(100.0), np.arange(100.0) ** 2)
    plot.addItem(t)
    assert type(t.curve).__name__ == "TraceCurve"                 # curve_class swapped the line's class
    assert pg.graphicsItems.PlotDataItem.PlotCurveItem is pg.PlotCurveItem   # and put pyqtgraph's back
    assert t.dataset() is not None and len(t.dataset().x) == 100
    shown = t.getData()                                             # goes through display_dataset
    assert shown[0] is not None and t.shown_dataset is not None
    assert not pgi.exporting(t.curve)
    vb = plot.getViewBox()
    vb.setXRange(0, 10, padding=0)
    pgi.settle_matrix(vb)
    pgi.set_x_ranges([vb], 20.0, 30.0)
    assert vb.viewRange()[0] == [20.0, 30.0]
    assert pgi.tick_settings(plot.getAxis("bottom")) == (None, 1.0)


def test_no_other_module_touches_pyqtgraph_private_attributes():
    """In every module that imports pyqtgraph (but pg_internals.py): no use or override of a private name from
    NEEDED, unless the module sets that attribute on its own objects (`self._pens = ...` of a non-pyqtgraph widget)."""
    from viewer.plots.pg_internals import NEEDED
    names = sorted({attr for _, attr in NEEDED})
    offenders = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        rel = path.relative_to(ROOT)
        text = path.read_text()
        if (rel.parts[0] not in ("app", "viewer", "solver", "bench") or rel == Path("viewer/plots/pg_internals.py")
                or not re.search(r"^\s*(import pyqtgraph|from pyqtgraph)", text, re.M)):
            continue
        own = set(re.findall(r"self\.(_\w+)\s*=(?!=)", text)) - set(re.findall(r"def (_\w+)", text))
        touched = [n for n in names if n not in own]
        if not touched:
            continue
        pattern = re.compile(r"(\.|def )(" + "|".join(map(re.escape, touched)) + r")\b|\b_pdi\b|PlotDataItem\.PlotCurveItem\s*=")
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "pyqtgraph internals outside viewer/plots/pg_internals.py:\n" + "\n".join(offenders)


def test_pyproject_pins_the_pyqtgraph_the_internals_were_tested_with():
    from viewer.plots.pg_internals import TESTED_WITH
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [d.replace(" ", "") for d in deps if d.replace(" ", "").lower().startswith("pyqtgraph")]
    assert pins == [f"pyqtgraph=={TESTED_WITH}"], pins
    import pyqtgraph
    if pyqtgraph.__version__ != TESTED_WITH:
        pytest.fail(f"pyqtgraph {pyqtgraph.__version__} installed; viewer/plots/pg_internals.py was tested with "
                    f"{TESTED_WITH}")
