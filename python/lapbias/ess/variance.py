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

Finite-K variance (`finite_k`; derived here from App. A's decomposition, not in the paper). App. A splits
ℓ(f̂_D, z) = R + a(D) + b(z) + h(D, z) (Hoeffding: a = R_D − R, b = ℓ̄(z) − R, h degenerate in both arguments)
and drops h as O(1/K²). Kept, the decomposition gives the EXACT variance at every K ≥ 2 (i.i.d. rows):

    Var R̂(n) = (σ₁² + 2σ₁₂ + σ₂²/n)/K + (τ²/n + ρ)/(K(K − 1)),

τ² = Var h, ρ = Cov(h(D_k, Z_j), h(D_l, Z_i)) for i ∈ B_k, j ∈ B_l, k ≠ l (each model's loss at a row that trained
the other; every other pair of h terms is uncorrelated). Expanding h over its training points, only the first-
order terms g(Z_i, z) enter ρ, and τ² ≥ n Var g, so |ρ| ≤ τ²/n (Cauchy–Schwarz). The plug-in pieces are biased at
small K: with q = 1/(K − 1), v = σ₂²/n, w = τ²/n, m = (K − 1)n and W̄ = Σ_k W_k/(K(m − 1)) the mean within-block
variance of the test losses (W_k from blockcv.py),

    E σ̂₁² = σ₁² + q²v − 2qσ₁₂ + qw − q²ρ            E σ̂₂² = N/(N − 1) · (qσ₁² + nv + qnw − Var R̂)
    E σ̂₁₂ = −qσ₁² + (1 + q²)σ₁₂ − qv + qρ − q²w      E W̄ = n(v + w),

so (4.5)/K is biased down by O(1/K) in every component: at K = 5 its expectation keeps about half of σ₁² and
56% of σ₂²/n. Solving these four equations for Var R̂ with ρ set to its lower bound −w gives

    V̂ = κ/K · (σ̂₁² + σ̂₂²/n + 2λ σ̂₁₂) − μ W̄,
    κ = (K − 1)(N − 1)/((K − 2)(m − 1)),   λ = m/(N − 1),   μ = (n − 1)/(n (K − 1)(K − 2)(m − 1)),

with E V̂ − Var R̂ = n(ρ + w)/((K − 1)(m − 1)) ∈ [0, 2τ²/((K − 1)(m − 1))] for every admissible ρ: V̂ never
falls short of the variance in expectation, at every K ≥ 3 and any n, with no stability assumption, and
V̂ → (4.5)/K as K → ∞. The conservative term is of the size of the remainder (τ²/n + ρ)/(K(K − 1)) itself:
large where the learner's degenerate part is (least squares at small n, ρ ≈ w: about +20% of Var R̂ at K = 5 and
+50% at K = 3), O(1/K²) and negligible from K ≈ 10 on. Setting ρ = +w instead would be exactly unbiased for
learners whose pairwise influence is symmetric (least squares) but anti-conservative for the others. A fifth form,
the spread of the L̂_k, identifies ρ, but it has K − 1 degrees of freedom for a term of size σ₂²/n, K times the
target: noise. Checked in tests/test_ess_estimators.py (mean of V̂ against the Monte Carlo variance of R̂ with a
real learner at K = 3 and 5) and by benchmarks/bench_ess_coverage.py.

Which variance where:

- The test of H₀: R(n) ≤ R_LLM (§4.3, Algorithm 3.1) uses V̂ of the loss difference d = ℓ_ML − ℓ_LLM (eq. 4.6,
  Prop. 4.1; `for_test`) at every K ≥ 3 (critical value: inference.critical). The fixed-K variance is not valid
  for the difference: at the null boundary the LLM's excess risk over the Bayes risk is of the same order as the
  learner's, so the test-point noise of d shrinks with n as fast as the training noise, and Assumption B.1
  (training noise negligible) fails; B.2 then leaves out a third to a half of the variance. The earlier rule (B.2
  below 20 blocks) covered the true ESS 0.897-0.935 at K = 5-10 in benchmarks/RESULTS.md; this one 0.95-0.99, and
  at least 0.938 at every K from 5 to 100 in the four designs there. K = 2 blocks leave no estimate of the training
  component: the point is not tested (Algorithm 3.1 stops there, which keeps the CI valid). V̂ ≤ 0 (sampling
  noise) falls back to B.2 of the difference. The conservative alternative (eq. 4.7, Remark 4.2) adds the two
  variances: V̂_ML + s²(ℓ_LLM)/(Kn).
