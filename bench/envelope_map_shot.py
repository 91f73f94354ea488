"""Screenshots of the envelope map of a campaign directory, and how long a summary refresh takes.

    dockmnemo campaign resources/campaigns/expert_envelope.toml --out camp/expert --workers 2
    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/envelope_map_shot.py camp/expert [--open RUN]
        [--x closing_speed --y lateral_miss_y --colour peak_base_force] [--out docs]

Writes OUT/envelope_map.png (the map, coloured by outcome), OUT/envelope_map_<colour>.png and
OUT/envelope_map_window.png (the main window with the map dock and run RUN open, default: the first kept run).
Prints the median and max wall time of re-reading the summary (what the map does every 2 s while a campaign writes).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", type=Path, help="campaign directory")
    ap.add_argument("--x", default=None, help="x column (default: the first parameter)")
    ap.add_argument("--y", default=None, help="y column (default: the second parameter)")
    ap.add_argument("--colour", default="peak_base_force", help="numeric output for the second picture")
    ap.add_argument("--open", type=int, default=None, help="run index to open in the window picture")
    ap.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the PNGs")
    ap.add_argument("--size", default="900x760", help="map picture size WxH")
    args = ap.parse_args(argv)

    import tempfile

    import viewer.qt_compat  # noqa: F401
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from solver.campaign import read_summary
    from viewer.envelope_map import EnvelopeMap

    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        s = read_summary(args.campaign)
        times.append(time.perf_counter() - t0)
    print(f"read_summary of {len(s.index)} rows: median {1000 * statistics.median(times):.1f} ms, "
          f"max {1000 * max(times):.1f} ms (7 reads)")

    app = QApplication.instance() or QApplication(sys.argv[:1])
    args.out.mkdir(parents=True, exist_ok=True)

    def settle(ms=400):
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.01)

    m = EnvelopeMap()
    w_, h_ = (int(v) for v in args.size.split("x"))
    m.resize(w_, h_)
    m.show()
    t0 = time.perf_counter()
    m.open(args.campaign)
    t_open = time.perf_counter() - t0
    redraws = []
    for _ in range(7):
        t0 = time.perf_counter()
        m.set_summary(s)
        redraws.append(time.perf_counter() - t0)
    print(f"map: open {1000 * t_open:.0f} ms; redraw of a re-read summary (GUI thread): median "
          f"{1000 * statistics.median(redraws):.1f} ms, max {1000 * max(redraws):.1f} ms (7 redraws)")
    params = [p.name for p in m.summary.parameters]
    m.set_axes(args.x or params[0], args.y or params[1])
    m.show_status("hover a point for its run; click to open it in the mnemonic diagram")
    settle()
    m.grab().save(str(args.out / "envelope_map.png"))
    m.set_colour_by(args.colour)
    settle()
    m.grab().save(str(args.out / f"envelope_map_{args.colour}.png"))

    with tempfile.TemporaryDirectory() as td:
        w = MainWindow(QSettings(str(Path(td) / "s.ini"), QSettings.IniFormat))
        w.settings.setValue("runs_dir", td)
        w.resize(1600, 1000)
        w.show()
        assert w.open_campaign(args.campaign), w.last_error
        cm = w.campaign.map
        cm.set_axes(args.x or params[0], args.y or params[1])
        kept = [int(i) for i in cm.summary.index if cm.summary.run_path(int(i)) is not None]
        index = args.open if args.open is not None else (kept[0] if kept else None)
        if index is not None:
            print(f"run {index}: {w.campaign.open_run(index)}")
            while w.runner.running:
                settle(200)
        settle(800)
        w.grab_image().save(str(args.out / "envelope_map_window.png"))
        w.close()
    for name in ("envelope_map.png", f"envelope_map_{args.colour}.png", "envelope_map_window.png"):
        print("wrote", args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
