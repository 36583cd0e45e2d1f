"""The pairs bootstrap (paper Figure III): beta_3 per draw equals a naive pyfixest fit on the materialised
resampled data; the one-sided bootstrap p; entity resampling; reproducibility."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyfixest as pf
import pytest

from lapbias.estimate.bootstrap import (BootstrapResult, draw_weights, drop_weighted_singletons, pairs_bootstrap,
                                        weighted_beta3)


def panel(seed: int = 3, n_entities: int = 40, n_periods: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), n_periods)
    period = np.tile(np.arange(1, n_periods + 1), n_entities)
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "mu_hat": rng.choice([-1.0, 1.0], entity.size),
                          "lap": rng.uniform(0, 1, entity.size)})
    frame["outcome"] = 0.3 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, entity.size) + 0.1 * entity
    return frame


def naive_beta3(frame: pd.DataFrame, counts: np.ndarray) -> float:
    """The materialised draw (rows repeated count times) fitted by pyfixest with singletons dropped."""
    drawn = frame.loc[np.repeat(frame.index.to_numpy(), counts.astype(int))].reset_index(drop=True)
    fit = pf.feols("outcome ~ mu_hat + lap + mu_hat:lap | entity_num + period_num", data=drawn,
                   fixef_rm="singleton", fixef_tol=1e-14, vcov="iid")
    return float(fit.coef()["mu_hat:lap"])


def test_each_draw_equals_the_naive_pyfixest_fit():
    frame = panel()
    entity = pd.factorize(frame["entity_num"])[0]
    period = pd.factorize(frame["period_num"])[0]
    weights = draw_weights(len(frame), entity, 5, np.random.default_rng(11), "obs")
    weights = drop_weighted_singletons(weights, [entity, period], [entity.max() + 1, period.max() + 1])
    X = np.column_stack([frame["mu_hat"], frame["lap"], frame["mu_hat"] * frame["lap"]])
    fast = weighted_beta3(frame["outcome"].to_numpy(), X, entity, period, weights)
    raw = draw_weights(len(frame), entity, 5, np.random.default_rng(11), "obs")
    for b in range(5):
        assert fast[b] == pytest.approx(naive_beta3(frame, raw[:, b]), abs=1e-8)


def test_weighted_singletons_follow_the_materialised_data():
    # Materialised: row0 (e0,p0) x1, row2 (e1,p0) x2, row4 (e2,p0) x1, row5 (e2,p1) x1.
    # Round 1: entity 0 has weight 1 (row0) and period 1 has weight 1 (row5): both dropped.
    # Round 2: entity 2 now has weight 1 (row4): dropped. Row 2, drawn twice, is not a singleton and stays.
    weights = np.array([[1.0], [0.0], [2.0], [0.0], [1.0], [1.0]])
    entity = np.array([0, 0, 1, 1, 2, 2])
    period = np.array([0, 1, 0, 1, 0, 1])
    kept = drop_weighted_singletons(weights, [entity, period], [3, 2])
    assert kept[:, 0].tolist() == [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]


def test_entity_resampling_keeps_whole_entities():
    entity = np.repeat(np.arange(6), 4)
    weights = draw_weights(entity.size, entity, 20, np.random.default_rng(0), "entity")
    for b in range(20):
        per_entity = pd.Series(weights[:, b]).groupby(entity).nunique()
        assert (per_entity == 1).all()  # every row of an entity has its entity's draw count
        assert weights[:, b].sum() == entity.size  # six entities drawn, four rows each


def test_one_sided_bootstrap_p_by_hand():
    result = BootstrapResult(np.array([0.1, 0.2, 0.3, 0.4, np.nan]), 0.3, 5, 1, "obs", 100)
    assert result.p_boot == pytest.approx(0.5)  # 0.3 and 0.4 are >= 0.3 among the four identified draws
    assert result.summary()["n_unidentified"].iloc[0] == 1


def test_reproducible_with_a_seed():
    frame = panel(seed=5)
    first = pairs_bootstrap(frame, 0.2, B=40, seed=9, progress=False)
    second = pairs_bootstrap(frame, 0.2, B=40, seed=9, progress=False)
    np.testing.assert_array_equal(first.draws, second.draws)
    assert not np.array_equal(first.draws, pairs_bootstrap(frame, 0.2, B=40, seed=10, progress=False).draws)
