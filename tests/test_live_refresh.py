"""Following a run file while another process writes it: the panes show its newest frame after a live refresh,
and the refresh runs in steps of bounded work (each reads or refreshes at most a group of datasets)."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from solver.runfile import TIME_CHUNK, RunFile  # noqa: E402
from tests.gui_util import label_texts, main_window  # noqa: E402
from tests.synthetic_run import PAIRS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BLOCK = 3000   # frames per written block: not a whole HDF5 chunk (4096), so chunks are rewritten as they fill

WRITER = f"""
import sys, tomllib
import numpy as np
sys.path.insert(0, {str(ROOT)!r})
from solver.runfile import RunMeta, RunWriter
from tests.synthetic_run import BODIES, PAIRS, SCENARIO, channels_spec, geometry
cfg = tomllib.loads(SCENARIO.read_text())
specs = channels_spec(cfg["mechanism"])
meta = RunMeta(comment="live refresh test", variant="synthetic", output_step=1e-3, scenario="live")
w = RunWriter(sys.argv[1], meta, specs, BODIES, PAIRS, geometry(cfg["geometry"]), live=True)
nb, npairs, c = len(BODIES), len(PAIRS), len(specs)
done, t_capture = 0, float("nan")
for line in sys.stdin:
    if line.strip() == "end":
        w.finish(t_capture=t_capture, complete=True)
        print("ok", flush=True)
        break
    if line.startswith("capture"):   # the solver has captured: readers of the growing file see it at their refresh
        t_capture = float(line.split()[1])
        w.set_capture(t_capture)
        w.flush()
        print("ok", flush=True)
        continue
    t = (done + np.arange({BLOCK})) * 1e-3
    data = np.sin(t[:, None] * (1.0 + np.arange(c))) + 0.01 * np.arange(c)
    pos = np.zeros(({BLOCK}, nb, 3))
    pos[:, :, 0] = (0.3 - 0.02 * t)[:, None] * np.arange(1, nb + 1)
    q = np.zeros(({BLOCK}, nb, 4))
    q[:, :, 0] = 1.0
    active = (np.sin(3 * t)[:, None] > np.linspace(-0.5, 0.9, npairs)).astype("u1")
    force = np.repeat(active[:, :, None], 3, axis=2) * 200.0
    w.append(t, data, pos, q, active, force, np.zeros(({BLOCK}, npairs, 3)))
    w.flush()
    done += {BLOCK}
    print("ok", flush=True)
