"""Atomic file writes: a temporary file in the target's directory, then os.replace; on any failure (or a signal's
exception) the temporary file is removed and the target is as it was. Temporary names carry the writer's PID, so a
later writer removes those a killed one left (`remove_stale`)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
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
    """Write `text` to `path` atomically (its directory made if missing; see write_texts)."""
    return write_texts([(path, text)], encoding, fsync)[0]


def write_texts(texts, encoding: str = "utf-8", fsync: bool = True) -> list[Path]:
    """Write each (path, text) atomically, all or nothing: missing directories are made, every text goes to its
    temporary name first and only then are they renamed; on any failure the files renamed so far are put back as they
    were, the temporary files and the directories made here are removed, and the exception goes on."""
    texts = [(Path(p), t) for p, t in texts]
    made, temps, backups = [], [], []
    try:
        for path, _ in texts:
            missing, d = [], path.parent
            while not d.exists():
                missing.append(d)
                d = d.parent
            for d in reversed(missing):
                d.mkdir()
                made.append(d)
        for path, text in texts:
            tmp = temporary_path(path)
            temps.append(tmp)
            with open(tmp, "wb") as fh:
                fh.write(text.encode(encoding))
                fh.flush()
                if fsync:
                    os.fsync(fh.fileno())
        for (path, _), tmp in zip(texts, temps):
            if path.is_file():                      # kept under a second name until every text is in place
                old = temporary_path(path, "old")
                try:
                    os.link(path, old)
                except OSError:                     # a filesystem without hard links
                    shutil.copy2(path, old)
                backups.append((path, old))
            else:
                backups.append((path, None))
            os.replace(tmp, path)
        for _, old in backups:
            if old is not None:
                with contextlib.suppress(OSError):
                    old.unlink()
    except BaseException:
        for (path, old), tmp in zip(backups, temps):     # the texts already renamed: back to what was there
            if tmp.exists():
                continue
            with contextlib.suppress(OSError):
                if old is not None:
                    os.replace(old, path)
                else:
                    path.unlink()
        for _, old in backups:
            if old is not None:
                with contextlib.suppress(OSError):
                    old.unlink()
        for tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    return [p for p, _ in texts]


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
