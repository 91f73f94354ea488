"""The README's peripheral (IDSS-class) pictures and clip, regenerated from real runs in one command:

    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/make_peripheral_media.py [--runs DIR]

Simulates the central impact and the envelope case (resources/peripheral/scenarios/) into DIR (a temporary folder
by default), then writes docs/peripheral_window.png (the central impact with the rings pressed together),
docs/peripheral_scene.png, docs/peripheral_devices.png and docs/peripheral_plots.png (the envelope case shortly
after its first contact) and docs/clip_peripheral.mp4 (the central impact: the impact at half speed, then the
retraction to the hooks closing at 4x; 720p, 20 fps, plots Fx, leg_1, leg_1_force). Prints each file with its size."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCENARIOS = ROOT / "resources" / "peripheral" / "scenarios"
DOCS = ROOT / "docs"
PLOTTED = ["Fx", "Fy", "Mz", "leg_1"]


def simulate(runs: Path) -> dict[str, Path]:
    from solver.simulate import run_scenario
    runs.mkdir(parents=True, exist_ok=True)
    return {name: run_scenario(SCENARIOS / f"{name}.toml", runs / f"{name}.h5")
            for name in ("central_impact_10t", "idss_envelope")}


def first_contact(path: Path) -> float:
    from solver.runfile import RunFile
    from viewer.compare import first_contact_time
    with RunFile(path) as r:
        return first_contact_time(r)


def pictures(runs: dict[str, Path]) -> list[Path]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    app = QApplication.instance() or QApplication([])
    settings = Path(tempfile.mkdtemp()) / "settings.ini"

    def window(run, t, plotted):
        w = MainWindow(QSettings(str(settings), QSettings.IniFormat))
        w.resize(1600, 1000)
        w.show()
        if not w.open_run(run):
            raise SystemExit(f"{run}: {w.last_error}")
        w.diagram.ensure_analysed()
        w.diagram.plots.set_plotted(plotted)
        w.playback.seek_time(t)
        for _ in range(30):
            app.processEvents()
        return w

    out = []
    w = window(runs["central_impact_10t"], 0.1, ["Fx", "Fy", "Mz", "leg_1"])
    out.append(DOCS / "peripheral_window.png")
    w.grab_image().save(str(out[-1]))
    w.close()
    w = window(runs["idss_envelope"], first_contact(runs["idss_envelope"]) + 0.2, PLOTTED)
    d = w.diagram
    for name, image in (("scene", d.scene.grab_image()), ("devices", d.devices.grab()), ("plots", d.plots.grab())):
        out.append(DOCS / f"peripheral_{name}.png")
        image.save(str(out[-1]))
    w.close()
    return out


def clip(run: Path) -> Path:
    from solver.runfile import RunFile
    from viewer.clip_render import export_clips
    from viewer.clips import Clip, ClipList
    with RunFile(run) as r:
        t_end = float(r.time[-1])
        clips = ClipList([Clip(0.0, 1.2, 0.5, "Peripheral (IDSS-class) central impact: 10 t at 0.10 m/s", 1.0),
                          Clip(2.0, t_end, 4.0, "Retraction to the hooks closing, 4x", 1.0)], fps=20, size=(1280, 720))
        return export_clips(r, clips, DOCS / "clip_peripheral.mp4", plotted=["Fx", "leg_1", "leg_1_force"],
                            splitter_sizes=(32, 23, 45))   # (a video cannot scroll: the plots and 8 lanes get room)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, default=None, help="folder for the run files (default: a temporary one)")
    args = ap.parse_args(argv)
    runs = simulate(args.runs or Path(tempfile.mkdtemp(prefix="peripheral_media_")))
    for path in pictures(runs) + [clip(runs["central_impact_10t"])]:
        print(f"{path.relative_to(ROOT)}  {path.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
