"""A run file is shown truthfully or refused with the reason (issue 31): each bad file is a bundled sample run changed
in one way with h5py; `dockmnemo info` exits 2 with one line naming the dataset or attribute. On the old main every
one of them printed a summary and exited 0 (the numbers wrong: T Final -5 s, a 225-digit peak |Fx|, ...)."""
import contextlib
import io
import math
import re
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.cli import main
from solver.runfile import RunFile, RunFileError

ROOT = Path(__file__).resolve().parent.parent
SYNTH = ROOT / "sample_runs" / "synthetic_approach.h5"            # probe-cone, no abs_max, no /contact_events
PERI = ROOT / "sample_runs" / "peripheral" / "nominal_10t.h5"    # peripheral: abs_max, /contact_events, PASS


def info(path) -> tuple[int, str, str]:
    """`dockmnemo info path` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["info", str(path)])
    return rc, out.getvalue(), err.getvalue()


def bad_copy(src, tmp_path, name, change) -> Path:
    p = tmp_path / f"{name}.h5"
    shutil.copy(src, p)
    with h5py.File(p, "r+") as f:
        change(f)
    return p


def refused(path, where: str, *words) -> str:
    """info exits 2 with one line `dockmnemo: error: path: where...` holding `words`."""
    rc, out, err = info(path)
    assert rc == 2, out[-2000:]
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"dockmnemo: error: {path}: {where}"), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _attr(obj, **kv):
    def change(f):
        for k, v in kv.items():
            f[obj].attrs[k] = v
    return change


def _resize_frames(n):
    """Every time-indexed dataset cut to its first n frames."""
    def change(f):
        total = f["time"].shape[0]

        def cut(_name, d):
            if isinstance(d, h5py.Dataset) and d.maxshape and d.maxshape[0] is None and d.shape[0] == total:
                d.resize(n, axis=0)
        f.visititems(cut)
        f.attrs["t_final"] = float(f["time"][n - 1])
    return change


def _set(path, sel, value):
    def change(f):
        d = f[path]
        a = d[...]
        a[sel] = value
        d[...] = a
    return change


def _parameters(data, **kw):
    def change(f):
        del f["parameters"]
        f.create_dataset("parameters", data=data, **kw)
    return change


def _contact_events(edit=None, dtype=None, sample_step=None):
    """/contact_events rewritten: rows changed by `edit(rows)`, the fields as `dtype`, or another sample_step."""
    def change(f):
        d = f["contact_events"]
        rows, attrs = d[...], dict(d.attrs)
        if edit is not None:
            edit(rows)
        if dtype is not None:
            rows = np.array([tuple(str(x) if k == "start" else x for k, x in zip(rows.dtype.names, r)) for r in rows],
                            dtype=dtype)
        if sample_step is not None:
            attrs["sample_step"] = sample_step
        del f["contact_events"]
        n = f.create_dataset("contact_events", data=rows)
        for k, v in attrs.items():
            n.attrs[k] = v
    return change


def _row(field, value, i=0):
    def edit(rows):
        rows[field][i] = value
    return edit


STR = h5py.string_dtype("utf-8")
CE_START_TEXT = [("pair", STR), ("start", STR), ("end", "f8"), ("peak_force", "f8"), ("peak_time", "f8"),
                 ("impulse", "f8"), ("approach_speed", "f8"), ("rebound", "u1"), ("lasts_to_end", "u1")]

CASES = [
    # root attributes against /time and each other
    ("t_final_negative", SYNTH, _attr("/", t_final=-5.0), "/@t_final", "T Final -5 s is not the last frame"),
    ("t_capture_1e9", SYNTH, _attr("/", t_capture=1e9), "/@t_capture", "not a time of a run"),
    ("t_capture_after_t_final", PERI, _attr("/", t_capture=40.0), "/@t_capture", "after the run's last frame"),
    ("one_frame_captured_after_its_end", SYNTH, lambda f: (_resize_frames(1)(f), _attr("/", t_capture=0.561)(f)),
     "/@t_capture", "T capture 0.561 s is after the run's last frame (0 s)"),
    ("t_capture_inf", SYNTH, _attr("/", t_capture=math.inf), "/@t_capture", "inf s is not a time"),
    ("time_axis_1e300", SYNTH, _set("time", -1, 1e300), "/time", "not a time axis of a run"),
    ("time_axis_scaled_1e300", SYNTH, lambda f: f["time"].write_direct(f["time"][...] * 1e300), "/time",
     "not a time axis"),
    ("output_step_1e-300", SYNTH, _attr("/", output_step=1e-300), "/@output_step", "frames of /time are 0.002 s"),
    ("output_step_as_text", SYNTH, _attr("/", output_step="0.002"), "/@output_step", "must be a number, found '0.002'"),
    ("time_t_capture_differs", PERI, _attr("time", t_capture=1.0), "/time@t_capture", "differs from the root"),
    # text attributes
    ("unit_integer", SYNTH, _attr("channels/Fx", unit=5), "/channels/Fx@unit", "must be text, found 5"),
    ("label_array", SYNTH, _attr("channels/Fx", label=np.array([1.0, 2.0])), "/channels/Fx@label", "must be text"),
    ("run_date_newlines", SYNTH, _attr("/", run_date="2026-11-22T21:59:33+00:00\n" * 1000), "/@run_date",
     "characters"),
    ("run_date_two_lines", SYNTH, _attr("/", run_date="2026-11-22\nT21:59"), "/@run_date", "one line of text"),
    ("run_date_not_iso", SYNTH, _attr("/", run_date="yesterday"), "/@run_date", "not an ISO 8601"),
    ("comment_newline", PERI, _attr("/", comment="line one\nline two"), "/@comment", "'\\n' at character 8"),
    # ranges and strokes
    ("abs_max_text", PERI, _attr("channels/Fx", abs_max="big"), "/channels/Fx@abs_max", "must be a number"),
    ("abs_max_negative", PERI, _attr("channels/Fx", abs_max=-1e308), "/channels/Fx@abs_max", "max |value|"),
    ("stroke_zero", SYNTH, _attr("channels/Fx", stroke=0.0), "/channels/Fx@stroke", "positive full-scale"),
    ("stroke_negative", PERI, _attr("channels/leg_2", stroke=-0.2), "/channels/leg_2@stroke", "found -0.2"),
    ("stroke_inf", PERI, _attr("channels/leg_2", stroke=math.inf), "/channels/leg_2@stroke", "found inf"),
    # /parameters and contact pairs
    ("parameters_int", SYNTH, _parameters(5), "/parameters", "must be text", "int64"),
    ("parameters_garbage_bytes", SYNTH, _parameters(np.array(b"\xff\xfe\x80garbage", dtype="S10")), "/parameters",
     "not UTF-8"),
    ("parameters_binary_text", PERI, _parameters("x = 1\x01\x02", dtype=h5py.string_dtype("ascii")),
     "/parameters", "control character"),
    ("pair_names_no_part", SYNTH, _attr("contacts/head_cone", part_a="no_such_part"), "/contacts/head_cone@part_a",
     "'no_such_part', which is not in /geometry"),
    # /contact_events
    ("events_unknown_pair", PERI, _contact_events(_row("pair", "no_such_pair")), "/contact_events",
     "no_such_pair): pair is not in /contacts"),
    ("events_negative_impulse", PERI, _contact_events(_row("impulse", -1.0)), "/contact_events", "impulse -1"),
    ("events_nan_impulse", PERI, _contact_events(_row("impulse", math.nan)), "/contact_events", "impulse nan"),
    ("events_nan_start", PERI, _contact_events(_row("start", math.nan)), "/contact_events", "must be finite"),
    ("events_start_after_end", PERI, _contact_events(_row("start", 17.9)), "/contact_events", "end >= start"),
    ("events_at_1e12", PERI, _contact_events(lambda r: (_row("start", 1e12)(r), _row("end", 1e12 + 1)(r),
                                                        _row("peak_time", 1e12)(r))),
     "/contact_events", "outside the run"),
    ("events_peak_time_outside", PERI, _contact_events(_row("peak_time", 17.0)), "/contact_events",
     "peak_time 17 s is outside its interval"),
    ("events_wrong_dtype", PERI, _contact_events(dtype=CE_START_TEXT), "/contact_events", "field start",
     "expected a number"),
    ("events_text_sample_step", PERI, _contact_events(sample_step="0.005"), "/contact_events@sample_step",
     "must be a number of seconds"),
    # poses and data met while reading: never a number
    ("zero_quaternion", SYNTH, _set("bodies/quaternion", (9000, 3), 0.0), "/bodies/quaternion",
     "body 'probe' at frame 9000: quaternion of norm 0"),
    ("quaternion_norm_1e200", PERI, _set("bodies/quaternion", (500, 2), 1e200), "/bodies/quaternion",
     "norm 2e+200"),
    ("position_1e200", SYNTH, _set("bodies/position", (100, 1, 0), 1e200), "/bodies/position",
     "at frame 100 is beyond any physical value"),
    ("corrupt_channel_chunk_225_digits", SYNTH, _set("channels/Fx", np.s_[8192:8200], 3.38e224), "/channels/Fx",
     "|value| 3.38e+224 at frame 8192", "data corrupt"),
    ("corrupt_leg_stroke_within_limits", PERI, _set("channels/leg_2", 400, -1.563), "/channels/leg_2",
     "|value| 1.563 at frame 400 is more than the run's max |value| 0.0721", "abs_max"),
    ("corrupt_contact_force", PERI, _set("contacts/latch_1/force", (300, 0), 1e300), "/contacts/latch_1/force",
     "at frame 300"),
]


@pytest.mark.parametrize("name, src, change, where, words", [pytest.param(*c[:4], c[4:], id=c[0]) for c in CASES])
def test_bad_file_is_refused_naming_what_is_wrong(tmp_path, name, src, change, where, words):
    refused(bad_copy(src, tmp_path, name, change), where, *words)


def test_viewer_reads_refuse_a_corrupt_window_instead_of_returning_it(tmp_path):
    """The reader's windows (plots, device bars, verdict) raise RunFileError for a chunk of garbage; the good part of
    the channel still reads."""
    p = bad_copy(SYNTH, tmp_path, "chunk", _set("channels/head_offset_y", np.s_[8192:12288], -7.7e150))
    with RunFile(p) as r:
        assert np.isfinite(r.channel("head_offset_y", 0, 8192)).all()
        message = r"/channels/head_offset_y: \|value\| 7.7e\+150 at frame 9000 is beyond any physical value"
        with pytest.raises(RunFileError, match=message):
            r.channel_at("head_offset_y", 9000)
        with pytest.raises(RunFileError, match=message):
            r.channel("head_offset_y", 9000, 9001)
        with pytest.raises(RunFileError, match="at frame 8192"):
            r.channel("head_offset_y")


def test_sealing_a_killed_run_drops_a_capture_after_its_last_kept_frame(tmp_path):
    """A killed writer's /time@t_capture past the frames kept would make the sealed file refused: sealed as no
    capture (the kept frames show none)."""
    from solver.runfile import _write_sealed
    p = tmp_path / "src.h5"
    shutil.copy(PERI, p)
    with RunFile(p) as run:
        run.meta.t_capture = 1e3   # as a killed run's /time said, frames cut before it
        _write_sealed(run, tmp_path / "sealed.h5", False, list(run.events), None, "test")
    with RunFile(tmp_path / "sealed.h5") as r:
        assert math.isnan(r.t_capture)


def test_writer_stores_text_attributes_on_one_line(tmp_path):
    """A scenario comment with newlines (TOML multi-line string) is written as one line, so the file opens."""
    from solver.runfile import RunMeta, RunWriter
    p = tmp_path / "w.h5"
    w = RunWriter(p, RunMeta(comment="first\nsecond\tthird", variant="synthetic", output_step=0.1,
                             run_date="2026-11-29T00:00:00+00:00"), [], ["passive_craft"], [], [])
    w.append(np.arange(3) * 0.1, np.zeros((3, 0)), np.zeros((3, 1, 3)), np.tile([1.0, 0, 0, 0], (3, 1, 1)))
    w.add_event(0.1, "diagnostic", "", "solver said:\nline two")
    w.finish()
    with RunFile(p) as r:
        assert r.meta.comment == "first second third" and r.events[0].text == "solver said: line two"


@pytest.mark.parametrize("src", sorted((ROOT / "sample_runs").rglob("*.h5")), ids=lambda p: p.name)
def test_every_bundled_sample_run_opens_and_checks(src):
    rc, out, err = info(src)
    assert rc == 0 and not err, err
    assert "capture verdict" in out


# ---- fuzz over attribute VALUES -------------------------------------------------------------------------------------
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# (object, attribute, summary lines it shows in: their numbers may change, to the value the file now holds)
FUZZED = [
    ("/", "t_final", ()), ("/", "t_capture", ("T capture", "capture verdict", "PASS  T capture", "FAIL  T capture")),
    ("/", "output_step", ("duration",)), ("/", "run_date", ("Run Date",)), ("/", "comment", ("comment",)),
    ("/", "solver_version", ("solver",)), ("/", "scenario", ()), ("/", "complete", ("T Final",)),
    ("time", "t_capture", ()),
    ("channels/Fx", "abs_max", ()), ("channels/Fx", "stroke", ()), ("channels/Fx", "place", ()),
    ("channels/leg_2", "stroke", ()), ("channels/leg_2", "abs_max", ()),
    ("channels/ring_x", "unit", ()), ("channels/ring_x", "label", ()), ("channels/ring_x", "group", ("channels",)),
    ("contacts/latch_1", "part_a", ()), ("contacts/latch_1", "part_b", ()), ("contacts/latch_1", "label", ()),
    ("geometry/strikers", "body", ()), ("geometry/strikers", "kind", ()), ("geometry/strikers", "visible_channel", ()),
    ("contact_events", "sample_step", ()),
]
VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-3, 3).map(lambda k: ("scale", k)),
    st.integers(-2 ** 63, 2 ** 63 - 1),
    st.booleans(),
    st.text(max_size=40),
    st.binary(max_size=20),
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=3).map(np.array),
    st.sampled_from(["", "N", "m", "deg", "base_loads", "energy", "passive_craft", "ring", "latches", "strikers",
                     "ring_x", "2026-11-27T12:58:56+00:00", "nan", "1e308", "0", "-1", "idss"]),
    st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 1e-9, 0.02, 2.9515, 17.9665, 18.0, 1e7, 1e300, -1e308]),
)


def _numbers(text: str, skip=()) -> list[str]:
    """The numbers of `info`'s output, line by line, leaving out the lines that start (stripped) with `skip` (and the
    file's path)."""
    skip = ("run file", "criteria", *skip)
    return [n for line in text.splitlines() if not line.strip().startswith(skip) for n in NUMBER.findall(line)]


