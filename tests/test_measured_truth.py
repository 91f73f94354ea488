"""Synthetic truth (issue 25): a run with the friction brake's torque x 1.25 written as a stand record (lbf, lbf*in in
a turned and offset sensor frame, mm, ms), shifted by 0.1374 s, with noise. `validate` against the nominal run finds
the shift within 2 ms and a clear difference; `calibrate --fit` on that key finds it within 3 % and brings the RMS
error down to the noise; Ctrl+C (cancel) keeps and writes the best point so far."""
from __future__ import annotations

import contextlib
import io
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import tomlkit

from app.cli import main
from solver.simulate import run_scenario
from tests.measured_truth import EXAMPLE_MAP, write_measured_csv

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
MECHANISM = ROOT / "resources" / "mechanisms" / "existing.toml"
KEY = "axial_damper.friction_brake_torque_in"
NOMINAL = 2.55                 # N*m in existing.toml
TRUTH = NOMINAL * 1.25
SHIFT = 0.1374                 # s: t_measured = t_run + SHIFT (not a whole sample at 1 kHz)
NOISE = 10.0                   # N on each force
T_END = 2.0                    # s of simulated docking (first contact, the spring phase, the brake plateau)

pytestmark = pytest.mark.slow


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def metrics(text: str, channel: str, after: str = "") -> tuple[float, float, float]:
    """(rms, peak, r) of a channel line of validate / calibrate output (after the line `after`, if given)."""
    if after:
        text = text.split(after, 1)[1]
    m = re.search(rf"^\s*{channel} rms (\S+) \S+ peak (\S+) \S+ r (\S+)$", text, re.M)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


@pytest.fixture(scope="module")
def scheduler():
    """One local cluster of 2 workers the three fits share (the CLI's through --scheduler): a cluster start each cost
    its workers' imports and kernel loads again."""
    from solver.campaign import local_client
    c = local_client(2)
    yield c
    cluster = c.cluster
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def stand(tmp_path_factory):
    """The truth run, the nominal run, and the stand record made from the truth."""
    d = tmp_path_factory.mktemp("truth")
    mech = tomlkit.parse(MECHANISM.read_text())
    mech["axial_damper"]["friction_brake_torque_in"] = TRUTH
    (d / "existing_truth.toml").write_text(tomlkit.dumps(mech))
    sc = tomlkit.parse(SCENARIO.read_text())
    sc["mechanism"] = "existing_truth.toml"
    (d / "truth.toml").write_text(tomlkit.dumps(sc))
    run_scenario(d / "truth.toml", d / "truth.h5", t_end=T_END)
    run_scenario(SCENARIO, d / "nominal.h5", t_end=T_END)
    csv = write_measured_csv(d / "truth.h5", d / "stand.csv", SHIFT, noise_N=NOISE)
    code, out, _ = cli("validate", d / "truth.h5", csv, "--map", EXAMPLE_MAP)
    assert code == 0
    return d, csv, metrics(out, "Fx")[0]       # the noise level: the truth itself against its record


def test_validate_recovers_the_shift_and_shows_the_difference(stand, artifacts):
    d, csv, noise_rms = stand
    code, out, err = cli("validate", d / "nominal.h5", csv, "--map", EXAMPLE_MAP, "--report", d / "report.html")
    assert code == 0, err
    offset = float(re.search(r"^time offset: (\S+) s$", out, re.M).group(1))
    assert abs(offset - SHIFT) < 2e-3
    rms, peak, r = metrics(out, "Fx")
    assert noise_rms < 1.5 * NOISE and rms > 10 * noise_rms and peak > 300.0    # the 25 % stronger brake shows
    assert re.search(r"^Mz rms \S+ N\*m peak \S+ N\*m r \S+$", out, re.M)        # every mapped channel, in run units
    html = (d / "report.html").read_text()
    assert html.count("src='data:image/png;base64,") == 7 and "time offset: 0.137" in html
    assert "central_impact_20t" in html and "friction_brake_torque_in" in html       # facts and parameters
    (artifacts / "measured_validate_report.html").write_text(html)
    # the same record with the offset given: the same metrics within the alignment's sub-millisecond error
    code, out2, _ = cli("validate", d / "nominal.h5", csv, "--map", EXAMPLE_MAP, "--offset", SHIFT)
    assert code == 0 and f"time offset: {SHIFT:.6f} s" in out2
    assert metrics(out2, "Fx")[0] == pytest.approx(rms, rel=0.02)


