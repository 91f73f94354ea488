"""Encode rendered frames to MP4 (H.264 yuv420p), GIF or a PNG sequence through PyAV, atomically."""
from __future__ import annotations

import os
import queue
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


def format_for(path: Path, fmt: str | None = None) -> str:
    """Export format from an explicit choice or the output name (`.mp4`, `.gif`, a folder for PNGs)."""
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower().lstrip(".")
    return ext if ext in ("mp4", "gif") else "png"


class FrameSink:
    """Writes RGB (H, W, 3) or BGRA (H, W, 4) uint8 frames to a temporary name; `commit` renames to `path`.

    With `threaded`, colour conversion and encoding run in a worker thread (PyAV releases the GIL there),
    overlapping with the rendering of the next frame.
    """

    def __init__(self, path, fps: int, size: tuple[int, int], fmt: str | None = None, crf: int = 20,
                 threaded: bool = False):
        self.path = Path(path)
        self.fmt = format_for(self.path, fmt)
        self.fps, self.size = int(fps), (int(size[0]), int(size[1]))
        self.count = 0
        self._queue: queue.Queue | None = None
        self._error: BaseException | None = None
        parent = self.path.parent
        parent.mkdir(parents=True, exist_ok=True)
        if self.fmt == "png":
            if self.path.exists() and not self.path.is_dir():
                raise ValueError(f"{self.path} is a file; a PNG sequence is written to a folder")
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", suffix=".part", dir=parent))
            self.container = None
            return
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=f".part.{self.fmt}", dir=parent)
        os.close(fd)
        self.tmp = Path(name)
        self.container = av.open(str(self.tmp), "w", format="mp4" if self.fmt == "mp4" else "gif")
        if self.fmt == "mp4":
            s = self.container.add_stream("libx264", rate=self.fps)
            s.pix_fmt = "yuv420p"
            s.options = {"preset": "veryfast", "crf": str(crf), "tune": "animation"}
        else:
            s = self.container.add_stream("gif", rate=self.fps)
            s.pix_fmt = "rgb8"
        s.width, s.height = self.size
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

    def commit(self) -> Path:
        """Finish the file and move it to its final name."""
        if self.container is not None:
            self._stop_worker()
            if self._error is not None:
                raise self._error
            self._encode(None)
            self.container.close()
            self.container = None
        if self.fmt == "png" and self.path.exists():
            shutil.rmtree(self.path)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self.tmp, (0o777 if self.tmp.is_dir() else 0o666) & ~mask)  # mkstemp made it private
        os.replace(self.tmp, self.path)
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
