"""Print how long the top pane's show_frame takes (median, p90) on a run. Run it as
xvfb-run -a -s "-screen 0 1920x1200x24" python bench/scene_bench.py [RUN.h5] [--size 1600x450]"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _pad_singleton_refcounts(n=300_000):
    """PySide6 6.12.0 on CPython 3.11 drops a reference to None/True/False on each void or bool call
    and aborts (none_dealloc) after a few thousand; extra references to these singletons are harmless."""
    if sys.version_info >= (3, 12):
        return
    import ctypes
    for obj in (None, True, False):
        for _ in range(n):
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def _stats(ts):
    a = np.asarray(ts) * 1e3
    return f"median {np.median(a):6.2f} ms   p90 {np.percentile(a, 90):6.2f} ms   max {a.max():6.2f} ms"


def _time(fn, args):
    ts = []
    for x in args:
        t0 = time.perf_counter()
        fn(x)
        ts.append(time.perf_counter() - t0)
    return ts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", default=str(ROOT / "sample_runs" / "synthetic_approach.h5"))
    ap.add_argument("--size", default="1600x450")
    ap.add_argument("--frames", type=int, default=1500)
    a = ap.parse_args(argv)
    w, h = (int(v) for v in a.size.split("x"))

    _pad_singleton_refcounts()
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv)
    from solver.runfile import RunFile
    from viewer.scene_pane import ScenePane

    run = RunFile(a.run)
    pane = ScenePane()
    pane.render_async = False   # each show_frame renders in this thread: the times below include the render
    pane.resize(w, h)
    pane.show()
    app.processEvents()
    t0 = time.perf_counter()
    pane.set_run(run)
    t_set = time.perf_counter() - t0
    app.processEvents()
    rw = pane.render_window
    n = run.n_frames
    print(f"run {a.run}: {n} frames, {len(run.geometry)} parts, {len(run.contact_pairs)} pairs")
    print(f"pane {pane.width()}x{pane.height()} px (VTK {pane.vtk_widget.width()}x{pane.vtk_widget.height()}); "
          f"load average {os.getloadavg()[0]:.2f}; set_run {t_set * 1e3:.1f} ms")
    print(f"GL: {[s for s in rw.ReportCapabilities().splitlines() if 'renderer string' in s][:1]}")

    for f in range(40):  # warm-up: shaders, text, first block
        pane.show_frame(f)
    start = run.frame_at(run.t_capture) - a.frames // 3 if np.isfinite(run.t_capture) else 0
    start = max(0, min(start, n - a.frames))
    seq = range(start, min(n, start + a.frames))
    print(f"play frames {seq.start}..{seq.stop - 1} (step 1)   show_frame {_stats(_time(pane.show_frame, seq))}")

    def frame_and_paint(f):
        pane.show_frame(f)
        app.processEvents()  # Qt repaints the readout labels

    print(f"  same, plus Qt repaint of the readouts      {_stats(_time(frame_and_paint, seq))}")
    rng = np.random.default_rng(0)
    scrub = rng.integers(0, n, 300)
    print(f"scrub 300 random frames              show_frame {_stats(_time(pane.show_frame, scrub))}")

    cache = pane._cache
    blk = cache.block
    t0 = time.perf_counter()
    cache._read(0, min(blk, n))
    print(f"one cold block read ({blk} frames, {len(cache.channels)} channels, {len(cache.pairs)} pairs): "
          f"{(time.perf_counter() - t0) * 1e3:.1f} ms (once per block; last 8 blocks kept)")

    render = pane._render
    pane._render = lambda: None
    print(f"  of which: update without Render()     {_stats(_time(pane.show_frame, seq[:500]))}")
    pane._render = render
    print(f"  of which: Render() alone              {_stats(_time(lambda _: rw.Render(), range(300)))}")

    import vtkmodules.vtkRenderingOpenGL2  # noqa: F401
    from vtkmodules.vtkRenderingCore import vtkRenderer
    from vtkmodules.qt.QVTKRenderWindowInteractor import QVTKRenderWindowInteractor
    bare = QVTKRenderWindowInteractor()
    bare.resize(pane.vtk_widget.width(), pane.vtk_widget.height())
    brw = bare.GetRenderWindow()
    brw.SetMultiSamples(0)
    bare.show()
    bare.Initialize()
    brw.AddRenderer(vtkRenderer())
    app.processEvents()
    print(f"baseline: empty VTK window, same size   {_stats(_time(lambda _: brw.Render(), range(300)))}")
    run.close()


if __name__ == "__main__":
    main()
