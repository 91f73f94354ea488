"""The rods type (seed 002): Table 1 at 1 s by both formulations, a clamp's lock time and its event in `info`, and
closed-form checks of the planar chain (momentum, a hinge's frequency, energy balance without damping)."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from solver.core import planar_chain as PC
from solver.runfile import RunFile
from solver.simulate import run_scenario

SCEN = Path(__file__).resolve().parents[1] / "resources" / "rods" / "scenarios"
ROWS = ("u_Cx_per_component", "u_Cy_per_component", "theta_C", "v_Cx", "v_Cy", "Omega", "phi1", "phi2", "alpha1",
        "alpha2", "beta1", "beta2")
# Table 1 at t = 1 s [002:L170-187] (its u_C: the per-component variant, docs/rods.md), general and reduced
TABLE1_1S = {"general": (0.243, -0.122, 1.508, 0.587, -0.314, -0.545, -0.532, -0.913, 0.421, 0.079, -0.272, -0.038),
             "reduced": (0.243, -0.122, 1.507, 0.583, -0.309, -0.603, -0.524, -0.892, 0.414, 0.073, -0.265, -0.033)}


def _variant(tmp: Path, name: str, **subs) -> Path:
    """A bundled scenario with keys replaced (key = value lines), its mechanism path absolute."""
    text = (SCEN / f"{name}.toml").read_text().replace('mechanism = "../', f'mechanism = "{SCEN.parent}/')
    for k, v in subs.items():
        text, n = re.subn(rf"^{k} = .*$", f"{k} = {v}", text, flags=re.M)
        assert n == 1, k
    p = tmp / f"{name}_{len(list(tmp.iterdir()))}.toml"
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def table1_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("rods")
    return {f: run_scenario(_variant(d, "impulse_table1", formulation=f'"{f}"', output_step="0.01"),
                            d / f"t1_{f}.h5", t_end=1.0) for f in ("general", "reduced")}


@pytest.mark.parametrize("form", ["general", "reduced"])
def test_table1_at_1s_by_both_formulations(table1_runs, form):
    with RunFile(table1_runs[form]) as r:
        assert r.meta.mechanism_type == "rods" and r.meta.variant == form
        assert abs(r.time[-1] - 1.0) < 1e-9
        for name, paper in zip(ROWS, TABLE1_1S[form]):
            v = r.channel_at(name, -1)
            v = math.radians(v) if r.channels[name].unit.startswith("deg") else v
            tol = 0.01 if abs(paper) < 0.5 else 0.02 * abs(paper)
            assert abs(v - paper) <= tol, (name, v, paper)
        # rods drawn as flexible parts: the tip of rod 2's line is node 2 (from the chord angles)
        assert [fp.name for fp in r.flexible_parts] == ["rod1", "rod2"]
        pts = r.flexible_points("rod2", -1)
        phi = np.radians([r.channel_at("phi1", -1), r.channel_at("phi2", -1)])
        tip = np.array([0.35, 0.35]) + 3.0 * np.array([np.cos(phi).sum(), np.sin(phi).sum()])
        assert np.allclose(pts[-1, :2], tip, atol=1e-4) and np.allclose(r.flexible_points("rod1", -1)[-1], pts[0])
        e = r.channel("total_energy")     # kinetic + stored + dissipated - control work: flat (general exactly)
        assert np.abs(e - e[0]).max() < (1e-8 if form == "general" else 2.0), e[-1]   # 2e-12 J, 1.5 J of 200 J


# Table 2's reduced column at the second lock, t = 4.352 s [002:L223-240] (its u_C: the per-component variant)
TABLE2_LOCK1_REDUCED = (0.047, -0.146, 3.928, 0.042, -0.093, 0.397, -0.014, -0.014, 0.014, -9.075e-4, -6.202e-3,
                        6.987e-4)


def test_clamps_lock_when_the_paper_says_with_table_2s_state_and_info_lists_them(tmp_path, capsys):
    """Case 4.2, reduced: both locks within 0.01 s of the paper's; the state at the second lock's instant (before the
    clamp acts: what Table 2 prints, docs/rods.md) within the issue's criterion, Omega within 1 % (the first output
    frame after the lock, as compared before, is 4 % low: 0.380)."""
    from app.cli import main
    from solver.mechanisms.rods.simulate import TABLE_STATE, lock_states
    p = _variant(tmp_path, "deploy_rotation", formulation='"reduced"', step="2.0e-4", output_step="1.0e-3")
    out = run_scenario(p, tmp_path / "deploy.h5", t_end=4.4)
    with RunFile(out) as r:
        locks = [e for e in r.events if e.kind == "phase" and e.text.startswith("clamp")]
        assert [round(e.time, 2) for e in locks] == [2.90, 4.35], locks      # paper: 2.903 and 4.352 s
        assert r.channel("clamp0")[-1] == 1.0 and r.channel("clamp1")[-1] == 1.0
        states = lock_states(r)
    assert [t for t, _ in states] == [e.time for e in locks]
    state = states[1][1]
    for name, paper in zip(TABLE_STATE, TABLE2_LOCK1_REDUCED):
        tol = 0.01 if abs(paper) < 0.5 else 0.02 * abs(paper)
        assert abs(state[name] - paper) <= tol, (name, state[name], paper)
    assert abs(state["Omega"] - 0.397) <= 0.01 * 0.397 and abs(state["beta1"] + 6.202e-3) < 5e-4, state
    assert main(["info", str(out)]) == 0
    assert re.search(r"2\.90\d+ s\s+phase\s+clamp 0 locked.*\n.*4\.35\d+ s\s+phase\s+clamp 1 locked",
                     capsys.readouterr().out)


def _free_chain(tmp, **subs):
    """A scenario of the bundled deploy system with the given keys (no clamps, no controls)."""
    return _variant(tmp, "deploy_rotation", **subs)


def test_momentum_of_a_free_chain_is_conserved():
    """Linear and angular momentum (inertial) of craft and rods from M(q) p, along a free general motion."""
    from solver.mechanisms.rods import dynamics as D
    n = 2
    RODS = np.array([[2.0, 1.357, 7037.0, 0.5, 50.0, 0.0], [2.0, 1.357, 7037.0, 0.5, 30.0, 0.0]])
    P = np.zeros(D.NP)
    P[D.P_M0], P[D.P_J0], P[D.P_X0], P[D.P_Y0] = 122.5, 10.0, 0.35, 0.35
    ns, nz = D.sizes(n)
    s = np.zeros(ns)
    s[3:9] = [0.8, -0.7, 0.01, -0.02, 0.015, 0.0]
    s[9:18] = [0.1, -0.2, 0.9, 1.5, -2.0, 0.3, -0.4, 0.2, 0.1]
    Z = np.zeros(nz)

    def momentum():
        M, h, jx, jy = np.zeros((9, 9)), np.zeros(9), np.zeros(9), np.zeros(9)
        PC.chain_mass_bias(s[3:9], s[9:18], RODS, 0.35, 0.35, 122.5, 10.0, M, h, jx, jy)
        g = M @ s[9:18]
        c, sn = math.cos(s[2]), math.sin(s[2])
        px, py = c * g[0] - sn * g[1], sn * g[0] + c * g[1]
        return np.array([px, py, g[2] + s[0] * py - s[1] * px])

    outs = [np.zeros(1), np.zeros((1, 18 + 8 * n)), np.zeros((1, 1, 3)), np.zeros((1, 1, 4)),
            np.zeros((1, 0), np.uint8), *(np.zeros((1, 0, 3)),) * 3, np.zeros((1, 0)), np.zeros((1, 0))]
    h0 = momentum()
    TAB = np.zeros((1, 4))
    status, t, _ = D.run_block(s, Z, 0.0, 5e-5, 1, 4000, P, RODS, TAB, np.zeros((4, 3)), np.zeros(1, np.int64),
                               np.zeros(1, np.int64), *outs)
    assert status == 0 and abs(t - 0.2) < 1e-9
    h1 = momentum()
    assert np.abs(h0).min() > 1.0                   # a motion with momentum in every component
    assert np.allclose(h1, h0, rtol=0, atol=1e-7 * np.abs(h0).max()), (h0, h1)


def test_a_plastic_lock_absorbs_the_hinge_rate_and_keeps_momentum():
    """`[clamps] lock = "plastic"` (bench/rods_locks.py's hypothesis): at the lock the hinge's rate psi_dot is zero,
    linear and angular momentum are those before it, and the energy lost (kinetic + bending) is counted as
    dissipated."""
    from solver.mechanisms.rods import dynamics as D
    n, nd = 2, 9
    RODS = np.array([[2.0, 1.357, 7037.0, 0.5, 0.0, 0.0], [2.0, 1.357, 7037.0, 0.5, 0.0, 0.0]])
    P = np.zeros(D.NP)
    P[D.P_M0], P[D.P_J0], P[D.P_X0], P[D.P_Y0] = 122.5, 10.0, 0.35, 0.35
    P[D.P_CLAMPS], P[D.P_RULE], P[D.P_TOL], P[D.P_PLASTIC] = 1.0, 0.0, 0.9, 1.0   # |phi1| < 0.9: hinge 0 locks
    ns, nz = D.sizes(n)
    s = np.zeros(ns)
    s[3:9] = [0.92, -0.7, 0.01, -0.02, 0.015, 0.0]          # hinge 1 (phi2 - phi1) stays out of the band
    s[9:18] = [0.1, -0.2, 0.9, -1.5, -2.0, 0.3, -0.4, 0.2, 0.1]
    Z = np.zeros(nz)

    def momentum_and_energy():
        M, h, jx, jy = np.zeros((nd, nd)), np.zeros(nd), np.zeros(nd), np.zeros(nd)
        ke = PC.chain_mass_bias(s[3:9], s[9:18], RODS, 0.35, 0.35, 122.5, 10.0, M, h, jx, jy)
        K, Dm = np.zeros((3 * n, 3 * n)), np.zeros((3 * n, 3 * n))
        PC.chain_stiffness(RODS, np.zeros(n), np.zeros(n), K, Dm)             # the rods' bending (free hinges)
        g = M @ s[9:18]
        c, sn = math.cos(s[2]), math.sin(s[2])
        px, py = c * g[0] - sn * g[1], sn * g[0] + c * g[1]
        return np.array([px, py, g[2] + s[0] * py - s[1] * px]), ke + 0.5 * s[3:9] @ K @ s[3:9]

    outs = [np.zeros(1), np.zeros((1, 18 + 8 * n)), np.zeros((1, 1, 3)), np.zeros((1, 1, 4)),
            np.zeros((1, 0), np.uint8), *(np.zeros((1, 0, 3)),) * 3, np.zeros((1, 0)), np.zeros((1, 0))]
    (h0, e0), steps = momentum_and_energy(), 0
    while Z[0] < 0.5:                # free steps until phi1 enters the band, then the lock
        status, _, _ = D.run_block(s, Z, steps * 1e-5, 1e-5, 1, 1, P, RODS, np.zeros((1, 4)), np.zeros((4, 3)),
                                   np.zeros(1, np.int64), np.zeros(1, np.int64), *outs)
        assert status == 0 and steps < 10000
        steps += 1
    h1, e1 = momentum_and_energy()
    assert Z[1] == 0.0 and steps > 100                                        # only hinge 0, after a free motion
    assert abs(s[12] + s[14]) < 1e-12 * abs(s[12])                            # psi0_dot = phi1_dot + alpha1_dot
    assert np.allclose(h1, h0, rtol=0, atol=1e-7 * np.abs(h0).max()), (h0, h1)
    iu = 3 + 3 * n + nd
    assert s[iu + 7] > 0.05 and abs(e1 + s[iu + 7] - e0) < 1e-6 * e0           # the loss, counted as dissipated


@pytest.mark.parametrize("form", ["general", "reduced"])
def test_small_oscillation_of_a_hinge_and_energy_balance_without_damping(tmp_path, form):
    """One rod on a craft of huge mass: omega = sqrt(kappa / (m l^3 / 3 + mu l^2)); no damping: energy flat."""
    mech = tmp_path / "one_rod.toml"
    mech.write_text('mechanism_type = "rods"\n[rods]\ncount = 1\nlength = [1.0]\nmass_per_length = [1.0]\n'
                    'EI = [1.0e4]\nnode_mass = [0.5]\n[hinges]\nstiffness = [100.0]\ndamping = [0.0]\n'
                    'range_deg = [90.0]\nmoment_range = [100.0]\n[attachment]\nposition = [0.35, 0.35]\n')
    sc = tmp_path / "osc.toml"
    sc.write_text(f'name = "osc"\nmechanism = "one_rod.toml"\n[craft]\nmass = 1.0e9\ninertia = 1.0e9\n'
                  f'half_size = [0.35, 0.35]\n[initial]\nphi = [0.01]\nOmega = 0.0\n[solver]\n'
                  f'formulation = "{form}"\nstep = 1.0e-4\noutput_step = 1.0e-3\nduration = 1.2\n')
    with RunFile(run_scenario(sc, tmp_path / "osc.h5")) as r:
        phi, t = r.channel("phi1"), r.time
        up = np.flatnonzero((phi[:-1] < 0) & (phi[1:] >= 0))
        tc = t[up] - phi[up] * (t[up + 1] - t[up]) / (phi[up + 1] - phi[up])
        period = float(np.mean(np.diff(tc)))
        omega = math.sqrt(100.0 / (1.0 / 3.0 + 0.5))
        assert len(tc) >= 2 and abs(2 * math.pi / period - omega) < 0.005 * omega, (2 * math.pi / period, omega)
        e = r.channel("total_energy")
        stored0 = 0.5 * 100.0 * 0.01 ** 2
        tol = 1e-3 if form == "general" else 0.02        # (RK4 at 1e-4 s on a 2000 rad/s bending mode: 7e-4; the
                                                         # reduced form drops the bending rates: not exact)
        assert np.abs(e - e[0]).max() < tol * stored0 + 1e-12, np.abs(e - e[0]).max()


@pytest.mark.parametrize("key, value, message", [
    ("formulation", '"fast"', r"impulse_table1_\d+\.toml: solver\.formulation: must be one of general, reduced"),
    ("step", "-1.0", r"solver\.step: must be a number in \[1e-07, 1\], found -1\.0"),
    ("output_step", "0.00015", r"solver\.output_step: 0\.00015 s must be a multiple of the step 0\.0001 s"),
    ("Omega", '"fast"', r"initial\.Omega: must be a number"),
])
def test_bad_scenario_input_names_the_file_and_key(tmp_path, key, value, message):
    from solver.scenario import ScenarioError, load_model
    with pytest.raises(ScenarioError, match=message):
        load_model(_variant(tmp_path, "impulse_table1", **{key: value}))


def test_a_misspelt_key_is_refused(tmp_path):
    from solver.scenario import ScenarioError, load_model
    p = _variant(tmp_path, "impulse_table1")
    p.write_text(p.read_text().replace("formulation =", "formulaton ="))
    with pytest.raises(ScenarioError, match=r"solver\.formulaton: unknown key \(expected one of duration, formulation"):
        load_model(p)


def test_describe_lists_the_rods_keys_and_the_loader_reads_the_schema(tmp_path, capsys):
    """`run --describe` on a rods scenario prints its schema (was: "has no parameter schema"); the loader's keys and
    ranges are the schema's (a key out of its declared range is refused with the range)."""
    from app.cli import main
    from solver import schema
    from solver.scenario import ScenarioError, load_model
    assert main(["run", str(SCEN / "deploy_rotation.toml"), "--describe"]) == 0
    rows = {tuple(line.split()[:2]) for line in capsys.readouterr().out.splitlines()[1:]}
    assert {("scenario", "clamps.stiffness"), ("scenario", "solver.formulation"), ("mechanism", "rods.EI"),
            ("mechanism", "attachment.position")} <= rows
    assert ("scenario", "initial.closing_speed") not in rows        # a common key the type does not read
    p = schema.lookup("clamps.damping", "rods")
    msg = f"clamps.damping: must be a number in [0, {p.hi:g}], found -1.0"
    with pytest.raises(ScenarioError, match=re.escape(msg)):
        load_model(_variant(tmp_path, "deploy_rotation", damping="-1.0"))


def test_a_rods_campaign_loads_with_the_types_outputs_and_a_run_gives_its_row(tmp_path):
    """The bundled rods campaign (spin and craft mass over case 4.2): its keys are the schema's, its corners load, and
    one run through the campaign's worker task gives a row with the rods verdict and outputs, and the campaign table
    its columns (root and hinge 0 moments, clamp 0's time) and words."""
    from solver.campaign import CampaignError, load_campaign, run_task
    c = load_campaign(SCEN.parent / "campaigns" / "deploy_envelope_small.toml")
    assert c.mechanism_type == "rods" and c.variant == "reduced" and c.count == 6
    assert {"peak_root_moment", "peak_hinge0_moment", "t_clamp0"} <= set(c.outputs())
    x = c.samples()
    assert 0.6 <= x[:, 0].min() and x[:, 0].max() <= 1.4 and 100.0 <= x[:, 1].min() and x[:, 1].max() <= 150.0
    bad = tmp_path / "bad_key.toml"      # a probe-cone key: not the rods type's
    bad.write_text(c.text.replace('key = "craft.mass"', 'key = "initial.closing_speed"').replace(
        '"deploy_envelope_base.toml"', f'"{c.base_path}"'))
    with pytest.raises(CampaignError, match="initial.closing_speed"):
        load_campaign(bad)
    sc = c.scenario(0)
    from solver.campaign import dump_toml
    row = run_task({"index": 0, "scenario_text": dump_toml(sc), "t_end": c.t_end, "criteria": c.criteria,
                    "keep": "summary", "extreme_fraction": 0.8})
    assert row["status"] == "ok", row["message"]
    o = row["outputs"]
    assert 2.0 < o["t_clamp0"] < 5.0 and 0 < o["peak_root_moment"] < 1100.0
    assert row["verdict"].startswith("PASS") == row["passed"] and "captured at" in row["verdict"]
    # the type's own words and table columns (its criteria's [titles], its summary outputs): no docking n/a, no NaN
    assert "peak root and hinge moments within limits" in row["verdict"] and "n/a" not in row["verdict"], row["verdict"]
    from solver.campaign import CampaignSummary
    table = CampaignSummary(tmp_path, c, {0: {**row, "index": 0}}).table().splitlines()
    k = next(i for i, x in enumerate(table) if x.split()[:2] == ["run", "status"])
    head, line = table[k:k + 2]
    assert "M_root1 N*m hinge0 N*m clamp0 s" in head and "|F|" not in head, head
    assert "nan" not in line and f"{o['peak_root_moment']:.0f}" in line and f"{o['t_clamp0']:.3f}" in line, line


def test_the_docking_benchs_rigid_wing_is_the_chains_mass_matrix_at_rest():
    """bench/rods_docking.py fixes the deployed wing on the probe-cone ship as rigid masses: the ship's new mass, CoM
    and inertia about z are the planar chain's mass matrix (solver/core/planar_chain.py) with the wing straight."""
    import tomllib
    from bench.rods_docking import WINGED, WING, rigid_ship, scaled_wing
    sc, r = tomllib.loads(WINGED.read_text()), tomllib.loads(WING.read_text())["rods"]
    M0, c0, I0 = sc["active_craft"]["mass"], np.array(sc["active_craft"]["com"]), np.array(sc["active_craft"]["inertia"])
    Mw, c, I = rigid_ship(scaled_wing(1.0))
    n = r["count"]
    RODS = np.zeros((n, PC.NR))
    RODS[:, PC.R_L], RODS[:, PC.R_M], RODS[:, PC.R_MU] = r["length"], r["mass_per_length"], r["node_mass"]
    RODS[:, PC.R_EI] = r["EI"]
    nd = 3 * n + 3
    M, h, jx, jy = np.zeros((nd, nd)), np.zeros(nd), np.zeros(nd), np.zeros(nd)
    q = np.zeros(3 * n)
    q[:n] = math.pi / 2                      # the wing along the ship's +y, as the scenario lays it
    x0, y0 = np.array(sc["appendage"]["root"][:2]) - c0[:2]
    PC.chain_mass_bias(q, np.zeros(nd), RODS, x0, y0, 0.0, 0.0, M, h, jx, jy)
    dc = np.array(c) - c0
    assert abs(M[0, 0] - (Mw - M0)) < 1e-9 * M[0, 0]
    assert abs(-M[0, 2] - Mw * dc[1]) < 1e-9 * abs(M[0, 2]) and abs(M[1, 2] - Mw * dc[0]) < 1e-9 * abs(M[1, 2])
    izz = I[2][2] - I0[2, 2] + Mw * (dc[0] ** 2 + dc[1] ** 2)      # sum m r^2 about the ship's own CoM
    assert abs(M[2, 2] - izz) < 1e-9 * izz, (M[2, 2], izz)
