"""Byte-flip fuzz of `dockmnemo info`: seeded random flips of a valid run, each read in a worker process.

The worker runs `app.cli.main(["info", copy])` in-process for many flipped copies and prints one JSON line per
flip; the driver kills a worker silent for `timeout` s (a hang), notes the flip and starts a new worker after it.
Run as a script (`python -m tests.runfile_fuzz RUN.h5 [N]`) it prints every flip that broke the rules.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

MEMORY_LIMIT = 2 << 30   # the worker's address space: a huge declared size must not take the machine's memory


def _raw_data(path) -> list[tuple[int, int]]:
    """(offset, size) of every dataset's stored values (chunks or contiguous data) in an HDF5 file."""
    import h5py
    spans = []

    def visit(_name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        if obj.chunks:
            for c in range(obj.id.get_num_chunks()):
                info = obj.id.get_chunk_info(c)
                spans.append((info.byte_offset, info.size))
        elif obj.id.get_offset() is not None:
            spans.append((obj.id.get_offset(), obj.id.get_storage_size()))
    try:
        f = h5py.File(path, "r")
    except OSError:   # a run whose writer was killed: open as its readers do
        f = h5py.File(path, "r", swmr=True)
    with f:
        f.visititems(visit)
    return spans


def flips(path, n: int, seed: int) -> list[tuple[int, int]]:
    """n (offset, xor mask) pairs: a quarter uniform over the file, the rest over the bytes that are not
    dataset values (headers, B-trees, heaps: where a flip changes the file's structure); masks 1..255."""
    size = os.path.getsize(path)
    structure = np.ones(size, bool)
    for off, k in _raw_data(path):
        structure[off:off + k] = False
    meta = np.flatnonzero(structure)
    rng = np.random.default_rng(seed)
    offsets = np.where(rng.random(n) < 0.25, rng.integers(0, size, n), meta[rng.integers(0, len(meta), n)])
    return [(int(o), int(m)) for o, m in zip(offsets, rng.integers(1, 256, n))]


def _worker(src: str, jobs: list[tuple[int, int, int]], tmp: str):
    """Read each flipped copy with `dockmnemo info`; one JSON line per flip on stdout."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import solver.runfile  # noqa: F401  (imported before the first flip: its time is not the flip's)
    import solver.verdict  # noqa: F401
    from app.cli import main
    data = Path(src).read_bytes()
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    path = os.path.join(tmp, "flipped.h5")
    for i, off, mask in jobs:
        b = bytearray(data)
        b[off] ^= mask
        Path(path).write_bytes(b)
        out.write(json.dumps({"i": i, "begin": True}) + "\n")
        out.flush()
        err, rc, tb = io.StringIO(), None, ""
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                rc = main(["info", path])
        except BaseException:   # noqa: BLE001  (what the fuzz looks for)
            tb = traceback.format_exc()
        out.write(json.dumps({"i": i, "path": path, "rc": rc, "stderr": err.getvalue(), "traceback": tb,
                              "seconds": time.perf_counter() - t0}) + "\n")
        out.flush()


def problem(result: dict, path: str) -> str:
    """Why a flip's result breaks the rules ('' if it does not): exit 0, or exit 2 with one line naming the file."""
    if result.get("hang"):
        return f"no answer in {result['hang']:g} s"
    if result["traceback"]:
        return result["traceback"].strip().splitlines()[-1]
    if result["rc"] == 0:
        return ""
    lines = result["stderr"].splitlines()
    if result["rc"] != 2 or len(lines) != 1 or not lines[0].startswith(f"dockmnemo: error: {path}: "):
        return f"exit {result['rc']}, stderr {result['stderr']!r}"
    return ""


def _follow(proc, results: dict, order, timeout: float, startup: float):
    """Take a worker's JSON lines into `results` until it ends or goes quiet (a hang: the flip it began)."""
    order = list(order)
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    buf, current, ready = b"", None, False
    try:
        while True:
            while b"\n" not in buf:
                if not sel.select(timeout if ready else startup):   # silent: the flip being read hangs
                    i = current if current is not None else next(k for k in order if k not in results)
                    results[i] = {"hang": timeout}
                    return
                chunk = os.read(fd, 1 << 16)
                if not chunk:   # the worker ended: done, or died (a crash inside HDF5 counts as a traceback)
                    code = proc.wait()
                    if current is not None or code:
                        i = current if current is not None else next(k for k in order if k not in results)
                        results[i] = {"rc": code, "stderr": "", "traceback": f"worker died (exit {code})"}
                    return
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            r = json.loads(line)
            if r.get("ready"):
                ready = True
            elif r.get("begin"):
                current = r["i"]
            else:
                results[r.pop("i")] = r
                current = None
    finally:
        sel.close()


def run_fuzz(src, n: int = 500, seed: int = 21, timeout: float = 10.0, startup: float = 120.0) -> list[dict]:
    """Flip n bytes of `src` one at a time and run `dockmnemo info` on each copy; a result per flip.

    Each result has i, offset, mask and rc / stderr / traceback, or `hang` (the timeout) if the worker went quiet
    while reading a flip (`startup`: the time a worker may take to import before its first flip)."""
    src = str(src)
    todo = [(i, o, m) for i, (o, m) in enumerate(flips(src, n, seed))]
    results: dict[int, dict] = {}
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        while len(results) < n:
            jobs = [j for j in todo if j[0] not in results]
            spec = os.path.join(tmp, "jobs.json")
            Path(spec).write_text(json.dumps({"src": src, "jobs": jobs, "tmp": tmp}))
            proc = subprocess.Popen([sys.executable, "-m", "tests.runfile_fuzz", "--worker", spec], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root)
            try:
                _follow(proc, results, (j[0] for j in jobs), timeout, startup)
            finally:
                proc.kill()
                proc.wait()
                proc.stdout.close()
    out = []
    for i, o, m in todo:
        r = dict(results[i], i=i, offset=o, mask=m)
        out.append(r)
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        spec = json.loads(Path(argv[1]).read_text())
        _worker(spec["src"], [tuple(j) for j in spec["jobs"]], spec["tmp"])
        return 0
    src, n = argv[0], int(argv[1]) if len(argv) > 1 else 500
    seed = int(argv[2]) if len(argv) > 2 else 21
    t0 = time.perf_counter()
    res = run_fuzz(src, n, seed)
    nbad = 0
    for r in res:
        why = problem(r, r.get("path", ""))
        if why:
            nbad += 1
            print(f"flip {r['i']} at {r['offset']} ^{r['mask']:#x}: {why}")
    print(f"{n} flips in {time.perf_counter() - t0:.1f} s: ok {sum(r.get('rc') == 0 for r in res)}, "
          f"refused {sum(r.get('rc') == 2 for r in res)}, broken {nbad}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
