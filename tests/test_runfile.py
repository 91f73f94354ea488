"""Run-file v1: round trip on good files and one specific message per malformed file."""
import math
import shutil

import h5py
import numpy as np
import pytest

from solver.runfile import (FORMAT_VERSION, ChannelInfo, ContactPairInfo, PartGeometry, RunFile,
                            RunFileError, RunMeta, RunWriter)


def test_synthetic_run_reads_back(small_run):
    with RunFile(small_run) as r:
        assert r.format_version == FORMAT_VERSION
        assert r.meta.variant == "synthetic"
        assert r.n_frames == 601
        assert r.time[0] == 0.0 and math.isclose(r.time[-1], 6.0)
        assert 0.3 < r.t_capture < 3.0
        assert {"kinematics", "base_loads", "axial_damper", "lateral_damper"} <= set(r.groups())
        assert "head_cone" in r.contact_pairs and r.contact_pairs["head_cone"].part_a == "probe_head"
        assert "receiving_cone" in r.geometry and r.geometry["receiving_cone"].body == "passive_craft"
        kinds = [e.kind for e in r.events]
        assert kinds.count("capture") == 1 and "first_contact" in kinds
        assert [e.time for e in r.events] == sorted(e.time for e in r.events)
        assert "[approach]" in r.parameters_toml


def test_frames_and_windows_are_consistent(small_run):
    with RunFile(small_run) as r:
        full = r.channel("head_x")
        assert full.shape == (r.n_frames,)
        np.testing.assert_array_equal(r.channel("head_x", 100, 200), full[100:200])
        assert r.channel_at("head_x", 250) == full[250]
        i = r.frame_at(2.345)
        assert r.time[i] <= 2.345 < r.time[i + 1]
        assert r.frame_at(-5) == 0 and r.frame_at(1e9) == r.n_frames - 1
        pos, q = r.poses(300)
        k = r.bodies.index("probe_head")
        assert np.allclose(pos[k], [r.channel_at(f"head_{a}", 300) for a in "xyz"])
        assert np.allclose(np.linalg.norm(q, axis=1), 1.0)
        state = r.contact_state(0)
        assert set(state) == set(r.contact_pairs)
        active = r.contact_active("head_cone")
        assert active.any() and not active.all()


def test_datasets_are_chunked_along_time_and_compressed(small_run):
    with h5py.File(small_run) as f:
        for name in ("time", "channels/Fx", "bodies/position", "contacts/head_cone/force"):
            d = f[name]
            assert d.chunks is not None and d.compression == "lzf" and d.shuffle, name   # lzf: bundled with h5py


def test_writer_roundtrip_exact_values(tmp_path):
    p = tmp_path / "exact.h5"
    chans = [ChannelInfo("Fx", "N", "force x", "base_loads"), ChannelInfo("XLimD", "m", "limiter spring", "axial_damper", 0.05)]
    parts = [PartGeometry("receiving_cone", "passive_craft", np.zeros((2, 3)), np.array([[0, 1]]), "cone"),
             PartGeometry("probe_head", "active_craft", np.zeros((2, 3)), np.array([[0, 1]]))]   # the pair's parts
    w = RunWriter(p, RunMeta(comment="exact", variant="movable_limiter", output_step=0.5), chans,
                  ["passive_craft", "active_craft"], [ContactPairInfo("head_cone", "probe_head", "receiving_cone")], parts,
                  parameters_toml="x = 1\n", chunk=4)
    t = np.arange(10) * 0.5
    data = np.stack([t * 3, -t], 1)
    pos = np.random.default_rng(1).normal(size=(10, 2, 3))
    q = np.tile([1.0, 0, 0, 0], (10, 2, 1))
    for a in (0, 3, 7):
        b = {0: 3, 3: 7, 7: 10}[a]
        w.append(t[a:b], data[a:b], pos[a:b], q[a:b], np.ones((b - a, 1)), np.ones((b - a, 1, 3)) * 2, np.zeros((b - a, 1, 3)))
    w.add_event(4.0, "capture", "head_cone", "late")
    w.add_event(1.0, "first_contact", "head_cone", "early")
    w.finish(t_capture=4.0)
    with RunFile(p) as r:
        np.testing.assert_array_equal(r.time, t)
        np.testing.assert_array_equal(r.channel("Fx"), t * 3)
        np.testing.assert_array_equal(r.poses(8)[0], pos[8])
        assert r.channels["XLimD"].stroke == 0.05
        assert r.t_final == 4.5 and r.t_capture == 4.0 and r.meta.complete
        assert [e.text for e in r.events] == ["early", "late"]
        assert r.parameters_toml == "x = 1\n"


