"""Contact-event statistics: exact intervals, peaks and impulses on hand-built records."""
import math

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


# ---- the hand-built run with known contacts ----------------------------------------------------

import csv  # noqa: E402

from solver.contact_events import (CSV_COLUMNS, EventAccumulator, event_rows, normal_force,  # noqa: E402
                                   table_from_run, write_csv)
from solver.runfile import RunMeta, RunWriter  # noqa: E402
from tests import contact_run  # noqa: E402


@pytest.fixture(scope="module")
def known_run(tmp_path_factory):
    return contact_run.make(tmp_path_factory.mktemp("known") / "known.h5")


@pytest.mark.parametrize("block", [256, 4096, 1 << 20])
def test_known_run_exact_intervals_peaks_impulses(known_run, block):
    with RunFile(known_run) as r:
        tab = table_from_run(r, block=block)
        t = r.time
    exp = contact_run.EXPECTED
    assert len(tab) == len(exp)
    for i, k in enumerate(exp):
        assert tab.pair(i) == k.pair
        assert tab.start_frame[i] == k.first and tab.start[i] == t[k.first]
        assert tab.end_frame[i] == min(k.stop, contact_run.N - 1) and tab.end[i] == t[min(k.stop, contact_run.N - 1)]
        assert tab.peak_force[i] == pytest.approx(k.peak, rel=1e-12)         # normal part only, not |F|
        assert tab.peak_time[i] == t[k.peak_frame]
        assert tab.impulse[i] == pytest.approx(k.impulse, rel=1e-12)
        assert tab.approach_speed[i] == k.approach
        assert bool(tab.rebound[i]) == k.rebound
        assert bool(tab.lasts_to_end[i]) == (k.stop == contact_run.N)
    assert tab.start_frames().tolist() == sorted({k.first for k in exp})


def test_without_normals_peak_is_the_force_magnitude(tmp_path):
    with RunFile(contact_run.make(tmp_path / "nodetail.h5", detail=False)) as r:
        tab = table_from_run(r)
    assert tab.peak_force[0] == pytest.approx(1000.0 * math.hypot(1.0, 0.3), rel=1e-12)
    assert np.isnan(tab.approach_speed).all()


