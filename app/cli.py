"""Command line: `dockmnemo [view|info|run] ...`; no arguments opens the bundled sample run."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_RUNS = ROOT / "sample_runs"
DEFAULT_RUN = SAMPLE_RUNS / "expert_existing.h5"          # a real solver run (bench/make_sample_runs.py)
SYNTHETIC_RUN = SAMPLE_RUNS / "synthetic_approach.h5"      # the kinematic demo run (tests.synthetic_run)


def default_run() -> Path:
    """The bundled run the app opens when started with no arguments."""
    return DEFAULT_RUN


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dockmnemo",
        description="Dynamic mnemonic diagram of probe-cone spacecraft docking. "
                    "With no command, opens the bundled sample run in the viewer.",
        epilog="examples:\n"
               "  dockmnemo                          open the bundled sample run\n"
               "  dockmnemo view run.h5              open a run file\n"
               "  dockmnemo info run.h5              print the run's facts, channels, pairs, events\n"
               "  xvfb-run -a dockmnemo export run.h5 --clip 0:12 --clip 177:180@0.25 --title \"Impact\" -o clip.mp4\n"
               "                                     render intervals of the diagram to MP4 (needs an X display)\n"
               "  dockmnemo run scenario.toml --out run.h5   simulate a scenario into a run file\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    v = sub.add_parser("view", help="open a run file in the mnemonic diagram window",
                       description="Open RUN.h5 in the three-pane mnemonic diagram window.")
    v.add_argument("run", type=Path, nargs="?", help="run file (HDF5, format v1); default: bundled sample")
    i = sub.add_parser("info", help="print a run file's summary and exit (exit 2 on a bad file)",
                       description="Print variant, comment, Run Date, duration, frames, T capture, T Final, "
                                   "channel groups, contact pairs and events of RUN.h5.")
    i.add_argument("run", type=Path, help="run file (HDF5, format v1)")
    i.add_argument("--channels", action="store_true", help="also list every channel with unit and label")
    i.add_argument("--criteria", type=Path, default=None,
                   help="capture verdict criteria (TOML); default: resources/capture_criteria.toml")
    from app.export_cli import add_export_parser  # export subcommand (clips to MP4/GIF/PNG)
    add_export_parser(sub)
    add_run_parser(sub)
    return p


# ---- `dockmnemo run`: the numba solver (a separate block; other subcommands stay independent)
def add_run_parser(sub):
    r = sub.add_parser("run", help="simulate a docking scenario into a run file (progress bar on stderr)",
                       description="Simulate SCENARIO.toml (resources/scenarios/*.toml) with the numba solver and "
                                   "write RUN.h5. Exit 2 on bad input, 1 if the solver diverges (the partial run "
                                   "file is kept, with a diagnostic event).")
    r.add_argument("scenario", type=Path, help="scenario TOML")
    r.add_argument("--out", type=Path, required=True, help="run file to write (HDF5, format v1)")
    r.add_argument("--t-end", type=float, default=None, help="simulated time in s (default: the scenario's duration)")


def cmd_run(args) -> int:
    from app.progress import TerminalProgress
    from solver.scenario import ScenarioError, load_model
    from solver.simulate import SolverDiverged, run_scenario
    try:
        total = args.t_end if args.t_end is not None else load_model(args.scenario).duration
        bar = TerminalProgress(f"run {args.scenario.name}", total if total and total > 0 else 1.0, " s")
        run_scenario(args.scenario, args.out, progress=lambda t, T: bar.update(t), t_end=args.t_end)
    except ScenarioError as exc:
        print(f"dockmnemo: error: {exc}", file=sys.stderr)
        return 2
    except SolverDiverged as exc:
        bar.close(None)
        print(f"dockmnemo: solver diverged: {exc}; partial run kept in {args.out}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"dockmnemo: error: {args.out}: cannot write the run file ({exc})", file=sys.stderr)
        return 2
    bar.close()
    print(f"wrote {args.out}")
    return 0


def cmd_info(args) -> int:
    from solver.runfile import RunFile, RunFileError
    from viewer.capture_verdict import CriteriaError, evaluate, load_criteria
    try:
        criteria = load_criteria(args.criteria) if args.criteria else load_criteria()
    except CriteriaError as exc:
        print(f"dockmnemo: error: {exc}", file=sys.stderr)
        return 2
    try:
        with RunFile(args.run) as run:
            print(run.summary())
            print(evaluate(run, criteria).report())
            if args.channels:
                for g, names in run.groups().items():
                    print(f"[{g}]")
                    for n in names:
                        c = run.channels[n]
                        print(f"  {n:<24} {c.unit:<6} {c.label}")
    except RunFileError as exc:
        print(f"dockmnemo: error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_view(args) -> int:
    from app.main_window import run_app
    return run_app(args.run if getattr(args, "run", None) else default_run())


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        return cmd_view(args)
    if getattr(args, "handler", None) is not None:  # subcommands defined in their own modules (export)
        return args.handler(args)
    return {"view": cmd_view, "info": cmd_info, "run": cmd_run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
