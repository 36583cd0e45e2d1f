"""The protocol regressions on simulated panels with a known beta_3 (numpy RNG; no model involved)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.estimate.protocol import BETA3, estimate_panel


def simulate(beta3: float, seed: int, n_entities: int = 60, n_periods: int = 25) -> pd.DataFrame:
    """outcome = 0.2 mu_hat + 0.1 lap + beta3 mu_hat*lap + entity effect + period effect + noise."""
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), n_periods)
    period = np.tile(np.arange(1, n_periods + 1), n_entities)
    mu_hat = rng.choice([-1.0, 1.0], size=entity.size)
    lap = rng.uniform(0, 1, size=entity.size)
    ud = rng.normal(0, 0.3, size=entity.size)
    outcome = (0.2 * mu_hat + 0.1 * lap + beta3 * mu_hat * lap + rng.normal(0, 0.5, n_entities)[entity - 1]
               + rng.normal(0, 0.5, n_periods)[period - 1] + rng.normal(0, 1, entity.size))
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "mu_hat": mu_hat, "lap": lap, "ud": ud,
                          "outcome": outcome})
    frame["high_lap"] = (frame["lap"] > frame["lap"].median()).astype(int)
    return frame


def beta3_row(table: pd.DataFrame) -> pd.Series:
    return table.set_index("term").loc[BETA3]


def test_positive_beta3_is_detected_and_null_placebo_passes():
    results = estimate_panel(simulate(1.0, seed=1), simulate(0.0, seed=2))
    pre = beta3_row(results.tables["detection"])
    assert pre["coef"] == pytest.approx(1.0, abs=0.25) and pre["p_one_sided"] < 0.01
    assert list(results.tables["detection"]["term"]) == ["mu_hat", "lap", BETA3, "_cons"]
    validation = results.tables["validation"].set_index(["model", "term"])
    assert set(results.tables["validation"]["model"]) == {"pooled", "high_lap", "low_lap", "high_minus_low"}
    # the halves' thetas per SD of ud in one regression with each half's own effects: exactly theta SD(ud) per half
    pre = simulate(1.0, seed=1)
    sd_high, sd_low = (pre.loc[pre["high_lap"] == flag, "ud"].std(ddof=1) for flag in (1, 0))
    assert validation.loc[("high_minus_low", "c.ud_std#c.high_lap"), "coef"] == pytest.approx(
        validation.loc[("high_lap", "ud"), "coef"] * sd_high - validation.loc[("low_lap", "ud"), "coef"] * sd_low,
        rel=1e-8)
    assert beta3_row(results.tables["placebo"])["N_clust"] == 60


def test_zero_beta3_gives_large_one_sided_p_on_average():
    p_values = [beta3_row(estimate_panel(simulate(0.0, seed=s), None).tables["detection"])["p_one_sided"]
                for s in range(10, 30)]
    assert 0.3 < float(np.mean(p_values)) < 0.7  # uniform under the null: mean 0.5


def test_no_post_sample_means_no_placebo_and_a_note():
    results = estimate_panel(simulate(0.5, seed=3), None)
    assert "placebo" not in results.tables
    assert any("placebo (Step 5) is infeasible" in note["detail"] for note in results.notes)


def test_few_clusters_and_unparsed_rows_are_noted():
    panel = simulate(0.5, seed=4, n_entities=12)
    panel.loc[:4, "mu_hat"] = np.nan
    results = estimate_panel(panel, None)
    kinds = {(n["kind"], n["detail"].split(" ")[0]) for n in results.notes if n["model"] == "detection:pre"}
    assert ("dropped_missing", "5") in kinds
    assert any("only 12 clusters" in n["detail"] for n in results.notes)


def test_single_entity_uses_newey_west_without_fixed_effects():
    panel = simulate(0.5, seed=5, n_entities=1, n_periods=150)
    results = estimate_panel(panel, None)
    assert "_cons" in set(results.tables["detection"]["term"])
    assert any("Newey-West" in n["detail"] for n in results.notes)


def test_a_model_whose_every_regressor_is_omitted_reports_its_fit_as_reghdfe_does():
    """Review N10: for a validation half whose ud is omitted (constant within the entity effects), the Python engine
    wrote N = len(sample), counting rows with a missing value and singletons, with no N_clust and df_r and no _cons
    row; Stata exports reghdfe's e(N), e(N_clust), e(df_r) and _cons (the mean of the outcome by reghdfe's regression
    through the means, b0 = mean(y) - mean(x)'b with every slope omitted). REPORT.md's N then depended on the engine."""
    from lapbias.estimate.reghdfe import drop_singletons

    panel = simulate(0.5, seed=6, n_entities=30, n_periods=12)
    high = panel["high_lap"] == 1
    panel.loc[high, "ud"] = panel.loc[high, "entity_num"] * 0.01  # constant within each entity: omitted
    panel.loc[panel.index[high][:3], "outcome"] = np.nan  # rows dropped for a missing value
    lone = panel.index[high][-1]
    panel.loc[lone, "period_num"] = 99  # a singleton of the period effects
    results = estimate_panel(panel, None)
    rows = results.tables["validation"].set_index(["model", "term"])
    half = panel[high].dropna(subset=["outcome", "ud"])
    used, singletons = drop_singletons(half.reset_index(drop=True), ["entity_num", "period_num"])
    ud = rows.loc[("high_lap", "ud")]
    assert pd.isna(ud["coef"]) and ud["N"] == len(used) < len(panel[high])
    assert ud["N_clust"] == used["entity_num"].nunique() and ud["num_singletons"] == singletons >= 1
    assert ud["df_r"] == used["entity_num"].nunique() - 1  # min(N - K - df_a, G - 1) with every FE nested or not
    cons = rows.loc[("high_lap", "_cons")]
    assert cons["coef"] == pytest.approx(used["outcome"].mean(), rel=1e-12) and cons["N"] == len(used)
    notes = {(n["kind"], n["detail"]) for n in results.notes if n["model"] == "validation:high_lap"}
    assert ("dropped_missing", "3 row(s) with a missing value dropped listwise") in notes
    assert ("singletons", f"{singletons} singleton observation(s) dropped") in notes


def test_the_validation_difference_compares_predictive_content_per_sd_of_ud():
    """|ud| <= LAP squeezes ud in the low-LAP half: with the same directional recall in both halves (ud = LAP x the
    shock's sign), the raw slopes differ (theta ∝ E[LAP] / E[LAP^2] is larger in the low half). The high_minus_low
    row is the difference of the halves' standardized slopes (term c.ud_std#c.high_lap, ud / SD(ud) within each half,
    sample SD over that half's rows before singletons are dropped), so it is not significantly negative here, while
    the raw difference is. It is not zero in population either: per SD, ud's content is corr(outcome, ud) SD(outcome),
    and with ud = LAP x direction that correlation falls with the dispersion of LAP relative to its mean, larger in
    the low half (U(0, 0.5): E[LAP] / sqrt(E[LAP^2]) = 0.87; U(0.5, 1): 0.98). So the standardized difference is
    positive here (two-sided p < 0.05 on 6 of seeds 0-29), and only "not significantly negative" is asserted."""
    from lapbias.estimate.protocol import ProtocolResults, validation_difference
    from lapbias.estimate.reghdfe import reghdfe

    rng = np.random.default_rng(11)
    frame = simulate(0.0, seed=11, n_entities=80, n_periods=20)
    shock = rng.normal(size=len(frame))
    frame["outcome"] = frame["outcome"] + shock
    frame["ud"] = frame["lap"] * np.sign(shock) * rng.uniform(0.6, 1.0, size=len(frame))
    row = validation_difference(ProtocolResults(), "validation", frame, -1).set_index("term")
    assert list(row.index) == ["c.ud_std#c.high_lap"]
    halves = frame.assign(entity_half=frame["entity_num"] * 2 + frame["high_lap"],
                          period_half=frame["period_num"] * 2 + frame["high_lap"], ud_x=frame["ud"] * frame["high_lap"])
    raw = reghdfe(halves, "outcome", ["ud_x", "ud"], absorb=["entity_half", "period_half"], vce="cluster",
                  cluster=["entity_num"])
    assert raw.coef["ud_x"] < 0 and raw.p["ud_x"] < 0.05  # the raw slopes: "the low half predicts better"
    standardized = row.loc["c.ud_std#c.high_lap"]
    assert not (standardized["coef"] < 0 and standardized["p"] < 0.10), standardized


def test_a_half_without_ud_variation_standardizes_to_zero():
    """A low-LAP half whose recall is all censored to "unknown" (ud = 0): its SD is 0, ud_std = 0 there, ud_std is
    then collinear with the interaction and omitted, and the difference is the high half's standardized slope."""
    from lapbias.estimate.protocol import ProtocolResults, validation_difference

    frame = simulate(0.0, seed=12)
    frame.loc[frame["high_lap"] == 0, "ud"] = 0.0
    frame.loc[frame.index[0], "outcome"] = np.nan  # not in the validation sample: its ud does not enter the SD
    results = ProtocolResults()
    row = validation_difference(results, "validation", frame, -1).set_index("term")
    high = estimate_panel(frame, None).tables["validation"].set_index(["model", "term"]).loc[("high_lap", "ud")]
    used = frame.dropna(subset=["outcome"])
    sd_high = used.loc[used["high_lap"] == 1, "ud"].std(ddof=1)
    assert row.loc["c.ud_std#c.high_lap", "coef"] == pytest.approx(high["coef"] * sd_high, rel=1e-8)
    assert any(n["detail"].startswith("ud_std omitted") for n in results.notes), results.notes
