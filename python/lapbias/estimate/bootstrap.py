"""Pairs bootstrap of beta_3 (paper, "Out-of-Sample and Bootstrap Analysis" and Figure III).

The paper: "we repeatedly sample observations from the out-of-sample data with replacement for 10,000 repetitions
and re-estimate the regression in each bootstrap sample. The bootstrap sample size is set equal to that of the
out-of-sample period. For each iteration, we record the estimated coefficient on the interaction term." The
in-sample beta_3 is then compared with this placebo distribution: p_boot = share of draws >= the in-sample
beta_3 (a draw equal to it counts as at least as large), the one-sided bootstrap p of beta_3 > 0 against the
post-cutoff distribution.

Speed (why this is hand-written): a draw with replacement is the original rows with integer frequency weights,
so every draw shares one design. beta_3 of a draw is the weighted FWL solve: partial the entity FE out exactly by
weighted within-entity demeaning, and the period FE by including period dummies (the FE with fewer levels) in
the small normal equations. That is exact, needs no iteration, and batches a block of draws into BLAS and
sparse-matrix products; pyfixest has no batched-weights estimator. Singletons are dropped as reghdfe would drop
them on the materialised draw: a level whose total weight is 1, repeatedly. Duplicated rows keep their entity and
period ids (as Stata's `bsample` without idcluster()); `resample="entity"` draws whole entities instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from tqdm import tqdm

from ..config import RunConfig
from ..errors import EstimationError
from ..io import Layout, atomic_write, read_parquet, write_csv

TERMS = ["mu_hat", "lap", "c.mu_hat#c.lap"]


@dataclass
class BootstrapResult:
    draws: np.ndarray
    """beta_3 of every draw (NaN where a draw leaves beta_3 unidentified)."""
    b3_in_sample: float
    B: int
    seed: int
    resample: str
    N: int

    @property
    def p95(self) -> float:
        return float(np.nanpercentile(self.draws, 95))

    @property
    def p_boot(self) -> float:
        """Share of (identified) draws at least as large as the in-sample beta_3."""
        valid = self.draws[~np.isnan(self.draws)]
        return float(np.mean(valid >= self.b3_in_sample)) if valid.size else float("nan")

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame([{"b3_in_sample": self.b3_in_sample, "p_boot": self.p_boot, "p95": self.p95,
                              "B": self.B, "seed": self.seed, "resampling": self.resample, "N": self.N,
                              "n_unidentified": int(np.isnan(self.draws).sum())}])


def draw_weights(n_rows: int, entity: np.ndarray, B: int, rng: np.random.Generator, resample: str) -> np.ndarray:
    """(n_rows, B) integer frequency weights: observations (the paper's design) or whole entities."""
    if resample == "obs":
        picks = rng.integers(0, n_rows, size=(B, n_rows))
        return np.stack([np.bincount(p, minlength=n_rows) for p in picks], axis=1).astype(np.float64)
    if resample == "entity":
        codes, index = np.unique(entity, return_inverse=True)
        picks = rng.integers(0, codes.size, size=(B, codes.size))
        counts = np.stack([np.bincount(p, minlength=codes.size) for p in picks], axis=1)
        return counts[index].astype(np.float64)
    raise EstimationError(f"resample = {resample!r}; choose 'obs' (the paper's pairs bootstrap) or 'entity'")


def _indicator(codes: np.ndarray, n_levels: int) -> sparse.csr_matrix:
    return sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))), shape=(n_levels, codes.size))


def drop_weighted_singletons(weights: np.ndarray, fe_codes: list[np.ndarray], n_levels: list[int]) -> np.ndarray:
    """Zero the weight of rows alone (total weight 1) in a level of any FE, repeatedly, column by column."""
    weights = weights.copy()
    indicators = [_indicator(c, n) for c, n in zip(fe_codes, n_levels)]
    while True:
        alone = np.zeros(weights.shape, dtype=bool)
        for codes, indicator in zip(fe_codes, indicators):
            totals = indicator @ weights  # (levels, B)
            alone |= (totals[codes] == 1) & (weights > 0)
        if not alone.any():
            return weights
        weights[alone] = 0.0


