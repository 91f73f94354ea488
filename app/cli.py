"""Command line: `dockmnemo [view|info|run] ...`; no arguments opens the bundled sample run."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.progress import fail

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
        description="Dynamic mnemonic diagram of spacecraft docking (probe-cone and peripheral IDSS-class mechanisms). "
                    "With no command, opens the bundled sample run in the viewer.",
        epilog="examples:\n"
               "  dockmnemo                          open the bundled sample run\n"
               "  dockmnemo view run.h5              open a run file\n"
               "  dockmnemo view campaign_dir/       open a campaign's envelope map\n"
               "  dockmnemo view run.h5 --measured stand.csv --map map.toml   overlay a measured record\n"
               "  dockmnemo info run.h5              print the run's facts, channels, pairs, events\n"
               "  xvfb-run -a dockmnemo export run.h5 --clip 0:12 --clip 177:180@0.25 --title \"Impact\" -o clip.mp4\n"
               "                                     render intervals of the diagram to MP4 (needs an X display)\n"
               "  dockmnemo run scenario.toml -o run.h5 --t-end 5    simulate a scenario into a run file\n"
               "  dockmnemo run edited.toml --from run.h5 --at 2.5   branch a run at 2.5 s with new parameters\n"
               "  dockmnemo campaign resources/campaigns/nominal_envelope.toml --out camp/   runs on Dask\n"
               "  dockmnemo campaign --table camp/  (or dockmnemo info camp/)   the success/fail table\n"
               "  dockmnemo validate run.h5 stand.csv --map map.toml --report report.html   run vs measured\n"
               "  dockmnemo calibrate scenario.toml stand.csv --map map.toml --fit initial.lateral_miss\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    v = sub.add_parser("view", help="open a run file (or a campaign's envelope map) in the window",
                       description="Open RUN.h5 in the three-pane mnemonic diagram window; given a campaign "
                                   "directory, open its envelope map (click a point to open that run).")
    v.add_argument("run", type=Path, nargs="?",
                   help="run file (HDF5, format v1) or campaign directory; default: bundled sample")
    v.add_argument("--measured", type=Path, default=None, metavar="RECORD",
                   help="a measured record to overlay (CSV, HDF5, .mat; docs/measured-data.md)")
    v.add_argument("--map", dest="map", type=Path, default=None, metavar="MAP.toml",
                   help="its channel map (default: RECORD's stem + _map.toml next to it)")
    v.add_argument("--at", type=float, default=None, metavar="T", help="open at T Current = T s")
    v.add_argument("--theme", choices=("dark", "light"), default=None,
                   help="window theme (default: the one chosen in View → Theme, else dark)")
    v.add_argument("--size", default=None, metavar="WxH", help="window size in px (e.g. 1280x720)")
    v.add_argument("--screenshot", type=Path, default=None, metavar="OUT.png",
                   help="render the whole window (at --size, --at) to OUT.png and exit, with default settings "
                        "(headless: xvfb-run -a -s '-screen 0 1920x1200x24' dockmnemo view ...)")
    v.add_argument("--playing", action="store_true",
                   help="with --screenshot: play from --at for a second of real time, then take it while playing")
    i = sub.add_parser("info", help="print a run file's summary and exit (exit 2 on a bad file)",
                       description="Print variant, comment, Run Date, duration, frames, T capture, T Final, "
                                   "channel groups, contact pairs and events of RUN.h5.")
    i.add_argument("run", type=Path, help="run file (HDF5, format v1)")
    i.add_argument("--channels", action="store_true", help="also list every channel with unit and label")
    i.add_argument("--criteria", type=Path, default=None,
                   help="capture verdict criteria (TOML); default: the run's mechanism type's "
                   "(probe-cone: resources/capture_criteria.toml)")
    from app.export_cli import add_export_parser  # export subcommand (clips to MP4/GIF/PNG)
    add_export_parser(sub)
    from app.campaign_rerun_cli import add_campaign_rerun_parser  # one campaign run re-simulated (envelope map)
    add_campaign_rerun_parser(sub)
    from app.berthing_operator_cli import add_berthing_operator_parser  # operator session, locked to wall time
    add_berthing_operator_parser(sub)
    from app.measured_cli import add_measured_parsers  # validate and calibrate against a measured record
    add_measured_parsers(sub)
    from app.figure_cli import add_figure_parser  # report figures (matplotlib) from a run's data
    add_figure_parser(sub)
    r = sub.add_parser("run", help="simulate a scenario into a run file (exit 2 on bad input, nothing written)",
                       description="Validate SCENARIO.toml (and the mechanism it names), then integrate and write "
                                   "a run file. Ctrl+C or SIGTERM stops after the current block and keeps the "
                                   "file, marked incomplete; a killed run keeps its frames up to about two seconds "
                                   "before the kill (dockmnemo info seals it). Exit: 0 done, 2 bad input, "
                                   "3 diverged, 4 cancelled, 5 the run file could not be written (disk full).")
    r.add_argument("scenario", type=Path, nargs="?",
                   help="scenario TOML (resources/scenarios/*.toml or an edited copy)")
    r.add_argument("--describe", action="store_true",
                   help="print every scenario, mechanism and geometry key (unit, range, default, group, label, doc, "
                        "source) from the parameter schema and exit (with a SCENARIO: the keys of its mechanism type); "
                        "docs/parameters.md and docs/parameters-peripheral.md are the same tables")
    r.add_argument("-o", "--out", type=Path, default=None, help="run file to write (default: <scenario>.h5 here)")
    r.add_argument("--t-end", type=float, default=None, help="end time, s (default: the scenario's duration)")
    r.add_argument("--output-step", type=float, default=None,
                   help="frame step of the run file, s: a multiple of the solver step (default: the scenario's; "
                        "e.g. 0.01 for long runs, written much faster; contact intervals shorter than it are missed)")
    r.add_argument("--from", dest="branch_of", type=Path, default=None,
                   help="branch: start from the state stored in this run file ...")
    r.add_argument("--at", type=float, default=None, help="... at this time, s (its frame at or before)")
    r.add_argument("--progress-lines", action="store_true",
                   help="print 'PROGRESS t t_end' lines on stdout (for the app's worker) instead of a bar")
    c = sub.add_parser("campaign", help="run a campaign of docking runs on Dask, or print a campaign's table",
                       description="Run every run of CAMPAIGN.toml (resources/campaigns/*.toml, docs/campaigns.md) on "
                                   "a Dask cluster into DIR: DIR/summary.h5 grows as results arrive; a killed or "
                                   "cancelled campaign resumes when the same command is run again (only the missing "
                                   "runs). Ctrl+C or SIGTERM stops within a second and keeps the finished rows. "
                                   "Exit: 0 done, 2 bad input, 4 cancelled, 5 a file could not be written (disk "
                                   "full; the rows before it kept). With --table DIR: print the success/fail table.")
    c.add_argument("campaign", type=Path, nargs="?", help="campaign TOML")
    c.add_argument("-o", "--out", type=Path, default=None, help="campaign directory (created, or resumed)")
    c.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://host:port (default: a local "
                                                      "cluster)")
    c.add_argument("--workers", type=int, default=None, help="local cluster worker processes (default: CPU count)")
    c.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                   help="numba kernel cache the workers share (a shared filesystem on a multi-machine cluster: "
                        "the kernels are compiled once; default: NUMBA_CACHE_DIR or the user's cache folder; "
                        "a subfolder per solver version)")
    c.add_argument("--table", type=Path, default=None, metavar="DIR", help="print DIR's success/fail table and exit")
    c.add_argument("--failures", action="store_true", help="with --table: list only failed runs")
    return p


def cmd_run(args) -> int:
    """Simulate; bad input is reported before any file is created. Ctrl+C or SIGTERM: exit 4 within a second."""
    from app.progress import StopOnSignal, Stopped
    stop = StopOnSignal(raising=True)   # until the solver's loop a signal ends the command at once: nothing written yet
    try:
        return _run(args, stop)
    except Stopped:
        return fail(f"run cancelled by {stop.name} before its first frame; nothing written", 4)
    finally:
        stop.restore()


def _run(args, stop) -> int:
    import math
    import time

    from app.progress import Stopped, TerminalProgress
    from solver.runfile import RunFile, RunFileError, RunWriteError
    from solver.scenario import ScenarioError, load_model
    from solver.simulate import (RunCancelled, SolverDiverged, run_scenario, start_from_run, t_end_limit,
                                 with_output_step)

    if args.describe:
        from solver.scenario import mechanism_type_of
        from solver.schema import describe
        if args.scenario is not None and not args.scenario.is_file():
            return fail(f"{args.scenario}: no such scenario file")
        mtype = mechanism_type_of(args.scenario) if args.scenario is not None else "probe_cone"
        from solver.mechanisms import BUILT_IN_TYPES
        if mtype not in BUILT_IN_TYPES:   # a type without a parameter schema (its loader checks its own keys)
            return fail(f"{args.scenario}: mechanism type {mtype!r} has no parameter schema to describe (its keys: "
                        f"docs/{mtype}.md and the comments of its mechanism file)")
        print(describe(None, mtype), end="")
        return 0
    if args.scenario is None:
        return fail("run: a scenario TOML is needed (or --describe)")
    if args.at is not None and args.branch_of is None:
        return fail(f"{args.scenario}: --at: needs --from RUN.h5 (the run to branch from)")
    try:
        model = with_output_step(load_model(args.scenario), args.output_step, args.scenario)
    except ScenarioError as exc:
        return fail(exc)
    if args.output_step is not None and args.branch_of is not None:
        return fail(f"{args.scenario}: --output-step: a branch run (--from) keeps the scenario's output step")
    t_end = args.t_end if args.t_end is not None else model.duration
    if not (math.isfinite(t_end) and t_end > 0):
        return fail(f"{args.scenario}: --t-end: must be a positive number of seconds, found {t_end}")
    if t_end > t_end_limit(model):
        return fail(f"{args.scenario}: --t-end: {t_end:g} s is beyond the longest run, {t_end_limit(model):g} s "
                    f"(solver.duration's range)")
    start = None
    if args.branch_of is not None:
        if args.at is None:
            return fail("--from needs --at (the branch time in seconds)")
        try:
            with RunFile(args.branch_of) as src:
                t0, t1 = float(src.time[0]), float(src.t_final)
                if not (math.isfinite(args.at) and t0 - 1e-9 <= args.at <= t1 + 1e-9):
                    return fail(f"{args.branch_of}: --at: {args.at:g} s is not a time of the run "
                                f"({t0:g} s to {t1:g} s)")
                frame = src.frame_at(args.at)
            start = start_from_run(args.branch_of, frame)
        except (RunFileError, ValueError) as exc:
            return fail(exc)
        if t_end <= start.t:
            return fail(f"{args.scenario}: --t-end: {t_end:g} s must be later than the branch time {start.t:g} s")
    t_start = start.t if start is not None else 0.0
    if model.output_step > t_end - t_start + 1e-9:
        return fail(f"{args.scenario}: --output-step: {model.output_step:g} s must not exceed the run's length "
                    f"({t_end - t_start:g} s, from {t_start:g} s to --t-end)")
    out = Path(args.out or Path(args.scenario).with_suffix(".h5").name)
    compile_solver_kernels(model, args.progress_lines, stop)   # before the bar: its ETA starts after compiling
    out.parent.mkdir(parents=True, exist_ok=True)
    bar = None if args.progress_lines else TerminalProgress(f"run {Path(args.scenario).name}", t_end, " s")
    t_wall = time.perf_counter()
    reached = [t_start]   # simulated time of the last block done

    def progress(t, total):
        reached[0] = min(t, total)
        if bar is not None:
            bar.update(reached[0])
        else:
            print(f"PROGRESS {t:.6f} {total:.6f} {time.perf_counter() - t_wall:.3f}", flush=True)
    if args.progress_lines:
        print(f"STARTED {Path(out).resolve()}", flush=True)
    error, code = None, 0
    stop.raising = False   # from here a signal is a flag the solver reads between kernel calls (the file is kept)
    if stop():
        raise Stopped(stop.signal)
    try:
        run_scenario(args.scenario, out, progress=progress, t_end=t_end, start=start, cancel=stop,
                     live=args.progress_lines, output_step=args.output_step)   # the app's worker follows the file while it grows
        with RunFile(out) as run:   # the run may end before t_end (hard dock)
            reached[0] = run.t_final
            hard = any(e.kind == "hard_dock" for e in run.events)
        ended = f"done at {reached[0]:.3f} s" + (" (hard dock)" if hard else "")
    except ScenarioError as exc:   # bad input found before any frame: no bar line
        bar, error, code = None, exc, 2
    except SolverDiverged as exc:
        ended, error, code = f"diverged at {reached[0]:.3f} s", f"{exc} (partial run kept in {out})", 3
    except RunCancelled as exc:
        ended, error, code = (f"cancelled at {reached[0]:.3f} s",
                              f"{exc} (partial run kept in {out}, marked incomplete)" if exc.kept else exc, 4)
    except RunWriteError as exc:   # disk full, file too large: `info` seals what the file holds
        ended, error, code = f"stopped at {reached[0]:.3f} s", exc, 5
    except BaseException:
        if bar is not None:
            bar.close(reached[0], "stopped")
        raise
    if bar is not None:   # where the run stopped and how, not 100 %
        bar.close(reached[0], ended)
    if error is not None:
        return fail(error, code)
    print(f"DONE {Path(out).resolve()}" if args.progress_lines else f"wrote {out}", flush=True)
    return 0


def compile_solver_kernels(model, progress_lines: bool, stop=None) -> int:
    """Load the solver kernels or compile them, saying so: `COMPILING k n` lines for the app's worker, else
    "compiling solver kernels, first run only: k of n" on stderr. With `stop` (a StopOnSignal), in a thread this one
    waits for: a signal ends the process at once with exit 4 (a numba compile cannot be stopped; nothing is written)."""
    import threading

    from solver.warmup import COMPILING, compile_kernels, stop_compiling

    def say(k, n):
        if progress_lines:
            print(f"COMPILING {k} {n}", flush=True)
        else:
            print(f"{COMPILING}: {k} of {n}", file=sys.stderr, flush=True)
    if stop is None:
        return compile_kernels(model, say)
    result, finished = {}, threading.Event()

    def work():
        try:
            result["n"] = compile_kernels(model, say)
        except BaseException as exc:  # noqa: BLE001  (raised again in the main thread)
            result["error"] = exc
        finally:
            finished.set()
    raising, stop.raising = stop.raising, False    # (a raise inside a join can leave the thread looking ended)
    threading.Thread(target=work, name="compile solver kernels", daemon=True).start()
    try:
        while not finished.wait(0.05) and not stop():
            pass
    finally:
        stop.raising = raising
    if not finished.is_set():   # stopped while compiling: the second compile process too, then out (exit 4)
        stop_compiling()
        fail(f"run cancelled by {stop.name} while compiling the solver kernels; nothing written", 4)
        sys.stdout.flush()
        os._exit(4)
    if "error" in result:
        raise result["error"]
    return result["n"]


def cmd_campaign(args) -> int:
    """Run (or resume) a campaign with a progress bar, or print a campaign directory's table."""
    import time

    from app.progress import StopOnSignal, Stopped, TerminalProgress
    from solver.campaign import CampaignError, CampaignWriteError, read_summary, run_campaign

    if args.table is not None:
        try:
            print(read_summary(args.table).table(failures_only=args.failures))
        except CampaignError as exc:
            return fail(exc)
        return 0
    if args.campaign is None or args.out is None:
        return fail("campaign: give CAMPAIGN.toml and --out DIR (or --table DIR)")
    if args.workers is not None and args.workers < 1:
        return fail(f"--workers: must be at least 1, found {args.workers}")
    stop = StopOnSignal(raising=True)   # (the rows are written atomically: a signal may stop it anywhere)
    bar = {}

    def progress(done, total):
        if "bar" not in bar:
            bar["bar"] = TerminalProgress(f"campaign {args.campaign.stem}", total, " runs")
            bar["start"] = done
            if done:
                print(f"resuming {args.out}: {done} of {total} runs done, running the {total - done} missing",
                      file=sys.stderr, flush=True)
        bar["bar"].update(done)
    t0 = time.perf_counter()
    ended = "stopped"

    def close_bar():   # the count reached, not the total, when it ended early; before the error line
        if "bar" in bar:
            b = bar.pop("bar")
            b.close(b.done, ended) if ended else b.close()
    try:
        res = run_campaign(args.campaign, args.out, scheduler=args.scheduler, workers=args.workers,
                           progress=progress, cancel=stop, cache_dir=args.cache_dir)
        stop.raising = False
        ended = "cancelled" if res.cancelled else ""
    except CampaignError as exc:
        close_bar()
        return fail(exc)
    except Stopped:   # while the cluster started, or between two checks of the flag
        done = int(bar["bar"].done) if "bar" in bar else 0
        total = f" of {int(bar['bar'].total)}" if "bar" in bar else ""
        ended = "cancelled"
        close_bar()
        return fail(f"campaign cancelled by {stop.name} after {done}{total} runs; run the same command again to "
                    f"resume", 4)
    except CampaignWriteError as exc:   # disk full: the rows before it are kept, nothing half-written
        close_bar()
        return fail(f"{exc}; the finished rows are kept: run the same command again to resume", 5)
    except OSError as exc:   # scheduler unreachable, directory not writable
        close_bar()
        return fail(f"{args.out}: {exc}")
    finally:
        close_bar()
        stop.restore()   # Python's own handlers again, whatever ended it (an in-process caller keeps its Ctrl+C)
    s = read_summary(res.directory)
    wall = time.perf_counter() - t0
    rate = f", {res.n_run / res.wall_time:.2f} runs/s" if res.n_run and res.wall_time > 0 else ""
    print(f"{res.directory}: {len(s)} of {s.n_planned} runs finished ({res.n_run} now, in {wall:.1f} s{rate}); "
          f"ok {s.status.count('ok')}, diverged {s.status.count('diverged')}, error {s.status.count('error')}; "
          f"captured {int(s.captured.sum())}, verdict PASS {int(s.passed.sum())}", flush=True)
    if res.cancelled:
        return fail(f"campaign cancelled after {len(s)} of {s.n_planned} runs; run the same command again to resume",
                    4)
    return 0


