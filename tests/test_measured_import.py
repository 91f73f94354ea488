"""Measured data: reading CSV / HDF5 / MATLAB records, the channel map (units, sign, sensor frame), alignment and
metrics on known signals, and every bad map or file refused with `file: key: problem` (issue 25)."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np
import pytest
import scipy.io

from app.cli import main
from solver.measured import MeasuredRecord, compare_arrays, convert, find_offset, load_map, read_record
from tests.measured_truth import EXAMPLE_MAP, LBF, LBF_IN, sensor_frame

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "central_impact_20t.h5"
RUN_UNITS = {"Fx": "N", "Fy": "N", "Fz": "N", "Mx": "N*m", "My": "N*m", "Mz": "N*m", "probe_stroke": "m"}
COLS = ["time_ms", "LC_Fx", "LC_Fy", "LC_Fz", "LC_Mx", "LC_My", "LC_Mz", "stroke_mm"]


def base_loads(n=400, dt=1e-3):
    """Known loads on the mechanism base (N, N*m), a stroke (m), on t = 0, dt, ..."""
    t = np.arange(n) * dt
    F = np.column_stack([1500 * np.sin(7 * t) + 200, 80 * np.cos(11 * t), -40 * t])
    M = np.column_stack([5 * np.sin(3 * t), -30 * t + 2, 12 * np.cos(5 * t)])
    return t, F, M, 0.1 * t


def stand_columns(t, F, M, s, shift=0.0):
    """The example map's columns (ms, lbf, lbf*in in the sensor frame, mm) of loads F, M given at t - shift."""
    Fs, Ms = sensor_frame(F, M)
    data = np.column_stack([(t + shift) * 1e3, Fs / LBF, Ms / LBF_IN, s * 1e3])
    return {c: data[:, k] for k, c in enumerate(COLS)}


def write_csv(path, cols, delimiter=","):
    names = list(cols)
    rows = np.column_stack([cols[c] for c in names])
    with open(path, "w") as fh:
        fh.write("# a comment line before the header is skipped\n")
        fh.write(delimiter.join(names) + "\n")
        for r in rows:
            fh.write(delimiter.join(f"{x:.10g}" for x in r) + "\n")
    return path


def write_mat73(path, cols):
    """A MATLAB v7.3 file: HDF5 with a 512-byte user block holding the MATLAB header; vectors stored as (1, n)."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for k, v in cols.items():
            f.create_dataset(k, data=np.asarray(v)[None, :])
    with open(path, "r+b") as fh:
        text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Fri Nov 27 08:00:00 2026 HDF5 schema 1.00 ."
        fh.write(text.ljust(116) + b" " * 8 + b"\x00\x02IM")   # text, subsystem offset, version 2.0, endianness
    return path


@pytest.mark.parametrize("kind", ["csv_comma", "csv_semicolon", "csv_tab", "csv_space", "hdf5", "mat5", "mat73"])
def test_every_file_kind_reads_to_the_same_base_loads(tmp_path, kind):
    """CSV with any delimiter, HDF5 (datasets in a group), MAT v5 and v7.3 give the same channels in run units and the
    base frame: lbf -> N, lbf*in -> N*m (pint), the turned and offset sensor undone, mm -> m, ms -> s."""
    t, F, M, s = base_loads()
    cols = stand_columns(t, F, M, s)
    if kind.startswith("csv"):
        delim = {"comma": ",", "semicolon": ";", "tab": "\t", "space": " "}[kind[4:]]
        path = write_csv(tmp_path / "stand.csv", cols, delim)
    elif kind == "hdf5":
        path = tmp_path / "stand.h5"
        with h5py.File(path, "w") as f:
            g = f.create_group("daq")
            for k, v in cols.items():
                g.create_dataset(k, data=v)
    elif kind == "mat5":
        path = tmp_path / "stand.mat"
        scipy.io.savemat(path, {k: v[:, None] for k, v in cols.items()})
    else:
        path = write_mat73(tmp_path / "stand.mat", cols)
    sig = convert(load_map(EXAMPLE_MAP), read_record(path), RUN_UNITS)
    np.testing.assert_allclose(sig.time, t, atol=1e-9)
    for k, n in enumerate(("Fx", "Fy", "Fz")):
        np.testing.assert_allclose(sig.values[n], F[:, k], atol=1e-5 * 1500)
    for k, n in enumerate(("Mx", "My", "Mz")):
        np.testing.assert_allclose(sig.values[n], M[:, k], atol=1e-5 * 200)
    np.testing.assert_allclose(sig.values["probe_stroke"], s, atol=1e-9)
    assert sig.units["Mx"] == "N*m" and sig.units["Fx"] == "N"


def test_rotation_matrix_sign_and_units_of_a_map(tmp_path):
    """A map with the rotation as a matrix, sign -1 and kN / N*mm gives -R F_s, -(R M_s + r x R F_s)."""
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])    # sensor x along base y
    r = np.array([0.0, 0.0, 0.5])
    (tmp_path / "m.toml").write_text(f"""