def weighted_beta3(y: np.ndarray, X: np.ndarray, entity: np.ndarray, period: np.ndarray,
                   weights: np.ndarray) -> np.ndarray:
    """beta_3 (last column of X) of the weighted regression of y on X with entity and period FE, for every
    column of `weights` (n_rows, B), by exact FWL in normal-equation form, batched over draws:

        M_b = sum_i w_ib z_i z_i'  −  sum_e S_eb S_eb' / W_eb,   S_eb = sum_{i in e} w_ib z_i,  W_eb = sum_{i in e} w_ib

    is the weighted cross-product of z = [y, X, period dummies] after weighted within-entity demeaning; beta of
    the draw solves M_b[x, x] beta = M_b[x, y]. A period dummy left without weight is dropped (its row and column of
    M are empty); a draw whose design is still singular gets NaN (reported as unidentified)."""
    n_entities, n_periods = int(entity.max()) + 1, int(period.max()) + 1
    Z = np.column_stack([y, X, np.eye(n_periods)[period][:, 1:]])
    Z = Z - Z.mean(axis=0)  # centring leaves within-entity deviations unchanged and limits cancellation
    p = Z.shape[1]
    outer = (Z[:, :, None] * Z[:, None, :]).reshape(len(Z), p * p)
    M = (weights.T @ outer).reshape(-1, p, p)  # (B, p, p): sum_i w_ib z_i z_i'
    E = _indicator(entity, n_entities)
    totals = np.asarray(E @ weights)  # (entities, B)
    S = np.stack([np.asarray(E @ (weights * Z[:, [j]])) for j in range(p)], axis=2)  # (entities, B, p)
    scaled = S / np.sqrt(np.where(totals > 0, totals, 1.0))[:, :, None]
    M -= np.einsum("ebj,ebk->bjk", scaled, scaled, optimize=True)
    A, rhs = M[:, 1:, 1:], M[:, 1:, 0]
    empty = np.abs(A).sum(axis=2) < 1e-12 * max(1.0, float(np.abs(A).max()))
    A = A + np.einsum("bj,jk->bjk", empty.astype(float), np.eye(A.shape[1]))
    k = X.shape[1]
    out = np.full(weights.shape[1], np.nan)
    identified = (np.linalg.cond(A) < 1e12) & ~empty[:, k - 1]
    if identified.any():
        out[identified] = np.linalg.solve(A[identified], rhs[identified][:, :, None])[:, k - 1, 0]
    return out


def pairs_bootstrap(sample: pd.DataFrame, b3_in_sample: float, B: int = 10_000, seed: int = 20251222,
                    resample: str = "obs", block: int = 250, progress: bool = True) -> BootstrapResult:
    """Bootstrap distribution of beta_3 on `sample` (the post-cutoff panel in the paper's design)."""
    needed = ["outcome", "mu_hat", "lap", "entity_num", "period_num"]
    data = sample[needed].dropna()
    if len(data) < 10:
        raise EstimationError(f"the bootstrap sample has {len(data)} complete rows; at least 10 are needed")
    y = data["outcome"].to_numpy(np.float64)
    X = np.column_stack([data["mu_hat"], data["lap"], data["mu_hat"] * data["lap"]]).astype(np.float64)
    entity = pd.factorize(data["entity_num"])[0]
    period = pd.factorize(data["period_num"])[0]
    rng = np.random.default_rng(seed)
    draws = []
    blocks = range(0, B, block)
    for start in tqdm(blocks, desc="bootstrap", unit="block", disable=not progress):
        weights = draw_weights(len(data), entity, min(block, B - start), rng, resample)
        weights = drop_weighted_singletons(weights, [entity, period], [entity.max() + 1, period.max() + 1])
        draws.append(weighted_beta3(y, X, entity, period, weights))
    return BootstrapResult(np.concatenate(draws), float(b3_in_sample), B, seed, resample, len(data))


def histogram(result: BootstrapResult, path) -> None:
    """Paper Figure III: the draws, the 95th percentile (blue dotted) and the in-sample beta_3 (red solid)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    axes.hist(result.draws[~np.isnan(result.draws)], bins=60, color="0.6")
    axes.axvline(result.p95, color="tab:blue", linestyle=":", linewidth=2, label=f"95th percentile = {result.p95:.3g}")
    axes.axvline(result.b3_in_sample, color="tab:red", linestyle="-", linewidth=2,
                 label=f"in-sample beta_3 = {result.b3_in_sample:.3g}")
    axes.set_xlabel("beta_3 (mu_hat x LAP), post-cutoff bootstrap draws")
    axes.set_ylabel("draws")
    axes.set_title(f"Pairs bootstrap, B = {result.B:,}, one-sided p = {result.p_boot:.3f}")
    axes.legend()
    figure.tight_layout()
    atomic_write(path, lambda tmp: figure.savefig(tmp, format="png", dpi=120))
    plt.close(figure)


def run(config: RunConfig, layout: Layout) -> BootstrapResult | None:
    """Bootstrap the post-cutoff beta_3 against the in-sample beta_3 of results/detection.csv; write
    results/bootstrap.csv, bootstrap_draws.csv and figures/bootstrap.png. None when there is nothing to do."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    post = panel[panel["post"] == 1]
    detection = layout.results / "detection.csv"
    if config.estimate.bootstrap_reps <= 0 or post.empty or not detection.exists():
        return None
    table = pd.read_csv(detection)
    b3 = float(table.loc[table["term"] == TERMS[-1], "coef"].iloc[0])
    result = pairs_bootstrap(post, b3, B=config.estimate.bootstrap_reps, seed=config.estimate.bootstrap_seed,
                             resample=config.estimate.bootstrap_resample)
    write_csv(result.summary(), layout.results / "bootstrap.csv")
    write_csv(pd.DataFrame({"draw": np.arange(1, result.B + 1), "beta3": result.draws}),
              layout.results / "bootstrap_draws.csv")
    histogram(result, layout.figures / "bootstrap.png")
    return result
