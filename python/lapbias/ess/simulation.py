"""Validation by simulation: designs whose ESS is known exactly, and the coverage of the one-sided ESS CI.

Two designs, each with two comparators plugged in as scikit-learn estimators (untuned, so R_A(n) is a property of
the estimator alone):

- `linear` (squared loss): X ~ N(0, I_p), Y = X'β + ε, β = 1_p, ε ~ N(0, 1). A fitted linear rule b has risk
  R_D = 1 + ‖b − β‖². Comparators: `ols` (least squares without intercept, `LeastSquares`), whose risk is known in
  closed form, R(n) = 1 + p/(n − p − 1) for n ≥ p + 2 (E[x'(X'X)⁻¹x] = p/(n − p − 1) for X'X Wishart); and `ridge`
  (sklearn Ridge, alpha = 1, no intercept), R(n) = 1 + E‖b − β‖² by Monte Carlo over training samples. The "LLM"
  is the fixed predictor g(x) = x'β + δ with δ² = R(n₀) − 1, so R(g) = R(n₀).
- `probit` (0-1 loss): X ~ N(0, I_p), P(Y = 1 | X) = Φ(X'β), β = 1_p. A linear rule 1{w'x + w₀ > 0} has the exact
  risk R_D = 1/2 + P(T > 0) − 2 P(U ≤ S, T > 0), S = β'x, T = w'x + w₀, U ~ N(0, 1) independent, a bivariate
  normal probability evaluated with Owen's T (`linear_rule_risk`). Comparators: `lda` (sklearn
  LinearDiscriminantAnalysis) and `ridge_classifier` (sklearn RidgeClassifier, alpha = 1); R(n) is the mean of the
  exact R_D over Monte Carlo training samples of size n, fitted by the estimator itself (a one-class sample
  predicts its class, as the audit's safeguard does: R_D = 1/2). The "LLM" is g(x) = 1{β'x > t}, t solving
  R(g) = R(n₀).

In both, R(n) > R(g) for every n < n₀ (checked: `truth`), so the true ESS is n₀ (Definition 2.1), and H₀ at n₀ sits
on its boundary R(n₀) = R(g), the least favourable case for the size of the test. The one-sided CI [n̂_lower, ∞)
covers n₀ when n̂_lower ≤ n₀; Theorem 4.1 says this has probability ≥ 1 − α. A scenario places the true ESS at
K = N/n₀ blocks on a grid (n₀/2, n₀, 2n₀): with one grid point below n₀ the coverage is close to one minus the size
of the test at n₀, the hardest case.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import sklearn
from scipy.optimize import brentq
from scipy.special import owens_t
from scipy.stats import norm
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge, RidgeClassifier

from . import inference, variance
from .audit import Settings, curve, summary
from .comparators import Comparator
from .losses import make_loss

ALPHA = 0.05
DESIGNS = {"linear": ("squared", ("ols", "ridge")), "probit": ("zero_one", ("lda", "ridge_classifier"))}


class LeastSquares(RegressorMixin, BaseEstimator):
    """OLS without intercept via numpy.linalg.lstsq. Hand-written on purpose: LinearRegression's input validation
    costs ~20 ms per fit on these machines, 100x the solve, and a coverage study needs ~10^5 fits."""

    def fit(self, X, y):
        self.coef_ = np.linalg.lstsq(X, y, rcond=None)[0]
        return self

    def predict(self, X):
        return X @ self.coef_


def estimator(name: str):
    """The comparator `name` of a design, as a scikit-learn estimator."""
    return {"ols": LeastSquares(), "ridge": Ridge(alpha=1.0, fit_intercept=False),
            "lda": LinearDiscriminantAnalysis(), "ridge_classifier": RidgeClassifier(alpha=1.0)}[name]


def ols_risk(n: int, p: int, sigma: float = 1.0) -> float:
    """R(n) of least squares (minimum-norm below p, as lstsq) with β = 1_p: σ²(1 + p/(n − p − 1)) for n ≥ p + 2,
    ∞ for p − 1 ≤ n ≤ p + 1, and σ² + ‖β‖²(1 − n/p) + σ² n/(p − n − 1) for n ≤ p − 2 (Hastie, Montanari, Rosset
    and Tibshirani 2022, Thm 1; checked by Monte Carlo)."""
    if n >= p + 2:
        return sigma ** 2 * (1 + p / (n - p - 1))
    if n >= p - 1:
        return np.inf
    return sigma ** 2 + p * (1 - n / p) + sigma ** 2 * n / (p - n - 1)


def bivariate_below_zero(k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """P(A ≤ 0, B ≤ k) = Φ(k)/2 − T(k, −ρ/√(1 − ρ²)) for standard bivariate normals with correlation ρ (Owen's T
    function: Owen 1956, "Tables for computing bivariate normal probabilities", eq. 2.1 at h = 0)."""
    k, rho = np.asarray(k, float), np.asarray(rho, float)
    return 0.5 * norm.cdf(k) - owens_t(k, -rho / np.sqrt(1 - rho ** 2))


def linear_rule_risk(w: np.ndarray, w0: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Exact 0-1 risk of 1{w'x + w₀ > 0} under the probit design (module docstring); rows of w are rules."""
    w, w0 = np.atleast_2d(w), np.asarray(w0, float).reshape(-1)
    scale = np.sqrt(1 + beta @ beta)
    norm_w = np.linalg.norm(w, axis=1)
    safe = np.where(norm_w > 0, norm_w, 1.0)
    rho = np.clip((w @ beta) / (scale * safe), -1 + 1e-12, 1 - 1e-12)
    # P(U ≤ S, T > 0) = P(U − S ≤ 0, −T < 0): correlation of (U − S, −T) is β'w/(√(1+‖β‖²)‖w‖), −T has mean −w₀.
    joint = bivariate_below_zero(w0 / safe, rho)
    positive = norm.cdf(w0 / safe)
    return np.where(norm_w > 0, 0.5 + positive - 2 * joint, 0.5)   # w = 0: a constant rule, wrong half the time


