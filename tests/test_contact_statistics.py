"""Contact-event statistics shown to the user are the solver's (issue 21 item 2).

The bundled runs keep 0.1 s frames of a 1 ms solver run; the events dock and its CSV must show the solver's
statistics (its contact_begin rows, checked here with the test's own reading of their text), and statistics
recomputed from frames must be marked as such and never give a negative approach speed.
"""
import csv
import math
import re
import shutil

import h5py
import numpy as np
import pytest

from solver.contact_events import table_from_run
from solver.runfile import EVENT_DTYPE, RunFile, RunFileError, RunMeta, RunWriter
from tests import contact_run

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from app.cli import ROOT, SAMPLE_RUNS, SYNTHETIC_RUN  # noqa: E402

SOLVER_RUNS = sorted(p for p in SAMPLE_RUNS.glob("*.h5") if p != SYNTHETIC_RUN)
BEGIN = re.compile(r": peak normal force (\S+) N at (\S+) s, impulse (\S+) N\*s, approach speed (\S+ m/s|n/a), "
                   r"duration (\S+) s(, rebound)?$")


def solver_begins(run):
    """(pair, start, (end, its tolerance), peak, impulse, approach or None, rebound) of each contact_begin row, as
    printed; the end is the pair's contact_end row at start + duration (printed to 0.1 ms) if there is one."""
    ends = {}
    for e in run.events:
        if e.kind == "contact_end":
            ends.setdefault(e.pair, []).append(e.time)
    out = []
    for e in run.events:
        if e.kind != "contact_begin":
            continue
        m = BEGIN.search(e.text)
        assert m, e.text
        dur = float(m[5])
        end = [t for t in ends.get(e.pair, []) if abs(t - (e.time + dur)) < 1e-4]
        v = None if m[4] == "n/a" else float(m[4].split()[0])
        out.append((e.pair, e.time, (end[0], 1e-6) if end else (e.time + dur, 5e-5 + 1e-6), float(m[1]), float(m[3]),
                    v if v is not None and v >= 0 else None, bool(m[6])))
    return sorted(out, key=lambda r: (r[1], list(run.contact_pairs).index(r[0])))


def dock_on(qtbot, run):
    """The events dock showing a run's events as the main window gets them (viewer.diagram.analyse_run)."""
    from viewer.capture_verdict import DEFAULT_CRITERIA
    from viewer.diagram import analyse_run
    from viewer.events_dock import EventsDock
    events, _, error = analyse_run(run, DEFAULT_CRITERIA)
    assert events is not None, error
    dock = EventsDock()
    qtbot.addWidget(dock)
    dock.set_events(events, run)
    return dock


def csv_rows(dock, path):
    dock.export_csv(path)
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.gui
@pytest.mark.parametrize("path", SOLVER_RUNS, ids=lambda p: p.stem)
def test_dock_rows_and_csv_are_the_solvers_contact_statistics(qtbot, tmp_path, path):
    with RunFile(path) as run:
        want = solver_begins(run)
        dock = dock_on(qtbot, run)
        rows = csv_rows(dock, tmp_path / "events.csv")
    assert len(want) > 10 and len(rows) == len(want) == dock.proxy.rowCount()
    for i, (row, (pair, start, end, peak, impulse, v, rebound)) in enumerate(zip(rows, want)):
        got = (row["pair"], float(row["start_s"]), float(row["end_s"]))
        assert got == (pair, pytest.approx(start, abs=1e-6), pytest.approx(end[0], abs=end[1])), i
        # printed: the solver's text to .1f / .3f / .4f, the CSV to 6 significant digits
        assert float(row["peak_normal_force_N"]) == pytest.approx(peak, abs=0.05 + 1e-5 * peak), (i, pair, start)
        assert float(row["impulse_Ns"]) == pytest.approx(impulse, abs=5e-4 + 1e-5 * impulse), (i, pair, start)
        assert (row["approach_speed_m_s"] == "") if v is None else \
            float(row["approach_speed_m_s"]) == pytest.approx(v, abs=5e-5 + 1e-6), (i, pair, start, v)
        assert row["rebound"] == ("yes" if rebound else "no")
        assert row["statistics"] in ("solver", "solver event text")
        # the table the user reads: same numbers at the solver's printed precision, not marked approximate
        d = dock.model.time_decimals                          # (as many decimals as the run's times need, <= 4)
        assert dock.cell(i, 1) == f"{start:.{d}f}" and dock.cell(i, 4) == f"{peak:.1f}", (i, pair)
        assert dock.cell(i, 7) == ("yes" if rebound else "no")
    assert not any(dock.model.headerData(c, Qt.Horizontal).startswith("≈") for c in range(8))
    assert "from the solver" in dock.source_label.text()


