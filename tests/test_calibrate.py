"""Calibration (issue 34, issue 31's calibrate items), the quick part: search ranges, the interval when the residual is
not white, keys that trade off, outputs named from -o with their comments updated, atomic writes (a full disk leaves
nothing and the values are printed), exit 3 when not converged, cancels that keep the best point or create nothing.
Fits here use a 1.2 s record (tests/calibrate_truth.py); whole records and the 3 % claims: test_calibrate_truths.py."""
from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from solver.measured.calibrate import (Calibration, CalibrationCancelled, _verdict, block_bootstrap, calibrate,
                                       fit_bounds, write_fitted)
from tests.calibrate_truth import CENTRAL, truth_scenario, write_map, write_record

BRAKE = "axial_damper.friction_brake_torque_in"
NOMINAL = 2.55
T_RECORD = 1.2          # s of docking: first contact, the socket-bottom impact, the brake's plateau


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def short_record(tmp_path_factory):
    """A 1.2 s stand record of the central impact with the brake x 1.25 (MATLAB v5, kN, turned sensor) and its map."""
    from solver.simulate import run_scenario
    d = tmp_path_factory.mktemp("calib")
    run_scenario(truth_scenario(d, {BRAKE: 1.25}), d / "truth.h5", t_end=T_RECORD)
    return write_record(d / "truth.h5", d / "stand.mat"), write_map(d / "map.toml")


@pytest.fixture(scope="module")
def client():
    """One local Dask worker the in-process fits share (a cluster start each would cost seconds)."""
    from solver.campaign import local_client
    c = local_client(1)
    yield c
    cluster = c.cluster
    c.close()
    cluster.close()


def test_an_infinite_declared_range_is_searched_around_the_start():
    """magnetic_brake_torque is declared [0, inf]: the fit searches start/2 .. start*2 (old main: "no declared
    range to fit within"); a key at 0 with an open range asks for a first guess."""
    k = fit_bounds(CENTRAL, "axial_damper.magnetic_brake_torque[1]")
    assert (k.value, k.search_lo, k.search_hi, k.unit) == (0.04, 0.02, 0.08, "N*m") and k.log
    k = fit_bounds(CENTRAL, BRAKE, search=1.5)
    assert k.search_lo == pytest.approx(NOMINAL / 1.5) and k.search_hi == pytest.approx(NOMINAL * 1.5)
    assert float(k.to_x(k.to_u(3.0))) == pytest.approx(3.0)
    k = fit_bounds(CENTRAL, "initial.lateral_miss[0]")       # 0 in the file, a finite declared range: all of it
    assert k.value == 0.0 and not k.log and k.search_lo < 0 < k.search_hi


def _calibration(keys, x, sigma=None, status="converged"):
    fits = [fit_bounds(CENTRAL, k) for k in keys]
    x0 = np.array([f.value for f in fits])
    return Calibration(fits, x0, np.array(x, float), np.array(sigma if sigma is not None else [0.01] * len(x)), 0.137,
                       [], [], 10, 1.0, status)


def test_outputs_are_named_from_o_and_the_fitted_lines_comments_say_so(tmp_path):
    """-o fit1.toml writes fit1.toml and fit1_existing.toml (old main: existing_fitted.toml, so a second calibration
    overwrote the first's mechanism); the changed line's comment gives the fit and the old value."""
    cal1 = _calibration([BRAKE, "axial_damper.spring_stiffness", "initial.closing_speed"], [3.1, 0.03, 0.16])
    w1 = write_fitted(CENTRAL, cal1, tmp_path / "fit1.toml", "stand.mat")
    cal2 = _calibration([BRAKE], [2.9])
    w2 = write_fitted(CENTRAL, cal2, tmp_path / "fit2.toml", "stand.mat")
    assert w1 == [tmp_path / "fit1.toml", tmp_path / "fit1_existing.toml"]
    assert w2 == [tmp_path / "fit2.toml", tmp_path / "fit2_existing.toml"]
    m1, m2 = (tomllib.loads(p.read_text()) for p in (w1[1], w2[1]))
    assert m1["axial_damper"][BRAKE.split(".")[1]] == 3.1 and m2["axial_damper"][BRAKE.split(".")[1]] == 2.9
    s1 = tomllib.loads(w1[0].read_text())
    assert s1["mechanism"] == "fit1_existing.toml" and s1["initial"]["closing_speed"] == 0.16
    line = next(ln for ln in w1[1].read_text().splitlines() if ln.startswith("spring_stiffness = 0.03"))
    assert "# 0.03 ± 0.01 N*m/rad, fitted to stand.mat (converged); was 0.02533" in line, line
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]          # no temporary file left
    from solver.scenario import load_model
    assert load_model(w1[0]).name == "central_impact_20t"