@pytest.fixture(scope="module")
def good_output():
    rc, out, err = info(PERI)
    assert rc == 0, err
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(target=st.sampled_from(FUZZED), value=VALUES)
def test_fuzzed_attribute_is_refused_by_name_or_changes_no_number(tmp_path_factory, good_output, target, value):
    """Each mutated attribute: `info` exits 2 with one line naming the attribute, or prints the good file's numbers
    (those of the lines showing that attribute aside)."""
    obj, name, shown = target
    p = tmp_path_factory.mktemp("fuzz") / "run.h5"
    shutil.copy(PERI, p)
    with h5py.File(p, "r+") as f:
        if isinstance(value, tuple):   # the good value scaled
            old = f[obj].attrs.get(name)
            assume(isinstance(old, (float, np.floating)))
            value = float(old) * value[1]
        try:
            f[obj].attrs[name] = value
        except (TypeError, ValueError):   # h5py cannot store it (a NUL in a string, ...)
            assume(False)
    rc, out, err = info(p)
    if rc == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"dockmnemo: error: {p}: "), err
        assert name in lines[0], (target, value, lines[0])
    else:
        assert rc == 0 and not err, (target, value, rc, err)
        assert _numbers(out, shown) == _numbers(good_output, shown), (target, value)


# ---- the viewer: data met while playing or analysing is the read-error dialog, never a number -----------------------
def _boxes(title=None):
    from PySide6.QtWidgets import QApplication, QMessageBox
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible() and (title is None or w.windowTitle() == title)]


