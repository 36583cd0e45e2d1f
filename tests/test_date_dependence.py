"""REPORT.md names the risk of date dependence (report/describe.date_dependence) when the period fixed effect is
coarser than the target date and the answers move with the date: measured on the self-validation's base model
(benchmarks/results/calibration_run_pairs.csv), whose recalled direction correlates 0.68 among firms on one date."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lapbias.panel import integer_ids
from lapbias.report.describe import date_dependence, within_date_correlation

REPO = Path(__file__).resolve().parents[1]


def _base_panel() -> pd.DataFrame:
    pairs = pd.read_csv(REPO / "benchmarks/results/calibration_run_pairs.csv")
    base = pairs[pairs["model"] == "base"].copy()
    base["period_num"] = integer_ids(pd.to_datetime(base["target_date"]).dt.to_period("M").astype(str))
    base["entity_num"] = integer_ids(base["entity_id"])
    return base.assign(ud_dir=base["ud"] / base["lap_recall"])


def test_the_base_models_recalled_direction_moves_with_the_date_and_the_report_says_so():
    panel = _base_panel()
    pre = panel[panel["post"] == 0]
    assert within_date_correlation(pre, "ud_dir") > 0.5
    assert abs(within_date_correlation(pre, "mu_hat")) < 0.1
    text = date_dependence(panel, "entity", "month")
    assert "**Date dependence:**" in text and "89% of pre-cutoff rows" in text and "ud_dir 0.68" in text
    assert 'cluster = \"entity date\"' in text and "do not cover" in text
    assert "covers it" in date_dependence(panel, "entity date", "month")
    assert date_dependence(panel, "entity", "day") == ""  # a daily period effect absorbs the date


def test_no_note_when_answers_do_not_move_with_the_date():
    panel = _base_panel()
    rng = np.random.default_rng(0)
    shuffled = panel.assign(ud_dir=rng.permutation(panel["ud_dir"].to_numpy()),
                            mu_hat=rng.permutation(panel["mu_hat"].to_numpy()))
    assert date_dependence(shuffled, "entity", "month") == ""


def test_within_date_correlation_recovers_a_planted_date_component():
    rng = np.random.default_rng(1)
    dates = np.repeat(np.arange(200), 4)
    shock = rng.normal(size=200)[dates]
    frame = pd.DataFrame({"target_date": dates, "entity_num": np.tile(np.arange(4), 200) + 1,
                          "period_num": dates // 20 + 1, "x": shock + rng.normal(size=dates.size)})
    assert abs(within_date_correlation(frame, "x") - 0.5) < 0.1  # var(shock) / (var(shock) + var(noise))
