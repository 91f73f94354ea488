"""`dockmnemo info` refuses a bad run file with one line naming the file and dataset: no traceback, no hang.

Each bad file is a small valid run changed with h5py in one way; a byte-flip fuzz covers what nobody listed."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from app.cli import main
from solver.runfile import RunFile, RunFileError
from tests.runfile_fuzz import problem, run_fuzz

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run3(tmp_path_factory) -> Path:
    """A small valid run: 3 s at 100 Hz (301 frames), written by the real writer."""
    from tests.synthetic_run import make
    return make(tmp_path_factory.mktemp("bad_input") / "valid.h5", duration=3.0, step=0.01)


def bad_copy(run3, tmp_path, name, change) -> Path:
    """A copy of the valid run with `change(h5py.File)` applied."""
    p = tmp_path / f"{name}.h5"
    shutil.copy(run3, p)
    with h5py.File(p, "r+") as f:
        change(f)
    return p


def refused(capsys, path, dataset: str, *words) -> str:
    """`dockmnemo info path` exits 2 with one line `dockmnemo: error: path: dataset: ...` holding `words`."""
    capsys.readouterr()
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dockmnemo: error: {path}: {dataset}: "), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_fifo_is_refused_at_once(tmp_path):
    """A FIFO named like a run blocked `info` forever (the open waited for a writer)."""
    fifo = tmp_path / "run.h5"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "app.cli", "info", str(fifo)], capture_output=True, text=True,
                       timeout=60, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"dockmnemo: error: {fifo}: /: not a regular file (a FIFO, socket or device), "
                                     "not a run file"]
    assert time.perf_counter() - t0 < 60


KILLED_WRITER = """
import os, sys, tomllib
import numpy as np
from solver.runfile import RunMeta, RunWriter
from tests.synthetic_run import BODIES, PAIRS, SCENARIO, channels_spec, geometry
cfg = tomllib.loads(SCENARIO.read_text())
specs = channels_spec(cfg["mechanism"])
w = RunWriter(sys.argv[1], RunMeta(variant="synthetic", output_step=1e-3), specs, BODIES, PAIRS,
              geometry(cfg["geometry"]), live=True)
k, nb, npairs = 300, len(BODIES), len(PAIRS)
q = np.zeros((k, nb, 4))
q[:, :, 0] = 1.0
w.append(np.arange(k) * 1e-3, np.zeros((k, len(specs))), np.zeros((k, nb, 3)), q, np.zeros((k, npairs)),
         np.zeros((k, npairs, 3)), np.zeros((k, npairs, 3)))
