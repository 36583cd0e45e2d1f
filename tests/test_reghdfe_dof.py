"""reghdfe's degrees-of-freedom rules (reghdfe.mata estimate_dof, dof(all)) on tiny panels counted by hand, and
the resulting standard errors against dummy-variable OLS in statsmodels / numpy with the df applied by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from lapbias.estimate import reghdfe
from lapbias.estimate.reghdfe import absorbed_dof


def two_blocks(seed: int = 0, reps: int = 5) -> pd.DataFrame:
    """Workers {1,2} only meet firms {a,b}; workers {3,4} only firms {c,d}: two mobility groups."""
    rng = np.random.default_rng(seed)
    pairs = [(1, "a"), (1, "b"), (2, "a"), (2, "b"), (3, "c"), (3, "d"), (4, "c"), (4, "d")] * reps
    frame = pd.DataFrame(pairs, columns=["w", "f"])
    frame["x"] = rng.normal(size=len(frame))
    frame["y"] = 0.7 * frame["x"] + frame["w"] * 0.3 + rng.normal(size=len(frame))
    return frame


def dummy_ols(frame: pd.DataFrame, fes: list[str]) -> sm.regression.linear_model.RegressionResultsWrapper:
    dummies = [pd.get_dummies(frame[fe].astype(str), prefix=fe, dtype=float) for fe in fes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rank-deficient on purpose: statsmodels' pinv solves it, df = N - rank
        return sm.OLS(frame["y"], pd.concat([frame[["x"]], *dummies], axis=1)).fit()


def test_mobility_groups_counted_exactly():
    """Levels 4 + 4, two connected components: df_a = 4 + (4 - 2) = 6, not 4 + 3 as one assumed group gives.
    The rank of the 8 dummies is 6 too, so reghdfe's df_r and SE equal the dummy regression's (statsmodels)."""
    frame = two_blocks()
    r = reghdfe(frame, "y", ["x"], absorb=["w", "f"])
    ols = dummy_ols(frame, ["w", "f"])
    assert r.df_a == 6 and r.df_r == int(ols.df_resid) == 40 - 1 - 6
    assert r.coef["x"] == pytest.approx(ols.params["x"], rel=1e-8)
    assert r.se["x"] == pytest.approx(ols.bse["x"], rel=1e-7)


def test_third_fe_takes_the_largest_pairwise_mobility_count():
    """absorb(w t b): b = block of the worker. G(w,b) = 2 components, G(t,b) = 1, so M_b = max = 2 and
    df_a = 4 + (2 - 1) + (2 - 2) = 5 = rank of [w, t, b dummies] (b is a function of w)."""
    frame = pd.DataFrame({"w": [1, 1, 2, 2, 3, 3, 4, 4] * 3, "t": [1, 2] * 12})
    frame["b"] = np.where(frame["w"] <= 2, "A", "B")
    rng = np.random.default_rng(3)
    frame["x"], frame["y"] = rng.normal(size=24), rng.normal(size=24)
    assert absorbed_dof(frame, ["w", "t", "b"], []) == (5, 0)
    r = reghdfe(frame, "y", ["x"], absorb=["w", "t", "b"])
    ols = dummy_ols(frame, ["w", "t", "b"])
    assert r.df_r == int(ols.df_resid) == 24 - 1 - 5
    assert r.se["x"] == pytest.approx(ols.bse["x"], rel=1e-7)


def test_fe_nested_in_cluster_counts_in_df_a_nested_and_first_other_fe_loses_one():
    """absorb(firm t) cluster(industry), firms nested in industries: df_a_nested = 6 firms; t (3 levels) loses one
    level because the nested FE already holds the constant, df_a = 2 (reghdfe.mata lines 4243-4257). The SE is the
    dummy-variable cluster sandwich written in numpy with reghdfe's q = (N-1)/(N-1-K-df_a) * G/(G-1)."""
    rng = np.random.default_rng(11)
    firm = np.repeat(np.arange(6), 6)
    frame = pd.DataFrame({"firm": firm, "industry": firm // 2, "t": np.tile([1, 2, 3], 12), "x": rng.normal(size=36)})
    frame["y"] = 0.5 * frame["x"] + 0.3 * frame["firm"] + rng.normal(size=36)
    assert absorbed_dof(frame, ["firm", "t"], ["industry"]) == (2, 6)
    r = reghdfe(frame, "y", ["x"], absorb=["firm", "t"], vce="cluster", cluster=["industry"])
    assert (r.df_a, r.df_a_nested, r.N_clust, r.df_r) == (2, 6, 3, 2)  # min(36 - 2 - 1, 3 - 1)
    X = pd.concat([frame[["x"]], pd.get_dummies(frame["firm"], dtype=float),
                   pd.get_dummies(frame["t"], drop_first=True, dtype=float)], axis=1).to_numpy()
    beta, *_ = np.linalg.lstsq(X, frame["y"].to_numpy(), rcond=None)
    u = frame["y"].to_numpy() - X @ beta
    bread = np.linalg.inv(X.T @ X)
    sums = np.stack([np.bincount(frame["industry"], weights=X[:, j] * u) for j in range(X.shape[1])], axis=1)
    q = (36 - 1) / (36 - 1 - 1 - 2) * 3 / (3 - 1)
    assert r.coef["x"] == pytest.approx(beta[0], rel=1e-8)
    assert r.se["x"] == pytest.approx(np.sqrt((bread @ sums.T @ sums @ bread)[0, 0] * q), rel=1e-7)


def test_singletons_dropped_iteratively():
    """Row 7 is alone in firm 3; once it is gone, row 6 is alone in period 4: two rounds, two singletons."""
    frame = pd.DataFrame({"firm": [1, 1, 1, 2, 2, 2, 2, 3], "t": [1, 2, 3, 1, 2, 3, 4, 4]})
    frame["x"] = [0.1, 0.5, -0.3, 0.8, 1.0, 2.0, 0.4, 0.9]
    frame["y"] = [1.0, 0.2, 0.4, 1.5, 0.0, 3.0, 1.1, 0.3]
    r = reghdfe(frame, "y", ["x"], absorb=["firm", "t"], vce="robust")
    assert (r.N, r.num_singletons, r.N_full, r.df_a, r.df_r) == (6, 2, 8, 2 + 3 - 1, 6 - 4 - 1)


def test_missing_values_dropped_listwise_including_the_cluster_variable():
    frame = two_blocks(reps=6)
    frame["cl"] = frame["w"].astype(float)
    frame.loc[0, "cl"] = np.nan
    frame.loc[1, "x"] = np.nan
    frame.loc[2, "f"] = None
    r = reghdfe(frame, "y", ["x"], absorb=["f"], vce="cluster", cluster=["cl"])
    assert r.N_dropped_missing == 3 and r.N + r.num_singletons == 48 - 3


def test_few_clusters_warning():
    frame = two_blocks(reps=6)
    r = reghdfe(frame, "y", ["x"], absorb=["f"], vce="cluster", cluster=["w"])
    assert r.N_clust == 4 and any("only 4 clusters" in w for w in r.warnings)


def test_robust_with_disconnected_fes_equals_dummy_hc1():
    """vce(robust): q = N / (N - df_a - df_m) (reghdfe.mata line 3941) is statsmodels' HC1 N / (N - rank) on the
    dummy regression, because df_a = 6 is the dummies' rank (two mobility groups)."""
    frame = two_blocks(seed=5, reps=6)
    dummies = [pd.get_dummies(frame[fe].astype(str), prefix=fe, dtype=float) for fe in ("w", "f")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hc1 = sm.OLS(frame["y"], pd.concat([frame[["x"]], *dummies], axis=1)).fit(cov_type="HC1")
    r = reghdfe(frame, "y", ["x"], absorb=["w", "f"], vce="robust")
    assert r.se["x"] == pytest.approx(hc1.bse["x"], rel=1e-7)
