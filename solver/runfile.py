"""Run-file format v1 (HDF5): the one interface between the solver and the viewer.

The layout is documented in docs/run-format.md. `RunWriter` appends frames in blocks; `RunFile`
opens, validates and reads lazily (any frame or channel window without loading the whole file).
"""
from __future__ import annotations

import json
import math
import os
import queue
import re
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

FORMAT_NAME = "dockmnemo-run"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)
CHANNEL_GROUPS = ("kinematics", "base_loads", "axial_damper", "lateral_damper", "contact_forces",
                  "energy", "mechanism", "spacecraft", "interface_loads")
EXTREMA_ROWS = ("min", "t_min", "max", "t_max")   # rows of /extrema/values
EVENT_KINDS = ("first_contact", "contact_begin", "contact_end", "capture", "sensor", "phase",
               "hard_dock", "diagnostic")
TIME_CHUNK = 4096
COMPRESSION = "lzf"     # with shuffle; bundled with h5py. expert_existing: 260 MB in 2.6 s CPU, gzip 1 240 MB in 4.4 s
FLUSH_INTERVAL = 1.0    # s of wall time between flushes: a killed writer loses at most the frames of ~2 intervals
WRITE_QUEUE = 8         # file operations the solver may run ahead of the writer thread (a chunk of frames at most each)

_STR = h5py.string_dtype("utf-8")
EVENT_DTYPE = np.dtype([("time", "f8"), ("kind", _STR), ("pair", _STR), ("text", _STR)])
# /contact_events: one row per contact interval, its statistics as the writer computed them (docs/run-format.md)
CONTACT_EVENT_DTYPE = np.dtype([("pair", _STR), ("start", "f8"), ("end", "f8"), ("peak_force", "f8"),
                                ("peak_time", "f8"), ("impulse", "f8"), ("approach_speed", "f8"), ("rebound", "u1"),
                                ("lasts_to_end", "u1")])


def _text_out(text) -> str:
    """A text attribute or event field as the writer stores it: one line (`one_line`), at most TEXT_LIMIT long."""
    return one_line(text)[:TEXT_LIMIT]


def _event_array(events) -> np.ndarray:
    """Events as rows of /events."""
    return np.array([(e.time, e.kind, e.pair, e.text) for e in events], dtype=EVENT_DTYPE)


class RunWriteError(Exception):
    """The run file could not be written (disk full, file too large, removed drive): names the file and the cause."""

    def __init__(self, path, problem: str, errno: int | None = None):
        self.path = str(path)
        self.problem = problem
        self.errno = errno   # the system's error number when the cause had one (EFBIG, ENOSPC, ...)
        super().__init__(f"{self.path}: writing the run file failed: {problem}")


class RunFileError(Exception):
    """A run file that cannot be read: the message names the file, the dataset and what is wrong."""

    def __init__(self, path, dataset: str, problem: str):
        self.path = str(path)
        self.dataset = dataset
        self.problem = problem
        super().__init__(f"{self.path}: {dataset}: {problem}")


@dataclass(frozen=True)
class ChannelInfo:
    """A named scalar channel: unit, label and the group it is listed under."""
    name: str
    unit: str
    label: str
    group: str
    stroke: float = math.nan  # full-scale range for bar gauges (NaN if not a device)
    place: float = math.nan   # angle around the docking axis seen from the active side, deg (lateral devices)


@dataclass(frozen=True)
class ContactPairInfo:
    """A pair of parts that may touch; the drawn parts turn red while the pair is active."""
    name: str
    part_a: str
    part_b: str
    label: str = ""


@dataclass(frozen=True)
class Event:
    time: float
    kind: str
    pair: str
    text: str


@dataclass
class PartGeometry:
    """Static wireframe of one drawn part, in the frame of the body it rides on."""
    name: str
    body: str
    points: np.ndarray          # (P, 3) float64, metres, body frame
    lines: np.ndarray           # (L, 2) int32 indices into points
    kind: str = "mechanism"     # a part kind of the mechanism type (its part_colors), "mechanism" by default
    visible_channel: str = ""   # channel whose value > 0.5 shows the part; "" = always shown


@dataclass
class FlexiblePart:
    """A part whose shape changes per frame (a rod's deflection line, a cable): P points per frame, in the frame of
    `body`, joined by `lines`; stored under /flexible/<name> (docs/run-format.md)."""
    name: str
    body: str
    n_points: int               # P
    lines: np.ndarray           # (L, 2) int32 indices into the P points
    kind: str = "rod"           # e.g. rod, cable
    label: str = ""


@dataclass
class RunMeta:
    """Root attributes of a run (the run's facts shown in the bottom pane)."""
    comment: str = ""
    variant: str = "existing"
    mechanism_type: str = ""    # a solver.mechanisms type name; "" in files written before it was named
    run_date: str = ""
    solver_version: str = ""
    output_step: float = 1e-3
    t_capture: float = math.nan
    t_final: float = math.nan
    complete: bool = False
    scenario: str = ""


# --------------------------------------------------------------------------------------------
# writer
# --------------------------------------------------------------------------------------------

# A writer holds an open-file-description lock on one byte far past the data while it runs; the kernel drops it
# when the process ends, however it ends. A run file still flagged "open for write" without that lock was left by
# a writer that died (killed): `seal_if_orphaned` seals it. Linux (64-bit) only; elsewhere liveness is unknown.
_LOCK_BYTE = 1 << 62
_FLOCK = "hhxxxxqqixxxx"   # struct flock on LP64 Linux: l_type, l_whence, l_start, l_len, l_pid


def _lock_call(fd: int, cmd_name: str, kind_name: str):
    """fcntl with struct flock for our byte; the l_type it returns (None: no OFD locks on this system)."""
    try:
        import fcntl
        cmd, kind = getattr(fcntl, cmd_name), getattr(fcntl, kind_name)
    except (ImportError, AttributeError):
        return None
    if struct.calcsize(_FLOCK) != 32:
        return None
    try:
        res = fcntl.fcntl(fd, cmd, struct.pack(_FLOCK, kind, os.SEEK_SET, _LOCK_BYTE, 1, 0))
    except OSError:
        return None
    return struct.unpack(_FLOCK, res)[0]


def _hold_writer_lock(path) -> int | None:
    """Take the writer's lock on `path`; the descriptor that holds it (None: locks unsupported)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    if _lock_call(fd, "F_OFD_SETLK", "F_WRLCK") is None:
        os.close(fd)
        return None
    return fd


def writer_alive(path) -> bool | None:
    """True while a process writes the run file, False if none does (finished, or killed); None if unknown."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        kind = _lock_call(fd, "F_OFD_GETLK", "F_RDLCK")
    finally:
        os.close(fd)
    if kind is None:
        return None
    import fcntl
    return kind != fcntl.F_UNLCK


def write_errno(exc: BaseException) -> int | None:
    """The system's error number of a failed write: an OSError's, or the one HDF5's RuntimeError text names."""
    if isinstance(exc, RunWriteError):
        return exc.errno
    if isinstance(exc, OSError) and exc.errno:
        return exc.errno
    m = re.search(r"errno = (\d+)", " ".join(str(exc).split()))
    return int(m.group(1)) if m and int(m.group(1)) else None


def _write_problem(exc: BaseException) -> str:
    """One line on a failed write: the system's words for its errno first (HDF5's messages span lines)."""
    text = " ".join(str(exc).split())
    n = write_errno(exc)
    return f"{os.strerror(n)} ({text})" if n else f"{type(exc).__name__}: {text}"


def _write_failed(path, exc: BaseException) -> "RunWriteError":
    return RunWriteError(path, _write_problem(exc), write_errno(exc))


_UNCLOSABLE: list = []   # files whose creation failed part-way (disk full): never closed, see RunWriter.__init__