def _mutate(src, dst, fn):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        fn(f)
    return dst


def _replace(f, name, data):
    attrs = dict(f[name].attrs)
    del f[name]
    d = f.create_dataset(name, data=data)
    for k, v in attrs.items():
        d.attrs[k] = v


def _nan_time(f):
    t = f["time"][()]
    t[7] = np.nan
    f["time"][:] = t


def _non_increasing(f):
    t = f["time"][()]
    t[20] = t[19]
    f["time"][:] = t


def _nan_position(f):
    p = f["bodies/position"][()]
    p[42, 1, 0] = np.inf
    f["bodies/position"][:] = p


def _bad_line(f):
    lines = f["geometry/receiving_cone/lines"][()]
    lines[0, 1] = 99999
    _replace(f, "geometry/receiving_cone/lines", lines)


MALFORMED = {
    "format_name": (lambda f: f.attrs.__setitem__("format", "something-else"), "/@format: expected 'dockmnemo-run'"),
    "unknown_version": (lambda f: f.attrs.__setitem__("format_version", 99), "/@format_version: unknown format version 99"),
    "missing_version": (lambda f: f.attrs.__delitem__("format_version"), "/@format_version: missing"),
    "unknown_variant": (lambda f: f.attrs.__setitem__("variant", "apas"), "/@variant: unknown mechanism variant 'apas'"),
    "bad_output_step": (lambda f: f.attrs.__setitem__("output_step", -1.0), "/@output_step: must be a positive number"),
    "missing_time": (lambda f: f.__delitem__("time"), "/time: missing"),
    "time_2d": (lambda f: _replace(f, "time", np.zeros((601, 2))), "/time: wrong shape (601, 2)"),
    "nan_time": (_nan_time, "/time: NaN or inf at frame 7"),
    "time_not_increasing": (_non_increasing, "/time: time not increasing at frame 20"),
    "channel_shape": (lambda f: _replace(f, "channels/Fx", np.zeros(5)), "/channels/Fx: wrong shape (5,), expected (601,)"),
    "channel_dtype": (lambda f: _replace(f, "channels/Fy", np.zeros(601, dtype="i4")), "/channels/Fy: wrong dtype int32"),
    "channel_group": (lambda f: f["channels/Fz"].attrs.__setitem__("group", "misc"), "/channels/Fz: attribute group is 'misc'"),
    "missing_bodies_names": (lambda f: f.__delitem__("bodies/names"), "/bodies/names: missing"),
    "quaternion_shape": (lambda f: _replace(f, "bodies/quaternion", np.zeros((601, 6, 3))), "/bodies/quaternion: wrong shape (601, 6, 3), expected (601, 6, 4)"),
    "missing_contacts": (lambda f: f.__delitem__("contacts"), "/contacts: missing"),
    "contact_force_shape": (lambda f: _replace(f, "contacts/head_cone/force", np.zeros((601, 2))), "/contacts/head_cone/force: wrong shape (601, 2), expected (601, 3)"),
    "geometry_line_index": (_bad_line, "/geometry/receiving_cone/lines: index out of range"),
    "geometry_body": (lambda f: f["geometry/probe"].attrs.__setitem__("body", "moon"), "/geometry/probe@body: names body 'moon'"),
    "visible_channel": (lambda f: f["geometry/latches"].attrs.__setitem__("visible_channel", "nope"), "/geometry/latches@visible_channel: names channel 'nope'"),
    "events_dtype": (lambda f: _replace(f, "events", np.zeros(3)), "/events: wrong dtype"),
    "missing_parameters": (lambda f: f.__delitem__("parameters"), "/parameters: missing"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_gives_specific_message(small_run, tmp_path, case):
    fn, expected = MALFORMED[case]
    p = _mutate(small_run, tmp_path / f"{case}.h5", fn)
    with pytest.raises(RunFileError) as ei:
        RunFile(p)
    msg = str(ei.value)
    assert msg.startswith(str(p)), msg
    assert expected in msg, msg


def test_nan_pose_is_reported_when_its_block_is_read(small_run, tmp_path):
    """Poses are checked per time chunk as frames are read (not all at open), with the same message."""
    p = _mutate(small_run, tmp_path / "nan_position.h5", _nan_position)
    with RunFile(p) as r:
        for f in (0, 41, 42, r.n_frames - 1):
            with pytest.raises(RunFileError) as ei:
                r.poses(f)             # the small run is one chunk: any frame of it reads frame 42 too
            assert str(ei.value) == f"{p}: /bodies/position: NaN or inf at frame 42"
        with pytest.raises(RunFileError, match=r"/bodies/position: NaN or inf at frame 42"):
            r.check_poses()


def test_poses_are_read_per_block(tmp_path):
    """Frames in different chunks come from their own block; a NaN in a later chunk leaves earlier ones readable."""
    p = tmp_path / "blocks.h5"
    n, chunk = 50, 16
    w = RunWriter(p, RunMeta(variant="existing"), [], ["passive_craft", "probe"], [], [], chunk=chunk)
    pos = np.random.default_rng(3).normal(size=(n, 2, 3))
    q = np.tile([1.0, 0, 0, 0], (n, 2, 1))
    q[37, 1, 2] = np.nan
    w.append(np.arange(n) * 0.01, np.zeros((n, 0)), pos, q)
    w.finish()
    with RunFile(p) as r:
        for f in (0, 15, 16, 31, -50):
            np.testing.assert_array_equal(r.poses(f)[0], pos[f])
        with pytest.raises(RunFileError, match=r"blocks\.h5: /bodies/quaternion: NaN or inf at frame 37"):
            r.poses(40)
        np.testing.assert_array_equal(r.poses(5)[0], pos[5])
        with pytest.raises(IndexError):
            r.poses(n)


def test_not_hdf5(tmp_path):
    p = tmp_path / "notes.h5"
    p.write_text("this is a text file, not a run")
    with pytest.raises(RunFileError, match=r"notes\.h5: /: not an HDF5 file"):
        RunFile(p)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(RunFileError, match="file does not exist"):
        RunFile(tmp_path / "nowhere.h5")
    with pytest.raises(RunFileError, match="is a directory"):
        RunFile(tmp_path)


@pytest.mark.parametrize("keep", [0.05, 0.5, 0.9])
def test_truncated_file(small_run, tmp_path, keep):
    data = small_run.read_bytes()
    p = tmp_path / f"trunc{keep}.h5"
    p.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(RunFileError, match=r"trunc.*\.h5: /.*(truncated|corrupt|cannot be read)"):
        r = RunFile(p)
        for name in r.channels:          # a file cut after its metadata fails on reading data
            r.channel(name)



def test_optional_contact_detail_roundtrip(tmp_path):
    p = tmp_path / "detail.h5"
    pairs = [ContactPairInfo("head_cone", "probe_head", "receiving_cone")]
    w = RunWriter(p, RunMeta(variant="existing"), [], ["passive_craft"], pairs, [], contact_detail=True)
    k = 5
    n = np.tile([0.0, 0.0, 1.0], (k, 1, 1))
    w.append(np.arange(k) * 0.1, np.zeros((k, 0)), np.zeros((k, 1, 3)), np.tile([1.0, 0, 0, 0], (k, 1, 1)),
             np.ones((k, 1)), np.zeros((k, 1, 3)), np.zeros((k, 1, 3)), normal=n,
             depth=np.full((k, 1), 1e-4), normal_speed=np.linspace(0.1, 0, k)[:, None])
    w.finish()
    with RunFile(p) as r:
        d = r.contact_detail("head_cone", 1, 3)
        np.testing.assert_array_equal(d["normal"], n[1:3, 0])
        np.testing.assert_allclose(d["normal_speed"], [0.075, 0.05])
    with h5py.File(p, "r+") as f:
        _replace(f, "contacts/head_cone/depth", np.zeros(3))
    with pytest.raises(RunFileError, match=r"/contacts/head_cone/depth: wrong shape \(3,\), expected \(5,\)"):
        RunFile(p)


def test_buffered_chunks_flush_and_zero_chunks_read_back(tmp_path):
    """Frames cross chunk boundaries in odd blocks, a flush lands mid-chunk, and a pair that never touches
    in a whole chunk is not stored there but reads back as zeros / inactive."""
    p = tmp_path / "chunks.h5"
    pairs = [ContactPairInfo("head_cone", "probe_head", "receiving_cone"),
             ContactPairInfo("latch_stop_1", "latches", "socket")]
    w = RunWriter(p, RunMeta(variant="existing"), [ChannelInfo("Fx", "N", "force x", "base_loads")],
                  ["passive_craft"], pairs, [], chunk=8, contact_detail=True)
    n = 29
    rng = np.random.default_rng(3)
    t = np.arange(n) * 0.1
    fx = rng.normal(size=(n, 1))
    act = np.zeros((n, 2), "u1")
    act[20:23, 1] = 1                                 # pair 0 never active; pair 1 only in the third chunk
    force = rng.normal(size=(n, 2, 3)) * act[:, :, None]
    point = rng.normal(size=(n, 2, 3)) * act[:, :, None]
    normal = np.zeros((n, 2, 3))
    normal[act == 1] = [0.0, 0.0, 1.0]
    depth = rng.uniform(size=(n, 2)) * act
    speed = rng.normal(size=(n, 2)) * act
    pos = rng.normal(size=(n, 1, 3))
    q = np.tile([1.0, 0, 0, 0], (n, 1, 1))
    for a, b in ((0, 5), (5, 6), (6, 19), (19, 29)):
        w.append(t[a:b], fx[a:b], pos[a:b], q[a:b], act[a:b], force[a:b], point[a:b], normal[a:b], depth[a:b],
                 speed[a:b])
        if b == 6:
            w.flush()                                 # a partial chunk written, then completed later
    w.finish()
    with h5py.File(p) as f:
        assert f["contacts/head_cone/force"].id.get_num_chunks() == 0
        assert f["contacts/latch_stop_1/force"].id.get_num_chunks() == 1
        assert f["channels/Fx"].id.get_num_chunks() == 4
    with RunFile(p) as r:
        assert r.n_frames == n and r.t_final == t[-1]
        np.testing.assert_array_equal(r.time, t)
        np.testing.assert_array_equal(r.channel("Fx"), fx[:, 0])
        np.testing.assert_array_equal(r.poses(17)[0], pos[17])
        for j, name in enumerate(("head_cone", "latch_stop_1")):
            np.testing.assert_array_equal(r.contact_active(name), act[:, j].astype(bool))
            np.testing.assert_array_equal(r.contact_force(name), force[:, j])
            d = r.contact_detail(name)
            np.testing.assert_array_equal(d["normal"], normal[:, j])
            np.testing.assert_array_equal(d["depth"], depth[:, j])
            np.testing.assert_array_equal(d["normal_speed"], speed[:, j])
            np.testing.assert_array_equal(r.contact_state(21)[name][2], point[21, j])


def test_channel_attributes_of_other_storage_types_read_the_same(small_run, tmp_path):
    """Channel attributes written as fixed-length bytes, a float32 or an integer (other writers) read as the
    strings and floats the fast scalar path gives for RunWriter's files."""
    def retype(f):
        a = f["channels/Fz"].attrs
        a.create("unit", np.bytes_("N"), dtype="S1")
        a.create("group", np.bytes_("base_loads"), dtype="S10")
        a["stroke"] = np.float32(7.5)
        a["place"] = np.int32(90)
    p = _mutate(small_run, tmp_path / "retyped.h5", retype)
    with RunFile(small_run) as a, RunFile(p) as b:
        assert a.channels["Fz"].unit == b.channels["Fz"].unit == "N"
        assert b.channels["Fz"].group == "base_loads" and b.channels["Fz"].label == a.channels["Fz"].label
        assert b.channels["Fz"].stroke == 7.5 and b.channels["Fz"].place == 90.0
        assert [repr(v) for k, v in b.channels.items() if k != "Fz"] == [repr(v) for k, v in a.channels.items() if k != "Fz"]


def test_writer_stores_each_channels_abs_max_and_the_reader_trusts_it_only_when_present(small_run, tmp_path):
    """max |value| (NaN ignored) per channel, as attribute abs_max at finish; absent (another writer): NaN."""
    with RunFile(small_run) as r:
        for name in r.channels:
            data = r.channel(name)
            want = float(np.nanmax(np.abs(data))) if np.isfinite(data).any() else 0.0
            assert r.stored_abs_max(name) == want, name
        assert math.isnan(r.stored_abs_max("no_such_channel"))
    p = _mutate(small_run, tmp_path / "no_abs_max.h5", lambda f: f["channels/Fx"].attrs.__delitem__("abs_max"))
    with RunFile(p) as r:
        assert math.isnan(r.stored_abs_max("Fx")) and r.stored_abs_max("Fy") >= 0
