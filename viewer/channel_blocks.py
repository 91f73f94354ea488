"""Lazy channel access for the panes: per-chunk blocks for current-frame values, whole arrays only on demand.

Reading one value from a gzip-chunked channel decompresses its whole chunk; caching the block means
playing through a chunk decompresses it once, not once per frame.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from solver.runfile import TIME_CHUNK, RunFile


class ChannelBlocks:
    """Cached reader over a RunFile's channels: `value(name, frame)`, `full(name)`, `abs_max(name)`."""

    def __init__(self, run: RunFile, block: int = TIME_CHUNK, max_blocks: int = 128, max_full: int = 32):
        self.run = run
        self.block = int(block)
        self.max_blocks = max_blocks
        self.max_full = max_full
        self._blocks: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self._full: OrderedDict[str, np.ndarray] = OrderedDict()
        self._abs_max: dict[str, float] = {}
        self.reads = 0  # HDF5 reads done (for tests and the bench)

    def value(self, name: str, frame: int) -> float:
        """Channel value at a frame (NaN for a channel the run does not have)."""
        if name not in self.run.channels:
            return math.nan
        full = self._full.get(name)
        if full is not None:
            return float(full[frame])
        k = frame // self.block
        key = (name, k)
        blk = self._blocks.get(key)
        if blk is None:
            a = k * self.block
            blk = self.run.channel(name, a, min(a + self.block, self.run.n_frames))
            self.reads += 1
            self._blocks[key] = blk
            while len(self._blocks) > self.max_blocks:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(key)
        return float(blk[frame - k * self.block])

    def values(self, names, frame: int) -> dict[str, float]:
        return {n: self.value(n, frame) for n in names}

    def full(self, name: str) -> np.ndarray:
        """The whole channel (read once, kept for the few plotted channels)."""
        a = self._full.get(name)
        if a is None:
            a = self.run.channel(name)
            self.reads += 1
            self._full[name] = a
            while len(self._full) > self.max_full:
                self._full.popitem(last=False)
        else:
            self._full.move_to_end(name)
        return a

    def window(self, name: str, start: int, stop: int) -> np.ndarray:
        """Frames [start, stop) of a channel (from the whole array if it is held, else read)."""
        a = self._full.get(name)
        if a is not None:
            return a[start:stop]
        self.reads += 1
        return self.run.channel(name, start, stop)

    def extend(self, n_old: int):
        """The run grew from `n_old` frames: forget what may have been cut short at the old end."""
        for key in [k for k in self._blocks if (k[1] + 1) * self.block > n_old]:
            del self._blocks[key]
        self._full.clear()   # (max |value| stays that of the frames seen first: bar ranges do not jump)

    def drop_full(self, name: str):
        self._full.pop(name, None)

    def abs_max(self, name: str) -> float:
        """max |value| over the run (NaN-aware), read block by block and remembered."""
        v = self._abs_max.get(name)
        if v is None:
            stored = self.run.stored_abs_max(name)   # (stored by the writer: no read of the data)
            if math.isfinite(stored):
                v = stored
            elif name in self._full:
                a = self._full[name]
                v = float(np.nanmax(np.abs(a))) if np.isfinite(a).any() else 0.0
            else:
                v = 0.0
                step = self.block * 16
                for a in range(0, self.run.n_frames, step):
                    blk = self.run.channel(name, a, min(a + step, self.run.n_frames))
                    self.reads += 1
                    if np.isfinite(blk).any():
                        v = max(v, float(np.nanmax(np.abs(blk))))
            self._abs_max[name] = v
        return v

    def full_scale(self, name: str) -> float:
        """A device bar's range: the channel's stroke as the file gives it; NaN when it gives none (no range)."""
        info = self.run.channels.get(name)
        s = info.stroke if info is not None else math.nan
        return s if math.isfinite(s) and s > 0 else math.nan
