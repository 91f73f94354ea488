"""`dockmnemo export RUN.h5 --clip 0:12 --clip 177:180@0.25 --title "..." -o clip.mp4`: headless clip export."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app.progress import fail

EXPORT_HELP = """\
Render chosen intervals of a run as the whole three-pane mnemonic diagram (scene, devices, plots) with
title cards and burned-in T Current, and encode them to MP4 (H.264 yuv420p), GIF or a PNG sequence.
The diagram is rendered offscreen (no window appears) but VTK still needs an X display with OpenGL:
on a server or in CI run it under a virtual one, e.g. `xvfb-run -a dockmnemo export ...`.
Without --clip the run's saved clip list (RUN.clips.json beside the run, written by the Clips dialog)
is used. Exit status 2 with a one-line message on bad input; nothing is left behind on failure or Ctrl+C.
(QT_QPA_PLATFORM=offscreen gives VTK no GL context, so export uses the X display even if it is set.)"""

EXPORT_EXAMPLES = """\
examples:
  xvfb-run -a dockmnemo export run.h5 --clip 0:12 -o capture.mp4
  xvfb-run -a dockmnemo export run.h5 --clip 0:12 --title "Capture" --clip 177:180@0.25 \\
        --title "Impact on the cone, 1/4 speed" -o clip.mp4 --size 1080p --fps 30
  xvfb-run -a dockmnemo export run.h5 -o clip.gif          (the clips saved with the run)
"""


class _ClipAction(argparse.Action):
    """Collect --clip and --title in command-line order into one list of ("clip"|"title", text)."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, "clip_items", None) or [])
        items.append(("clip" if option_string == "--clip" else "title", values))
        namespace.clip_items = items


