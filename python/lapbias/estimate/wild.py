"""Wild cluster restricted bootstrap p-values of one coefficient of the protocol's FE regressions (few clusters).

Entity-clustered CRV1 t tests over-reject with few or heterogeneous clusters (Cameron, Gelbach and Miller 2008,
"Bootstrap-based improvements for inference with clustered errors", REStat 90(3); MacKinnon, Nielsen and Webb 2023,
"Cluster-robust inference: a guide to empirical practice", J. Econometrics 232(2)). The field's remedy is
the wild cluster restricted bootstrap (WCR, "WCR-C" or "11" in their notation; Stata's `boottest`), computed here for
the model of protocol Steps 4-5,
    y = X beta + entity FE + period FE + e,   CRV1 clustered by entity,   H0: beta_k = 0:
1. restricted fit under H0 (X without column k, the same FE): fitted values and residuals u~;
2. each draw b: y*_b = restricted fit + u~ v_gb, one weight v_gb per cluster g from Webb's six-point distribution
   (+-sqrt(1/2), +-1, +-sqrt(3/2), each 1/6: Webb 2023, "Reworking wild bootstrap-based inference for clustered
   errors", Canadian J. Econ. 56(3); with G clusters Rademacher weights give only 2^G distinct draws, 256 at G = 8);
3. t*_b = the CRV1 t statistic of beta_k on y*_b (null value 0); the statistic compared with them is the CRV1 t of
   the data. p-values: one-sided for beta_k > 0, p_wild_one_sided = #{b: t*_b >= t} / B (a tie counts against H0's
   rejection, as bootstrap.p_boot); one-sided for beta_k < 0, p_wild_lower = #{b: t*_b <= t} / B (boottest's
   ptype(lower), ties again against rejection); two-sided equal-tailed, p_wild = min(1, 2 min(#{t*_b >= t},
   #{t*_b <= t}) / B). Half of p_wild is the lower-tail p only when the lower count is the smaller one, so the
   lower tail is counted itself.
   The CRV1 small-sample factor multiplies t and every t*_b alike, so it does not enter the p-values.

The t*_b are those of pyfixest's `Feols.wildboottest(param, reps, weights_type="webb", impose_null=True,
bootstrap_type="11", seed)` on the same sample, draw by draw, with the same weights (`wildboottest.weights.
draw_weights`, the package behind it; tests/test_wild_bootstrap.py compares them to 1e-9; on an entity-period graph
with several connected components pyfixest's one-hot X'X is singular and its draws are not defined, and the test
compares with the draws materialised and fitted by least squares instead). They are not computed
by calling it because pyfixest hands the package a dense one-hot design of both fixed effects, N x (K + E + T), and
the package's CRV1 denominator then loops over G^2 cluster pairs with (K + E + T)^2 products each: 1.3 GB and hours
at the paper's 91,361 rows x (1,499 + 330) levels. The same draws follow exactly from Roodman, MacKinnon, Nielsen and
Webb (2019, "Fast and wild: bootstrap inference in Stata using boottest", Stata J. 19(1)) with the fixed
effects partialled out (Frisch-Waugh-Lovell): with a = the row of (X~'X~)^{-1} X~' for beta_k (X~ = X net of both
FE), the draw's numerator is sum_g v_g (a_g' u~_g), and cluster h's score of the draw's CRV1 variance is
    s_h(v) = v_h a_h' u~_h - [A (X~'X~)^{-1} S v]_h - [P (T~'T~)^+ Q v]_h,
A_h = a_h' X~_h, S_g = X~_g' u~_g (the part of the draw's residual on X~), P_ht = sum of a over cluster h's rows in
period t, Q_tg = sum of u~ over cluster g's rows in period t and T~ = the period dummies net of the entity FE (the
part on the period FE; the entity FE are nested in the clusters, so u~ v, with v constant within an entity, is
already orthogonal to them). Cost O(N K + G T + T^3 + B G (K + T)), memory O(G B): 2.1 CPU seconds for 9,999 draws
at the paper's size (91,374 rows, 1,499 clusters, 330 dates) and 3.9 s at 10^6 rows (benchmarks/results/wild.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import EstimationError
from .reghdfe import DEMEAN_TOLERANCE, drop_singletons, term_variables
from .scaling import partial_out

WEIGHTS = "webb"
ENTITY, PERIOD = "entity_num", "period_num"
DRAW_BLOCK = 1024
"""Draws whose cluster scores are formed at once (memory G x 1,024 doubles)."""


@dataclass
class WildResult:
    t: float
    """CRV1 t statistic of beta_k without the small-sample factor (the bootstrap t*_b are on the same footing)."""
    draws: np.ndarray
    """t*_b of every draw."""
    clusters: int
    reps: int
    seed: int

    @property
    def p_one_sided(self) -> float:
        """#{t*_b >= t} / B: the one-sided p for beta_k > 0."""
        return float(np.mean(self.draws >= self.t))

    @property
    def p_lower(self) -> float:
        """#{t*_b <= t} / B: the one-sided p for beta_k < 0."""
        return float(np.mean(self.draws <= self.t))

    @property
    def p_two_sided(self) -> float:
        """Equal-tailed: min(1, 2 min(#{t*_b >= t}, #{t*_b <= t}) / B)."""
        return float(min(1.0, 2 * min(self.p_one_sided, self.p_lower)))


def weights(clusters: int, reps: int, seed: int) -> np.ndarray:
    """Webb weights, clusters x reps, as `wildboottest` draws them for pyfixest's `Feols.wildboottest(seed=seed)`
    (row g: the g-th cluster in sorted order)."""
    from wildboottest.weights import draw_weights

    v, _ = draw_weights(t=WEIGHTS, full_enumeration=False, N_G_bootcluster=clusters, boot_iter=reps,
                        rng=np.random.default_rng(seed))
    return v