@pytest.fixture
def full_disk(tmp_path):
    """A 16 KiB tmpfs (root only; skipped elsewhere): the fitted mechanism (13 KB) does not fit."""
    d = tmp_path / "small_fs"
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(d)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield d
    subprocess.run(["umount", str(d)], check=True)


def test_a_full_disk_leaves_nothing_behind(full_disk):
    """write_fitted on a full filesystem raises OSError and leaves no file, no temporary file, no directory (old
    main left a 0-byte or cut fitted file)."""
    cal = _calibration([BRAKE], [3.1])
    with pytest.raises(OSError):
        write_fitted(CENTRAL, cal, full_disk / "out" / "fit.toml", "stand.mat")
    assert list(full_disk.iterdir()) == []


def test_the_block_bootstrap_covers_a_slope_under_correlated_noise():
    """A straight line fitted under AR(1) noise (rho 0.9): the block bootstrap's 95 % interval covers the true slope
    in at least 88 of 100 records, where the white-noise formula diag((J^T J)^-1) s^2 covers half of them or fewer."""
    from scipy.signal import lfilter
    rng = np.random.default_rng(3)
    n, rho = 2000, 0.9
    t = np.linspace(0.0, 1.0, n)
    J = np.column_stack([t, np.ones(n)])
    A_inv = np.linalg.inv(J.T @ J)
    inside_boot = inside_white = 0
    for _ in range(100):
        e = lfilter([math.sqrt(1 - rho ** 2)], [1.0, -rho], rng.normal(size=n))
        theta = A_inv @ J.T @ (2.0 * t + 1.0 + e)
        r = J @ theta - (2.0 * t + 1.0 + e)
        hw, *_ = _verdict(J, r, 1, [fit_bounds(CENTRAL, BRAKE), fit_bounds(CENTRAL, "initial.closing_speed")], 0)
        inside_boot += abs(theta[0] - 2.0) <= hw[0]
        inside_white += abs(theta[0] - 2.0) <= 1.96 * math.sqrt(A_inv[0, 0] * (r @ r) / (n - 2))
    assert inside_boot >= 88 and inside_white <= 50, (inside_boot, inside_white)
    draws = block_bootstrap(np.ones((10, 1)), np.eye(1), 3, np.random.default_rng(0), 50)
    assert draws.shape == (50, 1) and np.allclose(draws, 0.0)      # centred scores: no error from a constant


def test_keys_that_trade_off_are_named():
    """Two keys whose effects on the record are proportional: the verdict names the pair and the combination the
    record determines (exit 3 on the CLI)."""
    rng = np.random.default_rng(1)
    col = rng.normal(size=600)
    J = np.column_stack([col, -0.5 * col + 1e-6 * rng.normal(size=600), rng.normal(size=600)])
    fits = [fit_bounds(CENTRAL, k) for k in ("probe.mass", "housing.mass", BRAKE)]
    *_, reasons = _verdict(J, rng.normal(size=600) * 0.01, 3, fits, 0)
    assert any("probe.mass and housing.mass trade off on this record" in r and "not separately determined" in r
               for r in reasons), reasons