@pytest.fixture
def no_boxes_left(qtbot):
    yield
    for box in _boxes():
        box.close()


@pytest.mark.gui
@pytest.mark.parametrize("dataset, change, words", [
    ("channels/head_offset_y", _set("channels/head_offset_y", np.s_[8192:12288], -7.7e150),
     "|value| 7.7e+150 at frame 8192 is beyond any physical value"),
    ("bodies/quaternion", _set("bodies/quaternion", (9000, 4), 0.0), "body 'probe_head' at frame 9000: quaternion of "
                                                                       "norm 0"),
], ids=["garbage_chunk", "zero_quaternion"])
def test_corrupt_data_met_while_playing_is_the_read_error_dialog(qtbot, tmp_path, no_boxes_left, dataset, change,
                                                                  words):
    """Playing into a chunk of decoded garbage (a device channel) or a zero quaternion pauses with the window's
    read-error dialog naming the dataset; the panes keep their last picture (old main: the number, or blank views)."""
    from tests.gui_util import main_window
    bad = bad_copy(SYNTH, tmp_path, "bad", change)
    w = main_window(qtbot, tmp_path / "settings.ini", run=bad, activate=False)
    pb = w.playback
    pb.seek_frame(8150)
    pb.play()
    qtbot.waitUntil(lambda: not pb.playing, timeout=10000)
    assert 8150 < pb.frame < 12288
    boxes = _boxes("Cannot read run file")
    assert len(boxes) == 1, [b.text() for b in _boxes()]
    assert boxes[0].text().startswith(f"{bad}: /{dataset}: ") and words in boxes[0].text(), boxes[0].text()
    assert np.isfinite(w.diagram.devices.value("head_offset_y")) and abs(w.diagram.devices.value("head_offset_y")) < 1


