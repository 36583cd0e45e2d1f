"""Text-drift diagnostics (estimate/text_drift.py) on panels whose texts are known to drift or not: the out-of-fold AUC
of the bag of words is high when the post-cutoff texts use other words and near 0.5 when both samples draw from
the same words (identical texts: exactly 0.5); folds of whole periods down to 2 periods per sample; beta_3 with LAP
residualised on tokens and zlib bytes, and none where they explain LAP entirely; a panel without post-cutoff rows,
with one period per sample or without the Min-K% pass says so instead of failing; beyond MAX_ROWS rows (500 in the
test) the classifiers see a seeded subsample."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from lapbias.config import from_dict
from lapbias.estimate import text_drift

CONFIG = from_dict({"study": {"cutoff": "2024-06-30"}, "minkprob": {"scored_text": "text"}})
OLD = ["earnings", "revenue", "guidance", "merger", "dividend", "buyback", "lawsuit", "recall", "upgrade", "outlook"]
NEW = ["tariff", "chatbot", "agentic", "stablecoin", "reshoring", "ozempic", "quantum", "drone", "strike", "ban"]


def panel(n: int, drift: bool, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    post = rng.integers(0, 2, n)
    words = [rng.choice(NEW if drift and p else OLD, rng.integers(3, 13)) for p in post]
    text = [" ".join(w) for w in words]
    frame = pd.DataFrame({
        "row_id": [f"r{i}" for i in range(n)], "text": text, "post": pd.array(post, dtype="Int8"),
        "entity_num": rng.integers(1, 21, n), "period_num": rng.integers(1, 9, n),
        "mu_hat": rng.choice([-1.0, 1.0], n), "outcome": rng.normal(size=n)})
    length = frame["text"].str.len().to_numpy(float)
    for column in ("lap_mink", "lap_minkpp", "lap_gapk", "lap_zlib", "lap_loss"):
        frame[column] = 1e-4 * length + rng.normal(scale=1e-3, size=n)
    return frame, pd.DataFrame({"row_id": frame["row_id"], "n_tokens": frame["text"].str.split().str.len() * 2})


def value(table: pd.DataFrame, check: str, measure: str) -> float:
    return float(table.loc[(table["check"] == check) & (table["measure"] == measure), "value"].iloc[0])


def test_words_that_change_at_the_cutoff_are_found_and_words_that_do_not_are_not():
    frame, scored = panel(400, drift=True)
    drifted = text_drift.diagnostics(frame, CONFIG, scored)
    frame, scored = panel(400, drift=False)
    same = text_drift.diagnostics(frame, CONFIG, scored)
    check = "AUC pre vs post from the text alone"
    assert value(drifted, check, "bag of words of the text") > 0.95
    assert abs(value(same, check, "bag of words of the text") - 0.5) < 0.1


def test_dates_in_the_text_do_not_tell_the_samples_apart():
    """Texts that differ only by their date ("March 2024" before, "August 2024" after): the bag of words leaves
    digits and month names out, so it finds nothing (AUC about 0.5); with the words alone it would be 1."""
    frame, scored = panel(400, drift=False, seed=3)
    dates = np.where(frame["post"].astype(int) == 1, "August 12, 2024 (Q3)", "March 12, 2024 (Q1)")
    frame["text"] = frame["text"] + " " + dates
    table = text_drift.diagnostics(frame, CONFIG, scored)
    assert abs(value(table, "AUC pre vs post from the text alone", "bag of words of the text") - 0.5) < 0.1


def test_lap_carried_by_length_is_predicted_by_the_text_and_residualised():
    """LAP = 1e-4 x length + noise and an outcome that follows mu_hat x length: beta_3 on LAP as is is large and
    significant, on LAP residualised on tokens and zlib bytes it is not (length carried it)."""
    frame, scored = panel(400, drift=False, seed=1)
    rng = np.random.default_rng(1)
    length = frame["text"].str.len().to_numpy(float)
    frame["outcome"] = frame["mu_hat"] * (length - length.mean()) / length.std() + rng.normal(scale=0.5, size=len(frame))
    table = text_drift.diagnostics(frame, CONFIG, scored)
    assert value(table, "R2 of LAP from the text alone", "minkprob") > 0.3  # LAP is mostly length here
    as_is = table[(table["check"] == "beta_3, LAP as is") & (table["measure"] == "minkprob")].iloc[0]
    residualised = table[(table["check"] == "beta_3, LAP residualised on tokens and zlib bytes")
                         & (table["measure"] == "minkprob")].iloc[0]
    assert math.isfinite(as_is["value"]) and math.isfinite(residualised["value"])
    assert as_is["N"] == residualised["N"] == int((frame["post"] == 0).sum())
    assert "one-sided p 0.0000" in as_is["detail"]
    assert abs(residualised["value"]) < abs(as_is["value"]) / 3


def test_a_constant_lap_in_units_of_1e_8_has_no_r2():
    """A constant Min-K% of 1e-8 (its float std is about 1e-24, not 0): no R2, said so, rather than a number."""
    frame, scored = panel(200, drift=False, seed=5)
    table = text_drift.diagnostics(frame.assign(lap_mink=1e-8), CONFIG, scored)
    r2 = table[(table["check"] == "R2 of LAP from the text alone") & (table["measure"] == "minkprob")]
    assert len(r2) and r2["value"].isna().all() and r2["detail"].str.contains("constant LAP").all()


def test_the_residualisation_is_fitted_on_pre_cutoff_rows_only():
    """Post-cutoff rows whose LAP is extreme leave the residualised pre-cutoff beta_3 unchanged."""
    frame, scored = panel(400, drift=False, seed=2)
    table = text_drift.diagnostics(frame, CONFIG, scored)
    post = frame["post"].astype(int) == 1
    extreme = frame.copy()
    extreme.loc[post, "lap_mink"] = 1e3 * frame.loc[post, "text"].str.len()
    again = text_drift.diagnostics(extreme, CONFIG, scored)
    check = "beta_3, LAP residualised on tokens and zlib bytes"
    assert value(again, check, "minkprob") == pytest.approx(value(table, check, "minkprob"), rel=1e-9)
    assert math.isfinite(value(table, check, "minkprob"))


def period_words(seed: int = 4, periods: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`periods` periods, the first half before the cutoff; every text carries its period's own word (letters only)
    and words drawn alike in both samples, and LAP is a level per period: a classifier that sees a period in training
    and in its held-out fold learns the period's word, one that holds out whole periods cannot."""
    frame, scored = panel(600, drift=False, seed=seed)
    rng = np.random.default_rng(seed)
    period = rng.integers(0, periods, len(frame))
    letters = "abcdefghijklmnopqrst"
    frame["period_num"] = period + 1
    frame["post"] = pd.array((period >= periods // 2).astype(int), dtype="Int8")
    frame["text"] = frame["text"] + " " + pd.Series([f"zz{letters[p]}{letters[p]}q" for p in period])
    level = rng.normal(size=periods)
    for column in ("lap_mink", "lap_minkpp", "lap_gapk", "lap_zlib", "lap_loss"):
        frame[column] = level[period] + rng.normal(scale=0.1, size=len(frame))
    return frame, scored


def test_folds_hold_out_whole_periods_so_a_periods_own_word_does_not_give_it_away():
    frame, scored = period_words()
    table = text_drift.diagnostics(frame, CONFIG, scored)
    auc = table[(table["check"] == "AUC pre vs post from the text alone")
                & (table["measure"] == "bag of words of the text")].iloc[0]
    assert "folds of whole periods" in auc["detail"]
    assert abs(auc["value"] - 0.5) < 0.15  # row folds: about 1 (each period's word seen in training)
    r2 = table[(table["check"] == "R2 of LAP from the text alone") & (table["measure"] == "minkprob")
               & table["detail"].str.startswith("ridge")].iloc[0]
    assert "folds of whole periods" in r2["detail"] and "pre-cutoff rows" in r2["detail"]
    assert r2["value"] < 0.2  # row folds: near 1 (the period's word predicts its level)
    assert r2["N"] == int((frame["post"] == 0).sum())


def test_the_bag_of_words_is_fitted_on_training_folds_only(monkeypatch):
    """Every vocabulary the classifiers use is fitted on a training fold: each row is in 4 of the 5 training folds of
    the AUC (all rows) and of each measure's R2 (pre-cutoff rows), so the fits' sizes add up to 4 x the rows; the one
    fit on the whole sample is the check that some word occurs in two texts. A TF-IDF fitted on all rows before the
    folds would add a fit of every row per classifier. (A spy on scikit-learn's real vectorizer, not a double.)"""
    from sklearn.feature_extraction.text import CountVectorizer

    sizes = []
    fit_transform = CountVectorizer.fit_transform

    def spy(self, raw_documents, y=None):
        sizes.append(len(raw_documents))
        return fit_transform(self, raw_documents, y)

    monkeypatch.setattr(CountVectorizer, "fit_transform", spy)
    frame, scored = period_words()
    table = text_drift.diagnostics(frame, CONFIG, scored)
    n, n_pre = len(frame), int((frame["post"] == 0).sum())
    ridges = int((table["check"].eq("R2 of LAP from the text alone") & table["detail"].str.startswith("ridge")).sum())
    assert ridges == 5  # every text measure but the reference
    assert sizes.count(n) == 1 and len(sizes) == 1 + text_drift.FOLDS * (1 + ridges)
    assert sum(sizes) - n == (text_drift.FOLDS - 1) * (n + ridges * n_pre)


def test_no_post_cutoff_rows_or_no_min_k_pass_is_said_not_failed():
    frame, scored = panel(60, drift=True)
    skipped = text_drift.diagnostics(frame, CONFIG, None)
    assert list(skipped["check"]) == ["skipped"] and "no Min-K% pass" in skipped["detail"].iloc[0]
    pre_only = text_drift.diagnostics(frame.assign(post=pd.array([0] * len(frame), dtype="Int8")), CONFIG, scored)
    aucs = pre_only[pre_only["check"] == "AUC pre vs post from the text alone"]
    assert len(aucs) == 3 and aucs["value"].isna().all()  # one class: no AUC, no error
    assert aucs["detail"].str.contains("fewer than 2 periods").all()


def test_a_large_panel_enters_the_classifiers_as_a_seeded_subsample(monkeypatch):
    monkeypatch.setattr(text_drift, "MAX_ROWS", 500)
    frame, scored = panel(5_000, drift=True)
    first = text_drift.diagnostics(frame, CONFIG, scored)
    again = text_drift.diagnostics(frame, CONFIG, scored)
    auc = first[first["measure"] == "bag of words of the text"].iloc[0]
    assert auc["N"] == 500 and "a seeded subsample of 5000" in auc["detail"]
    pd.testing.assert_frame_equal(first, again)


def test_identical_texts_read_exactly_one_half():
    """Every text the same: nothing tells the samples apart, and each held-out fold's AUC is 0.5 (scores pooled over
    the folds' models, whose intercepts follow each training fold's share of post-cutoff rows, read 0.42)."""
    frame, scored = panel(400, drift=False, seed=6)
    frame["text"] = "same words here"
    table = text_drift.diagnostics(frame, CONFIG, scored.assign(n_tokens=6))
    check = "AUC pre vs post from the text alone"
    for measure in ("length (characters)", "scored tokens", "bag of words of the text"):
        assert value(table, check, measure) == 0.5, measure


def test_four_periods_per_sample_are_still_held_out_whole():
    """4 periods before and 4 after the cutoff: 4 folds of whole periods, not folds of rows (which read AUC 1.00 and
    R2 0.90 on this design, each period's word learned from itself)."""
    frame, scored = period_words(periods=8)
    table = text_drift.diagnostics(frame, CONFIG, scored)
    auc = table[(table["check"] == "AUC pre vs post from the text alone")
                & (table["measure"] == "bag of words of the text")].iloc[0]
    assert "4 folds of whole periods" in auc["detail"] and abs(auc["value"] - 0.5) < 0.2
    r2 = table[(table["check"] == "R2 of LAP from the text alone") & (table["measure"] == "minkprob")
               & table["detail"].str.startswith("ridge")].iloc[0]
    assert "4 folds of whole periods" in r2["detail"] and r2["value"] < 0.2


def test_one_period_per_sample_gets_no_auc_and_says_why():
    frame, scored = panel(120, drift=True)
    frame["period_num"] = frame["post"].astype(int) + 1
    table = text_drift.diagnostics(frame, CONFIG, scored)
    checks = table[table["check"].isin(["AUC pre vs post from the text alone", "R2 of LAP from the text alone"])]
    assert len(checks) == 3 + 2 * 5 and checks["value"].isna().all()
    assert checks["detail"].str.contains("fewer than 2 periods: no period can be held out").all()


@pytest.mark.parametrize("lap", ["constant", "linear"])
def test_a_lap_that_tokens_and_zlib_bytes_explain_has_no_residualised_beta_3(lap):
    """A constant LAP of 1e-8 or an exact linear function of the token count: the residual is rounding (~1e-24),
    which the regression's rescaling would turn into a regressor with a p-value; no number, the reason instead."""
    frame, scored = panel(200, drift=False, seed=5)
    tokens = scored["n_tokens"].to_numpy(float)
    frame["lap_mink"] = 1e-8 if lap == "constant" else 1e-8 * (3 + 2 * tokens)
    row = text_drift.diagnostics(frame, CONFIG, scored).set_index(["check", "measure"]).loc[
        ("beta_3, LAP residualised on tokens and zlib bytes", "minkprob")]
    assert math.isnan(row["value"]) and math.isnan(row["p_one_sided"])
    assert "tokens and zlib bytes explain LAP entirely" in row["detail"]


def test_beta_3_rows_carry_se_and_p_and_name_their_standard_errors():
    """The beta_3 rows hold se and one-sided p as numbers (the LaTeX twin shows them); a panel of one entity is one
    time series (Newey-West), and its rows say so rather than CRV1."""
    frame, scored = panel(200, drift=False, seed=7)
    table = text_drift.diagnostics(frame, CONFIG, scored)
    rows = table[table["check"].str.startswith("beta_3") & (table["measure"] == "minkprob")]
    assert len(rows) == 2 and rows["se"].gt(0).all() and rows["p_one_sided"].between(0, 1).all()
    assert rows["detail"].str.contains("CRV1 in both rows").all()
    assert table.loc[table["check"].str.startswith("AUC"), ["se", "p_one_sided"]].isna().all().all()
    one = frame.assign(entity_num=1)
    single = text_drift.diagnostics(one, CONFIG, scored)
    rows = single[single["check"].str.startswith("beta_3") & (single["measure"] == "minkprob")]
    assert rows["detail"].str.contains("Newey-West").all() and not rows["detail"].str.contains("CRV1").any()


def test_no_word_in_two_texts_and_few_rows_are_rows_that_say_so():
    """Every check is a row: the ridge R2 without a bag of words, the R2 on a single pre-cutoff row."""
    frame, scored = panel(60, drift=False, seed=8)
    frame["text"] = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(len(frame))]  # every word once
    table = text_drift.diagnostics(frame, CONFIG, scored)
    ridge = table[(table["check"] == "R2 of LAP from the text alone") & table["detail"].str.startswith("ridge")]
    assert len(ridge) == 5 and ridge["detail"].str.contains("no word in two texts").all()
    few = frame.copy()
    few.loc[few["post"].astype(int) == 0, "lap_mink"] = np.nan
    few.loc[few.index[few["post"].astype(int) == 0][0], "lap_mink"] = 0.1
    r2 = text_drift.diagnostics(few, CONFIG, scored)
    r2 = r2[(r2["check"] == "R2 of LAP from the text alone") & (r2["measure"] == "minkprob")]
    assert len(r2) == 2 and r2["value"].isna().all() and r2["detail"].str.contains("1 pre-cutoff rows").all()


def test_no_usable_pre_cutoff_row_is_said_not_failed():
    """Every pre-cutoff forecast unparsed, or a measure with values after the cutoff only: the beta_3 rows say why."""
    frame, scored = panel(120, drift=True, seed=9)
    pre = frame["post"].astype(int) == 0
    for broken in (frame.assign(mu_hat=frame["mu_hat"].where(~pre)), frame.assign(lap_mink=frame["lap_mink"].where(~pre))):
        table = text_drift.diagnostics(broken, CONFIG, scored)
        rows = table[table["check"].str.startswith("beta_3") & (table["measure"] == "minkprob")]
        assert len(rows) == 2 and rows["value"].isna().all() and rows["detail"].str.contains("not estimable").all()


def test_a_lap_constant_but_for_its_last_bits_has_no_residualised_beta_3():
    frame, scored = panel(200, drift=False, seed=5)
    jitter = np.random.default_rng(0).integers(0, 3, len(frame))
    frame["lap_mink"] = np.array([np.nextafter(1e-8, 1.0) if j == 1 else (np.nextafter(1e-8, 0.0) if j == 2 else 1e-8)
                                  for j in jitter])
    row = text_drift.diagnostics(frame, CONFIG, scored).set_index(["check", "measure"]).loc[
        ("beta_3, LAP residualised on tokens and zlib bytes", "minkprob")]
    assert math.isnan(row["value"]) and "explain LAP entirely" in row["detail"]


def test_a_period_that_straddles_the_cutoff_can_leave_no_fold_with_both_samples_and_says_so():
    """3 pre-cutoff months, a month 10% post-cutoff and one post-cutoff month (100 rows each): the straddling month
    counts in both samples, the 2 folds of whole months hold one sample each in their held-out or training rows."""
    frame, scored = panel(500, drift=True, seed=10)
    month = np.repeat(np.arange(5), 100)
    post = (month == 4).astype(int)
    post[300:310] = 1
    frame = frame.assign(period_num=month + 1, post=pd.array(post, dtype="Int8"))
    table = text_drift.diagnostics(frame, CONFIG, scored)
    auc = table[(table["check"] == "AUC pre vs post from the text alone") & (table["measure"] == "length (characters)")]
    assert math.isnan(auc["value"].iloc[0]) and "no fold holds both samples" in auc["detail"].iloc[0]


def test_a_minkprob_file_without_the_panels_rows_says_so():
    frame, scored = panel(120, drift=True, seed=11)
    table = text_drift.diagnostics(frame, CONFIG, scored.iloc[0:0])
    tokens = table[table["measure"] == "scored tokens"].iloc[0]
    assert math.isnan(tokens["value"]) and tokens["N"] == 0 and "no row has a value" in tokens["detail"]