def _design(sample: pd.DataFrame, y: str, terms: list[str]) -> np.ndarray:
    """[y, term columns], each divided by its largest absolute value (t statistics do not depend on units)."""
    columns = [sample[y].to_numpy(np.float64)]
    for term in terms:
        columns.append(np.prod([sample[v].to_numpy(np.float64) for v in term_variables(term)], axis=0))
    matrix = np.column_stack(columns)
    largest = np.abs(matrix).max(axis=0)
    return matrix / np.where(largest > 0, largest, 1.0)


def _period_projection(entity: np.ndarray, period: np.ndarray, n_entities: int, n_periods: int):
    """A solver for (T~'T~) z = q restricted to the span of T~ = period dummies net of the entity FE: T~'T~ =
    diag(n_t) - C' diag(1/n_e) C (C = entity x period counts) is singular by one period per connected component of
    the entity-period graph; one period of each component is dropped (its column of T~ is minus the sum of the
    others'), the rest solved by Cholesky. Returns (kept periods, cho_factor)."""
    counts = coo_matrix((np.ones(len(entity)), (entity, period)), shape=(n_entities, n_periods)).toarray()
    n_e, n_t = counts.sum(axis=1), counts.sum(axis=0)
    gram = np.diag(n_t) - counts.T @ (counts / n_e[:, None])
    graph = coo_matrix((np.ones(len(entity)), (entity, n_entities + period)),
                       shape=(n_entities + n_periods, n_entities + n_periods))
    _, component = connected_components(graph, directed=False)
    component = component[n_entities:]
    first = np.unique(component, return_index=True)[1]
    kept = np.setdiff1d(np.arange(n_periods), first)
    if not len(kept):
        return kept, None
    return kept, linalg.cho_factor(gram[np.ix_(kept, kept)])


def wild_cluster_bootstrap(sample: pd.DataFrame, y: str, terms: list[str], term: str, reps: int, seed: int
                           ) -> WildResult:
    """WCR p-values of `term` in y ~ terms | entity_num + period_num, CRV1 by entity_num (module docstring), on
    the rows reghdfe uses (complete rows, singletons dropped). `terms` are the regressors the regression kept
    (none collinear). EstimationError when the bootstrap is not defined (fewer than 2 clusters, no residual
    variation)."""
    if term not in terms:
        raise EstimationError(f"{term} is not among the regressors {terms}")
    variables = list(dict.fromkeys(v for t in terms for v in term_variables(t)))
    frame = sample[list(dict.fromkeys([y, *variables, ENTITY, PERIOD]))].dropna()
    if frame[ENTITY].nunique() < 2:
        raise EstimationError(f"the wild cluster bootstrap needs at least 2 clusters; the sample has "
                              f"{frame[ENTITY].nunique()}")
    frame, _ = drop_singletons(frame.reset_index(drop=True), [ENTITY, PERIOD])
    cluster, clusters = np.unique(frame[ENTITY].to_numpy(), return_inverse=True)[1], frame[ENTITY].nunique()
    if clusters < 2:
        raise EstimationError(f"the wild cluster bootstrap needs at least 2 clusters; {clusters} are left after "
                              "dropping singletons")
    period = pd.factorize(frame[PERIOD])[0]
    n_periods = int(period.max()) + 1
    codes = np.column_stack([cluster, period]).astype(np.uint64)
    within = partial_out(_design(frame, y, terms), codes, DEMEAN_TOLERANCE)
    y_w, x_w = within[:, 0], within[:, 1:]
    k = terms.index(term)
    gram_inv = np.linalg.inv(x_w.T @ x_w)
    a = x_w @ gram_inv[:, k]
    residual = y_w - x_w @ (gram_inv @ (x_w.T @ y_w))
    others = np.delete(x_w, k, axis=1)
    restricted = y_w - (others @ np.linalg.lstsq(others, y_w, rcond=None)[0] if others.shape[1] else 0.0)

    def by_cluster(values: np.ndarray) -> np.ndarray:
        return np.bincount(cluster, weights=values, minlength=clusters)

    t_stat = float(a @ y_w / math.sqrt(np.sum(by_cluster(a * residual) ** 2)))
    c = by_cluster(a * restricted)
    scores = np.stack([by_cluster(x_w[:, j] * restricted) for j in range(x_w.shape[1])])   # S: K x G
    loadings = np.stack([by_cluster(a * x_w[:, j]) for j in range(x_w.shape[1])], axis=1)  # A: G x K
    kept, factor = _period_projection(cluster, period, clusters, n_periods)
    cell = period * clusters + cluster
    q = np.bincount(cell, weights=restricted, minlength=n_periods * clusters).reshape(n_periods, clusters)[kept]
    p = np.bincount(cell, weights=a, minlength=n_periods * clusters).reshape(n_periods, clusters)[kept].T
    v = weights(clusters, reps, seed)
    draws = np.empty(reps)
    for start in range(0, reps, DRAW_BLOCK):
        block = v[:, start:start + DRAW_BLOCK]
        score = c[:, None] * block - loadings @ (gram_inv @ (scores @ block))
        if factor is not None:
            score -= p @ linalg.cho_solve(factor, q @ block)
        with np.errstate(divide="ignore", invalid="ignore"):
            draws[start:start + DRAW_BLOCK] = (c @ block) / np.sqrt(np.einsum("gb,gb->b", score, score))
    if not math.isfinite(t_stat):
        raise EstimationError(f"the CRV1 t statistic of {term} is not defined (no residual variation)")
    return WildResult(t=t_stat, draws=draws, clusters=clusters, reps=reps, seed=seed)
