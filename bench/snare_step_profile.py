"""CPU per step of the snare's kernel (run_block) from the rig's start, for the speed choices: Gauss points, step,
axial damping. Usage: python -m bench.snare_step_profile [SECONDS] (prints CPU microseconds per step)."""
from __future__ import annotations

import sys
import time

from solver.mechanisms.snare import RESOURCES
from solver.mechanisms.snare import dynamics as D
from solver.mechanisms.snare.model import load_snare
from solver.mechanisms.snare.simulate import SnareKernels


def per_step(m, sim: float) -> float:
    """CPU microseconds per step of `sim` simulated seconds (frames of 10 ms), compile excluded."""
    spo = int(round(0.01 / m.step))
    k = SnareKernels(m, spo, 100)
    k.advance(0.0, 2)                                    # compile (or load) first
    c0 = time.process_time()
    k.advance(0.02, int(sim / 0.01))
    return (time.process_time() - c0) / (sim / m.step) * 1e6


if __name__ == "__main__":
    sim = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    m = load_snare(RESOURCES / "scenarios" / "suspension_rig.toml")
    for ng in (4, 3):
        m.P[D.P_NG] = ng
        print(f"gauss points {ng}: {per_step(m, sim):.2f} us CPU per step (h = {m.step * 1e6:.0f} us)", flush=True)