class RunWriter:
    """Create a v1 run file and append frames in blocks; `finish` stamps T Final and completeness.

    Frames are buffered and written one whole chunk at a time (each chunk compressed once); a chunk that is
    all zeros (a contact pair not touching for a whole chunk) is not written: HDF5 returns the fill value 0.
    With `background` (the default) a writer thread does every file operation, in order, while the solver
    integrates; the solver runs at most WRITE_QUEUE operations ahead; a failure there raises RunWriteError here."""

    def __init__(self, path, *args, **kwargs):
        """As `_create`; a failure to create the file (disk full) is a RunWriteError and leaves no file."""
        import sys
        hook, lost = sys.unraisablehook, []
        sys.unraisablehook = lost.append   # HDF5's failed metadata writes surface in h5py's deallocs, not raised
        try:
            self._create(path, *args, **kwargs)
            if lost:
                raise lost[0].exc_value
        except Exception as exc:
            if getattr(self, "f", None) is not None:   # HDF5 crashes closing a file whose metadata writes failed:
                _UNCLOSABLE.append(self)                # kept open with its datasets (never freed), removed below
            if getattr(self, "_lock", None) is not None:
                self._release_lock()
            Path(path).with_name(Path(path).name + ".creating").unlink(missing_ok=True)
            if isinstance(exc, (OSError, RuntimeError)):
                raise _write_failed(path, exc) from None
            raise
        finally:
            sys.unraisablehook = hook

    def _create(self, path, meta: RunMeta, channels: list[ChannelInfo], bodies: list[str],
                pairs: list[ContactPairInfo], geometry: list[PartGeometry],
                parameters_toml: str = "", chunk: int = TIME_CHUNK, contact_detail: bool = False,
                state_sizes: dict[str, int] | None = None, live: bool = False,
                contact_statistics: bool = False, flush_interval: float = FLUSH_INTERVAL, background: bool = True,
                flexible: list[FlexiblePart] | None = None, extrema: bool = False):
        """`contact_statistics`: the file gets a /contact_events table, filled by `set_contact_events`; `flexible`:
        the parts whose points `append(..., flexible=...)` gives per frame; `extrema`: an /extrema table of every
        channel's extrema at the solver's rate, filled by `set_extrema`."""
        self.f = self._lock = None
        self.path = Path(path)
        self.state_sizes = dict(state_sizes or {})
        self.chunk = int(chunk)
        self.channels = list(channels)
        self.bodies = list(bodies)
        self.pairs = list(pairs)
        self.flexible = list(flexible or [])
        self.n = 0
        self._events: list[Event] = []
        self._contact_events: tuple[np.ndarray, float] | None = None
        self.live = bool(live)
        self.flush_interval = float(flush_interval)
        self._t_flush = time.monotonic()
        # created under a temporary name, put in place by the first flush: a kill before it leaves any older file
        self._creating = self.path.with_name(self.path.name + ".creating")
        # no chunk cache: each chunk is compressed as it is written (no burst of compression at a flush)
        f = self.f = h5py.File(self._creating, "w", libver="latest", rdcc_nbytes=0)
        self._open = True               # until close (the main thread's view; self.f belongs to the writer thread)
        self._lock = _hold_writer_lock(self._creating)
        f.attrs["format"] = FORMAT_NAME
        f.attrs["format_version"] = FORMAT_VERSION
        self._write_meta(meta)
        # fletcher32: a checksum per chunk, so a corrupt chunk is an HDF5 read error, never numbers (issue 31)
        comp = dict(compression=COMPRESSION, shuffle=True, fletcher32=True, fillvalue=0)

        def grow(name, tail, dtype="f8"):
            return f.create_dataset(name, shape=(0, *tail), maxshape=(None, *tail), dtype=dtype,
                                    chunks=(self.chunk, *tail), **comp)

        c = self.chunk
        nc, nb, npairs = len(self.channels), len(self.bodies), len(self.pairs)
        # buffers of one chunk, laid out so that each dataset's block is contiguous; a full set goes to the writer
        # thread and comes back to self._free once written
        self._shapes = dict(time=((c,), "f8"), channels=((nc, c), "f8"), position=((c, nb, 3), "f8"),
                            quaternion=((c, nb, 4), "f8"), active=((npairs, c), "u1"), force=((npairs, c, 3), "f8"),
                            point=((npairs, c, 3), "f8"))
        if contact_detail:
            self._shapes.update(normal=((npairs, c, 3), "f8"), depth=((npairs, c), "f8"),
                                normal_speed=((npairs, c), "f8"))
        for fp in self.flexible:
            self._shapes[f"flexible/{fp.name}"] = ((c, int(fp.n_points), 3), "f4")
        self._buf = self._new_buffers()
        self._free: list[dict] = []
        self._states: list[tuple[int, dict[str, np.ndarray]]] = []   # solver states not handed to the writer yet
        self._fill = 0                  # frames in the buffers; they start at frame self.n - self._fill
        self._written = 0               # frames written to the datasets (the file has them after a flush)
        self._whole_flushed = 0         # frames of whole chunks at the last flush
        self._abs_max = np.zeros(nc)    # max |value| per channel so far (NaN ignored), stored by finish
        self._series: list = []         # (dataset, buffer, row of the buffer or None, shape of a frame)
        self._series.append((grow("time", ()), "time", None, ()))
        # T capture as soon as known: SWMR readers see a dataset's attributes after refreshing it, not the root's
        self._series[0][0].attrs["t_capture"] = self._t_capture = float(meta.t_capture)
        g = f.create_group("channels")
        for i, ch in enumerate(self.channels):
            if ch.group not in CHANNEL_GROUPS:
                raise ValueError(f"channel {ch.name}: unknown group {ch.group!r}")
            d = g.create_dataset(ch.name, shape=(0,), maxshape=(None,), dtype="f8",
                                 chunks=(self.chunk,), **comp)
            d.attrs["unit"] = ch.unit
            d.attrs["label"] = ch.label
            d.attrs["group"] = ch.group
            d.attrs["stroke"] = ch.stroke
            d.attrs["place"] = ch.place
            d.attrs["abs_max"] = math.nan   # max |value|, set by finish (created now: SWMR cannot add attributes)
            self._series.append((d, "channels", i, ()))
        b = f.create_group("bodies")
        b.create_dataset("names", data=np.array(self.bodies, dtype=object), dtype=_STR)
        self._series.append((grow("bodies/position", (nb, 3)), "position", None, (nb, 3)))
        self._series.append((grow("bodies/quaternion", (nb, 4)), "quaternion", None, (nb, 4)))
        self.contact_detail = contact_detail
        fields = (("active", (), "u1"), ("force", (3,), "f8"), ("point", (3,), "f8"))
        if contact_detail:
            fields += (("normal", (3,), "f8"), ("depth", (), "f8"), ("normal_speed", (), "f8"))
        cg = f.create_group("contacts")
        for i, p in enumerate(self.pairs):
            pg = cg.create_group(p.name)
            pg.attrs["part_a"] = p.part_a
            pg.attrs["part_b"] = p.part_b
            pg.attrs["label"] = p.label or p.name
            for name, tail, dt in fields:
                self._series.append((grow(f"contacts/{p.name}/{name}", tail, dt), name, i, tail))
        geo = f.create_group("geometry")
        for part in geometry:
            pg = geo.create_group(part.name)
            pg.attrs["body"] = part.body
            pg.attrs["kind"] = part.kind
            pg.attrs["visible_channel"] = part.visible_channel
            pg.create_dataset("points", data=np.asarray(part.points, dtype="f8").reshape(-1, 3))
            pg.create_dataset("lines", data=np.asarray(part.lines, dtype="i4").reshape(-1, 2))
        if self.flexible:
            fg = f.create_group("flexible")
            for fp in self.flexible:
                lines = np.asarray(fp.lines, dtype="i4").reshape(-1, 2)
                if not fp.n_points > 0 or lines.size and (lines.min() < 0 or lines.max() >= fp.n_points):
                    raise ValueError(f"flexible part {fp.name}: line indices must lie in 0..{fp.n_points - 1}")
                pg = fg.create_group(fp.name)
                pg.attrs["body"] = _text_out(fp.body)
                pg.attrs["kind"] = _text_out(fp.kind)
                pg.attrs["label"] = _text_out(fp.label or fp.name)
                pg.create_dataset("lines", data=lines)
                tail = (int(fp.n_points), 3)
                self._series.append((grow(f"flexible/{fp.name}/points", tail, "f4"), f"flexible/{fp.name}", None,
                                     tail))
        f.create_dataset("parameters", data=parameters_toml, dtype=_STR)
        f.create_dataset("events", shape=(0,), maxshape=(None,), dtype=EVENT_DTYPE, chunks=(256,))
        self._statistics = bool(contact_statistics)
        if contact_statistics:   # created now (SWMR cannot add objects later); sample_step NaN until written
            ce = f.create_dataset("contact_events", shape=(0,), maxshape=(None,), dtype=CONTACT_EVENT_DTYPE,
                                  chunks=(256,))
            ce.attrs["sample_step"] = math.nan
        self._extrema: tuple[np.ndarray, float] | None = None
        self._has_extrema = bool(extrema)
        if extrema:   # created now (SWMR cannot add objects later); step NaN until written by finish
            eg = f.create_group("extrema")
            eg.create_dataset("names", data=np.array([c.name for c in self.channels], dtype=object), dtype=_STR)
            ev = eg.create_dataset("values", data=np.full((4, nc), math.nan))
            ev.attrs["rows"] = ", ".join(EXTREMA_ROWS)
            eg.attrs["step"] = math.nan
        if self.state_sizes:   # sparse snapshots of the solver state: a branch restarts from the one before it
            sg = f.create_group("state")
            sg.attrs["about"] = "solver state at the start of some frames (/state/frame); branch from any later frame"
            sg.create_dataset("frame", shape=(0,), maxshape=(None,), dtype="i8", chunks=(256,))
            for name, k in self.state_sizes.items():
                sg.create_dataset(name, shape=(0, int(k)), maxshape=(None, int(k)), dtype="f8", chunks=(256, int(k)))
        # the events as they are added, one JSON array per line, in bytes: safe to append under SWMR (variable-length
        # strings are not), so a killed run keeps its events (seal_incomplete rebuilds /events from it)
        f.create_dataset("event_log", shape=(0,), maxshape=(None,), dtype="u1", chunks=(4096,))
        self._logged = 0   # events already in /event_log
        f.swmr_mode = True   # SWMR: readers may open the file while it grows; a killed writer leaves it readable
        self._error: BaseException | None = None   # what stopped the writer thread
        self._queue: queue.Queue | None = None
        if background:
            self._queue = queue.Queue(maxsize=WRITE_QUEUE)
            self._owner = threading.current_thread()
            self._thread = threading.Thread(target=self._serve, name=f"run writer {self.path.name}")
            self._thread.start()

    def _new_buffers(self) -> dict[str, np.ndarray]:
        return {k: np.zeros(shape, dt) for k, (shape, dt) in self._shapes.items()}

    # ---- the writer thread: every file operation after __init__ runs there, in the order given ----------------
    def _do(self, fn, *args):
        """Run fn(*args) on the file: now without a writer thread, else queued for it (waits while the queue is
        full); raises RunWriteError once the writer thread has failed."""
        if self._queue is None:
            try:
                return fn(*args)
            except OSError as exc:
                raise _write_failed(self.path, exc) from exc
        while True:
            self._raise_failure()
            try:
                self._queue.put((fn, args), timeout=0.2)
                return None
            except queue.Full:
                continue

    def _wait(self):
        """Return when the writer thread has done every operation queued so far."""
        if self._queue is None:
            return
        done = threading.Event()
        self._do(done.set)
        while not done.wait(0.2):
            self._raise_failure()

    def _raise_failure(self):
        if self._error is not None:
            raise _write_failed(self.path, self._error) from self._error
        if not self._thread.is_alive():
            raise RunWriteError(self.path, "the writer thread has stopped")

    def _serve(self):
        """The writer thread: run the queued operations until close; on a failure, keep it for the solver's thread,
        close the file as it is and stop."""
        while True:
            try:
                fn, args = self._queue.get(timeout=0.5)
            except queue.Empty:
                if self._owner.is_alive():
                    continue
                fn, args = self._abandon, ()   # the solver's thread ended without finishing (an exception)
            try:
                fn(*args)
            except BaseException as exc:  # noqa: BLE001  (handed to the solver's thread)
                self._error = exc
                self._abandon()
                return
            if fn in (self._close_file, self._abandon):
                return

    def _abandon(self):
        """Close the file as it is (not marked complete) and release the writer's lock: `seal_if_orphaned` or
        `seal_incomplete` keeps what it holds."""
        try:
            self.f.close()
        except Exception:  # noqa: BLE001  (the failure that brought us here is the one reported)
            pass
        self._release_lock()

    def _release_lock(self):
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _write_meta(self, meta: RunMeta):
        a = self.f.attrs
        a["run_date"] = _text_out(meta.run_date)
        a["comment"] = _text_out(meta.comment)
        a["variant"] = _text_out(meta.variant)
        if meta.mechanism_type:
            a["mechanism_type"] = _text_out(meta.mechanism_type)
        a["solver_version"] = _text_out(meta.solver_version)
        a["output_step"] = float(meta.output_step)
        a["t_capture"] = float(meta.t_capture)
        a["t_final"] = float(meta.t_final)
        a["complete"] = bool(meta.complete)
        a["scenario"] = _text_out(meta.scenario)

    def append(self, time, channels, positions, quaternions, active=None, force=None, point=None,
               normal=None, depth=None, normal_speed=None, flexible=None):
        """Append a block of K frames. `channels` is (K, C) in the order given at creation.

        With `contact_detail`, also the unit normal (K, P, 3), depth (K, P) and normal approach speed (K, P);
        `flexible`: {part: (K, P, 3) points in its body's frame} for every flexible part given at creation."""
        time = np.atleast_1d(np.asarray(time, dtype="f8"))
        k = time.shape[0]
        nc, nb, npairs = len(self.channels), len(self.bodies), len(self.pairs)
        src = dict(time=time, channels=np.asarray(channels, dtype="f8").reshape(k, nc).T,
                   position=np.asarray(positions, dtype="f8").reshape(k, nb, 3),
                   quaternion=np.asarray(quaternions, dtype="f8").reshape(k, nb, 4))
        if npairs:
            src["active"] = np.asarray(active, dtype="u1").reshape(k, npairs).T
            src["force"] = np.asarray(force, dtype="f8").reshape(k, npairs, 3).transpose(1, 0, 2)
            src["point"] = np.asarray(point, dtype="f8").reshape(k, npairs, 3).transpose(1, 0, 2)
            if self.contact_detail:
                src["normal"] = np.asarray(normal, dtype="f8").reshape(k, npairs, 3).transpose(1, 0, 2)
                src["depth"] = np.asarray(depth, dtype="f8").reshape(k, npairs).T
                src["normal_speed"] = np.asarray(normal_speed, dtype="f8").reshape(k, npairs).T
        flexible = flexible or {}
        for fp in self.flexible:
            if fp.name not in flexible:
                raise ValueError(f"append: no points given for flexible part {fp.name!r}")
            src[f"flexible/{fp.name}"] = np.asarray(flexible[fp.name], dtype="f4").reshape(k, int(fp.n_points), 3)
        unknown = set(flexible) - {fp.name for fp in self.flexible}
        if unknown:
            raise ValueError(f"append: flexible part(s) {', '.join(sorted(unknown))} not declared at creation")
        done = 0
        while done < k:
            m = min(k - done, self.chunk - self._fill)
            a, b = self._fill, self._fill + m
            for name, data in src.items():
                buf = self._buf[name]
                if name in ("time", "position", "quaternion") or name.startswith("flexible/"):
                    buf[a:b] = data[done:done + m]
                else:                                   # (series, frame, ...) layout
                    buf[:, a:b] = data[:, done:done + m]
            self._fill = b
            self.n += m
            done += m
            if self._fill == self.chunk:   # the writer thread writes it; appending goes on in another set
                self._hand_off_states()
                self._do(self._write_rows, self._buf, self.n - self._fill, self._fill)
                self._written = self.n
                self._buf = self._free.pop() if self._free else self._new_buffers()
                self._fill = 0

    def add_state(self, frame: int, state: dict[str, np.ndarray]):
        """Store the solver state at the start of `frame` (the next frame to be appended, usually); written with the
        next chunk of frames or flush."""
        self._states.append((int(frame), {name: np.array(state[name], dtype="f8").reshape(size)
                                          for name, size in self.state_sizes.items()}))

    def _hand_off_states(self):
        if self._states:
            self._do(self._write_states, self._states)
            self._states = []

    def _write_states(self, states: list[tuple[int, dict[str, np.ndarray]]]):
        g = self.f["state"]
        m, j = g["frame"].shape[0], len(states)
        for name in self.state_sizes:   # the rows first, /state/frame last: a live reader
            d = g[name]                 # trusts only rows that /state/frame already names
            d.resize(m + j, axis=0)
            d[m:] = np.stack([st[name] for _, st in states])
        g["frame"].resize(m + j, axis=0)
        g["frame"][m:] = [frame for frame, _ in states]

    def _write_rows(self, bufs: dict[str, np.ndarray], n0: int, k: int):
        """Write frames [n0, n0 + k) from a buffer set (a whole chunk, or the start of one) to every dataset; skip
        all-zero blocks. A whole chunk's buffers are free for appending again afterwards."""
        n = n0 + k
        if k and len(self.channels):
            np.fmax(self._abs_max, np.fmax.reduce(np.abs(bufs["channels"][:, :k]), axis=1), out=self._abs_max)
        for d, name, i, tail in self._series:   # (low-level calls: a quarter of the time of resize, d[a:b] = ...)
            d.id.set_extent((n, *tail))
            block = (bufs[name] if i is None else bufs[name][i])[:k]
            if block.any():
                fspace = d.id.get_space()
                fspace.select_hyperslab((n0, *(0,) * len(tail)), (k, *tail))
                d.id.write(h5py.h5s.create_simple((k, *tail)), fspace, block)
        if k == self.chunk:
            self._free.append(bufs)

    def add_event(self, time: float, kind: str, pair: str = "", text: str = ""):
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        self._events.append(Event(float(time), kind, _text_out(pair), _text_out(text)))

    def set_contact_events(self, rows: np.ndarray, sample_step: float):
        """The contact intervals' statistics (CONTACT_EVENT_DTYPE rows) computed from frames `sample_step` s
        apart; written by `finish` (the writer must be made with contact_statistics=True)."""
        if not self._statistics:
            raise ValueError("RunWriter made without contact_statistics=True: no /contact_events table")
        self._contact_events = (np.asarray(rows, dtype=CONTACT_EVENT_DTYPE), float(sample_step))

    def set_extrema(self, values: np.ndarray, step: float):
        """Every channel's extrema over every solver step (rows EXTREMA_ROWS, columns in channel order), `step` s
        apart; written by `finish` (the writer must be made with extrema=True)."""
        if not self._has_extrema:
            raise ValueError("RunWriter made without extrema=True: no /extrema table")
        self._extrema = (np.array(values, dtype="f8").reshape(4, len(self.channels)), float(step))

    def flush(self, partial: bool = True):
        """Write the buffered frames and the events added so far and flush the file: a reader, or the file of a writer
        killed after this, has every frame appended. `partial` False: the whole chunks only (a partly filled chunk
        written now is written again when it fills, its first copy left as unused space in the file)."""
        self._hand_off_states()
        if partial and self._fill and self._written != self.n:   # (frames came since the partial chunk was written)
            self._do(self._write_rows, self._buf, self.n - self._fill, self._fill)   # (rows the solver leaves alone)
            self._written = self.n
        self._do(self._flush_file)
        self._t_flush = time.monotonic()
        self._whole_flushed = self.n - self._fill
        if self.live:   # its reader is told about these frames next: they must be in the file
            self._wait()

    def _flush_file(self):
        self._log_events()
        self.f.flush()
        if self._creating is not None:   # the first flush puts the file in place, readable with its first frames
            os.replace(self._creating, self.path)
            self._creating = None

    def flush_due(self) -> bool:
        """Flush if the file is live (followed by a reader: every call) or not flushed for `flush_interval` s of wall
        time: then the whole chunks alone if one was filled since, else the partly filled one too (a kill loses at
        most about two intervals). True if it flushed. The solver calls it after every block."""
        if self.live:
            self.flush()
        elif time.monotonic() - self._t_flush >= self.flush_interval:
            self.flush(partial=self.n - self._fill == self._whole_flushed)
        else:
            return False
        return True

    def _log_events(self):
        """Append the events added since the last call to /event_log."""
        n = len(self._events)   # (the solver's thread may add more meanwhile: logged next time)
        if self._logged == n:
            return
        text = "".join(json.dumps([e.time, e.kind, e.pair, e.text]) + "\n" for e in self._events[self._logged:n])
        raw = np.frombuffer(text.encode("utf-8"), dtype="u1")
        d = self.f["event_log"]
        m = d.shape[0]
        d.resize(m + raw.size, axis=0)
        d[m:] = raw
        self._logged = n

    def set_capture(self, t_capture: float):
        """Capture happened at t_capture (s): stored in /time@t_capture, which readers of a live file see after
        the next flush (the root attribute is written by `finish`)."""
        t = float(t_capture)
        if self._open and math.isfinite(t) and t != self._t_capture:
            self._t_capture = t
            self._do(self._store_capture, t)

    def _store_capture(self, t: float):
        self.f["time"].attrs["t_capture"] = t

    def _write_events(self):
        evs = sorted(self._events, key=lambda e: e.time)
        d = self.f["events"]
        d.resize(len(evs), axis=0)
        if evs:
            d[:] = _event_array(evs)
        if self._contact_events is not None:
            rows, step = self._contact_events
            ce = self.f["contact_events"]
            ce.resize(len(rows), axis=0)
            if len(rows):
                ce[:] = rows
            ce.attrs["sample_step"] = step      # set last: a file with NaN here has no statistics

    def finish(self, t_capture: float = math.nan, complete: bool = True, comment: str | None = None):
        """Write the last frames and the events, stamp T Final and `complete`, close. Frames and the event log are
        flushed first and `complete` is set last, so a kill at any point here leaves a file `seal_incomplete` reads."""
        self.flush()
        self._do(self._finish_file, float(t_capture), bool(complete), comment)
        self._wait()
        self.close()

    def _finish_file(self, t_capture: float, complete: bool, comment: str | None):
        a = self.f.attrs
        a["t_capture"] = self._t_capture = float(t_capture)
        self.f["time"].attrs["t_capture"] = float(t_capture)
        a["t_final"] = float(self.f["time"][self.n - 1]) if self.n else 0.0
        g = self.f["channels"]
        for ch, m in zip(self.channels, self._abs_max):   # the device bars' full scale without reading the data
            g[ch.name].attrs["abs_max"] = float(m)
        if comment is not None:
            a["comment"] = _text_out(comment)
        if self._extrema is not None:
            self.f["extrema/values"][...] = self._extrema[0]
            self.f["extrema"].attrs["step"] = self._extrema[1]
        self._write_events()
        self.f.flush()
        a["complete"] = bool(complete)
        self.f.flush()

    def close(self):
        """Write what is buffered, close the file and stop the writer thread (RunWriteError if it failed)."""
        if not self._open:
            return
        self.flush()
        self._do(self._close_file)
        self._open = False
        if self._queue is not None:
            self._thread.join()
            if self._error is not None:
                self._raise_failure()

    def abort(self):
        """After an error in the solver: the frames so far are flushed (the file put in place), the file is closed
        as it is (not marked complete) and the writer thread stops; never raises (the solver's error is reported)."""
        if not self._open:
            return
        try:
            self.flush()
            self._do(self._abandon)
        except RunWriteError:   # the writer thread had already stopped on its own failure: a file never put in
            self._drop_creating()   # place (disk full in the first second) is unreadable and goes
            return
        finally:
            self._open = False
        if self._queue is not None:
            self._thread.join()

    def discard(self):
        """Stop without keeping anything: the file is closed and, if not put in place yet, removed (an older run file
        at the path stays); never raises."""
        if not self._open:
            return
        self._open = False
        try:
            self._do(self._abandon)
        except RunWriteError:
            pass
        self._drop_creating()

    def _drop_creating(self):
        """Wait for the writer thread, then remove the file still under its temporary name (never put in place)."""
        if self._queue is not None and self._thread is not threading.current_thread():
            self._thread.join(10.0)
        if self._creating is not None:
            self._creating.unlink(missing_ok=True)

    def _close_file(self):
        self.f.close()
        self._release_lock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._open:
            self.finish(complete=exc[0] is None)


