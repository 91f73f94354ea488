"""Clip lists for report videos: intervals with playback speed and title cards, saved beside the run."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

SIDECAR_SUFFIX = ".clips.json"
SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "480p": (854, 480)}


class ClipError(ValueError):
    """A clip that cannot be exported (bad interval, speed or title), with a message saying why."""


@dataclass
class Clip:
    """One interval of the run [start, end] s played at `speed` x real time, optionally after a title card."""
    start: float
    end: float
    speed: float = 1.0
    title: str = ""
    title_duration: float = 2.0

    def validate(self, t0: float = -math.inf, t1: float = math.inf):
        if not all(math.isfinite(v) for v in (self.start, self.end, self.speed, self.title_duration)):
            raise ClipError(f"clip {self.start}:{self.end}: values must be finite numbers")
        if self.end <= self.start:
            raise ClipError(f"clip {self.start:g}:{self.end:g}: end must be after start")
        if self.speed <= 0:
            raise ClipError(f"clip {self.start:g}:{self.end:g}: speed must be positive, got {self.speed:g}")
        if self.title_duration < 0:
            raise ClipError(f"clip {self.start:g}:{self.end:g}: title duration must be >= 0")
        if self.start < t0 - 1e-9 or self.end > t1 + 1e-9:
            raise ClipError(f"clip {self.start:g}:{self.end:g} s is outside the run ({t0:g}..{t1:g} s)")

    def n_frames(self, fps: float) -> int:
        return int(round((self.end - self.start) * fps / self.speed))

    def n_title_frames(self, fps: float) -> int:
        return int(round(self.title_duration * fps)) if self.title else 0


@dataclass
class ClipList:
    """The clips of one report video and its encoding settings."""
    clips: list[Clip] = field(default_factory=list)
    fps: int = 30
    size: tuple[int, int] = (1280, 720)

    def total_frames(self) -> int:
        return sum(c.n_frames(self.fps) + c.n_title_frames(self.fps) for c in self.clips)

    def schedule(self):
        """Yield ("title", clip_index, k) for title frames and ("frame", clip_index, t) for run frames."""
        for ci, c in enumerate(self.clips):
            for k in range(c.n_title_frames(self.fps)):
                yield "title", ci, k
            n = c.n_frames(self.fps)
            for k in range(n):
                yield "frame", ci, c.start + k * c.speed / self.fps

    def to_json(self) -> str:
        return json.dumps({"fps": self.fps, "size": list(self.size), "clips": [asdict(c) for c in self.clips]},
                          indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "clip list") -> "ClipList":
        try:
            d = json.loads(text)
            clips = [Clip(**c) for c in d.get("clips", [])]
            out = cls(clips, int(d.get("fps", 30)), tuple(int(v) for v in d.get("size", (1280, 720))))
        except (ValueError, TypeError, KeyError) as exc:
            raise ClipError(f"{source}: not a valid clip list ({exc})") from None
        for c in out.clips:
            c.validate()
        return out

    def save(self, path: Path):
        Path(path).write_text(self.to_json())

    @classmethod
    def load(cls, path: Path) -> "ClipList":
        return cls.from_json(Path(path).read_text(), str(path))


def sidecar_path(run_path) -> Path:
    """Where a run's clip list is kept: RUN.h5 -> RUN.clips.json beside it."""
    p = Path(run_path)
    return p.with_name(p.stem + SIDECAR_SUFFIX)


_CLIP_RE = re.compile(r"^\s*([0-9.eE+-]+)\s*:\s*([0-9.eE+-]+)\s*(?:@\s*([0-9.eE+-]+)\s*x?)?\s*$")


def parse_clip(spec: str) -> Clip:
    """Parse `START:END[@SPEED]`, e.g. `177:180@0.25`."""
    m = _CLIP_RE.match(spec)
    if not m:
        raise ClipError(f"clip {spec!r}: expected START:END or START:END@SPEED in seconds, e.g. 177:180@0.25")
    try:
        c = Clip(float(m.group(1)), float(m.group(2)), float(m.group(3)) if m.group(3) else 1.0)
    except ValueError:
        raise ClipError(f"clip {spec!r}: not numbers") from None
    c.validate()
    return c


def parse_size(text: str) -> tuple[int, int]:
    """`720p`, `1080p` or `WxH`; even sizes only (H.264 yuv420p needs them)."""
    if text in SIZES:
        return SIZES[text]
    m = re.match(r"^(\d+)x(\d+)$", text)
    if not m:
        raise ClipError(f"size {text!r}: expected 720p, 1080p or WIDTHxHEIGHT")
    w, h = int(m.group(1)), int(m.group(2))
    if w < 64 or h < 64 or w % 2 or h % 2:
        raise ClipError(f"size {text!r}: width and height must be even and at least 64")
    return w, h
