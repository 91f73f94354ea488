"""`dockmnemo campaign-rerun DIR INDEX -o RUN.h5`: re-simulate one run of a campaign into a full run file.

The app's envelope map runs this in its worker process when a clicked run was kept only in the summary.
The file appears under its name only when complete (written as NAME.part first, removed on failure).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from app.progress import fail


def add_campaign_rerun_parser(sub):
    """Register `campaign-rerun` on the CLI's subparsers."""
    r = sub.add_parser("campaign-rerun", help="re-simulate one run of a campaign into a full run file",
                       description="Read the campaign summary in DIR and re-simulate run INDEX (its scenario as "
                                   "the campaign ran it) into a full run file. Exit: 0 done, 2 bad input, "
                                   "3 diverged or failed, 4 cancelled (nothing is left behind unless done).")
    r.add_argument("directory", type=Path, help="campaign directory (campaign.toml, summary.h5)")
    r.add_argument("index", type=int, help="run index in the campaign")
    r.add_argument("-o", "--out", type=Path, required=True, help="run file to write")
    r.add_argument("--progress-lines", action="store_true",
                   help="print 'PROGRESS t t_end wall' lines on stdout (for the app's worker) instead of a bar")
    r.set_defaults(handler=cmd_campaign_rerun)
    return r


def compile_campaign_kernels(summary, index: int, progress_lines: bool) -> int:
    """Load or compile the kernels of the campaign's mechanism type, saying so (run `index`'s own model: every
    scenario of a type has the same kernel argument types)."""
    import tempfile

    from app.cli import compile_solver_kernels
    from solver.campaign import dump_toml
    from solver.scenario import load_model
    with tempfile.TemporaryDirectory(prefix="dockmnemo-rerun-") as td:
        sp = Path(td) / f"run_{index:05d}.toml"
        sp.write_text(dump_toml(summary.scenario_for(index)), encoding="utf-8")
        return compile_solver_kernels(load_model(sp), progress_lines)


def cmd_campaign_rerun(args) -> int:
    from app.progress import StopOnSignal, TerminalProgress
    from solver.campaign import CampaignError, read_summary, rerun
    from solver.errors import InputError
    from solver.simulate import RunCancelled

    try:
        summary = read_summary(args.directory)
    except CampaignError as exc:
        return fail(exc)
    if args.index not in set(int(i) for i in summary.index):
        return fail(f"{args.directory}: run {args.index}: not among the {len(summary.index)} finished runs "
                    f"of campaign {summary.name}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")

    stop = StopOnSignal()
    try:        # before the bar: its ETA starts after compiling
        compile_campaign_kernels(summary, args.index, args.progress_lines)
    except InputError as exc:          # the run's scenario no longer loads (e.g. its mechanism file is gone)
        if Path(exc.path).name == f"run_{args.index:05d}.toml":     # the scenario this process wrote from the base
            return fail(f"{summary.campaign.base_path}: {exc.key}: {exc.problem} (the campaign's base scenario with "
                        f"run {args.index}'s parameters: this version cannot run it)")
        return fail(exc)
    t_wall = time.perf_counter()
    bar = {}

    def progress(t, total):
        if args.progress_lines:
            print(f"PROGRESS {t:.6f} {total:.6f} {time.perf_counter() - t_wall:.3f}", flush=True)
        else:
            bar.setdefault("bar", TerminalProgress(f"run {args.index} of {summary.name}", total, " s")).update(t)
    if args.progress_lines:
        print(f"STARTED {out.resolve()}", flush=True)
    done = False
    try:
        rerun(summary, args.index, part, progress=progress, cancel=stop)
        if stop():
            raise RunCancelled("stopped at the end")
        os.replace(part, out)
        done = True
    except RunCancelled:
        return fail(f"run {args.index} of {summary.name}: cancelled (signal {stop.signal})", 4)
    except CampaignError as exc:
        return fail(exc)
    except Exception as exc:  # noqa: BLE001  (a diverged or failing run: one line for the app, exit 3)
        return fail(f"run {args.index} of {summary.name}: {type(exc).__name__}: {exc}", 3)
    finally:
        stop.restore()
        if "bar" in bar:
            bar["bar"].close()
        if not done:
            part.unlink(missing_ok=True)
    print(f"DONE {out.resolve()}" if args.progress_lines else f"wrote {out}", flush=True)
    return 0