# --------------------------------------------------------------------------------------------
# reader
# --------------------------------------------------------------------------------------------

def _attr(obj, name: str, default):
    """One attribute of an HDF5 object, read through the low-level API (several times faster than .attrs)."""
    key = name.encode()
    try:
        at = h5py.h5a.open(obj.id, key)
    except KeyError:
        return default
    try:
        buf = np.empty(at.shape, dtype=at.dtype)
        at.read(buf)
    except (OSError, ValueError, TypeError):
        return obj.attrs.get(name, default)
    return buf[()] if buf.shape == () else buf


_MT_STR, _MT_F8 = h5py.h5t.py_create(_STR), h5py.h5t.py_create(np.dtype("f8"))


def _scalar_attr(obj, name: str, default, as_str: bool):
    """A scalar string (as_str) or float attribute read straight into a buffer of that type (no type translation:
    ~3x faster than _attr for the hundreds of channel attributes); anything else goes through _attr."""
    try:
        at = h5py.h5a.open(obj.id, name.encode())
    except KeyError:
        return default
    buf = np.empty((), dtype=_STR if as_str else "f8")
    try:
        if at.shape != ():
            raise TypeError
        at.read(buf, mtype=_MT_STR if as_str else _MT_F8)
    except (OSError, ValueError, TypeError):
        return _attr(obj, name, default)
    return buf[()]