def strip_solver_statistics(src, dst):
    """A copy of a bundled run as another program might write it: no /contact_events, plain contact_begin text."""
    shutil.copy(src, dst)
    with h5py.File(dst, "a") as f:
        if "contact_events" in f:
            del f["contact_events"]
        ev = [tuple(v.decode() if isinstance(v, bytes) else v for v in r) for r in f["events"][()]]
        ev = [(t, k, p, "contact" if k == "contact_begin" else x) for t, k, p, x in ev]
        del f["events"]
        f.create_dataset("events", data=np.array(ev, dtype=EVENT_DTYPE), maxshape=(None,), chunks=(256,))
    return dst


@pytest.mark.gui
def test_statistics_recomputed_from_frames_are_marked_and_never_negative(qtbot, tmp_path):
    run_path = strip_solver_statistics(SAMPLE_RUNS / "central_impact_20t.h5", tmp_path / "other_writer.h5")
    with RunFile(run_path) as run:
        dock = dock_on(qtbot, run)
        rows = csv_rows(dock, tmp_path / "events.csv")
    assert len(rows) > 10
    heads = [dock.model.headerData(c, Qt.Horizontal) for c in range(8)]
    assert heads[0] == "pair" and all(h.startswith("≈ ") for h in heads[1:])
    assert "recomputed from the stored frames at the 0.1 s output step" in dock.source_label.text()
    assert "approximate" in dock.source_label.text()
    assert {r["statistics"] for r in rows} == {"frames (approximate)"} and {r["sample_step_s"] for r in rows} == {"0.1"}
    speeds = [float(r["approach_speed_m_s"]) for r in rows if r["approach_speed_m_s"]]
    assert speeds and min(speeds) >= 0.0


@pytest.mark.gui
@pytest.mark.parametrize("path", [*SOLVER_RUNS, SYNTHETIC_RUN], ids=lambda p: p.stem)
def test_no_negative_approach_speed_in_any_csv(qtbot, tmp_path, path):
    with RunFile(path) as run:
        rows = csv_rows(dock_on(qtbot, run), tmp_path / "events.csv")
    assert all(float(r["approach_speed_m_s"]) >= 0 for r in rows if r["approach_speed_m_s"])


def test_older_files_read_the_solvers_text_like_its_table(tmp_path):
    """A file with the solver's text only (written before /contact_events) gives the same events, to print precision."""
    src = SAMPLE_RUNS / "central_impact_20t.h5"
    old = tmp_path / "text_only.h5"
    shutil.copy(src, old)
    with h5py.File(old, "a") as f:
        if "contact_events" in f:
            del f["contact_events"]
    with RunFile(src) as a, RunFile(old) as b:
        ta, tb = table_from_run(a), table_from_run(b)
    assert tb.source == "solver event text" and not tb.approximate and len(ta) == len(tb)
    np.testing.assert_array_equal(ta.pair_index, tb.pair_index)
    np.testing.assert_array_equal(ta.start, tb.start)
    np.testing.assert_allclose(ta.end, tb.end, atol=1e-4)
    np.testing.assert_allclose(ta.peak_force, tb.peak_force, atol=0.05 + 1e-9)
    np.testing.assert_allclose(ta.approach_speed, tb.approach_speed, atol=5e-5 + 1e-9)   # NaN where NaN
    np.testing.assert_array_equal(ta.rebound, tb.rebound)
    np.testing.assert_array_equal(ta.lasts_to_end, tb.lasts_to_end)


def test_solver_table_equals_the_events_of_its_own_frames(tmp_path):
    """A 1 ms solver run: its /contact_events are the events of its frames, and its text says the same."""
    from solver.contact_events import table_from_frames
    from solver.simulate import run_scenario
    path = run_scenario(ROOT / "resources" / "scenarios" / "central_impact_20t.toml", tmp_path / "ci.h5", t_end=1.5)
    with RunFile(path) as r:
        rows, step = r.contact_statistics()
        tab, ref = table_from_run(r), table_from_frames(r)
    assert step == pytest.approx(1e-3) and tab.source == "solver" and tab.sample_step == step
    assert len(rows) == len(tab) == len(ref) >= 3
    for f in ("pair_index", "start", "end", "peak_force", "peak_time", "approach_speed", "rebound",
              "start_frame", "end_frame", "lasts_to_end"):
        np.testing.assert_array_equal(getattr(tab, f), getattr(ref, f), err_msg=f)
    np.testing.assert_allclose(tab.impulse, ref.impulse, rtol=1e-12)      # summed in other blocks


def _with_table(tmp_path, name, rows, step=1e-3):
    """The known-contacts run with a hand-made /contact_events table."""
    path = contact_run.make(tmp_path / f"{name}.h5")
    with h5py.File(path, "a") as f:
        d = f.create_dataset("contact_events", data=rows)
        if step is not None:
            d.attrs["sample_step"] = step
    return path


