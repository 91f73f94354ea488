"""The cable-snare type (seed 004, solver/mechanisms/snare/) through the one runner: a short run with the rod placed
against a cable (module scope: one run, many checks), its run file's cables as flexible parts, and bad input."""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from solver.mechanisms.snare import RESOURCES
from solver.mechanisms.snare.model import load_snare
from solver.runfile import RunFile
from solver.scenario import ScenarioError

RIG = RESOURCES / "scenarios" / "suspension_rig.toml"


def _scenario(d: Path, text: str, name="s.toml") -> Path:
    shutil.copy(RESOURCES / "snare.toml", d / "snare.toml")
    p = d / name
    p.write_text(text.replace('mechanism = "../snare.toml"', 'mechanism = "snare.toml"'))
    return p


def _touching_text(m) -> str:
    """The rig scenario, 0.15 s, ring at 40 deg/s, the rod's end 3 cm below cable 2's middle, its side 2 mm from it."""
    n = m.geometry["n"]
    q = m.s0[:3 * (n + 1) * 6].reshape(3, n + 1, 6)
    mid = q[1, n // 2, 0:3]
    rho, az = math.hypot(mid[1], mid[2]), math.atan2(mid[2], mid[1])
    r_axis = rho - m.geometry["rod_radius"] - m.geometry["cable_radius"] - 0.002
    tip_x = mid[0] - 0.03
    err = (tip_x - m.geometry["x_tip"], r_axis * math.cos(az), r_axis * math.sin(az))
    text = RIG.read_text().replace("duration = 10.0", "duration = 0.15").replace("rate_deg_s = 8.0", "rate_deg_s = 40.0")
    text = text.replace("position_error = [0.2369, 0.0747, 0.0402]", f"position_error = [{err[0]}, {err[1]}, {err[2]}]")
    return text.replace("quaternion = [0.9993, 0.0345, -0.0075, -0.0108]", "quaternion = [1.0, 0.0, 0.0, 0.0]")


@pytest.fixture(scope="module")
def touching(tmp_path_factory):
    """The rig scenario, 0.15 s, ring at 40 deg/s, the rod's end 3 cm below cable 2's middle, its side 2 mm from it."""
    from solver.simulate import run_scenario
    d = tmp_path_factory.mktemp("snare")
    sp = _scenario(d, _touching_text(load_snare(RIG)))
    return load_snare(sp), run_scenario(sp, d / "touching.h5")


def test_the_snare_runs_through_the_one_runner(touching):
    m, out = touching
    with RunFile(out) as r:
        assert r.meta.mechanism_type == "snare" and r.n_frames == 16
        for name in ("radial_offset", "Fx", "Mz", "ring_angle", "motor_torque", "tension_fixed_3", "tension_rotating_1"):
            assert np.isfinite(r.channel(name)).all()
        assert abs(r.channel("ring_angle")[-1] - 6.0) < 1e-9                     # 40 deg/s for 0.15 s
        assert r.channel("cables_in_contact").max() >= 1                           # the ring swept cable 2 onto the rod
        assert r.channel("contact_force_2").max() > 0.1
        kinds = [(e.kind, e.pair) for e in r.events]
        assert ("first_contact", "cable_2_rod") in kinds
        assert r.channel("radial_offset")[-1] < r.channel("radial_offset")[0] - 1e-6   # cable 2 pushed it inwards
        # the energy balance (kinetic + strain + gravity + suspension + contact + dissipated - drive work)
        e, w = r.channel("total_energy"), r.channel("drive_work")
        assert np.abs(e - e[0]).max() < 0.05 * max(np.abs(w).max(), 1e-3)
        # at rest at t = 0 the sensor carries the cables' weight (gravity along -x)
        L_s, A = m.geometry["L_s"], math.pi * 0.003 ** 2 / 4
        weight = 3 * 7800 * A * L_s * 9.81
        assert abs(r.channel("Fx")[0] + weight) < 0.3 * weight


def test_the_cables_are_flexible_parts_of_the_run_file(touching):
    m, out = touching
    n = m.geometry["n"]
    q0 = m.s0[:3 * (n + 1) * 6].reshape(3, n + 1, 6)
    with RunFile(out) as r:
        parts = {fp.name: fp for fp in r.flexible_parts}
        assert sorted(parts) == ["cable_1", "cable_2", "cable_3"]
        for i in range(3):
            fp = parts[f"cable_{i + 1}"]
            assert fp.body == "end_effector" and fp.kind == "cable" and fp.n_points == 4 * n + 1
            p0 = r.flexible_points(fp.name, 0)
            assert np.abs(p0[::4] - q0[i, :, 0:3]).max() < 1e-6                 # the nodes, in the EE frame
            p1 = r.flexible_points(fp.name, r.n_frames - 1)
            assert abs(np.linalg.norm(np.diff(p1, axis=0), axis=1).sum() / m.geometry["L_s"] - 1) < 0.01
        assert {p.part_a for p in r.contact_pairs.values()} == {"cable_1", "cable_2", "cable_3"}


def test_bad_snare_input_names_the_file_and_key(tmp_path):
    text = RIG.read_text()
    with pytest.raises(ScenarioError, match=r"s\.toml.*drive"):
        load_snare(_scenario(tmp_path, text.replace("[drive]", "[drive_program]")))
    p = _scenario(tmp_path, text, "t.toml")
    mech = (tmp_path / "snare.toml").read_text().replace("arc_length = 0.5025", "arc_length = 0.3")
    (tmp_path / "snare.toml").write_text(mech)
    with pytest.raises(ScenarioError, match=r"snare\.toml.*cable\.arc_length.*chord"):
        load_snare(p)
    shutil.copy(RESOURCES / "snare.toml", tmp_path / "snare.toml")
    through = text.replace("position_error = [0.2369, 0.0747, 0.0402]", "position_error = [0.2369, 0.1174, 0.0762]")
    with pytest.raises(ScenarioError, match=r"u\.toml.*target\.position_error.*starts through cable"):
        load_snare(_scenario(tmp_path, through, "u.toml"))


def test_describe_of_a_snare_scenario_lists_its_keys_and_an_undeclared_key_is_refused(tmp_path, capsys):
    """`dockmnemo run SCENARIO --describe` prints the snare's schema (solver/mechanisms/snare/schema.py); a key it does
    not declare, in the scenario or the mechanism file, is refused naming file and key. Fails on old main: no schema
    (exit 2), and a misspelt key was ignored."""
    from app.cli import main
    assert main(["run", "--describe", str(RIG)]) == 0
    out = capsys.readouterr().out
    assert "contact.bristle_stiffness" in out and "target.position_error" in out and "cable.gauss_points" in out
    assert "passive_craft.mass" not in out and "initial.closing_speed" not in out
    text = RIG.read_text()
    with pytest.raises(ScenarioError, match=r"s\.toml: drive\.rate_deg: unknown key"):
        load_snare(_scenario(tmp_path, text.replace("[drive]", "[drive]\nrate_deg = 8.0")))
    with pytest.raises(ScenarioError, match=r"t\.toml: initial: unknown section"):
        load_snare(_scenario(tmp_path, text + "\n[initial]\nclosing_speed = 0.1\n", "t.toml"))
    p = _scenario(tmp_path, text, "u.toml")
    mech = (tmp_path / "snare.toml").read_text().replace("[contact]", "[contact]\nstick_speed = 0.002")
    (tmp_path / "snare.toml").write_text(mech)
    with pytest.raises(ScenarioError, match=r"snare\.toml: contact\.stick_speed: unknown key"):
        load_snare(p)


def test_the_snare_lists_its_kernel_units_with_the_types_it_is_called_with():
    """solver.warmup compiles the listed units before the clock: their argument types are the call's."""
    from numba import typeof
    from solver.mechanisms.snare.simulate import SnareKernels, kernel_units
    from solver.warmup import kernel_units as listed
    m = load_snare(RIG)
    k = SnareKernels(m, 10, 5)
    st = k.state
    args = (st["s"], st["Z"], 0.0, m.step, 1, 1, *k.arrays, k.ev, k.n_ev, st["contact_prev"], *k.outs)
    units = kernel_units(m)
    assert [u[0] for u in listed(m)] == ["snare.run_block"]
    assert tuple(typeof(a) for a in args) == units[0][2]


@pytest.mark.slow
def test_the_envelope_campaign_runs_through_the_campaign_command(tmp_path):
    """`dockmnemo campaign` on the snare's small envelope campaign (2 runs of 0.3 s on a Dask worker): the rows hold
    the sampled offsets and tilt and the snare's outputs. Fails on old main: no schema, the campaign is refused."""
    import subprocess
    import sys
    from solver.campaign import read_summary
    d = tmp_path / "camp"
    r = subprocess.run([sys.executable, "-m", "app", "campaign", str(RESOURCES / "campaigns" / "envelope_small.toml"),
                        "-o", str(d), "--workers", "1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "2 of 2 runs finished" in r.stdout, r.stdout
    s = read_summary(d)
    assert s.campaign.mechanism_type == "snare" and s.status == ["ok"] * 2, s.table()
    r_, tilt, roll = s.column("radial_offset"), s.column("tilt"), s.column("roll_deg")
    assert ((0 <= r_) & (r_ <= 0.10) & (0 <= tilt) & (tilt <= 10.5) & (np.abs(roll) <= 12)).all(), s.table()
    assert np.isfinite(s.column("max_tension")).all() and all(v.startswith("FAIL") for v in s.verdict)  # 0.3 s


def test_the_target_offsets_are_where_the_seed_gives_the_position_error(tmp_path):
    """On orbit the seed's radial offsets (20 mm each) are the target's, at the adapter centre; the rod end's radial
    offset adds the 2 deg tilts' lever (33 mm). Fails on fix/snare: no target_offset channels."""
    from solver.simulate import run_scenario
    sp = RESOURCES / "scenarios" / "on_orbit_floating.toml"
    text = sp.read_text().replace("duration = 12.0", "duration = 0.01")
    out = run_scenario(_scenario(tmp_path, text), tmp_path / "o.h5")
    with RunFile(out) as r:
        assert abs(r.channel("target_offset_y")[0] - 0.02) < 1e-9
        assert abs(r.channel("target_offset_z")[0] - 0.02) < 1e-9
        assert r.channel("radial_offset")[0] > 0.03
        assert r.channels["target_offset_y"].unit == r.channels["target_offset_z"].unit == "m"


def test_the_scenarios_step_is_under_the_cables_explicit_bound():
    """The explicit step's bound 2 (sqrt(1 + z^2) - z) / omega_max of the relaxed cable with its axial damping
    (z = eta omega_max / 2): 10.9 us (omega_max 1.76e5 rad/s, the axial mode); both scenarios step at the paper's
    10 us, under it with 5 % to spare (docs/snare.md: the step chosen by measurement)."""
    from solver.core import ancf_cable as A
    from solver.mechanisms.snare import dynamics as D
    for name in ("suspension_rig", "on_orbit_floating"):
        m = load_snare(RESOURCES / "scenarios" / f"{name}.toml")
        P, n = m.P, m.geometry["n"]
        q = m.s0[:3 * (n + 1) * 6].reshape(3, n + 1, 6)[0].copy()
        fixed = np.zeros(2 * n + 2, bool)
        fixed[[0, 2 * n]] = True
        w = A.max_frequency(m.M, fixed, P[D.P_L], P[D.P_EA], P[D.P_EI], q)
        z = P[D.P_ETA] * w / 2
        bound = 2 * (math.sqrt(1 + z * z) - z) / w
        assert 1.7e5 < w < 1.8e5 and m.step == 1e-5 and m.step < 0.95 * bound, (name, w, bound)

