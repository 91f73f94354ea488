"""The core's free rigid body (solver/core/free_body.py) against closed forms: the torque-free symmetric top's
precession, the intermediate-axis flip keeping energy and angular momentum, point velocity as the derivative of point
position, a force at a point as its wrench, and the world-frame forms equal to the body-frame ones."""
from __future__ import annotations

import math

import numpy as np
import pytest

from solver.core import free_body as fb

NX = fb.NX


def _body(c, q, v, w):
    s = np.zeros(NX)
    s[fb.X:fb.X + 3], s[fb.Q:fb.Q + 4], s[fb.V:fb.V + 3], s[fb.W:fb.W + 3] = c, q, v, w
    return s


def _rk4(s, m, I, h, n, every=0):
    """n RK4 steps of a torque-free body (the core's derivative, quaternion normalised each step)."""
    Iinv = np.linalg.inv(I)
    R = np.zeros((3, 3))
    F, T = np.zeros((1, 3)), np.zeros((1, 3))
    ks = [np.zeros(NX) for _ in range(4)]
    out = []

    def f(x, k):
        fb.rotation_of(x, 0, R)
        fb.derivative(x, 0, m, I, Iinv, R, F[0], T[0], k)
    for i in range(n):
        f(s, ks[0])
        f(s + 0.5 * h * ks[0], ks[1])
        f(s + 0.5 * h * ks[1], ks[2])
        f(s + h * ks[2], ks[3])
        s = s + h / 6.0 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3])
        fb.normalize(s, fb.Q)
        if every and (i + 1) % every == 0:
            out.append(s.copy())
    return s, out


def _invariants(s, m, I):
    R = np.zeros((3, 3))
    fb.rotation_of(s, 0, R)
    p, L = fb.momenta(s, 0, m, I, R)
    return fb.kinetic_energy(m, I, s[fb.V:fb.V + 3], s[fb.W:fb.W + 3]), np.array(p), np.array(L), R


def test_a_torque_free_symmetric_top_precesses_at_the_closed_form_rates():
    """Body frame: (w1, w2) turns at (I3 - I1) w3 / I1; space: the symmetry axis turns about L at |L| / I1."""
    I1, I3, m = 2.0, 5.0, 3.0
    I = np.diag([I1, I1, I3])
    a, w3 = 0.3, 1.2
    s0 = _body((0.1, -0.2, 0.3), (1.0, 0.0, 0.0, 0.0), (0.01, 0.02, -0.03), (a, 0.0, w3))
    h, n = 2e-3, 1500
    s, _ = _rk4(s0, m, I, h, n)
    t = h * n
    lam = (I3 - I1) * w3 / I1
    got = math.atan2(s[fb.W + 1], s[fb.W])
    assert abs(math.remainder(got - lam * t, 2 * math.pi)) < 1e-9
    assert abs(math.hypot(s[fb.W], s[fb.W + 1]) - a) < 1e-11 and abs(s[fb.W + 2] - w3) < 1e-12
    _, _, L0, _ = _invariants(s0, m, I)
    _, _, L1, R = _invariants(s, m, I)
    Lh = L0 - np.cross(s0[:3], m * s0[fb.V:fb.V + 3])          # about the CoM
    # the symmetry axis e3 = R[:, 2] on its cone about L, turned by |L| / I1 t
    e30, e3 = np.array([0.0, 0.0, 1.0]), R[:, 2]
    u = Lh / np.linalg.norm(Lh)

    def az(e):
        p = e - (e @ u) * u
        return p / np.linalg.norm(p)
    p0, p1 = az(e30), az(e3)
    ang = math.atan2(np.cross(p0, p1) @ u, p0 @ p1)
    want = math.remainder(np.linalg.norm(Lh) / I1 * t, 2 * math.pi)
    assert abs(ang - want) < 1e-8
    np.testing.assert_allclose(s[:3], s0[:3] + t * s0[fb.V:fb.V + 3], rtol=0, atol=1e-12)
    np.testing.assert_allclose(L1, L0, rtol=0, atol=1e-11)


def test_the_intermediate_axis_flips_keeping_energy_and_angular_momentum():
    """Dzhanibekov: spin about the middle axis with a small perturbation flips over; E and L (world) stay."""
    I, m = np.diag([1.0, 2.0, 3.0]), 1.0
    s0 = _body((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.05, 1.0, 0.0))
    s, hist = _rk4(s0, m, I, 5e-3, 2400, every=10)
    w2 = np.array([x[fb.W + 1] for x in hist])
    assert w2.min() < -0.95 and w2[0] > 0.95                   # the spin reversed in the body (the flip)
    e0, _, L0, _ = _invariants(s0, m, I)
    for x in hist:
        e, _, L, _ = _invariants(x, m, I)
        assert abs(e - e0) < 1e-8 * e0
        assert np.linalg.norm(L - L0) < 1e-8 * np.linalg.norm(L0)


def _q_axis(axis, ang):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.r_[math.cos(ang / 2), math.sin(ang / 2) * axis]


