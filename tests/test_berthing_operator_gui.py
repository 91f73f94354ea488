"""Run -> Berthing (operator…) (issue 36, seed 001 §8.4): an operator session driven by key events in the app, the
solver in its worker locked to wall time, the panes following the growing file; the recorded session replays to
identical frames from its scenario."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver.runfile import RunFile
from tests.gui_util import main_window

pytestmark = pytest.mark.gui
SCEN = Path(__file__).resolve().parent.parent / "resources" / "berthing" / "scenarios" / "mrm1_operator.toml"


def test_a_keyboard_operator_session_is_recorded_and_replays_identically(qtbot, tmp_path, artifacts):
    from PySide6.QtCore import Qt

    from solver.mechanisms.berthing.simulate import replay_session
    w = main_window(qtbot, tmp_path / "settings.ini", activate=False)
    w.settings.setValue("runs_dir", str(tmp_path / "runs"))
    w.act_operator.trigger()
    dlg = w.operator
    dlg.length.setValue(4.0)
    dlg.start_button.click()
    qtbot.waitUntil(lambda: "real time" in dlg.status.text(), timeout=120000)    # the worker solves (after loading)
    dlg.activateWindow()
    qtbot.keyPress(dlg, Qt.Key_W)                     # translation controller: in along the probe
    qtbot.wait(700)
    qtbot.keyPress(dlg, Qt.Key_J)                     # rotation controller: yaw, both held
    qtbot.wait(500)
    qtbot.keyRelease(dlg, Qt.Key_W)
    qtbot.keyRelease(dlg, Qt.Key_J)
    qtbot.waitUntil(lambda: w.run is not None and w.run.live and w.run.n_frames > 20, timeout=10000)
    w.grab().save(str(artifacts / "berthing_operator_live.png"))
    dlg.grab().save(str(artifacts / "berthing_operator_dialog.png"))
    assert "real time x" in dlg.status.text() and "headroom x" in dlg.status.text()
    qtbot.waitUntil(lambda: not w.runner.running, timeout=30000)
    assert dlg.sent[:2] == ["CMD 1 0 0 0 0 0 0", "CMD 1 0 0 0 0 1 0"]
    text = dlg.status.text()
    assert "finished" in text, text
    rec = dlg.out
    with RunFile(rec) as r:
        assert r.meta.mechanism_type == "berthing" and r.n_frames == 201
        cmd1, cmd6 = r.channel("cmd_1"), r.channel("cmd_6")
        assert cmd1.max() == pytest.approx(0.03, rel=1e-6) and cmd6.max() > 0     # the keys reached the solver
        assert r.channel("cmd_1")[-1] == 0.0
    again = replay_session(rec, SCEN, tmp_path / "replay.h5")
    with RunFile(rec) as a, RunFile(again) as b:
        assert a.n_frames == b.n_frames
        for name in ("joint_1", "joint_7", "insertion", "lateral_error", "tau_4", "total_energy"):
            assert np.array_equal(a.channel(name), b.channel(name)), name
    assert w.run is not None and w.run.path == rec and not w.run.live                # the session opened as a run
