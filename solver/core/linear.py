"""Small dense linear systems (numba): LU with partial pivoting for the non-symmetric matrices of reduced models."""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def lu_solve(A, b, n, x):
    """Solve A x = b (n x n, overwritten: A by its LU factors, b by the permuted right side); False if singular."""
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if A[p, c] == 0.0:
            return False
        if p != c:
            for j in range(n):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, n):
            f = A[r, c] / A[c, c]
            A[r, c] = f
            for j in range(c + 1, n):
                A[r, j] -= f * A[c, j]
            b[r] -= f * b[c]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * x[j]
        x[i] = s / A[i, i]
    return True
