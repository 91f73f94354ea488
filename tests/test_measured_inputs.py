"""Measured records and channel maps that gave wrong answers with exit 0, or a traceback, on the old main (issue 31):
each is now refused with `file: key: problem`, warned about, or read as meant."""
from __future__ import annotations

import contextlib
import io
import math
import re
import tracemalloc
from pathlib import Path

import h5py
import numpy as np
import pytest

from app.cli import main
from solver.measured import load_map, read_record
from solver.measured.record import MeasuredError
from tests.measured_truth import EXAMPLE_MAP, write_measured_csv

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "sample_runs" / "central_impact_20t.h5"
MAP_TEXT = EXAMPLE_MAP.read_text()


def validate(run, record, map_path) -> tuple[int, str, str]:
    """`dockmnemo validate` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["validate", str(run), str(record), "--map", str(map_path)])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def stand(tmp_path_factory) -> Path:
    """The sample run's base loads and stroke as a stand records them (example map: ms, lbf, lbf*in, mm), 100 Hz."""
    return write_measured_csv(RUN, tmp_path_factory.mktemp("stand") / "stand.csv", shift=0.137, rate=100.0)


def a_map(tmp_path, old, new) -> Path:
    assert old in MAP_TEXT, old
    p = tmp_path / "map.toml"
    p.write_text(MAP_TEXT.replace(old, new))
    return p


def refused(rc, err, path, key, *words):
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"dockmnemo: error: {path}: {key}: "), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    assert "np.float64" not in lines[0]


def test_the_example_map_and_record_validate(stand, tmp_path):
    rc, out, err = validate(RUN, stand, EXAMPLE_MAP)
    assert rc == 0 and not err and "warning" not in out
    assert re.search(r"^Fx rms [\d.]+ N peak [\d.]+ N r (0\.9\d+|1\.0000)$", out, re.M), out


@pytest.mark.parametrize("old, new, key, words", [
    ('column = "stroke_mm"', 'column = "LC_Fx"', "sensor[0].columns",
     "column 'LC_Fx' is already used by channel[0].column"),                       # one column, two run channels
    ('"LC_Fx", "LC_Fy"', '"LC_Fx", "LC_Fx"', "sensor[0].columns",
     "column 'LC_Fx' is already used by sensor[0].columns"),                       # old main: Fy r 0.4174
    ('column = "stroke_mm"', 'column = "time_ms"', "channel[0].column", "already used by time.column"),
    ('origin_unit = "mm"', 'origin_unit = "m"', "sensor[0].origin", "140 m from the mechanism base (origin_unit 'm')"),
    ("origin = [120.0, 40.0, -60.0]", "origin = [1e300, 0.0, 0.0]", "sensor[0].origin", "1e+297 m"),  # My rms inf
])
def test_bad_map_is_refused_naming_its_key(stand, tmp_path, old, new, key, words):
    p = a_map(tmp_path, old, new)
    rc, out, err = validate(RUN, stand, p)
    refused(rc, err, p, key, words)


def test_time_unit_far_outside_the_records_scale_is_refused(stand, tmp_path):
    """Years for milliseconds: the old main aligned it anyway (offset 2.4e10 s) and printed metrics."""
    p = a_map(tmp_path, 'unit = "ms"', 'unit = "year"')
    rc, out, err = validate(RUN, stand, p)
    refused(rc, err, p, "time.unit", "'year' makes the record's samples 3.16e+08 s apart", "is the unit")
    p = a_map(tmp_path, 'unit = "ms"', 'unit = "us"')   # 100 Hz record read as 100 kHz: 1e-5 s apart is the edge
    rc, out, err = validate(RUN, stand, p)
    assert rc == 0 or "time.unit" in err


def test_euler_angles_in_radians_are_warned_about(stand, tmp_path):
    """The example's angles written in radians (old main: r -0.0176 and no word about it)."""
    rad = ", ".join(f"{math.radians(a):.6f}" for a in (30.0, -15.0, 90.0))
    p = a_map(tmp_path, "euler_deg = [30.0, -15.0, 90.0]", f"euler_deg = [{rad}]")
    rc, out, err = validate(RUN, stand, p)
    assert rc == 0, err
    assert out.splitlines()[0] == (f"warning: {p}: sensor[0].euler_deg: [0.523599, -0.261799, 1.570796] look like "
                                   "radians ([30.0, -15.0, 90.0] deg if they are): the angles are read as degrees")
    assert not load_map(EXAMPLE_MAP).warnings   # degrees: no warning
    for ang in ("[1.5, 0.0, 0.0]", "[0.0, 0.0, 3.0]", "[90.0, 0.0, 0.0]"):   # small or whole tilts in degrees
        assert not load_map(a_map(tmp_path, "[30.0, -15.0, 90.0]", ang)).warnings, ang


