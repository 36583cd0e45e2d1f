"""The paper's extended specifications (Tables I-V) on a simulated panel, checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.estimate import reghdfe
from lapbias.estimate.extended import descriptive, estimate_extended, magnitudes, standardize_within


def simulated(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, 41), 12)
    period = np.tile(np.arange(1, 13), 40)
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "post": (period > 6).astype(int),
                          "mu_hat": rng.choice([-1.0, 1.0], entity.size), "lap": rng.uniform(0, 1, entity.size),
                          "p_first": rng.uniform(0.3, 1, entity.size), "small": rng.integers(0, 2, entity.size)})
    frame["ud"] = rng.normal(0, 0.2, entity.size)
    frame["outcome"] = 0.2 * frame["mu_hat"] + 0.5 * frame["mu_hat"] * frame["lap"] + rng.normal(0, 1, entity.size)
    return frame


def test_standardized_within_each_sample():
    frame = standardize_within(simulated(), ["outcome", "lap"])
    for _, part in frame.groupby("post"):
        assert part["outcome"].mean() == pytest.approx(0, abs=1e-12) and part["lap"].std() == pytest.approx(1)


def test_descriptive_statistics_by_hand():
    frame = pd.DataFrame({"post": [0] * 5, "outcome": [1.0, 2.0, 3.0, 4.0, 5.0]})
    row = descriptive(frame).set_index(["sample", "variable"]).loc[("pre", "outcome")]
    assert (row["mean"], row["median"], row["N"]) == (3.0, 3.0, 5)
    assert row["sd"] == pytest.approx(np.sqrt(2.5)) and row["p10"] == pytest.approx(1.4)  # linear interpolation


def test_magnitudes_follow_the_papers_sentences():
    table2 = pd.DataFrame([{"model": "(1)", "term": "mu_hat", "coef": 0.2},
                           {"model": "(2)", "term": "c.mu_hat#c.lap", "coef": 0.5}])
    sample = pd.DataFrame({"mu_hat": [-1.0, 1.0, -1.0, 1.0], "lap": [0.0, 0.2, 0.4, 0.6]})
    values = magnitudes(table2, sample).set_index("quantity")["value"]
    sd_mu, sd_lap = np.std([-1, 1, -1, 1], ddof=1), np.std([0, 0.2, 0.4, 0.6], ddof=1)
    assert values["one_sd_llm_effect"] == pytest.approx(0.2 * sd_mu)
    assert values["one_sd_lap_interaction_effect"] == pytest.approx(0.5 * sd_lap)
    assert values["interaction_share_of_standalone"] == pytest.approx(0.5 * sd_lap / 0.2)


def test_tables_have_the_papers_terms():
    results = estimate_extended(simulated())
    table3 = results.tables["table3"]
    assert "c.mu_hat#c.lap#c.small" in set(table3[table3["model"] == "(2)"]["term"])
    table4 = results.tables["table4"]
    assert {"(1)", "(2)"} == set(table4["model"])  # no confidence column: (3) and (4) skipped with a note
    assert "c.mu_hat#c.p_first" in set(table4["term"])
    assert any("table4:(3) skipped" in note for note in results.notes)
    assert set(results.tables["table5"]["model"]) == {"pre", "post"}


def test_triple_interaction_equals_hand_built_product():
    frame = simulated()
    frame["m_l_s"] = frame["mu_hat"] * frame["lap"] * frame["small"]
    named = reghdfe(frame, "outcome", ["mu_hat", "c.mu_hat#c.lap#c.small"], absorb=["entity_num", "period_num"])
    hand = reghdfe(frame, "outcome", ["mu_hat", "m_l_s"], absorb=["entity_num", "period_num"])
    assert named.coef["c.mu_hat#c.lap#c.small"] == pytest.approx(hand.coef["m_l_s"], rel=1e-10)
