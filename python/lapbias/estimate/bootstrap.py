"""Pairs bootstrap of beta_3 (paper, section "Out-of-Sample and Bootstrap Analysis", Table V and Figure III).

The paper: "we repeatedly sample observations from the out-of-sample data with replacement for 10,000 repetitions
and re-estimate the regression in each bootstrap sample. The bootstrap sample size is set equal to that of the
out-of-sample period. For each iteration, we record the estimated coefficient on the interaction term between
LLM^std and LAP^std." The regression is r = b1 LLM^std + b2 LAP^std + beta (LLM^std x LAP^std) + alpha_i + alpha_t
(Figure III), all variables "standardized separately within each period" (Table V). The in-sample beta_3 (Table V,
column 2) "lies well outside the 95th percentile of the empirical distribution of the out-of-sample interaction
coefficients (with one-sided p-value of 0.033)".

Definitions used here (the paper states no formula):
- p_boot = #{draws b: beta_3(b) >= beta_3 in-sample} / #{identified draws}: the share of placebo draws at least as
  large as the in-sample estimate; a tie counts as "at least as large" (the conservative side). Draws whose beta_3 is
  not identified (a collinear resampled design) are left out of both counts and reported as `n_unidentified`.
- p95 = the 95th percentile of the identified draws, Stata's `_pctile` definition (Hyndman-Fan type 2, numpy
  "averaged_inverted_cdf"), so that it equals `lapboot`'s r(p95) on the same draws.
- The resampling pool is the sample's complete rows (outcome, mu_hat, lap, entity_num, period_num), as `lapboot`'s
  marksample; a draw has that many rows. Duplicated rows keep their entity and period ids (Stata's `bsample`
  without idcluster()); `resample="entity"` draws whole entities (`bsample, cluster(entity_num)`). Singletons are
  dropped from every draw as reghdfe drops them from the materialised draw.

Speed (why this is hand-written): a draw with replacement is the original rows with integer frequency weights w, so
beta_3 of a draw is a weighted least-squares fit with two fixed effects on the original rows. pyfixest has no
batched- or repeated-weights estimator, and its weighted demeaning called once per draw measured 4-11 ms here, so
the fit is done exactly, without iteration, by Frisch-Waugh-Lovell in normal-equation form: the FE with more levels
("a") is partialled out by weighted within-group means, the FE with fewer levels ("d") through the Schur complement
of its dummies. `block_beta3` does this for a block of draws at once (dense arrays, when n_a x n_d^2 is small, e.g.
500 firms x 20 periods); `draw_beta3` one draw at a time with sparse tables (e.g. 1,500 firms x 330 dates). Both
equal pyfixest on the materialised draw to ~1e-15 (tests/test_bootstrap.py; benchmarks/results/bootstrap.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import linalg, sparse
from scipy.sparse.csgraph import connected_components
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from ..config import RunConfig
from ..errors import EstimationError
from ..io import Layout, atomic_write, read_parquet, write_csv
from .extended import standardize_within
from .reghdfe import reghdfe

VARIABLES = ["outcome", "mu_hat", "lap"]
ABSORB = ["entity_num", "period_num"]
BETA3 = "c.mu_hat#c.lap"
COLLINEAR_TOLERANCE = 1e-10
"""A regressor whose FE-residual weighted sum of squares is below this share of its raw (centred) one, or a design
whose scaled cross-product matrix has a smallest eigenvalue below it, leaves beta_3 unidentified in that draw."""
BATCHED_FLOPS = 4_000_000
"""Use `block_beta3` (vectorised across draws) when n_a x n_d^2 per draw is at most this, else `draw_beta3`."""
BATCHED_CELLS = 8_000_000
"""Draws per block in `block_beta3` are capped so that the (draws, n_a, n_d) weight table has at most this
many cells."""
OUTPUTS = ("bootstrap.csv", "bootstrap_draws.csv", "figures/bootstrap.png")


@dataclass
class BootstrapResult:
    draws: np.ndarray
    """beta_3 of every draw, in draw order (NaN where a draw leaves beta_3 unidentified)."""
    b3_in_sample: float
    B: int
    seed: int
    resample: str
    N: int
    """Rows in the resampling pool = rows of every draw."""
    standardized: bool = False

    @property
    def identified(self) -> np.ndarray:
        return self.draws[~np.isnan(self.draws)]

    @property
    def p95(self) -> float:
        """95th percentile of the identified draws, Stata's `_pctile` (type 2) definition."""
        values = self.identified
        return float(np.percentile(values, 95, method="averaged_inverted_cdf")) if values.size else float("nan")

    @property
    def p_boot(self) -> float:
        """One-sided bootstrap p: share of identified draws >= the in-sample beta_3 (ties count)."""
        values = self.identified
        return float(np.mean(values >= self.b3_in_sample)) if values.size else float("nan")

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame([{"b3_in_sample": self.b3_in_sample, "p_boot": self.p_boot, "p95": self.p95,
                              "B": self.B, "seed": self.seed, "resampling": self.resample, "N": self.N,
                              "standardized": int(self.standardized),
                              "n_unidentified": int(np.isnan(self.draws).sum())}])