- The pointwise bands of R(n) (§5.4's "hybrid CIs", `band`): V̂ when K ≥ min_blocks; below, the larger of V̂ and
  B.2 (each is valid in its own regime, and with few blocks B.2's N degrees of freedom steady V̂'s K − 1); B.2
  alone at K = 2, where V̂ is undefined. The paper's rule (eq. 4.5 from 20 blocks, B.2 below) is not kept: B.2
  covered R(n) only 0.74-0.95 at n = 10-40 in benchmarks/RESULTS.md (the training part of a learner on tens of rows
  is not negligible) and eq. 4.5 0.77-0.86 at K = 5, so that rule covered 0.80-0.92 at K = 5-10, where this one
  covers 0.90-0.95 (and ≥ 0.917 from K = 20 on, the same as eq. 4.5 or better).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blockcv import BlockStats

MIN_BLOCKS = 20
"""The bands' hybrid rule: V̂ alone when K ≥ MIN_BLOCKS, the larger of V̂ and B.2 below (`band`)."""
BAND_RULE = ("finite_K = the finite-K variance when K ≥ {min_blocks} blocks; below, the larger of it and fixed_K "
             "(Corollary B.1, eq. B.2); fixed_K alone at K = 2; fixed_K_fallback = fixed_K where the finite-K "
             "variance is ≤ 0")
"""The bands' rule in words, for the report (the configured threshold filled in)."""


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


def finite_k(stats: BlockStats) -> float:
    """V̂ = κ/K (σ̂₁² + σ̂₂²/n + 2λσ̂₁₂) − μW̄, the finite-K variance of R̂(n) (module docstring); NaN for K < 3."""
    K, n, N = stats.K, stats.n, stats.N
    m = (K - 1) * n
    if K < 3:
        return np.nan
    parts = fixed_n(stats)
    kappa = (K - 1) * (N - 1) / ((K - 2) * (m - 1))
    lam = m / (N - 1)
    mu = (n - 1) / (n * (K - 1) * (K - 2) * (m - 1))
    within = float(np.sum(stats.within)) / (K * (m - 1))
    return kappa / K * (parts.between_block + parts.test / n + 2 * lam * parts.cross) - mu * within


@dataclass(frozen=True)
class Variance:
    """A variance of R̂(n) with the rule that chose it and the candidates."""

    variance: float
    rule: str
    """"finite_K" (V̂), "fixed_K" (Corollary B.1), "fixed_K_fallback" (V̂ ≤ 0) or "untested" (K = 2: no variance
    for the test)."""
    fixed_n: FixedN
    fixed_k: float
    finite_k: float

    @property
    def se(self) -> float:
        return float(np.sqrt(self.variance))


def _candidates(stats: BlockStats) -> tuple[FixedN, float, float]:
    return fixed_n(stats), fixed_k(stats), finite_k(stats)


def for_test(stats: BlockStats) -> Variance:
    """The variance for Algorithm 3.1: V̂ at every K ≥ 3, B.2 when V̂ ≤ 0, NaN ("untested") at K = 2 (module
    docstring). Applied to the loss difference (eq. 4.6), or to the comparator's loss inside eq. (4.7)."""
    parts, var_k, var_finite = _candidates(stats)
    if stats.K < 3:
        return Variance(np.nan, "untested", parts, var_k, var_finite)
    if not var_finite > 0:
        return Variance(var_k, "fixed_K_fallback", parts, var_k, var_finite)
    return Variance(var_finite, "finite_K", parts, var_k, var_finite)


def band(stats: BlockStats, min_blocks: int = MIN_BLOCKS) -> Variance:
    """The variance of the pointwise bands of R(n) (module docstring): V̂ when K ≥ min_blocks, the larger of V̂ and
    B.2 below, B.2 alone at K = 2 or when V̂ ≤ 0."""
    parts, var_k, var_finite = _candidates(stats)
    if not var_finite > 0:
        return Variance(var_k, "fixed_K" if stats.K < 3 else "fixed_K_fallback", parts, var_k, var_finite)
    if stats.K < min_blocks and var_k > var_finite:
        return Variance(var_k, "fixed_K", parts, var_k, var_finite)
    return Variance(var_finite, "finite_K", parts, var_k, var_finite)


def sum_of_variances(ml: BlockStats, llm_losses: np.ndarray) -> float:
    """Conservative eq. (4.7): Var̂(R̂_ML(n)) + Var̂(R̂_LLM), the comparator's by `for_test`, the LLM's as the
    variance of a mean of the K·n used rows' losses (`llm_losses` in block order)."""
    return for_test(ml).variance + float(np.var(llm_losses, ddof=1)) / len(llm_losses)
