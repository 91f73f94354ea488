"""The engine core (solver/core) and the layout of solver/: the top level names no mechanism part, the core imports
no mechanism type, a run imports and compiles only its own type's kernels, and the core parts give the textbook
numbers (two-link arm mass matrix and velocity products, slider dissipation, stop and table energies)."""
from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver.core import bodies as B
from solver.core.elements import (admittance_rate, end_stop, hysteresis, position_servo, rate_filter, slider,
                                  table, table_inverse)

ROOT = Path(__file__).resolve().parent.parent
SOLVER = ROOT / "solver"
PARTS = {"probe", "probes", "cone", "cones", "petal", "petals", "ring", "rings", "leg", "legs", "latch", "latches"}


def _part_names(path: Path) -> list[str]:
    """Lines of a file naming a mechanism part (whole words of identifiers, strings and comments)."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if {t.lower() for t in re.split(r"[^A-Za-z]+", line)} & PARTS:
            out.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    return out


def test_solvers_top_level_and_core_name_no_mechanism_part():
    """solver/*.py and solver/core/ hold what every type uses; a mechanism's parts live in solver/mechanisms/."""
    files = sorted(SOLVER.glob("*.py")) + sorted((SOLVER / "core").glob("*.py"))
    assert len(files) > 10
    found = []
    for f in files:
        found += _part_names(f)
    assert found == []
    assert not any(p.is_file() for p in (SOLVER / "dynamics.py", SOLVER / "hexapod.py", SOLVER / "wireframe_probe.py"))


def test_the_grep_finds_a_part_name():
    """The check above can fail: a file naming a latch is found, a string is not a ring."""
    assert _part_names(SOLVER / "mechanisms" / "probe_cone" / "dynamics.py")
    assert not _part_names(SOLVER / "core" / "elements.py")
    assert not {t.lower() for t in re.split(r"[^A-Za-z]+", "string during legend")} & PARTS


def test_the_core_imports_no_mechanism_type():
    for f in (SOLVER / "core").glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(n.startswith(("solver.mechanisms", "solver.simulate", "solver.scenario"))
                               for n in names), (f.name, names)


@pytest.mark.parametrize("scenario,own,other", [
    ("resources/scenarios/central_impact_20t.toml", "probe_cone", "peripheral"),
    ("resources/peripheral/scenarios/idss_envelope.toml", "peripheral", "probe_cone"),
])
def test_a_run_imports_and_compiles_only_its_types_kernels(scenario, own, other):
    code = ("import sys; from solver.scenario import load_model; from solver.warmup import kernel_units\n"
            f"units = kernel_units(load_model(r'{ROOT / scenario}'))\n"
            "print(sorted({d.py_func.__module__ for _, d, _ in units}))\n"
            "print(sorted(n for n in sys.modules if n.startswith('solver.mechanisms.') and n.endswith('dynamics')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    units, imported = (eval(x) for x in out.stdout.strip().splitlines())
    assert f"solver.mechanisms.{own}.dynamics" in units
    assert not any(other in u for u in units)
    assert imported == [f"solver.mechanisms.{own}.dynamics"]


def _two_link(q2: float):
    """JOINT and KIN of a planar two-link arm (links 1.0 and 0.8 m, 20 and 10 kg, rods about their centres)."""
    L, m = (1.0, 0.8), (20.0, 10.0)
    rows = [B.joint_row(i - 1, (0, 0, 1), (0, 0, 0) if i == 0 else (L[0], 0, 0), m[i], (L[i] / 2, 0, 0),
                        np.diag([1e-3, m[i] * L[i] ** 2 / 12, m[i] * L[i] ** 2 / 12])) for i in range(2)]
    J = np.array(rows)
    K = np.zeros((2, B.NK))
    B.tree_pose(J, np.array([0.3, q2]), K)
    return J, K, L, m


def test_the_runner_calls_only_the_kernels_protocol_and_block_kernels_has_all_of_it():
    """run_kernels uses a Kernels' hooks by name, none by getattr; each is declared in the protocol and BlockKernels
    (every type's base) has it, so a type only overrides what it changes (flexible_frames, cancel, tick, ...)."""
    import inspect

    from solver import simulate
    src = inspect.getsource(simulate.run_kernels)
    assert not re.search(r"getattr\(k\b", src), "run_kernels reads an optional hook by getattr"
    used = set(re.findall(r"\bk\.(\w+)", src))
    declared = set(simulate.Kernels.__annotations__) | {n for n in vars(simulate.Kernels) if not n.startswith("_")}
    assert {"flexible_frames", "frames", "cancel", "tick", "spo"} <= used
    assert used <= declared, used - declared
    assert all(hasattr(simulate.BlockKernels, n) or n in ("state", "spo") for n in declared)
    assert simulate.BlockKernels.flexible_frames(None, 3) is None


def test_tree_mass_matrix_and_velocity_products_are_the_two_link_textbook_ones():
    q2, qd = 0.7, np.array([0.4, -1.1])
    J, K, L, m = _two_link(q2)
    M = np.zeros((2, 2))
    B.tree_mass_matrix(J, K, M)
    I1, I2 = m[0] * L[0] ** 2 / 12, m[1] * L[1] ** 2 / 12
    c1, c2 = L[0] / 2, L[1] / 2
    M11 = I1 + I2 + m[0] * c1 ** 2 + m[1] * (L[0] ** 2 + c2 ** 2 + 2 * L[0] * c2 * math.cos(q2))
    M12 = I2 + m[1] * (c2 ** 2 + L[0] * c2 * math.cos(q2))
    M22 = I2 + m[1] * c2 ** 2
    assert M == pytest.approx(np.array([[M11, M12], [M12, M22]]), rel=1e-13)
    bias = np.zeros(2)
    B.tree_bias(J, K, qd, np.zeros((2, 15)), bias)
    h = m[1] * L[0] * c2 * math.sin(q2)
    assert bias == pytest.approx([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2], rel=1e-12)
    x = np.zeros(2)
    B.cholesky_factor(M, 2)
    B.cholesky_solve(M, np.array([1.0, 2.0]), 2, x)
    assert np.array([[M11, M12], [M12, M22]]) @ x == pytest.approx([1.0, 2.0], rel=1e-12)


def test_point_velocity_and_generalized_force_are_transposes():
    """J^T f from add_point_force equals the power of f over the point's velocity per unit joint rate."""
    J, K, L, _ = _two_link(0.7)
    tip = K[1, B.K_ORIGIN:B.K_ORIGIN + 3] + K[1, B.K_R:B.K_R + 9].reshape(3, 3) @ [L[1], 0, 0]
    f, tau, v = np.array([3.0, -2.0, 0.5]), np.zeros(2), np.zeros(3)
    B.add_point_force(J, K, 1, tip, f, tau)
    for j in range(2):
        B.point_velocity(J, K, np.eye(2)[j], 1, tip, v)
        assert tau[j] == pytest.approx(v @ f, rel=1e-13)


def test_force_elements_store_and_dissipate_what_they_should():
    # slider (Coulomb brake): a stretch beyond the limit moves z so the force is the limit; dissipated = limit * slip
    z, e = slider(2000.0, 0.1, 0.0, 5.0)
    assert 2000.0 * (0.1 - z) == pytest.approx(5.0) and e == pytest.approx(5.0 * z)
    assert slider(2000.0, 0.001, 0.0, 5.0) == (0.0, 0.0)
    assert hysteresis(2000.0, 0.1, 0.0, 5.0) == (5.0, pytest.approx(5.0 ** 2 / 4000.0))
    # end stop: the stored energy is the work of the force from the stop (trapezoid over 1000 steps)
    xs = np.linspace(0.2, 0.25, 1001)
    f = np.array([end_stop(x, 0.2, 1e4)[0] for x in xs])
    assert -np.trapezoid(f, xs) == pytest.approx(end_stop(0.25, 0.2, 1e4)[1], rel=1e-6)
    assert end_stop(-0.25, 0.2, 1e4) == (pytest.approx(500.0), pytest.approx(12.5))
    # table: value, its integral and the inverse
    T = np.array([[0.0, 0.0, 0.0], [1.0, 10.0, 5.0], [2.0, 30.0, 25.0]])
    assert table(T, 1.5) == (20.0, pytest.approx(5.0 + 10.0 * 0.5 + 0.5 * 20.0 * 0.25))
    assert table_inverse(T, 20.0) == pytest.approx(1.5)


def test_a_position_servo_on_its_filtered_rate_damps_a_mass_as_its_damping_ratio_says():
    """A 10 t mass held by a servo (k 2.6e5 N/m, c for a damping ratio of 0.37) that reads its rate through a 5 ms
    filter: released 1 mm off, it overshoots by exp(-pi zeta / sqrt(1 - zeta^2)) (closed form, 2 %); the force is
    capped at the servo's limit."""
    import math
    m, k, zeta, tau, h = 1e4, 2.6e5, 0.37, 0.005, 5e-4
    c = 2.0 * zeta * math.sqrt(k * m)

    def rate(s):
        x, v, y = s
        f = position_servo(k, c, 1e9, -x, -y)
        return np.array([v, f / m, rate_filter(y, v, tau)])
    s, low = np.array([1e-3, 0.0, 0.0]), 1.0
    for _ in range(int(2.0 / h)):                      # past the first swing (half period 0.66 s)
        k1 = rate(s)
        k2 = rate(s + 0.5 * h * k1)
        k3 = rate(s + 0.5 * h * k2)
        k4 = rate(s + h * k3)
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        low = min(low, s[0])
    assert -low / 1e-3 == pytest.approx(math.exp(-math.pi * zeta / math.sqrt(1.0 - zeta ** 2)), rel=0.02)
    assert position_servo(k, c, 250.0, -0.01, 0.0) == -250.0 and position_servo(k, c, 250.0, 0.0, 0.01) == 250.0


def test_an_admittance_yields_to_a_held_load_as_its_time_constant_says_and_the_small_solve_is_numpys():
    """c x' + k x = w under a constant load: x = w/k (1 - exp(-k t / c)) (closed form, RK4 at 1 ms: 1e-9); with k = 0
    it moves at w / c. The core's `lu_solve` on random 6x6 systems equals numpy's solve to 1e-10 (the hexapod's wrench
    into leg forces)."""
    import math

    from solver.core.linear import lu_solve
    w, k, c, h = 300.0, 2.0e3, 1.0e3, 1e-3
    x = 0.0
    for _ in range(1000):                                   # 1 s = 2 time constants
        k1 = admittance_rate(w, k, c, x)
        k2 = admittance_rate(w, k, c, x + 0.5 * h * k1)
        k3 = admittance_rate(w, k, c, x + 0.5 * h * k2)
        k4 = admittance_rate(w, k, c, x + h * k3)
        x += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    assert x == pytest.approx(w / k * (1.0 - math.exp(-k / c)), abs=1e-9)
    assert admittance_rate(w, 0.0, c, 0.7) == w / c
    rng = np.random.default_rng(7)
    for _ in range(20):
        A, b = rng.normal(size=(6, 6)), rng.normal(size=6)
        x, got = np.linalg.solve(A, b), np.zeros(6)
        assert lu_solve(A, b, 6, got)
        assert np.allclose(got, x, rtol=0.0, atol=1e-10 * np.abs(x).max())
