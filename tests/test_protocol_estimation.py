"""The protocol regressions on simulated panels with a known beta_3 (numpy RNG; no model involved)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.errors import InputDataError
from lapbias.estimate.protocol import BETA3, ProtocolResults, estimate_panel, validation_difference
from lapbias.estimate.reghdfe import reghdfe
from lapbias.report.verdict import validation_pattern


def simulate(beta3: float, seed: int, n_entities: int = 60, n_periods: int = 25) -> pd.DataFrame:
    """outcome = 0.2 mu_hat + 0.1 lap + beta3 mu_hat*lap + entity effect + period effect + noise; a recall that
    guesses: ud_dir ~ U(-1, 1), ud = lap ud_dir (|ud| <= lap = P(up) + P(down))."""
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), n_periods)
    period = np.tile(np.arange(1, n_periods + 1), n_entities)
    mu_hat = rng.choice([-1.0, 1.0], size=entity.size)
    lap = rng.uniform(0, 1, size=entity.size)
    direction = rng.uniform(-1, 1, size=entity.size)
    outcome = (0.2 * mu_hat + 0.1 * lap + beta3 * mu_hat * lap + rng.normal(0, 0.5, n_entities)[entity - 1]
               + rng.normal(0, 0.5, n_periods)[period - 1] + rng.normal(0, 1, entity.size))
    frame = pd.DataFrame({"entity_num": entity, "period_num": period, "mu_hat": mu_hat, "lap": lap,
                          "ud": lap * direction, "ud_dir": direction, "outcome": outcome})
    frame["high_lap"] = (frame["lap"] > frame["lap"].median()).astype(int)
    return frame


def beta3_row(table: pd.DataFrame) -> pd.Series:
    return table.set_index("term").loc[BETA3]


def test_positive_beta3_is_detected_and_null_placebo_passes(halves_per_sd_difference):
    results = estimate_panel(simulate(1.0, seed=1), simulate(0.0, seed=2))
    pre = beta3_row(results.tables["detection"])
    assert pre["coef"] == pytest.approx(1.0, abs=0.25) and pre["p_one_sided"] < 0.01
    assert list(results.tables["detection"]["term"]) == ["mu_hat", "lap", BETA3, "_cons"]
    validation = results.tables["validation"].set_index(["model", "term"])
    assert set(results.tables["validation"]["model"]) == {"pooled", "high_lap", "low_lap", "high_minus_low"}
    # the halves' slopes on the direction per SD of it, in one regression with each half's own effects: exactly the
    # difference of the halves' own regressions of the outcome on ud_dir, each times SD(ud_dir) in its half
    assert validation.loc[("high_minus_low", "c.ud_dir_std#c.high_lap"), "coef"] == pytest.approx(
        halves_per_sd_difference(simulate(1.0, seed=1)), rel=1e-8)
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


def equally_right_recall(seed: int, n_entities: int, n_periods: int, coverage: float, low_guesses: bool = False
                         ) -> pd.DataFrame:
    """A recall equally right at every LAP whose size grows with LAP (an independent review's counterexample):
    outcome = entity + period effects + e, the recalled direction the sign of e, right with probability 0.9, and
    ud = LAP x direction x U(0.6, 1), so |ud| <= LAP = P(up) + P(down) and ud_dir = ud / LAP. No memorization
    separates the halves; `low_guesses`: the low-LAP half guesses instead (a direction U(-1, 1)), the pattern."""
    rng = np.random.default_rng(seed)
    entity = np.repeat(np.arange(1, n_entities + 1), n_periods)
    period = np.tile(np.arange(1, n_periods + 1), n_entities)
    keep = rng.uniform(size=entity.size) < coverage
    entity, period = entity[keep], period[keep]
    lap, shock = rng.uniform(size=entity.size), rng.normal(size=entity.size)
    outcome = 0.5 * rng.normal(size=n_entities)[entity - 1] + 0.5 * rng.normal(size=n_periods)[period - 1] + shock
    high = (lap > np.median(lap)).astype(int)
    direction = np.sign(shock) * np.where(rng.uniform(size=entity.size) < 0.9, 1.0, -1.0)
    if low_guesses:
        direction = np.where(high == 1, direction, rng.uniform(-1, 1, size=entity.size))
    ud = lap * direction * rng.uniform(0.6, 1.0, size=entity.size)
    mu_hat = rng.choice([-1.0, 0.0, 1.0], size=entity.size)
    return pd.DataFrame({"entity_num": entity, "period_num": period, "mu_hat": mu_hat, "lap": lap, "ud": ud,
                         "ud_dir": ud / lap, "outcome": outcome, "high_lap": high})


def test_a_recall_equally_right_at_every_lap_is_no_validation_pattern():
    """The recall is 90% right in both halves and only its size grows with LAP (ud = LAP x direction x U(0.6, 1)).
    Per SD of ud the halves' difference was a difference of correlations, and the low half's larger spread of LAP
    relative to its mean lowers its correlation: the validation pattern was "present" in 19 of these 20 panels of
    300 entities x 40 dates x 40% of cells (90% of 300 seeds), a false validation. Per SD of the recalled direction
    ud_dir = ud / LAP the halves carry the same content and the test keeps its size: present in 2 of 20 (6.3% of
    300 seeds; 4.3% of 400 panels of 30 x 8, where the per-SD test of ud found it in 14%)."""
    present = []
    for seed in range(20):
        results = estimate_panel(equally_right_recall(seed, 300, 40, 0.4), None)
        notes = pd.DataFrame(results.notes, columns=["model", "kind", "detail"])
        present.append(validation_pattern(results.tables["validation"], notes, 0.05).present)
    assert sum(present) <= 3, present


def test_a_memorized_high_half_against_a_guessing_low_half_is_the_validation_pattern():
    """The pattern the test exists for, on the demo's shape (30 entities x 8 periods): the high-LAP half recalls the
    outcome's direction (right 90%), the low half guesses. The difference per SD of the direction is positive and
    significant (one-sided p < 0.05) in each of these 10 panels (40 of 40 measured), and the pattern present."""
    for seed in range(10):
        results = estimate_panel(equally_right_recall(seed, 30, 8, 1.0, low_guesses=True), None)
        table = results.tables["validation"].set_index(["model", "term"])
        difference = table.loc[("high_minus_low", "c.ud_dir_std#c.high_lap")]
        assert difference["coef"] > 0 and difference["p_one_sided"] < 0.05, (seed, difference)
        notes = pd.DataFrame(results.notes, columns=["model", "kind", "detail"])
        assert validation_pattern(results.tables["validation"], notes, 0.05).present, seed


def test_the_difference_is_tested_on_the_direction_not_on_its_size():
    """ud_dir carries the test: a sample whose ud_dir is replaced (ud unchanged) gives another difference; the
    raw ud slopes of the equally right recall say "the low half predicts better" (theta ∝ E[LAP] / E[LAP²]), the
    direction's per-SD difference does not; a sample without ud_dir is refused with the column's name."""
    frame = equally_right_recall(11, 80, 20, 1.0)
    row = validation_difference(ProtocolResults(), "validation", frame, -1).set_index("term")
    assert list(row.index) == ["c.ud_dir_std#c.high_lap"]
    halves = frame.assign(entity_half=frame["entity_num"] * 2 + frame["high_lap"],
                          period_half=frame["period_num"] * 2 + frame["high_lap"], ud_x=frame["ud"] * frame["high_lap"])
    raw = reghdfe(halves, "outcome", ["ud_x", "ud"], absorb=["entity_half", "period_half"], vce="cluster",
                  cluster=["entity_num"])
    assert raw.coef["ud_x"] < 0 and raw.p["ud_x"] < 0.05  # the raw slopes: "the low half predicts better"
    assert row.loc["c.ud_dir_std#c.high_lap", "p"] > 0.10, row
    flipped = frame.assign(ud_dir=np.where(frame["high_lap"] == 1, frame["ud_dir"], -frame["ud_dir"]))
    other = validation_difference(ProtocolResults(), "validation", flipped, -1).set_index("term")
    assert other.loc["c.ud_dir_std#c.high_lap", "coef"] > row.loc["c.ud_dir_std#c.high_lap", "coef"] + 0.5
    with pytest.raises(InputDataError, match="no column ud_dir .*rerun `lapbias panel`"):
        estimate_panel(frame.drop(columns="ud_dir"), None)


def test_a_half_without_a_recalled_direction_standardizes_to_zero():
    """A low-LAP half whose recall is all censored to "unknown" (ud = ud_dir = 0): its SD is 0, ud_dir_std = 0
    there, ud_dir_std is then collinear with the interaction and omitted, and the difference is the high half's
    slope on the direction per SD of it (over the validation sample's rows: a row without an outcome is left out)."""
    frame = simulate(0.0, seed=12)
    frame.loc[frame["high_lap"] == 0, ["ud", "ud_dir"]] = 0.0
    frame.loc[frame.index[0], "outcome"] = np.nan  # not in the validation sample: its ud_dir does not enter the SD
    results = ProtocolResults()
    row = validation_difference(results, "validation", frame, -1).set_index("term")
    used = frame.dropna(subset=["outcome"])
    high = used[used["high_lap"] == 1]
    fit = reghdfe(high, "outcome", ["ud_dir"], absorb=["entity_num", "period_num"], vce="cluster",
                  cluster=["entity_num"])
    assert row.loc["c.ud_dir_std#c.high_lap", "coef"] == pytest.approx(
        fit.coef["ud_dir"] * high["ud_dir"].std(ddof=1), rel=1e-8)
    assert any(n["detail"].startswith("ud_dir_std omitted") for n in results.notes), results.notes
