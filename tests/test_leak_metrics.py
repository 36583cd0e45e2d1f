"""NumLeak metrics, readouts and LeakShare against values computed by hand (the formulas of the docstrings)."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lapbias.leak import leakshare, metrics, readouts

Z = 1.959963984540054


def wilson_by_hand(k, n):
    p = k / n
    centre = (p + Z ** 2 / (2 * n)) / (1 + Z ** 2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z ** 2 / (4 * n ** 2)) / (1 + Z ** 2 / n)
    return centre - half, centre + half


def panel_of(rows):
    frame = pd.DataFrame(rows, columns=["variant", "series", "window", "unit", "period", "draw", "truth", "status",
                                        "value"])
    frame["entropy_bits"] = np.nan
    frame["truncated"] = 0.0
    return frame


def summarize(panel, levels=frozenset(), band=0.25, fine=0.05, **extra):
    return metrics.summarize(panel, {"percent": band}, {"percent": fine}, set(levels), reps=extra.get("reps", 200),
                             shuffle_reps=extra.get("shuffle_reps", 50), permutation_reps=50, seed=1)


def test_value_metrics_by_hand():
    panel = panel_of([
        ("A", "s", "pre", "percent", "2001Q1", 0, 1.0, "parsed", 1.05),
        ("A", "s", "pre", "percent", "2001Q2", 0, -2.0, "parsed", -1.0),
        ("A", "s", "pre", "percent", "2001Q3", 0, 3.0, "refusal", np.nan),
        ("A", "s", "pre", "percent", "2001Q4", 0, 0.5, "parsed", 0.5),
    ])
    row = summarize(panel).iloc[0]
    assert (row.n_queries, row.n_parsed, row.n_refusal, row.n_unparsed) == (4, 3, 1, 0)
    assert row.parse_rate == 0.75
    assert (row.parse_rate_lo, row.parse_rate_hi) == pytest.approx(wilson_by_hand(3, 4))
    assert row.sign_accuracy == 1.0 and (row.sign_accuracy_lo, row.sign_accuracy_hi) == pytest.approx(
        wilson_by_hand(3, 3))
    assert row.mae == pytest.approx((0.05 + 1.0 + 0.0) / 3)
    assert row.within_band == pytest.approx(2 / 3)            # |0.05| and |0| are within 25 bps, |1.0| is not
    assert row.within_fine_band == pytest.approx(1 / 3)       # only |0| is within 5 bps (|0.05| is on its edge)
    x, y = np.array([1.05, -1.0, 0.5]), np.array([1.0, -2.0, 0.5])
    r = ((x - x.mean()) * (y - y.mean())).sum() / math.sqrt(((x - x.mean()) ** 2).sum() * ((y - y.mean()) ** 2).sum())
    assert row.pearson_r == pytest.approx(r)
    assert row.pearson_lo <= row.pearson_hi


def test_band_is_strict_at_exactly_its_width():
    # §2's within-25-bps counts |error| < 0.25 (the authors' `abs_error < tol`): two-decimal values 0.25 apart are
    # a miss, whichever way the float subtraction rounds (4.03 - 3.78 = 0.25000000000000044, 0.5 - 0.25 = 0.25)
    recall, truth = np.array([4.03, 0.5, 3.24, 1.01]), np.array([3.78, 0.25, 3.0, 0.77])
    assert metrics.within(recall, truth, 0.25).tolist() == [False, False, True, True]
    panel = panel_of([("A", "s", "pre", "percent", f"2001Q{i + 1}", 0, t, "parsed", v)
                      for i, (v, t) in enumerate(zip(recall, truth))])
    row = summarize(panel).iloc[0]
    assert row.within_band == 0.5 and row.band == 0.25 and row.fine_band == 0.05


def test_sign_accuracy_leaves_out_zero_truths_and_flags_level_series():
    panel = panel_of([
        ("A", "u", "pre", "percent", "2001Q1", 0, 0.0, "parsed", 0.3),    # zero truth: not scored
        ("A", "u", "pre", "percent", "2001Q2", 0, 5.0, "parsed", 4.0),
        ("A", "u", "pre", "percent", "2001Q3", 0, 6.0, "parsed", 0.0),    # a recall of 0 is a miss
        ("A", "u", "pre", "percent", "2001Q4", 0, 7.0, "parsed", 9.0),
    ])
    row = summarize(panel).iloc[0]
    assert row.n_sign == 3 and row.sign_accuracy == pytest.approx(2 / 3) and bool(row.sign_informative)
    level = summarize(panel, levels={"u"}).iloc[0]
    assert not level.sign_informative and "uninformative" in level.note
    table = pd.DataFrame({"series": ["u", "u", "r", "r"], "value": [5.0, 6.0, -1.0, 2.0]})
    assert metrics.level_series(table) == {"u"}


def test_rank_accuracy_and_draw_spread_by_hand():
    panel = panel_of([
        ("C", "s", "pre", "percent", "2001Q1", 0, 0.0, "parsed", 0.0),
        ("C", "s", "pre", "percent", "2002Q1", 0, 1.0, "parsed", 0.0),
        ("C", "s", "pre", "percent", "2003Q1", 0, 1.0, "unparsed", np.nan),
        ("E", "s", "pre", "percent", "2001Q1", 0, 1.0, "parsed", 1.2),
        ("E", "s", "pre", "percent", "2001Q1", 1, 1.0, "parsed", 1.25),
        ("E", "s", "pre", "percent", "2002Q1", 0, 2.0, "parsed", 2.0),
        ("E", "s", "pre", "percent", "2002Q1", 1, 2.0, "parsed", 3.0),
        ("E", "s", "pre", "percent", "2003Q1", 0, 3.0, "parsed", 3.0),
        ("E", "s", "pre", "percent", "2003Q1", 1, 3.0, "refusal", np.nan),
    ])
    summary = summarize(panel).set_index("variant")
    assert summary.loc["C", "rank_accuracy"] == 0.5           # one of the two parsed picks is right
    assert summary.loc["C", "parse_rate"] == pytest.approx(2 / 3)
    assert summary.loc["E", "draw_spread"] == pytest.approx((0.05 + 1.0) / 2)  # dates with both draws parsed
    assert summary.loc["E", "draw_agree_within_band"] == 0.5 and summary.loc["E", "n_draw_pairs"] == 2


def test_echoes_of_the_prompt_and_a_constant_guess_are_said():
    panel = panel_of([("B", "s", "pre", "percent", f"2001Q{q}", 0, t, "parsed", v)
                      for q, (t, v) in enumerate([(5.0, 2.1), (6.0, 2.1), (7.0, 2.1), (-8.0, 2.2)], start=1)])
    panel["prompt_echo"] = [True, False, False, False]
    row = summarize(panel).iloc[0]
    assert row.n_prompt_echo == 1 and "1 of 4 parsed values are only numbers of the prompt's own example" in row.note
    assert row.pearson_r < -0.9 and "r rests on 2 distinct answers (2.1, 2.2)" in row.note


def test_truncated_replies_counted_and_the_parse_rate_called_a_lower_bound():
    panel = panel_of([
        ("fabricated_series", "x", "pre", "percent", "2001Q1", 0, np.nan, "unparsed", np.nan),
        ("fabricated_series", "x", "pre", "percent", "2001Q2", 0, np.nan, "refusal", np.nan),
        ("fabricated_series", "x", "pre", "percent", "2001Q3", 0, np.nan, "parsed", 2.0),
    ])
    panel["truncated"] = [1.0, 0.0, np.nan]
    row = summarize(panel).iloc[0]
    assert (row.n_truncated, row.n_length_unknown, row.n_cut_unparsed) == (1, 1, 1)
    assert "lower bound" in row.note


def test_factor_shuffle_null_keeps_the_date_and_swaps_the_series():
    # Two series: the only sibling is drawn every time, so the null is exact. a's recall hits its truth on 3 of 4
    # dates; b's estimates hit a's truth on 1 of them (2001Q2). b always answers 0.0 (a constant guess), which the
    # null exposes: a's estimates land within 25 bps of b's truth as often as b's own constant does.
    periods = ["2001Q1", "2001Q2", "2001Q3", "2001Q4"]
    a_truth, a_recall = [1.0, 2.0, 3.0, 4.0], [1.1, 2.0, 3.2, 5.0]
    b_truth, b_recall = [0.1, 2.1, 0.0, -0.2], [0.0, 0.0, 0.0, 0.0]
    panel = panel_of([("A", "a", "pre", "percent", p, 0, t, "parsed", v) for p, t, v in zip(periods, a_truth,
                                                                                              a_recall)]
                     + [("A", "b", "pre", "percent", p, 0, t, "parsed", v) for p, t, v in zip(periods, b_truth,
                                                                                                b_recall)])
    summary = summarize(panel, shuffle_reps=30).set_index("series")
    assert summary.loc["a", "within_band"] == 0.75
    assert summary.loc["a", "shuffle_chance"] == pytest.approx(0.0)      # b's zeros never within 25 bps of a's truth
    assert summary.loc["a", "shuffle_p"] == pytest.approx(1 / 31)
    assert summary.loc["b", "within_band"] == 0.75                        # the constant 0 lands on 3 of b's 4 dates
    assert summary.loc["b", "shuffle_chance"] == pytest.approx(0.25)      # a's 2.0 lands within 25 bps of 2.1
    one = summarize(panel[panel["series"] == "a"]).iloc[0]
    assert math.isnan(one.shuffle_chance)                                  # no sibling, no null


def test_bootstrap_and_date_permutation_are_seeded():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=12)
    recall = truth + rng.normal(scale=0.1, size=12)
    assert metrics.pearson_bootstrap(recall, truth, 300, 5) == metrics.pearson_bootstrap(recall, truth, 300, 5)
    low, high, p = metrics.date_permutation(recall, truth, 200, 3)
    assert p == pytest.approx(1 / 201)                        # no permutation reaches the near-perfect r
    assert low < 0 < high
    low, high, p = metrics.date_permutation(rng.normal(size=12), truth, 200, 3)
    assert p > 0.01


def test_r_undefined_with_too_few_pairs_or_a_constant():
    r, low, high = metrics.pearson_bootstrap(np.array([1.0, 2.0]), np.array([1.0, 3.0]), 100, 1)
    assert math.isnan(r) and math.isnan(low) and math.isnan(high)
    # a constant recall (np.std of [0.1] * 3 is 1.4e-17, not 0) has no correlation, not r = -0.00
    assert math.isnan(metrics.pearson(np.array([0.1, 0.1, 0.1]), np.array([1.0, 2.0, 4.0])))


def test_entropy_with_rest_bucket_over_the_top_5():
    # top-2 candidates 0.5 and 0.25, rest 0.25: H = 0.5·1 + 0.25·2 + 0.25·2 = 1.5 bits
    assert readouts.entropy_bits([math.log(0.5), math.log(0.25)]) == pytest.approx(1.5)
    assert readouts.entropy_bits([0.0]) == pytest.approx(0.0)  # all mass on one token, nothing left over
    # App. R's top-5: of seven candidates 0.3, 0.2, 0.1 x 5, the five largest and a rest of 0.2
    seven = [math.log(p) for p in (0.1, 0.3, 0.1, 0.1, 0.2, 0.1, 0.1)]
    five = np.array([0.3, 0.2, 0.1, 0.1, 0.1, 0.2])
    assert readouts.entropy_bits(seven) == pytest.approx(float(-(five * np.log2(five)).sum()))


def test_entropy_table_reads_only_value_tokens():
    panel = pd.DataFrame({"variant": "A", "series": "u", "window": "pre", "status": ["parsed", "parsed", "unparsed"],
                          "entropy_bits": [0.5, 1.5, 3.0], "first_token": ["+", "4", "The"]})
    row = readouts.summarize_entropy(panel).iloc[0]
    assert row.n == 3 and row.n_value_first == 2 and row.mean_entropy_bits == 1.0
    assert row.mean_entropy_all == pytest.approx(5 / 3) and "'The' x1" in row.first_tokens
    words = readouts.summarize_entropy(panel.assign(first_token="The")).iloc[0]
    assert words.n_value_first == 0 and math.isnan(words.mean_entropy_bits)


def test_candidate_score_takes_the_answer_tokens():
    tokens = [[1, "Answer", -1.0], [2, ":", -1.0], [3, " +", -2.0], [4, "5", -4.0], [5, ".", -1.0], [6, "25", -3.0]]
    assert readouts.candidate_score(tokens, "+5.25") == (pytest.approx(-2.5), 4)


def test_ranking_by_hand():
    scored = pd.DataFrame({
        "series": "s", "window": "pre",
        "period": ["1"] * 5 + ["2"] * 5,
        "kind": list(readouts.KINDS) * 2,
        "score": [-1.0, -2.0, -3.0, -4.0, -5.0,      # date 1: the true value wins
                  -2.0, -3.0, -1.0, -4.0, -1.5],     # date 2: the adjacent date wins, true is third
    })
    ranks = readouts.rank(scored)
    assert ranks["rank_true"].tolist() == [1, 3] and ranks["top1"].tolist() == [True, False]
    assert ranks["gap"].tolist() == [1.0, -1.0]               # Tab. 18: true minus the best other candidate
    row = readouts.summarize_ranking(ranks).iloc[0]
    assert row.mean_gap == 0.0
    assert row.top1_accuracy == 0.5 and row.mean_rank_true == 2.0 and row.chance_top1 == 0.2
    assert row.chance_mean_rank == 3.0 and row.loses_to_adjacent_date == 1 and row.loses_to_random_decoy == 0


def test_candidates_kinds_and_duplicates():
    dates = pd.to_datetime(["2001-01-01", "2001-04-01", "2001-07-01"])
    table = pd.DataFrame({"series": ["a"] * 3 + ["b"] * 3, "date": list(dates) * 2,
                          "period": ["2001Q1", "2001Q2", "2001Q3"] * 2, "value": [1.5, 1.5, -2.25, 7.0, 8.0, 9.0],
                          "label": ["series a"] * 3 + ["series b"] * 3, "unit": "percent", "frequency": "quarter",
                          "window": "pre"})
    out = readouts.candidates(table.iloc[[0]], table, seed=1)
    # the adjacent date's value (1.5) equals the true value: left out; two decimals as in the series
    assert out["kind"].tolist() == ["true", "sign_flipped", "other_series", "random_decoy"]
    assert out["candidate"].tolist()[:3] == ["+1.50", "-1.50", "+7.00"]
    assert out["text"].iloc[0].startswith("Question: What was series a in the first quarter of 2001?")
    assert out["text"].iloc[0].endswith("\nAnswer: +1.50")
    decoy = float(out["candidate"].iloc[3])
    assert -2.25 <= decoy <= 1.5


def test_leakshare_perfect_recall():
    # M = F: the residual of S on M is orthogonal to F, so rho(e, F) = 0 and LeakShare = 1; ceiling min(1, 1/rho) = 1
    frame = pd.DataFrame({"truth": [1.0, 2, 3, 4], "recall": [1.0, 2, 3, 4], "signal": [1.0, 2, 3, 5]})
    out = leakshare.attribute(frame)
    assert out["rho_residual_truth"] == pytest.approx(0.0, abs=1e-12)
    assert out["leakshare"] == pytest.approx(1.0) and out["ceiling"] == 1.0


def test_leakshare_signal_exactly_linear_in_recall():
    # S = 0.1 M + 0.05 exactly: the residual is zero (only float rounding), so rho(e, F) = 0 and LeakShare = 1,
    # not the correlation of rounding noise with F (which gave 1.99 or 0.11 before)
    m = np.array([0.3, -1.2, 2.1, 0.4, -0.7, 1.6])
    for recall in (m, np.array([1.0, 2, 3, 4, 5, 6.5])):
        truth = recall + np.array([0.2, -0.1, 0.3, -0.4, 0.1, 0.05])
        out = leakshare.attribute(pd.DataFrame({"truth": truth, "recall": recall, "signal": 0.1 * recall + 0.05}))
        assert out["rho_residual_truth"] == 0.0
        assert out["leakshare"] == pytest.approx(1.0)


def test_leakshare_ceiling_bounds_a_sign_flipped_recall():
    # M recalls F with the sign flipped and S = -M: all of S's truth-correlation runs through M (LeakShare = 1),
    # so the worst-case ceiling must be 1 (|rho(M, F)| / rho(S, F) = 1), not rho(M, F) / rho(S, F) = -1
    truth = np.array([1.0, -0.5, 2.0, 0.3, -1.1])
    recall = -truth + np.array([0.1, -0.2, 0.05, 0.3, -0.1])
    out = leakshare.attribute(pd.DataFrame({"truth": truth, "recall": recall, "signal": -recall}))
    assert out["rho_recall_truth"] < 0 and out["leakshare"] == pytest.approx(1.0)
    assert out["ceiling"] == 1.0 and out["ceiling"] >= out["leakshare"] - 1e-12
    half = leakshare.attribute(pd.DataFrame({"truth": truth, "recall": -truth + np.array([2.0, -1, 0, 1, -2.0]),
                                             "signal": truth}))
    assert half["ceiling"] == pytest.approx(abs(half["rho_recall_truth"]))    # rho(S, F) = 1


def test_leakshare_recall_without_truth_content():
    # M is uncorrelated with F and S = F + M: regressing S on M leaves F (+ constant), so rho(e, F) = 1 and
    # 1 - rho(e,F)^2 / rho(S,F)^2 < 0: clipped to 0 (Eq. 4 is in [0, 1]); ceiling = rho(M, F) / rho(S, F) = 0
    frame = pd.DataFrame({"truth": [1.0, 2, 3, 4], "recall": [1.0, -1, -1, 1], "signal": [2.0, 1, 2, 5]})
    out = leakshare.attribute(frame)
    rho_sf = math.sqrt(1.25) / 1.5
    assert out["rho_signal_truth"] == pytest.approx(rho_sf)
    assert out["rho_residual_truth"] == pytest.approx(1.0)
    assert out["leakshare"] == 0.0 and "clipped to 0" in out["note"]
    assert out["ceiling"] == pytest.approx(0.0, abs=1e-12)
    assert "worst-case aligned" in out["ceiling_assumptions"]


def test_leakshare_is_eq_4_squared():
    # a signal that is part recall, part truth: 1 - (rho(e,F)/rho(S,F))^2, not the unsquared 1 - rho(e,F)/rho(S,F)
    rng = np.random.default_rng(3)
    truth = rng.normal(size=400)
    recall = truth + rng.normal(size=400)
    signal = recall + 0.6 * truth + 0.5 * rng.normal(size=400)
    out = leakshare.attribute(pd.DataFrame({"truth": truth, "recall": recall, "signal": signal}))
    ratio = out["rho_residual_truth"] / out["rho_signal_truth"]
    assert 0.2 < ratio < 0.8
    assert out["leakshare"] == pytest.approx(1 - ratio ** 2) and out["leakshare"] > 1 - ratio


def test_leakshare_on_the_authors_transmission_data():
    # App. N: "LeakShare = 99.9% in both cells"; the authors' 53_residualization_variant.py gives 0.999 for both.
    # S = the transmission reply read by lapbias's parser, M = the authors' parsed Variant-A recall, F = Mkt-RF.
    from lapbias.leak.parse import parse_value

    data = pd.read_csv(Path(__file__).parent / "fixtures" / "numleak_transmission.csv", dtype={"response": str})
    data["signal"] = [parse_value(r, scale=(-1, 1)).value for r in data["response"]]
    out = {model: leakshare.attribute(part.rename(columns={"recall_estimate": "recall", "truth_mktrf": "truth"}))
           for model, part in data.groupby("model_name")}
    sonnet, opus = out["claude-sonnet-4.6"], out["claude-opus-4.7"]
    assert (sonnet["n_dates"], opus["n_dates"]) == (77, 40)
    assert sonnet["rho_signal_truth"] == pytest.approx(0.739, abs=5e-4)      # "+0.74 to ... +0.02"
    assert sonnet["rho_residual_truth"] == pytest.approx(0.022, abs=5e-4)
    assert sonnet["leakshare"] == pytest.approx(0.99914, abs=1e-5) and opus["leakshare"] == pytest.approx(0.99919,
                                                                                                          abs=1e-5)
    assert sonnet["ceiling"] == opus["ceiling"] == 1.0 and opus["leakshare"] <= opus["ceiling"]


def test_leakshare_needs_dates_and_a_correlation():
    assert "fewer than 4" in leakshare.attribute(pd.DataFrame({"truth": [1.0], "recall": [1.0],
                                                                "signal": [1.0]}))["note"]
    out = leakshare.attribute(pd.DataFrame({"truth": [1.0, 2, 3, 4], "recall": [1.0, 2, 3, 4],
                                            "signal": [4.0, 3, 2, 1]}))
    assert out["leakshare"] == pytest.approx(1.0) and math.isnan(out["ceiling"]) and "negative" in out["note"]


def test_selectivity_matrix():
    dates = pd.to_datetime(["2001-01-01", "2001-04-01", "2001-07-01", "2001-10-01"])
    table = pd.DataFrame({"series": ["a"] * 4 + ["b"] * 4, "date": list(dates) * 2,
                          "value": [1.0, 2, 3, 4, 4.0, 1, 3, 2]})
    panel = pd.DataFrame({"variant": "A", "series": "a", "date": dates, "status": "parsed",
                          "value": [1.1, 2.1, 2.9, 4.2]})
    out = metrics.selectivity(panel, table).set_index("truth_series")
    assert out.loc["a", "pearson_r"] == pytest.approx(np.corrcoef([1.1, 2.1, 2.9, 4.2], [1, 2, 3, 4])[0, 1])
    assert out.loc["b", "pearson_r"] == pytest.approx(np.corrcoef([1.1, 2.1, 2.9, 4.2], [4, 1, 3, 2])[0, 1])
    assert bool(out.loc["a", "own_series"]) and out.loc["a", "n"] == 4


def test_attribution_of_a_user_signal(tmp_path):
    from lapbias.config import ModelConfig
    from lapbias.errors import InputDataError
    from lapbias.leak.config import LeakConfig, LeakRun
    from lapbias.leak.pipeline import _attribution, user_signal
    from lapbias.leak.probes import Item

    dates = pd.to_datetime(["2001-01-01", "2001-04-01", "2001-07-01", "2001-10-01", "2002-01-01"])
    panel = pd.DataFrame({"variant": "A", "series": "u", "date": dates, "window": ["pre"] * 4 + ["holdout"],
                          "truth": [1.0, 2, 3, 4, 5], "status": ["parsed"] * 4 + ["refusal"],
                          "value": [1.0, 3, 2, 4, np.nan], "frequency": "quarter"})
    items = [Item("A", "u", "unemployment", dates[0], "2001Q1", "pre", "quarter", "percent", 1.0, "prompt", 8, ())]
    path = tmp_path / "signal.csv"   # dated inside each quarter: aligned to the quarter
    path.write_text("date,signal\n2001-02-15,0.1\n2001-04-01,0.4\n2001-09-30,0.2\n2001-11-02,0.5\n2002-01-01,0.9\n")
    run = LeakRun(leak=LeakConfig(signal_path=str(path), transmission_series="u"), model=ModelConfig())
    signal = user_signal(run, "u", items)
    out = _attribution(run, panel, pd.DataFrame({"series": ["u"]}), signal).set_index("window")
    expected = leakshare.attribute(pd.DataFrame({"signal": [0.1, 0.4, 0.2, 0.5], "recall": [1.0, 3, 2, 4],
                                                 "truth": [1.0, 2, 3, 4]}))
    assert out.loc["all", "n_dates"] == 4                     # the refused date has no recall
    assert out.loc["all", "leakshare"] == pytest.approx(expected["leakshare"])
    assert out.loc["all", "signal"].startswith("user signal")
    path.write_text("date,signal\n2001-01-01,0.1\n2001-02-01,0.2\n")
    with pytest.raises(InputDataError, match="two signals for the period starting 2001-01-01"):
        user_signal(run, "u", items)
    path.write_text("date,signal\n2001-01-01,high\n02/01/2001,0.3\n")
    with pytest.raises(InputDataError) as err:
        user_signal(run, "u", items)
    assert "line 2: signal 'high' is not a finite number" in str(err.value)
    assert "line 3: date '02/01/2001' is not an ISO date (YYYY-MM-DD): a day/month date is ambiguous" in str(err.value)


def test_temporal_controls_by_hand():
    from lapbias.leak import temporal

    rows = [("1990Q1", True, 1.0, 1.1), ("1995Q1", False, 2.0, 3.0), ("2000Q1", False, 3.0, 3.1),
            ("2005Q1", True, 4.0, 4.6), ("2010Q1", False, 5.0, 5.05)]
    panel = pd.DataFrame({"variant": "A", "series": "u", "unit": "percent", "frequency": "quarter", "window": "pre",
                          "period": [r[0] for r in rows], "famous": [r[1] for r in rows], "truth": [r[2] for r in rows],
                          "value": [r[3] for r in rows], "status": "parsed"})
    famous = temporal.famous_split(panel, {"percent": 0.25}).set_index("slice")
    assert famous.loc["famous", "within_band"] == 0.5 and famous.loc["other", "within_band"] == pytest.approx(2 / 3)
    assert famous.loc["famous", "lift"] == pytest.approx(0.5 - 2 / 3)
    gradient = temporal.cutoff_gradient(panel, __import__("datetime").date(2020, 12, 31), {"percent": 0.25}).iloc[0]
    years = np.array([(pd.Timestamp("2020-12-31") - pd.Period(p, "Q").end_time.normalize()).days / 365.25
                      for p, *_ in rows])
    hits = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    assert gradient.slope_within_band_per_year == pytest.approx(np.polyfit(years, hits, 1)[0])
    assert gradient.slope_parse_rate_per_year == 0.0 and math.isnan(gradient.p_parse_rate)   # every query parsed
    assert temporal.famous_split(panel.assign(famous=False), {"percent": 0.25}).empty
