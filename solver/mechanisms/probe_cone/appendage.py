"""A rod chain on the probe-cone's active craft ([appendage] of a scenario, docs/rods.md): the step kernel's hook that
solves the active subsystem with the chain (solver.core.appendage), compiled only for a run that has one.

AP: formulation (1 reduced), the chain's root from the craft's CoM and its plane axes e1, e2 (craft frame); AR: the
rods type's RODS rows; AW: row 0 the chain's `out` values, rows 1-3 the craft's rotation, rows 4.. the solver scratch.
The chain's state (q, q_dot: 6n) follows the probe-cone's NS values of s."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core import appendage as CA
from solver.mechanisms.probe_cone.dynamics import ND, NS, S_QA, S_VA, S_WA, W_B, W_M, W_UD

A_FORM, A_RA, A_E1, A_E2 = 0, 1, 4, 7
NA = 10


def scratch(n: int) -> np.ndarray:
    """AW of a chain of n rods."""
    r, c = CA.work_shape(ND, n)
    return np.zeros((4 + r, max(c, CA.out_size(n), 3)))


@njit(cache=True, error_model="numpy")
def appendage_step(s, ds, W, AP, AR, AW):
    """The active subsystem's accelerations (W's rows as `evaluate` fills them: mass matrix, right side, u_dot) with
    the chain (its derivative into ds after NS); 0, or 1 if the coupled matrix is singular."""
    n = AR.shape[0]         # (0 * n: the body's first row as a run-time int64, so the test's free body shares the unit)
    q0, q1, q2, q3 = s[S_QA], s[S_QA + 1], s[S_QA + 2], s[S_QA + 3]
    qn = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    q0, q1, q2, q3 = q0 / qn, q1 / qn, q2 / qn, q3 / qn
    R = AW[1:4, 0:3]
    R[0, 0], R[0, 1], R[0, 2] = 1 - 2 * (q2 * q2 + q3 * q3), 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)
    R[1, 0], R[1, 1], R[1, 2] = 2 * (q1 * q2 + q0 * q3), 1 - 2 * (q1 * q1 + q3 * q3), 2 * (q2 * q3 - q0 * q1)
    R[2, 0], R[2, 1], R[2, 2] = 2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 1 - 2 * (q1 * q1 + q2 * q2)
    ok = CA.appendage_solve(W[W_M:W_M + ND, 0:ND], W[W_B, 0:ND], 0 * n, R, s[S_VA:S_VA + 3], s[S_WA:S_WA + 3],
                            s[NS:NS + 6 * n], AR, AP[A_RA:A_RA + 3], AP[A_E1:A_E1 + 3], AP[A_E2:A_E2 + 3],
                            AP[A_FORM] > 0.5, W[W_UD, 0:ND], ds[NS:NS + 6 * n], AW[0], AW[4:, :])
    return 0 if ok else 1