def _fitted_risk(design: str, model, beta: np.ndarray) -> float:
    """R_D of a fitted comparator: 1 + ‖b − β‖² (linear design), the exact 0-1 risk of its rule (probit design)."""
    coef = np.ravel(model.coef_)
    if design == "probit":
        return float(linear_rule_risk(coef, np.ravel(model.intercept_)[:1], beta)[0])
    return float(1 + np.sum((coef - beta) ** 2))


@lru_cache(maxsize=None)
def true_risk(design: str, comparator: str, n: int, p: int, draws: int, seed: int = 12345) -> tuple[float, float]:
    """R_A(n) and its Monte Carlo standard error (0 when exact): the mean of R_D over `draws` training samples;
    ∞ where the estimator cannot be fitted on n rows (LDA on 2), so that such n never counts as reaching R(n₀)."""
    if comparator == "ols":
        return ols_risk(n, p), 0.0
    rng = np.random.default_rng([seed, n, p])
    beta = np.ones(p)
    risks = np.empty(draws)
    model = estimator(comparator)
    with warnings.catch_warnings(), sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        warnings.simplefilter("ignore")                  # LDA on tiny samples: "variables are collinear"
        for d in range(draws):
            X, y = draw(design, n, p, rng)
            if design == "probit" and len(np.unique(y)) < 2:
                risks[d] = 0.5                           # the audit's one-class safeguard predicts that class
                continue
            try:
                risks[d] = _fitted_risk(design, clone(model).fit(X, y), beta)
            except ValueError:                           # e.g. LDA on 2 rows: no rule of size n exists
                return np.inf, 0.0
    return float(risks.mean()), float(risks.std(ddof=1) / np.sqrt(draws))


