"""The ESS audit of one outcome against one comparator: error curve, tests and ESS (ESS paper §3, §4.3, App. C).

For each n of the grid: tune the comparator on a random tuning subset of n rows, run block-out CV (eq. 3.2),
score the fixed LLM predictions on the same blocks (fn. 11: R̂_LLM over the K·n rows used at that n, which
is eq. 3.1 whenever n divides N), and form the excess risk Δ̂(n) = R̂(n) − R̂_LLM with its variance from the
loss difference (eq. 4.6) and from the sum of variances (eq. 4.7), by the finite-K variance (variance.py); the
pointwise bands of R(n) use variance.band.
Then the plug-in ESS (§3.3, n̂ = min{n : Δ̂(n) ≤ 0}), Algorithm 3.1 and the excess-risk CI (Remark 3.1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import sklearn

from . import inference, variance
from .blockcv import BlockStats, block_out_cv, fixed_predictor_cv, permutation
from .comparators import Comparator, fit_predict
from .losses import Loss

CURVE_COLUMNS = [
    "outcome", "comparator", "loss", "metric", "n", "K", "N_used", "risk", "se", "ci_low", "ci_high",
    "metric_value", "metric_ci_low", "metric_ci_high", "variance_rule", "sigma2_between_block", "sigma2_test",
    "sigma2_cross", "sigma2_fixed_n", "var_fixed_n", "var_fixed_K", "var_finite_K", "llm_risk", "excess_risk",
    "excess_se_difference", "excess_se_sum", "excess_variance_rule", "excess_var_finite_K", "excess_var_fixed_n",
    "excess_var_fixed_K", "critical", "t_stat", "excess_ci_low", "tested",
    "rejected", "t_stat_sum", "rejected_sum", "hyperparameters",
]


@dataclass(frozen=True)
class Settings:
    grid: tuple
    alpha: float = 0.05
    band_level: float = 0.95
    test_variance: str = "difference"
    min_blocks: int = variance.MIN_BLOCKS
    seed: int = 1


def llm_risk(loss: Loss, y: np.ndarray, llm_pred: np.ndarray) -> tuple[float, float]:
    """Eq. (3.1) on the full sample, with its standard error s(ℓ_LLM)/√N (for the LLM's band)."""
    stats = loss.stats(fixed_predictor_cv(np.arange(len(y)), 1, loss.components(y, llm_pred)))
    return stats.risk, float(np.std(stats.obs_loss, ddof=1) / np.sqrt(len(y)))


def metric_interval(loss: Loss, risk: float, se: float, level: float) -> tuple[float, float, float]:
    """The reported metric with its two-sided interval: RMSE by the delta method (App. C), else 1 − risk."""
    if loss.name == "squared":
        return inference.rmse_interval(risk, se, level)
    low, high = inference.interval(risk, se, level)
    return 1 - risk, 1 - high, 1 - low


def curve(X: np.ndarray, y: np.ndarray, llm_pred: np.ndarray, loss: Loss, comparator: Comparator,
          settings: Settings, outcome: str = "y", tick: Callable[[int], None] | None = None) -> pd.DataFrame:
    """The error curve of `comparator` with intervals and the per-n tests (module docstring)."""
    order = permutation(len(y), settings.seed)
    llm_components = np.atleast_2d(loss.components(y, llm_pred))
    # Inputs are checked once (data.py); scikit-learn's per-call validation would dominate the K fits per n.
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        rows = [_point(X, y, loss, comparator, settings, outcome, order, llm_components, n, tick)
                for n in settings.grid]
    frame = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    return _tests(frame, settings)


def _point(X, y, loss, comparator, settings, outcome, order, llm_components, n, tick) -> dict:
    """One n of the curve: tune on n random rows, block-out CV with the LLM's losses as further components (so
    the difference ℓ_ML − ℓ_LLM has its exact block summaries), the loss, the LLM's and the difference's stats."""
    tuning = np.random.default_rng([settings.seed, n]).choice(len(y), size=n, replace=False)
    estimator = comparator.tune(X[tuning], y[tuning])
    parts = block_out_cv(
        order, n, lambda train, rows: fit_predict(estimator, X[train], y[train], X[rows], comparator.discrete),
        lambda rows, pred: np.vstack([loss.components(y[rows], pred), llm_components[:, rows]]), progress=tick)
    C = len(llm_components)
    ml_weights, ml_constant = loss.linear(parts.means()[:C])
    llm_weights, llm_constant = loss.linear(parts.means()[C:])
    none = np.zeros(C)
    ml = parts.linear(np.concatenate([ml_weights, none]), ml_constant)
    llm = parts.linear(np.concatenate([none, llm_weights]), llm_constant)
    difference = parts.linear(np.concatenate([ml_weights, -llm_weights]), ml_constant - llm_constant)
    return _row(ml, llm, difference, loss, comparator, settings, outcome)


def _row(ml: BlockStats, llm: BlockStats, difference: BlockStats, loss: Loss, comparator: Comparator,
         settings: Settings, outcome: str) -> dict:
    var_ml = variance.band(ml, settings.min_blocks)
    var_diff = variance.for_test(difference)
    var_sum = variance.sum_of_variances(ml, llm.obs_loss)
    low, high = inference.interval(ml.risk, var_ml.se, settings.band_level)
    metric_name = loss.metric(ml.risk)[0]
    value, metric_low, metric_high = metric_interval(loss, ml.risk, var_ml.se, settings.band_level)
    return {
        "outcome": outcome, "comparator": comparator.name, "loss": loss.name, "metric": metric_name, "n": ml.n,
        "K": ml.K, "N_used": ml.N, "risk": ml.risk, "se": var_ml.se, "ci_low": low, "ci_high": high,
        "metric_value": value, "metric_ci_low": metric_low, "metric_ci_high": metric_high,
        "variance_rule": var_ml.rule, "sigma2_between_block": var_ml.fixed_n.between_block,
        "sigma2_test": var_ml.fixed_n.test, "sigma2_cross": var_ml.fixed_n.cross,
        "sigma2_fixed_n": var_ml.fixed_n.sigma2, "var_fixed_n": var_ml.fixed_n.variance, "var_fixed_K": var_ml.fixed_k,
        "var_finite_K": var_ml.finite_k, "llm_risk": llm.risk, "excess_risk": difference.risk,
        "excess_se_difference": var_diff.se, "excess_se_sum": float(np.sqrt(var_sum)),
        "excess_variance_rule": var_diff.rule, "excess_var_finite_K": var_diff.finite_k,
        "excess_var_fixed_n": var_diff.fixed_n.variance, "excess_var_fixed_K": var_diff.fixed_k,
        "hyperparameters": json.dumps(comparator.chosen, sort_keys=True, default=str),
    }


def _tests(frame: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """Eq. (3.3), Remark 3.1 and Algorithm 3.1 with the chosen variance and the critical value of each n
    (inference.critical: Student's t with K − 1 degrees of freedom); also the (4.7) variant for comparison."""
    se_column = "excess_se_difference" if settings.test_variance == "difference" else "excess_se_sum"
    blocks = [int(k) for k in frame["K"]]
    frame["critical"] = [inference.critical(settings.alpha, k) for k in blocks]
    frame["t_stat"] = [inference.t_statistic(d, s) for d, s in zip(frame["excess_risk"], frame[se_column])]
    frame["excess_ci_low"] = [inference.excess_risk_lower(d, s, settings.alpha, k)
                              for d, s, k in zip(frame["excess_risk"], frame[se_column], blocks)]
    result = inference.sequential(list(frame["n"]), list(frame["t_stat"]), settings.alpha, blocks)
    frame["tested"], frame["rejected"] = result.tested, result.rejected
    frame["t_stat_sum"] = [inference.t_statistic(d, s) for d, s in zip(frame["excess_risk"], frame["excess_se_sum"])]
    frame["rejected_sum"] = inference.sequential(list(frame["n"]), list(frame["t_stat_sum"]), settings.alpha,
                                                 blocks).rejected
    return frame


def summary(frame: pd.DataFrame, settings: Settings) -> dict:
    """One row of the ESS table (paper Table 1) from a curve. The plug-in is stated as the grid allows: "≤ n₁" when
    the comparator already beats the LLM at the smallest n > 1 (the ESS lies somewhere in 1..n₁), "> n_J" when no n of
    the grid reaches the LLM, else the grid n (§3.3)."""
    grid, blocks = list(frame["n"]), [int(k) for k in frame["K"]]
    chosen = inference.sequential(grid, list(frame["t_stat"]), settings.alpha, blocks)
    conservative = inference.sequential(grid, list(frame["t_stat_sum"]), settings.alpha, blocks)
    difference = inference.sequential(
        grid, [inference.t_statistic(d, s) for d, s in zip(frame["excess_risk"], frame["excess_se_difference"])],
        settings.alpha, blocks)
    plug = inference.plug_in(grid, list(frame["excess_risk"]), 0.0)
    return {
        "comparator": frame["comparator"].iloc[0],
        "ess_plugin": inference.stated_plug_in(grid, plug), "ess_plugin_n": np.nan if plug is None else plug,
        "plugin_below_grid": inference.below_grid(grid, plug), "plugin_beyond_grid": plug is None,
        "ess_lower": chosen.lower, "ci": f"[{chosen.lower}, ∞)", "exceeds_grid": chosen.exceeds_grid,
        "ess_lower_difference": difference.lower, "ess_lower_sum": conservative.lower,
        "ess_lower_excess_ci": inference.lower_from_excess_ci(grid, list(frame["excess_ci_low"])),   # eq. (3.5)
        "test_variance": settings.test_variance, "alpha": settings.alpha, "min_blocks": settings.min_blocks,
        "grid_min": grid[0], "grid_max": grid[-1],
    }


def risk_of(loss: Loss, y: np.ndarray, prediction: np.ndarray) -> float:
    """The risk of a fixed prediction rule on the whole sample (eq. 3.1)."""
    parts = np.atleast_2d(loss.components(y, prediction))
    weights, constant = loss.linear(parts.mean(axis=1))
    return float(constant + weights @ parts.mean(axis=1))


def reference_risks(loss: Loss, y: np.ndarray, discrete: bool) -> tuple[float, float]:
    """Two yardsticks for the LLM's error on the analysis sample: the constant rule (the most common class, or the
    mean of a continuous outcome) and the expected risk of predicting the outcome of one random observation, which
    is what the built-in comparators do when trained on n = 1 row (Lasso and forests predict that row's outcome, a
    one-class block its class): Σ_v π_v R(v) for a discrete outcome, 2·Var(Y) for squared loss."""
    if discrete:
        values, counts = np.unique(y, return_counts=True)
        risks = np.array([risk_of(loss, y, np.full(len(y), v, dtype=np.asarray(y).dtype)) for v in values])
        return float(risks[np.argmax(counts)]), float(counts @ risks / counts.sum())
    y = np.asarray(y, dtype=float)
    return risk_of(loss, y, np.full(len(y), y.mean())), float(2 * np.var(y))