def test_a_valley_that_event_jitter_hides_is_named_with_what_it_determines():
    """Two masses whose effects on the record are those of their sum, seen through 1 % differences with contact-event
    jitter of 10 % of the signal (correlation of the estimates under 0.99: the old verdict named nothing); with the 10 %
    secant along the Jacobian's weak direction the pair is named with the sum it determines (issue 34)."""
    from solver.measured.calibrate import _weak_directions, _with_slope
    rng = np.random.default_rng(2)
    n = 900
    g = rng.normal(size=n)
    x = np.array([18.0, 25.0])                          # probe.mass, housing.mass: the record sees x0 + x1
    exact = np.column_stack([g * x[0], g * x[1]]) / x.sum()   # d r / d ln x_i (the record's noise is 0.1)
    J = exact + 0.1 * rng.normal(size=(n, 2))           # the 1 % differences' jitter
    fits = [fit_bounds(CENTRAL, k) for k in ("probe.mass", "housing.mass")]
    r = 0.1 * rng.normal(size=n)
    *_, old = _verdict(J, r, 3, fits, 0, x)
    assert not any("trade off" in m for m in old), old
    v = _weak_directions(J)[0]
    J2 = _with_slope(J, v, exact @ v + 0.01 * rng.normal(size=n))   # the secant: 10x less jitter
    assert np.linalg.norm(J2 @ v) < np.linalg.norm(J @ v)
    assert _with_slope(J, v, 10 * (J @ v)) is J                       # a steeper secant changes nothing
    *_, reasons = _verdict(J2, r, 3, fits, 0, x)
    m = [m for m in reasons if "probe.mass and housing.mass trade off on this record" in m]
    assert m and "not separately determined; what it determines is probe.mass + 1 housing.mass = 43" in m[0], reasons


def test_cancel_before_the_first_run_creates_nothing(short_record, client, tmp_path):
    """Stopped before the scenario's own run is back: CalibrationCancelled, and the -o directory is not created (old
    main made it first)."""
    rec, mp = short_record
    out = tmp_path / "new" / "dir" / "fit.toml"
    with pytest.raises(CalibrationCancelled, match="nothing to keep"):
        calibrate(CENTRAL, rec, mp, [BRAKE], client=client, out_path=out, cancel=lambda: True)
    assert not (tmp_path / "new").exists()


def test_cancel_after_a_few_runs_keeps_the_best_point(short_record, client, tmp_path):
    """Stopped after 4 runs (SIGTERM at 4 of 100): the best point among the runs back is kept and written (old main:
    "nothing to keep" while its first round was out)."""
    rec, mp = short_record
    seen = []
    cal = calibrate(CENTRAL, rec, mp, [BRAKE], client=client, out_path=tmp_path / "best.toml",
                    progress=lambda done, total: seen.append(done), cancel=lambda: len(seen) >= 4)
    assert cal.status == "cancelled" and 4 <= cal.runs <= 9
    assert cal.cost <= cal.cost0 and math.isfinite(cal.cost)
    fitted = tomllib.loads((tmp_path / "best_existing.toml").read_text())["axial_damper"]["friction_brake_torque_in"]
    assert fitted == pytest.approx(cal.x[0])


@pytest.mark.slow
def test_cli_on_a_full_disk_prints_the_values_then_exits_5_leaving_nothing(short_record, client, full_disk):
    """The fitted values are printed before anything is written; the write fails (disk full): exit 5, no file, no
    temporary file and no directory left. A budget too small for the fit says so: not converged."""
    rec, mp = short_record
    code, out, err = cli("calibrate", CENTRAL, rec, "--map", mp, "--fit", BRAKE, "--scheduler", client.scheduler.address,
                         "--max-runs", "12", "-o", full_disk / "new" / "fit.toml")
    assert code == 5, err
    assert f"{BRAKE} = " in out and "run budget reached" in out
    assert "cannot be written" in err and "nothing was written" in err
    assert list(full_disk.iterdir()) == []


