"""`dockmnemo validate` (a run against a measured record) and `dockmnemo calibrate` (fit scenario or mechanism keys
to a measured record on Dask)."""
from __future__ import annotations

import math
from pathlib import Path

from app.progress import fail


def add_measured_parsers(sub):
    """Register `validate` and `calibrate` on the CLI's subparsers."""
    v = sub.add_parser("validate", help="compare a run with a measured record: metrics and an HTML report",
                       description="Align MEASURED (CSV, HDF5 or MATLAB .mat) with RUN.h5 through the channel map "
                                   "(docs/measured-data.md), print the time offset and per channel the RMS and peak "
                                   "error and the correlation; --report writes a self-contained HTML report (whole "
                                   "or not at all). Exit: 0 done, 2 bad input (file: key: problem), 5 the report "
                                   "could not be written (disk full); Ctrl+C 130, SIGTERM 143, nothing written.")
    v.add_argument("run", type=Path, help="run file (HDF5, format v1)")
    v.add_argument("measured", type=Path, help="measured record: .csv/.txt/.tsv, .h5/.hdf5, .mat (v5 or v7.3)")
    v.add_argument("--map", dest="map", type=Path, required=True, help="channel map TOML")
    v.add_argument("--offset", type=float, default=None, metavar="S",
                   help="time offset, s (t_measured = t_run + S) instead of the automatic alignment")
    v.add_argument("--report", type=Path, default=None, metavar="HTML", help="write the HTML report here")
    v.set_defaults(handler=cmd_validate)
    c = sub.add_parser("calibrate", help="fit scenario or mechanism keys to a measured record (Dask)",
                       description="Fit KEYs of SCENARIO.toml (or of the mechanism it names) so that its runs match "
                                   "MEASURED on the mapped channels over the measured time span (a whole record, first "
                                   "contact to hard dock, is fine): a global phase (differential evolution over "
                                   "start/F .. start*F, each generation's runs in parallel on Dask), then a local "
                                   "polish (least squares). Prints each key with the half-width of its 95 %% interval "
                                   "(a block bootstrap of the residual), the keys' correlation and the metrics before "
                                   "and after, then writes the fitted scenario (and mechanism) TOML. Ctrl+C stops and "
                                   "writes the best point so far. Exit: 0 converged, 2 bad input, 3 not converged "
                                   "(the reason is printed; the best point is written), 4 cancelled (best point "
                                   "written), 5 the fitted file cannot be written (the values are printed).")
    c.add_argument("scenario", type=Path, help="scenario TOML")
    c.add_argument("measured", type=Path, help="measured record (as for validate)")
    c.add_argument("--map", dest="map", type=Path, required=True, help="channel map TOML")
    c.add_argument("--fit", required=True, metavar="KEY[,KEY...]",
                   help="keys to fit, section.key as in the scenario or mechanism TOML "
                        "(e.g. initial.lateral_miss, or a mechanism key: dockmnemo run --describe lists them)")
    c.add_argument("--offset", type=float, default=None, metavar="S", help="fixed time offset, s (default: "
                                                                           "aligned on the scenario's own run)")
    c.add_argument("-o", "--out", type=Path, default=None,
                   help="fitted scenario TOML to write (default: <scenario>_fitted.toml here); a fitted mechanism "
                        "goes next to it named from it: <out stem>_<mechanism>.toml")
    c.add_argument("--max-runs", type=int, default=None, help="most candidate runs (default 80 + 100 per key)")
    c.add_argument("--search", type=float, default=2.0, metavar="F",
                   help="search each key from start/F to start*F within its declared range (default 2)")
    c.add_argument("--restarts", type=int, default=2, metavar="N",
                   help="polishes from other basins of the global phase when the first leaves a misfit (default 2)")
    c.add_argument("--report", type=Path, default=None, metavar="HTML",
                   help="write an HTML report: each key's cost profile, before/after overlays, metrics")
    c.add_argument("--workers", type=int, default=None, help="local cluster worker processes (default: CPU count)")
    c.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://host:port (default: a local "
                                                      "cluster)")
    c.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                   help="numba kernel cache the workers share (as for dockmnemo campaign)")
    c.set_defaults(handler=cmd_calibrate)


def cmd_validate(args) -> int:
    """Compare; Ctrl+C or SIGTERM stops at once (exit 130 / 143), the report never half-written."""
    from app.progress import StopOnSignal, Stopped
    stop = StopOnSignal(raising=True)   # nothing is kept before the report, which is written atomically
    try:
        return _validate(args)
    except Stopped:
        return fail(f"validate stopped by {stop.name}; nothing written", stop.exit_status)
    finally:
        stop.restore()