def cmd_info(args) -> int:
    """Print a run's summary; a run file left open by a killed writer is sealed first (marked incomplete)."""
    from solver.runfile import H5_ERRORS, RunFile, RunFileError, seal_if_orphaned
    from viewer.capture_verdict import CriteriaError, evaluate, load_criteria
    if Path(args.run).is_dir() and (Path(args.run) / "campaign.toml").is_file():   # a campaign directory
        args.table, args.failures, args.campaign = args.run, False, None
        return cmd_campaign(args)
    try:
        criteria = load_criteria(args.criteria) if args.criteria else None   # None: the run's mechanism type's
    except CriteriaError as exc:
        return fail(exc)
    creating = Path(args.run).with_name(Path(args.run).name + ".creating")
    if not Path(args.run).exists() and creating.exists():
        return fail(f"{args.run}: /: file does not exist; {creating.name} is a run stopped or still running before "
                    f"its first frames were saved (about a second into the run)")
    sealed, note = False, ""
    try:
        sealed = seal_if_orphaned(args.run)
    except RunFileError as exc:   # the reader refused it (sealing reads it as the summary would): one line
        return fail(exc)
    except H5_ERRORS as exc:   # the sealed copy could not be written or made: read the run as it is (SWMR)
        note = f"{args.run}: left by a killed writer; not sealed ({exc})"
    try:
        with RunFile(args.run) as run:
            if sealed:
                note = f"{args.run}: its writer was killed: sealed as " + (
                    "a complete run (killed as it closed the file)" if run.meta.complete else "an incomplete run")
            run.check_data()   # every frame of every dataset: a corrupt chunk is refused, never printed
            print(run.summary())
            if run.live:
                print("note          still being written: INCOMPLETE so far")
            try:
                print(evaluate(run, criteria).report())
            except CriteriaError as exc:
                return fail(exc)
            if args.channels:
                for g, names in run.groups().items():
                    print(f"[{g}]")
                    for n in names:
                        c = run.channels[n]
                        print(f"  {n:<24} {c.unit:<6} {c.label}")
    except RunFileError as exc:   # one line, the note in it
        return fail(f"{exc} ({note.removeprefix(f'{args.run}: ')})" if note else exc)
    if note:
        print(note, file=sys.stderr, flush=True)
    return 0