def test_calibrate_recovers_the_brake_torque_and_the_noise_level(stand, scheduler, tmp_path):
    d, csv, noise_rms = stand
    out_toml = tmp_path / "fitted" / "central_fitted.toml"
    code, out, err = cli("calibrate", SCENARIO, csv, "--map", EXAMPLE_MAP, "--fit", KEY, "--scheduler",
                         scheduler.scheduler.address, "-o", out_toml)
    assert code == 0, err
    m = re.search(rf"^{re.escape(KEY)} = (\S+) ± (\S+) N\*m  \(was 2.55\)$", out, re.M)
    value, sigma = float(m.group(1)), float(m.group(2))
    assert abs(value - TRUTH) / TRUTH < 0.03 and 0 < sigma < 0.03 * TRUTH
    before, after = metrics(out, "Fx", "before:"), metrics(out, "Fx", "after:")
    assert before[0] > 10 * noise_rms and after[0] < 1.2 * noise_rms
    # the fitted files: the scenario names the fitted mechanism next to it; comments kept; the value loads
    mech = out_toml.parent / "central_fitted_existing.toml"      # named from -o
    sc_text, mech_text = out_toml.read_text(), mech.read_text()
    assert tomllib.loads(sc_text)["mechanism"] == "central_fitted_existing.toml"
    assert tomllib.loads(mech_text)["axial_damper"]["friction_brake_torque_in"] == pytest.approx(value, rel=1e-5)
    assert "N*m, fitted to stand.csv (converged); was 2.55: N*m, m_FR^max while the probe strokes in" in mech_text
    assert "# fitted by dockmnemo calibrate" in mech_text
    assert sc_text.count("#") >= SCENARIO.read_text().count("#")
    from solver.scenario import load_model
    assert load_model(out_toml).name == "central_impact_20t"


def test_cancel_keeps_and_writes_the_best_point_so_far(stand, scheduler, tmp_path):
    """A calibration stopped after a few runs (as Ctrl+C does) returns and writes the best point it had."""
    from solver.measured.calibrate import calibrate
    d, csv, _ = stand
    seen = []
    cal = calibrate(SCENARIO, csv, EXAMPLE_MAP, [KEY], client=scheduler, out_path=tmp_path / "best.toml",
                    progress=lambda done, total: seen.append(done), cancel=lambda: len(seen) >= 12)
    assert cal.status == "cancelled" and 12 <= cal.runs < 20
    assert cal.written[0] == tmp_path / "best.toml"
    fitted = tomllib.loads((tmp_path / "best_existing.toml").read_text())["axial_damper"]["friction_brake_torque_in"]
    assert fitted == pytest.approx(cal.x[0]) and fitted != NOMINAL     # moved from the start towards the truth
    assert abs(fitted - TRUTH) < abs(NOMINAL - TRUTH)
    assert np.isfinite(cal.cost) and cal.cost < cal.cost0


def test_ctrl_c_on_the_command_line_writes_the_best_point_and_exits_4(stand, scheduler, tmp_path):
    """Ctrl+C (SIGINT) while `dockmnemo calibrate` runs (right after the scenario's own run): it cancels the runs
    under way, writes the best point so far (the start or a point no worse) and exits 4."""
    import signal
    import subprocess
    import sys
    d, csv, _ = stand
    out_toml = tmp_path / "best.toml"
    p = subprocess.Popen([sys.executable, "-m", "app", "calibrate", str(SCENARIO), str(csv), "--map", str(EXAMPLE_MAP),
                          "--fit", KEY, "--scheduler", scheduler.scheduler.address, "-o", str(out_toml)], cwd=ROOT,
                         stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    for line in p.stderr:                       # the first bar line comes when the scenario's own run is done
        lines.append(line)
        if re.search(r" 1\.0/\d+\.0 runs", line):      # whatever the default budget
            p.send_signal(signal.SIGINT)
            break
    out, err = p.communicate(timeout=120)
    err = "".join(lines) + err
    assert p.returncode == 4, err
    assert "calibration cancelled: the best point so far is written to" in err
    assert "(cancelled" in out and not re.search(r"^\d+ runs in .*converged", out, re.M)
    best = float(re.search(rf"^{re.escape(KEY)} = (\S+) ", out, re.M).group(1))
    mech = tomllib.loads((tmp_path / "best_existing.toml").read_text())
    assert mech["axial_damper"]["friction_brake_torque_in"] == pytest.approx(best, rel=1e-5)
    assert metrics(out, "Fx", "after:")[0] <= metrics(out, "Fx", "before:")[0]
    assert tomllib.loads(out_toml.read_text())["mechanism"] == "best_existing.toml"
