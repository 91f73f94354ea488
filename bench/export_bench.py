"""Print clip-export speed (frames per second, medians) at 1280x720 for a 10 s interval at 30 fps. Run as
xvfb-run -a -s "-screen 0 1920x1200x24" python bench/export_bench.py [RUN.h5] [--size 720p] [--repeat 3]"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", nargs="?", default=str(ROOT / "sample_runs" / "synthetic_approach.h5"))
    ap.add_argument("--size", default="720p")
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--start", type=float, default=0.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)

    import viewer.qt_compat  # noqa: F401
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication(sys.argv[:1])  # noqa: F841
    from solver.runfile import RunFile
    from viewer.clip_render import DiagramRenderer, export_clips
    from viewer.clips import Clip, ClipList, parse_size
    from viewer.video_export import FrameSink

    size = parse_size(a.size)
    run = RunFile(a.run)
    clips = ClipList([Clip(a.start, a.start + a.seconds, 1.0)], fps=a.fps, size=size)
    n = clips.total_frames()
    print(f"run {Path(a.run).name}, interval {a.start:g}..{a.start + a.seconds:g} s at {a.fps} fps "
          f"= {n} frames, {size[0]}x{size[1]}, H.264 yuv420p; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at start")

    t0 = time.perf_counter()
    r = DiagramRenderer(run, size)
    r.render_time(a.start)
    print(f"offscreen diagram set up and first frame: {(time.perf_counter() - t0) * 1e3:.0f} ms")

    times = [a.start + k / a.fps for k in range(n)]
    render_ms = []
    for _ in range(a.repeat):
        ts = []
        for t in times:
            t1 = time.perf_counter()
            r.render_time(t)
            ts.append(time.perf_counter() - t1)
        render_ms.append(np.median(ts) * 1e3)
    print(f"render one frame (seek Playback, panes redraw, compose): median {np.median(render_ms):.1f} ms "
          f"-> {1e3 / np.median(render_ms):.0f} frames/s without encoding")

    frames = [r.render_time(t).copy() for t in times[:: max(1, n // 30)]]
    with tempfile.TemporaryDirectory() as tmp:
        enc = []
        for _ in range(a.repeat):
            sink = FrameSink(Path(tmp) / "enc.mp4", a.fps, size, threaded=True)
            t1 = time.perf_counter()
            for k in range(n):
                sink.write(frames[k % len(frames)])
            sink.commit()
            enc.append(n / (time.perf_counter() - t1))
        print(f"encode only (H.264 veryfast, worker thread): median {np.median(enc):.1f} frames/s")

        fps, sizes, cpu = [], [], []
        for _ in range(a.repeat):
            out = Path(tmp) / "clip.mp4"
            t1, c1 = time.perf_counter(), time.process_time()
            export_clips(run, clips, out, renderer=r)
            fps.append(n / (time.perf_counter() - t1))
            cpu.append((time.process_time() - c1) / n * 1e3)
            sizes.append(out.stat().st_size)
        print(f"export (render + encode, {n} frames): median {np.median(fps):.1f} frames/s, "
              f"{n / np.median(fps):.2f} s for the {a.seconds:g} s clip (runs: "
              f"{', '.join(f'{f:.1f}' for f in fps)}), file {sizes[-1] / 1e6:.2f} MB")
        c = float(np.median(cpu))
        print(f"CPU time of this process per exported frame (all its threads): median {c:.1f} ms "
              f"-> at most {2e3 / c:.0f} frames/s if it had both cores to itself")
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    r.close()


if __name__ == "__main__":
    main()