"""


@pytest.fixture
def writer(tmp_path):
    path = tmp_path / "live.h5"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def send(cmd="go"):
        proc.stdin.write(cmd + "\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "ok"

    yield path, send
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def assert_shows_newest_frame(w):
    d, run = w.diagram, w.run
    n = run.n_frames
    last = n - 1
    assert w.playback.n_frames == n and w.playback.frame == last
    assert d.scene.current_frame == last and d.devices.frame == last and d.plots.frame == last
    t = run.time[last]
    assert d.plots.cursors[0].value() == pytest.approx(t) and d.lanes.cursor.value() == pytest.approx(t)
    for name, curve in zip(d.plots.names, d.plots.curves):
        assert curve.xData[-1] == pytest.approx(t)
        assert curve.yData[-1] == pytest.approx(run.channel(name, last, n)[0])
    for name in d.devices.shown_channels():
        assert d.devices.value(name) == pytest.approx(run.channel(name, last, n)[0])
    pos, _ = run.poses(last)
    body = run.geometry["probe_head"].body
    np.testing.assert_allclose(d.scene.part_matrix("probe_head")[:3, 3], pos[run.bodies.index(body)], atol=1e-12)
    assert f"{t:.4f}" in d.time_text()


def test_panes_follow_a_growing_run_in_steps_of_bounded_work(qtbot, tmp_path, writer):
    path, send = writer
    send()
    w = main_window(qtbot, tmp_path / "settings.ini")
    assert w.open_run(path), w.last_error
    run, d = w.run, w.diagram
    assert run.live and run.n_frames == BLOCK
    w.playback.seek_frame(BLOCK - 1)

    send()                                         # the writer flushes a block; refresh step by step
    ops, labels, prev = [], [], run.io_ops
    for label in d._live_steps(follow=True):       # what start_live_refresh runs, one step per event-loop turn
        ops.append(run.io_ops - prev)
        labels.append(label)
        prev = run.io_ops
    assert run.n_frames == 2 * BLOCK
    assert_shows_newest_frame(w)
    assert len(ops) > 5 and max(ops) <= RunFile.REFRESH_GROUP + 1, list(zip(labels, ops))
    assert ops[-2:] == [0, 0], list(zip(labels, ops))     # showing the frame reads nothing: it was read ahead

    send()                                         # the same through the event loop, as the window does it
    with qtbot.waitSignal(d.liveRefreshed, timeout=20000) as sig:
        assert d.start_live_refresh()
        assert not d.start_live_refresh()          # one refresh at a time; a call meanwhile is dropped
        assert w.playback.n_frames == 2 * BLOCK    # nothing shown before its data are read
    assert sig.args[0] == BLOCK and not d.live_refreshing
    assert_shows_newest_frame(w)

    send()
    assert d.refresh_live(follow=False)            # all at once, staying on the shown frame
    assert w.playback.frame == 3 * BLOCK - 1 and w.playback.n_frames == 4 * BLOCK
    w.playback.end()
    assert_shows_newest_frame(w)
    send("end")


def test_a_followed_run_reads_as_the_finished_file_past_each_chunk(writer):
    """RunFile opened on the first block and refreshed as the file grows past 3 chunks reads every frame as the
    finished file holds it (not frame f mod 4096)."""
    path, send = writer
    send()
    run = RunFile(path)
    assert run.live and run.n_frames == BLOCK
    seen = []
    for _ in range(4):                              # 3000 … 15000 frames: past 4096, 8192 and 12288
        send()
        assert run.refresh()
        n = run.n_frames
        seen.append((n, run.time.copy(), {c: run.channel(c) for c in run.channels}, run.contact_force(PAIRS[0].name),
                     np.array([run.poses(f)[0] for f in range(0, n, 97)])))
    send("end")
    run.close()
    with RunFile(path) as done:
        assert done.meta.complete and done.n_frames == 5 * BLOCK
        for n, t, ch, force, pos in seen:
            np.testing.assert_array_equal(t, done.time[:n])
            for c, v in ch.items():
                np.testing.assert_array_equal(v, done.channel(c, 0, n), err_msg=f"{c} with {n} frames")
            np.testing.assert_array_equal(force, done.contact_force(PAIRS[0].name, 0, n))
            np.testing.assert_array_equal(pos, np.array([done.poses(f)[0] for f in range(0, n, 97)]))


def test_t_capture_of_a_growing_run_as_soon_as_the_writer_has_it(writer):
    from viewer.run_facts import capture_text
    path, send = writer
    send()
    run = RunFile(path)
    assert run.live and capture_text(run) == "no capture yet"
    send()
    assert run.refresh() and capture_text(run) == "no capture yet"
    send("capture 0.561")                           # (the writer flushes; no new frames)
    assert not run.refresh()
    assert run.t_capture == 0.561 and capture_text(run) == "0.561 s"
    send("end")
    run.close()
    with RunFile(path) as done:
        assert done.t_capture == 0.561 and capture_text(done) == "0.561 s"


# ---- a real solver run followed past several time chunks ------------------------------------------------------
SCEN = ROOT / "resources" / "scenarios"
CHUNK_EDGES = [f for k in (1, 2, 3) for f in (k * TIME_CHUNK - 1, k * TIME_CHUNK)]   # 4095/4096, 8191/8192, …


def shown(w) -> dict:
    """What the window shows at its frame: every pane's numbers and texts, read through the panes."""
    d = w.diagram
    s = d.scene
    return {
        "frame": w.playback.frame,
        "time": re.sub(r"(/\d+| of \d+ so far)$", "", d.time_text()),   # (without the number of frames: it grows)
        "devices": {n: d.devices.value(n) for n in d.devices.shown_channels()},
        "T Current box": d.plots.values(),
        "curves": {n: (np.array(c.xData), np.array(c.yData)) for n, c in zip(d.plots.names, d.plots.curves)},
        "scene readouts": (label_texts(s), s.time_text()),
        "scene parts": {p: (s.part_matrix(p), s.part_is_red(p), s.part_visible(p)) for p in s.part_names()},
        "force labels": {p: (text, tuple(pt)) for p, (text, pt) in s.force_labels().items()},
        "T capture": d.plots.fact_labels["T capture"].text(),
    }


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, float)):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


