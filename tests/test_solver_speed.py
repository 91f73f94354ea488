"""Speed work keeps the model's numbers: the closed-form craft block equals the general CRBA sum bit for bit, and
bench/compare_runs.py finds identical runs identical and a changed one changed."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import h5py
import numpy as np

from solver import dynamics as D
from solver.simulate import run_scenario
from solver.vec3 import add, cross, mv, rot_inertia

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.compare_runs import compare  # noqa: E402


def _general_craft(m, I, om):
    """The general CRBA sum of `evaluate` for the craft (Jacobian at its CoM), in the same operation order."""
    JV = np.zeros((3, 6))
    JW = np.zeros((3, 6))
    for j in range(3):
        JV[j, j] = 1.0
        JW[j, 3 + j] = 1.0
    d = (0.0, 0.0, 0.0)
    JV[1, 3], JV[2, 3] = -d[2], d[1]
    JV[0, 4], JV[2, 4] = d[2], -d[0]
    JV[0, 5], JV[1, 5] = -d[1], d[0]
    M, b = np.zeros((6, 6)), np.arange(6.0) - 2.5
    a0 = al0 = (0.0, 0.0, 0.0)
    gyro = add(mv(I, al0), cross(om, mv(I, om)))
    for i in range(6):
        jvi, jwi = tuple(JV[:, i]), tuple(JW[:, i])
        b[i] -= m * (jvi[0] * a0[0] + jvi[1] * a0[1] + jvi[2] * a0[2]) + \
            (jwi[0] * gyro[0] + jwi[1] * gyro[1] + jwi[2] * gyro[2])
        Ijw = mv(I, jwi)
        for j in range(i + 1):
            M[i, j] += m * (JV[0, j] * jvi[0] + JV[1, j] * jvi[1] + JV[2, j] * jvi[2]) + \
                JW[0, j] * Ijw[0] + JW[1, j] * Ijw[1] + JW[2, j] * Ijw[2]
    return M, b, gyro


def test_craft_block_is_the_general_sum_bit_for_bit():
    rng = np.random.default_rng(4)
    for _ in range(200):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q
        R = (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z),
             1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x),
             1 - 2 * (x * x + y * y))
        J = np.diag(rng.uniform(1e4, 2e5, 3)) + np.triu(rng.normal(0, 3e3, (3, 3)), 1)
        J = J + np.triu(J, 1).T
        I = rot_inertia(R, tuple(J.ravel()))
        om = tuple(rng.normal(0, 0.05, 3))
        m = float(rng.uniform(5e3, 3e4))
        M_ref, b_ref, gyro = _general_craft(m, I, om)
        M, b = np.zeros((6, 6)), np.arange(6.0) - 2.5
        D._craft_block(M, b, m, I, gyro)
        assert np.array_equal(M, M_ref) and np.array_equal(b, b_ref)


def test_compare_runs_identical_and_changed(tmp_path):
    scen = ROOT / "resources" / "scenarios" / "central_impact_20t.toml"
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    run_scenario(scen, a, t_end=0.05)
    run_scenario(scen, b, t_end=0.05)
    worst, rows, problems = compare(a, b)
    assert worst == 0.0 and not problems and len(rows) > 100
    c = tmp_path / "c.h5"
    shutil.copy(b, c)
    with h5py.File(c, "r+") as f:
        f["channels/Fx"][10] += 1e-6 * max(1.0, np.abs(f["channels/Fx"][:]).max())
    worst, rows, problems = compare(a, c)
    assert dict(rows)["channels/Fx"] > 0 and worst == dict(rows)["channels/Fx"]
