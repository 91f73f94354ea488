"""Following a run file while another process writes it: the panes show its newest frame after a live refresh,
and the refresh runs in steps of bounded work (each reads or refreshes at most a group of datasets)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from solver.runfile import RunFile  # noqa: E402
from tests.gui_util import main_window  # noqa: E402

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
done = 0
for line in sys.stdin:
    if line.strip() == "end":
        w.finish(complete=True)
        print("ok", flush=True)
        break
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
    np.testing.assert_allclose(d.scene.probe_head_position(), pos[run.bodies.index(body)], atol=1e-12)
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