def test_cli_exit_3_names_the_reason_when_not_converged(short_record, client, tmp_path):
    """A fit stopped by its run budget is not converged: exit 3 with the reason (old main: exit 0), the best point
    written; the -o directory is made only to write it. The report has the key's cost profile and the before/after
    overlay of each channel."""
    rec, mp = short_record
    out = tmp_path / "sub" / "fit.toml"
    code, stdout, err = cli("calibrate", CENTRAL, rec, "--map", mp, "--fit", BRAKE, "--scheduler",
                            client.scheduler.address, "--max-runs", "12", "-o", out, "--report", tmp_path / "report.html")
    assert code == 3, err
    assert "calibration not converged: the run budget (12 runs) was reached: raise --max-runs" in err
    assert out.is_file() and (out.parent / "fit_existing.toml").is_file()
    assert "# fitted by dockmnemo calibrate to stand.mat (run budget reached" in out.read_text()
    assert sorted(os.listdir(out.parent)) == ["fit.toml", "fit_existing.toml"]
    html = (tmp_path / "report.html").read_text()
    assert html.count("alt='cost profile of axial_damper.friction_brake_torque_in'") == 1
    assert html.count(": measured, before and after'") == 6 and "run budget reached" in html


def test_the_noise_limits_pass_noise_and_restart_the_old_3_key_fit():
    """The cost a fit at the truth leaves, against the record's noise: on a 12 s, 500 Hz, 6-channel record of white
    noise the cost is under the verdict's limit (3 standard deviations) in each of 50 draws; the old 3-key fit's cost
    (1.117x the noise's: the spring 11.5 % off, called converged by old main) is over the limit that polishes again
    from other basins (1 standard deviation), and so is that of the
    first polish of this branch that stopped with the spring 19.7 % low (1.08x); a 1.2 s record's limits are wider."""
    from solver.measured.calibrate import POLISH_SMOOTH, _Residual
    from solver.measured.channel_map import MeasuredSignals
    rng = np.random.default_rng(4)
    chans = ["Fx", "Fy", "Fz", "Mx", "My", "Mz"]
    units = {c: "N" if c[0] == "F" else "N*m" for c in chans}

    def residual(t_end):
        t = np.arange(0.0, t_end, 0.002)
        sig = MeasuredSignals(Path("rec.mat"), t, {c: 50.0 * rng.normal(size=len(t)) + 1000.0 * (c == "Fx")
                                                   for c in chans}, units)
        res = _Residual(sig, chans, {}, 0.0, t_end, POLISH_SMOOTH)
        r = res({"status": "ok", "time": t, "values": {c: np.full(len(t), 1000.0 * (c == "Fx")) for c in chans}})
        return res, float(r @ r)
    draws = [residual(12.0) for _ in range(50)]
    assert all(c <= res.noise_limit(3.0) for res, c in draws)
    res = draws[0][0]
    assert res.noise_limit(1.0) < 1.08 * res.noise_cost < 1.117 * res.noise_cost < res.noise_limit(3.0)
    short = residual(1.2)[0]
    assert short.noise_limit(3.0) / short.noise_cost > res.noise_limit(3.0) / res.noise_cost + 0.2


def test_a_key_the_record_hardly_changes_with_is_not_determined():
    """A key whose column is 1000x weaker than its partner's: its interval spans its search range, and the verdict
    says so by name (old main said only that it sat at its search range's end, if it did)."""
    rng = np.random.default_rng(0)
    J = np.column_stack([rng.normal(size=900), 1e-3 * rng.normal(size=900)])
    fits = [fit_bounds(CENTRAL, k) for k in (BRAKE, "probe.mass")]
    hw, *_, reasons = _verdict(J, rng.normal(size=900), 3, fits, 0, np.array([2.55, 15.0]))
    assert hw[0] < 0.25 * math.log(4) <= hw[1]
    assert reasons == ["probe.mass is not determined by this record (its 95 % interval is wider than its search range "
                       "7.5 to 30 kg): the record hardly changes with it"]


