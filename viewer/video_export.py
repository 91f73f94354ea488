"""Encode rendered frames to MP4 (H.264 yuv420p), GIF or a PNG sequence through PyAV, atomically."""
from __future__ import annotations

import os
import queue
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Callable

import av
import numpy as np

FORMATS = ("mp4", "gif", "png")


class ExportCancelled(Exception):
    """The user cancelled an export; nothing was left behind."""


_STOP = object()
PARTIAL: set[Path] = set()   # temporary names of the exports under way (removed by `remove_partial_files`)


def remove_partial_files():
    """Delete the temporary files and folders of every unfinished export of this process."""
    for tmp in list(PARTIAL):
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        PARTIAL.discard(tmp)


class OutputError(ValueError):
    """An export output that cannot be written: `path: problem`, the problem saying what is accepted."""

    def __init__(self, path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


ACCEPTED = "accepted: NAME.mp4, NAME.gif, or a folder name (no extension, or --format png) for PNG frames"
_FRAME_RE = re.compile(r"^frame_\d{6}\.png$")


def _png_frames_only(folder: Path) -> bool:
    """True for an empty folder or one holding only frame_NNNNNN.png of an earlier export."""
    return all(_FRAME_RE.match(p.name) and p.is_file() for p in folder.iterdir())


def check_output(path, fmt: str | None = None, probe: bool = True) -> str:
    """The export format for `path` (`fmt`, or from the name); OutputError naming what is wrong otherwise.

    MP4 and GIF go to NAME.mp4 / NAME.gif; PNG frames to a folder (new, empty, or of an earlier export's frames)."""
    if not str(path).strip():
        raise OutputError("''", f"no output name ({ACCEPTED})")
    path = Path(path).expanduser()
    if fmt is not None and fmt not in FORMATS:
        raise OutputError(path, f"unknown format {fmt!r} ({ACCEPTED})")
    ext = path.suffix.lower()
    if fmt is None:
        if ext in (".mp4", ".gif"):
            fmt = ext[1:]
        elif path.is_dir() or not ext:
            fmt = "png"
        elif ext == ".png":
            raise OutputError(path, f"PNG frames are written to a folder (frame_000000.png, ...); give a folder "
                              f"name such as {path.with_suffix('')} or add --format png ({ACCEPTED})")
        else:
            raise OutputError(path, f"unknown format {ext!r} ({ACCEPTED})")
    elif fmt in ("mp4", "gif") and ext != f".{fmt}":
        raise OutputError(path, f"format {fmt} needs a name ending in .{fmt}")
    elif fmt == "png" and ext in (".mp4", ".gif"):
        raise OutputError(path, f"names a {ext[1:].upper()} file; PNG frames are written to a folder")
    if path.is_dir():
        if fmt != "png":
            raise OutputError(path, f"is a folder; give a file name ending in .{fmt}")
        if not _png_frames_only(path):
            raise OutputError(path, f"is a folder holding other files; PNG frames go to a new or empty folder "
                              f"(or one holding only the frame_NNNNNN.png of an earlier export)")
    elif fmt == "png" and path.exists():
        raise OutputError(path, "is a file; PNG frames are written to a folder")
    parent = path.absolute().parent
    if not parent.is_dir():
        first = next(a for a in parent.parents if a.exists()) if not parent.exists() else parent
        if not first.is_dir():
            raise OutputError(path, f"{first} is a file, not a folder")
        raise OutputError(path, f"folder {parent} does not exist")
    if probe:
        try:
            tempfile.TemporaryFile(dir=parent).close()
        except OSError as exc:
            raise OutputError(path, f"cannot write in folder {parent} ({exc.strerror or exc})") from None
    return fmt


class FrameSink:
    """Writes RGB (H, W, 3) or BGRA (H, W, 4) uint8 frames to a temporary name; `commit` renames to `path`.

    With `threaded`, colour conversion and encoding run in a worker thread (PyAV releases the GIL there),
    overlapping with the rendering of the next frame.
    """

    def __init__(self, path, fps: int, size: tuple[int, int], fmt: str | None = None, crf: int = 20,
                 threaded: bool = False):
        self.path = Path(path)
        self.fmt = check_output(self.path, fmt)
        self.fps, self.size = int(fps), (int(size[0]), int(size[1]))
        self.count = 0
        self._queue: queue.Queue | None = None
        self._error: BaseException | None = None
        parent = self.path.parent
        if self.fmt == "png":
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", suffix=".part", dir=parent))
            PARTIAL.add(self.tmp)
            self.container = None
            return
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=f".part.{self.fmt}", dir=parent)
        os.close(fd)
        self.tmp = Path(name)
        PARTIAL.add(self.tmp)
        try:
            self.container = av.open(str(self.tmp), "w", format="mp4" if self.fmt == "mp4" else "gif")
            if self.fmt == "mp4":
                s = self.container.add_stream("libx264", rate=self.fps)
                s.pix_fmt = "yuv420p"
                s.options = {"preset": "veryfast", "crf": str(crf), "tune": "animation"}
            else:
                s = self.container.add_stream("gif", rate=self.fps)
                s.pix_fmt = "rgb8"
            s.width, s.height = self.size
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            PARTIAL.discard(self.tmp)
            raise
        self.stream = s
        if threaded:
            self._queue = queue.Queue(maxsize=3)
            self._worker = threading.Thread(target=self._work, name="FrameSink-encoder", daemon=True)
            self._worker.start()

    def write(self, pixels: np.ndarray):
        """Add one frame: RGB (H, W, 3) or BGRA (H, W, 4, e.g. a Format_RGB32 QImage's bytes); copied."""
        if pixels.shape[:2] != (self.size[1], self.size[0]) or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
            raise ValueError(f"frame is {pixels.shape[1]}x{pixels.shape[0]} (shape {pixels.shape}), "
                             f"export size is {self.size[0]}x{self.size[1]} RGB or BGRA")
        if self._error is not None:
            raise self._error
        pixels = np.ascontiguousarray(pixels)
        if self.fmt == "png":
            from PySide6.QtGui import QImage
            h, w, c = pixels.shape
            fmt = QImage.Format_RGB888 if c == 3 else QImage.Format_RGB32
            img = QImage(pixels.data, w, h, c * w, fmt)
            if not img.save(str(self.tmp / f"frame_{self.count:06d}.png")):
                raise OSError(f"cannot write PNG frame {self.count} in {self.tmp}")
        else:
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24" if pixels.shape[2] == 3 else "bgra")
            if self._queue is not None:
                self._put(frame)
            else:
                self._encode(frame)
        self.count += 1

    def _encode(self, frame):
        for packet in self.stream.encode(frame):
            self.container.mux(packet)

    def _put(self, item):
        while True:
            if self._error is not None:
                raise self._error
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _work(self):
        while True:
            frame = self._queue.get()
            if frame is _STOP:
                return
            if self._error is None:
                try:
                    self._encode(frame)
                except BaseException as exc:  # reported to the writer on its next call
                    self._error = exc

    def _stop_worker(self):
        if self._queue is not None:
            self._queue.put(_STOP)
            self._worker.join()
            self._queue = None

    def commit(self, cancelled: Callable[[], bool] | None = None) -> Path:
        """Finish the file and move it to its final name; `cancelled()` true just before the move aborts instead."""
        if self.container is not None:
            self._stop_worker()
            if self._error is not None:
                raise self._error
            self._encode(None)
            self.container.close()
            self.container = None
        if cancelled is not None and cancelled():
            raise ExportCancelled(f"export to {self.path} cancelled while finishing the file")
        if self.fmt == "png" and self.path.is_dir():   # an earlier export's frames (check_output allowed no more)
            for old in self.path.iterdir():
                if _FRAME_RE.match(old.name):
                    old.unlink()
            self.path.rmdir()
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.tmp, (0o777 if self.tmp.is_dir() else 0o666) & ~mask)  # mkstemp made it private
        os.replace(self.tmp, self.path)
        PARTIAL.discard(self.tmp)
        return self.path

    def abort(self):
        """Drop everything written so far."""
        if self._queue is not None:
            self._error = self._error or ExportCancelled("aborted")
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._stop_worker()
        if self.container is not None:
            try:
                self.container.close()
            except Exception:
                pass
            self.container = None
        if self.tmp.is_dir():
            shutil.rmtree(self.tmp, ignore_errors=True)
        elif self.tmp.exists():
            self.tmp.unlink()
        PARTIAL.discard(self.tmp)


def encode(frames, path, fps: int, size, fmt: str | None = None,
           progress: Callable[[int], bool | None] | None = None, total: int | None = None,
           threaded: bool = False) -> Path:
    """Write an iterable of RGB frames; `progress(count)` returning False cancels. No partial file is left."""
    sink = FrameSink(path, fps, size, fmt, threaded=threaded)
    try:
        for rgb in frames:
            sink.write(rgb)
            if progress is not None and progress(sink.count) is False:
                raise ExportCancelled(f"export to {path} cancelled after {sink.count} of {total or '?'} frames")
        return sink.commit()
    except BaseException:
        sink.abort()
        raise