def add_export_parser(sub) -> argparse.ArgumentParser:
    """Register `export` on the CLI's subparsers."""
    e = sub.add_parser("export", help="render clips of a run to MP4 / GIF / PNG (needs an X display: xvfb-run)",
                       description=EXPORT_HELP, epilog=EXPORT_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("run", type=Path, help="run file (HDF5, format v1)")
    e.add_argument("--clip", action=_ClipAction, dest="clip_items", metavar="START:END[@SPEED]",
                   help="an interval in run seconds, optionally at a playback speed (0.25 = quarter speed); "
                        "repeat for several intervals")
    e.add_argument("--title", action=_ClipAction, dest="clip_items", metavar="TEXT",
                   help="title card shown before the preceding --clip (before any --clip: the first clip)")
    e.add_argument("--title-duration", type=float, default=2.0, metavar="S", help="seconds per title card (2)")
    e.add_argument("-o", "--output", type=Path, required=True,
                   help="output file: .mp4, .gif, or a folder name for a PNG sequence")
    e.add_argument("--format", choices=("mp4", "gif", "png"), help="output format (default: from the name)")
    e.add_argument("--size", default=None, help="720p (default), 1080p, 480p or WIDTHxHEIGHT (even numbers)")
    e.add_argument("--fps", type=int, default=None, help="frames per second of the video (default 30)")
    e.add_argument("--plots", default=None, metavar="CH1,CH2",
                   help="channels plotted in the bottom pane (default: base loads and probe stroke)")
    e.set_defaults(handler=cmd_export)
    return e


def build_clip_list(args, run):
    """The ClipList from --clip/--title (or the run's sidecar), --size and --fps; raises ClipError."""
    from viewer.clips import ClipError, ClipList, parse_clip, parse_size, sidecar_path
    items = getattr(args, "clip_items", None) or []
    clips = [parse_clip(v) for k, v in items if k == "clip"]
    if clips:
        cl = ClipList(clips)
        ci = -1
        for kind, value in items:  # a title belongs to the clip given before it (before any: the first)
            if kind == "clip":
                ci += 1
            else:
                clips[max(ci, 0)].title = value
                clips[max(ci, 0)].title_duration = args.title_duration
    else:
        side = sidecar_path(args.run)
        if not side.exists():
            raise ClipError(f"no --clip given and no saved clip list {side} beside the run")
        cl = ClipList.load(side)
        if not cl.clips:
            raise ClipError(f"the saved clip list {side} has no intervals; give --clip START:END")
        for kind, value in items:  # --title without --clip: title of the first saved clip
            cl.clips[0].title = value
    if args.size:
        cl.size = parse_size(args.size)
    if args.fps is not None:
        if not 1 <= args.fps <= 120:
            raise ClipError(f"--fps {args.fps}: choose 1..120 frames per second")
        cl.fps = args.fps
    if args.title_duration < 0:
        raise ClipError(f"--title-duration {args.title_duration:g}: must be >= 0")
    t0, t1 = float(run.time[0]), float(run.time[-1])
    for c in cl.clips:
        c.validate(t0, t1)
    return cl


def cmd_export(args) -> int:
    """Export clips headlessly with a terminal progress bar; exit 2 on bad input, 130 on Ctrl+C, 143 on SIGTERM."""
    from app.progress import StopOnSignal
    stop = StopOnSignal()   # from here Ctrl+C and SIGTERM only set a flag, read between frames
    try:
        status = _checked_export(args, stop)
    finally:
        stop.restore()
    if stop() and status != 0:
        print(f"dockmnemo: export stopped by {stop.name}; {args.output} not written, partial files removed",
              file=sys.stderr, flush=True)
        return stop.exit_status
    return status


def _checked_export(args, stop) -> int:
    """Refuse bad input (exit 2) before anything is rendered or written, then export."""
    from solver.runfile import RunFile, RunFileError
    from viewer.clips import ClipError
    from viewer.video_export import OutputError, check_output

    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        return fail("export renders the diagram with VTK and needs an X display; run it as "
                     "`xvfb-run -a dockmnemo export ...` on a machine without a screen")
    try:
        fmt = check_output(args.output, args.format)
    except OutputError as exc:
        return fail(f"-o {exc}")
    try:
        run = RunFile(args.run)
    except RunFileError as exc:
        return fail(str(exc))
    try:
        try:
            clips = build_clip_list(args, run)
        except ClipError as exc:
            return fail(f"{args.run}: {exc}")
        plotted = None
        if args.plots:
            plotted = [c.strip() for c in args.plots.split(",") if c.strip()]
            missing = [c for c in plotted if c not in run.channels]
            if missing:
                return fail(f"{args.run}: no channel {', '.join(map(repr, missing))} to plot "
                             f"(`dockmnemo info {args.run} --channels` lists them)")
        if stop():
            return 1
        return _export(run, clips, args.output, fmt, plotted, stop)
    finally:
        run.close()


def _export(run, clips, out, fmt, plotted, stop) -> int:
    import viewer.qt_compat  # noqa: F401  (before any PySide6 call)
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication
    from app.progress import TerminalProgress
    from viewer.clip_render import export_clips
    from viewer.video_export import ExportCancelled

    if QApplication.instance() is None and os.environ.get("QT_QPA_PLATFORM", "xcb") in ("offscreen", "minimal"):
        os.environ["QT_QPA_PLATFORM"] = "xcb"  # VTK needs a real X window for its GL context; nothing is shown
    app = QApplication.instance() or QApplication(sys.argv[:1])  # noqa: F841  (Qt widgets need it)
    total = clips.total_frames()
    bar = TerminalProgress(f"export {out.name}", total, " frames")
    bar.update(0)
    try:
        path = export_clips(run, clips, out, fmt, progress=lambda done, n: bar.update(done), plotted=plotted,
                            cancel=stop)
    except ExportCancelled:
        bar.close(0)
        return 1
    except (OSError, ValueError) as exc:
        bar.close(0)
        return fail(f"{out}: {exc}")
    finally:   # the hidden diagram's widgets are deleted now, while Qt and VTK are whole, not at interpreter exit
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    bar.close()
    w, h = clips.size
    print(f"wrote {path}: {total} frames, {w}x{h}, {clips.fps} fps, {total / clips.fps:.2f} s, {fmt}")
    return 0
