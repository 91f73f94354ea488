"""Encode rendered frames to MP4 (H.264 yuv420p), GIF or a PNG sequence through PyAV, atomically."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import av
import numpy as np

FORMATS = ("mp4", "gif", "png")


class ExportCancelled(Exception):
    """The user cancelled an export; nothing was left behind."""


def format_for(path: Path, fmt: str | None = None) -> str:
    """Export format from an explicit choice or the output name (`.mp4`, `.gif`, a folder for PNGs)."""
    if fmt:
        if fmt not in FORMATS:
            raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower().lstrip(".")
    return ext if ext in ("mp4", "gif") else "png"


class FrameSink:
    """Writes RGB frames (H, W, 3 uint8) to a temporary name and renames to `path` on `commit`."""

    def __init__(self, path, fps: int, size: tuple[int, int], fmt: str | None = None, crf: int = 20):
        self.path = Path(path)
        self.fmt = format_for(self.path, fmt)
        self.fps, self.size = int(fps), (int(size[0]), int(size[1]))
        self.count = 0
        parent = self.path.parent
        parent.mkdir(parents=True, exist_ok=True)
        if self.fmt == "png":
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

    def write(self, rgb: np.ndarray):
        if rgb.shape[:2] != (self.size[1], self.size[0]):
            raise ValueError(f"frame is {rgb.shape[1]}x{rgb.shape[0]}, export size is {self.size[0]}x{self.size[1]}")
        if self.fmt == "png":
            from PySide6.QtGui import QImage
            h, w = rgb.shape[:2]
            img = QImage(np.ascontiguousarray(rgb).data, w, h, 3 * w, QImage.Format_RGB888)
            img.save(str(self.tmp / f"frame_{self.count:06d}.png"))
        else:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
            for packet in self.stream.encode(frame):
                self.container.mux(packet)
        self.count += 1

    def commit(self) -> Path:
        """Finish the file and move it to its final name."""
        if self.container is not None:
            for packet in self.stream.encode(None):
                self.container.mux(packet)
            self.container.close()
            self.container = None
        if self.fmt == "png" and self.path.exists():
            shutil.rmtree(self.path)
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self):
        """Drop everything written so far."""
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
           progress: Callable[[int], bool | None] | None = None, total: int | None = None) -> Path:
    """Write an iterable of RGB frames; `progress(count)` returning False cancels. No partial file is left."""
    sink = FrameSink(path, fps, size, fmt)
    try:
        for rgb in frames:
            sink.write(rgb)
            if progress is not None and progress(sink.count) is False:
                raise ExportCancelled(f"export to {path} cancelled after {sink.count} of {total or '?'} frames")
        return sink.commit()
    except BaseException:
        sink.abort()
        raise
