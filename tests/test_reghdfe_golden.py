"""The engine against reghdfe's published logs (pyfixest docs, data pyfixest.get_data(), seed 1234, N = 997) and
against hand computations for the degrees-of-freedom rules. Printed precision = the digits reghdfe shows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyfixest as pf
import pytest
import statsmodels.api as sm

from lapbias.estimate import reghdfe
from lapbias.estimate.reghdfe import absorbed_dof, drop_singletons, newey_default_lag


@pytest.fixture(scope="module")
def data():
    return pf.get_data()


def same(value: float, printed: str) -> bool:
    """value rounds to the printed number at the printed number of decimals."""
    decimals = len(printed.split(".")[1])
    return round(value, decimals) == float(printed)


def test_absorb_f1_cluster_f1(data):
    r = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1"], vce="cluster", cluster=["f1"])
    assert same(r.coef["X1"], "-.9495256") and same(r.se["X1"], ".0665572")
    assert same(r.coef["X2"], "-.1742253") and same(r.se["X2"], ".018409")
    assert same(r.coef["_cons"], ".842222") and same(r.se["_cons"], ".0694639")
    assert r.df_a == 0 and r.df_a_nested == 30  # f1 is nested in the cluster variable f1
    assert r.N == 997 and r.N_clust == 30 and r.df_r == 29
    assert same(r.r2, ".4890") and same(r.r2_within, ".2388")


def test_absorb_f1_f2_cluster_f1(data):
    r = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1", "f2"], vce="cluster", cluster=["f1"])
    assert same(r.coef["X1"], "-.9240462") and same(r.se["X1"], ".0618743")
    assert same(r.coef["X2"], "-.1741073") and same(r.se["X2"], ".0148338")
    assert same(r.coef["_cons"], ".8156588") and same(r.se["_cons"], ".064596")
    assert same(r.r2, ".6590") and same(r.r2_a, ".6372") and same(r.r2_within, ".3026") and same(r.rmse, "1.3893")


def test_absorb_f1_unadjusted(data):
    r = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1"])
    assert same(r.se["X1"], ".0663728") and same(r.se["X2"], ".0175957") and r.df_r == 965
    assert r.N_full == 1000 and r.N_dropped_missing == 3  # Y, X1 and f1 each have one missing value


def test_matches_dummy_variable_ols_by_hand(data):
    """With one FE and iid errors, FE estimates equal OLS with entity dummies (statsmodels), whose residual
    df N - K - levels is exactly reghdfe's df_r."""
    d = data.dropna(subset=["Y", "X1", "X2", "f1"])
    dummies = pd.get_dummies(d["f1"].astype(int), prefix="f", dtype=float)
    ols = sm.OLS(d["Y"], pd.concat([d[["X1", "X2"]], dummies], axis=1)).fit()
    r = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1"])
    assert r.df_r == int(ols.df_resid)
    np.testing.assert_allclose(r.coef[["X1", "X2"]], ols.params[["X1", "X2"]], rtol=1e-8)
    np.testing.assert_allclose(r.se[["X1", "X2"]], ols.bse[["X1", "X2"]], rtol=1e-6)


def test_mobility_groups_counted_exactly():
    """Two disconnected blocks: workers {1,2} x firms {a,b} and workers {3,4} x firms {c,d}. Levels 4 + 4, two
    connected components, so df_a = 4 + (4 - 2) = 6 (by hand), not 4 + 3 as an assumed single group gives."""
    frame = pd.DataFrame({"w": [1, 1, 2, 2, 3, 3, 4, 4], "f": list("abababcdcdcd")[:8]})
    frame["f"] = ["a", "b", "a", "b", "c", "d", "c", "d"]
    assert absorbed_dof(frame, ["w", "f"], []) == (6, 0)
    # a third FE loses its largest pairwise mobility-group count (reghdfe's "pairwise"): the copy of f has 4
    # components with f, so it is counted as fully redundant, df_a = 4 + (4 - 2) + (4 - 4)
    assert absorbed_dof(frame, ["w", "f", "f"], []) == (6, 0)


def test_fe_nested_in_cluster_is_redundant():
    frame = pd.DataFrame({"firm": [1, 1, 2, 2, 3, 3], "t": [1, 2, 1, 2, 1, 2]})
    # firm: 3 nested levels; t: 2 levels less one, because the nested FE already holds the constant
    # (reghdfe.mata lines 4240-4257)
    assert absorbed_dof(frame, ["firm", "t"], ["firm"]) == (1, 3)


def test_singletons_dropped_iteratively():
    """Row 5 is alone in firm 3; once it is gone, row 4 is alone in period 3: two rounds, two singletons."""
    frame = pd.DataFrame({"firm": [1, 1, 2, 2, 2, 3], "t": [1, 2, 1, 2, 3, 3]})
    kept, n = drop_singletons(frame, ["firm", "t"])
    assert n == 2 and len(kept) == 4


def test_collinear_regressor_omitted_sample_unchanged(data):
    d = data.copy()
    d["X3"] = 2 * d["X1"]
    r = reghdfe(d, "Y", ["X1", "X2", "X3"], absorb=["f1"], vce="cluster", cluster=["f1"])
    assert r.omitted == ["X3"] and r.N == 997
    assert same(r.coef["X1"], "-.9495256")