@pytest.mark.gui
@pytest.mark.slow
def test_live_view_shows_the_file_on_both_sides_of_each_chunk_boundary(qtbot, tmp_path, artifacts):
    """Run → New run… of a 13 s run (3 chunks and more); the worker is paused after its progress lines so that the
    frames around each chunk boundary are looked at while the run is still being written, then again in the
    finished file: every pane shows the same, and T capture as soon as the solver has it."""
    import os
    import signal

    from PySide6.QtCore import Qt

    w = main_window(qtbot, tmp_path / "settings.ini")
    w.settings.setValue("runs_dir", str(tmp_path / "runs"))
    dlg = w.new_run_dialog(SCEN / "central_impact_20t.toml")
    qtbot.waitExposed(dlg)
    dlg.t_end_edit.selectAll()
    qtbot.keyClicks(dlg.t_end_edit, "13")
    qtbot.waitUntil(dlg.run_button.isEnabled, timeout=3000)
    paused, todo, live = [], list(CHUNK_EDGES), {}

    def pause(*_):   # after the window's own progress handling (it opens or refreshes the growing file)
        if todo and not paused and w.runner.running:
            os.kill(w.runner.proc.processId(), signal.SIGSTOP)
            paused.append(True)

    w.runner.progress.connect(pause)
    qtbot.mouseClick(dlg.run_button, Qt.LeftButton)
    d = w.diagram
    try:
        while todo:
            qtbot.waitUntil(lambda: bool(paused) or not w.runner.running, timeout=120000)
            assert paused, f"the worker ended before frames {todo} were seen live: {w.last_run_message}"
            qtbot.waitUntil(lambda: not d.live_refreshing, timeout=20000)
            d.refresh_live(follow=True)        # every frame the paused worker has flushed
            assert w.run.live and w.run.path.parent == tmp_path / "runs"
            for f in [f for f in todo if f < w.run.n_frames]:
                w.playback.seek_frame(f)
                live[f] = shown(w)
                todo.remove(f)
                if f == TIME_CHUNK:
                    assert w.grab_image().save(str(artifacts / "live_chunk_boundary.png"))
            paused.clear()
            os.kill(w.runner.proc.processId(), signal.SIGCONT)
    finally:
        if paused and w.runner.running:
            os.kill(w.runner.proc.processId(), signal.SIGCONT)
    qtbot.waitUntil(lambda: not w.runner.running, timeout=120000)
    qtbot.waitUntil(lambda: w.run is not None and not w.run.live, timeout=20000)
    final = w.run
    assert final.meta.complete and final.n_frames > CHUNK_EDGES[-1], w.last_run_message
    assert 0.0 < final.t_capture < 1.0
    wrong = []
    for f, seen in live.items():
        w.playback.seek_frame(f)
        now = shown(w)
        for key, value in seen.items():
            if key == "curves":   # the loaded span differs (the growing run was shorter): compare with the file
                for name, (x, y) in value.items():
                    a = final.frame_at(x[0])
                    if not (np.array_equal(x, final.time[a:a + len(x)])
                            and np.array_equal(y, final.channel(name, a, a + len(x)), equal_nan=True)):
                        wrong.append(f"frame {f}: plot {name} over frames {a}..{a + len(x)} differs from the file")
            elif not same(value, now[key]):
                wrong.append(f"frame {f}: {key} live {value} finished {now[key]}"[:400])
        for name, v in seen["devices"].items():
            if not same(v, final.channel_at(name, f)):
                wrong.append(f"frame {f}: device {name} live {v}, file {final.channel_at(name, f)}")
    assert not wrong, "\n".join(wrong[:25])
    assert live[CHUNK_EDGES[0]]["T capture"] == f"{final.t_capture:.3f} s"
