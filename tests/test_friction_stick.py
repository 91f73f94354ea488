"""Friction that sticks (issue 24): the latch tips on their socket stops hold the drive's pull without creeping,
and slide at Coulomb's force when the load exceeds it. Expert run of the existing mechanism, drive 2 s after
capture at 10 mm/s (a test override; the mechanism's own 1.3 mm/s after 40 s is too slow for the suite)."""
from __future__ import annotations

import tomllib

import numpy as np
import pytest

from solver.runfile import RunFile
from solver.simulate import run_scenario, start_from_run
from tests.test_solver_helpers import ROOT, variant

GEOMETRY = ROOT / "resources" / "geometry" / "probe_cone.toml"
STOPS = [f"latch_stop_{k}" for k in range(1, 5)]
HOLD_S = 10.0             # s: a window in which a tip must not creep
CREEP_MAX = 1e-4          # m over HOLD_S (issue 24)


@pytest.fixture(scope="module")
def retraction(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stick")
    sc = variant(tmp, "expert_existing.toml", {"duration": "150.0"},
                 "[overrides]\ndrive_delay = 2.0\nretraction_speed = 0.01\n")
    r = RunFile(run_scenario(sc, tmp / "stick.h5"))
    r.scenario_path = sc
    return r


def _latch_law():
    """mu and bristle stiffness of the latch tips on the stops (no bristle: no elastic stretch, k_t infinite)."""
    ct = tomllib.loads(GEOMETRY.read_text())["contact"]["latch"]
    return ct["mu"], ct.get("k_t", np.inf)


def _stop_records(r, name):
    """Active flags, normal force, tangential force vector and contact point (passive surface) of a stop pair."""
    f = r.contact_force(name)
    n = r.contact_detail(name, fields=("normal",))["normal"]
    fn = np.einsum("ij,ij->i", f, n)
    return r.contact_active(name), fn, f - fn[:, None] * n, r.contact_point(name)


def _slip(ft, pt, i, j, kt):
    """Tip slide between frames i and j: the contact point's move less the bristle's elastic stretch change."""
    return np.linalg.norm(pt[j] - pt[i] + (ft[j] - ft[i]) / kt)


@pytest.mark.slow
def test_latch_tips_on_their_stops_hold_the_drive_pull_without_creep(retraction):
    """In every 10 s window of the retraction where a tip stays on its stop with a tangential load below 0.8 mu N,
    it slides < 0.1 mm (the old friction ramp: 3-10 mm, at 0.3-0.9 % of N)."""
    r = retraction
    mu, kt = _latch_law()
    t = r.time[:]
    t_drive = next(e.time for e in r.events if e.kind == "phase" and e.pair == "retraction")
    w = int(round(HOLD_S / (t[1] - t[0])))
    windows = []
    for name in STOPS:
        a, fn, ft, pt = _stop_records(r, name)
        ratio = np.linalg.norm(ft, axis=1) / np.maximum(fn, 1e-9)
        for i in range(int(np.searchsorted(t, t_drive)), len(t) - w, w // 10):
            if a[i:i + w].all() and ratio[i:i + w].max() < 0.8 * mu:
                windows.append((name, float(t[i]), _slip(ft, pt, i, i + w, kt), float(fn[i:i + w].min())))
    assert len(windows) >= 5, windows
    worst = max(windows, key=lambda x: x[2])
    assert worst[2] < CREEP_MAX, f"{worst[0]} crept {worst[2] * 1e3:.3f} mm in 10 s from t = {worst[1]:.1f} s " \
                                 f"(N >= {worst[3]:.0f} N)"


@pytest.mark.slow
def test_latch_tips_slide_at_the_coulomb_force(retraction):
    """Where a tip slides on its stop (> 5 mm/s over 0.1 s), its friction is mu N (the old ramp: ~0.35 % of N)."""
    r = retraction
    mu, kt = _latch_law()
    w = int(round(0.1 / (r.time[1] - r.time[0])))
    ratios = []
    for name in STOPS:
        a, fn, ft, pt = _stop_records(r, name)
        ratio = np.linalg.norm(ft, axis=1) / np.maximum(fn, 1e-9)
        for i in range(0, len(fn) - w, w):
            if a[i:i + w].all() and fn[i:i + w].min() > 50.0 and _slip(ft, pt, i, i + w, kt) > 5e-4:
                ratios.append(float(np.median(ratio[i:i + w])))
    assert len(ratios) >= 10
    assert np.median(ratios) == pytest.approx(mu, rel=0.02)
    assert np.percentile(ratios, 5) > 0.9 * mu


@pytest.mark.slow
def test_energy_balance_and_branch_with_sticking_contacts(retraction, tmp_path):
    """The bristles' stored and return-mapped energy closes the balance (< 0.1 % of KE0), and a branch in the
    retraction (bristle stretches in the solver state) reproduces the run bit for bit."""
    r = retraction
    e, ke0 = r.channel("total_energy"), r.channel("kinetic_energy")[0]
    assert np.max(np.abs(e - e[0])) < 1e-3 * ke0
    k = r.frame_at(60.0)
    b = RunFile(run_scenario(r.scenario_path, tmp_path / "branch.h5", t_end=64.0, start=start_from_run(r.path, k)))
    n = b.n_frames
    for name in STOPS:
        np.testing.assert_array_equal(b.contact_force(name), r.contact_force(name, k, k + n))
    np.testing.assert_array_equal(b.channel("total_energy"), r.channel("total_energy", k)[:n])


def test_friction_law_override_and_refusals(tmp_path):
    """`[overrides] friction` picks the law for A/B (the old ramp keeps no bristle state); a bad name is refused."""
    from solver.mechanisms.probe_cone import dynamics as D
    from solver.scenario import ScenarioError, load_model
    base = variant(tmp_path, "central_impact_20t.toml", {})
    assert load_model(base).P[D.P_INDEX["ft_law"]] == 1.0                    # default: the bristle
    ramp = variant(tmp_path, "central_impact_20t.toml", {}, '[overrides]\nfriction = "ramp"\n')
    assert load_model(ramp).P[D.P_INDEX["ft_law"]] == 0.0
    bad = variant(tmp_path, "central_impact_20t.toml", {}, '[overrides]\nfriction = "sticky"\n')
    with pytest.raises(ScenarioError, match=r"overrides\.friction: 'sticky': must be one of bristle, ramp"):
        load_model(bad)


def test_branch_from_a_run_with_another_state_layout_is_refused(tmp_path):
    """A run written by a solver with another state size (e.g. before the bristle states) cannot be branched."""
    import h5py
    sc = variant(tmp_path, "central_impact_20t.toml", {})
    out = run_scenario(sc, tmp_path / "a.h5", t_end=0.05)
    with h5py.File(out, "r+") as f:
        s = f["state/s"][:, :43]
        del f["state/s"]
        f["state/s"] = s
    with pytest.raises(ValueError, match=r"a\.h5: /state/s: 43 values, this solver's state has \d+"):
        start_from_run(out, 10)
