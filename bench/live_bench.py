"""Live-follow bench: the solver writes a run in its worker process while the window follows the growing file.

Prints the event-loop latency while following (how late a 5 ms timer fires: p50/p95/max; target p95 < 50 ms)
and the time of each refresh of the panes. Uses the app's own path (Run -> worker -> progress -> refresh).
    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/live_bench.py [--scenario S --t-end 25]
The worker's numba kernels load from the cache; run the solver once first (a cold compile takes ~1 min).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", type=Path, default=ROOT / "resources" / "scenarios" / "central_impact_20t.toml")
    ap.add_argument("--t-end", type=float, default=25.0)
    ap.add_argument("--tick-ms", type=float, default=5.0)
    a = ap.parse_args(argv)

    import viewer.qt_compat  # noqa: F401
    from PySide6.QtCore import QElapsedTimer, QSettings, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    tmp = tempfile.TemporaryDirectory(prefix="live_bench_")
    settings = QSettings(str(Path(tmp.name) / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings)
    w.resize(1600, 1000)
    w.show()
    for _ in range(5):
        app.processEvents()

    late: dict[str, list[float]] = {"starting": [], "following": []}
    phase = ["starting"]
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    stamps: dict[str, list[float]] = {"starting": [], "following": []}

    def tick():
        now = clock.nsecsElapsed()
        late[phase[0]].append((now - last[0]) / 1e6 - a.tick_ms)
        stamps[phase[0]].append(now / 1e6)
        last[0] = now

    timer = QTimer(interval=int(a.tick_ms), timeout=tick)
    timer.setTimerType(Qt.PreciseTimer)
    out = Path(tmp.name) / "live_run.h5"
    t0 = time.perf_counter()
    def run_ended(*_):   # the saved run then opens: timed on its own, not as following
        phase[0] = "finished"
        late.setdefault("finished", [])
        stamps.setdefault("finished", [])
    w.runner.finished.disconnect(w._run_finished)
    w.runner.finished.connect(run_ended)
    w.runner.finished.connect(w._run_finished)
    w.start_run(a.scenario, out, a.t_end)
    timer.start()
    while w.runner.running or phase[0] != "finished":
        app.processEvents()
        if phase[0] == "starting" and w.run is not None and w.run.live:
            phase[0] = "following"   # the first open of the growing file is timed on its own (live_timings)
            last[0] = clock.nsecsElapsed()
        time.sleep(0.001)
    t_end_open = time.perf_counter()
    for _ in range(10):
        app.processEvents()
    timer.stop()
    wall = t_end_open - t0
    print(f"run {a.scenario.name} to {a.t_end:g} s: worker done in {wall:.1f} s; {w.last_run_message}")
    for k, v in late.items():
        if v and k != "finished":
            g = np.array(v)
            print(f"event-loop latency, {k:9s}: {len(g)} ticks of {a.tick_ms:g} ms, late p50 {np.percentile(g, 50):6.1f} "
                  f"p95 {np.percentile(g, 95):6.1f} max {g.max():6.1f} ms" + ("   (target p95 < 50 ms)" if k == "following" else ""))
    if late.get("finished"):
        print(f"  the run ended and its saved file opened: the event loop stalled up to {max(late['finished']):.0f} ms")
    st = np.array(stamps["following"])
    if len(st) > 2:   # what an input arriving at a random moment waits for the event loop (1 ms grid)
        grid = np.arange(st[0], st[-1], 1.0)
        wait = st[np.searchsorted(st, grid, side="right").clip(max=len(st) - 1)] - grid
        print(f"  wait of an input at a random moment while following: p50 {np.percentile(wait, 50):6.1f} "
              f"p95 {np.percentile(wait, 95):6.1f} max {wait.max():6.1f} ms (includes up to {a.tick_ms:g} ms "
              f"of the timer's own period)")
    kinds = {}
    for kind, n, dt in w.live_timings:
        kinds.setdefault(kind, []).append(dt * 1000)
    for kind, ms in kinds.items():
        ms = np.array(ms)
        print(f"  {kind:8s} x{len(ms):3d}: p50 {np.percentile(ms, 50):6.1f} ms  max {ms.max():6.1f} ms (GUI thread, per call)")
    by: dict[str, list[float]] = {}
    for label, ms in getattr(w.diagram, "live_step_ms", []):
        by.setdefault(str(label), []).append(ms)
    if by:
        s = np.array([ms for v in by.values() for ms in v])
        print(f"  refresh steps x{len(s)}: p50 {np.percentile(s, 50):5.1f} p95 {np.percentile(s, 95):5.1f} "
              f"max {s.max():5.1f} ms (one step per event-loop turn); by step:")
        for label, v in by.items():
            v = np.array(v)
            print(f"    {label:10s} x{len(v):4d}: p50 {np.percentile(v, 50):5.1f} p95 {np.percentile(v, 95):5.1f} "
                  f"max {v.max():5.1f} ms")
    w.close()
    if w.run is not None:
        w.run.close()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
