"""Events bench: the event list (and capture verdict) computed on load of a 300 s, 1 kHz run with 9 pairs.

Prints the median of the repeats: RunFile open, contact-event table, capture verdict. Target: events < 1 s.
    python bench/events_bench.py [--duration 300 --rate 1000 --repeat 5]
The run (written once to /tmp, reused) has every pair of issue 7 with contact detail (normals, speeds):
one contact lasting ~290 s, limiter chatter (hundreds of short contacts), random load-pad taps,
latch pulses, rollers, rings and the pusher at the end.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAIRS = ("head_cone", "head_socket", "latch_slot", "latch_stop", "limiter_cone", "pad_cone", "roller_cone",
         "ring_ring", "pusher")


def contact_records(t: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """(N, 9) active flags and normal forces, N."""
    n = len(t)
    fn = np.zeros((n, len(PAIRS)))

    def put(j, mask, value):
        fn[mask, j] = np.broadcast_to(value, (n,))[mask]

    put(0, (t > 2) & (t < 6) & (np.sin(2 * np.pi * 3 * t) > -0.3), 400 + 200 * np.sin(2 * np.pi * 3 * t))
    put(1, t > 8.0, 1500 + 500 * np.sin(2 * np.pi * 0.7 * t))
    put(2, (np.mod(t, 20.0) > 7.0) & (np.mod(t, 20.0) < 7.05), 2500.0)
    put(3, (np.mod(t, 37.0) > 11.0) & (np.mod(t, 37.0) < 11.3), 3000.0)
    burst = np.zeros(n, bool)
    for t0 in (10, 60, 120, 180, 240):
        burst |= (t > t0) & (t < t0 + 10)
    s18 = np.sin(2 * np.pi * 18 * t)
    put(4, burst & (s18 > 0), 1500 * np.clip(s18, 0, None))
    taps = np.zeros(n, bool)
    for a in rng.integers(0, n - 30, 1000):
        taps[a:a + rng.integers(2, 30)] = True
    put(5, taps, rng.uniform(50, 800, n))
    put(6, (t > 280) & (t < 297), 400 + 200 * np.sin(2 * np.pi * 12 * t))
    put(7, t > 298, 800.0)
    put(8, t > 299, 5000.0)
    return fn > 0, fn


def generate(path: Path, duration: float, rate: float) -> None:
    from solver.runfile import ContactPairInfo, RunMeta, RunWriter
    from tests import contact_run
    n = int(round(duration * rate)) + 1
    dt = 1.0 / rate
    t_all = np.arange(n) * dt
    rng = np.random.default_rng(7)
    active, fn = contact_records(t_all, rng)
    chans = contact_run.channels()   # the known-contacts test run's channels: base loads, strokes, latches
    pairs = [ContactPairInfo(p, p.split("_")[0], p.split("_")[-1], p.replace("_", " / ")) for p in PAIRS]
    meta = RunMeta(comment="BENCH events run", variant="synthetic", run_date="2026-01-01T00:00:00+00:00",
                   solver_version="events_bench", output_step=dt, scenario="events_bench", t_capture=8.0)
    w = RunWriter(path, meta, chans, ["passive_craft"], pairs, [], contact_detail=True)
    npair = len(PAIRS)
    ang = np.linspace(0.1, 1.5, npair)
    nrm = np.stack([np.cos(ang), np.sin(ang), np.zeros(npair)], 1)
    block = 16384
    for a in range(0, n, block):
        b = min(n, a + block)
        t = t_all[a:b]
        k = b - a
        f = fn[a:b, :, None] * nrm[None]
        by_name = dict(Fx=f.sum(1)[:, 0], Fy=f.sum(1)[:, 1], Fz=f.sum(1)[:, 2], probe_stroke=0.1 * np.ones(k),
                       friction_brake=0.02 * np.ones(k), spring_mechanism_1=0.003 * np.sin(t),
                       spring_mechanism_2=0.003 * np.cos(t), latches_engaged=np.where(t >= 8.0, 4.0, 0.0))
        ch = np.stack([by_name.get(c.name, np.zeros(k)) for c in chans], 1)
        w.append(t, ch, np.zeros((k, 1, 3)), np.tile([1.0, 0, 0, 0], (k, 1, 1)), active[a:b], f,
                 np.zeros((k, npair, 3)), np.repeat(nrm[None], k, 0), np.zeros((k, npair)),
                 np.where(active[a:b], 0.05, 0.0))
    w.finish(t_capture=8.0, complete=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=300.0)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    from solver.contact_events import table_from_run
    from solver.runfile import RunFile
    path = Path(tempfile.gettempdir()) / f"dockmnemo_events_bench_{a.duration:g}s_{a.rate:g}Hz.h5"
    if not path.exists():
        t0 = time.perf_counter()
        part = path.with_suffix(".part")
        generate(part, a.duration, a.rate)
        part.replace(path)          # a failed generation leaves no half-written file behind
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t0:.1f} s")
    try:
        from viewer.capture_verdict import evaluate, load_criteria
        criteria = load_criteria()
    except ImportError:
        evaluate = criteria = None
    t_open, t_events, t_verdict = [], [], []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run = RunFile(path)
        t1 = time.perf_counter()
        tab = table_from_run(run)
        t2 = time.perf_counter()
        if evaluate is not None:
            verdict = evaluate(run, criteria)
        t3 = time.perf_counter()
        run.close()
        t_open.append(t1 - t0)
        t_events.append(t2 - t1)
        t_verdict.append(t3 - t2)
    med = statistics.median
    print(f"run: {a.duration:g} s at {a.rate:g} Hz, {len(PAIRS)} pairs with normals, {len(tab)} contact events")
    print(f"median of {a.repeat}: RunFile open {med(t_open) * 1e3:.0f} ms, event table {med(t_events) * 1e3:.0f} ms"
          + (f", capture verdict {med(t_verdict) * 1e3:.0f} ms" if evaluate is not None else ""))
    if evaluate is not None:
        print(f"verdict: {verdict.line()}")
    print(f"target: event table < 1000 ms -> {'met' if med(t_events) < 1.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