def draw_weights(n_rows: int, entity: np.ndarray, B: int, rng: np.random.Generator, resample: str) -> np.ndarray:
    """(n_rows, B) integer frequency weights: how often each row is in each draw. "obs": n_rows rows drawn
    uniformly with replacement (the paper's pairs bootstrap); "entity": as many entities drawn with replacement as
    the sample has, each bringing all its rows. The random stream does not depend on how draws are split into blocks."""
    if resample == "obs":
        picks = rng.integers(0, n_rows, size=(B, n_rows))
        return np.stack([np.bincount(p, minlength=n_rows) for p in picks], axis=1).astype(np.float64)
    if resample == "entity":
        codes, index = np.unique(entity, return_inverse=True)
        picks = rng.integers(0, codes.size, size=(B, codes.size))
        counts = np.stack([np.bincount(p, minlength=codes.size) for p in picks], axis=1)
        return counts[index].astype(np.float64)
    raise EstimationError(f"resample = {resample!r}; choose 'obs' (the paper's pairs bootstrap) or 'entity'")


def drop_weighted_singletons(weights: np.ndarray, fe_codes: list[np.ndarray]) -> np.ndarray:
    """Zero the weight of rows alone in a level of any FE, repeatedly: a row of weight w is w rows of the
    materialised draw, so a level is a singleton when its total weight is 1 (a row drawn twice is not alone).
    The fixed point does not depend on the order of removal, so it equals reghdfe's and pyfixest's."""
    weights = weights.copy()
    while True:
        alone = np.zeros(weights.size, dtype=bool)
        for codes in fe_codes:
            totals = np.bincount(codes, weights=weights)
            alone |= (totals[codes] == 1) & (weights > 0)
        if not alone.any():
            return weights
        weights[alone] = 0.0


def draw_beta3(z: np.ndarray, a: np.ndarray, d: np.ndarray, weights: np.ndarray) -> float:
    """beta_3 of the weighted regression of z[:, 0] on z[:, 1:] (last column = mu_hat x lap) absorbing the FEs with
    codes `a` and `d` (0-based), weights = frequency weights of one draw with singletons already dropped.

    FWL (paper eq. 7 with weights): with z~ = z minus its weighted mean within a-levels and D the d-dummies,
        M = z~' W z~ − (D' W z~)' [D' W (I − P_a) D]^+ (D' W z~),
        D' W (I − P_a) D = diag(W_d) − C' diag(1/W_a) C,
    C the (a-level x d-level) table of weights. M is the cross-product of z residualised on both FEs, and
    beta = M[x, x]^-1 M[x, y]. The null space of the Schur complement is spanned by the indicators of its connected
    components (levels of d linked through a shared a-level; an empty level is its own component); adding
    sum_c 1_c 1_c' makes it invertible without changing the quadratic form on its range. Returns NaN when beta_3 is
    not identified (COLLINEAR_TOLERANCE)."""
    keep = weights > 0
    z, a, d, w = z[keep], a[keep], d[keep], weights[keep]
    n_a, n_d = int(a.max()) + 1, int(d.max()) + 1
    rows = np.arange(w.size)
    by_a = sparse.csr_matrix((w, (a, rows)), shape=(n_a, w.size))
    total_a = np.asarray(by_a.sum(axis=1)).ravel()
    present = total_a > 0
    means_a = np.zeros((n_a, z.shape[1]))
    means_a[present] = (by_a @ z)[present] / total_a[present, None]
    z_tilde = z - means_a[a]
    M = (z_tilde * w[:, None]).T @ z_tilde
    by_d = sparse.csr_matrix((w, (d, rows)), shape=(n_d, w.size))
    M_dz = by_d @ z_tilde
    cells = sparse.csr_matrix((w, (a, d)), shape=(n_a, n_d))
    inverse_a = sparse.diags(np.divide(1.0, total_a, out=np.zeros(n_a), where=present))
    linked = (cells.T @ inverse_a @ cells).toarray()
    schur = np.diag(np.asarray(by_d.sum(axis=1)).ravel()) - linked
    _, labels = connected_components(sparse.csr_matrix(linked), directed=False)
    schur += labels[:, None] == labels[None, :]
    M -= M_dz.T @ linalg.solve(schur, M_dz, assume_a="pos")
    centred = z - np.average(z, axis=0, weights=w)
    return _solve_beta3(M, np.einsum("ij,ij,i->j", centred, centred, w)[1:])