def draw(design: str, N: int, p: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One sample (X, y) of the design."""
    X = rng.normal(size=(N, p))
    index = X.sum(axis=1)                                # β'x with β = 1_p
    if design == "linear":
        return X, index + rng.normal(size=N)
    return X, (rng.uniform(size=N) < norm.cdf(index)).astype(int)


def llm_rule(design: str, p: int, target: float) -> float:
    """δ (linear) or t (probit) with R(g) = target (module docstring)."""
    if design == "linear":
        return float(np.sqrt(target - 1))
    beta = np.ones(p)
    bayes = float(linear_rule_risk(beta, np.zeros(1), beta)[0])
    if not target > bayes:
        raise ValueError(f"target risk {target:.4f} is not above the Bayes risk {bayes:.4f}")
    return brentq(lambda t: float(linear_rule_risk(beta, np.array([-t]), beta)[0]) - target, 0.0, 20.0, xtol=1e-12)


def llm_predictions(design: str, X: np.ndarray, parameter: float) -> np.ndarray:
    index = X.sum(axis=1)
    return index + parameter if design == "linear" else (index > parameter).astype(int)


@dataclass(frozen=True)
class Scenario:
    """The true ESS n₀ placed at K = N/n₀ blocks, for one design and comparator."""

    design: str
    comparator: str
    K: int
    n0: int = 20
    p: int = 2
    draws: int = 20_000
    """Monte Carlo training samples behind R(n) at the grid points (non-OLS comparators)."""

    @property
    def N(self) -> int:
        return self.K * self.n0

    @property
    def grid(self) -> tuple[int, ...]:
        return (self.n0 // 2, self.n0, 2 * self.n0)

    @property
    def loss(self) -> str:
        return DESIGNS[self.design][0]


def truth(scenario: Scenario) -> dict:
    """R(n) at the grid, the LLM rule's parameter, and the check that n₀ is the true ESS: no n < n₀ reaches R(n₀)
    (refused when R(n) is below R(n₀) by more than 3 Monte Carlo standard errors; 1/5 of the draws off the grid).
    Just below n₀ the learning curve is too flat for Monte Carlo to order R(n) and R(n₀); there the decreasing curve
    of these learners is assumed (Assumption 3.1), as the paper assumes it."""
    s = scenario
    risks = {n: true_risk(s.design, s.comparator, n, s.p, s.draws) for n in s.grid}
    target, target_se = risks[s.n0]
    for n in range(1, s.n0):
        risk, se = risks[n] if n in risks else true_risk(s.design, s.comparator, n, s.p, max(s.draws // 5, 200))
        if risk + 3 * np.hypot(se, target_se) <= target:
            raise ValueError(f"n0 = {s.n0} is not the true ESS of {s.comparator} in the {s.design} design: R({n}) = "
                             f"{risk:.4f} is not above R(n0) = {target:.4f} (Definition 2.1 takes the smallest n)")
    return {"risk": {n: r for n, (r, _) in risks.items()}, "risk_se": {n: e for n, (_, e) in risks.items()},
            "parameter": llm_rule(s.design, s.p, target)}


def replicate(scenario: Scenario, seed: int, known: dict, min_blocks: int = variance.MIN_BLOCKS
              ) -> tuple[dict, pd.DataFrame]:
    """One Monte Carlo replication: the ESS row (as in results/ess/ess.csv) and the curve."""
    s = scenario
    X, y = draw(s.design, s.N, s.p, np.random.default_rng(seed))
    g = llm_predictions(s.design, X, known["parameter"])
    settings = Settings(s.grid, ALPHA, 0.95, "difference", min_blocks, seed)
    comparator = Comparator(s.comparator, s.design == "probit", s.loss, estimator=estimator(s.comparator))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = curve(X, y, g, make_loss(s.loss, y), comparator, settings)
    return summary(result, settings), result


def _previous_rule_lower(result: pd.DataFrame, min_blocks: int) -> int:
    """Algorithm 3.1's bound under the earlier rule: the hybrid switch on the difference (fixed-K below
    min_blocks blocks, fixed-n above, fixed-K when σ̂² ≤ 0)."""
    var = np.where((result["K"] >= min_blocks) & (result["excess_var_fixed_n"] > 0),
                   result["excess_var_fixed_n"], result["excess_var_fixed_K"])
    t = [inference.t_statistic(d, s) for d, s in zip(result["excess_risk"], np.sqrt(var))]
    return inference.sequential(list(result["n"]), t, ALPHA).lower


def coverage(scenario: Scenario, reps: int, seed: int = 0, min_blocks: int = variance.MIN_BLOCKS,
             progress=None) -> tuple[dict, pd.DataFrame]:
    """Coverage of the one-sided ESS CI over `reps` replications (with its Monte Carlo SE), the rejection rate of
    the true null at n₀ (the test's size), the coverage with the normal quantile instead of t_{K−1}, under the
    earlier rule (normal quantile, fixed-K variance of the difference below min_blocks) and under (4.7), and the
    pointwise two-sided 95% coverage of R(n) at each n by each variance: fixed_n (4.5), fixed_K (B.2), finite_K (V̂),
    band (the rule the audit uses), paper_hybrid (fixed-n when K ≥ 20, else fixed-K) and larger (max(V̂, B.2)); NaN
    where the variance is undefined (V̂ at K = 2)."""
    s = scenario
    known = truth(s)
    z = norm.ppf(0.975)
    rows, points = [], []
    for r in range(reps):
        ess, result = replicate(s, seed + r, known, min_blocks)
        at_n0 = result[result["n"] == s.n0].iloc[0]
        ess["size_at_n0"] = bool(at_n0["t_stat"] > at_n0["critical"])
        ess["lower_previous_rule"] = _previous_rule_lower(result, min_blocks)
        ess["lower_normal"] = inference.sequential(list(result["n"]), list(result["t_stat"]), ALPHA).lower
        ess["fallback_at_n0"] = at_n0["excess_variance_rule"] == "fixed_K_fallback"
        ess["excess_at_n0"] = at_n0["excess_risk"]
        rows.append(ess)
        true = result["n"].map(known["risk"]).to_numpy()
        estimators = {"fixed_n": result["var_fixed_n"], "fixed_K": result["var_fixed_K"],
                      "finite_K": result["var_finite_K"], "band": result["se"] ** 2,
                      "paper_hybrid": result["var_fixed_n"].where(result["K"] >= 20, result["var_fixed_K"]),
                      "larger": np.maximum(result["var_finite_K"].fillna(0), result["var_fixed_K"])}
        for name, var in estimators.items():
            var = var.to_numpy(float)
            covered = np.abs(result["risk"].to_numpy() - true) <= z * np.sqrt(np.maximum(var, 0))
            # An undefined variance (the finite-K one at K = 2) gives no interval: NaN, not "not covered".
            points.append(pd.DataFrame({"n": result["n"], "K": result["K"], "rule": name,
                                        "covered": np.where(np.isnan(var), np.nan, covered)}))
        if progress is not None:
            progress(r)
    table = pd.DataFrame(rows)
    covered = table["ess_lower"] <= s.n0
    result = {"design": s.design, "loss": s.loss, "comparator": s.comparator, "K": s.K, "N": s.N, "n0": s.n0,
              "grid": list(s.grid), "reps": reps, "alpha": ALPHA,
              "coverage": float(covered.mean()),
              "coverage_se": float(np.sqrt(covered.mean() * (1 - covered.mean()) / reps)),
              "size_at_n0": float(table["size_at_n0"].mean()),
              "coverage_previous_rule": float((table["lower_previous_rule"] <= s.n0).mean()),
              "coverage_normal": float((table["lower_normal"] <= s.n0).mean()),
              "coverage_sum": float((table["ess_lower_sum"] <= s.n0).mean()),
              "median_lower": float(table["ess_lower"].median()),
              "fallback_share": float(table["fallback_at_n0"].mean()),
              # the Monte Carlo error of R(n₀) (the truth) relative to the sampling SD of Δ̂(n₀)
              "truth_error_ratio": known["risk_se"][s.n0] / float(table["excess_at_n0"].std(ddof=1))}
    pointwise = pd.concat(points).groupby(["n", "K", "rule"], as_index=False)["covered"].mean()
    return result, pointwise.pivot(index=["n", "K"], columns="rule", values="covered").reset_index()
