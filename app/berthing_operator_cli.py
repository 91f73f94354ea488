"""`dockmnemo berthing-operator SCENARIO -o RUN.h5`: an operator session of a berthing scenario, the solver locked to
wall time (seed 001 ch. VIII, §8.4). The hand controllers' deflections come in on standard input, one line each
("CMD tx ty tz rx ry rz brakes", fractions of full deflection in the payload frame; "STOP" ends the session); it prints
STARTED / PROGRESS lines as `run --progress-lines` does and "REALTIME factor headroom behind" after each block. The app's
Run -> Berthing (operator...) drives it; the session is an ordinary run file (its commands are channels)."""
from __future__ import annotations

import math
import sys
import threading
import time
from pathlib import Path

from app.progress import fail


def add_berthing_operator_parser(sub):
    """Register `berthing-operator` on the CLI's subparsers."""
    r = sub.add_parser("berthing-operator", help="an operator session of a berthing scenario, locked to wall time",
                       description=__doc__.split("\n", 1)[1])
    r.add_argument("scenario", type=Path, help="berthing scenario TOML (e.g. resources/berthing/scenarios/"
                                               "mrm1_operator.toml)")
    r.add_argument("-o", "--out", type=Path, required=True, help="run file to write")
    r.add_argument("--t-end", type=float, default=None, help="session length, s (default: the scenario's duration)")
    r.add_argument("--speed", type=float, default=1.0, help="simulated seconds per wall second (default 1)")
    r.add_argument("--progress-lines", action="store_true", help="PROGRESS and REALTIME lines for the app")
    r.set_defaults(handler=cmd_berthing_operator)
    return r


def read_commands(stream, link) -> None:
    """Apply the command lines of `stream` to the session's link until STOP or the end of the stream."""
    for line in stream:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "STOP":
            break
        if parts[0] == "CMD" and len(parts) == 8:
            try:
                vals = [float(x) for x in parts[1:8]]
            except ValueError:
                continue
            link.set(vals[:6], vals[6] > 0.5)
    link.stop = True


def cmd_berthing_operator(args) -> int:
    from app.cli import compile_solver_kernels
    from app.progress import StopOnSignal
    from solver import mechanisms
    from solver.scenario import ScenarioError, load_model
    from solver.simulate import RunCancelled, SolverDiverged

    try:
        m = load_model(args.scenario)
    except ScenarioError as exc:
        return fail(exc)
    mtype = getattr(m, "mechanism_type", mechanisms.DEFAULT_TYPE)
    session = mechanisms.mechanism_type(mtype).operator
    if session is None:
        return fail(f"{args.scenario}: a {mtype} scenario has no operator session")
    t_end = args.t_end if args.t_end is not None else m.duration
    if not (math.isfinite(t_end) and t_end > m.output_step) or not (math.isfinite(args.speed) and args.speed > 0):
        return fail(f"{args.scenario}: --t-end and --speed must be positive numbers, found {t_end} and {args.speed}")
    link = session.link(m, args.speed)
    stop = StopOnSignal(raising=False)
    compile_solver_kernels(m, args.progress_lines, stop)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    threading.Thread(target=read_commands, args=(sys.stdin, link), name="hand controllers", daemon=True).start()
    t_wall = time.perf_counter()

    def progress(t, total):
        if args.progress_lines:
            print(f"PROGRESS {t:.6f} {total:.6f} {time.perf_counter() - t_wall:.3f}", flush=True)
            print(f"REALTIME {link.rt_factor:.4f} {link.headroom:.2f} {int(link.behind)}", flush=True)
    if args.progress_lines:
        print(f"STARTED {out.resolve()}", flush=True)
    try:
        session.run(m, args.scenario, out, link=link, t_end=t_end, progress=progress, cancel=stop)
    except RunCancelled:
        if not link.stop:      # a signal, not the operator: say so (the file is kept, marked incomplete)
            return fail(f"{args.scenario}: session cancelled by {stop.name} (kept in {out}, marked incomplete)", 4)
    except SolverDiverged as exc:
        return fail(f"{exc} (partial session kept in {out})", 3)
    finally:
        stop.restore()
    print(f"DONE {out.resolve()}" if args.progress_lines else f"wrote {out} (real time x{link.rt_factor:.2f}, "
          f"solver headroom x{link.headroom:.1f})", flush=True)
    return 0
