"""Compiled kernel of the pairs bootstrap (estimate/bootstrap.py): every draw's beta_3 by weighted FWL, exactly.

Why hand-written and compiled (numba, installed with pyfixest): pyfixest has no repeated-weights estimator, and a
pyfixest fit per draw costs 66 ms on a 10,000-row panel; a draw here is one pass over the rows plus a short
conjugate-gradient solve, run in parallel over draws.

A draw with replacement is the original rows with integer frequency weights w (how often each row, or each entity,
was drawn). Its beta_3 is the weighted regression of z[:, 0] (outcome) on z[:, 1:] (mu_hat, lap, mu_hat x lap)
absorbing two FEs, "a" (the one with more levels, rows sorted by it) and "d". By Frisch-Waugh-Lovell in
normal-equation form (paper eq. 7 with weights): with z~ = z minus its weighted mean within a-levels,
    M = z~' W z~ − B' S^+ B,   B = D' W z~ (n_d x 4),   S = diag(W_d) − C' diag(1/W_a) C,
C the (a-level x d-level) table of weights, S the Schur complement of the d-dummies (a graph Laplacian).
M is the cross-product of z residualised on both FEs and beta = M[x, x]^-1 M[x, y] (bootstrap.beta3_of). B lies in the range of S (its
sum over each connected component is zero), so S X = B is solved by Jacobi-preconditioned conjugate gradients to a
relative residual of CG_TOLERANCE, and B' X does not depend on which solution is found. If CG has not converged in
max_iter steps the draw is solved directly: S plus the indicators of its connected components (which spans its null
space, leaving the quadratic form on its range unchanged) by a dense LU solve.

Random draws: SplitMix64 (Steele, Lea, Flood 2014), one stream per draw started at mix(mix(seed) xor draw), so a
draw depends only on (seed, draw number), not on threads or blocks; a pick is floor(u x n) with u the top 53 bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
CG_TOLERANCE = 1e-13
"""CG stops when every column's preconditioned residual norm is below this share of its initial one."""