@pytest.mark.gui
def test_corrupt_verdict_channel_is_a_dialog_not_a_225_digit_peak(qtbot, tmp_path, no_boxes_left, artifacts):
    """A garbage chunk in Fx (a verdict channel): a dialog names /channels/Fx; no label shows the number."""
    from PySide6.QtWidgets import QLabel

    from tests.gui_util import main_window
    bad = bad_copy(SYNTH, tmp_path, "bad_fx", _set("channels/Fx", np.s_[8192:8200], 3.38e224))
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    w.open_path(bad)
    qtbot.waitUntil(lambda: bool(_boxes()), timeout=10000)
    texts = [b.text() for b in _boxes()]
    assert any(t.startswith(f"{bad}: /channels/Fx: |value| 3.38e+224 at frame 8192") for t in texts), texts
    shown = [lab.text() for lab in w.findChildren(QLabel)]
    assert not [t for t in shown if re.search(r"\d{20}", t) or "peak |Fx|" in t and "e+224" in t], shown
    assert w.width() < 2600
    from PySide6.QtWidgets import QApplication
    qtbot.wait(200)
    QApplication.primaryScreen().grabWindow(0).save(str(artifacts / "corrupt_verdict_channel_dialog.png"))


def test_every_flipped_byte_in_a_new_runs_data_chunk_is_refused(tmp_path):
    """The writer stores a fletcher32 checksum per chunk: a flipped byte in compressed channel data is an HDF5 read
    error naming the dataset, never numbers (old main: some flips decoded into wrong values and exit 0)."""
    from tests.synthetic_run import make
    good = make(tmp_path / "fresh.h5", duration=3.0, step=0.01)
    with h5py.File(good, "r") as f:
        info_ = f["channels/Fx"].id.get_chunk_info(0)
    data = good.read_bytes()
    p = tmp_path / "flipped.h5"
    for off in np.linspace(info_.byte_offset + 4, info_.byte_offset + info_.size - 5, 12).astype(int):
        b = bytearray(data)
        b[off] ^= 0x04
        p.write_bytes(bytes(b))
        rc, out, err = info(p)
        assert rc == 2 and f"{p}: /channels/Fx: " in err, (off, out[-600:])


@pytest.mark.gui
def test_export_refuses_a_run_with_a_corrupt_chunk(qtbot, tmp_path):
    """`dockmnemo export` checks every frame first, as `info` does (old main: rendered the garbage, exit 0); the
    renderer used by File > Export fails on a pane's read error instead of encoding its last picture."""
    from viewer.clip_render import DiagramRenderer
    bad = bad_copy(SYNTH, tmp_path, "bad", _set("channels/head_offset_y", np.s_[8192:12288], -7.7e150))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["export", str(bad), "--clip", "16:17", "-o", str(tmp_path / "clip.mp4")])
    assert rc == 2 and err.getvalue().startswith(f"dockmnemo: error: {bad}: /channels/head_offset_y: "), err.getvalue()
    assert not (tmp_path / "clip.mp4").exists()
    with RunFile(bad) as run:
        r = DiagramRenderer(run, (960, 540), plotted=["Fx"])   # head_offset_y: a device bar, read per frame
        try:
            r.render_time(1.0)
            with pytest.raises(ValueError, match="/channels/head_offset_y"):
                r.render_time(17.0)
        finally:
            r.close()
