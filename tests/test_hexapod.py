"""Hexapod (Gough–Stewart platform) of the peripheral unit: forward kinematics against an independent solve
(scipy least squares over position and Euler angles), IK(FK(L)) == L, the Jacobian and the ring wrench against
finite differences and plain statics, on the layout of resources/peripheral/peripheral_idss.toml."""
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from solver.mechanisms.peripheral import hexapod as H

TOML = Path(__file__).resolve().parents[1] / "resources" / "peripheral" / "peripheral_idss.toml"
CFG = tomllib.loads(TOML.read_text())
HEX = H.hexapod_layout(CFG, TOML.name)


def independent_pose(lengths, x0):
    """Pose (position, rotation matrix) with the given leg lengths by scipy least squares over position and ZYX
    Euler angles, written without the module's kinematics."""
    def res(q):
        R = Rotation.from_euler("ZYX", q[3:]).as_matrix()
        return np.linalg.norm(q[:3] + HEX.ring @ R.T - HEX.base, axis=1) - lengths
    sol = least_squares(res, x0, method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=2000)
    return sol.x[:3], Rotation.from_euler("ZYX", sol.x[3:]).as_matrix(), np.abs(sol.fun).max()


def rot_angle(Ra, Rb):
    """Angle of the rotation Ra Rb^T (atan2 of its sine and cosine: acos alone loses half the digits near 0)."""
    M = Ra @ Rb.T
    s = 0.5 * math.sqrt((M[2, 1] - M[1, 2]) ** 2 + (M[0, 2] - M[2, 0]) ** 2 + (M[1, 0] - M[0, 1]) ** 2)
    return math.atan2(s, (np.trace(M) - 1.0) / 2.0)


def test_neutral_pose_has_equal_legs_in_closed_form():
    h = CFG["hexapod"]
    L, U = H.inverse_kinematics(HEX.base, HEX.ring, HEX.home_pos, HEX.home_rot)
    d = math.radians(60.0 - h["base_half_angle"] - h["ring_half_angle"])      # base to ring point, about the axis
    plan2 = h["base_radius"] ** 2 + h["ring_radius"] ** 2 - 2 * h["base_radius"] * h["ring_radius"] * math.cos(d)
    np.testing.assert_allclose(L, math.sqrt(h["neutral_height"] ** 2 + plan2), rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, rtol=1e-15)
    assert np.all(HEX.length_min < L) and np.all(L < HEX.length_max)


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=80, deadline=None)
@given(frac=st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6))
def test_forward_kinematics_of_random_leg_lengths_against_an_independent_solve(frac):
    """Leg lengths anywhere in their range: Newton from the neutral pose recovers the pose the independent solve
    finds to 1e-9, and IK(FK(L)) == L to 1e-12. Lengths with no assembly near the neutral pose are skipped; the
    next test counts how many of the range converge."""
    L = HEX.length_min + np.array(frac) * (HEX.length_max - HEX.length_min)
    pos, rot, it, err = HEX.pose(L)
    assume(it >= 0)
    assert err <= 1e-12
    np.testing.assert_allclose(H.inverse_kinematics(HEX.base, HEX.ring, pos, rot)[0], L, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-14)
    x0 = np.concatenate([HEX.home_pos, np.zeros(3)])
    p2, r2, res2 = independent_pose(L, x0)
    assert res2 < 1e-12
    assert np.abs(pos - p2).max() < 1e-9
    assert rot_angle(rot, r2) < 1e-9


def test_forward_kinematics_converges_over_most_of_the_leg_range():
    rng = np.random.default_rng(26)
    draws = HEX.length_min + rng.uniform(size=(300, 6)) * (HEX.length_max - HEX.length_min)
    ok = sum(HEX.pose(L)[2] >= 0 for L in draws)
    assert ok >= 0.9 * len(draws)


@pytest.mark.slow   # hypothesis poses against dense sampling / an independent solve
@settings(max_examples=80, deadline=None)
@given(p=st.tuples(*[st.floats(-0.08, 0.08)] * 3), phi=st.tuples(*[st.floats(-0.12, 0.12)] * 3))
def test_pose_recovered_from_its_leg_lengths(p, phi):
    """A ring pose within +-8 cm and +-7 deg of neutral: IK, then FK from the neutral pose, gives it back."""
    pos = HEX.home_pos + np.array(p)
    rot = Rotation.from_rotvec(phi).as_matrix()
    L = HEX.lengths(pos, rot)
    pos2, rot2, it, err = HEX.pose(L)
    assert it >= 0 and err <= 1e-12
    assert np.abs(pos2 - pos).max() < 1e-9 and rot_angle(rot2, rot) < 1e-9


