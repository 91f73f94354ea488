"""Contact-event statistics: exact intervals, peaks and impulses on hand-built records."""
import numpy as np
import pytest

from solver.contact_events import intervals, pair_events, run_events
from solver.runfile import RunFile


def test_intervals_edges():
    s, e = intervals(np.array([1, 1, 0, 0, 1, 0, 1, 1, 1], bool))
    assert s.tolist() == [0, 4, 6] and e.tolist() == [2, 5, 9]
    s, e = intervals(np.zeros(5, bool))
    assert len(s) == len(e) == 0


def test_triangle_pulse_exact_peak_and_impulse():
    dt = 0.001
    t = np.arange(0, 1.0, dt)
    i = np.arange(len(t))
    fmag = np.clip(1000.0 * (1 - np.abs(i - 300) / 50), 0, None)      # triangle, peak 1000 N, base 0.1 s
    active = fmag > 0
    normal = np.tile([0.6, 0.8, 0.0], (len(t), 1))
    force = fmag[:, None] * normal + np.tile([0.8, -0.6, 0.0], (len(t), 1)) * 0.2 * fmag[:, None]  # + friction
    ns = np.where(active, 0.12, 0.0)
    (ev,) = pair_events("head_cone", t, active, force, normal, ns)
    assert ev.start == pytest.approx(0.251) and ev.end == pytest.approx(0.350)
    assert ev.peak_force == pytest.approx(1000.0) and ev.peak_time == pytest.approx(0.3)
    assert ev.impulse == pytest.approx(0.5 * 1000.0 * 0.1, rel=1e-9)   # triangle area, exact
    assert ev.approach_speed == 0.12 and not ev.rebound


def test_rebounds_and_total_impulse():
    t = np.linspace(0, 2, 2001)
    f = np.zeros((len(t), 3))
    active = np.zeros(len(t), bool)
    for a, b, amp in ((100, 150, 500.0), (300, 320, 200.0), (1500, 1600, 50.0)):
        active[a:b] = True
        f[a:b, 0] = amp
    evs = pair_events("latch_stop", t, active, f)
    assert [e.rebound for e in evs] == [True, False, False]            # 0.15 s gap, then a 1.18 s gap
    assert [e.peak_force for e in evs] == [500.0, 200.0, 50.0]
    assert sum(e.impulse for e in evs) == pytest.approx(np.trapezoid(np.linalg.norm(f, axis=1), t))
    assert np.isnan(evs[0].approach_speed)


def test_contact_to_the_last_frame():
    t = np.arange(6) * 0.1
    active = np.array([0, 0, 0, 1, 1, 1], bool)
    f = np.zeros((6, 3))
    f[3:, 2] = 10.0
    (ev,) = pair_events("ring_ring", t, active, f)
    assert ev.end_frame == 5 and ev.impulse == pytest.approx(0.5 * 0.1 * 10 + 10 * 0.2)


def test_run_events_match_run_flags(small_run):
    with RunFile(small_run) as r:
        evs = run_events(r)
        for name in r.contact_pairs:
            mine = [e for e in evs if e.pair == name]
            s, _ = intervals(r.contact_active(name))
            assert [e.start_frame for e in mine] == s.tolist()
        starts = [e.start for e in evs]
        assert starts == sorted(starts)
