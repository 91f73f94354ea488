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
The diagram is rendered offscreen (no window appears): through EGL where it works, needing no display;
otherwise VTK needs an X display with OpenGL: on a server or in CI run it under a virtual one,
e.g. `xvfb-run -a dockmnemo export ...` (harmless where EGL works).
Without --clip the run's saved clip list (RUN.clips.json beside the run, written by the Clips dialog)
is used. Exit status 2 with a one-line message on bad input, before anything is rendered; Ctrl+C stops
between frames with status 130 (SIGTERM: 143). Nothing is left behind on failure or a signal."""

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
                   help="output: NAME.mp4, NAME.gif, or a folder for PNG frames (a name without extension, or any "
                        "name with --format png; new, empty, or holding an earlier export's frames)")
    e.add_argument("--format", choices=("mp4", "gif", "png"), help="output format (default: from the name)")
    e.add_argument("--size", default=None, help="720p (default), 1080p, 480p or WIDTHxHEIGHT (even numbers)")
    e.add_argument("--fps", type=int, default=None, help="frames per second of the video (default 30)")
    e.add_argument("--plots", default=None, metavar="CH1,CH2",
                   help="channels plotted in the bottom pane (default: the run's mechanism type's default plots)")
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


class _EndOnX:
    """How an export drawn through an X server (no working EGL here) ends: at once with os._exit, partial files
    removed, never through Qt's and VTK's teardown.

    `xvfb-run` stops its X server on the same Ctrl+C; Qt and Xlib then call exit() from inside a frame, and VTK's
    Finalize or the C++ destructors run by exit() use the dead connection and crash. Armed, `end` is run by exit()
    before the destructors of the libraries loaded before `arm` (a glibc __cxa_atexit hook); as that hook may not
    run after Python has finalized, the export on X always leaves through `end`."""

    def __init__(self, stop, out):
        self.stop, self.out, self.armed = stop, out, False
        self._hooks = []   # (the C callbacks stay alive: glibc keeps their addresses)

    def arm(self):
        """Register the exit() hook again (after newly loaded libraries: the GL driver) and arm it."""
        import ctypes
        hook = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _arg: self.armed and self.end(flush=False))
        getattr(ctypes.CDLL(None), "__cxa_atexit")(hook, None, None)   # (glibc exports no atexit)
        self._hooks.append(hook)
        self.armed = True

    def end(self, status: int | None = None, flush: bool = True):
        """End the process with `status`; None: stopped by the signal, or by losing the display (partial files
        removed, one line on stderr). Python's stdout and stderr are flushed unless called from exit()."""
        from viewer.video_export import remove_partial_files
        self.armed = False
        remove_partial_files()
        if flush:
            sys.stdout.flush()
            sys.stderr.flush()
        if status is None:
            why = f"stopped by {self.stop.name}" if self.stop() else "failed: the X display closed"
            os.write(2, f"\ndockmnemo: export {why}; {self.out} not written, partial files removed\n".encode())
            status = self.stop.exit_status if self.stop() else 1
        os._exit(status)


def _end_at_once(stop, out):
    """While frames are rendered, Ctrl+C or SIGTERM ends the process from its handler (a frame of the diagram, or
    building it, takes longer than a second on a busy machine): partial files removed, one line, exit 130 / 143.
    Returns the call that goes back to `stop`'s flag (before the finished file's rename: it is kept or not made)."""
    import signal

    def handler(signum, _frame):
        from viewer.video_export import remove_partial_files
        stop.signal = stop.signal or signum
        remove_partial_files()
        sys.stdout.flush()
        os.write(2, f"\ndockmnemo: export stopped by {stop.name}; {out} not written, partial files removed\n".encode())
        os._exit(stop.exit_status)
    for sig in stop.SIGNALS:
        signal.signal(sig, handler)

    def back_to_flag():
        for sig in stop.SIGNALS:
            signal.signal(sig, stop._on_signal)  # noqa: SLF001  (app.progress's own handler)
    return back_to_flag