def _decode(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        return _decode(v.item())
    return v


# HDF5 and numpy errors that mean "this file cannot be read": every h5py access of the reader turns them into a
# RunFileError naming the file and dataset (`RunFile._reading`); a caller's own mistakes (a frame out of range: an
# IndexError, an unknown channel: a KeyError raised by the reader itself) stay as they are.
H5_ERRORS = (OSError, RuntimeError, KeyError, ValueError, MemoryError, TypeError)
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
# Declared sizes are checked before anything is allocated. Deflate (gzip) cannot shrink data more than ~1032:1
# (LZF, the writer's filter, ~88:1: 264 bytes per 3-byte back-reference),
# so a dataset read whole at open (time, geometry, events, parameters, body names, state frames) may declare at
# most DEFLATE_MAX_RATIO x the bytes it stores in the file (+ SIZE_SLACK, for tiny or unwritten datasets); every
# other dataset at most DEFLATE_MAX_RATIO x the file's size (contact datasets skip their all-zero chunks, so their
# own stored size does not bound them). A real run is far inside both (its time compresses ~3-30:1; its largest
# dataset declares < 1 x the file's size); a flipped byte declaring 1e15 frames is refused before a read.
DEFLATE_MAX_RATIO = 1032
SIZE_SLACK = 1 << 20


def _load_checks() -> dict:
    """The plausibility limits of resources/run_checks.toml (all assumed), as floats."""
    import tomllib
    path = Path(__file__).resolve().parent.parent / "resources" / "run_checks.toml"
    with open(path, "rb") as fh:
        return {k: float(v) for k, v in tomllib.load(fh).items()}


_CHECKS = _load_checks()
TIME_LIMIT = _CHECKS["time_limit"]                  # s: |time|, duration, T capture
OUTPUT_STEP_RATIO = _CHECKS["output_step_ratio"]    # output_step vs the median frame step
MIN_OUTPUT_STEP = _CHECKS["min_output_step"]        # s (a one-frame run has no frame step to compare with)
VALUE_LIMIT = _CHECKS["value_limit"]                # |value| of channels, positions, contact forces and points
QUATERNION_TOLERANCE = _CHECKS["quaternion_tolerance"]
TEXT_LIMIT = int(_CHECKS["text_limit"])             # characters of a text attribute
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")           # a text attribute is one line: no newline, tab or other control


def one_line(text: str) -> str:
    """`text` with each control character (newline, tab, ...) made a space: how text attributes are written."""
    return _CONTROL.sub(" ", str(text))


# Under SWMR, HDF5 re-reads metadata whose checksum fails (a writer may be mid-write), sleeping 1, 2, 4, ... ns
# between attempts: its default of 100 attempts sleeps ~2^99 ns, so a corrupt killed-writer file hung the reader
# forever. 24 attempts sleep ~17 ms in all, far longer than a writer takes to write one metadata block.
SWMR_READ_ATTEMPTS = 24


def _hdf5_library():
    """The HDF5 library h5py runs on (ctypes), for H5Pset_metadata_read_attempts, which h5py does not wrap; None
    if it cannot be found (then HDF5's default applies)."""
    import ctypes
    import re
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for path in dict.fromkeys(re.findall(r"/\S*/libhdf5(?:-[0-9a-f]+)?\.so[\w.]*", maps)):
        try:
            fn = ctypes.CDLL(path).H5Pset_metadata_read_attempts
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = (ctypes.c_int64, ctypes.c_uint), ctypes.c_int
        return fn
    return None


def _open_swmr(path) -> h5py.File:
    """A run being written (or left by a killed writer) opened for SWMR reading, with SWMR_READ_ATTEMPTS."""
    set_attempts = _hdf5_library()
    if set_attempts is None:
        return h5py.File(path, "r", swmr=True, rdcc_nbytes=0)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)
    cache = list(fapl.get_cache())
    cache[2] = 0   # rdcc_nbytes=0, as for other runs
    fapl.set_cache(*cache)
    if set_attempts(fapl.id, SWMR_READ_ATTEMPTS) < 0:
        return h5py.File(path, "r", swmr=True, rdcc_nbytes=0)
    return h5py.File(h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl))


def _declared_bytes(d) -> int:
    """Bytes a whole read of a dataset would allocate (Python integers: a corrupt shape cannot overflow)."""
    return math.prod(int(k) for k in d.shape) * d.dtype.itemsize


def _shown(v) -> str:
    """An attribute value as a message shows it: 1.5, '1', [1 2]."""
    v = _decode(v)
    return repr(v.item() if isinstance(v, np.generic) else v)


def _path_of(d) -> str:
    """A dataset's path for a message (its handle may be closed or corrupt)."""
    try:
        return d.name or "/"
    except H5_ERRORS:
        return "/"


class _Reading:
    """`with run._reading(dataset):` turns an HDF5 failure (H5_ERRORS) inside into RunFileError naming the dataset."""
    __slots__ = ("run", "dataset", "problem")

    def __init__(self, run, dataset: str, problem: str):
        self.run, self.dataset, self.problem = run, dataset, problem

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, _tb):
        if kind is not None and issubclass(kind, H5_ERRORS):
            if self.run._f is None:
                raise self.run._err(self.dataset, "cannot be read: the run file was closed") from None
            raise self.run._err(self.dataset, f"{self.problem} ({exc})") from None
        return False