def test_csv_with_a_bom_reads_its_first_column(stand, tmp_path):
    """Excel's UTF-8 CSV starts with a BOM: old main said `did you mean \ufefftime_ms?` (looks identical)."""
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + stand.read_bytes())
    assert list(read_record(p).columns)[0] == "time_ms"
    rc, out, err = validate(RUN, p, EXAMPLE_MAP)
    assert rc == 0 and out == validate(RUN, stand, EXAMPLE_MAP)[1].replace(str(stand), str(p))


def test_duplicate_time_stamps_are_said_in_seconds(stand, tmp_path):
    lines = stand.read_text().splitlines()
    p = tmp_path / "dup.csv"
    p.write_text("\n".join(lines[:6] + [lines[5]] + lines[6:]) + "\n")
    rc, out, err = validate(RUN, p, EXAMPLE_MAP)
    refused(rc, err, p, "time_ms", "time must increase strictly: sample 5 (0.04 s) is the same time stamp as "
                                   "sample 4 (0.04 s)")


def _h5_record(path, cols, **datasets):
    with h5py.File(path, "w") as f:
        for k, v in cols.items():
            f[k] = v
        for k, make in datasets.items():
            make(f, k)
    return path


@pytest.fixture(scope="module")
def stand_cols(stand):
    rec = read_record(stand)
    return {k: np.asarray(rec.columns[k]) for k in rec.columns}


def test_2d_dataset_is_named_as_such(stand_cols, tmp_path):
    cols = dict(stand_cols)
    fx = cols.pop("LC_Fx")
    p = _h5_record(tmp_path / "rec.h5", cols, LC_Fx=lambda f, k: f.create_dataset(k, data=np.column_stack([fx, fx])))
    rc, out, err = validate(RUN, p, EXAMPLE_MAP)
    refused(rc, err, EXAMPLE_MAP, "sensor[0].columns", f"'LC_Fx' in {p} is a 2-D dataset of shape ({len(fx)}, 2), "
                                                       "not a column")


def test_dataset_declaring_7_tib_is_refused_before_a_read(stand_cols, tmp_path):
    """Old main: a traceback (numpy's _ArrayMemoryError) from `validate`."""
    cols = dict(stand_cols)
    del cols["LC_Fx"]
    p = _h5_record(tmp_path / "huge.h5", cols,
                   LC_Fx=lambda f, k: f.create_dataset(k, shape=(7 << 37,), dtype="f8", chunks=(4096,)))
    rc, out, err = validate(RUN, p, EXAMPLE_MAP)
    refused(rc, err, p, "LC_Fx", "declares shape (962072674304,) (7,696,581,394,432 bytes)", "corrupt")


def test_hdf5_columns_the_map_does_not_name_are_not_read(stand_cols, tmp_path):
    """A record with a 64 MB dataset the map does not use: reading and converting it allocates only the columns
    used."""
    from solver.measured.channel_map import convert
    p = _h5_record(tmp_path / "big_other.h5", stand_cols,
                   camera=lambda f, k: f.create_dataset(k, data=np.ones(8 << 20)))
    tracemalloc.start()
    try:
        rec = read_record(p)
        convert(load_map(EXAMPLE_MAP), rec, {"Fx": "N", "Fy": "N", "Fz": "N", "Mx": "N*m", "My": "N*m",
                                              "Mz": "N*m", "probe_stroke": "m"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "camera" in rec.columns and peak < 20e6, peak


def test_large_csv_is_read_in_memory_near_its_array(tmp_path):
    """50 000 rows x 8 columns (3.2 MB of numbers): the old main's lists of floats peaked at ~11x the array."""
    n = 50_000
    a = np.column_stack([np.arange(n) * 1.0, np.random.default_rng(1).normal(size=(n, 7))])
    p = tmp_path / "big.csv"
    np.savetxt(p, a, delimiter=",", header="time_ms,LC_Fx,LC_Fy,LC_Fz,LC_Mx,LC_My,LC_Mz,stroke_mm", comments="",
               fmt="%.6f")
    tracemalloc.start()
    try:
        rec = read_record(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * a.nbytes, peak
    np.testing.assert_allclose(rec.columns["LC_Mz"], a[:, 6], atol=5e-7)


@pytest.mark.parametrize("text, key, words", [
    (b"a,b\n1,2\n3,x\n", "line 3, column b", "not a number: 'x'"),
    (b"a,b\n1,2\n3,4,5\n", "line 3", "3 values, the header names 2 columns"),
    (b"a,b\n1,2\n3,\xff4\n", "/", "not UTF-8 text (byte 0xff at offset 10)"),
])
def test_bad_csv_lines_are_still_named(tmp_path, text, key, words):
    """The fast parser falls back to naming the line (same messages as before)."""
    p = tmp_path / "bad.csv"
    p.write_bytes(text)
    with pytest.raises(MeasuredError) as e:
        read_record(p)
    assert str(e.value) == f"{p}: {key}: {words}"
