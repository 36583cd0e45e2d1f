"""Loss functions of the ESS audit (ESS paper §2.1, §5.1 and App. D.2), written as observation-level components.

Every estimator of the audit (block-out CV eq. 3.2, the variance components eq. 4.5 and B.2, the difference
eq. 4.6) needs the loss as a mean of observation-level terms. A loss therefore returns one or two *components*
per observation, and `Loss.linear` writes the loss as a linear combination of its components, which turns the
block-out CV summaries of the components into those of a mean-type loss:

- `squared`:  ℓ(ŷ, y) = (ŷ − y)² (continuous Y; the report also gives RMSE = √R, §5.1).
- `zero_one`: ℓ(ŷ, y) = 1{ŷ ≠ y} (discrete Y; the risk is the misclassification rate, §5.1).
- `balanced_error` = 1 − balanced accuracy (App. D.2: BA = mean over classes c of recall_c). Reconstruction:
  with class shares π_c, 1 − BA = Σ_c P(ŷ ≠ y | y = c) / C = E[ 1{ŷ ≠ Y} / (C π_Y) ], so it is the expected
  value of the weighted 0-1 loss ℓ(ŷ, y) = 1{ŷ ≠ y} / (C π_y). π_c is estimated once on the full analysis
  sample and held fixed, so every estimator below applies unchanged.
- `f1_error` = 1 − F1 (App. D.2: F1 = 2TP / (2TP + FP + FN), binary Y, positive class given). 1 − F1 is the
  ratio a/b of the means of a_i = 1{ŷ_i ≠ y_i} (an FP or FN) and b_i = 2·1{ŷ_i = y_i = positive} + 1{ŷ_i ≠ y_i},
  not a mean of losses. Reconstruction (delta method): the pooled ratio r = ā / b̄ over all held-out pairs
  (the risk target is 1 − 2E[TP]/(2E[TP]+E[FP]+E[FN]), a ratio of expected counts) is linearised as
  ψ_i = r + (a_i − r b_i) / b̄, whose block-out CV mean equals r exactly and whose variance is the delta-method
  variance of r. The variance estimators are applied to ψ; r and b̄ are those of the predictor being scored
  (the comparator's at each n, the LLM's on the same rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputDataError
from .blockcv import BlockStats, Components

LOSSES = ("squared", "zero_one", "balanced_error", "f1_error")
DISCRETE_LOSSES = ("zero_one", "balanced_error", "f1_error")


@dataclass(frozen=True)
class Loss:
    """A loss as observation-level components and the linear map from them to the loss (`linear`)."""

    name: str
    classes: tuple = ()
    weights: tuple = ()
    positive: object = None

    def components(self, y: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
        """(C, len(y)) observation-level components of the loss of predictions y_hat."""
        if self.name == "squared":
            return ((np.asarray(y_hat, float) - np.asarray(y, float)) ** 2)[None, :]
        wrong = (np.asarray(y_hat) != np.asarray(y)).astype(float)
        if self.name == "zero_one":
            return wrong[None, :]
        if self.name == "balanced_error":
            weight = dict(zip(self.classes, self.weights))
            return (wrong * np.array([weight[v] for v in y]))[None, :]
        true_positive = ((np.asarray(y_hat) == self.positive) & (np.asarray(y) == self.positive)).astype(float)
        return np.vstack([wrong, 2 * true_positive + wrong])

    def linear(self, means: np.ndarray) -> tuple[np.ndarray, float]:
        """(weights, constant) with loss = constant + Σ_c weights_c · component_c, given the block-out CV means of
        the components (module docstring); NaN weights when 1 − F1 is 0/0 (no positive predicted or present)."""
        if self.name != "f1_error":
            return np.ones(1), 0.0
        a_bar, b_bar = (float(v) for v in means)
        if b_bar == 0:
            return np.full(2, np.nan), np.nan
        r = a_bar / b_bar
        return np.array([1 / b_bar, -r / b_bar]), r

    def stats(self, parts: Components) -> BlockStats:
        """The loss's block-out CV summaries from those of its components."""
        weights, constant = self.linear(parts.means())
        return parts.linear(weights, constant)

    def metric(self, risk: float) -> tuple[str, float]:
        """The reported metric: RMSE for squared error, accuracy / balanced accuracy / F1 for the others."""
        return {"squared": ("rmse", float(np.sqrt(risk)) if risk >= 0 else np.nan),
                "zero_one": ("accuracy", 1 - risk), "balanced_error": ("balanced_accuracy", 1 - risk),
                "f1_error": ("f1", 1 - risk)}[self.name]


def make_loss(name: str, y: np.ndarray, positive: object = None, where: str = "loss") -> Loss:
    """The loss `name` with its constants (class shares for balanced_error, positive class for f1_error)."""
    if name not in LOSSES:
        raise InputDataError(f"{where} = {name!r}; choose one of {list(LOSSES)}, e.g. loss = \"zero_one\"")
    if name == "balanced_error":
        classes, counts = np.unique(y, return_counts=True)
        shares = counts / counts.sum()
        return Loss(name, tuple(classes.tolist()), tuple((1 / (len(classes) * shares)).tolist()))
    if name == "f1_error":
        classes = np.unique(y).tolist()
        if len(classes) != 2:
            raise InputDataError(f"{where} = \"f1_error\" needs a binary outcome; it has {len(classes)} classes "
                                 f"{classes[:5]}; use zero_one or balanced_error")
        if positive is None:
            positive = max(classes)
        if positive not in classes:
            raise InputDataError(f"{where}: positive class {positive!r} is not a value of the outcome {classes}")
        return Loss(name, tuple(classes), positive=positive)
    return Loss(name)
