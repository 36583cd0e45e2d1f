"""ESS estimation and inference (ESS paper §3.3–3.4, §4.1, Remark 3.1, App. C).

Grid n_1 < … < n_J, n_0 := 0. For each n_j the excess risk Δ̂_j = R̂(n_j) − R̂_LLM with standard error ŝ_j
(variance.py: eq. 4.6, or the conservative 4.7).

- Plug-in (§3.3): n̂ = min{n_j : R̂(n_j) ≤ R̂_LLM}; none on the grid → "> n_J"; n̂ = n_1 > 1 → "≤ n_1" (the
  grid cannot place it lower; n̂ = n_1 = 1 is the ESS itself).
- Test statistic (eq. 3.3): T_j = Δ̂_j / ŝ_j; H₀_j: R(n_j) ≤ R_LLM is rejected at level α when T_j > c_j (right
  tail, paper fn. 9). ŝ_j = 0 gives T_j = +∞ if Δ̂_j > 0, else no rejection.
- Critical value c_j (`critical`): Proposition 4.1 gives the normal quantile z_{1−α} as K → ∞. ADOPTED for finite
  K: Student's t quantile with K_j − 1 degrees of freedom, K_j = ⌊N/n_j⌋ the blocks at n_j. The studentized Δ̂ is
  an average over K blocks whose training part (a third to a half of its variance at the null boundary) is
  estimated from those K blocks, and the training losses of a small-n learner are skewed; with the normal
  quantile the ESS interval's coverage fell to 0.927 (LDA, 0-1 loss, K = 10 blocks) and a run before it measured
  the size at 7% there (benchmarks/RESULTS.md; with t_{K−1}: 0.950 and 5%). t_{K−1} → z_{1−α} as K grows, so the
  paper's asymptotics are unchanged.
- Algorithm 3.1: test H₀_1, H₀_2, … in order; stop at the first j* not rejected; the one-sided (1 − α) CI is
  [n_{j*−1} + 1, ∞) (eq. 3.4; fn. 7: n_{j−1} + 1 rather than n_j, for a coarse grid). All J rejected →
  [n_J + 1, ∞) ("ESS exceeds the grid"). No multiplicity correction: the nulls are nested under monotonicity
  (Assumption 3.1), so only the first true null can be falsely rejected (Theorem 4.1).
- Remark 3.1 (eq. 3.5): the one-sided CI for Δ_j is [Δ̂_j − c_j ŝ_j, ∞); Algorithm 3.1 stops at the first j
  whose lower end is ≤ 0 — the same j* (duality), which `excess_risk_lower` exposes per n.
- Delta method for RMSE (App. C): se(√R̂) = se(R̂) / (2√R̂).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from scipy.stats import t as t_dist


def plug_in(grid: list[int], risk_ml: list[float], risk_llm: float) -> int | None:
    """n̂ = the smallest n of the grid with R̂(n) ≤ R̂_LLM (§3.3); None when no n of the grid reaches it."""
    for n, risk in zip(grid, risk_ml):
        if risk <= risk_llm:
            return int(n)
    return None


def below_grid(grid: list[int], plug: int | None) -> bool:
    """Whether the plug-in is left-censored by the grid: the smallest n already reaches the LLM and n₁ > 1, so the
    ESS is only known to lie in 1..n₁. With n₁ = 1 nothing is censored: the ESS is min{n ≥ 1 : …} = 1 (Definition
    2.1)."""
    return plug is not None and plug == grid[0] and grid[0] > 1


def stated_plug_in(grid: list[int], plug: int | None) -> str:
    """The plug-in as the grid allows it to be stated: "≤ n₁" when it is left-censored (`below_grid`), "> n_J" when
    no n reaches the LLM (right-censored), else the grid n."""
    if plug is None:
        return f"> {grid[-1]}"
    return f"≤ {plug}" if below_grid(grid, plug) else str(plug)


def t_statistic(excess: float, se: float) -> float:
    """Eq. (3.3); NaN when Δ̂ or ŝ is undefined (no evidence against H₀: Algorithm 3.1 stops there)."""
    if np.isnan(excess) or np.isnan(se):
        return np.nan
    if se > 0:
        return excess / se
    return np.inf if excess > 0 else (-np.inf if excess < 0 else 0.0)


@dataclass(frozen=True)
class Sequential:
    """Result of Algorithm 3.1."""

    lower: int
    """The lower end of the one-sided (1 − α) CI [lower, ∞) for the ESS."""
    stop_index: int | None
    """Index j* (0-based) of the first non-rejected null; None when every null was rejected."""
    rejected: list[bool]
    tested: list[bool]

    @property
    def exceeds_grid(self) -> bool:
        return self.stop_index is None


def critical(alpha: float, blocks: int | None = None) -> float:
    """c = the one-sided (1 − α) quantile: Student's t with blocks − 1 degrees of freedom (module docstring), the
    normal's when `blocks` is None."""
    return float(norm.ppf(1 - alpha) if blocks is None else t_dist.ppf(1 - alpha, blocks - 1))


def sequential(grid: list[int], t_stats: list[float], alpha: float, blocks: list[int] | None = None) -> Sequential:
    """Algorithm 3.1 at level α over the grid, with the critical value of each n (`critical`; normal without
    `blocks`)."""
    rejected, tested = [], []
    stop = None
    for j, t in enumerate(t_stats):
        c = critical(alpha, None if blocks is None else blocks[j])
        tested.append(stop is None)
        rejected.append(bool(stop is None and t > c))
        if stop is None and not t > c:
            stop = j
    previous = 0 if stop in (None, 0) else grid[stop - 1]
    lower = grid[-1] + 1 if stop is None else previous + 1
    return Sequential(int(lower), stop, rejected, tested)


def excess_risk_lower(excess: float, se: float, alpha: float, blocks: int | None = None) -> float:
    """Remark 3.1: the lower end of the one-sided (1 − α) CI for Δ = R(n) − R_LLM."""
    return excess - critical(alpha, blocks) * se


def lower_from_excess_ci(grid: list[int], lower_ends: list[float]) -> int:
    """Eq. (3.5) on the grid: n_{j*−1} + 1 for the first j* whose excess-risk CI reaches 0 (same as Algorithm 3.1)."""
    for j, low in enumerate(lower_ends):
        if not low > 0:                       # an undefined (NaN) lower end is a non-rejection, as in Algorithm 3.1
            return 1 if j == 0 else int(grid[j - 1]) + 1
    return int(grid[-1]) + 1


def interval(risk: float, se: float, level: float) -> tuple[float, float]:
    """Two-sided normal interval for the risk."""
    z = norm.ppf(0.5 + level / 2)
    return risk - z * se, risk + z * se


def rmse_interval(mse: float, se_mse: float, level: float) -> tuple[float, float, float]:
    """Delta method (App. C): RMSE = √MSE, se = se_MSE / (2√MSE); returns (rmse, low, high)."""
    rmse = float(np.sqrt(mse))
    se = se_mse / (2 * rmse) if rmse > 0 else np.nan
    low, high = interval(rmse, se, level)
    return rmse, low, high