class RunFile:
    """A validated, lazily read run file. Raises `RunFileError` on anything malformed or unreadable."""

    def __init__(self, path, partial: bool = False):
        """`partial`: a file whose writer died; datasets may hold different numbers of frames (take the shortest)."""
        self.path = Path(path)
        self._f = None
        self.io_ops = 0             # dataset reads and refreshes (tests bound the work of each live-refresh step)
        self.live = bool(partial)   # opened while its writer runs (or after it was killed): may grow
        self._handles: dict[str, h5py.Dataset] = {}   # the one open handle of each time-indexed dataset
        try:
            self._open()
        except RunFileError:
            self.close()
            raise
        except H5_ERRORS as exc:  # h5py/HDF5 internals a check below did not name
            self.close()
            raise self._err("/", f"cannot be read ({exc})") from None

    # ---- opening and validation ------------------------------------------------------------
    def _err(self, dataset, problem):
        return RunFileError(self.path, dataset, str(problem).replace("\n", " "))

    def _reading(self, dataset: str, problem: str = "cannot be read, file truncated or corrupt") -> _Reading:
        return _Reading(self, dataset, problem)

    def _check_file(self) -> int:
        """A regular file (a FIFO would block the open forever) with HDF5's signature; its size."""
        p = self.path
        try:
            if not p.exists():
                raise self._err("/", "file does not exist")
            if p.is_dir():
                raise self._err("/", "is a directory, not a run file")
            if not p.is_file():
                raise self._err("/", "not a regular file (a FIFO, socket or device), not a run file")
            size = p.stat().st_size
            with open(p, "rb") as fh:   # HDF5 looks for its signature at 0, 512, 1024, 2048, ... (after a user block)
                off = 0
                while off + 8 <= size:
                    fh.seek(off)
                    if fh.read(8) == HDF5_SIGNATURE:
                        return size
                    off = 512 if off == 0 else 2 * off
        except OSError as exc:
            raise self._err("/", f"cannot be read ({exc.strerror or exc})") from None
        raise self._err("/", "not an HDF5 file (bad signature: none at byte 0, 512, 1024, 2048, ...)")

    GROUPS = ("channels", "bodies", "contacts", "geometry", "state", "flexible")   # the groups the reader opens (with their parts)

    def _check_links(self):
        """Walk the links of the root, its GROUPS and the pair and part groups under them (all the reader follows):
        refuse external and user-defined links (a run file holds all its data), soft links that lead nowhere or in
        a loop, and groups whose members cannot be listed; RunFileError names the link."""
        todo = [("", self._f)]   # the walk goes by path (at most 3 deep), so a link back up cannot loop
        while todo:
            path, g = todo.pop()
            links = []
            with self._reading(path or "/", "its members cannot be listed, file corrupt"):
                g.id.links.iterate(lambda name, info: links.append((name.decode("utf-8", "replace"), info.type)),
                                   info=True)
            for name, kind in links:
                p = f"{path}/{name}"
                walked = path == "" and name in self.GROUPS or path in ("/contacts", "/geometry", "/flexible")
                if kind == h5py.h5l.TYPE_EXTERNAL:
                    with self._reading(p):
                        target = g.get(name, getlink=True)
                    raise self._err(p, f"external link to {target.filename}:{target.path}: a run file must hold "
                                       "all its data")
                if kind == h5py.h5l.TYPE_SOFT:
                    with self._reading(p):
                        target = g.get(name, getlink=True).path
                    with self._reading(p, f"soft link to {target} leads nowhere or in a loop"):
                        obj = g[name]
                elif kind == h5py.h5l.TYPE_HARD:
                    if not walked:
                        continue   # a dataset, or a group the reader does not open
                    with self._reading(p, "cannot be opened, file corrupt"):
                        obj = g[name]
                else:
                    raise self._err(p, f"user-defined link (type {kind}): a run file holds only its own objects")
                if walked and isinstance(obj, h5py.Group):
                    todo.append((p, obj))

    def _open(self):
        p = self.path
        self.file_size = self._check_file()
        try:
            self._f = h5py.File(p, "r", swmr=False, rdcc_nbytes=0)
        except H5_ERRORS as exc:
            if "already open for write" not in str(exc):
                raise self._err("/", f"HDF5 file is truncated or corrupt ({exc})") from None
            try:  # a run being written (or left by a killed writer): read what was flushed, SWMR
                self._f = _open_swmr(p)
                self.live = True
            except H5_ERRORS as exc2:
                raise self._err("/", f"HDF5 file is truncated or corrupt ({exc2})") from None
        self._check_links()
        fmt = self._attr_value(self._f, "/", "format", None)
        if fmt != FORMAT_NAME:
            raise self._err("/@format", f"expected {FORMAT_NAME!r}, found {fmt!r}")
        ver = self._attr_value(self._f, "/", "format_version", None)
        if ver is None:
            raise self._err("/@format_version", "missing")
        if isinstance(ver, (bool, np.bool_)) or not isinstance(ver, (int, np.integer)):
            raise self._err("/@format_version", f"must be an integer, found {_shown(ver)}")
        if int(ver) not in SUPPORTED_VERSIONS:
            raise self._err("/@format_version", f"unknown format version {int(ver)} "
                            f"(this dockmnemo reads {', '.join(map(str, SUPPORTED_VERSIONS))})")
        self.format_version = int(ver)
        complete = self._attr_value(self._f, "/", "complete", False)
        if not (isinstance(complete, (bool, np.bool_))
                or isinstance(complete, (int, np.integer)) and complete in (0, 1)):
            raise self._err("/@complete", f"must be true or false (or 1 or 0), found {_shown(complete)}")
        if self._attr_value(self._f, "/", "variant", None) is None:
            raise self._err("/@variant", "missing")
        if self._attr_value(self._f, "/", "output_step", None) is None:
            raise self._err("/@output_step", "missing")
        self.meta = RunMeta(
            comment=self._str_attr(self._f, "/", "comment", ""),
            variant=self._str_attr(self._f, "/", "variant", ""),
            mechanism_type=self._str_attr(self._f, "/", "mechanism_type", ""),
            run_date=self._str_attr(self._f, "/", "run_date", ""),
            solver_version=self._str_attr(self._f, "/", "solver_version", ""),
            output_step=self._float_attr(self._f, "/", "output_step", math.nan),
            t_capture=self._float_attr(self._f, "/", "t_capture", math.nan),
            t_final=self._float_attr(self._f, "/", "t_final", math.nan),
            complete=bool(complete),
            scenario=self._str_attr(self._f, "/", "scenario", ""),
        )
        from solver import mechanisms   # (a file of an unknown type opens as the generic type)
        mtype = mechanisms.for_run(self)
        if mtype.run_variants and self.meta.variant not in mtype.run_variants:
            raise self._err("/@variant", f"unknown mechanism variant {self.meta.variant!r} of mechanism type "
                            f"{mtype.name} (one of {', '.join(mtype.run_variants)})")
        if not (self.meta.output_step > 0 and math.isfinite(self.meta.output_step)):
            raise self._err("/@output_step", f"must be a positive number, found {self.meta.output_step}")
        for k in ("t_capture", "t_final"):   # NaN: not known (no capture; T Final from /time)
            v = getattr(self.meta, k)
            if math.isinf(v) or abs(v) > TIME_LIMIT:
                raise self._err(f"/@{k}", f"{v:.6g} s is not a time of a run (NaN when unknown, |t| <= "
                                          f"{TIME_LIMIT:g} s)")
        if self.meta.run_date:
            import datetime
            try:
                datetime.datetime.fromisoformat(self.meta.run_date)
            except ValueError:
                raise self._err("/@run_date", f"not an ISO 8601 date and time: {self.meta.run_date[:80]!r}") from None

        t = self._dataset("time", ndim=1, kind="f", keep=True)
        if self.live:
            self._take_capture()
        self.n_frames = n = self._live_frames() if self.live else t.shape[0]
        if n == 0:
            raise self._err("/time", "run has no frames" + (" yet (still being written)" if self.live else ""))
        time = self._read_whole(t, np.s_[:n])
        if not np.all(np.isfinite(time)):
            bad = int(np.flatnonzero(~np.isfinite(time))[0])
            raise self._err("/time", f"NaN or inf at frame {bad}")
        if n > 1:
            dt = np.diff(time)
            if np.any(dt <= 0):
                bad = int(np.flatnonzero(dt <= 0)[0]) + 1
                raise self._err("/time", f"time not increasing at frame {bad} "
                                f"({time[bad - 1]:.6g} -> {time[bad]:.6g})")
        self.time = time
        self._check_time_axis()

        self.channels: dict[str, ChannelInfo] = {}
        self._channel_ds: dict[str, h5py.Dataset] = {}
        self._abs_max: dict[str, float] = {}   # abs_max as stored (NaN: not stored)
        for name, d in self._members("channels"):
            ds = f"/channels/{name}"
            if not isinstance(d, h5py.Dataset):
                raise self._err(ds, "expected a dataset, found a group")
            self._check_declared(d, ds)
            if not self._shape_ok(d.shape, (n,)):
                raise self._err(ds, f"wrong shape {d.shape}, expected ({n},) like /time")
            if d.dtype.kind != "f":
                raise self._err(ds, f"wrong dtype {d.dtype}, expected float")
            grp = self._str_attr(d, ds, "group", "")
            if grp not in CHANNEL_GROUPS:
                raise self._err(ds, f"attribute group is {grp!r}, expected one of {', '.join(CHANNEL_GROUPS)}")
            self.channels[name] = ChannelInfo(name, self._str_attr(d, ds, "unit", ""), self._str_attr(d, ds, "label", name),
                                              grp, self._float_attr(d, ds, "stroke", math.nan),
                                              self._float_attr(d, ds, "place", math.nan))
            self._check_channel_attrs(d, ds, self.channels[name])
            self._channel_ds[name] = self._handles[ds[1:]] = d

        self._group("bodies")
        names_ds = self._dataset("bodies/names", ndim=1)
        self.bodies = [str(_decode(x)) for x in self._read_whole(names_ds)]
        nb = len(self.bodies)
        self._dataset("bodies/position", shape=(n, nb, 3), kind="f", keep=True)     # finite poses are checked
        self._dataset("bodies/quaternion", shape=(n, nb, 4), kind="f", keep=True)   # per block as frames are read
        self._pose_block: tuple[int, int, np.ndarray, np.ndarray] | None = None

        self.contact_pairs: dict[str, ContactPairInfo] = {}
        for name, pg in self._members("contacts"):
            base = f"contacts/{name}"
            if not isinstance(pg, h5py.Group):
                raise self._err(f"/{base}", "expected a group, found a dataset")
            self._dataset(f"{base}/active", shape=(n,), keep=True)
            self._dataset(f"{base}/force", shape=(n, 3), kind="f", keep=True)
            self._dataset(f"{base}/point", shape=(n, 3), kind="f", keep=True)
            for opt, shp in (("normal", (n, 3)), ("depth", (n,)), ("normal_speed", (n,))):
                with self._reading(f"/{base}/{opt}"):
                    present = opt in pg
                if present:
                    self._dataset(f"{base}/{opt}", shape=shp, kind="f", keep=True)
            self.contact_pairs[name] = ContactPairInfo(
                name, self._str_attr(pg, f"/{base}", "part_a", ""), self._str_attr(pg, f"/{base}", "part_b", ""),
                self._str_attr(pg, f"/{base}", "label", name))

        self.geometry: dict[str, PartGeometry] = {}
        for name, pg in self._members("geometry"):
            base = f"geometry/{name}"
            if not isinstance(pg, h5py.Group):
                raise self._err(f"/{base}", "expected a group, found a dataset")
            pts = self._read_whole(self._dataset(f"{base}/points", ndim=2, kind="f"))
            if pts.shape[1] != 3:
                raise self._err(f"/{base}/points", f"wrong shape {pts.shape}, expected (P, 3)")
            if not np.all(np.isfinite(pts)):
                raise self._err(f"/{base}/points", "NaN or inf in part geometry")
            lines = self._read_whole(self._dataset(f"{base}/lines", ndim=2, kind="iu"))
            if lines.shape[1] != 2:
                raise self._err(f"/{base}/lines", f"wrong shape {lines.shape}, expected (L, 2)")
            if lines.size and (lines.min() < 0 or lines.max() >= len(pts)):
                raise self._err(f"/{base}/lines", f"index out of range 0..{len(pts) - 1}")
            body = self._str_attr(pg, f"/{base}", "body", "")
            if body not in self.bodies:
                raise self._err(f"/{base}@body", f"names body {body!r}, which is not in /bodies/names")
            vis = self._str_attr(pg, f"/{base}", "visible_channel", "")
            if vis and vis not in self.channels:
                raise self._err(f"/{base}@visible_channel", f"names channel {vis!r}, which does not exist")
            self.geometry[name] = PartGeometry(name, body, pts, lines.astype(np.int32),
                                               self._str_attr(pg, f"/{base}", "kind", "mechanism"), vis)
        self._open_flexible(n)
        flexible = {fp.name for fp in self.flexible_parts}
        for pair in self.contact_pairs.values() if self.geometry else ():   # the parts it turns red ("": none)
            for k in ("part_a", "part_b"):
                part = getattr(pair, k)
                if part and part not in self.geometry and part not in flexible:
                    raise self._err(f"/contacts/{pair.name}@{k}",
                                    f"names part {part!r}, which is not in /geometry or /flexible")

        ev = self._dataset("events", ndim=1)
        names = ev.dtype.names or ()
        if not all(k in names for k in ("time", "kind", "pair", "text")):
            raise self._err("/events", f"wrong dtype {ev.dtype}, expected fields time, kind, pair, text")
        try:
            raw = self._read_whole(ev)
        except RunFileError:
            if not self.live:
                raise
            raw = []   # a growing run's event strings can be caught mid-rewrite; they are complete at the end
        with self._reading("/events", "rows cannot be decoded"):
            self.events = [Event(float(r["time"]), str(_decode(r["kind"])), str(_decode(r["pair"])),
                                 str(_decode(r["text"]))) for r in raw]
        for i, e in enumerate(self.events):
            if not math.isfinite(e.time):
                raise self._err("/events", f"event {e.kind!r} has a NaN or inf time")
            if e.kind not in EVENT_KINDS:
                raise self._err("/events", f"row {i}: unknown event kind {e.kind!r} "
                                f"(expected one of {', '.join(EVENT_KINDS)})")
            if i and e.time < self.events[i - 1].time:
                raise self._err("/events", f"not sorted by time at row {i} "
                                f"({self.events[i - 1].time:.6g} -> {e.time:.6g})")
            if abs(e.time) > TIME_LIMIT:
                raise self._err("/events", f"row {i} ({e.kind}): time {e.time:.6g} s is not a time of a run "
                                           f"(|t| <= {TIME_LIMIT:g} s)")
            if max(len(e.pair), len(e.text)) > TEXT_LIMIT:
                raise self._err("/events", f"row {i} ({e.kind}): text of more than {TEXT_LIMIT:,} characters")

        par = self._dataset("parameters", shape=())
        self.parameters_toml = self._parameters_text(par)

        self.state_sizes: dict[str, int] = {}
        self._state_frames = np.zeros(0, np.int64)
        with self._reading("/state"):
            has_state = "state" in self._f
        if has_state:
            fr = self._dataset("state/frame", ndim=1)
            frames = np.asarray(self._read_whole(fr, np.s_[:]), dtype=np.int64)
            if frames.size and (np.any(np.diff(frames) <= 0) or frames[0] < 0):
                raise self._err("/state/frame", "snapshot frames must be increasing and >= 0")
            for name, d in self._members("state"):
                if name == "frame":
                    continue
                self._dataset(f"state/{name}", ndim=2, kind="f")
                if self.live and d.shape[0] < frames.shape[0]:   # caught between two resizes of a growing run
                    frames = frames[:d.shape[0]]
                if d.shape[0] != frames.shape[0] and not (self.live and d.shape[0] > frames.shape[0]):
                    raise self._err(f"/state/{name}", f"wrong shape {d.shape}: expected one row per /state/frame "
                                                      f"({frames.shape[0]})")
                self.state_sizes[name] = int(d.shape[1])
            self._state_frames = frames
        with self._reading("/"):
            self._time_datasets()   # keep the handles
        self._contact_stats = None if self.live else self._read_contact_statistics()

    def _open_flexible(self, n: int):
        """/flexible (optional; older files have none): each part's points (N, P, 3) float, lines in range, body
        known. Points are checked finite and plausible as they are read (`flexible_points`, `check_data`)."""
        self.flexible_parts: list[FlexiblePart] = []
        self._flex_block: dict[str, tuple[int, int, np.ndarray]] = {}
        with self._reading("/flexible"):
            present = "flexible" in self._f
        if not present:
            return
        for name, pg in self._members("flexible"):
            base = f"flexible/{name}"
            if not isinstance(pg, h5py.Group):
                raise self._err(f"/{base}", "expected a group, found a dataset")
            d = self._dataset(f"{base}/points", ndim=3, kind="f", keep=True)
            if not self._shape_ok(d.shape, (n, d.shape[1], 3)) or d.shape[1] < 1:
                raise self._err(f"/{base}/points", f"wrong shape {d.shape}, expected ({n}, P, 3) like /time")
            p = int(d.shape[1])
            lines = self._read_whole(self._dataset(f"{base}/lines", ndim=2, kind="iu"))
            if lines.shape[1] != 2:
                raise self._err(f"/{base}/lines", f"wrong shape {lines.shape}, expected (L, 2)")
            if lines.size and (lines.min() < 0 or lines.max() >= p):
                raise self._err(f"/{base}/lines", f"index out of range 0..{p - 1} (the part's {p} points)")
            body = self._str_attr(pg, f"/{base}", "body", "")
            if body not in self.bodies:
                raise self._err(f"/{base}@body", f"names body {body!r}, which is not in /bodies/names")
            self.flexible_parts.append(FlexiblePart(name, body, p, lines.astype(np.int32),
                                                    self._str_attr(pg, f"/{base}", "kind", "rod"),
                                                    self._str_attr(pg, f"/{base}", "label", name)))

    def flexible_points(self, part: str, frame: int) -> np.ndarray:
        """A flexible part's P points (P, 3) at a frame, in its body's frame; read one time chunk at a time and
        checked finite and plausible (RunFileError names the dataset and the first bad frame)."""
        if part not in {fp.name for fp in self.flexible_parts}:
            raise KeyError(f"{self.path}: no flexible part {part!r}")
        frame = int(frame) + (self.n_frames if frame < 0 else 0)
        if not 0 <= frame < self.n_frames:
            raise IndexError(f"{self.path}: frame {frame} outside 0..{self.n_frames - 1}")
        name = f"flexible/{part}/points"
        blk = self._flex_block.get(part)
        if blk is None or not blk[0] <= frame < blk[1]:
            step = self._chunk_frames(name, TIME_CHUNK)
            a = frame - frame % step
            b = min(a + step, self.n_frames)
            blk = self._flex_block[part] = (a, b, self._plausible(name, self._finite_block(name, a, b), a))
        return np.asarray(blk[2][frame - blk[0]], dtype=float)

    # ---- consistency: attributes against /time and each other (docs/run-format.md, "Consistency") --------------
    def _tolerance(self) -> float:
        """How far a time may lie past the last frame: one frame step (the solver stops between two frames)."""
        t = self.time
        step = max(self.meta.output_step, float(t[-1] - t[-2]) if len(t) > 1 else 0.0)
        return step + 1e-9 * max(1.0, abs(float(t[-1])))

    def _check_time_axis(self):
        """/time plausible, and the root attributes consistent with it: output_step, T Final, T capture."""
        t, m = self.time, self.meta
        if max(abs(float(t[0])), abs(float(t[-1]))) > TIME_LIMIT:
            raise self._err("/time", f"runs from {t[0]:.6g} to {t[-1]:.6g} s: not a time axis of a run "
                                     f"(|t| <= {TIME_LIMIT:g} s)")
        if len(t) > 1:
            med = float(np.median(np.diff(t)))
            if not med / OUTPUT_STEP_RATIO <= m.output_step <= med * OUTPUT_STEP_RATIO:
                raise self._err("/@output_step", f"{m.output_step:.6g} s, but the frames of /time are {med:.6g} s "
                                                 f"apart (median; expected within a factor {OUTPUT_STEP_RATIO:g})")
        elif not MIN_OUTPUT_STEP <= m.output_step <= TIME_LIMIT:
            raise self._err("/@output_step", f"{m.output_step:.6g} s is not an output step "
                                             f"({MIN_OUTPUT_STEP:g} .. {TIME_LIMIT:g} s)")
        if self.live:   # a run being written: T Final and T capture are set when it ends
            return
        last = float(t[-1])
        half = 0.5 * (float(t[-1] - t[-2]) if len(t) > 1 else m.output_step)
        if math.isfinite(m.t_final) and abs(m.t_final - last) > half + 1e-9 * max(1.0, abs(last)):
            raise self._err("/@t_final", f"T Final {m.t_final:.6g} s is not the last frame's time {last:.6g} s "
                                         "of /time")
        if math.isfinite(m.t_capture) and m.t_capture > last + self._tolerance():
            raise self._err("/@t_capture", f"T capture {m.t_capture:.6g} s is after the run's last frame "
                                           f"({last:.6g} s)")
        with self._reading("/time@t_capture"):
            tc = _scalar_attr(self._ds("time"), "t_capture", None, False)
        if tc is not None:
            tc = self._float_attr(self._ds("time"), "/time", "t_capture", math.nan)
            if not (math.isnan(tc) and math.isnan(m.t_capture) or tc == m.t_capture
                    or abs(tc - m.t_capture) <= 1e-9 * max(1.0, abs(tc))):
                raise self._err("/time@t_capture", f"{tc:.6g} s differs from the root T capture {m.t_capture:.6g} s "
                                                   "(a finished run has the same value in both)")

    def _check_channel_attrs(self, d, ds: str, ch: ChannelInfo):
        """A channel's stroke (NaN or > 0), place (NaN or finite) and abs_max (NaN or >= 0), all finite."""
        if not (math.isnan(ch.stroke) or 0 < ch.stroke <= VALUE_LIMIT):
            raise self._err(f"{ds}@stroke", f"must be a positive full-scale range (NaN if none), found {ch.stroke:.6g}")
        if not (math.isnan(ch.place) or abs(ch.place) <= 360):
            raise self._err(f"{ds}@place", f"must be an angle in degrees (NaN if none), found {ch.place:.6g}")
        m = self._float_attr(d, ds, "abs_max", math.nan)
        if not (math.isnan(m) or 0 <= m <= VALUE_LIMIT):
            raise self._err(f"{ds}@abs_max", f"must be the channel's max |value| (>= 0, NaN if not stored), "
                                             f"found {m:.6g}")
        self._abs_max[ch.name] = m

    def _parameters_text(self, par) -> str:
        """/parameters: the input TOML text (UTF-8), not a number or binary data."""
        if par.dtype.kind not in "OS" or (par.dtype.kind == "O" and h5py.check_string_dtype(par.dtype) is None):
            raise self._err("/parameters", f"must be text (the scenario and mechanism TOML), found dtype {par.dtype}")
        v = self._read_whole(par)
        v = v.item() if isinstance(v, np.ndarray) else v
        if isinstance(v, bytes):
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._err("/parameters", f"not UTF-8 text (byte {exc.start}): binary data, not the input "
                                               "TOML") from None
        v = str(v)
        bad = re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", v)
        if bad:
            raise self._err("/parameters", f"control character {bad.group()!r} at character {bad.start()}: binary "
                                           "data, not the input TOML")
        return v

    def _time_datasets(self) -> list:
        """Every dataset indexed by frame (they grow together while the run is written), one kept handle each.

        Never a second handle: HDF5 keeps one state per open dataset, and a refresh (SWMR) with another handle open
        leaves its chunk index as it was at the open, so reads past it return other chunks (h5py issue 2803)."""
        return [self._ds(n) for n in self._timed_names()]

    def _timed_names(self) -> list[str]:
        """Paths of the datasets indexed by frame (time, poses, channels, contact records); their handles kept."""
        names = getattr(self, "_timed", None)
        if names is None:
            f, h = self._f, self._handles
            names = ["time", "bodies/position", "bodies/quaternion"]
            names += [f"flexible/{k}/points" for k in (f["flexible"] if "flexible" in f else ())
                      if isinstance(f[f"flexible/{k}"], h5py.Group) and "points" in f[f"flexible/{k}"]]
            for k in names[3:]:
                h.setdefault(k, f[k])
            for grp, prefix in ((f["channels"], "channels/"),
                                *((pg, f"contacts/{pn}/") for pn, pg in f["contacts"].items())):
                for k in grp:
                    d = h.get(prefix + k)
                    d = grp[k] if d is None else d
                    if isinstance(d, h5py.Dataset):
                        h[prefix + k] = d
                        names.append(prefix + k)
            self._timed = names
        return names

    def _ds(self, name: str):
        """A time-indexed dataset by path, through its one kept handle (HDF5 name lookups are slow under SWMR)."""
        d = self._handles.get(name)
        if d is None:
            with self._reading(f"/{name}", "cannot be opened, file corrupt"):
                d = self._handles[name] = self._f[name]
        return d

    def _take_capture(self):
        """A growing run's T capture: its writer stores it on /time as soon as it has it (the root attribute only at
        the end, and SWMR readers do not see root attributes change)."""
        if not math.isfinite(self.meta.t_capture):
            with self._reading("/time@t_capture"):
                v = _scalar_attr(self._ds("time"), "t_capture", math.nan, False)
            try:
                self.meta.t_capture = float(v)
            except (TypeError, ValueError):
                raise self._err("/time@t_capture", f"expected a time in seconds, found {v!r}") from None

    def _live_frames(self) -> int:
        """Frames present in every time-indexed dataset of a growing file (a block may be half flushed)."""
        try:
            return min(d.shape[0] for d in self._time_datasets())
        except (*H5_ERRORS, AttributeError):  # a missing or unreadable group is reported by the checks that follow
            with self._reading("/time"):
                return self._f["time"].shape[0]

    def _shape_ok(self, actual, expected) -> bool:
        if tuple(actual) == tuple(expected):
            return True
        return (self.live and len(actual) == len(expected) and len(expected) > 0
                and actual[0] >= expected[0] and tuple(actual[1:]) == tuple(expected[1:]))

    REFRESH_GROUP = 24   # datasets refreshed per step of `refresh_steps` (~0.1 ms each under SWMR)

    def refresh(self) -> bool:
        """For a run opened while being written: take in the frames flushed since; True if there are more."""
        grew = False
        for grew in self.refresh_steps():
            pass
        return bool(grew)

    def refresh_steps(self):
        """`refresh` in small steps (a generator; a GUI runs one step per event-loop turn): the dataset shapes in
        groups of REFRESH_GROUP, then the new frames' times. The new frames count only after the last step, which
        yields True if the run grew (every earlier step yields None)."""
        if not self.live or self._f is None:
            yield False
            return
        ds = self._time_datasets()
        n = None   # frames present in every time-indexed dataset (a block may be half flushed)
        try:
            for i in range(0, len(ds), self.REFRESH_GROUP):
                for d in ds[i:i + self.REFRESH_GROUP]:
                    d.refresh()
                    self.io_ops += 1
                    m = d.shape[0]
                    n = m if n is None or m < n else n
                yield None
        except H5_ERRORS as exc:
            raise self._err(_path_of(d), f"cannot refresh a growing run ({exc})") from None
        self._take_capture()
        if n is None or n <= self.n_frames:
            yield False
            return
        if n * 8 > DEFLATE_MAX_RATIO * os.path.getsize(self.path) + SIZE_SLACK:
            raise self._err("/time", f"grew to {n:,} frames, more than a {os.path.getsize(self.path):,}-byte file "
                                     "can hold even compressed")
        n0 = self.n_frames
        new = self._read("time", np.s_[n0:n])   # only the frames added: earlier ones do not change
        t = np.concatenate([self.time[:n0], new])
        if not np.all(np.isfinite(new)) or np.any(np.diff(t[max(n0 - 1, 0):]) <= 0):
            raise self._err("/time", "NaN, inf or not increasing in the frames added while the run grows")
        if self._pose_block is not None and self._pose_block[1] >= n0:
            self._pose_block = None   # the last block may have been short: read again with the new frames
        self._flex_block = {k: v for k, v in self._flex_block.items() if v[1] < n0}
        self.time, self.n_frames = t, n
        yield True   # events are not re-read: their strings may be rewritten under us (read them at the end)

    def state_at(self, frame: int) -> tuple[int, dict[str, np.ndarray]] | None:
        """The last state snapshot at or before `frame`: (its frame, {name: vector}); None without /state."""
        if not self.state_sizes:
            return None
        frames = self._state_frames[self._state_frames < self.n_frames]
        i = int(np.searchsorted(frames, int(frame), side="right")) - 1
        if i < 0:
            return None
        return int(frames[i]), {k: np.array(self._read(f"state/{k}", i), dtype=float)
                                for k in self.state_sizes}

    @staticmethod
    def _at(where: str, name: str) -> str:
        return f"/@{name}" if where == "/" else f"{where}@{name}"

    def _attr_value(self, obj, where: str, name: str, default):
        """An attribute as stored (strings decoded); RunFileError naming it if it cannot be read."""
        with self._reading(self._at(where, name)):
            return _decode(_attr(obj, name, default))

    def _str_attr(self, obj, where: str, name: str, default: str) -> str:
        """A text attribute: a string of one line, at most TEXT_LIMIT characters (an integer unit is refused)."""
        with self._reading(self._at(where, name)):
            v = _decode(_scalar_attr(obj, name, default, True))
        return self._text(self._at(where, name), v)

    def _text(self, at: str, v) -> str:
        if not isinstance(v, str):
            raise self._err(at, f"must be text, found {_shown(v)[:80]}")
        if len(v) > TEXT_LIMIT:
            raise self._err(at, f"text of {len(v):,} characters, more than {TEXT_LIMIT:,}")
        bad = _CONTROL.search(v)
        if bad:
            raise self._err(at, f"must be one line of text, found {bad.group()!r} at character {bad.start()}")
        return str(v)

    def _float_attr(self, obj, where: str, name: str, default: float) -> float:
        """A number attribute (an integer or float scalar; text such as "0.5", a boolean or an array is refused)."""
        with self._reading(self._at(where, name)):
            v = _scalar_attr(obj, name, default, False)
        v = _decode(v)
        if isinstance(v, (str, bytes, bool, np.bool_)) or (isinstance(v, np.ndarray) and v.shape != ()):
            raise self._err(self._at(where, name), f"must be a number, found {_shown(v)[:80]}")
        try:
            return float(v)
        except (TypeError, ValueError):
            raise self._err(self._at(where, name), f"must be a number, found {_shown(v)[:80]}") from None

    def _group(self, name):
        with self._reading(f"/{name}", "cannot be opened, file corrupt"):
            obj = self._f.get(name)
        if obj is None:
            raise self._err(f"/{name}", "missing")
        if not isinstance(obj, h5py.Group):
            raise self._err(f"/{name}", "expected a group, found a dataset")
        return obj

    def _members(self, name) -> list[tuple[str, object]]:
        """(name, object) of each member of a group; RunFileError naming the group or member that cannot be read."""
        g = self._group(name)
        with self._reading(f"/{name}", "its members cannot be listed, file corrupt"):
            keys = list(g)
        out = []
        for k in keys:
            d = self._handles.get(f"{name}/{k}")   # a kept handle, never a second one (see `_time_datasets`)
            if d is None:
                with self._reading(f"/{name}/{k}", "cannot be opened, file corrupt"):
                    d = g[k]
            out.append((k, d))
        return out

    def _check_declared(self, d, ds: str):
        """Refuse a dataset declaring more bytes than the file could hold compressed (see DEFLATE_MAX_RATIO)."""
        with self._reading(ds):
            declared = _declared_bytes(d)
        if declared > DEFLATE_MAX_RATIO * self.file_size + SIZE_SLACK:
            raise self._err(ds, f"declares shape {d.shape} ({declared:,} bytes), more than a {self.file_size:,}-byte "
                                "file can hold even compressed")

    def _dataset(self, name, shape=None, ndim=None, kind=None, keep=False):
        """A checked dataset; `keep`: a time-indexed one, whose handle is kept (see `_time_datasets`)."""
        ds = f"/{name}"
        obj = self._handles.get(name)
        if obj is None:
            with self._reading(ds, "cannot be opened, file corrupt"):
                obj = self._f.get(name)
        if obj is None:
            raise self._err(ds, "missing")
        if not isinstance(obj, h5py.Dataset):
            raise self._err(ds, "expected a dataset, found a group")
        self._check_declared(obj, ds)
        with self._reading(ds):
            if shape is not None and not self._shape_ok(obj.shape, shape):
                raise self._err(ds, f"wrong shape {obj.shape}, expected {shape}")
            if ndim is not None and obj.ndim != ndim:
                raise self._err(ds, f"wrong shape {obj.shape}, expected {ndim} dimension(s)")
            if kind is not None and obj.dtype.kind not in kind:
                raise self._err(ds, f"wrong dtype {obj.dtype}, expected {'float' if kind == 'f' else 'integer'}")
        if keep:
            self._handles[name] = obj
        return obj

    def _read(self, d, sel=()):
        """`d[sel]` of a dataset, or of the time-indexed dataset at path `d` (a str, through the kept handles)."""
        self.io_ops += 1
        name = f"/{d}" if isinstance(d, str) else _path_of(d)
        with self._reading(name, "data cannot be read, file truncated or corrupt"):
            return (self._ds(d) if isinstance(d, str) else d)[sel]

    def _read_whole(self, d, sel=()):
        """`_read` of a dataset read whole at open, once its declared size fits the bytes it stores (see
        DEFLATE_MAX_RATIO): a corrupt shape is refused before anything is allocated."""
        ds = _path_of(d)
        with self._reading(ds):
            declared, stored = _declared_bytes(d), d.id.get_storage_size()
        if declared > DEFLATE_MAX_RATIO * min(stored, self.file_size) + SIZE_SLACK:
            raise self._err(ds, f"declares shape {d.shape} ({declared:,} bytes) but stores {stored:,} bytes: "
                                "more than compression can expand")
        return self._read(d, sel)

    def _finite_block(self, name: str, a: int, b: int) -> np.ndarray:
        """Frames [a, b) of a time-indexed dataset that must be finite; RunFileError naming the first bad frame."""
        block = self._read(name, np.s_[a:b])
        if not np.all(np.isfinite(block)):
            j = int(np.flatnonzero(~np.all(np.isfinite(block.reshape(len(block), -1)), axis=1))[0])
            raise self._err(f"/{name}", f"NaN or inf at frame {a + j}")
        if name == "bodies/quaternion" and block.size:   # (N, B, 4): each a unit quaternion, within the tolerance
            with np.errstate(over="ignore"):
                off = np.abs(np.sqrt(np.sum(block * block, axis=-1)) - 1)
            bad = ~(off <= QUATERNION_TOLERANCE)
            if bad.any():
                j, k = (int(x[0]) for x in np.nonzero(bad))
                norm = float(np.hypot.reduce(block[j, k]))   # (no overflow to inf)
                raise self._err(f"/{name}", f"body {self.bodies[k]!r} at frame {a + j}: quaternion of norm "
                                            f"{norm:.6g}, not a rotation (unit within {QUATERNION_TOLERANCE:g})")
        elif name == "bodies/position":
            self._plausible(name, block, a)
        return block

    def _check_finite(self, name: str):
        step = max(1, self._chunk_frames(name, 65536)) * 8
        n = self.n_frames
        for i in range(0, n, step):
            self._finite_block(name, i, min(i + step, n))

    def _chunk_frames(self, name: str, default: int) -> int:
        """Frames per chunk of a time-indexed dataset (`default` if not chunked)."""
        with self._reading(f"/{name}"):
            d = self._ds(name)
            return int(d.chunks[0]) if d.chunks else default

    def check_poses(self):
        """Read every pose once and raise RunFileError at the first NaN or inf (open checks them lazily)."""
        self._check_finite("bodies/position")
        self._check_finite("bodies/quaternion")

    def check_data(self):
        """Read every frame of every time-indexed dataset once (poses, channels, contact records) and raise
        RunFileError at the first value that is not finite where it must be, or not plausible (`_plausible`)."""
        self.check_poses()
        n = self.n_frames
        for name in self.channels:
            step = max(1, self._chunk_frames(f"channels/{name}", 65536)) * 8
            for i in range(0, n, step):
                self.channel(name, i, min(i + step, n))
        for fp in self.flexible_parts:
            name = f"flexible/{fp.name}/points"
            step = max(1, self._chunk_frames(name, 65536)) * 8
            for i in range(0, n, step):
                self._plausible(name, self._finite_block(name, i, min(i + step, n)), i)
        for pair in self.contact_pairs:
            step = max(1, self._chunk_frames(f"contacts/{pair}/force", 65536)) * 8
            for i in range(0, n, step):
                j = min(i + step, n)
                self.contact_force(pair, i, j)
                self.contact_point(pair, i, j)
                self.contact_detail(pair, i, j)

    # ---- public reading API ----------------------------------------------------------------
    @property
    def t_capture(self) -> float:
        return self.meta.t_capture

    @property
    def t_final(self) -> float:
        """T Final: the last frame's time (the root attribute, when given, was checked to be that at open)."""
        return float(self.time[-1])

    @property
    def duration(self) -> float:
        return float(self.time[-1] - self.time[0])

    def frame_at(self, t: float) -> int:
        """Index of the last frame at or before time t (clamped to the run)."""
        i = int(np.searchsorted(self.time, t, side="right")) - 1
        return min(max(i, 0), self.n_frames - 1)

    def stored_abs_max(self, name: str) -> float:
        """max |value| of a channel as its writer stored it at the end (NaN: not stored, or the run may still grow)."""
        if self.live:
            return math.nan
        return self._abs_max.get(name, math.nan)   # (checked >= 0 or NaN at open)

    def extrema(self, name: str) -> tuple[float, float, float, float] | None:
        """(min, time of min, max, time of max) of a channel over every solver step, as its writer stored them
        (/extrema); None when the file has none for it (older files, runs cut short: read the frames instead)."""
        if self.live or not math.isfinite(self.extrema_step()):
            return None
        try:
            with self._reading("extrema/values"):
                names = [_decode(n) for n in self._f["extrema/names"][()]]
                if name not in names:
                    return None
                v = np.asarray(self._f["extrema/values"][:, names.index(name)], dtype="f8")
        except RunFileError:
            return None
        return tuple(float(x) for x in v) if v.shape == (4,) and np.isfinite(v).all() else None

    def extrema_step(self) -> float:
        """The solver step the /extrema table was taken at (NaN: the file has none, or it was never filled)."""
        try:
            with self._reading("extrema"):
                if "extrema" not in self._f:
                    return math.nan
                v = self._f["extrema"].attrs.get("step", math.nan)
                return float(v) if isinstance(v, (int, float, np.floating)) else math.nan
        except RunFileError:
            return math.nan

    def channel(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Values of one channel over frames [start, stop); RunFileError if one is beyond the stored abs_max or any
        physical value (a corrupt chunk), never the number."""
        if name not in self.channels:
            raise KeyError(f"{self.path}: no channel {name!r}")
        start = start + (self.n_frames if start < 0 else 0)
        return self._plausible(f"channels/{name}", self._read(f"channels/{name}", np.s_[start:self._stop(stop)]),
                               start, self.stored_abs_max(name))

    def channel_at(self, name: str, frame: int) -> float:
        frame = int(frame) + (self.n_frames if frame < 0 else 0)
        return float(self._plausible(f"channels/{name}", np.atleast_1d(self._read(f"channels/{name}", frame)),
                                     frame, self.stored_abs_max(name))[0])

    def _plausible(self, name: str, values: np.ndarray, first: int, abs_max: float = math.nan) -> np.ndarray:
        """`values` (frames first, from frame `first`) if every one is within VALUE_LIMIT and the stored abs_max
        (NaN allowed); else RunFileError naming the dataset and the first bad frame: the data is corrupt."""
        a = np.abs(values.reshape(len(values), -1)) if values.ndim else np.abs(values.reshape(1, 1))
        limit = VALUE_LIMIT if math.isnan(abs_max) else abs_max * (1 + 1e-9) + 1e-300
        with np.errstate(invalid="ignore"):
            bad = a > limit
        if bad.any():
            j = int(np.flatnonzero(bad.any(axis=1))[0])
            v = float(a[j][bad[j]][0])
            why = (f"beyond any physical value (|value| <= {VALUE_LIMIT:g})" if math.isnan(abs_max) or v > VALUE_LIMIT
                   else f"more than the run's max |value| {abs_max:.6g} stored in its abs_max")
            raise self._err(f"/{name}", f"|value| {v:.6g} at frame {first + j} is {why}: data corrupt")
        return values

    def channels_at(self, names, frame: int) -> dict[str, float]:
        return {n: self.channel_at(n, frame) for n in names}

    def poses(self, frame: int) -> tuple[np.ndarray, np.ndarray]:
        """Body positions (B, 3) and quaternions (B, 4, w first) at a frame, in the passive docking frame.

        Poses are read, and checked finite, one time chunk at a time (RunFileError names the first bad frame)."""
        frame = int(frame) + (self.n_frames if frame < 0 else 0)
        if not 0 <= frame < self.n_frames:
            raise IndexError(f"{self.path}: frame {frame} outside 0..{self.n_frames - 1}")
        blk = self._pose_block
        if blk is None or not blk[0] <= frame < blk[1]:
            step = self._chunk_frames("bodies/position", TIME_CHUNK)
            a = frame - frame % step
            b = min(a + step, self.n_frames)
            blk = self._pose_block = (a, b, self._finite_block("bodies/position", a, b),
                                      self._finite_block("bodies/quaternion", a, b))
        k = frame - blk[0]
        return blk[2][k].copy(), blk[3][k].copy()

    def contact_state(self, frame: int) -> dict[str, tuple[bool, np.ndarray, np.ndarray]]:
        """Per pair: (active, force vector, point) at a frame."""
        out = {}
        for name in self.contact_pairs:
            base = f"contacts/{name}"
            out[name] = (bool(self._read(f"{base}/active", frame)),
                         self._plausible(f"{base}/force", self._read(f"{base}/force", frame)[None], frame)[0],
                         self._plausible(f"{base}/point", self._read(f"{base}/point", frame)[None], frame)[0])
        return out

    def _stop(self, stop):
        """Frame range end: a growing file's datasets may hold a half-flushed block past n_frames."""
        return self.n_frames if stop is None else min(stop, self.n_frames)

    def contact_active(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self._read(f"contacts/{name}/active", np.s_[start:self._stop(stop)]).astype(bool)

    def contact_force(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self._plausible(f"contacts/{name}/force", self._read(f"contacts/{name}/force",
                                                                    np.s_[start:self._stop(stop)]), start)

    def contact_point(self, name: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        return self._plausible(f"contacts/{name}/point", self._read(f"contacts/{name}/point",
                                                                    np.s_[start:self._stop(stop)]), start)

    def contact_detail(self, name: str, start: int = 0, stop: int | None = None,
                       fields=("normal", "depth", "normal_speed")) -> dict[str, np.ndarray]:
        """Optional per-pair normal, depth and normal_speed over [start, stop) (empty dict if absent)."""
        held = self._handles
        return {k: self._plausible(f"contacts/{name}/{k}", self._read(f"contacts/{name}/{k}",
                                                                      np.s_[start:self._stop(stop)]), start)
                for k in fields if f"contacts/{name}/{k}" in held}

    def contact_statistics(self) -> tuple[np.ndarray, float] | None:
        """The writer's contact-interval table (CONTACT_EVENT_DTYPE rows, pair names as str) and the step of the
        frames it was computed from; None when the file has none (or its writer stopped before writing it).
        Checked when the run is opened (a run being written has none yet)."""
        return None if self.live else self._contact_stats

    def _read_contact_statistics(self) -> tuple[np.ndarray, float] | None:
        """/contact_events read and checked: fields and their kinds, sample_step, known pairs, finite times inside
        the run with start <= end, no negative or non-finite force or impulse, no negative speed."""
        name = "/contact_events"
        with self._reading(name, "cannot be opened, file corrupt"):
            d = self._f.get("contact_events")
        if d is None:
            return None
        with self._reading(name):
            if not isinstance(d, h5py.Dataset) or d.ndim != 1:
                raise self._err(name, "expected a one-dimensional table")
            fields = d.dtype.names or ()
            missing = [k for k in CONTACT_EVENT_DTYPE.names if k not in fields]
        if missing:
            raise self._err(name, f"wrong dtype {d.dtype}: missing fields {', '.join(missing)}")
        for k in CONTACT_EVENT_DTYPE.names:
            kind = d.dtype[k].kind
            if (kind not in "OSU" or kind == "O" and h5py.check_string_dtype(d.dtype[k]) is None) if k == "pair" \
                    else kind not in "fiu":
                raise self._err(name, f"field {k} has dtype {d.dtype[k]}, expected "
                                      f"{'text' if k == 'pair' else 'a number'}")
        with self._reading(f"{name}@sample_step"):
            step = _scalar_attr(d, "sample_step", None, False)
        if step is None:
            raise self._err(f"{name}@sample_step", "missing")
        step = _decode(step)
        try:
            if isinstance(step, (str, bytes, bool, np.bool_)):
                raise TypeError
            step = float(step)
        except (TypeError, ValueError):
            raise self._err(f"{name}@sample_step", f"must be a number of seconds, found {_shown(step)[:80]}") from None
        if math.isnan(step):
            return None                                   # created, never filled: its writer stopped
        if not (0 < step <= TIME_LIMIT):
            raise self._err(f"{name}@sample_step", f"must be a positive number of seconds, found {step}")
        raw = self._read_whole(d)
        rows = np.zeros(len(raw), dtype=[(k, object if k == "pair" else CONTACT_EVENT_DTYPE[k])
                                         for k in CONTACT_EVENT_DTYPE.names])
        with self._reading(name, "rows cannot be decoded"):
            for k in CONTACT_EVENT_DTYPE.names:
                rows[k] = [str(_decode(v)) for v in raw[k]] if k == "pair" else raw[k]
        tol = self._tolerance() + step
        t0, t1 = float(self.time[0]), float(self.time[-1])
        for i, r in enumerate(rows):
            where = f"row {i} ({r['pair'][:80]})"
            if r["pair"] not in self.contact_pairs:
                raise self._err(name, f"{where}: pair is not in /contacts")
            start, end = float(r["start"]), float(r["end"])
            if not (math.isfinite(start) and math.isfinite(end) and end >= start):
                raise self._err(name, f"{where}: start {start} and end {end} must be finite, end >= start")
            if start < t0 - tol or end > t1 + tol:
                raise self._err(name, f"{where}: {start:.6g} .. {end:.6g} s is outside the run "
                                      f"({t0:.6g} .. {t1:.6g} s)")
            pt = float(r["peak_time"])
            if not (math.isnan(pt) or start - step - 1e-9 <= pt <= end + step + 1e-9):
                raise self._err(name, f"{where}: peak_time {pt:.6g} s is outside its interval "
                                      f"{start:.6g} .. {end:.6g} s")
            if not (0 <= r["peak_force"] <= VALUE_LIMIT and 0 <= r["impulse"] <= VALUE_LIMIT):
                raise self._err(name, f"{where}: peak_force {r['peak_force']:.6g} and impulse {r['impulse']:.6g} "
                                      "must be finite and >= 0 (the normal force is >= 0)")
            if r["approach_speed"] < 0 or r["approach_speed"] > VALUE_LIMIT:
                raise self._err(name, f"{where}: approach_speed {r['approach_speed']:.6g} must be >= 0 "
                                      "(closing speed; NaN when unknown)")
            if r["rebound"] not in (0, 1) or r["lasts_to_end"] not in (0, 1):
                raise self._err(name, f"{where}: rebound and lasts_to_end must be 0 or 1")
        return rows, step

    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for ch in self.channels.values():
            out.setdefault(ch.group, []).append(ch.name)
        return out

    def capture_text(self) -> str:
        """T capture as the facts show it: its time, or no capture (yet, while the run is being written)."""
        t = self.meta.t_capture
        return f"{t:.3f} s" if math.isfinite(t) else "no capture yet" if self.live else "no capture"

    def mechanism_type_name(self) -> str:
        """The run's mechanism type (solver.mechanisms): as the file names it, inferred, or "generic"."""
        from solver import mechanisms
        return mechanisms.for_run(self).name

    def summary(self) -> str:
        m = self.meta
        cap = self.capture_text()
        lines = [
            f"run file      {self.path}",
            f"format        {FORMAT_NAME} v{self.format_version}",
            f"variant       {m.variant}",
            f"mechanism     {self.mechanism_type_name()}" + ("" if m.mechanism_type else " (inferred from the variant)"),
            f"comment       {m.comment}",
            f"Run Date      {m.run_date}",
            f"solver        {m.solver_version}",
            f"duration      {self.duration:.3f} s ({self.n_frames} frames, output step {m.output_step:g} s)",
            f"T capture     {cap}",
            f"T Final       {self.t_final:.3f} s" + ("" if m.complete else "  (INCOMPLETE run)"),
            f"bodies        {', '.join(self.bodies)}",
            "channels      " + "; ".join(f"{g} ({len(v)})" for g, v in self.groups().items()),
            f"contact pairs {', '.join(self.contact_pairs) or '-'}",
            f"parts         {len(self.geometry)}"
            + (f"; flexible {', '.join(fp.name for fp in self.flexible_parts)}" if self.flexible_parts else ""),
            f"events        {len(self.events)}",
        ]
        for e in self.events[:40]:
            lines.append(f"  {e.time:10.4f} s  {e.kind:<14} {one_line(e.pair):<20} {one_line(e.text)}")
        if len(self.events) > 40:
            lines.append(f"  ... {len(self.events) - 40} more")
        return "\n".join(lines)

    def close(self):
        if self._f is not None:
            try:
                self._f.close()
            except Exception:
                pass
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def open_run(path) -> RunFile:
    return RunFile(os.fspath(path))


def open_for_write(path) -> bool:
    """True if the HDF5 file is flagged open for writing (being written, or left by a writer that died)."""
    try:
        h5py.File(path, "r").close()
    except OSError as exc:
        return "already open for write" in str(exc)
    return False


def seal_if_orphaned(path, reason: str = "its writer was killed") -> bool:
    """Seal (`seal_incomplete`) a run file left open by a writer that died; False if the file is closed, still
    being written, or its writer's state cannot be told."""
    path = Path(path)
    if not path.is_file() or not open_for_write(path) or writer_alive(path) is not False:
        return False
    seal_incomplete(path, reason)
    return True


def _logged_events(f) -> list[Event]:
    """The events of /event_log (whole lines only: a killed writer may have left half a line)."""
    d = f.get("event_log")
    if not isinstance(d, h5py.Dataset) or d.ndim != 1 or d.shape[0] == 0:
        return []
    out = []
    for line in bytes(d[:]).decode("utf-8", "replace").split("\n")[:-1]:
        try:
            t, kind, pair, text = json.loads(line)
            out.append(Event(float(t), str(kind), str(pair), str(text)))
        except (ValueError, TypeError):
            continue
    return out


def _sealed_events(run: RunFile, t_final: float) -> tuple[list[Event], np.ndarray | None]:
    """A killed run's events: those it logged up to the last kept frame, and the contact intervals of the kept
    frames with their statistics, computed again as the solver does at the end (also as /contact_events rows)."""
    logged = _logged_events(run._f)  # noqa: SLF001  (same module)
    if not logged:
        return list(run.events), None   # a file without an event log (older writer): whatever /events holds
    from solver.contact_events import event_records, event_rows, table_from_frames
    table = table_from_frames(run)      # the frames the solver fed its accumulator: the same intervals
    events = [e for e in logged if e.kind not in ("contact_begin", "contact_end") and e.time <= t_final]
    return events + [Event(*row) for row in event_rows(table)], event_records(table)


def seal_incomplete(path, reason: str) -> Path:
    """Rewrite a run whose writer died (killed process) as an ordinary, closed v1 file: frames cut to the last
    block every dataset holds, `complete` false, T Final set, the events it logged and a `diagnostic` event saying
    why. A run killed after its writer marked it complete stays complete. Refused while its writer runs."""
    path = Path(path)
    if writer_alive(path):
        raise RunFileError(path, "/", "its writer is still running: cancel the run to keep it")
    orphan = open_for_write(path)
    run = RunFile(path, partial=True)
    t_final = float(run.time[-1])
    complete = run.meta.complete and orphan   # killed between marking it complete and closing it
    events, records = _sealed_events(run, t_final) if orphan and not complete else (list(run.events), None)
    from solver.atomic import remove_stale, replacing
    remove_stale(path.parent, re.escape(path.name) + r"\.sealing-(?P<pid>\d+)")   # left by a killed seal
    tmp = path.with_name(f"{path.name}.sealing-{os.getpid()}")   # the run file is replaced only when it is whole
    try:
        with replacing(path, tmp) as tmp:
            _write_sealed(run, tmp, complete, events, records, reason)
            run.close()
    finally:
        run.close()
    return path


def _write_sealed(run: RunFile, tmp: Path, complete: bool, events: list[Event], records, reason: str):
    """The sealed copy of a killed run (`seal_incomplete`) in `tmp`: its first `run.n_frames` frames."""
    src, n, t_final = run._f, run.n_frames, float(run.time[-1])  # noqa: SLF001  (same module)
    with h5py.File(tmp, "w", libver="latest") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        fresh = ("events", "contact_events") if records is not None else ("events",)   # written below, not copied:
        for name in src:                                                # a killed finish may have left them half
            if name not in fresh:
                src.copy(src[name], dst, name=name)
        for name in run._timed_names():   # noqa: SLF001  (same module)
            dst[name].resize(n, axis=0)
        if "state" in dst:   # keep the snapshots of frames that were kept
            keep = int(np.searchsorted(dst["state/frame"][:], n, side="left"))
            for d in dst["state"].values():
                d.resize(keep, axis=0)
        if not complete:
            events.append(Event(t_final, "diagnostic", "", f"run stopped at t = {t_final:.4f} s: {reason}"))
        events.sort(key=lambda e: e.time)
        ev = dst.create_dataset("events", shape=(len(events),), maxshape=(None,), dtype=EVENT_DTYPE, chunks=(256,))
        if events:
            ev[:] = _event_array(events)
        dst.attrs["complete"] = complete
        dst.attrs["t_final"] = t_final
        t_capture = run.meta.t_capture   # (a killed writer stored it on /time only)
        if t_capture > t_final + run._tolerance():   # noqa: SLF001  captured after the last frame kept: not in it
            t_capture = math.nan
        dst.attrs["t_capture"] = t_capture
        dst["time"].attrs["t_capture"] = t_capture
        if records is not None and "contact_events" in src:
            ce = dst.create_dataset("contact_events", data=records, maxshape=(None,), chunks=(256,))
            ce.attrs["sample_step"] = run.meta.output_step
