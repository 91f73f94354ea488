"""Calibration against synthetic truths past the first seconds (issue 34; slow: 40-60 runs each): the 6 s record where
the old least-squares fit stalled at the start and said "converged" (-19.6 %, exit 0), and two keys the record cannot
tell apart (exit 3). bench/calibrate_truths.py runs the 12 s, whole-record and 3-key cases."""
from __future__ import annotations

import contextlib
import io
import re

import pytest

from app.cli import main
from solver.measured.calibrate import fit_bounds
from tests.calibrate_truth import CENTRAL, truth_scenario, write_map, write_record

pytestmark = pytest.mark.slow
BRAKE = "axial_damper.friction_brake_torque_in"


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def scheduler():
    """A local cluster of 2 workers the command lines share through --scheduler (a cluster start each would cost its
    workers' imports and kernel loads again)."""
    from solver.campaign import local_client
    c = local_client(2)
    yield c.scheduler.address
    cluster = c.cluster
    c.close()
    cluster.close()


def _record(d, factors, t_end):
    from solver.simulate import run_scenario
    run_scenario(truth_scenario(d, factors), d / "truth.h5", t_end=t_end)
    return write_record(d / "truth.h5", d / "stand.mat"), write_map(d / "map.toml")


def test_a_6_s_record_past_the_return_impact_is_fitted_from_the_start(tmp_path, scheduler):
    """The brake x 0.8 on a 6 s record (the return impact inside it), fitted from the nominal 2.55 N*m: within 3 % and
    inside its printed interval, exit 0 (old main: 2.047 -> -19.6 % "converged" at the start, exit 0)."""
    rec, mp = _record(tmp_path, {BRAKE: 0.8}, 6.0)
    truth = 0.8 * fit_bounds(CENTRAL, BRAKE).value
    code, out, err = cli("calibrate", CENTRAL, rec, "--map", mp, "--fit", BRAKE, "--scheduler", scheduler,
                         "-o", tmp_path / "fit.toml")
    assert code == 0, out + err
    m = re.search(rf"^{re.escape(BRAKE)} = (\S+) ± (\S+) N\*m  \(was 2.55\)$", out, re.M)
    value, half = float(m.group(1)), float(m.group(2))
    assert abs(value / truth - 1) < 0.03 and abs(value - truth) <= half, out
    assert re.search(r"runs in \d+ rounds, .* s \(converged; residual (0\.9\d|1\.0\d)x the record's noise\)", out), out


def test_two_masses_the_record_cannot_tell_apart_exit_3_naming_both(tmp_path, scheduler):
    """The probe's and the housing's masses move the base loads alike and little (their effects correlate 0.9998, a
    few N against 2 % noise; a 2 s record): not converged, exit 3 saying that neither is determined by the record (old
    main: only that they drifted to the ends of their search ranges); the best point is written. 24 runs: the
    verdict's Jacobian and secants run past the budget, so the message does not need the whole search."""
    rec, mp = _record(tmp_path, {"probe.mass": 1.2}, 2.0)
    code, out, err = cli("calibrate", CENTRAL, rec, "--map", mp, "--fit", "probe.mass,housing.mass",
                         "--scheduler", scheduler, "--max-runs", "24", "-o", tmp_path / "fit.toml")
    assert code == 3, out + err
    assert "calibration not converged: " in err, err
    assert all(re.search(rf"{k}[^;]* (is not determined by this record|trade off on this record)", err)
               for k in ("probe.mass", "housing.mass")), err
    assert (tmp_path / "fit_existing.toml").is_file()