@njit(cache=True)
def _mix(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def draw_counts(seed, draw, n_units):
    """How often each of n_units units (rows, or entities) is picked in n_units picks with replacement."""
    counts = np.zeros(n_units, np.float64)
    state = _mix(_mix(np.uint64(seed)) ^ np.uint64(draw))
    for _ in range(n_units):
        state += GAMMA
        pick = np.int64(np.float64(_mix(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * n_units)
        counts[pick] += 1.0
    return counts


@njit(cache=True)
def drop_singletons(w, a, d, n_a, n_d):
    """Zero the weight of rows alone in a level of either FE, repeatedly (a row of weight w is w rows of the
    materialised draw, so a level is a singleton when its total weight is 1); returns the final level totals."""
    total_a, total_d = np.zeros(n_a), np.zeros(n_d)
    while True:
        total_a[:] = 0.0
        total_d[:] = 0.0
        for i in range(w.size):
            total_a[a[i]] += w[i]
            total_d[d[i]] += w[i]
        changed = False
        for i in range(w.size):
            if w[i] > 0 and (total_a[a[i]] == 1.0 or total_d[d[i]] == 1.0):
                w[i] = 0.0
                changed = True
        if not changed:
            return total_a, total_d


@njit(cache=True)
def _schur_times(V, w, d, start, total_a, total_d):
    """S V = diag(W_d) V − C' diag(1/W_a) C V for V with 4 columns, one pass over the rows (sorted by a; a-level e
    = rows start[e] .. start[e + 1] − 1)."""
    out = V * total_d.reshape(-1, 1)
    for e in range(start.size - 1):
        if total_a[e] == 0:
            continue
        # four scalar accumulators (V has the 4 columns of z): numba vectorises these, not an inner array loop
        u0 = u1 = u2 = u3 = 0.0
        for i in range(start[e], start[e + 1]):
            weight, level = w[i], d[i]
            u0 += weight * V[level, 0]
            u1 += weight * V[level, 1]
            u2 += weight * V[level, 2]
            u3 += weight * V[level, 3]
        inverse = 1.0 / total_a[e]
        u0, u1, u2, u3 = u0 * inverse, u1 * inverse, u2 * inverse, u3 * inverse
        for i in range(start[e], start[e + 1]):
            weight, level = w[i], d[i]
            out[level, 0] -= weight * u0
            out[level, 1] -= weight * u1
            out[level, 2] -= weight * u2
            out[level, 3] -= weight * u3
    return out


@njit(cache=True)
def _column_dots(X, Y):
    out = np.zeros(X.shape[1])
    for t in range(X.shape[0]):
        for c in range(X.shape[1]):
            out[c] += X[t, c] * Y[t, c]
    return out


@njit(cache=True)
def _solve_cg(B, w, d, start, total_a, total_d, max_iter):
    """Jacobi-preconditioned CG on S X = B, each column with its own step; (X, converged). Scalar loops only:
    numba compiles array expressions and LAPACK calls slowly (tens of seconds on the 2-core CI machine)."""
    n_d, k = B.shape
    inverse = np.zeros(n_d)
    for t in range(n_d):
        if total_d[t] > 0:
            inverse[t] = 1.0 / total_d[t]
    X, R, P, Zr = np.zeros((n_d, k)), B.copy(), np.empty((n_d, k)), np.empty((n_d, k))
    for t in range(n_d):
        for c in range(k):
            P[t, c] = R[t, c] * inverse[t]
    rz = _column_dots(R, P)
    target = rz * CG_TOLERANCE**2
    alpha, beta = np.zeros(k), np.zeros(k)
    for _ in range(max_iter):
        if np.all(rz <= target):
            return X, True
        Q = _schur_times(P, w, d, start, total_a, total_d)
        pq = _column_dots(P, Q)
        for c in range(k):
            alpha[c] = rz[c] / pq[c] if pq[c] > 0 and rz[c] > target[c] else 0.0
        for t in range(n_d):
            for c in range(k):
                X[t, c] += alpha[c] * P[t, c]
                R[t, c] -= alpha[c] * Q[t, c]
                Zr[t, c] = R[t, c] * inverse[t]
        rz_new = _column_dots(R, Zr)
        for c in range(k):
            beta[c] = rz_new[c] / rz[c] if rz[c] > 0 else 0.0
        for t in range(n_d):
            for c in range(k):
                P[t, c] = Zr[t, c] + beta[c] * P[t, c]
        rz = rz_new
    return X, bool(np.all(rz <= target))


@njit(cache=True)
def _solve_dense(B, w, d, start, total_a, total_d):
    """S X = B directly: S + sum over connected components of 1_c 1_c' (union-find over d-levels linked through
    an a-level) is symmetric positive definite and equals S on its range; solved by Cholesky (hand-written for the
    compile time, as _solve_cg)."""
    n_d, k = B.shape
    S = np.zeros((n_d, n_d))
    parent = np.arange(n_d)
    for t in range(n_d):
        S[t, t] = total_d[t]
    for e in range(start.size - 1):
        if total_a[e] == 0:
            continue
        first = -1
        for i in range(start[e], start[e + 1]):
            if w[i] == 0:
                continue
            for j in range(start[e], start[e + 1]):
                S[d[i], d[j]] -= w[i] * w[j] / total_a[e]
            if first < 0:
                first = d[i]
                continue
            root, other = d[i], first
            while parent[root] != root:
                root = parent[root]
            while parent[other] != other:
                other = parent[other]
            parent[root] = other
    roots = np.empty(n_d, np.int64)
    for t in range(n_d):
        root = t
        while parent[root] != root:
            root = parent[root]
        roots[t] = root
    for t in range(n_d):
        for u in range(n_d):
            if roots[t] == roots[u]:
                S[t, u] += 1.0
    for j in range(n_d):  # Cholesky S = L L' in place (lower triangle)
        for m in range(j):
            S[j, j] -= S[j, m] * S[j, m]
        S[j, j] = np.sqrt(S[j, j])
        for i in range(j + 1, n_d):
            for m in range(j):
                S[i, j] -= S[i, m] * S[j, m]
            S[i, j] /= S[j, j]
    X = B.copy()
    for c in range(k):
        for i in range(n_d):  # L y = b
            for m in range(i):
                X[i, c] -= S[i, m] * X[m, c]
            X[i, c] /= S[i, i]
        for i in range(n_d - 1, -1, -1):  # L' x = y
            for m in range(i + 1, n_d):
                X[i, c] -= S[m, i] * X[m, c]
            X[i, c] /= S[i, i]
    return X


@njit(cache=True)
def weighted_cross_products(z, w, a, d, start, n_d, max_iter, M, raw):
    """Into M (4 x 4): the cross-product of z residualised on both FEs under weights w (rows sorted by a;
    singletons dropped here, w changed in place); into raw (4): the weighted centred sums of squares of z.
    M stays zero when no row is left."""
    k = z.shape[1]
    total_a, total_d = drop_singletons(w, a, d, start.size - 1, n_d)
    total = total_a.sum()
    M[:, :] = 0.0
    raw[:] = 0.0
    if total == 0:
        return
    B = np.zeros((n_d, k))
    first = np.zeros(k)
    mean, residual = np.empty(k), np.empty(k)
    for e in range(start.size - 1):
        if total_a[e] == 0:
            continue
        mean[:] = 0.0
        for i in range(start[e], start[e + 1]):
            for c in range(k):
                mean[c] += w[i] * z[i, c]
        for c in range(k):
            mean[c] /= total_a[e]
        for i in range(start[e], start[e + 1]):
            if w[i] == 0:
                continue
            for c in range(k):
                first[c] += w[i] * z[i, c]
                raw[c] += w[i] * z[i, c] * z[i, c]
                residual[c] = z[i, c] - mean[c]
                B[d[i], c] += w[i] * residual[c]
            for c in range(k):
                for c2 in range(k):
                    M[c, c2] += w[i] * residual[c] * residual[c2]
    X, converged = _solve_cg(B, w, d, start, total_a, total_d, max_iter)
    if not converged:
        X = _solve_dense(B, w, d, start, total_a, total_d)
    for c in range(k):
        raw[c] -= first[c] * first[c] / total
        for c2 in range(k):
            for t in range(n_d):
                M[c, c2] -= B[t, c] * X[t, c2]


@njit(nogil=True, cache=True)
def bootstrap_cross_products(z, a, d, start, n_d, unit, n_units, seed, first_draw, n_draws, max_iter):
    """`weighted_cross_products` of draws first_draw .. first_draw + n_draws − 1: (M, raw) stacked by draw. Row i
    has weight counts[unit[i]] (unit = row index for the pairs bootstrap, entity code for entity resampling).
    Releases the GIL: callers run blocks in threads (numba's parallel=True compiled for minutes here)."""
    k = z.shape[1]
    M, raw = np.zeros((n_draws, k, k)), np.zeros((n_draws, k))
    for b in range(n_draws):
        counts = draw_counts(seed, first_draw + b, n_units)
        w = np.empty(unit.size)
        for i in range(unit.size):
            w[i] = counts[unit[i]]
        weighted_cross_products(z, w, a, d, start, n_d, max_iter, M[b], raw[b])
    return M, raw
