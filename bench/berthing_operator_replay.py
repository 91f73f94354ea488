"""A 60 s operator session of mrm1_operator.toml driven like a person would (the hand-controller lines of the app's
dialog sent on the worker's stdin at wall-clock times), then replayed from its recorded commands: every channel and
body pose compared. Prints the real-time factor, headroom, behind events and the comparison.
    python bench/berthing_operator_replay.py [--t-end 60]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCEN = ROOT / "resources" / "berthing" / "scenarios" / "mrm1_operator.toml"
SCRIPT = ((1.0, "CMD 1 0 0 0 0 0 0"), (12.0, "CMD 1 -0.3 0.2 0 0 0 0"), (18.0, "CMD 1 0 0 0 0 0.5 0"),
          (22.0, "CMD 1 0 0 0 0 0 0"), (40.0, "CMD 0 0 0 0 0 0 0"), (50.0, "CMD 0 0 0 0 0 0 1"))


def main(argv=None) -> int:
    from solver.mechanisms.berthing.simulate import replay_session
    from solver.runfile import RunFile
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=60.0)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as td:
        rec = Path(td) / "session.h5"
        p = subprocess.Popen([sys.executable, "-m", "app", "berthing-operator", str(SCEN), "-o", str(rec), "--t-end",
                              str(a.t_end), "--progress-lines"], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, bufsize=1)
        last = ""
        for line in p.stdout:                      # wait for the first block
            if line.startswith("PROGRESS"):
                break
        t0 = time.perf_counter()
        todo = list(SCRIPT)
        import threading
        lines = []
        threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True).start()
        while p.poll() is None:
            el = time.perf_counter() - t0
            while todo and todo[0][0] <= el:
                p.stdin.write(todo.pop(0)[1] + "\n")
                p.stdin.flush()
            time.sleep(0.01)
        last = [x for x in lines if x.startswith("REALTIME")]
        print(f"session exit {p.returncode}; last {last[-1].strip() if last else '-'}")
        rt = np.array([[float(v) for v in x.split()[1:3]] for x in last])
        print(f"real-time factor min {rt[5:, 0].min():.3f} / last {rt[-1, 0]:.4f}; headroom min {rt[5:, 1].min():.0f}x, "
              f"median {np.median(rt[:, 1]):.0f}x")
        t1 = time.process_time()
        again = replay_session(rec, SCEN, Path(td) / "replay.h5")
        print(f"replay: {time.process_time() - t1:.2f} CPU s")
        with RunFile(rec) as r, RunFile(again) as b:
            behind = [e for e in r.events if "behind" in e.text]
            same = all(np.array_equal(r.channel(c), b.channel(c)) for c in r.channels)
            bodies = all(np.array_equal(x, y) for i in range(0, r.n_frames, 7) for x, y in zip(r.poses(i), b.poses(i)))
            print(f"recorded {r.n_frames} frames ({r.time[-1]:.2f} s), insertion at the end "
                  f"{r.channel('insertion')[-1]:.3f} m, peak contact {r.channel('contact_force').max():.0f} N, "
                  f"T capture {r.meta.t_capture:.2f} s; behind events {len(behind)}; replay identical: channels "
                  f"{same}, bodies {bodies}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
