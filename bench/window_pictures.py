"""The README's and docs' window pictures, made again with `dockmnemo view --screenshot` (the whole window at a size and
time, default settings):

    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/window_pictures.py [--out docs]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RUNS = ROOT / "sample_runs"


def shot(out: Path, run: Path, at: float, size: str, *extra: str):
    cmd = [sys.executable, "-m", "app", "view", str(run), "--at", str(at), "--size", size, *extra, "--screenshot",
           str(out)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(r.stdout.strip() or r.stderr.strip())
    if r.returncode:
        raise SystemExit(r.returncode)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    out = ap.parse_args(argv).out
    from tests.measured_truth import EXAMPLE_MAP, write_measured_csv
    shot(out / "main_window.png", RUNS / "expert_existing.h5", 24.7, "1600x1000")
    shot(out / "main_window_1280x720.png", RUNS / "expert_existing.h5", 24.7, "1280x720")
    shot(out / "main_window_light.png", RUNS / "expert_existing.h5", 24.7, "1366x768", "--theme", "light")
    shot(out / "peripheral_window.png", RUNS / "peripheral" / "central_impact_10t.h5", 0.1, "1600x1000")
    with tempfile.TemporaryDirectory() as tmp:   # the stand record of docs/measured-data.md (brake torque x 1.25)
        record = write_measured_csv(RUNS / "central_impact_20t.h5", Path(tmp) / "stand.csv", 0.1374, end_margin=0.5)
        shot(out / "measured_overlay.png", RUNS / "central_impact_20t.h5", 6.0, "1920x1080",
             "--measured", str(record), "--map", str(EXAMPLE_MAP))
    return 0


if __name__ == "__main__":
    sys.exit(main())
