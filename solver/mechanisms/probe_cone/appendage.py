"""A rod chain on the probe-cone's active craft ([appendage] of a scenario, docs/rods.md): the step kernel's hook that
solves the active subsystem with the chain (solver.core.appendage), compiled only for a run that has one.

AW (one array, so a plain run's kernels carry one dummy argument): row AW_OUT the chain's `out` values, rows AW_R..
the craft's rotation, row AW_AP its parameters (rods n, formulation (1 reduced), the chain's root from the craft's CoM
and its plane axes e1, e2 in the craft's frame), rows AW_RODS.. the rods type's RODS rows, then the solver's scratch.
The chain's state (q, q_dot: 6n) follows the probe-cone's NS values of s."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solver.core import appendage as CA
from solver.core import planar_chain as PC
from solver.core.free_body import rotation_into
from solver.mechanisms.probe_cone.dynamics import AW_AP, AW_OUT, AW_R, AW_RODS, ND, NS, S_QA, S_VA, S_WA, W_B, W_M, W_UD

A_N, A_FORM, A_RA, A_E1, A_E2 = 0, 1, 2, 5, 8
NA = 11


def pack(RODS: np.ndarray, reduced: bool, ra, e1, e2) -> np.ndarray:
    """AW of a chain (RODS rows) on the craft: its parameters packed, its outputs and scratch zero."""
    n = RODS.shape[0]
    r, c = CA.work_shape(ND, n)
    AW = np.zeros((AW_RODS + n + r, max(c, CA.out_size(n), NA, PC.NR)))
    AW[AW_AP, A_N], AW[AW_AP, A_FORM] = n, 1.0 if reduced else 0.0
    AW[AW_AP, A_RA:A_RA + 3], AW[AW_AP, A_E1:A_E1 + 3], AW[AW_AP, A_E2:A_E2 + 3] = ra, e1, e2
    AW[AW_RODS:AW_RODS + n, :PC.NR] = RODS
    return AW


@njit(cache=True, error_model="numpy")
def appendage_step(s, ds, W, AW):
    """The active subsystem's accelerations (W's rows as `evaluate` fills them: mass matrix, right side, u_dot) with
    the chain (its derivative into ds after NS); 0, or 1 if the coupled matrix is singular."""
    n = int(AW[AW_AP, A_N])     # (0 * n below: the body's first row as a run-time int64, as the tests pass it)
    q0, q1, q2, q3 = s[S_QA], s[S_QA + 1], s[S_QA + 2], s[S_QA + 3]
    qn = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    q0, q1, q2, q3 = q0 / qn, q1 / qn, q2 / qn, q3 / qn
    R = AW[AW_R:AW_R + 3, 0:3]
    rotation_into(q0, q1, q2, q3, R)
    p = AW[AW_AP]
    ok = CA.appendage_solve(W[W_M:W_M + ND, 0:ND], W[W_B, 0:ND], 0 * n, R, s[S_VA:S_VA + 3], s[S_WA:S_WA + 3],
                            s[NS:NS + 6 * n], AW[AW_RODS:AW_RODS + n, 0:PC.NR], p[A_RA:A_RA + 3], p[A_E1:A_E1 + 3],
                            p[A_E2:A_E2 + 3], p[A_FORM] > 0.5, W[W_UD, 0:ND], ds[NS:NS + 6 * n], AW[AW_OUT],
                            AW[AW_RODS + n:, :])
    return 0 if ok else 1
