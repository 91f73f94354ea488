"""Top-pane geometry helpers: body pose matrices, the dynamic plane Ld and force-arrow matrices."""
import numpy as np
import pytest

from solver import quat
from viewer.scene_geometry import arrow_matrix, lateral_direction, ld_plane, pose_matrices


def test_pose_matrices_match_solver_quaternions():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(5, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = rng.normal(size=(5, 3))
    m = pose_matrices(p, q)
    np.testing.assert_allclose(m[:, :3, :3], quat.to_matrix(q), atol=1e-12)
    np.testing.assert_allclose(m[:, :3, 3], p)
    np.testing.assert_allclose(m[:, 3], np.tile([0, 0, 0, 1.0], (5, 1)))


def test_ld_plane_contains_axis_gimbal_and_joint_when_coplanar():
    d = np.array([0.0, 0.6, 0.8])
    gimbal = np.array([0.7, 0, 0]) + 0.03 * d
    joint = np.array([0.3, 0, 0]) + 0.05 * d
    up, n = ld_plane(gimbal, joint, reference=[0, 0, 1.0])
    np.testing.assert_allclose(up, d, atol=1e-12)
    assert abs(n @ [1, 0, 0]) < 1e-12 and abs(n @ gimbal) < 1e-12 and abs(n @ joint) < 1e-12


def test_ld_plane_up_keeps_the_reference_sign_and_falls_back_on_axis():
    ref = np.array([0.0, 0.6, 0.8])
    up, _ = ld_plane([0.7, -0.018, -0.024], [0.3, -0.03, -0.04], ref)  # offset on the other side
    np.testing.assert_allclose(up, ref, atol=1e-12)
    up, n = ld_plane([0.7, 0, 0], [0.3, 1e-6, 0], ref)                 # both on the cone axis
    np.testing.assert_allclose(up, ref)
    assert lateral_direction([0.7, 0, 0], [0.3, 0, 0]) is None


def test_ld_plane_best_fit_when_not_coplanar():
    up, n = ld_plane([0.7, 0.0, 0.01], [0.3, 0.0, 0.05], reference=[0, 0, 1.0])
    assert up[2] > 0.99  # both offsets along z: the plane is x-z, looked at along y
    up, n = ld_plane([0.7, 0.04, 0.0], [0.3, 0.0, 0.01], reference=[0, 0, 1.0])
    assert abs(up[1]) > abs(up[2])  # dominated by the larger (gimbal) offset along y


def test_arrow_matrix_scales_and_points_along_force():
    m = arrow_matrix([0.1, 0.2, 0.3], [0.0, 300.0, 400.0], scale=5e-4, max_length=0.4, width=0.1)
    tip = m[:3, :3] @ [1, 0, 0] + m[:3, 3]
    np.testing.assert_allclose(tip - [0.1, 0.2, 0.3], [0.0, 0.15, 0.2], atol=1e-12)
    assert np.linalg.norm(m[:3, 1]) == pytest.approx(0.1) and abs(m[:3, 0] @ m[:3, 1]) < 1e-12
    m = arrow_matrix([0, 0, 0], [5000.0, 0, 0], scale=1e-3, max_length=0.4, width=0.1)
    assert m[:3, 0] == pytest.approx([0.4, 0, 0])  # clamped
    assert arrow_matrix([0, 0, 0], [0, 0, 0], 1e-3, 0.4, 0.1) is None