def _qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def test_point_velocity_and_quaternion_rate_are_the_derivatives_of_the_pose():
    """A body turning at a constant body rate w: q(t) = q0 exp(w t / 2); the core's point velocity and quaternion
    rate equal central differences of the point's position and of q."""
    q0 = _q_axis((0.3, -1.0, 0.5), 0.7)
    c0, v, w = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.1, -0.2]), np.array([0.4, -0.9, 1.3])
    p = np.array([0.8, 0.25, -1.1])                 # body frame, from the CoM
    wn = np.linalg.norm(w)

    def state(t):
        q = _qmul(q0, _q_axis(w, wn * t))
        return _body(c0 + v * t, q, v, w)
    R = np.zeros((3, 3))

    def pos(t):
        x = state(t)
        fb.rotation_of(x, 0, R)
        return np.array(fb.position_at(x, 0, R, *p))
    d = 1e-5
    fd = (pos(d) - pos(-d)) / (2 * d)
    x = state(0.0)
    fb.rotation_of(x, 0, R)
    xp = pos(0.0)
    np.testing.assert_allclose(fb.velocity_at(x, 0, R, *xp), fd, rtol=0, atol=1e-9)
    dq = (state(d)[fb.Q:fb.Q + 4] - state(-d)[fb.Q:fb.Q + 4]) / (2 * d)
    np.testing.assert_allclose(fb.quat_rate(*x[fb.Q:fb.Q + 4], *w), dq, rtol=0, atol=1e-10)
    # the same rate with omega in the world frame
    np.testing.assert_allclose(fb.quat_rate_world(tuple(R @ w), *x[fb.Q:fb.Q + 4]), dq, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(R, np.array(fb.rotation(*x[fb.Q:fb.Q + 4])).reshape(3, 3))
    np.testing.assert_allclose(fb.quaternion(fb.rotation(*q0)), q0, rtol=0, atol=1e-15)


def test_a_force_at_a_point_gives_its_wrench_and_the_power_of_the_point_velocity():
    s = _body((1.0, 2.0, 3.0), _q_axis((1, 1, 0), 0.4), (0.2, -0.1, 0.05), (0.3, 0.7, -0.5))
    F, T = np.zeros((2, 3)), np.zeros((2, 3))
    fb.add_force_at(F, T, 1, s, 0, 1.0, 2.0, 4.0, 2.0, 0.0, 0.0)      # 2 N along x, 1 m above the CoM along z
    np.testing.assert_array_equal(F, [[0, 0, 0], [2.0, 0, 0]])
    np.testing.assert_array_equal(T, [[0, 0, 0], [0, 2.0, 0]])
    fb.add_force_at(F, T, 1, s, 0, 1.0, 2.0, 2.0, -2.0, 0.0, 0.0)     # its opposite 1 m below: a couple 4 N m
    np.testing.assert_array_equal(F[1], [0, 0, 0])
    np.testing.assert_array_equal(T[1], [0, 4.0, 0])
    # the wrench's power F.v + T.w_world equals the force's power on its point's velocity
    rng = np.random.default_rng(3)
    R = np.zeros((3, 3))
    fb.rotation_of(s, 0, R)
    for _ in range(5):
        x, f = s[:3] + rng.normal(size=3), rng.normal(size=3)
        F[:], T[:] = 0.0, 0.0
        fb.add_force_at(F, T, 0, s, 0, *x, *f)
        pw = F[0] @ s[fb.V:fb.V + 3] + T[0] @ (R @ s[fb.W:fb.W + 3])
        assert abs(pw - f @ np.array(fb.velocity_at(s, 0, R, *x))) < 1e-13


def test_the_world_frame_euler_equations_equal_the_body_frame_ones():
    I = np.array([[3.0, 0.2, -0.1], [0.2, 2.0, 0.05], [-0.1, 0.05, 4.0]])
    Iinv = np.linalg.inv(I)
    s = _body((0, 0, 0), _q_axis((0.2, 0.5, -1.0), 1.1), (0, 0, 0), (0.4, -0.3, 0.9))
    R = np.zeros((3, 3))
    fb.rotation_of(s, 0, R)
    tau = np.array([0.5, -1.0, 0.25])                # world
    ds = np.zeros(NX)
    fb.derivative(s, 0, 2.0, I, Iinv, R, np.zeros(3), tau, ds)
    r9 = tuple(R.ravel())
    dw, _ = fb.euler_accel(fb.inertia_world(r9, tuple(I.ravel())), fb.inertia_world(r9, tuple(Iinv.ravel())),
                                tuple(R @ s[fb.W:fb.W + 3]), tuple(tau))
    np.testing.assert_allclose(dw, R @ ds[fb.W:fb.W + 3], rtol=0, atol=1e-13)


@pytest.mark.parametrize("q", [(1.0, 0, 0, 0), (0.0, 1.0, 0, 0), (0.0, 0, 1.0, 0), (0.0, 0, 0, 1.0)])
def test_quaternion_of_a_matrix_on_every_branch(q):
    qq = np.array(q) + np.array([0.05, 0.02, -0.03, 0.04])
    qq /= np.linalg.norm(qq)
    got = np.array(fb.quaternion(fb.rotation(*qq)))
    np.testing.assert_allclose(got * np.sign(got @ qq), qq, rtol=0, atol=1e-15)


def test_the_quaternion_to_matrix_formula_is_written_once_in_the_solver():
    """Every type's rotation comes from free_body (old main had it in six solver files; the viewer, which reads run
    files and imports no kernel, keeps its own numpy form)."""
    from pathlib import Path
    solver = Path(fb.__file__).resolve().parent.parent
    found = sorted(str(p.relative_to(solver)) for p in solver.rglob("*.py")
                   if "1 - 2 * (" in p.read_text() or "1.0 - 2.0 * (" in p.read_text())
    assert found == ["core/free_body.py"]