def test_interaction_term_has_stata_name_and_product_value(data):
    d = data.dropna(subset=["Y", "X1", "X2", "f1", "f2"]).copy()
    d["X1X2"] = d["X1"] * d["X2"]
    by_name = reghdfe(d, "Y", ["X1", "X2", "c.X1#c.X2"], absorb=["f1", "f2"], vce="cluster", cluster=["f1"])
    by_hand = reghdfe(d, "Y", ["X1", "X2", "X1X2"], absorb=["f1", "f2"], vce="cluster", cluster=["f1"])
    assert list(by_name.coef.index) == ["X1", "X2", "c.X1#c.X2", "_cons"]
    assert by_name.coef["c.X1#c.X2"] == pytest.approx(by_hand.coef["X1X2"], rel=1e-10)


def test_newey_west_single_series_matches_statsmodels_by_hand():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"period_num": np.arange(1, 121), "x": rng.normal(size=120)})
    frame["y"] = 0.5 * frame["x"] + rng.normal(size=120)
    r = reghdfe(frame, "y", ["x"], absorb=[], vce="newey", time="period_num")
    lag = newey_default_lag(120)
    assert lag == 4  # floor(4 * 1.2 ** (2/9)) = floor(4.16)
    ols = sm.OLS(frame["y"], sm.add_constant(frame["x"])).fit()
    x = sm.add_constant(frame["x"]).to_numpy()
    u = ols.resid.to_numpy()
    scores = x * u[:, None]
    omega = scores.T @ scores
    for lag_j in range(1, lag + 1):
        gamma = scores[lag_j:].T @ scores[:-lag_j]
        omega += (1 - lag_j / (lag + 1)) * (gamma + gamma.T)
    bread = np.linalg.inv(x.T @ x)
    v = bread @ omega @ bread * 120 / (120 - 2)  # Stata newey: N / (N - k)
    assert r.se["x"] == pytest.approx(np.sqrt(v[1, 1]), rel=1e-8)
    assert r.se["_cons"] == pytest.approx(np.sqrt(v[0, 0]), rel=1e-8)


def test_multiway_clustering_uses_the_smallest_dimension(data):
    r = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1"], vce="cluster", cluster=["f2", "f3"])
    d = data.dropna(subset=["Y", "X1", "X2", "f1", "f2", "f3"])
    smallest = min(d["f2"].nunique(), d["f3"].nunique())
    assert r.N_clust == smallest and r.df_r == smallest - 1
    one_way = reghdfe(data, "Y", ["X1", "X2"], absorb=["f1"], vce="cluster", cluster=["f2"])
    assert r.coef["X1"] == pytest.approx(one_way.coef["X1"]) and r.se["X1"] != pytest.approx(one_way.se["X1"])


def test_mobility_groups_with_many_levels_do_not_overflow():
    """More than 32,767 levels (pandas stores category codes as int16 below that): a chain graph, one component."""
    n = 40_000
    frame = pd.DataFrame({"a": np.arange(n).repeat(2)[1:-1], "b": np.arange(n - 1).repeat(2)})
    assert absorbed_dof(frame, ["a", "b"], []) == (n + (n - 1) - 1, 0)


def test_three_fixed_effects_match_dummy_variable_ols(data):
    """absorb(f1 f2 f3), unadjusted: coefficients equal OLS with the three sets of dummies (statsmodels). The
    residual df is N - K - df_a with df_a = levels(f1) + levels(f2) - components(f1, f2) + levels(f3) - 1, which
    equals the dummy regression's residual df when that design has exactly one further redundancy per extra FE."""
    d = data.dropna(subset=["Y", "X1", "X2", "f1", "f2", "f3"])
    r = reghdfe(d, "Y", ["X1", "X2"], absorb=["f1", "f2", "f3"])
    dummies = [pd.get_dummies(d[f].astype(int), prefix=f, drop_first=i > 0, dtype=float)
               for i, f in enumerate(["f1", "f2", "f3"])]
    ols = sm.OLS(d["Y"], pd.concat([d[["X1", "X2"]], *dummies], axis=1)).fit()
    np.testing.assert_allclose(r.coef[["X1", "X2"]], ols.params[["X1", "X2"]], rtol=1e-7)
    assert r.df_a == d["f1"].nunique() + d["f2"].nunique() - 1 + d["f3"].nunique() - 1
    assert r.df_r == int(ols.df_resid)
    np.testing.assert_allclose(r.se[["X1", "X2"]], ols.bse[["X1", "X2"]], rtol=1e-6)


def test_multiway_cons_with_a_duplicated_cluster_equals_one_way(data):
    """Clustering on (f1, a copy of f1): inclusion-exclusion gives V1 + V1 - V1 = V1, so every SE, _cons included,
    must equal the one-way golden values."""
    d = data.copy()
    d["f1_copy"] = d["f1"]
    r = reghdfe(d, "Y", ["X1", "X2"], absorb=["f1"], vce="cluster", cluster=["f1", "f1_copy"])
    assert same(r.se["X1"], ".0665572") and same(r.se["_cons"], ".0694639")
