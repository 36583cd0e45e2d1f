"""Validation by simulation (issue 15, item 7): a design whose ESS is known exactly.

Data: X ~ N(0, I_p), Y = X'β + ε, ε ~ N(0, σ²). Comparator A: least squares without intercept
(`LeastSquares`, a scikit-learn estimator plugged in as a comparator). For Gaussian X its risk is known in closed form,

    R(n) = σ² (1 + p / (n − p − 1)),    n ≥ p + 2   (below: `true_risk`),

(E[x'(X'X)⁻¹x] = p/(n − p − 1) for X'X Wishart). The "LLM" is the fixed predictor g(x) = x'β + δ with
δ² = σ² p / (n₀ − p − 1), so R(g) = σ² + δ² = R(n₀) and R(n) > R(g) for n < n₀: the true ESS is n₀ (Definition
2.1) provided no n < p reaches R(n₀) with its minimum-norm fit (`coverage` checks it), and H₀ at n₀ sits on its
boundary R(n₀) = R(g), the least favourable case for the size of the test.
The one-sided CI [n̂_lower, ∞) covers n₀ when n̂_lower ≤ n₀; Theorem 4.1 says this has probability ≥ 1 − α.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from .audit import Settings, curve, summary
from .comparators import Comparator
from .losses import make_loss


class LeastSquares(RegressorMixin, BaseEstimator):
    """OLS without intercept via numpy.linalg.lstsq. Hand-written on purpose: LinearRegression's input validation
    costs ~20 ms per fit on these machines, 100x the solve, and a coverage study needs ~10^5 fits."""

    def fit(self, X, y):
        self.coef_ = np.linalg.lstsq(X, y, rcond=None)[0]
        return self

    def predict(self, X):
        return X @ self.coef_


def true_risk(n: int, p: int, sigma: float = 1.0) -> float:
    """R(n) of least squares (minimum-norm below p, as lstsq) with β = 1_p: σ²(1 + p/(n − p − 1)) for n ≥ p + 2,
    ∞ for p − 1 ≤ n ≤ p + 1, and σ² + ‖β‖²(1 − n/p) + σ² n/(p − n − 1) for n ≤ p − 2 (Hastie, Montanari, Rosset
    and Tibshirani 2022, Thm 1; checked by Monte Carlo)."""
    if n >= p + 2:
        return sigma ** 2 * (1 + p / (n - p - 1))
    if n >= p - 1:
        return np.inf
    return sigma ** 2 + p * (1 - n / p) + sigma ** 2 * n / (p - n - 1)


def draw(N: int, p: int, n0: int, rng: np.random.Generator, sigma: float = 1.0):
    """One sample: X, y and the fixed predictor's predictions g(X)."""
    beta = np.ones(p)
    X = rng.normal(size=(N, p))
    y = X @ beta + rng.normal(scale=sigma, size=N)
    delta = sigma * np.sqrt(p / (n0 - p - 1))
    return X, y, X @ beta + delta


def replicate(seed: int, N: int, grid: tuple, p: int, n0: int, alpha: float, min_blocks: int = 20) -> tuple[dict, pd.DataFrame]:
    """One Monte Carlo replication: the ESS row (as in results/ess/ess.csv) and the curve."""
    X, y, g = draw(N, p, n0, np.random.default_rng(seed))
    settings = Settings(tuple(grid), alpha, 0.95, "difference", min_blocks, seed)
    ols = Comparator("ols", False, estimator=LeastSquares())
    result = curve(X, y, g, make_loss("squared", y), ols, settings)
    return summary(result, settings), result


def coverage(reps: int, N: int, grid: tuple, p: int, n0: int, alpha: float, seed: int = 0,
             min_blocks: int = 20, progress=None) -> tuple[dict, pd.DataFrame]:
    """Coverage of the one-sided ESS CI (eq. 4.6 and 4.7 variances) over `reps` replications, and the pointwise
    two-sided 95% coverage of R(n) by the fixed-n, fixed-K and hybrid variances at each n."""
    if n0 not in grid or min(grid) < p + 2:
        raise ValueError(f"grid {grid} must contain n0 = {n0} and start at n ≥ p + 2 = {p + 2}")
    if min(true_risk(n, p) for n in range(1, n0)) <= true_risk(n0, p):
        raise ValueError(f"n0 = {n0} is not the true ESS for p = {p}: a minimum-norm fit on fewer than p rows already "
                         f"reaches R(n0) = {true_risk(n0, p):.3g} (Definition 2.1 takes the smallest n); use a larger n0")
    rows, points = [], []
    for r in range(reps):
        ess, result = replicate(seed + r, N, grid, p, n0, alpha, min_blocks)
        rows.append(ess)
        truth = np.array([true_risk(n, p) for n in result["n"]])
        z = 1.959964
        for name, var in (("fixed_n", result["var_fixed_n"]), ("fixed_K", result["var_fixed_K"]),
                          ("hybrid", result["se"] ** 2)):
            half = z * np.sqrt(np.maximum(var.to_numpy(float), 0))
            points.append(pd.DataFrame({"n": result["n"], "K": result["K"], "rule": name,
                                        "covered": np.abs(result["risk"].to_numpy() - truth) <= half}))
        if progress is not None:
            progress(r)
    table = pd.DataFrame(rows)
    result = {"reps": reps, "N": N, "grid": list(grid), "p": p, "true_ess": n0, "alpha": alpha,
              "coverage": float((table["ess_lower"] <= n0).mean()),
              "coverage_sum": float((table["ess_lower_sum"] <= n0).mean()),
              "median_lower": float(table["ess_lower"].median()),
              "median_plugin": float(table["ess_plugin"].median())}
    pointwise = pd.concat(points).groupby(["n", "K", "rule"], as_index=False)["covered"].mean()
    return result, pointwise.pivot(index=["n", "K"], columns="rule", values="covered").reset_index()
