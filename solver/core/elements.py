"""Force elements (numba): tables, spring/damper, end stops, hysteresis, the Coulomb brake's return-mapped slider and
a force-limited position servo with its rate filter.

Each returns a force (or new slider state) and the energy it stores (or dissipated), for the energy balance.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always")
def table(T, x):
    """Piecewise-linear table T (n, 3): x, value, integral; linear extrapolation at both ends."""
    n = T.shape[0]
    i = 0
    if x >= T[n - 1, 0]:
        i = n - 2
    else:
        while i < n - 2 and x >= T[i + 1, 0]:
            i += 1
    k = (T[i + 1, 1] - T[i, 1]) / (T[i + 1, 0] - T[i, 0])
    dx = x - T[i, 0]
    return T[i, 1] + k * dx, T[i, 2] + T[i, 1] * dx + 0.5 * k * dx * dx


@njit(cache=True, error_model="numpy")
def table_inverse(T, val):
    """x with table value val (monotone increasing table, linear extrapolation)."""
    n = T.shape[0]
    i = 0
    while i < n - 2 and val >= T[i + 1, 1]:
        i += 1
    k = (T[i + 1, 1] - T[i, 1]) / (T[i + 1, 0] - T[i, 0])
    return T[i, 0] + (val - T[i, 1]) / k


@njit(cache=True, error_model="numpy")
def spring_damper(k, c, x, v, preload):
    """Linear spring (with preload) and damper on extension x, rate v: restoring force and stored energy."""
    return -(preload + k * x) - c * v, preload * x + 0.5 * k * x * x


@njit(cache=True, error_model="numpy")
def hysteresis(k, x, z, lim):
    """Elastic element with a slider (hysteresis, seed 000 piecewise-linear with constant parameters)."""
    f = k * (x - z)
    if f > lim:
        f = lim
    elif f < -lim:
        f = -lim
    return f, 0.5 * f * f / k if k > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def end_stop(x, lim, k):
    """Symmetric mechanical stop beyond |x| > lim: restoring force and stored energy."""
    if x > lim:
        return -k * (x - lim), 0.5 * k * (x - lim) ** 2
    if x < -lim:
        return -k * (x + lim), 0.5 * k * (x + lim) ** 2
    return 0.0, 0.0


@njit(cache=True, error_model="numpy")
def slider(k, x, z, lim):
    """Return-map a slider (Coulomb brake or hysteresis, force capped at lim): new z and the energy it dissipated."""
    f = k * (x - z)
    if f > lim:
        zn = x - lim / k
        return zn, lim * (zn - z)
    if f < -lim:
        zn = x + lim / k
        return zn, lim * (z - zn)
    return z, 0.0


@njit(cache=True, error_model="numpy")
def rate_servo(kp, ki, w_cmd, w, integral, limit):
    """PI rate loop of a drive: torque toward the commanded rate, capped at +-limit (the motor's torque limit)."""
    t = kp * (w_cmd - w) + ki * integral
    if t > limit:
        return limit
    if t < -limit:
        return -limit
    return t



@njit(cache=True, error_model="numpy")
def position_servo(k, c, limit, err, rate_err):
    """Position servo of a drive: k err + c rate_err toward its path, capped at +-limit (the actuator's limit)."""
    return min(limit, max(-limit, k * err + c * rate_err))


@njit(cache=True, error_model="numpy")
def rate_filter(y, v, tau):
    """Rate of a first-order filter's output y of a measured rate v (a servo's rate estimate, bandwidth 1/tau)."""
    return (v - y) / tau


@njit(cache=True, error_model="numpy")
def admittance_rate(w, k, c, x):
    """Rate of an admittance's commanded offset x under a measured load w: c x' + k x = w (it yields to the load)."""
    return (w - k * x) / c
