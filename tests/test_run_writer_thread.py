"""The run file is written by a writer thread while the solver integrates: the same file as written in the solver's
thread, and a failure there (the file cannot grow) stops the run with a clear message, not a hang or a traceback."""
import resource
import signal
import subprocess
import threading
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from solver.runfile import RunFile, RunMeta, RunWriter
from solver.simulate import run_scenario

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
EXPERT = ROOT / "resources" / "scenarios" / "expert_existing.toml"


def contents(path) -> dict:
    """Every dataset's values and every attribute of a run file, by name."""
    out = {}

    def visit(name, obj):
        for k, v in obj.attrs.items():
            out[f"{name}@{k}"] = v
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]
    with h5py.File(path, "r") as f:
        for k, v in f.attrs.items():
            out[f"/@{k}"] = v
        f.visititems(visit)
    return out


def same(x, y) -> bool:
    """Equal values, bit for bit (NaN equal to NaN)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f" and y.dtype.kind == "f":
        return x.shape == y.shape and np.array_equal(x.view(f"u{x.itemsize}"), y.view(f"u{y.itemsize}"))
    return x.shape == y.shape and bool(np.all(x == y))


def rewrite(run: RunFile, path, background: bool, blocks) -> None:
    """Write the frames of a solver run again, in blocks of the given sizes, flushing after every block (partial
    chunks written and written again), with states and events between blocks."""
    w = RunWriter(path, RunMeta(comment="again", variant=run.meta.variant, output_step=run.meta.output_step),
                  list(run.channels.values()), run.bodies, list(run.contact_pairs.values()),
                  list(run.geometry.values()), chunk=512, contact_detail=True, state_sizes={"s": 5},
                  flush_interval=0.0, background=background)
    names = list(run.channels)
    with h5py.File(run.path, "r") as f:   # the poses as stored
        pos, quat = f["bodies/position"][:], f["bodies/quaternion"][:]
    done, i = 0, 0
    while done < run.n_frames:
        k = min(blocks[i % len(blocks)], run.n_frames - done)
        sl = slice(done, done + k)
        w.add_state(done, {"s": np.arange(5.0) + done})
        detail = {p: run.contact_detail(p, done, done + k) for p in run.contact_pairs}
        w.append(run.time[sl], np.stack([run.channel(c, done, done + k) for c in names], axis=1),
                 pos[sl], quat[sl],
                 np.stack([run.contact_active(p, done, done + k) for p in run.contact_pairs], axis=1),
                 np.stack([run.contact_force(p, done, done + k) for p in run.contact_pairs], axis=1),
                 np.stack([run.contact_point(p, done, done + k) for p in run.contact_pairs], axis=1),
                 np.stack([detail[p]["normal"] for p in run.contact_pairs], axis=1),
                 np.stack([detail[p]["depth"] for p in run.contact_pairs], axis=1),
                 np.stack([detail[p]["normal_speed"] for p in run.contact_pairs], axis=1))
        done += k
        w.add_event(float(run.time[done - 1]), "phase", "", f"block {i}")
        w.set_capture(float(run.time[done - 1]))
        w.flush_due()
        i += 1
    w.finish(t_capture=1.5)


@pytest.fixture(scope="module")
def solver_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("wthread") / "ci.h5"
    run_scenario(SCEN, out, t_end=3.0)
    return out


def test_the_writer_thread_writes_the_same_file_as_the_solvers_thread(solver_run, tmp_path):
    with RunFile(solver_run) as run:
        assert run.n_frames == 3001 and any(run.contact_active(p).any() for p in run.contact_pairs)
        rewrite(run, tmp_path / "thread.h5", True, [1000, 7, 333, 2048])
        rewrite(run, tmp_path / "sync.h5", False, [1000, 7, 333, 2048])
        ref = {k: v for k, v in contents(solver_run).items()
               if k.startswith(("time", "channels/", "bodies/", "contacts/"))}
    a, b = contents(tmp_path / "thread.h5"), contents(tmp_path / "sync.h5")
    assert a.keys() == b.keys()
    for k in a:
        if k == "/@run_date":
            continue
        assert same(a[k], b[k]), k
    for k, v in ref.items():   # every frame as the solver's own (threaded) file holds it
        if "@" not in k:
            assert same(a[k], v), k
    assert not list(tmp_path.glob("*.creating"))


def fsize_limit(limit: int):
    def apply():   # in the child: writes past `limit` bytes fail with EFBIG (SIGXFSZ ignored, as a full disk does)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.slow
def test_a_run_file_that_cannot_grow_stops_the_run_with_a_message(tmp_path):
    """A real write failure in the writer thread (the process may not write files over 8 MB: errno EFBIG, like a
    full disk) ends `dockmnemo run` with exit 5 and one line naming the file and the cause, within seconds."""
    out = tmp_path / "big.h5"
    r = subprocess.run([sys.executable, "-m", "app", "run", str(EXPERT), "-o", str(out), "--t-end", "60"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=fsize_limit(8 << 20))
    assert r.returncode == 5, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"dockmnemo: error: {out}: writing the run file failed: File too large ("), r.stderr
    assert "Traceback" not in r.stderr and "stopped at" in r.stderr


def test_an_error_in_the_solvers_thread_stops_the_writer_thread(tmp_path):
    """A progress callback that raises ends the run with its exception; the writer thread stops with it and leaves
    the frames so far in a closed file (not complete)."""
    out = tmp_path / "stopped.h5"

    def progress(t, total):
        if t > 2.5:
            raise RuntimeError("progress display failed")
    with pytest.raises(RuntimeError, match="progress display failed"):
        run_scenario(SCEN, out, t_end=5.0, progress=progress)
    assert not [t for t in threading.enumerate() if t.name == "run writer stopped.h5"]
    with h5py.File(out, "r") as f:   # closed: plain h5py opens it
        assert not f.attrs["complete"] and f["time"].shape[0] >= 2500