def _validate(args) -> int:
    from solver.measured import MeasuredError, compare_run
    from solver.runfile import RunFile, RunFileError
    if args.offset is not None and not math.isfinite(args.offset):
        return fail(f"--offset: must be a finite number of seconds, found {args.offset}")
    if args.report is not None and not Path(args.report).absolute().parent.is_dir():
        return fail(f"{args.report}: --report: the directory {Path(args.report).absolute().parent} does not exist")
    try:
        cmp_ = compare_run(args.run, args.measured, args.map, args.offset)
    except (MeasuredError, RunFileError) as exc:
        return fail(exc)
    print(cmp_.report(), flush=True)
    if args.report is not None:
        from app.measured_report import write_report
        with RunFile(args.run) as run:
            facts, params = run.summary(), run.parameters_toml
        try:
            write_report(args.report, cmp_, args.run, args.measured, args.map, facts, params)
        except OSError as exc:   # disk full, file too large, not writable: no report file, not even part of one
            return fail(f"{args.report}: /: cannot be written ({exc.strerror or exc}); nothing written", 5)
        print(f"wrote {args.report}", flush=True)
    return 0


def _metrics_lines(title: str, metrics) -> list[str]:
    return [title, *(f"  {m.line()}" for m in metrics)]


def cmd_calibrate(args) -> int:
    from app.progress import StopOnSignal, TerminalProgress
    from solver.measured import MeasuredError
    from solver.measured.calibrate import (CalibrationCancelled, CalibrationError, calibrate, check_writable,
                                           default_max_runs, write_fitted)
    from solver.scenario import ScenarioError
    if args.workers is not None and args.workers < 1:
        return fail(f"--workers: must be at least 1, found {args.workers}")
    keys = [k.strip() for k in args.fit.split(",") if k.strip()]
    max_runs = args.max_runs if args.max_runs is not None else default_max_runs(max(1, len(keys)))
    if max_runs < 10:
        return fail(f"--max-runs: must be at least 10, found {max_runs}")
    if args.offset is not None and not math.isfinite(args.offset):
        return fail(f"--offset: must be a finite number of seconds, found {args.offset}")
    if args.restarts < 0:
        return fail(f"--restarts: must be 0 or more, found {args.restarts}")
    if not (args.search > 1.0 and math.isfinite(args.search)):
        return fail(f"--search: must be a factor above 1, found {args.search}")
    out = args.out or Path(f"{Path(args.scenario).stem}_fitted.toml")
    try:   # before any run, and creating nothing: a result that cannot be written is not computed
        check_writable(out)
        if args.report is not None:
            check_writable(args.report)
    except CalibrationError as exc:
        return fail(exc)
    stop = StopOnSignal()
    bar = TerminalProgress(f"calibrate {Path(args.scenario).name}", max_runs, " runs")
    try:
        cal = calibrate(args.scenario, args.measured, args.map, keys, offset=args.offset, workers=args.workers,
                        scheduler=args.scheduler, cache_dir=args.cache_dir, max_runs=max_runs,
                        progress=lambda done, total: bar.update(done), cancel=stop, search=args.search,
                        profiles=args.report is not None, restarts=args.restarts)
    except (CalibrationError, MeasuredError, ScenarioError) as exc:
        if bar.done:
            bar.close(bar.done, "stopped")
        stop.restore()
        return fail(exc)
    except CalibrationCancelled as exc:
        bar.close(bar.done, "cancelled")
        stop.restore()
        return fail(exc, 4)
    except BaseException:
        stop.restore()
        raise
    bar.close(bar.done, cal.status)
    # the result first: a file that then cannot be written loses nothing
    print(f"time offset: {cal.offset:.6f} s", flush=True)
    print("fitted (± half-width of the 95 % interval, block bootstrap of the residual):", flush=True)
    print("\n".join(cal.lines() + cal.correlation_lines()), flush=True)
    if cal.left_out:
        print(cal.left_out_line(), flush=True)
    print("\n".join(_metrics_lines("before:", cal.before) + _metrics_lines("after:", cal.after)), flush=True)
    print(f"{cal.runs} runs in {cal.rounds} rounds, {cal.wall_time:.1f} s ({cal.summary()})", flush=True)
    code = 0
    try:
        cal.written = write_fitted(args.scenario, cal, out, args.measured)
        print(f"wrote {', '.join(str(p) for p in cal.written)}", flush=True)
        if args.report is not None:
            from app.measured_report import write_calibration_report
            write_calibration_report(args.report, cal, args.scenario, args.measured, args.map)
            print(f"wrote {args.report}", flush=True)
    except OSError as exc:
        code = fail(f"{exc.filename or out}: /: cannot be written ({exc.strerror or exc}); the fitted values are "
                    "above, nothing was written", 5)
    stop.restore()   # after the last line: a Ctrl+C while printing is no traceback
    if code:
        return code
    if cal.status == "cancelled":
        return fail(f"calibration cancelled: the best point so far is written to {out}", 4)
    if not cal.converged:
        return fail(f"calibration not converged: {'; '.join(cal.reasons) or cal.status} (the best point is "
                    f"written to {out})", 3)
    return 0