def cmd_view(args) -> int:
    from viewer import style
    size = None
    if getattr(args, "size", None):
        try:
            size = tuple(int(x) for x in args.size.lower().split("x"))
            assert len(size) == 2 and 320 <= size[0] <= 8000 and 240 <= size[1] <= 8000
        except (ValueError, AssertionError):
            return fail(f"--size: {args.size!r} is not WxH in px, each 320 (240) to 8000 (e.g. 1280x720)")
    shot = getattr(args, "screenshot", None)
    if shot is not None and shot.suffix.lower() != ".png":
        return fail(f"{shot}: --screenshot: the file must end in .png")
    if getattr(args, "playing", False) and shot is None:
        return fail("--playing: only with --screenshot")
    theme = getattr(args, "theme", None)
    if theme is None and shot is None:
        from PySide6.QtCore import QSettings
        theme = str(QSettings("dockmnemo", "dockmnemo").value("theme", "dark"))
    style.set_theme(theme if theme in style.THEMES else "dark")   # before the panes' modules read the palette
    run = args.run if getattr(args, "run", None) else default_run()
    measured, map_path = getattr(args, "measured", None), getattr(args, "map", None)
    if shot is not None:
        from app.main_window import screenshot
        return screenshot(run, shot, size or (1600, 1000), args.at, args.playing, measured, map_path)
    from app.main_window import run_app
    return run_app(run, measured=measured, map_path=map_path, at=getattr(args, "at", None), size=size)


QUICK_EXIT = ("run", "campaign", "validate", "campaign-rerun")   # commands that end without the interpreter's teardown


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if argv is None and args.command not in (*QUICK_EXIT, "export", "calibrate"):   # (app/__main__.py's handlers
        import signal                                                                # were for starting only)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if args.command is None:
        return cmd_view(args)
    try:
        if getattr(args, "handler", None) is not None:  # subcommands defined in their own modules (export)
            status = args.handler(args)
        else:
            status = {"view": cmd_view, "info": cmd_info, "run": cmd_run, "campaign": cmd_campaign}[args.command](args)
    except BrokenPipeError:   # output piped into `head` and closed early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if argv is None and args.command in QUICK_EXIT:
        quick_exit(int(status or 0))
    return status


def quick_exit(status: int):
    """End the process now, its files closed and its output flushed: the teardown of the numba kernels it loaded takes
    about a second (so a Ctrl+C would not end the command within one)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
