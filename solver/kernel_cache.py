"""Where the numba kernels' machine code is cached: one directory per version of the solver's sources.

numba keys a cached function by its own file's time stamp, but links the code of the jitted functions it calls from
other files into it: a kernel whose callee changed in another file would be served stale. A directory named by a hash
of every solver source makes any change to the solver start a fresh cache (its kernels compile once again)."""
import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

SOLVER = Path(__file__).resolve().parent
PREFIX = "src-"
UNUSED_DAYS = 30          # another version's directory not used for this long is removed when a version is chosen


def sources_hash(root: Path = SOLVER) -> str:
    """A hash of the names and contents of every Python source under `root`."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def default_base() -> Path:
    import platformdirs
    return Path(platformdirs.user_cache_dir("dockmnemo")) / "numba"


def version_dir(base) -> Path:
    """This solver version's directory under `base` (a version's directory given as `base` stands for its parent)."""
    base = Path(base)
    if base.name.startswith(PREFIX):          # inherited from a parent process, maybe of another version
        base = base.parent
    return base / f"{PREFIX}{sources_hash()}"


def use(base=None) -> Path:
    """Point numba's cache (NUMBA_CACHE_DIR, inherited by the processes this one starts) at this version's directory
    under `base` (default: NUMBA_CACHE_DIR, else the user's cache folder); before the kernels are imported."""
    d = version_dir(base or os.environ.get("NUMBA_CACHE_DIR") or default_base())
    if os.environ.get("NUMBA_CACHE_DIR") != str(d):
        os.environ["NUMBA_CACHE_DIR"] = str(d)
        if "numba" in sys.modules:
            from numba.core import config
            config.reload_config()
        _prune(d)
    return d


def _prune(d: Path):
    """Remove other versions' directories beside `d` not used for UNUSED_DAYS; touch `d` (best effort)."""
    try:
        d.mkdir(parents=True, exist_ok=True)
        os.utime(d)
        old = time.time() - UNUSED_DAYS * 86400
        for other in d.parent.glob(f"{PREFIX}*"):
            if other != d and other.is_dir() and other.stat().st_mtime < old:
                shutil.rmtree(other, ignore_errors=True)
    except OSError:
        pass
