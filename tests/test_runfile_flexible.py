"""Flexible parts in the run file (/flexible/<part>): written by RunWriter, read back by RunFile, refused when bad."""
import shutil

import h5py
import numpy as np
import pytest

from solver.runfile import ChannelInfo, FlexiblePart, RunFile, RunFileError, RunMeta, RunWriter

N, P = 23, 5


def _points(t):
    """A bending line per frame: P points along x, deflected in y by t (exactly representable in f4 here)."""
    s = np.linspace(0.0, 2.0, P)
    return np.stack([np.stack([s, t * s * s / 8.0, np.zeros(P)], 1) for t in t]).astype("f4")


def _write(path, flexible=True):
    parts = [FlexiblePart("rod1", "craft", P, np.array([[i, i + 1] for i in range(P - 1)]), "rod", "rod 1"),
             FlexiblePart("rod2", "craft", 2, np.array([[0, 1]]), "cable")] if flexible else []
    w = RunWriter(path, RunMeta(comment="flex", variant="synthetic", output_step=0.25),
                  [ChannelInfo("phi1", "deg", "rod 1 angle", "mechanism")], ["craft"], [], [],
                  parameters_toml="x = 1\n", chunk=8, background=False, flexible=parts)
    t = np.arange(N) * 0.25
    for a, b in ((0, 5), (5, 19), (19, N)):
        k = b - a
        flex = {"rod1": _points(t[a:b]), "rod2": np.ones((k, 2, 3)) * t[a:b, None, None]} if flexible else None
        w.append(t[a:b], t[a:b, None], np.zeros((k, 1, 3)), np.tile([1.0, 0, 0, 0], (k, 1, 1)), flexible=flex)
    w.finish()
    return t


@pytest.fixture(scope="module")
def flex_run(tmp_path_factory):
    p = tmp_path_factory.mktemp("flex") / "flex.h5"
    return p, _write(p)


def test_flexible_parts_round_trip(flex_run):
    p, t = flex_run
    with RunFile(p) as r:
        parts = {fp.name: fp for fp in r.flexible_parts}
        assert list(parts) == ["rod1", "rod2"]
        assert parts["rod1"].body == "craft" and parts["rod1"].kind == "rod" and parts["rod1"].label == "rod 1"
        assert parts["rod2"].kind == "cable" and parts["rod2"].label == "rod2" and parts["rod2"].n_points == 2
        np.testing.assert_array_equal(parts["rod1"].lines, [[0, 1], [1, 2], [2, 3], [3, 4]])
        for frame in (0, 4, 5, 7, 8, 18, 22, -1):   # across the writer's blocks and the 8-frame chunks
            np.testing.assert_array_equal(r.flexible_points("rod1", frame), _points(t[[frame]])[0])
            assert r.flexible_points("rod2", frame).shape == (2, 3)
            assert r.flexible_points("rod2", frame)[1, 2] == t[frame]
        r.check_data()
        assert "flexible rod1, rod2" in r.summary()
        with pytest.raises(KeyError, match="no flexible part 'rod3'"):
            r.flexible_points("rod3", 0)
    with h5py.File(p) as f:
        d = f["flexible/rod1/points"]
        assert d.dtype == np.float32 and d.shape == (N, P, 3) and d.chunks == (8, P, 3) and d.compression == "lzf"
        assert f["flexible/rod1/lines"].dtype == np.int32 and f["flexible/rod1"].attrs["body"] == "craft"


def test_a_file_without_flexible_parts_reads_as_before(tmp_path):
    p = tmp_path / "plain.h5"
    _write(p, flexible=False)
    with h5py.File(p) as f:
        assert "flexible" not in f
    with RunFile(p) as r:
        assert r.flexible_parts == [] and "; flexible" not in r.summary()


def _mutated(src, dst, fn):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        fn(f)
    return dst


def _bad_index(f):
    lines = f["flexible/rod1/lines"][()]
    lines[2, 1] = P
    f["flexible/rod1/lines"][...] = lines


def _nan_point(f):
    d = f["flexible/rod1/points"]
    d[11, 3, 1] = np.nan


def test_bad_line_index_is_refused_at_open(flex_run, tmp_path):
    p = _mutated(flex_run[0], tmp_path / "bad.h5", _bad_index)
    with pytest.raises(RunFileError, match=r"/flexible/rod1/lines: index out of range 0\.\.4"):
        RunFile(p)


def test_wrong_points_shape_and_unknown_body_are_refused(flex_run, tmp_path):
    def short(f):
        del f["flexible/rod2/points"]
        f.create_dataset("flexible/rod2/points", data=np.zeros((N - 1, 2, 3), "f4"))
    with pytest.raises(RunFileError, match=r"/flexible/rod2/points: wrong shape \(22, 2, 3\), expected \(23, P, 3\)"):
        RunFile(_mutated(flex_run[0], tmp_path / "short.h5", short))

    def body(f):
        f["flexible/rod2"].attrs["body"] = "boom"
    with pytest.raises(RunFileError, match=r"/flexible/rod2@body: names body 'boom'"):
        RunFile(_mutated(flex_run[0], tmp_path / "body.h5", body))


def test_non_finite_point_is_refused_when_read_and_by_info(flex_run, tmp_path):
    p = _mutated(flex_run[0], tmp_path / "nan.h5", _nan_point)
    with RunFile(p) as r:
        np.testing.assert_array_equal(r.flexible_points("rod1", 2), _points(flex_run[1][[2]])[0])   # another chunk
        with pytest.raises(RunFileError, match="/flexible/rod1/points: NaN or inf at frame 11"):
            r.flexible_points("rod1", 9)
        with pytest.raises(RunFileError, match="/flexible/rod1/points: NaN or inf at frame 11"):
            r.check_data()
    from tests.cli_here import cli_here
    out = cli_here("info", p)                  # `dockmnemo info`, in this process
    assert out.returncode != 0 and "/flexible/rod1/points: NaN or inf at frame 11" in out.stderr + out.stdout


def test_writer_refuses_bad_flexible_input(tmp_path):
    with pytest.raises(ValueError, match="flexible part rod1: line indices must lie in 0..1"):
        RunWriter(tmp_path / "w.h5", RunMeta(variant="synthetic"), [], ["craft"], [], [], background=False,
                  flexible=[FlexiblePart("rod1", "craft", 2, np.array([[0, 2]]))])
    w = RunWriter(tmp_path / "w2.h5", RunMeta(variant="synthetic"), [], ["craft"], [], [], background=False,
                  flexible=[FlexiblePart("rod1", "craft", 2, np.array([[0, 1]]))])
    with pytest.raises(ValueError, match="no points given for flexible part 'rod1'"):
        w.append([0.0], np.zeros((1, 0)), np.zeros((1, 1, 3)), np.tile([1.0, 0, 0, 0], (1, 1, 1)))
    w.discard()