w.flush()
os._exit(0)   # killed: the file stays marked as being written (read with SWMR)
"""


def killed_run(path) -> Path:
    """A run whose writer was killed after its first flush (300 frames; read with SWMR, sealed by info)."""
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], check=True, timeout=120, cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return path


def test_corrupt_header_in_a_killed_writers_run_is_refused_at_once(tmp_path):
    """SWMR reading retried a bad metadata checksum 100 times, sleeping 1, 2, 4, ... ns: forever, in effect."""
    p = killed_run(tmp_path / "killed.h5")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with RunFile(p) as r:
        assert r.live and r.n_frames == 300
        with h5py.File(p, "r", swmr=True) as f:
            header = h5py.h5o.get_info(f["channels/Fx"].id).addr
    data = bytearray(p.read_bytes())
    assert data[header:header + 4] == b"OHDR"
    data[header + 12] ^= 0x40        # inside the header: its checksum no longer matches
    p.write_bytes(data)
    r = subprocess.run([sys.executable, "-m", "app.cli", "info", str(p)], capture_output=True, text=True,
                       timeout=60, cwd=ROOT, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"dockmnemo: error: {p}: /channels/Fx: cannot be opened, file corrupt "
                                     "('Unable to synchronously open object (incorrect metadata checksum after all "
                                     "read attempts)')"]


def test_external_link_into_another_file_is_refused(run3, tmp_path, capsys):
    """/parameters taken silently from another HDF5 file: a run file must hold all its data."""
    other = tmp_path / "elsewhere.h5"
    with h5py.File(other, "w") as g:
        g["parameters"] = "mass = 1e9"

    def link(f):
        del f["parameters"]
        f["parameters"] = h5py.ExternalLink(str(other), "/parameters")
    p = bad_copy(run3, tmp_path, "external", link)
    refused(capsys, p, "/parameters", f"external link to {other}:/parameters")


def test_external_link_to_a_system_file_is_refused(run3, tmp_path, capsys):
    def link(f):
        f["geometry/probe/points_ext"] = h5py.ExternalLink("/etc/passwd", "/points")
    p = bad_copy(run3, tmp_path, "external_system", link)
    refused(capsys, p, "/geometry/probe/points_ext", "external link to /etc/passwd:/points")


def test_soft_link_loop_is_refused(run3, tmp_path, capsys):
    """Two soft links naming each other raised RuntimeError (too many links) from the channel listing."""
    def loop(f):
        f["channels/loop_a"] = h5py.SoftLink("/channels/loop_b")
        f["channels/loop_b"] = h5py.SoftLink("/channels/loop_a")
    p = bad_copy(run3, tmp_path, "loop", loop)
    refused(capsys, p, "/channels/loop_a", "soft link to /channels/loop_b leads nowhere or in a loop")


def test_dangling_soft_link_is_refused(run3, tmp_path, capsys):
    """A soft link to nothing was called a group ("expected a dataset, found a group")."""
    p = bad_copy(run3, tmp_path, "dangling", lambda f: f["channels"].__setitem__("Fq", h5py.SoftLink("/nowhere")))
    refused(capsys, p, "/channels/Fq", "soft link to /nowhere leads nowhere or in a loop")


def test_time_declaring_1e15_frames_is_refused(run3, tmp_path, capsys):
    """A resized /time of 1e15 frames raised MemoryError (7 PiB) from the read."""
    p = bad_copy(run3, tmp_path, "huge_time", lambda f: f["time"].resize(10**15, axis=0))
    refused(capsys, p, "/time", "declares shape (1000000000000000,)", "more than a", "file can hold")


def test_events_declaring_1e13_rows_are_refused(run3, tmp_path, capsys):
    p = bad_copy(run3, tmp_path, "huge_events", lambda f: f["events"].resize(10**13, axis=0))
    refused(capsys, p, "/events", "declares shape (10000000000000,)")


def test_time_declaring_more_than_it_stores_is_refused(run3, tmp_path, capsys):
    """10 million frames declared on the bytes of 301: refused before 80 MB of fill values are read."""
    p = bad_copy(run3, tmp_path, "long_time", lambda f: f["time"].resize(10**7, axis=0))
    refused(capsys, p, "/time", "declares shape (10000000,)", "but stores", "more than compression can expand")


@pytest.mark.parametrize("value, shown", [("yes", "'yes'"), (2, "2"), (0.5, "0.5")])
def test_complete_must_be_a_boolean(run3, tmp_path, capsys, value, shown):
    p = bad_copy(run3, tmp_path, "complete", lambda f: f.attrs.__setitem__("complete", value))
    refused(capsys, p, "/@complete", f"must be true or false (or 1 or 0), found {shown}")


@pytest.mark.parametrize("value, shown", [(1.5, "1.5"), ("1", "'1'"), (1.0, "1.0")])
def test_format_version_must_be_an_integer(run3, tmp_path, capsys, value, shown):
    p = bad_copy(run3, tmp_path, "version", lambda f: f.attrs.__setitem__("format_version", value))
    refused(capsys, p, "/@format_version", f"must be an integer, found {shown}")


def test_integer_time_is_refused(run3, tmp_path, capsys):
    def to_int(f):
        t = f["time"][()]
        del f["time"]
        f.create_dataset("time", data=np.arange(len(t)), maxshape=(None,), chunks=(4096,))
    p = bad_copy(run3, tmp_path, "int_time", to_int)
    refused(capsys, p, "/time", "wrong dtype int64, expected float")


def test_output_step_that_is_not_a_number_is_refused(run3, tmp_path, capsys):
    p = bad_copy(run3, tmp_path, "output_step", lambda f: f.attrs.__setitem__("output_step", "fast"))
    refused(capsys, p, "/@output_step", "must be a number, found 'fast'")


def test_unsorted_events_are_refused(run3, tmp_path, capsys):
    def swap(f):
        ev = f["events"][()]
        assert len(ev) >= 2 and ev["time"][0] < ev["time"][1]
        ev[[0, 1]] = ev[[1, 0]]
        f["events"][:] = ev
    p = bad_copy(run3, tmp_path, "unsorted", swap)
    refused(capsys, p, "/events", "not sorted by time at row 1")


def test_unknown_event_kind_is_refused(run3, tmp_path, capsys):
    def rename(f):
        ev = f["events"][()].astype(f["events"].dtype)
        ev["kind"][0] = "explosion"
        f["events"][:] = ev
    p = bad_copy(run3, tmp_path, "kind", rename)
    refused(capsys, p, "/events", "row 0: unknown event kind 'explosion'", "expected one of first_contact")


def test_file_with_a_user_block_is_read(run3, tmp_path, capsys):
    """HDF5 finds its signature after a user block (at 512, 1024, 2048, ...): not a "bad signature"."""
    p = tmp_path / "user_block.h5"
    with h5py.File(run3, "r") as src, h5py.File(p, "w", userblock_size=1024, libver="latest") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        for k in src:
            src.copy(src[k], dst, name=k)
    with open(p, "r+b") as fh:
        fh.write(b"written by a test rig\n")
    capsys.readouterr()
    assert main(["info", str(p)]) == 0, capsys.readouterr().err
    assert "frames" in capsys.readouterr().out
    with RunFile(p) as r, RunFile(run3) as good:
        np.testing.assert_array_equal(r.channel("Fx"), good.channel("Fx"))


def test_every_read_of_a_closed_run_is_a_run_file_error(run3):
    """Lazy reads go through one guard: a failing HDF5 read is RunFileError naming the dataset, never RuntimeError."""
    r = RunFile(run3)
    pair = next(iter(r.contact_pairs))
    r.close()
    reads = {"/channels/Fx": lambda: r.channel("Fx"), "/channels/Fy": lambda: r.channel_at("Fy", 3),
             "/bodies/position": lambda: r.poses(5), f"/contacts/{pair}/active": lambda: r.contact_state(3),
             f"/contacts/{pair}/force": lambda: r.contact_force(pair)}
    for dataset, read in reads.items():
        with pytest.raises(RunFileError) as ei:
            read()
        assert str(ei.value) == f"{run3}: {dataset}: cannot be read: the run file was closed"


@pytest.mark.slow
def test_byte_flip_fuzz_gives_a_summary_or_one_line(run3):
    """250 seeded byte flips (mostly in headers, B-trees and heaps): `dockmnemo info` exits 0, or 2 with one line
    naming the file; no traceback, no flip read longer than 10 s. The old reader gave ~3 % RuntimeError tracebacks."""
    results = run_fuzz(run3, n=250, seed=21, timeout=10.0)
    broken = [f"flip {r['i']} at byte {r['offset']} ^ {r['mask']:#04x}: {why}"
              for r in results if (why := problem(r, r.get("path", "")))]
    assert not broken, f"{len(broken)} of {len(results)} flips broke the rules:\n" + "\n".join(broken[:20])
    refusals = sum(r.get("rc") == 2 for r in results)
    assert 50 < refusals < len(results)   # the flips reach the file's structure, and some leave it readable


@pytest.mark.slow
def test_byte_flip_fuzz_of_a_killed_writers_run(tmp_path):
    """150 flips of a run left by a killed writer (info reads it with SWMR and seals it): the same rules. The old
    reader waited without end on a bad checksum, and sealing escaped as RuntimeError (copy object)."""
    results = run_fuzz(killed_run(tmp_path / "killed.h5"), n=150, seed=7, timeout=10.0)
    broken = [f"flip {r['i']} at byte {r['offset']} ^ {r['mask']:#04x}: {why}"
              for r in results if (why := problem(r, r.get("path", "")))]
    assert not broken, f"{len(broken)} of {len(results)} flips broke the rules:\n" + "\n".join(broken[:20])