def test_jacobian_against_finite_differences():
    rng = np.random.default_rng(7)
    h = 1e-6
    for _ in range(20):
        pos = HEX.home_pos + rng.uniform(-0.05, 0.05, 3)
        rot = Rotation.from_rotvec(rng.uniform(-0.08, 0.08, 3)).as_matrix()
        J = H.leg_jacobian(HEX.base, HEX.ring, pos, rot)
        fd = np.empty((6, 6))
        for k in range(6):
            d = np.zeros(6)
            d[k] = h
            Lp = HEX.lengths(pos + d[:3], Rotation.from_rotvec(d[3:]).as_matrix() @ rot)
            Lm = HEX.lengths(pos - d[:3], Rotation.from_rotvec(-d[3:]).as_matrix() @ rot)
            fd[:, k] = (Lp - Lm) / (2 * h)
        np.testing.assert_allclose(J, fd, atol=1e-9)


def test_ring_wrench_is_the_sum_of_leg_forces_and_their_moments():
    rng = np.random.default_rng(3)
    pos = HEX.home_pos + np.array([-0.03, 0.02, 0.01])
    rot = Rotation.from_rotvec([0.02, -0.05, 0.03]).as_matrix()
    f = rng.normal(scale=500.0, size=6)
    w = H.ring_wrench(HEX.base, HEX.ring, pos, rot, f)
    arm = HEX.ring @ rot.T                                                  # ring points from the ring origin
    legs = pos + arm - HEX.base
    u = legs / np.linalg.norm(legs, axis=1)[:, None]
    np.testing.assert_allclose(w[:3], (f[:, None] * u).sum(0), rtol=1e-13, atol=1e-10)
    np.testing.assert_allclose(w[3:], np.cross(arm, f[:, None] * u).sum(0), rtol=1e-13, atol=1e-10)


def test_equal_leg_forces_at_neutral_give_a_pure_axial_force():
    """Symmetric central case: six equal leg forces on the neutral ring, no lateral force, no moment."""
    w = H.ring_wrench(HEX.base, HEX.ring, HEX.home_pos, HEX.home_rot, np.full(6, 1000.0))
    assert w[0] > 0
    np.testing.assert_allclose(w[1:], 0.0, atol=1e-10)
    L, U = H.inverse_kinematics(HEX.base, HEX.ring, HEX.home_pos, HEX.home_rot)
    assert w[0] == pytest.approx(6000.0 * CFG["hexapod"]["neutral_height"] / L[0], rel=1e-14)


def test_unreachable_leg_lengths_are_reported_not_raised():
    pos, rot, it, err = HEX.pose(np.full(6, 0.01))
    assert it == -1 and err > 0.01


def test_rotvec_matrix_against_scipy():
    for v in ([0.0, 0.0, 0.0], [1e-7, -2e-7, 3e-8], [0.3, -0.2, 0.9], [2.0, 1.0, -1.5]):
        np.testing.assert_allclose(H.rotvec_matrix(*v), Rotation.from_rotvec(v).as_matrix(), atol=1e-15)


@pytest.mark.parametrize("key, value, message", [
    ("base_radius", 0.0, "hexapod.base_radius: must be > 0 (got 0)"),
    ("ring_radius", "0.5", "hexapod.ring_radius: must be a finite number, not '0.5'"),
    ("neutral_height", float("nan"), "hexapod.neutral_height: must be a finite number, not nan"),
    ("stroke_extend", -0.01, "hexapod.stroke_extend: must be >= 0 (got -0.01)"),
    ("ring_half_angle", 50.0, "their sum must be < 60 deg (got 60)"),
    ("stroke_retract", 0.6, "hexapod.stroke_retract: must be shorter than the neutral leg length 0.5044 m"),
    ("base_radius", None, "hexapod.base_radius: missing"),
])
def test_bad_hexapod_values_are_refused_with_file_and_key(key, value, message):
    h = dict(CFG["hexapod"])
    if value is None:
        del h[key]
    else:
        h[key] = value
    with pytest.raises(ValueError) as e:
        H.hexapod_layout({"hexapod": h}, "peripheral_idss.toml")
    assert str(e.value).startswith("peripheral_idss.toml: hexapod.") and message in str(e.value)
    with pytest.raises(ValueError, match=r"^x\.toml: hexapod: missing table \[hexapod\]"):
        H.hexapod_layout({}, "x.toml")
