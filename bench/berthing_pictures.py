"""Pictures of the diagram during a berthing for docs/berthing.md: the scripted MRM-1 insertion with 2 mm of lateral
error, at the funnel's first push (27.4 s) and inserted (36 s), with `dockmnemo view --screenshot`:

    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/berthing_pictures.py [--out docs]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main(argv=None) -> int:
    from window_pictures import shot

    from solver.simulate import run_scenario
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs")
    out = ap.parse_args(argv).out
    with tempfile.TemporaryDirectory() as td:
        run = run_scenario(ROOT / "resources" / "berthing" / "scenarios" / "mrm1_scripted_lateral_2mm.toml",
                           Path(td) / "mrm1_scripted_lateral_2mm.h5")
        shot(out / "berthing_window_1920x1080.png", run, 27.4, "1920x1080")
        shot(out / "berthing_window_1280x720.png", run, 36.0, "1280x720")
    return 0


if __name__ == "__main__":
    sys.exit(main())