def cmd_export(args) -> int:
    """Export clips headlessly with a terminal progress bar; exit 2 on bad input, 130 on Ctrl+C, 143 on SIGTERM."""
    from app.progress import StopOnSignal
    stop = StopOnSignal()   # from here to the process' end Ctrl+C and SIGTERM only set a flag, read between frames
    had_qt = _qt_app() is not None
    status = _checked_export(args, stop)
    if stop() and status != 0:
        print(f"dockmnemo: export stopped by {stop.name}; {args.output} not written, partial files removed",
              file=sys.stderr, flush=True)
        status = stop.exit_status
    if not had_qt and _qt_app() is not None:
        # Qt and VTK were started here (and their diagram deleted): end without the interpreter's teardown, which
        # restores the default signal actions (a late Ctrl+C would kill the process) and has nothing left to free
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def _qt_app():
    widgets = sys.modules.get("PySide6.QtWidgets")
    return widgets.QApplication.instance() if widgets is not None else None


def _checked_export(args, stop) -> int:
    """Refuse bad input (exit 2) before anything is rendered or written, then export."""
    from solver.runfile import RunFile, RunFileError
    from viewer.clips import ClipError
    from viewer.video_export import OutputError, check_output

    try:
        fmt = check_output(args.output, args.format)
    except OutputError as exc:
        return fail(f"-o {exc}")
    try:
        run = RunFile(args.run)
    except RunFileError as exc:
        return fail(str(exc))
    try:
        run.check_data()   # every frame, as `info` does: a corrupt chunk is refused, never rendered (issue 31)
    except RunFileError as exc:
        run.close()
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
    from viewer.clip_render import DiagramRenderer, export_clips
    from viewer.video_export import ExportCancelled
    from viewer.vtk_view import use_headless_gl

    on_x = None
    if QApplication.instance() is None:
        if use_headless_gl():   # EGL: no display server used at all, so none going away can touch the export
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        elif sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
            return fail("export renders the diagram with VTK, which found no working EGL here and then needs an "
                        "X display; run it as `xvfb-run -a dockmnemo export ...`")
        else:
            if os.environ.get("QT_QPA_PLATFORM", "xcb") in ("xcb", "offscreen", "minimal"):
                os.environ["QT_QPA_PLATFORM"] = "xcb;offscreen"   # VTK's X window needs Qt on X; offscreen: X gone
            on_x = _EndOnX(stop, out)
            on_x.arm()
            if stop():
                on_x.end()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    if on_x is not None and app.platformName() != "xcb":
        if not stop():
            fail(f"cannot connect to the X display {os.environ.get('DISPLAY')}; "
                 f"run it as `xvfb-run -a dockmnemo export ...`")
        on_x.end(None if stop() else 2)
    total = clips.total_frames()
    bar = TerminalProgress(f"export {out.name}", total, " frames")
    bar.update(0)
    if stop():   # (a signal while Qt started)
        if on_x is not None:
            on_x.end()
        return 1
    back_to_flag = _end_at_once(stop, out)

    def progress(done, n):
        bar.update(done)
        if done >= n:   # every frame written: a signal now waits for the file's rename (whole file or none)
            back_to_flag()
    renderer = None
    try:
        renderer = DiagramRenderer(run, clips.size, plotted=plotted)
        if on_x is not None:
            on_x.arm()   # (again: now also before the GL driver's destructors)
        path = export_clips(run, clips, out, fmt, progress=progress, renderer=renderer, cancel=stop)
        status = 0
    except BaseException as exc:
        back_to_flag()
        bar.close(bar.done)
        if on_x is not None and (stop() or not isinstance(exc, (OSError, ValueError))):
            if not stop():
                import traceback
                traceback.print_exc()
            on_x.end(None if stop() else 1)
        if isinstance(exc, ExportCancelled) and stop():
            status = 1
        elif isinstance(exc, (OSError, ValueError)):
            status = fail(f"{out}: {exc}")
        else:
            raise
    else:
        back_to_flag()
        bar.close()
        w, h = clips.size
        print(f"wrote {path}: {total} frames, {w}x{h}, {clips.fps} fps, {total / clips.fps:.2f} s, {fmt}", flush=True)
    if on_x is not None:   # (a signal after the file was complete: it is kept, exit 0)
        on_x.end(status)
    if renderer is not None:
        renderer.close()   # the hidden diagram's widgets deleted now, while Qt and VTK are whole
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return status
