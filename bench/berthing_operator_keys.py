"""A 60 s operator session driven by key events through the app's Run -> Berthing (operator...) dialog (the real
MainWindow, QTest key presses and releases on the dialog at the session's times (the solver is locked to wall time), as tests/test_berthing_operator_gui.py
does for 4 s), then replayed from its recorded commands: every channel and every frame's body poses compared bit for
bit. Prints the real-time factor and headroom the dialog showed, key events sent, frames, and the comparison; exit 1
on any difference.
    xvfb-run -a -s "-screen 0 1920x1200x24" python bench/berthing_operator_keys.py [--t-end 60]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCEN = ROOT / "resources" / "berthing" / "scenarios" / "mrm1_operator.toml"
# (simulated s of the session, as the operator sees it in the panes, press/release, key): both hand controllers, every axis, brakes once
SCRIPT = ((1.0, "press", "W"), (12.0, "release", "W"),
          (14.0, "press", "A"), (16.0, "release", "A"), (17.0, "press", "D"), (19.0, "release", "D"),
          (20.0, "press", "R"), (22.0, "release", "R"), (23.0, "press", "F"), (25.0, "release", "F"),
          (26.0, "press", "U"), (28.0, "release", "U"), (29.0, "press", "O"), (31.0, "release", "O"),
          (32.0, "press", "I"), (34.0, "release", "I"), (35.0, "press", "K"), (37.0, "release", "K"),
          (38.0, "press", "J"), (40.0, "release", "J"), (41.0, "press", "L"), (43.0, "release", "L"),
          (44.0, "press", "S"), (45.5, "press", "J"), (47.0, "release", "S"), (47.5, "release", "J"),
          (53.0, "press", "B"), (53.1, "release", "B"))


def wait_until(cond, timeout_s: float, what: str):
    from PySide6.QtTest import QTest
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout_s:
            raise SystemExit(f"timed out after {timeout_s:.0f} s waiting for {what}")
        QTest.qWait(20)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=60.0)
    a = ap.parse_args(argv)
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from app.main_window import MainWindow
    from solver.mechanisms.berthing.simulate import replay_session
    from solver.runfile import RunFile
    with tempfile.TemporaryDirectory() as td:
        td = Path(td)
        s = QSettings(str(td / "settings.ini"), QSettings.IniFormat)
        s.setValue("runs_dir", str(td / "runs"))
        w = MainWindow(s)
        w.resize(1600, 1000)
        w.show()
        QTest.qWaitForWindowExposed(w)
        w.act_operator.trigger()                           # Run -> Berthing (operator...)
        dlg = w.operator
        shown = []                                         # (factor, headroom, behind) as the dialog shows them
        w.runner.realtime.connect(lambda f, h, b: shown.append((f, h, b)))
        dlg.length.setValue(a.t_end)
        sim = [0.0]                                        # the session's simulated time (PROGRESS lines)
        w.runner.progress.connect(lambda t, t_end, eta: sim.__setitem__(0, t))
        dlg.start_button.click()
        wait_until(lambda: "real time" in dlg.status.text(), 300, "the solver's first block")
        print(f"first real-time update at t = {sim[0]:.2f} s: {dlg.status.text()}")
        dlg.activateWindow()
        t0 = time.perf_counter()
        todo, n_keys = list(SCRIPT), 0
        while w.runner.running:
            el = time.perf_counter() - t0
            while todo and todo[0][0] <= sim[0]:
                _, kind, key = todo.pop(0)
                (QTest.keyPress if kind == "press" else QTest.keyRelease)(dlg, getattr(Qt, f"Key_{key}"))
                n_keys += 1
            if el > a.t_end + 120:
                raise SystemExit("the session did not end 120 s after its length")
            QTest.qWait(10)
        print(f"session ran {time.perf_counter() - t0:.1f} s of wall time after its first real-time update")
        QTest.qWait(300)
        status = dlg.status.text()
        print(f"session: {status}")
        if todo:
            print(f"{len(todo)} key events not sent (the session ended first)")
        rt = np.array(shown, dtype=float)
        if not len(rt):
            print("the dialog never showed a real-time factor")
            return 1
        print(f"dialog showed {len(rt)} real-time updates: real-time factor last x{rt[-1, 0]:.4f}, lowest after the "
              f"first 5 x{rt[5:, 0].min() if len(rt) > 5 else rt[:, 0].min():.3f}; headroom median "
              f"x{np.median(rt[:, 1]):.0f}, lowest x{rt[:, 1].min():.0f}; shown behind {int(rt[:, 2].sum())} times")
        print(f"key events sent: {n_keys} ({n_keys // 2} presses and releases on the dialog); command lines the "
              f"dialog sent: {len(dlg.sent)}")
        rec = dlg.out
        t1 = time.process_time()
        again = replay_session(rec, SCEN, td / "replay.h5")
        print(f"replay: {time.process_time() - t1:.2f} CPU s")
        with RunFile(rec) as r, RunFile(again) as b:
            behind = [e for e in r.events if "behind" in e.text]
            moved = {c: float(np.abs(r.channel(c)).max()) for c in [f"cmd_{i}" for i in range(1, 7)] + ["brakes"]}
            print(f"recorded {r.n_frames} frames ({r.time[-1]:.2f} s), {len(r.bodies)} bodies, behind events "
                  f"{len(behind)}; insertion at the end {r.channel('insertion')[-1]:.3f} m, peak contact "
                  f"{r.channel('contact_force').max():.0f} N; |command| max " +
                  ", ".join(f"{c} {v:g}" for c, v in moved.items()))
            diff = None
            if r.n_frames != b.n_frames:
                diff = f"frames {r.n_frames} recorded, {b.n_frames} replayed"
            elif list(r.channels) != list(b.channels):
                diff = "channel lists differ"
            if diff is None:
                for c in r.channels:
                    x, y = r.channel(c), b.channel(c)
                    if not np.array_equal(x, y):
                        i = int(np.flatnonzero(x != y)[0])
                        diff = f"channel {c} at frame {i}: {x[i]!r} recorded, {y[i]!r} replayed"
                        break
            n_poses = 0
            if diff is None:
                for i in range(r.n_frames):
                    (p, q), (p2, q2) = r.poses(i), b.poses(i)
                    for k, name in enumerate(r.bodies):
                        if not (np.array_equal(p[k], p2[k]) and np.array_equal(q[k], q2[k])):
                            diff = f"pose of {name} at frame {i}: {p[k]} {q[k]} recorded, {p2[k]} {q2[k]} replayed"
                            break
                        n_poses += 1
                    if diff:
                        break
            ok_dims = "finished" in status and (moved["brakes"] == 1.0) and all(moved[f"cmd_{i}"] > 0 for i in range(1, 7))
            if diff:
                print(f"first difference: {diff}")
                return 1
            print(f"identical: {len(r.channels)} channels, {n_poses} poses ({r.n_frames} frames x {len(r.bodies)} "
                  f"bodies)")
        w.close()
        if not ok_dims:
            print("the session did not finish, or a key did not reach the solver (see above)")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