def test_a_slow_misfit_under_the_20_ms_noise_limit_is_caught_on_0_2_s_averages():
    """Two-scale misfit (issue 34: a wrong basin under the 20 ms limit): on a 2 s, 500 Hz, 6-channel record of white
    noise the 0.2 s averages' cost is within 3 standard deviations of the noise's in each of 40 draws (old main padded
    the averages' windows with the edge samples: 1.0-3.2x the noise's cost at the truth of a 2 s record), and the two
    scales' z is under 3; a 1 Hz misfit of 0.18 of the noise: the 20 ms test alone flags it in at most 4 of the 40,
    the two scales' z in at least 30 (the 0.2 s averages' z grows 3.4x faster with a slow misfit)."""
    from solver.measured.calibrate import GLOBAL_SMOOTH, MISFIT_Z, POLISH_SMOOTH, _Residual
    from solver.measured.channel_map import MeasuredSignals
    rng = np.random.default_rng(5)
    chans = ["Fx", "Fy", "Fz", "Mx", "My", "Mz"]
    units = {c: "N" if c[0] == "F" else "N*m" for c in chans}
    t = np.arange(0.0, 2.0, 0.002)
    model = {c: np.full(len(t), 1000.0 * (c == "Fx")) for c in chans}
    run = {"status": "ok", "time": t, "values": model}
    zs, slow = [], []
    for _ in range(40):
        noise = {c: 50.0 * rng.normal(size=len(t)) for c in chans}
        sig = MeasuredSignals(Path("rec.mat"), t, {c: model[c] + noise[c] for c in chans}, units)
        fine = _Residual(sig, chans, {}, 0.0, 2.0, POLISH_SMOOTH)
        coarse = fine.smoothed(GLOBAL_SMOOTH)
        rf, rc = fine(run), coarse(run)
        assert float(rc @ rc) <= coarse.noise_limit(3.0), float(rc @ rc) / coarse.noise_cost
        zs.append((fine.z(float(rf @ rf)) + coarse.z(float(rc @ rc))) / math.sqrt(2))
        off = {"status": "ok", "time": t, "values": {c: model[c] + 9.0 * np.sin(2 * np.pi * t) for c in chans}}
        rf, rc = fine(off), coarse(off)
        slow.append((float(rf @ rf) / fine.noise_limit(3.0),
                     (fine.z(float(rf @ rf)) + coarse.z(float(rc @ rc))) / math.sqrt(2)))
    assert max(zs) < MISFIT_Z, max(zs)
    assert sum(f > 1.0 for f, _ in slow) <= 4 and sum(z > MISFIT_Z for _, z in slow) >= 30, slow


def test_the_polish_runs_even_rounds_and_finds_a_least_squares_minimum():
    """The polish (Levenberg-Marquardt) on a curved 3-key least-squares problem with its minimum inside the box: it
    reaches it, and every round it asks for has an even number of runs (the 2k central-difference probes, then 2
    trial steps), so 2 workers halve each round (old main: scipy's least_squares ran a lone trial point between the
    probes' rounds: 31 runs in 11 rounds, 1.72x at most on 2 workers)."""
    from solver.measured.calibrate import FD_STEP, levenberg_marquardt
    t = np.linspace(0.0, 1.0, 200)
    truth = np.array([0.3, -0.2, 0.1])

    def model(u):
        return np.exp(u[0]) * np.sin(3 * t + u[1]) + u[2] * t ** 2

    data = model(truth)
    rounds = []

    def residuals(us):
        rounds.append(len(us))
        return [model(u) - data for u in us]

    def jac(u):
        rs = residuals([u + s * FD_STEP * e for e in np.eye(3) for s in (1, -1)])
        return np.column_stack([(rs[2 * i] - rs[2 * i + 1]) / (2 * FD_STEP) for i in range(3)])

    u, c, J = levenberg_marquardt(np.zeros(3), model(np.zeros(3)) - data, jac, residuals, -np.ones(3), np.ones(3),
                                  iterations=20)
    assert np.allclose(u, truth, atol=1e-3) and c < 1e-5, (u, c)
    assert rounds and all(n % 2 == 0 for n in rounds), rounds


def test_the_polish_stops_on_a_key_the_record_does_not_change_with():
    """A key with no effect at all (a zero Jacobian column, or all of them): the polish stays where it is instead of
    failing on a singular step."""
    from solver.measured.calibrate import levenberg_marquardt
    r = np.ones(50)
    u, c, J = levenberg_marquardt(np.zeros(2), r, lambda u: np.zeros((50, 2)), lambda us: [r for _ in us],
                                  -np.ones(2), np.ones(2))
    assert np.allclose(u, 0.0) and c == pytest.approx(50.0) and J.shape == (50, 2)
