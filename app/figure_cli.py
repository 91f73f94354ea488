"""`dockmnemo figure RUN.h5 --plot Fx,Fy --xy STROKE:Fx --t 0:20 --size 160x120mm -o fig.pdf`: a report
figure drawn with matplotlib from the run file (viewer.report_figure)."""
from __future__ import annotations

import argparse
from pathlib import Path

from app.progress import fail

FIGURE_EXAMPLES = """\
examples:
  dockmnemo figure run.h5 --plot Fx,Fy --plot STROKE -o fig.pdf      (STROKE: a stroke channel of the run)
  dockmnemo figure sample_runs/expert_existing.h5 --plot Fx,Fy --plot STROKE --xy STROKE:Fx \\
        --t 0:20 --at 6 --size 160x120mm --dpi 300 --theme light -o fig.png
Exit status 2 with a one-line message (naming the file and listing what exists) on bad input; nothing written."""


def add_figure_parser(sub) -> argparse.ArgumentParser:
    """Register `figure` on the CLI's subparsers."""
    f = sub.add_parser("figure", help="draw a report figure (PDF, SVG, PNG) of a run's channels with matplotlib",
                       description="Draw time plots (several channels each, with a legend), XY plots, the capture "
                                   "line and a T Current line from RUN.h5's data into a publication figure: vector "
                                   "PDF or SVG, or PNG at --dpi.",
                       epilog=FIGURE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("run", type=Path, help="run file (HDF5, format v1)")
    f.add_argument("--plot", action="append", default=[], metavar="CH[,CH...]",
                   help="a time plot of these channels (repeat for more plots, top to bottom)")
    f.add_argument("--xy", action="append", default=[], metavar="CHX:CHY",
                   help="an XY plot: CHY against CHX over the interval (repeatable)")
    f.add_argument("--t", default=None, metavar="T0:T1", help="the interval shown, s (default: the whole run)")
    f.add_argument("--at", type=float, default=None, metavar="T", help="draw the T Current line (and XY point) at T s")
    f.add_argument("--size", default="160x120mm", metavar="WxH{mm|in|px}", help="figure size (default 160x120mm)")
    f.add_argument("--dpi", type=int, default=300, help="dots per inch of a PNG and of px sizes (default 300)")
    f.add_argument("--theme", choices=("light", "dark"), default="light", help="light (paper, default) or dark")
    f.add_argument("--title", default=None, help="the figure's title (default: the run's scenario)")
    f.add_argument("--compare", type=Path, default=None, metavar="RUN_B.h5",
                   help="a second run drawn dashed over the same channels (aligned on t = 0)")
    f.add_argument("--measured", type=Path, default=None, metavar="RECORD",
                   help="a measured record drawn dashed over its channels (CSV, HDF5, .mat; docs/measured-data.md)")
    f.add_argument("--map", dest="map", type=Path, default=None, metavar="MAP.toml",
                   help="its channel map (default: RECORD's stem + _map.toml next to it)")
    f.add_argument("-o", "--out", type=Path, required=True, help="output file: .pdf, .svg or .png")
    f.set_defaults(handler=cmd_figure)
    return f


def cmd_figure(args) -> int:
    from solver.errors import InputError
    from solver.runfile import RunFile, RunFileError
    from viewer.report_figure import FORMATS, FigureError, FigureSpec, parse_interval, parse_size, parse_xy, \
        save_figure
    try:
        if args.out.suffix.lower() not in FORMATS:
            raise FigureError(f"{args.out}: -o: the file must end in {', '.join(FORMATS)}")
        if not (10 <= args.dpi <= 2400):
            raise FigureError(f"--dpi: {args.dpi}: must be 10 to 2400")
        plots = [[c.strip() for c in p.split(",") if c.strip()] for p in args.plot]
        if any(not p for p in plots):
            raise FigureError("--plot: an empty channel list; give CH[,CH...]")
        spec = FigureSpec(plots=plots, xy=[parse_xy(x) for x in args.xy],
                          t=parse_interval(args.t) if args.t else None, size=parse_size(args.size, args.dpi),
                          dpi=args.dpi, theme=args.theme, title=args.title, at=args.at)
        if not args.out.parent.is_dir():
            raise FigureError(f"{args.out}: -o: no such directory {args.out.parent}")
        measured = None
        if args.measured is not None:
            from solver.measured import compare_run
            beside = args.measured.with_name(args.measured.stem + "_map.toml")
            map_path = args.map or (beside if beside.is_file() else None)
            if map_path is None:
                raise FigureError(f"{args.measured}: --map: none given and no {args.measured.stem}_map.toml next to it")
            measured = compare_run(args.run, args.measured, map_path)
        with RunFile(args.run) as run:
            if args.compare is None:
                out = save_figure(run, spec, args.out, measured)
            else:
                with RunFile(args.compare) as run_b:
                    out = save_figure(run, spec, args.out, measured, compare=(run_b, 0.0))
    except (FigureError, RunFileError, InputError) as exc:
        return fail(exc)
    except OSError as exc:
        return fail(f"{args.out}: cannot be written ({exc})")
    print(f"wrote {out}")
    return 0