def _reference(t, active, fn, window=0.5):
    """Naive per-interval loop: trapezoid of the record from the frame before the start to the end frame."""
    s, e = intervals(active)
    n = len(t)
    out = []
    for k, (a, b) in enumerate(zip(s, e)):
        lo, hi = max(a - 1, 0), min(b, n - 1)
        f = np.where(active, fn, 0.0)[lo:hi + 1]
        imp = float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(t[lo:hi + 1])))
        pk = a + int(np.argmax(fn[a:b]))
        reb = k + 1 < len(s) and b < n and t[s[k + 1]] - t[b] <= window
        out.append((int(a), int(hi), float(fn[pk]), float(t[pk]), imp, bool(reb)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_blocks_of_any_size_match_a_naive_loop(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, n))
    active = np.zeros(n, bool)
    for _ in range(int(rng.integers(0, 25))):
        a = int(rng.integers(0, n))
        active[a:a + int(rng.integers(1, 200))] = True
    if seed == 0:
        active[:5] = active[-5:] = True                    # touching at the first and last frames
    if seed == 1:
        active[n // 2 - 7:n // 2] = True                   # a contact ending right before a skipped block
    normal = rng.normal(size=(n, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    force = rng.uniform(0, 500, (n, 1)) * normal + rng.normal(0, 50, (n, 3))
    fn = normal_force(force, normal)
    fn[rng.random(n) < 0.05] = 0.0                          # ties and zero-force active frames
    force = force * 0 + fn[:, None] * normal
    speed = rng.normal(size=n)
    acc = EventAccumulator(["p"])
    a = 0
    while a < n:                                           # random cuts, skipping blocks where the pair is apart
        b = min(n, a + int(rng.integers(1, 300)))
        if seed == 1 and a < n // 2 < b:
            b = n // 2
        if not active[a:b].any() and rng.random() < 0.7:
            acc.skip_pair(0, t[a], t[b - 1], b - a)
        else:
            acc.append_pair(0, t[a:b], active[a:b], force[a:b], normal[a:b], speed[a:b])
        a = b
    tab = acc.table()
    ref = _reference(t, active, fn)
    assert len(tab) == len(ref)
    for i, (s0, e0, pk, pt, imp, reb) in enumerate(ref):
        assert (tab.start_frame[i], tab.end_frame[i]) == (s0, e0)
        assert tab.peak_force[i] == pytest.approx(pk, rel=1e-12) and tab.peak_time[i] == pt
        assert tab.impulse[i] == pytest.approx(imp, rel=1e-9, abs=1e-12)
        v = tab.approach_speed[i]                           # a pair separating at its first frame: not resolved
        assert (v == speed[s0]) if speed[s0] >= 0 else np.isnan(v)
        assert bool(tab.rebound[i]) == reb


def test_event_rows_round_trip_through_the_run_writer(known_run, tmp_path):
    with RunFile(known_run) as r:
        tab = table_from_run(r)
        pairs = list(r.contact_pairs.values())
    rows = event_rows(tab)
    begins = [row for row in rows if row[1] == "contact_begin"]
    ends = [row for row in rows if row[1] == "contact_end"]
    assert [(row[0], row[2]) for row in begins] == [(k.first * contact_run.DT, k.pair) for k in contact_run.EXPECTED]
    assert len(ends) == len(tab) - 1                        # ring / ring still touches at the end
    first = begins[0][3]
    assert first.startswith("head / cone:") and "peak normal force 1000.0 N at 0.2500 s" in first
    assert "impulse 50.000 N*s" in first and "approach speed 0.1500 m/s" in first and first.endswith("rebound")
    w = RunWriter(tmp_path / "ev.h5", RunMeta(variant="synthetic"), [], ["passive_craft"], pairs, [])
    w.append(np.arange(3) * 0.1, np.zeros((3, 0)), np.zeros((3, 1, 3)), np.tile([1.0, 0, 0, 0], (3, 1, 1)),
             np.zeros((3, len(pairs))), np.zeros((3, len(pairs), 3)), np.zeros((3, len(pairs), 3)))
    for row in rows:
        w.add_event(*row)
    w.finish(complete=True)
    with RunFile(tmp_path / "ev.h5") as back:
        assert [(e.time, e.kind, e.pair, e.text) for e in back.events] == sorted(rows, key=lambda r: r[0])


def test_csv_export_content(known_run, tmp_path):
    with RunFile(known_run) as r:
        tab = table_from_run(r)
    path = write_csv(tab, tmp_path / "events.csv")
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == CSV_COLUMNS
    body = rows[1:]
    assert len(body) == len(contact_run.EXPECTED)
    col = {name: i for i, name in enumerate(CSV_COLUMNS)}
    for row, k in zip(body, contact_run.EXPECTED):
        assert row[col["pair"]] == k.pair
        assert float(row[col["start_s"]]) == pytest.approx(k.first * contact_run.DT, abs=1e-9)
        assert float(row[col["peak_normal_force_N"]]) == pytest.approx(k.peak, rel=1e-6)
        assert float(row[col["impulse_Ns"]]) == pytest.approx(k.impulse, rel=1e-6)
        assert row[col["rebound"]] == ("yes" if k.rebound else "no")
        assert int(row[col["start_frame"]]) == k.first
    head = body[0]
    assert head[col["label"]] == "head / cone" and head[col["part_a"]] == "probe_head"
    assert head[col["part_b"]] == "receiving_cone" and float(head[col["duration_s"]]) == pytest.approx(0.099)


@pytest.mark.parametrize("last", [255, 256, 511, 4000])
def test_contact_ending_at_a_read_block_edge(tmp_path, last):
    """A pair touching up to the last frame of a read block, apart in the next blocks (which are skipped)."""
    from solver.runfile import ContactPairInfo
    n = 4001
    t = np.arange(n) * 1e-3
    active = np.zeros(n, bool)
    active[200:last + 1] = True
    force = np.zeros((n, 1, 3))
    force[active, 0, 0] = 100.0
    w = RunWriter(tmp_path / "edge.h5", RunMeta(variant="synthetic"), [], ["passive_craft"],
                  [ContactPairInfo("head_cone", "probe_head", "receiving_cone")], [])
    w.append(t, np.zeros((n, 0)), np.zeros((n, 1, 3)), np.tile([1.0, 0, 0, 0], (n, 1, 1)), active[:, None],
             force, np.zeros((n, 1, 3)))
    w.finish(complete=True)
    with RunFile(tmp_path / "edge.h5") as r:
        tab = table_from_run(r, block=256)
    assert len(tab) == 1 and tab.start_frame[0] == 200 and tab.end_frame[0] == min(last + 1, n - 1)
    ramps = 0.05 if last == n - 1 else 0.1                   # the 1 ms ramps up from and down to zero
    assert tab.impulse[0] == pytest.approx(100.0 * (t[min(last + 1, n - 1)] - t[199]) - ramps)


def test_solver_style_block_appends_give_the_same_table(known_run):
    """How simulate.py uses it: EventAccumulator(PAIRS).append(...) per written block, event_rows at the end."""
    with RunFile(known_run) as r:
        pairs = list(r.contact_pairs.values())
        t = r.time
        act = np.stack([r.contact_active(p.name) for p in pairs], 1).astype(np.uint8)
        force = np.stack([r.contact_force(p.name) for p in pairs], 1)
        det = [r.contact_detail(p.name) for p in pairs]
        normal = np.stack([d["normal"] for d in det], 1)
        speed = np.stack([d["normal_speed"] for d in det], 1)
        ref = table_from_run(r)
    acc = EventAccumulator(pairs)
    for a in range(0, len(t), 1000):
        acc.append(t[a:a + 1000], act[a:a + 1000], force[a:a + 1000], normal[a:a + 1000], speed[a:a + 1000])
    tab = acc.table()
    for f in ("pair_index", "start_frame", "end_frame", "peak_force", "peak_time", "approach_speed", "rebound",
              "lasts_to_end"):
        np.testing.assert_array_equal(getattr(tab, f), getattr(ref, f), err_msg=f)
    np.testing.assert_allclose(tab.impulse, ref.impulse, rtol=1e-12)
    assert tab.labels == ref.labels and tab.parts == ref.parts
    assert event_rows(tab) == event_rows(ref)
