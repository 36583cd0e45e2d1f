"""Comparator algorithms A and their per-n tuning (ESS paper §5.3, App. C).

For each training size n the hyperparameters are tuned ONCE on a tuning subset of n rows drawn at random from
the analysis sample (App. C; the subset size was lost in the PDF text — n is adopted so that the selected
hyperparameters are those a researcher holding n observations could choose, as the definition of R(n) asks),
then held fixed in the block-out CV loop for that n (App. C fn. 21).

- `lasso` (continuous Y): LassoCV, 5-fold CV (folds ≤ n), then Lasso(alpha) on each block.
- `rf` (continuous Y): RandomForestRegressor, 300 trees, 3-fold CV over max_depth ∈ {3, 6, None} ×
  min_samples_leaf ∈ {1, 5, 20} (the paper's grid values were lost; this grid is ADOPTED), scored by RMSE.
- `l1logit` (discrete Y): L1-penalised logistic regression (saga), C ∈ 10^{−2, −1.5, …, 2} (ADOPTED grid) by
  stratified CV; `rf` (discrete Y): RandomForestClassifier, 300 trees, the same depth/leaf grid by stratified CV.
  Stratified folds are adaptive: min(3, smallest class count) (App. C "small-n safeguards" (i)); fewer than 2
  folds possible → no tuning, the estimator's defaults. The CV score matches the loss (accuracy, balanced
  accuracy or F1).
- Small-n safeguard (ii): a training block with one class only predicts that class (the majority-class rule).
- Any other scikit-learn estimator (an object with fit/predict) is pluggable:
  `Comparator(name, discrete, estimator=...)` clones it per block, untuned.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LassoCV, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from ..errors import InputDataError

RF_GRID = {"max_depth": [3, 6, None], "min_samples_leaf": [1, 5, 20]}
LOGIT_C = list(np.logspace(-2, 2, 9))
LASSO_FOLDS, RF_FOLDS, STRATIFIED_MAX_FOLDS = 5, 3, 3
SCORING = {"squared": "neg_root_mean_squared_error", "zero_one": "accuracy",
           "balanced_error": "balanced_accuracy", "f1_error": "f1"}
BUILTIN = {"continuous": ("lasso", "rf"), "discrete": ("l1logit", "rf")}


@dataclass
class Comparator:
    """A named algorithm: `tune(X, y)` returns an unfitted estimator with the hyperparameters for this n."""

    name: str
    discrete: bool
    loss: str = "squared"
    seed: int = 0
    n_jobs: int = 1
    trees: int = 300
    estimator: Any = None
    """A user estimator (pluggable comparator): cloned per block, not tuned."""
    chosen: dict = field(default_factory=dict)

    def _folds(self, y: np.ndarray, cap: int):
        if self.discrete:
            folds = min(cap, int(np.unique(y, return_counts=True)[1].min()))
            return StratifiedKFold(folds, shuffle=True, random_state=self.seed) if folds >= 2 else None
        folds = min(cap, len(y))
        return KFold(folds, shuffle=True, random_state=self.seed) if folds >= 2 else None

    def _forest(self, **params):
        cls = RandomForestClassifier if self.discrete else RandomForestRegressor
        return cls(n_estimators=self.trees, random_state=self.seed, n_jobs=self.n_jobs, **params)

    def tune(self, X: np.ndarray, y: np.ndarray):
        """The estimator for one n, tuned on the tuning subset (X, y) (module docstring)."""
        if self.estimator is not None:
            return clone(self.estimator)
        one_class = self.discrete and len(np.unique(y)) < 2
        if self.name == "lasso":
            cv = self._folds(y, LASSO_FOLDS)
            if cv is None or np.ptp(y) == 0:
                alpha = 1.0
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    alpha = float(LassoCV(cv=cv, random_state=self.seed, max_iter=5000).fit(X, y).alpha_)
            self.chosen = {"alpha": alpha}
            return Lasso(alpha=alpha, max_iter=5000)
        if self.name == "l1logit":
            cv = None if one_class else self._folds(y, STRATIFIED_MAX_FOLDS)
            base = LogisticRegression(l1_ratio=1.0, solver="saga", max_iter=5000, random_state=self.seed)
            best = self._search(base, {"C": LOGIT_C}, X, y, cv, {"C": 1.0})
            self.chosen = best
            return clone(base).set_params(**best)
        if self.name == "rf":
            cv = None if one_class else self._folds(y, STRATIFIED_MAX_FOLDS if self.discrete else RF_FOLDS)
            best = self._search(self._forest(), RF_GRID, X, y, cv, {})
            self.chosen = best
            return self._forest(**best)
        raise InputDataError(f"comparator {self.name!r} is not built in; choose lasso, rf (continuous) or "
                             "l1logit, rf (discrete), or give {name, class, params} for a scikit-learn estimator")

    def _search(self, base, grid, X, y, cv, default) -> dict:
        if cv is None:
            return default
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)     # e.g. F1 ill-defined on a fold without positives
            search = GridSearchCV(base, grid, cv=cv, scoring=SCORING[self.loss], n_jobs=1, error_score=np.nan,
                                  refit=False)
            search.fit(X, y)
        return dict(search.best_params_)


def fit_predict(estimator, X_train: np.ndarray, y_train: np.ndarray, X_eval: np.ndarray, discrete: bool) -> np.ndarray:
    """Fit on one training block and predict; a one-class block predicts its class (App. C safeguard (ii))."""
    if discrete and len(np.unique(y_train)) == 1:
        return np.full(len(X_eval), y_train[0], dtype=np.asarray(y_train).dtype)
    model = clone(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_train, y_train)
    return model.predict(X_eval)


def from_spec(spec: Any, discrete: bool, loss: str, seed: int, n_jobs: int, trees: int, where: str) -> Comparator:
    """A comparator from the config: a built-in name, or {name, class = "module.Class", params = {...}}."""
    if isinstance(spec, str):
        allowed = BUILTIN["discrete" if discrete else "continuous"]
        if spec not in allowed:
            raise InputDataError(f"{where} = {spec!r} is not a comparator for a {'discrete' if discrete else 'continuous'} "
                                 f"outcome; choose one of {list(allowed)} or a scikit-learn class, e.g. "
                                 '{name = "knn", class = "sklearn.neighbors.KNeighborsRegressor", params = {n_neighbors = 5}}')
        return Comparator(spec, discrete, loss, seed, n_jobs, trees)
    if not isinstance(spec, dict) or "class" not in spec or "name" not in spec:
        raise InputDataError(f"{where} must be a name or a table with name and class, e.g. "
                             '{name = "knn", class = "sklearn.neighbors.KNeighborsRegressor"}')
    module_name, _, class_name = str(spec["class"]).rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
        estimator = cls(**dict(spec.get("params", {})))
    except (ImportError, AttributeError, ValueError, TypeError) as err:
        raise InputDataError(f"{where}.class = {spec['class']!r} cannot be built ({err}); give an importable "
                             "scikit-learn estimator, e.g. \"sklearn.linear_model.Ridge\"") from None
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise InputDataError(f"{where}.class = {spec['class']!r} has no fit/predict; it must be a scikit-learn estimator")
    return Comparator(str(spec["name"]), discrete, loss, seed, n_jobs, trees, estimator=estimator)
