"""Atomic file writes: a temporary file in the target's directory, then os.replace; on any failure (or a signal's
exception) the temporary file is removed and the target is as it was. Temporary names carry the writer's PID, so a
later writer removes those a killed one left (`remove_stale`)."""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path


def temporary_path(path, tag: str = "tmp") -> Path:
    """The temporary name of `path` for this process: `.NAME.PID.tmp` in the same directory (same filesystem)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}.{tag}")


@contextlib.contextmanager
def replacing(path, tmp=None, fsync: bool = True):
    """Yield a temporary path to write `path`'s new content to; on a normal exit it replaces `path` (fsynced
    first), on any exception it is removed and the exception goes on. `tmp`: another temporary name (same directory)."""
    path = Path(path)
    tmp = Path(tmp) if tmp is not None else temporary_path(path)
    try:
        yield tmp
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_bytes(path, data: bytes, fsync: bool = True) -> Path:
    """Write `data` to `path` atomically."""
    with replacing(path, fsync=fsync) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return Path(path)


def write_text(path, text: str, encoding: str = "utf-8", fsync: bool = True) -> Path:
    """Write `text` to `path` atomically."""
    return write_bytes(path, text.encode(encoding), fsync=fsync)


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # exists, another user's
        return True
    return True


def remove_stale(directory, pattern: str) -> list[Path]:
    """Remove the temporary files in `directory` whose name matches `pattern` (a regex with a group `pid`) and whose
    writer is dead; the removed paths."""
    d = Path(directory)
    out = []
    rx = re.compile(pattern)
    try:
        names = list(d.iterdir())
    except OSError:
        return out
    for p in names:
        m = rx.fullmatch(p.name)
        if m and not pid_alive(int(m.group("pid"))):
            with contextlib.suppress(OSError):
                p.unlink()
                out.append(p)
    return out


def stale_pattern(name: str, tag: str = "tmp") -> str:
    """The `remove_stale` pattern of `temporary_path(DIR / name, tag)` names."""
    return rf"\.{re.escape(name)}\.(?P<pid>\d+)\.{re.escape(tag)}"