def _indicator(codes: np.ndarray, n_levels: int) -> sparse.csr_matrix:
    return sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))), shape=(n_levels, codes.size))


def block_beta3(z: np.ndarray, a: np.ndarray, d: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """`draw_beta3` for every column of weights (n_rows, B) at once, vectorised across draws: the same M, with
        z~' W z~ = Z' W Z − S' diag(1/W_a) S,   D' W z~ = D' W Z − C' diag(1/W_a) S,   S = per-a-level sums of w z,
    for a block of draws as dense (B, levels, ...) arrays: B x n_a x n_d^2 flops, chosen when that is small
    (`pairs_bootstrap`)."""
    n_rows, B = weights.shape
    n_a, n_d, k = int(a.max()) + 1, int(d.max()) + 1, z.shape[1]
    z = z - z.mean(axis=0)  # centring changes no within-a deviation and limits cancellation in Z'WZ − S'S/W
    by_a, by_d = _indicator(a, n_a), _indicator(d, n_d)
    total_a = np.asarray(by_a @ weights)
    inverse_a = np.divide(1.0, total_a, out=np.zeros_like(total_a), where=total_a > 0)
    weighted = [weights * z[:, [j]] for j in range(k)]
    S = np.stack([np.asarray(by_a @ wz) for wz in weighted], axis=2)  # (n_a, B, k)
    outer = (z[:, :, None] * z[:, None, :]).reshape(n_rows, k * k)
    M = (weights.T @ outer).reshape(B, k, k) - np.einsum("ebj,ebk,eb->bjk", S, S, inverse_a, optimize=True)
    cell, cell_keys = pd.factorize(a.astype(np.int64) * n_d + d)
    C = np.zeros((B, n_a, n_d))
    C[:, cell_keys // n_d, cell_keys % n_d] = np.asarray(_indicator(cell, cell_keys.size) @ weights).T
    M_dz = np.stack([np.asarray(by_d @ wz) for wz in weighted], axis=2).transpose(1, 0, 2)
    M_dz -= np.einsum("bed,ebk,eb->bdk", C, S, inverse_a, optimize=True)
    linked = np.einsum("bed,bef,eb->bdf", C, C, inverse_a, optimize=True)
    schur = -linked
    schur[:, np.arange(n_d), np.arange(n_d)] += np.asarray(by_d @ weights).T
    draw, row, column = np.nonzero(linked)  # the B graphs as one block-diagonal graph: one components call
    graph = sparse.csr_matrix((np.ones(draw.size), (draw * n_d + row, draw * n_d + column)), shape=(B * n_d,) * 2)
    labels = connected_components(graph, directed=False)[1].reshape(B, n_d)
    schur += labels[:, :, None] == labels[:, None, :]
    M -= np.einsum("bdj,bdk->bjk", M_dz, np.linalg.solve(schur, M_dz))
    total = weights.sum(axis=0)
    raw = (weights.T @ z**2) - (weights.T @ z) ** 2 / total[:, None]
    return np.array([_solve_beta3(M[b], raw[b, 1:]) for b in range(B)])


def _solve_beta3(M: np.ndarray, raw: np.ndarray) -> float:
    """beta_3 = last element of M[x, x]^-1 M[x, y], or NaN when not identified (COLLINEAR_TOLERANCE; raw = the
    regressors' weighted centred sums of squares before the FEs)."""
    Mxx = M[1:, 1:]
    diagonal = np.diag(Mxx)
    if np.any(diagonal <= COLLINEAR_TOLERANCE * raw):
        return float("nan")
    scale = 1.0 / np.sqrt(diagonal)
    if np.linalg.eigvalsh(Mxx * scale[:, None] * scale[None, :])[0] < COLLINEAR_TOLERANCE:
        return float("nan")
    return float(np.linalg.solve(Mxx, M[1:, 0])[-1])


def pairs_bootstrap(sample: pd.DataFrame, b3_in_sample: float, B: int = 10_000, seed: int = 20251222,
                    resample: str = "obs", block: int = 250, progress: bool = True,
                    standardized: bool = False) -> BootstrapResult:
    """Bootstrap distribution of beta_3 of `outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num` on
    `sample` (the post-cutoff panel in the paper's design) and the one-sided bootstrap p of `b3_in_sample`.
    Draws use numpy.random.default_rng(seed); `block` draws are generated at a time (same draws for any block)."""
    if B < 1:
        raise EstimationError(f"B = {B}: the bootstrap needs at least one draw")
    missing = [c for c in VARIABLES + ABSORB if c not in sample.columns]
    if missing:
        raise EstimationError(f"the bootstrap sample lacks column(s) {missing}")
    data = sample[VARIABLES + ABSORB].dropna()
    if len(data) < 10:
        raise EstimationError(f"the bootstrap sample has {len(data)} complete rows; at least 10 are needed")
    z = np.column_stack([data["outcome"], data["mu_hat"], data["lap"], data["mu_hat"] * data["lap"]]).astype(float)
    entity = pd.factorize(data["entity_num"])[0]
    period = pd.factorize(data["period_num"])[0]
    a, d = (entity, period) if entity.max() >= period.max() else (period, entity)
    n_a, n_d = int(a.max()) + 1, int(d.max()) + 1
    batched = n_a * n_d**2 <= BATCHED_FLOPS
    block = max(1, min(block, BATCHED_CELLS // (n_a * n_d))) if batched else block
    rng = np.random.default_rng(seed)
    draws = np.empty(B)
    # One BLAS thread: the solves are small, and OpenBLAS with 2 threads on them measured 10-100x slower here.
    with threadpool_limits(1), tqdm(total=B, desc="bootstrap", unit="draw", disable=not progress) as bar:
        for start in range(0, B, block):
            weights = draw_weights(len(data), entity, min(block, B - start), rng, resample)
            for j in range(weights.shape[1]):
                weights[:, j] = drop_weighted_singletons(weights[:, j], [entity, period])
            empty = weights.sum(axis=0) == 0
            out = np.full(weights.shape[1], np.nan)
            if batched and not empty.all():
                out[~empty] = block_beta3(z, a, d, weights[:, ~empty])
            elif not batched:
                out[~empty] = [draw_beta3(z, a, d, weights[:, j]) for j in np.flatnonzero(~empty)]
            draws[start:start + weights.shape[1]] = out
            bar.update(weights.shape[1])
    return BootstrapResult(draws, float(b3_in_sample), B, seed, resample, len(data), standardized)


def histogram(result: BootstrapResult, path: Path) -> None:
    """Paper Figure III: the draws, the 95th percentile (blue dotted) and the in-sample beta_3 (red solid)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    axes.hist(result.identified, bins=60, color="0.6")
    axes.axvline(result.p95, color="blue", linestyle=":", linewidth=2, label=f"95th percentile = {result.p95:.3g}")
    axes.axvline(result.b3_in_sample, color="red", linestyle="-", linewidth=2,
                 label=f"in-sample estimate = {result.b3_in_sample:.3g}")
    scale = "standardized " if result.standardized else ""
    axes.set_xlabel(f"beta_3 ({scale}mu_hat x {scale}lap), out-of-sample bootstrap draws")
    axes.set_ylabel("draws")
    axes.set_title(f"Pairs bootstrap, B = {result.B:,}, one-sided bootstrap p = {result.p_boot:.3f}")
    axes.legend()
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=120))
    plt.close(figure)


def in_sample_beta3(sample: pd.DataFrame) -> float:
    """beta_3 of the detection regression on the in-sample (pre-cutoff) rows (Table V, column 2)."""
    fit = reghdfe(sample, "outcome", ["mu_hat", "lap", BETA3], absorb=ABSORB, vce="cluster", cluster=["entity_num"])
    if BETA3 in fit.omitted or BETA3 not in fit.coef.index:
        raise EstimationError("the in-sample beta_3 (c.mu_hat#c.lap) is collinear with the fixed effects")
    return float(fit.coef[BETA3])


def run(config: RunConfig, layout: Layout, standardize: bool = True, progress: bool = True) -> BootstrapResult | None:
    """Paper Figure III on data/derived/panel.parquet: in-sample = post == 0, bootstrap sample = post == 1, both
    standardized within their own sample first (Table V; `standardize=False` keeps raw units). Writes
    results/bootstrap.csv (summary), results/bootstrap_draws.csv and results/figures/bootstrap.png. Returns None,
    and removes those files of an earlier run, when bootstrap_reps = 0 or a sample has no complete rows."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    complete = panel.dropna(subset=VARIABLES + ABSORB)
    pre, post = complete[complete["post"] == 0], complete[complete["post"] == 1]
    if config.estimate.bootstrap_reps <= 0 or pre.empty or post.empty:
        for name in OUTPUTS:
            (layout.results / name).unlink(missing_ok=True)
        return None
    if standardize:
        pre, post = (standardize_within(part, VARIABLES) for part in (pre, post))
    result = pairs_bootstrap(post, in_sample_beta3(pre), B=config.estimate.bootstrap_reps,
                             seed=config.estimate.bootstrap_seed, resample=config.estimate.bootstrap_resample,
                             progress=progress, standardized=standardize)
    write_csv(result.summary(), layout.results / "bootstrap.csv")
    write_csv(pd.DataFrame({"draw": np.arange(1, result.B + 1), "beta3": result.draws}),
              layout.results / "bootstrap_draws.csv")
    histogram(result, layout.figures / "bootstrap.png")
    return result