GOOD = ("head_cone", 0.2, 0.3, 1000.0, 0.25, 50.0, 0.15, 0, 0)


@pytest.mark.parametrize("rows, step, message", [
    ([("no_such_pair", *GOOD[1:])], 1e-3, "row 0 (no_such_pair): pair is not in /contacts"),
    ([("head_cone", 0.3, 0.2, *GOOD[3:])], 1e-3, "must be finite, end >= start"),
    ([(*GOOD[:6], -0.1, 0, 0)], 1e-3, "approach_speed -0.1 must be >= 0"),
    ([GOOD], None, "/contact_events@sample_step: missing"),
    ([GOOD], -1.0, "/contact_events@sample_step: must be a positive number"),
])
def test_bad_contact_events_table_is_refused_with_its_name(tmp_path, rows, step, message):
    from solver.runfile import CONTACT_EVENT_DTYPE
    path = _with_table(tmp_path, "bad", np.array(rows, dtype=CONTACT_EVENT_DTYPE), step)
    with pytest.raises(RunFileError) as e:   # refused when the run is opened (issue 31), not when listed
        RunFile(path)
    assert str(e.value).startswith(f"{path}: /contact_events") and message in str(e.value)


def test_wrong_fields_are_refused_and_the_app_path_reports_it(tmp_path):
    path = _with_table(tmp_path, "fields", np.zeros(2, dtype=[("pair", "S8"), ("start", "f8")]))
    with pytest.raises(RunFileError) as e:   # refused when the run is opened (issue 31): the app's open dialog
        RunFile(path)
    assert f"{path}: /contact_events: wrong dtype" in str(e.value) and "missing fields end" in str(e.value)


def test_a_table_its_writer_never_filled_falls_back_to_the_frames(tmp_path):
    """A writer stopped before finish leaves /contact_events with sample_step NaN: not the solver's (empty) word."""
    with RunFile(contact_run.make(tmp_path / "k.h5")) as r:
        pairs, n = list(r.contact_pairs.values()), r.n_frames
        t, act = r.time, np.stack([r.contact_active(p.name) for p in pairs], 1)
        force = np.stack([r.contact_force(p.name) for p in pairs], 1)
    w = RunWriter(tmp_path / "stopped.h5", RunMeta(variant="synthetic", output_step=1e-3), [], ["passive_craft"],
                  pairs, [], contact_statistics=True)
    w.append(t, np.zeros((n, 0)), np.zeros((n, 1, 3)), np.tile([1.0, 0, 0, 0], (n, 1, 1)), act, force, force * 0)
    w.finish(complete=False)                                  # set_contact_events never called
    with RunFile(tmp_path / "stopped.h5") as r:
        assert r.contact_statistics() is None
        tab = table_from_run(r)
    assert tab.approximate and len(tab) == len(contact_run.EXPECTED) and math.isfinite(tab.sample_step)


@pytest.mark.gui
@pytest.mark.parametrize("which", ["solver", "frames"])
def test_screenshot_events_dock_statistics(qtbot, tmp_path, artifacts, which):
    """The default bundled run at its first head / cone contact (2.007 s, 7 ms, 249.8 N in the solver's log):
    with the solver's statistics, and as a file without them (recomputed from the 0.1 s frames, marked)."""
    from tests.gui_util import main_window
    run = SAMPLE_RUNS / "expert_existing.h5"
    if which == "frames":
        run = strip_solver_statistics(run, tmp_path / "expert_existing_other_writer.h5")
    w = main_window(qtbot, tmp_path / "settings.ini", run, size=(1700, 1000))
    dock = w.events_dock
    w.resizeDocks([dock], [620], Qt.Horizontal)             # every column in view
    dock.set_filter("head_cone")
    w.playback.seek_frame(int(w.diagram.events.start_frame[w.diagram.events.pair_index == w.diagram.events.pairs.index("head_cone")][0]))
    qtbot.wait(50)
    if which == "solver":
        table, _ = RunFile(run).contact_statistics()          # the solver's first head/cone row, as the dock prints it
        row = table[table["pair"] == "head_cone"][0]
        d = dock.model.time_decimals
        assert (dock.cell(0, 1), dock.cell(0, 2), dock.cell(0, 4), dock.cell(0, 6)) == (
            f"{row['start']:.{d}f}", f"{row['end']:.{d}f}", f"{row['peak_force']:.1f}", f"{row['approach_speed']:.4f}")
    else:
        assert dock.model.headerData(4, Qt.Horizontal).replace("\n", " ") == "≈ peak N" and dock.source_label.isVisible()
    legend = w.diagram.lanes.force_legend.text                # the lanes are coloured by the same peaks
    assert ("≈ recomputed from frames" in legend) == (which == "frames")
    out = artifacts / f"events_dock_{which}_statistics.png"
    assert w.grab_image().save(str(out))
