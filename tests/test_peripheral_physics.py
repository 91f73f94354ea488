"""Physics checks of the peripheral (IDSS-class) type with its guide petals (issue 26): the IDSS envelope case is
guided by the petals to capture and hard capture; energy balance and step halving on it; the symmetric central
impact gives no lateral loads. The central impact's full-run checks are in tests/test_peripheral_type.py."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solver import mechanisms
from solver.runfile import RunFile
from solver.simulate import run_scenario
from solver.verdict import evaluate, load_criteria

from bench.peripheral_checks import interface_at
from tests.peripheral_runs import idss_campaign_run

ROOT = Path(__file__).resolve().parent.parent
PERIPHERAL = ROOT / "resources" / "peripheral"
CENTRAL = PERIPHERAL / "scenarios" / "central_impact_10t.toml"
ENVELOPE = PERIPHERAL / "scenarios" / "idss_envelope.toml"


def _copy(tmp_path: Path, src: Path, name: str, **values) -> Path:
    """The scenario src with its mechanism path made absolute and `key = value` lines replaced."""
    text = src.read_text().replace('"../peripheral_idss.toml"', f'"{PERIPHERAL / "peripheral_idss.toml"}"')
    for key, v in values.items():
        text, n = re.subn(rf"(?m)^{key} = [^#\n]+", f"{key} = {v}", text)
        assert n == 1, key
    out = tmp_path / f"{name}.toml"
    out.write_text(text)
    return out


def _peak_base_force(run: Path) -> float:
    with RunFile(run) as r:
        return float(np.max(np.linalg.norm([r.channel(n) for n in ("Fx", "Fy", "Fz")], axis=0)))


@pytest.fixture(scope="module")
def envelope_run() -> Path:
    """The IDSS envelope case (0.10 m miss, 4 deg, 0.04 m/s lateral, 0.10 m/s closing) to hard dock: its bundled
    sample, a run of this solver (tests/test_peripheral_type.py checks the central sample equals a fresh run, and
    tests/test_peripheral_samples.py that the samples are of the shipped mechanism file)."""
    return ROOT / "sample_runs" / "peripheral" / "idss_envelope.h5"


@pytest.mark.slow
def test_the_envelope_case_is_guided_by_the_petals_to_capture_and_hooks_closed(envelope_run):
    """The petals meet first, guide the rings together, the latches capture, the retraction waits for the relative
    motion to settle and the 12 hooks close flat, the planes apart; the verdict passes (issue 33: retracted after a
    fixed 2 s delay with 4.9 J left, the craft rocked on its seal edge and the hooks never closed)."""
    with RunFile(envelope_run) as r:
        first = [e for e in r.events if e.kind == "first_contact"]
        assert first and first[0].pair.startswith("petal_petal_"), first
        assert r.t_capture < 10.0 and r.channel("latches_engaged")[-1] == 3
        assert r.channel("hooks_closed")[-1] == 12 and r.meta.complete
        t_retract = [e.time for e in r.events if e.kind == "phase" and e.text.startswith("retraction")][0]
        assert t_retract > r.t_capture + 3.0, t_retract          # it waited for the motion to settle
        assert r.channel("kinetic_energy")[r.frame_at(t_retract)] < 1.0
        t_hooks = [e.time for e in r.events if e.kind == "phase" and e.text.startswith("hooks closed")][0]
        tilt, g0, g1 = interface_at(r, int(np.searchsorted(r.time, t_hooks - 1e-9)))   # stored poses, not the flag
        assert tilt <= 0.5 and 0.0 < g0 <= g1 < 0.0025, (tilt, g0, g1)                 # the planes apart
        v = evaluate(r, load_criteria(mechanisms.for_run(r).criteria_file))
        assert v.passed, v.report()


@pytest.mark.slow
def test_the_envelope_case_balances_energy(envelope_run):
    """Kinetic + stored + dissipated - drive work stays within 0.1 % of the initial kinetic energy through the
    petal, ring and latch contacts and the retraction."""
    with RunFile(envelope_run) as r:
        e, ke0 = r.channel("total_energy"), r.channel("kinetic_energy")[0]
        assert np.max(np.abs(e - e[0])) < 1e-3 * ke0
        assert r.channel("dissipated_energy")[-1] > 0.3 * ke0


@pytest.mark.slow
def test_step_halving_on_the_envelope_case_changes_the_peak_base_force_by_less_than_2_percent(tmp_path):
    """The petals' guidance, the ring contact and the capture (the first 4.5 s; the peak at 4.0 s) at 0.5 ms and
    0.25 ms."""
    runs = [run_scenario(_copy(tmp_path, ENVELOPE, f"h{k}", step=h), tmp_path / f"h{k}.h5", t_end=4.5)
            for k, h in enumerate(("5.0e-4", "2.5e-4"))]
    fa, fb = (_peak_base_force(p) for p in runs)
    assert fa > 500.0 and abs(fa - fb) < 0.02 * fa, (fa, fb)


def test_the_symmetric_central_impact_gives_no_lateral_loads(tmp_path_factory):
    """No miss, no rates, an axisymmetric station: Fy, Fz, My, Mz below 1e-6 of the peak Fx (the whole run, shared
    with tests/test_peripheral_type.py: tests/peripheral_runs.py)."""
    from tests.peripheral_runs import central_run
    with RunFile(central_run(tmp_path_factory)) as r:
        fx = np.max(np.abs(r.channel("Fx")))
        assert fx > 500.0
        for name in ("Fy", "Fz", "My", "Mz"):
            assert np.max(np.abs(r.channel(name))) < 1e-6 * fx, name


CAMPAIGN_BASE = PERIPHERAL / "campaigns" / "idss_envelope_base.toml"


@pytest.mark.slow
def test_an_envelope_case_the_braked_ring_missed_is_captured_latch_by_latch(tmp_path):
    """Run 53 of the 200-run IDSS campaign (0.096 m/s, 0.085 m miss, 3.4 deg roll, 0.034 m/s lateral): the ring,
    compliant until capture, lies flat on the passive ring and the latches catch one by one (the ring braked from the
    first contact stalled ~1 deg tilted and the craft drifted apart); loads within the soft-capture limits. (Issue 33:
    with the sticking friction the ring no longer creeps round on the passive face; the third latch catches at 6.6 s,
    not 4.4 s: the run goes to 7 s.)"""
    sc = _copy(tmp_path, CAMPAIGN_BASE, "run53", closing_speed="0.096",
               lateral_velocity="[-0.0335, 0.0343]", lateral_miss="[-0.0017, -0.0848]",
               angular_miss_deg="[3.423, -1.749, 0.520]", angular_rate_deg_s="[-0.063, 0.140, 0.013]")
    out = run_scenario(sc, tmp_path / "run53.h5", t_end=7.0)
    with RunFile(out) as r:
        assert r.t_capture < 7.0, "not captured"
        n = r.channel("latches_engaged")
        assert n[-1] == 3 and np.any((n > 0) & (n < 3)), "the latches did not catch one by one"
        assert _peak_base_force(out) < 3900.0 and r.extrema("iface_F_soft")[2] < 3900.0


@pytest.mark.slow
def test_a_campaign_run_that_rocked_on_its_seal_closes_its_hooks_flat(tmp_path):
    """Run 3 of the seed-26 IDSS campaign drawn 10 runs long (0.091 m/s, 0.062 m miss, 1.7 deg tilt, 3.7 deg roll):
    with the retraction servos damped at 1e3 N*s/m (0.004 of critical for the craft's tilt) the craft rocked on its
    seal after the path (least gap all round 2.8 mm) and the hooks never closed (fails on old main); the servos,
    damped through their rate filter, close them by 31.5 s, flat (stored poses), energy balanced, the verdict's
    loads within the soft-capture limits."""
    out = idss_campaign_run(tmp_path, 3, 31.5, output_step=0.05, count=10)
    with RunFile(out) as r:
        hooks = [e.time for e in r.events if e.kind == "phase" and e.text.startswith("hooks closed")]
        assert hooks, "hooks not closed by 31.5 s"
        tilt, g0, g1 = interface_at(r, int(np.searchsorted(r.time, hooks[0] - 1e-9)))
        assert tilt <= 0.5 and 0.0 < g0 <= g1 < 0.0025, (tilt, g0, g1)
        e, ke0 = r.channel("total_energy"), r.channel("kinetic_energy")[0]
        assert np.max(np.abs(e - e[0])) < 1e-4 * ke0
        assert r.extrema("iface_F_soft")[2] < 3900.0 and r.extrema("iface_M_soft")[2] < 2800.0


def test_a_petal_tip_on_the_other_petal_is_recorded_as_the_pair_carrying_it(tmp_path):
    """Run 4 of the 200-run IDSS campaign: passive petal 3's tip meets active petal 1's plate within 0.2 s. The pair
    `petal_petal_1_3` records the force on the active petal, so the pair touches and first contact is logged then
    (old main: a passive tip on an active plate was recorded as the force on the passive petal, cancelling the
    active edge's in the pair's sum: the pair read ~1e-4 N while carrying ~140 N for 1.6 s, 'apart', and first
    contact came at 2.80 s)."""
    out = idss_campaign_run(tmp_path, 4, 0.6, output_step=0.01)
    with RunFile(out) as r:
        first = [e for e in r.events if e.kind == "first_contact"]
        assert first and first[0].time < 0.2 and first[0].pair == "petal_petal_1_3", first
        f = np.linalg.norm(r.contact_force("petal_petal_1_3"), axis=1)
        assert r.contact_active("petal_petal_1_3")[-1] and 50.0 < f[-1] < 300.0, f[-1]
        # the pair's force is the active side's: along the active craft's change of velocity (no other pair acts)
        assert not any(r.contact_active(p)[-1] for p in r.contact_pairs if p != "petal_petal_1_3")
        k = np.searchsorted(r.time, 0.3)
        dv = np.array([r.channel(f"cm_v{a}")[-1] - r.channel(f"cm_v{a}")[k] for a in "xyz"])
        fm = r.contact_force("petal_petal_1_3")[k:].mean(0)
        assert fm @ dv > 0.9 * np.linalg.norm(fm) * np.linalg.norm(dv), (fm, dv)


def test_a_contact_recorded_on_its_other_side_has_the_opposite_force_moment_and_normal_and_the_same_loads():
    """`_contact` with side -1 records the force on body b (and the normal from a into b): the record's force, moment
    and normal are those of side +1 negated, its point, depth and normal force the same, and the bodies get the same
    loads (old main: no side; a passive tip on an active plate flipped the increment afterwards, rec = 2 old - rec)."""
    from solver.core.free_body import rotation_of
    from solver.mechanisms.peripheral import dynamics as D
    from solver.quat import from_axis_angle
    s = np.zeros(D.NS)
    for b, (x, q) in enumerate(((0.0, (1.0, 0, 0, 0)), (0.5, from_axis_angle(np.array([0.0, 0.0, 1.0]), 0.1)),
                                (0.2, (1.0, 0, 0, 0)))):
        s[13 * b:13 * b + 3] = (x, 0.1 * b, -0.05 * b)
        s[13 * b + 3:13 * b + 7] = q
        s[13 * b + 7:13 * b + 13] = (0.01 * b, -0.02, 0.03, 0.1, -0.05 * b, 0.02)
    R = np.zeros((3, 3, 3))
    for b in range(3):
        rotation_of(s, 13 * b, R[b])
    COM = np.zeros((3, 3))
    n = np.array([0.6, 0.0, 0.8])
    out = []
    for side in (1.0, -1.0):
        F, T, rec = np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((D.NPAIR, 17))
        rec[5, 1:4] = (3.0, -1.0, 2.0)                     # an increment on a record that holds a force already
        rec[5, 14:17] = (0.5, 0.25, -1.0)
        D._contact(s, R, COM, F, T, 2, np.array([0.1, 0.4, -0.3]), 0, n, 2e-4, 2e6, 2e3, 0.15, 1e6, 1e3, 3, rec, 5,
                   True, np.zeros(D.NS), False, np.zeros((D.N_SLOT, 2)), 1e300, 0.0, side)
        out.append((F, T, rec))
    (F1, T1, r1), (F2, T2, r2) = out
    assert np.array_equal(F1, F2) and np.array_equal(T1, T2) and np.abs(F1[2]).max() > 100.0
    base_f, base_m = np.array([3.0, -1.0, 2.0]), np.array([0.5, 0.25, -1.0])
    assert np.array_equal(r2[5, 1:4] - base_f, -(r1[5, 1:4] - base_f))
    assert np.allclose(r2[5, 14:17] - base_m, -(r1[5, 14:17] - base_m), rtol=0.0, atol=1e-12)
    assert np.array_equal(r2[5, 7:10], -r1[5, 7:10]) and np.array_equal(r1[5, 7:10], n)
    for q in (4, 5, 6, 10, 11, 13):
        assert r1[5, q] == r2[5, q]


@pytest.mark.parametrize("index, t_end", [(116, 1.6), (137, 1.0)])
def test_campaign_runs_left_uncaptured_by_wide_petal_tips_or_a_narrow_latch_zone_are_captured(tmp_path, index, t_end):
    """Two of the 52 runs of the IDSS-200 campaign that f895855 did not capture (docs/peripheral.md "The uncaptured
    quarter"): run 116 (0.085 m/s, 40 mm miss, 3.6 deg tilt; class B: with the petals +-22 deg wide at their tips a tip
    caught on the other half's petal 55 mm before the faces met and the craft rebounded) is captured at ~1.3 s with
    +-19 deg tips; run 137 (0.098 m/s, 12.5 mm miss, 2.3 deg roll; class C2: two latches, the third striker 18.0 mm
    across its latch with the ring seated on the rounded edge; with +-19 deg tips and the 15 / 5 mm zone still two by
    6 s) at ~0.8 s with the 20 mm / 8 mm capture zone. Loads within the soft limits."""
    out = idss_campaign_run(tmp_path, index, t_end, output_step=0.05)
    with RunFile(out) as r:
        assert r.t_capture < t_end, "not captured"
        assert r.extrema("iface_F_soft")[2] < 3900.0 and r.extrema("iface_M_soft")[2] < 2800.0


def test_active_soft_capture_captures_a_slow_end_run_the_passive_legs_leave_leaning_on_one_latch(tmp_path):
    """Campaign run 189 (0.072 m/s, 9 mm miss, 3.25 deg tilt, 3.6 deg roll; class C1 on c2e9f73: the ring met the
    passive face on one side, one latch caught and the craft rebounded off the passive legs, not captured in 45 s):
    with soft_capture.active the ring yields to its measured load and all three latches catch within 2.5 s; the
    passive legs have not captured it then. Loads within the soft limits; the energy bookkeeping closes to 2e-4 KE0
    (periph8's gains: 1.7e-4, spent while one latch holds the ring before the others catch; 1.9e-5 at half the step,
    the integrator's truncation, docs/peripheral.md)."""
    caps = {}
    for name, flag in (("passive", "false"), ("active", "true")):    # the bundled file with the flag either way
        out = idss_campaign_run(tmp_path, 189, 2.5, [f"soft_capture.active={flag}"], 0.05, name=f"run189_{name}")
        with RunFile(out) as r:
            caps[name] = r.t_capture
            if name == "active":
                assert r.extrema("iface_F_soft")[2] < 3900.0 and r.extrema("iface_M_soft")[2] < 2800.0
                e, ke0 = r.channel("total_energy"), r.channel("kinetic_energy")[0]
                assert np.max(np.abs(e - e[0])) < 2e-4 * ke0, np.max(np.abs(e - e[0])) / ke0
    assert caps["active"] < 2.5 and not caps["passive"] < 2.5, caps
