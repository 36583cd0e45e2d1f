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
    # Stata's percentiles (type 2): with n = 5, P10 is x_ceil(0.5) = x_1, P25 x_ceil(1.25) = x_2, P90 x_ceil(4.5) = x_5.
    frame = pd.DataFrame({"post": [0] * 5 + [1] * 4, "outcome": [5.0, 1.0, 3.0, 2.0, 4.0, 1.0, 2.0, 3.0, 4.0]})
    table = descriptive(frame).set_index(["sample", "variable"])
    pre = table.loc[("pre", "outcome")]
    assert (pre["mean"], pre["p10"], pre["p25"], pre["median"], pre["p75"], pre["p90"], pre["N"]) == \
        (3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5)
    assert pre["sd"] == pytest.approx(np.sqrt(2.5))
    # n = 4: n x 0.25 = 1 and n x 0.5 = 2 are integers, so P25 = (x_1 + x_2)/2 and the median = (x_2 + x_3)/2.
    post = table.loc[("post", "outcome")]
    assert (post["p25"], post["median"], post["N"]) == (1.5, 2.5, 4)


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


def test_table_iii_without_its_moderator_column_says_which_setting_names_it():
    """Without a `small` column Table III was skipped with "['mu_hat', 'small'] not all present in the panel", which
    did not say that [estimate] moderator names the column."""
    results = estimate_extended(simulated().drop(columns="small"))
    assert "table3" not in results.tables
    (note,) = [note for note in results.notes if note.startswith("table3")]
    assert note == ("table3 skipped: the panel has no column 'small', the [estimate] moderator; to estimate paper "
                    "Table III, set [estimate] moderator to a 0/1 column of your data file (e.g. a small-firm "
                    "indicator)")


def test_table5_is_the_papers_four_columns():
    """Paper Table V: (1)-(2) in-sample, (3)-(4) out-of-sample; (1)/(3) mu_hat alone, (2)/(4) with LAP."""
    frame = simulated()
    table5 = estimate_extended(frame).tables["table5"]
    terms = table5.groupby("model")["term"].apply(set)
    assert list(terms.index) == ["(1)", "(2)", "(3)", "(4)"]
    assert terms["(1)"] == terms["(3)"] == {"_cons", "mu_hat"}
    assert terms["(2)"] == terms["(4)"] == {"_cons", "mu_hat", "lap", "c.mu_hat#c.lap"}
    n = table5.drop_duplicates("model").set_index("model")["N"]
    assert n["(1)"] == n["(2)"] == (frame["post"] == 0).sum() and n["(3)"] == (frame["post"] == 1).sum()


def test_extended_tables_cluster_by_date_unless_configured():
    frame = simulated()
    by_date = estimate_extended(frame).tables["table2"]
    by_entity = estimate_extended(frame, cluster="entity_num").tables["table2"]
    assert set(by_date["N_clust"]) == {6} and set(by_entity["N_clust"]) == {40}
    direct = reghdfe(frame[frame["post"] == 0], "outcome", ["mu_hat"], absorb=["entity_num", "period_num"],
                     vce="cluster", cluster=["period_num"])
    assert by_date.set_index(["model", "term"]).loc[("(1)", "mu_hat"), "se"] == pytest.approx(direct.se["mu_hat"])


def test_triple_interaction_equals_hand_built_product():
    frame = simulated()
    frame["m_l_s"] = frame["mu_hat"] * frame["lap"] * frame["small"]
    named = reghdfe(frame, "outcome", ["mu_hat", "c.mu_hat#c.lap#c.small"], absorb=["entity_num", "period_num"])
    hand = reghdfe(frame, "outcome", ["mu_hat", "m_l_s"], absorb=["entity_num", "period_num"])
    assert named.coef["c.mu_hat#c.lap#c.small"] == pytest.approx(hand.coef["m_l_s"], rel=1e-10)


def test_horse_race_with_confidence_has_all_four_columns():
    """Paper Table IV: Confidence replaces p(w_{N+1}) in (3)-(4); it is not added to it."""
    frame = simulated()
    frame["confidence"] = np.random.default_rng(7).uniform(0.5, 1, len(frame))
    table4 = estimate_extended(frame).tables["table4"]
    terms = table4.groupby("model")["term"].apply(set)  # reghdfe reports _cons too
    assert terms["(1)"] == {"_cons", "mu_hat", "p_first", "c.mu_hat#c.p_first"}
    assert terms["(2)"] == terms["(1)"] | {"lap", "c.mu_hat#c.lap"}
    assert terms["(3)"] == {"_cons", "mu_hat", "confidence", "c.mu_hat#c.confidence"}
    assert terms["(4)"] == terms["(3)"] | {"lap", "c.mu_hat#c.lap"}


def test_triple_interaction_has_every_two_way_term():
    table3 = estimate_extended(simulated()).tables["table3"]
    assert set(table3[table3["model"] == "(2)"]["term"]) == {
        "_cons", "mu_hat", "small", "c.mu_hat#c.small", "lap", "c.mu_hat#c.lap", "c.lap#c.small",
        "c.mu_hat#c.lap#c.small"}
