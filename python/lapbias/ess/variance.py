"""Variance of the block-out CV risk R̂(n) (ESS paper §4.2–4.3, App. A and B).

Reconstructed formulas (the PDF text lost them; rebuilt from the proofs of App. A and B):

Fixed-n regime (Theorem 4.2: n fixed, K = ⌊N/n⌋ → ∞). With R_k = E[ℓ(f̂_k(X), Y) | D_k] the conditional risk of
the model trained on block k, ℓ̄(z) = E_D[ℓ(f̂_D(x), y)] the expected loss at a test point z over training
samples D of size n, and L̄_k = (1/n) Σ_{i ∈ B_k} ℓ̄(Z_i),

    √K (R̂(n) − R(n)) → N(0, σ²),   σ² = σ₁² + σ₂²/n + 2 σ₁₂                          (eq. 4.4)

    σ₁² = Var(R_k)            training (between-block) randomness,
    σ₂² = Var(ℓ̄(Z))           test-point randomness (each row is a test point of K − 1 blocks, so the Hájek
                               projection of the test part is (1/N) Σ_i (ℓ̄(Z_i) − R), variance σ₂²/(Kn)),
    σ₁₂ = Cov(R_k, L̄_k)       cross term: row i trains block k and is tested by all other blocks (App. A:
                               the K·n pairs (k, i ∈ B_k) give Cov = σ₁₂/K).

Plug-in estimator (eq. 4.5), with R̂_k and L̃_i from blockcv.py and L̂_k = (1/n) Σ_{i ∈ B_k} L̃_i:

    σ̂₁² = 1/(K−1) Σ_k (R̂_k − R̂)²
    σ̂₂² = 1/(Kn−1) Σ_i (L̃_i − R̂)²                   (mean of L̃_i is R̂ exactly)
    σ̂₁₂ = 1/(K−1) Σ_k (R̂_k − R̂)(L̂_k − R̂)            (mean of L̂_k is R̂ exactly)
    σ̂²  = σ̂₁² + σ̂₂²/n + 2 σ̂₁₂,        Var̂(R̂(n)) = σ̂²/K.

Fixed-K regime (App. B, Theorem B.1 / Corollary B.1: K fixed, n → ∞, stable learner): the training part
vanishes and √N (R̂(n) − R(n)) → N(0, σ_K²), estimated by the sample variance of the aggregated losses

    σ̂_K² = 1/(Kn−1) Σ_i (L̃_i − R̂)²                                                  (eq. B.2)

with Var̂(R̂(n)) = σ̂_K²/(Kn) (Kn = rows used). Note σ̂_K² = σ̂₂²: the fixed-K variance is the test component of
(4.5) alone.

Hybrid rule (§5.4, App. C). The paper uses Theorem 4.2 when K is large and Corollary B.1 otherwise, with a
threshold chosen "by calibrated simulation" that the text lost. ADOPTED: fixed-n when K ≥ 20 blocks
(`min_blocks`), fixed-K below. Why 20: σ̂₁² and σ̂₁₂ are (co)variances over only K block summaries; with
K − 1 = 19 degrees of freedom the one-sided 95% Student quantile (1.73) is within 5% of the normal one (1.645),
below that the studentized statistic is visibly non-normal and σ̂² can even be negative; and for n ≥ N/20 the
training component σ₁²/K is the variance of a model trained on ≥ 5% of the sample, which App. B's stability
argument treats as negligible. Checked by simulation (benchmarks/bench_ess_coverage.py, pointwise 95% coverage of
R(n), OLS design, 200 replications): fixed-n 0.93-0.96 vs fixed-K 0.67-0.92 at K = 50-100; 0.92-0.945 vs
0.825-0.94 at K = 25; 0.845-0.905 vs 0.89-0.945 at K = 6-12 — the crossing lies between K = 12 and 25. A fixed-n estimate σ̂² ≤ 0 (possible in finite samples through σ̂₁₂ < 0) falls back to fixed-K.

The test of H₀: R(n) ≤ R_LLM (§4.3) applies the same estimators to the loss difference d = ℓ_ML − ℓ_LLM
(eq. 4.6; `BlockStats.__sub__`), or, conservatively, adds the two variances (eq. 4.7, Remark 4.2):
Var̂_ML + Var̂_LLM with Var̂_LLM = s²(ℓ_LLM)/(Kn).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blockcv import BlockStats

MIN_BLOCKS = 20
"""Hybrid rule: fixed-n variance (Theorem 4.2) when K ≥ MIN_BLOCKS, else fixed-K (Corollary B.1)."""


@dataclass(frozen=True)
class FixedN:
    """The three components of eq. (4.5) and what follows from them."""

    between_block: float
    test: float
    cross: float
    n: int
    K: int

    @property
    def sigma2(self) -> float:
        """σ̂² = σ̂₁² + σ̂₂²/n + 2 σ̂₁₂ (eq. 4.5)."""
        return self.between_block + self.test / self.n + 2 * self.cross

    @property
    def variance(self) -> float:
        """Var̂(R̂(n)) = σ̂²/K."""
        return self.sigma2 / self.K


def fixed_n(stats: BlockStats) -> FixedN:
    """Eq. (4.5) from the block summaries R̂_k and L̃_i (module docstring)."""
    K, n = stats.K, stats.n
    risk = stats.risk
    centred_block = stats.block_risk - risk
    block_of_obs = stats.obs_loss.reshape(K, n).mean(axis=1)          # L̂_k
    between = float(centred_block @ centred_block / (K - 1))
    test = float(np.var(stats.obs_loss, ddof=1)) if stats.N > 1 else 0.0
    cross = float(centred_block @ (block_of_obs - risk) / (K - 1))
    return FixedN(between, test, cross, n, K)


def fixed_k(stats: BlockStats) -> float:
    """Var̂(R̂(n)) = σ̂_K²/(Kn), σ̂_K² the sample variance of L̃_i (eq. B.2)."""
    return float(np.var(stats.obs_loss, ddof=1)) / stats.N


@dataclass(frozen=True)
class Variance:
    """Var̂(R̂(n)) under the hybrid rule, with the rule applied and both candidates."""

    variance: float
    rule: str
    """"fixed_n" (Theorem 4.2), "fixed_K" (Corollary B.1, K < min_blocks) or "fixed_K_fallback" (σ̂² ≤ 0)."""
    fixed_n: FixedN
    fixed_k: float

    @property
    def se(self) -> float:
        return float(np.sqrt(self.variance))


def hybrid(stats: BlockStats, min_blocks: int = MIN_BLOCKS) -> Variance:
    """The hybrid rule (module docstring): fixed-n when K ≥ min_blocks and σ̂² > 0, else fixed-K."""
    components, var_k = fixed_n(stats), fixed_k(stats)
    if stats.K < min_blocks:
        return Variance(var_k, "fixed_K", components, var_k)
    if components.sigma2 <= 0:
        return Variance(var_k, "fixed_K_fallback", components, var_k)
    return Variance(components.variance, "fixed_n", components, var_k)


def sum_of_variances(ml: BlockStats, llm_losses: np.ndarray, min_blocks: int = MIN_BLOCKS) -> float:
    """Conservative eq. (4.7): Var̂(R̂_ML(n)) + Var̂(R̂_LLM), the LLM's as the variance of a mean of the K·n used
    rows' losses (`llm_losses` in block order)."""
    return hybrid(ml, min_blocks).variance + float(np.var(llm_losses, ddof=1)) / len(llm_losses)