[time]
column = "t"
[align]
offset = 0.0
[[sensor]]
columns = ["a", "b", "c", "d", "e", "f"]
force_unit = "kN"
moment_unit = "N·mm"
rotation = {R.tolist()}
origin = {r.tolist()}
sign = -1
""")
    cols = {"t": np.array([0.0, 1.0]), "a": np.array([1.0, 2.0]), "b": np.zeros(2), "c": np.zeros(2),
            "d": np.zeros(2), "e": np.zeros(2), "f": np.array([1000.0, 0.0])}
    sig = convert(load_map(tmp_path / "m.toml"), MeasuredRecord(tmp_path / "x.csv", cols), RUN_UNITS)
    # F_s = (1 kN, 0, 0) -> base (0, 1000, 0) N, times sign -1; M = -(R M_s + r x F) = -((0, 0, 1) + (-500, 0, 0))
    np.testing.assert_allclose([sig.values[n][0] for n in ("Fx", "Fy", "Fz")], [0.0, -1000.0, 0.0], atol=1e-9)
    np.testing.assert_allclose([sig.values[n][0] for n in ("Mx", "My", "Mz")], [500.0, 0.0, -1.0], atol=1e-9)


def test_alignment_finds_a_sub_sample_shift_and_metrics_are_exact():
    """A record shifted by 0.1374 s (not a whole sample at 1 kHz) is aligned within 0.5 ms; with a known error added
    to one channel the metrics give its RMS, peak, time of peak and correlation."""
    t = np.arange(0.0, 3.0, 1e-3)
    fx = np.where(t > 0.6, 1800 * (1 - np.exp(-(t - 0.6) / 0.05)) * np.exp(-np.clip(t - 1.5, 0, None)), 0.0)
    shift = 0.1374
    tm = np.arange(0.0, 3.0, 1e-3)
    run = {"Fx": fx, "probe_stroke": np.zeros_like(t)}
    box = (t > 1.9995) & (t < 2.0995)                            # a 50 N error over 0.1 s from t = 2.0 s
    meas_fx = np.interp(tm - shift, t, fx + np.where(box, 50.0, 0.0))
    from solver.measured.channel_map import AlignSpec, ChannelMap, MappedChannel, MeasuredSignals
    cmap = ChannelMap(Path("map.toml"), "t", "s", AlignSpec("Fx", 300.0), [MappedChannel("fx", "Fx", "N")])
    sig = MeasuredSignals(Path("m.csv"), tm, {"Fx": meas_fx}, {"Fx": "N"})
    off = find_offset(t, fx, tm, meas_fx, cmap.align)
    assert abs(off - shift) < 5e-4
    c = compare_arrays(t, run, sig, cmap, offset=shift)
    m = c.metrics[0]
    assert m.peak == pytest.approx(50.0, rel=1e-4) and m.t_peak == pytest.approx(2.0, abs=1.5e-3)
    assert m.rms == pytest.approx(50.0 * np.sqrt(box.sum() / m.samples), rel=2e-2) and m.r > 0.999
    np.testing.assert_allclose(c.record_time, tm - shift)          # the record at its own rate, in run time
    np.testing.assert_array_equal(c.record["Fx"], meas_fx)
    assert c.report().splitlines()[0] == f"time offset: {shift:.6f} s"
    assert c.report().splitlines()[1].startswith("Fx rms ")


def _validate(*args):
    """`dockmnemo validate ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", *map(str, args)])
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


GOOD_MAP = EXAMPLE_MAP.read_text()


@pytest.mark.parametrize("case, edit, key, problem", [
    ("missing time table", lambda s: s.replace('[time]\ncolumn = "time_ms"\nunit = "ms"', ""), "time",
     "missing table"),
    ("unknown time unit", lambda s: s.replace('unit = "ms"', 'unit = "fortnightz"'), "time.unit", "unknown unit"),
    ("time unit not a time", lambda s: s.replace('unit = "ms"', 'unit = "kg"'), "time.unit", "cannot be converted"),
    ("unknown key", lambda s: s.replace("max_shift", "max_shfit"), "align.max_shfit", "did you mean max_shift"),
    ("force unit of a length", lambda s: s.replace('force_unit = "lbf"', 'force_unit = "in"'), "sensor[0].force_unit",
     "cannot be converted"),
    ("unknown unit", lambda s: s.replace('unit = "mm"\nsign', 'unit = "furlongz"\nsign'), "channel[0].unit",
     "unknown unit"),
    ("bad sign", lambda s: s.replace("sign = 1\nweight", "sign = 2\nweight"), "channel[0].sign", "must be 1 or -1"),
    ("five sensor columns", lambda s: s.replace('"LC_Mz"]', ']'), "sensor[0].columns", "must list 6 columns"),
    ("not a rotation", lambda s: s.replace("euler_deg = [30.0, -15.0, 90.0]",
                                           "rotation = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]"), "sensor[0].rotation",
     "not a rotation"),
    ("bad euler sequence", lambda s: s.replace('"ZYX"', '"ZZX"'), "sensor[0].euler_sequence", "three axes"),
    ("run channel twice", lambda s: s.replace('run = "probe_stroke"', 'run = "Fx"'), "sensor[0].channels",
     "already compared"),
    ("no threshold", lambda s: s.replace("threshold = 300.0", ""), "align.threshold", "missing"),
    ("no such run channel", lambda s: s.replace('run = "probe_stroke"', 'run = "probe_strok"'), "channel[0].run",
     "did you mean probe_stroke"),
    ("no such column", lambda s: s.replace('column = "stroke_mm"', 'column = "stroke_m"'), "channel[0].column",
     "did you mean stroke_mm"),
    ("not TOML", lambda s: s + "\n[[[", "/", "not valid TOML"),
])
def test_bad_map_exits_2_naming_the_map_and_key(tmp_path, case, edit, key, problem):
    """Each bad channel map: exit 2, one line `map: key: problem`, nothing else printed."""
    t, F, M, s = base_loads()
    meas = write_csv(tmp_path / "stand.csv", stand_columns(t, F, M, s))
    bad = tmp_path / "bad_map.toml"
    bad.write_text(edit(GOOD_MAP))
    p = _validate(SAMPLE, meas, "--map", bad)
    assert p.returncode == 2, (case, p.stdout, p.stderr)
    assert f"{bad}: {key}: " in p.stderr and problem in p.stderr, (case, p.stderr)
    assert p.stdout == ""


@pytest.mark.parametrize("case, content, key, problem", [
    ("missing file", None, "/", "file does not exist"),
    ("not a number", "time_ms,LC_Fx\n0,1\n1,abc\n", "line 3, column LC_Fx", "not a number: 'abc'"),
    ("short row", "time_ms,LC_Fx,LC_Fy\n0,1,2\n1,2\n", "line 3", "2 values, the header names 3"),
    ("no header", "0,1,2\n1,2,3\n", "line 1", "no header row"),
    ("time going back", "time_ms,LC_Fx,LC_Fy,LC_Fz,LC_Mx,LC_My,LC_Mz,stroke_mm\n0,1,1,1,1,1,1,1\n2,1,1,1,1,1,1,1\n"
                        "1,1,1,1,1,1,1,1\n", "time_ms", "time must increase"),
    ("duplicate column", "a,a\n1,2\n", "line 1", "used twice"),
    ("unknown suffix", "x", "/", "unknown file type"),
    ("broken HDF5", b"\x89HDF\r\n\x1a\nbroken", "/", "not a readable HDF5 file"),
    ("broken MAT", b"MATLAB 5.0 MAT-file broken" + b"\0" * 200, "/", "not a readable MATLAB file"),
])
def test_bad_measured_file_exits_2_naming_the_file(tmp_path, case, content, key, problem):
    """Each bad measured file: exit 2 with `file: key: problem`."""
    suffix = {"unknown suffix": ".xyz", "broken HDF5": ".h5", "broken MAT": ".mat"}.get(case, ".csv")
    meas = tmp_path / f"stand{suffix}"
    if isinstance(content, bytes):
        meas.write_bytes(content)
    elif content is not None:
        meas.write_text(content)
    p = _validate(SAMPLE, meas, "--map", EXAMPLE_MAP)
    assert p.returncode == 2, (case, p.stdout, p.stderr)
    assert f"{meas}: {key}: " in p.stderr and problem in p.stderr, (case, p.stderr)


def test_threshold_never_reached_and_no_overlap_are_refused(tmp_path):
    """A record whose force never reaches the threshold, and a fixed offset that leaves no overlap: exit 2."""
    t, F, M, s = base_loads()
    meas = write_csv(tmp_path / "weak.csv", stand_columns(t, F * 0.01, M, s))
    p = _validate(SAMPLE, meas, "--map", EXAMPLE_MAP)
    assert p.returncode == 2 and "align.threshold: Fx never reaches 300" in p.stderr, p.stderr
    p = _validate(SAMPLE, meas, "--map", EXAMPLE_MAP, "--offset", "1000")
    assert p.returncode == 2 and "no overlap with the run" in p.stderr, p.stderr


@pytest.mark.parametrize("fit, extra, key, problem", [
    ("axial_damper.friction_brake_torq", [], "--fit axial_damper.friction_brake_torq",
     "no such key in the scenario or its mechanism existing.toml (did you mean axial_damper.friction_brake_torque_in?)"),
    ("name", [], "name", "is 'central_impact_20t', not a number to fit"),
    ("initial.closing_speed,initial.closing_speed", [], "--fit", "a key is named twice"),
    ("initial.closing_speed", ["--workers", "0"], None, "--workers: must be at least 1"),
    ("initial.closing_speed", ["-o", "/proc/no/fitted.toml"], "/", "cannot be written"),
])
def test_calibrate_refuses_bad_keys_before_any_run(tmp_path, fit, extra, key, problem):
    """A key that is not in the scenario or its mechanism, not a number, named twice, 0 workers, an output that cannot
    be written: exit 2 before any run."""
    t, F, M, s = base_loads()
    meas = write_csv(tmp_path / "stand.csv", stand_columns(t, F, M, s))
    scenario = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["calibrate", str(scenario), str(meas), "--map", str(EXAMPLE_MAP), "--fit", fit,
                     "-o", str(tmp_path / "fitted.toml"), *extra])
    assert code == 2 and problem in err.getvalue(), err.getvalue()
    if key is not None:
        assert f": {key}: " in err.getvalue()
    assert not (tmp_path / "fitted.toml").exists()
