"""Compiled kernel of the pairs bootstrap (estimate/bootstrap.py): every draw's beta_3 by weighted FWL, exactly.

Why hand-written and compiled (numba, installed with pyfixest): pyfixest has no repeated-weights estimator, and a
pyfixest fit per draw costs 1.2 s on the paper's 91,361 rows; a draw here is a few passes over its rows, run in
threads over blocks of draws.

A draw with replacement is the original rows with integer frequency weights w (how often each row, or each entity,
was drawn). Its beta_3 is the weighted regression of z[:, 0] (outcome) on z[:, 1:] (mu_hat, lap, mu_hat x lap)
absorbing two FEs, "a" (the one with more levels, rows sorted by it) and "d". By Frisch-Waugh-Lovell in
normal-equation form (paper eq. 7 with weights): with z~ = z minus its weighted mean within a-levels,
    M = z~' W z~ − B' S^+ B,   B = D' W z~ (n_d x 4),   S = diag(W_d) − C' diag(1/W_a) C,
C the (a-level x d-level) table of weights, S the Schur complement of the d-dummies (a graph Laplacian).
M is the cross-product of z residualised on both FEs and beta = M[x, x]^-1 M[x, y] (bootstrap.beta3_of).

Solve: B lies in the range of S (its sum over each connected component is zero), so S X = B is solved by
conjugate gradients preconditioned with P = G (S_0 + sum_c 1_c 1_c')^-1 G, S_0 the Schur complement of the full
sample (unit weights, singletons dropped; `preconditioner`), G = diag(W_0 / W_d)^1/2 (W_0, W_d: the d-level totals of
the full sample and of the draw). A draw's weights average 1, so G^-1 S_0 G^-1 is close to S in the spectral sense
(eigenvalues of P S between ~0.95 and ~1.02 on the paper-sized panel; ~0.8 and ~1.2 without G): three steps there,
each one pass over the draw's rows and one n_d x n_d product (~0.5 ms at n_d = 330 on the 2-core machine), instead of
forming S (sum over a-levels of n_a^2 / 2 scattered updates) and factoring it (n_d^3 / 3 flops: 2 ms with numpy's
LAPACK there) per draw. With
X the iterate and R = B − S X its residual, B' X + X' R = B' S^+ B − E' S E (E the error of X), so M is accurate to
the square of CG's error, E' S E = R' S^+ R, which r' P r estimates (P ~ S^+; within a factor 1 / lambda_min(P S),
~1.05 on the paper-sized panel, ~4 where entities are seen on windows of 8 dates). CG stops column by column when r' P r
is below CG_ACCURACY times that column's diagonal entry of M (estimated from the current X; at least
COLLINEAR_TOLERANCE times its centred sum of squares, the smallest M entry that still identifies beta_3): the
accuracy asked of M, not of X. A fixed reduction of the residual is too loose where the d-FE explains most of a
regressor (the previous rule, 1e-6 of the initial residual, stopped after 4 steps where the date explains all but
1e-4 or 1e-5 of LAP: 1.5e-9 and 1.5e-7 off the direct solve, tests/test_bootstrap.py) and takes more steps than
needed where it explains little (the random paper-sized panel: 4 where 3 resolve M to 1e-13). Where a regressor is
that close to collinear, M = z~' W z~ − B' S^+ B itself loses digits in the subtraction, whichever solver is used:
~1e-8 in beta_3 (standardized) where the date explains all but 1e-5 of LAP. If CG has not stopped after max_iter
steps, the draw is solved directly: S plus the indicators of its connected components (which spans its null space,
leaving the quadratic form on its range unchanged), by Cholesky.

Random draws: SplitMix64 (Steele, Lea, Flood 2014), one stream per draw started at mix(mix(seed) xor draw), so a
draw depends only on (seed, draw number), not on threads or blocks; a pick is floor(u x n) with u the top 53 bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
CG_ACCURACY = 1e-12
"""CG stops when its error in each diagonal entry of M (estimated by r' P r) is below this share of the entry."""
COLLINEAR_TOLERANCE = 1e-10
"""A regressor whose FE-residual weighted sum of squares is below this share of its raw (centred) one, or a design
whose scaled cross-product matrix has a smallest eigenvalue below it, leaves beta_3 unidentified in that draw
(bootstrap.beta3_of); CG resolves M's diagonal to CG_ACCURACY of this floor at least."""


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
        if not (np.any(total_a == 1.0) or np.any(total_d == 1.0)):  # no singleton level: skip the pass over rows
            return total_a, total_d
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
    = rows start[e] .. start[e + 1] − 1; only rows of positive weight are passed)."""
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


@njit(cache=True, fastmath={"reassoc", "contract"})
def _times(P, V, g):
    """diag(g) P diag(g) V for P (n x n) and V (n x 4): V scaled and transposed once, then four dot products per row
    of P, which LLVM vectorises when allowed to reassociate the sums (fastmath: reassoc and contract only, so NaN and
    infinity keep their meaning): 2.2x the speed of in-order sums here. Only the preconditioner is applied this way;
    it steers CG, while residuals and M are computed in order."""
    n = V.shape[0]
    Vt = np.empty((4, n))
    for s in range(n):
        Vt[0, s], Vt[1, s], Vt[2, s], Vt[3, s] = V[s, 0] * g[s], V[s, 1] * g[s], V[s, 2] * g[s], V[s, 3] * g[s]
    out = np.empty_like(V)
    for t in range(n):
        u0 = u1 = u2 = u3 = 0.0
        for s in range(n):
            p = P[t, s]
            u0 += p * Vt[0, s]
            u1 += p * Vt[1, s]
            u2 += p * Vt[2, s]
            u3 += p * Vt[3, s]
        out[t, 0], out[t, 1], out[t, 2], out[t, 3] = u0 * g[t], u1 * g[t], u2 * g[t], u3 * g[t]
    return out


@njit(cache=True)
def _column_dots(X, Y):
    out = np.zeros(X.shape[1])
    for t in range(X.shape[0]):
        for c in range(X.shape[1]):
            out[c] += X[t, c] * Y[t, c]
    return out


@njit(cache=True)
def _solve_cg(B, w, d, start, total_a, total_d, inverse, max_iter, M, raw):
    """CG preconditioned by `inverse` on S X = B, each column with its own step; (X, R = B − S X, steps taken,
    converged). Column c stops when r' P r <= CG_ACCURACY max(M[c, c] − B' X, COLLINEAR_TOLERANCE raw[c]) (M: z~' W z~
    so far, raw: centred sums of squares) or r' P r has fallen to CG_ACCURACY^2 of its initial value; nothing is
    solved when a regressor is already collinear with the a-FE (beta_3 not identified). Scalar loops only: numba
    compiles array expressions and LAPACK calls slowly (tens of seconds on the 2-core CI machine)."""
    n_d, k = B.shape
    X, R = np.zeros((n_d, k)), B.copy()
    for c in range(1, k):
        if raw[c] <= 0 or M[c, c] <= COLLINEAR_TOLERANCE * raw[c]:
            # a regressor constant in the draw or within a-levels: beta_3 is not identified whatever X is (the FE
            # correction only lowers M[c, c]), and B[:, c] is rounding noise on which CG would run to max_iter
            return X, R, 0, True
    scale = np.zeros(n_d)  # the draw's preconditioner: diag(W_d)^-1/2 `inverse` diag(W_d)^-1/2
    for t in range(n_d):
        if total_d[t] > 0:
            scale[t] = 1.0 / np.sqrt(total_d[t])
    Zr = _times(inverse, R, scale)
    P = Zr.copy()
    rz = _column_dots(R, Zr)
    floor = rz * CG_ACCURACY**2  # a column whose M entry is ~0 (the outcome explained by the FEs): rounding level
    alpha, beta, done = np.zeros(k), np.zeros(k), np.zeros(k, np.bool_)
    for step in range(max_iter + 1):
        bx = _column_dots(B, X)
        for c in range(k):
            target = max(CG_ACCURACY * max(M[c, c] - bx[c], COLLINEAR_TOLERANCE * raw[c]), floor[c])
            done[c] = done[c] or rz[c] <= target
        if np.all(done) or step == max_iter:
            return X, R, step, bool(np.all(done))
        Q = _schur_times(P, w, d, start, total_a, total_d)
        pq = _column_dots(P, Q)
        for c in range(k):
            alpha[c] = rz[c] / pq[c] if pq[c] > 0 and not done[c] else 0.0
        for t in range(n_d):
            for c in range(k):
                X[t, c] += alpha[c] * P[t, c]
                R[t, c] -= alpha[c] * Q[t, c]
        Zr = _times(inverse, R, scale)
        rz_new = _column_dots(R, Zr)
        for c in range(k):
            beta[c] = rz_new[c] / rz[c] if rz[c] > 0 and alpha[c] > 0 else 0.0
        for t in range(n_d):
            for c in range(k):
                P[t, c] = Zr[t, c] + beta[c] * P[t, c]
        for c in range(k):
            if alpha[c] > 0:
                rz[c] = rz_new[c]
    return X, R, max_iter, False


@njit(cache=True)
def schur_matrix(w, d, start, total_a, total_d):
    """S + sum over connected components c of 1_c 1_c' (union-find over d-levels linked through an a-level): dense,
    symmetric positive definite, equal to S on its range (a d-level of weight 0 is a component of its own)."""
    n_d = total_d.size
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
    return S


@njit(cache=True)
def _solve_dense(B, w, d, start, total_a, total_d):
    """S X = B directly: `schur_matrix` factored by Cholesky (hand-written for the compile time, as _solve_cg)."""
    n_d, k = B.shape
    S = schur_matrix(w, d, start, total_a, total_d)
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


def preconditioner(a, d, start, n_d):
    """diag(W_0)^1/2 (S_0 + sum_c 1_c 1_c')^-1 diag(W_0)^1/2 of the full sample (unit weights, singletons dropped;
    W_0 its d-level totals, 1 where 0): a draw with d-level totals W_d is preconditioned by this matrix scaled by
    diag(W_d)^-1/2 on both sides (numpy's LAPACK, once per bootstrap)."""
    w = np.ones(a.size)
    total_a, total_d = drop_singletons(w, a, d, start.size - 1, n_d)
    root = np.sqrt(np.where(total_d > 0, total_d, 1.0))
    return np.linalg.inv(schur_matrix(w, d, start, total_a, total_d)) * root[:, None] * root[None, :]


@njit(cache=True)
def _level_totals(w, d, start, n_d):
    """Total weight of each a-level (rows sorted by a: a sum per block, not a scatter whose every add waits for the
    previous one to the same level) and of each d-level."""
    total_a, total_d = np.zeros(start.size - 1), np.zeros(n_d)
    for e in range(start.size - 1):
        total = 0.0
        for i in range(start[e], start[e + 1]):
            total += w[i]
            total_d[d[i]] += w[i]
        total_a[e] = total
    return total_a, total_d


@njit(cache=True)
def cross_products(z, w, a, d, start, n_d, inverse, max_iter, M, raw, kept_w, kept_d):
    """Into M (4 x 4): the cross-product of z (4 columns) residualised on both FEs under weights w (rows sorted by a;
    singletons dropped here, w changed in place); into raw (4): the weighted centred sums of squares of z.
    M stays zero when no row is left. Returns the CG steps taken (max_iter + 1 when the draw was solved directly).
    One pass over the rows: within-a means, z~' W z~ and B (scalar accumulators, which numba vectorises), and the
    rows of positive weight copied into kept_w, kept_d (work arrays of w's size), still sorted by a, for the solve."""
    total_a, total_d = _level_totals(w, d, start, n_d)
    if np.any(total_a == 1.0) or np.any(total_d == 1.0):
        total_a, total_d = drop_singletons(w, a, d, start.size - 1, n_d)
    total = total_a.sum()
    M[:, :] = 0.0
    raw[:] = 0.0
    if total == 0:
        return 0
    kept_start = np.zeros(start.size, np.int64)
    B = np.zeros((n_d, 4))
    position = 0
    f0 = f1 = f2 = f3 = q0 = q1 = q2 = q3 = 0.0
    m00 = m01 = m02 = m03 = m11 = m12 = m13 = m22 = m23 = m33 = 0.0
    for e in range(start.size - 1):
        kept_start[e] = position
        if total_a[e] == 0:
            continue
        s0 = s1 = s2 = s3 = 0.0
        for i in range(start[e], start[e + 1]):
            s0 += w[i] * z[i, 0]
            s1 += w[i] * z[i, 1]
            s2 += w[i] * z[i, 2]
            s3 += w[i] * z[i, 3]
        f0, f1, f2, f3 = f0 + s0, f1 + s1, f2 + s2, f3 + s3
        inverse_total = 1.0 / total_a[e]
        s0, s1, s2, s3 = s0 * inverse_total, s1 * inverse_total, s2 * inverse_total, s3 * inverse_total
        for i in range(start[e], start[e + 1]):
            weight, level = w[i], d[i]
            if weight == 0:
                continue
            kept_w[position], kept_d[position] = weight, level
            position += 1
            q0 += weight * z[i, 0] * z[i, 0]
            q1 += weight * z[i, 1] * z[i, 1]
            q2 += weight * z[i, 2] * z[i, 2]
            q3 += weight * z[i, 3] * z[i, 3]
            r0, r1, r2, r3 = z[i, 0] - s0, z[i, 1] - s1, z[i, 2] - s2, z[i, 3] - s3
            v0, v1, v2, v3 = weight * r0, weight * r1, weight * r2, weight * r3
            B[level, 0] += v0
            B[level, 1] += v1
            B[level, 2] += v2
            B[level, 3] += v3
            m00 += v0 * r0
            m01 += v0 * r1
            m02 += v0 * r2
            m03 += v0 * r3
            m11 += v1 * r1
            m12 += v1 * r2
            m13 += v1 * r3
            m22 += v2 * r2
            m23 += v2 * r3
            m33 += v3 * r3
    kept_start[start.size - 1] = position
    M[0, 0], M[1, 1], M[2, 2], M[3, 3] = m00, m11, m22, m33
    M[0, 1] = M[1, 0] = m01
    M[0, 2] = M[2, 0] = m02
    M[0, 3] = M[3, 0] = m03
    M[1, 2] = M[2, 1] = m12
    M[1, 3] = M[3, 1] = m13
    M[2, 3] = M[3, 2] = m23
    raw[0], raw[1] = q0 - f0 * f0 / total, q1 - f1 * f1 / total
    raw[2], raw[3] = q2 - f2 * f2 / total, q3 - f3 * f3 / total
    X, R, steps, converged = _solve_cg(B, kept_w, kept_d, kept_start, total_a, total_d, inverse, max_iter, M, raw)
    if not converged:
        X, R, steps = _solve_dense(B, kept_w, kept_d, kept_start, total_a, total_d), np.zeros((n_d, 4)), max_iter + 1
    for c in range(4):
        for c2 in range(4):
            for t in range(n_d):
                M[c, c2] -= B[t, c] * X[t, c2] + X[t, c] * R[t, c2]
    return steps


@njit(nogil=True, cache=True)
def bootstrap_cross_products(z, a, d, start, n_d, unit, n_units, seed, first_draw, n_draws, inverse, max_iter):
    """`cross_products` of draws first_draw .. first_draw + n_draws − 1: (M, raw, CG steps) stacked by draw.
    Row i has weight counts[unit[i]] (unit = row index for the pairs bootstrap, entity code for entity resampling).
    Releases the GIL: callers run blocks in threads (numba's parallel=True compiled for minutes here)."""
    M, raw, steps = np.zeros((n_draws, 4, 4)), np.zeros((n_draws, 4)), np.zeros(n_draws, np.int64)
    w, kept_w, kept_d = np.empty(unit.size), np.empty(unit.size), np.empty(unit.size, np.int64)
    for b in range(n_draws):
        counts = draw_counts(seed, first_draw + b, n_units)
        for i in range(unit.size):
            w[i] = counts[unit[i]]
        steps[b] = cross_products(z, w, a, d, start, n_d, inverse, max_iter, M[b], raw[b], kept_w, kept_d)
    return M, raw, steps
