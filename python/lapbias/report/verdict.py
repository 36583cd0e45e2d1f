"""The verdict (protocol, "Final report" item 6), with the rule's terms made precise (docs/contracts.md).

All on the pre-cutoff detection coefficient beta_3 (term c.mu_hat#c.lap):
- significant beta_3: coef > 0 and one-sided p < detection_alpha (0.05);
- validation pattern: high-LAP theta > 0 with two-sided p < validation_alpha (0.05), and low-LAP theta not
  significant (two-sided p >= validation_alpha);
- placebo passes: post-cutoff one-sided p for beta_3 > placebo_alpha (0.10) (protocol Step 5); infeasible without
  post-cutoff rows;
- meaningful LAP variation: pre-cutoff SD(lap) / mean(lap) >= min_lap_cv (0.10).
Order: a failed placebo -> Mixed/invalid; significant beta_3 with validation and placebo -> Contamination detected;
significant beta_3 otherwise -> Mixed/invalid (naming what failed); non-significant beta_3 -> No evidence of
contamination with meaningful LAP variation, else Underpowered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..config import EstimateConfig

BETA3 = "c.mu_hat#c.lap"
CONTAMINATION = "Contamination detected"
NO_EVIDENCE = "No evidence of contamination"
UNDERPOWERED = "Underpowered"
MIXED = "Mixed/invalid"


@dataclass
class Verdict:
    label: str
    failed: list[str] = field(default_factory=list)
    paragraph: str = ""


def _term(table: pd.DataFrame | None, model: str, term: str) -> pd.Series | None:
    if table is None or table.empty:
        return None
    rows = table[(table["model"] == model) & (table["term"] == term)]
    return None if rows.empty else rows.iloc[0]


def decide(detection: pd.DataFrame, validation: pd.DataFrame | None, placebo: pd.DataFrame | None,
           lap_pre: pd.Series, thresholds: EstimateConfig) -> Verdict:
    beta3 = _term(detection, "pre", BETA3)
    if beta3 is None or math.isnan(beta3["coef"]):
        return Verdict(MIXED, ["detection regression"], "The detection regression has no estimate of beta_3 "
                       "(see results/estimation_notes.csv): the test could not be run.")
    if math.isnan(beta3["p_one_sided"]):  # an estimate without a p-value is not "not significant"
        return Verdict(MIXED, ["detection regression"], f"The detection regression estimates beta_3 = "
                       f"{beta3['coef']:.4g} but gives it no p-value (no standard error; see "
                       "results/estimation_notes.csv): the test could not be run.")
    significant = beta3["coef"] > 0 and beta3["p_one_sided"] < thresholds.detection_alpha
    high, low = _term(validation, "high_lap", "ud"), _term(validation, "low_lap", "ud")
    validation_present = (high is not None and high["coef"] > 0 and high["p"] < thresholds.validation_alpha
                          and low is not None and low["p"] >= thresholds.validation_alpha)
    post = _term(placebo, "post", BETA3)
    placebo_feasible = post is not None and not math.isnan(post["p_one_sided"])
    placebo_passes = placebo_feasible and post["p_one_sided"] > thresholds.placebo_alpha
    mean = float(lap_pre.mean()) if len(lap_pre) else math.nan
    cv = float(lap_pre.std(ddof=1)) / mean if mean and not math.isnan(mean) else math.nan
    variation = not math.isnan(cv) and cv >= thresholds.min_lap_cv

    b3 = (f"The pre-cutoff interaction beta_3 = {beta3['coef']:.4g} (t = {beta3['t']:.2f}, one-sided p = "
          f"{beta3['p_one_sided']:.4f}, results/detection.csv)")
    place = (f"the post-cutoff placebo beta_3 = {post['coef']:.4g} (one-sided p = {post['p_one_sided']:.4f}, "
             "results/placebo.csv)" if placebo_feasible else "the placebo is infeasible (no post-cutoff rows)")
    valid = ("the validation pattern is present (high-LAP theta positive and significant, low-LAP theta not)"
             if validation_present else "the validation pattern is absent (results/validation.csv)")

    if placebo_feasible and not placebo_passes:
        return Verdict(MIXED, ["placebo"], f"{b3}; {place}, so the placebo fails: a beta_3 > 0 after the "
                       "training cutoff means the recall measure proxies for something other than memorization. "
                       f"Also, {valid}. Verdict: {MIXED} (placebo failed).")
    if significant and validation_present and placebo_passes:
        return Verdict(CONTAMINATION, [], f"{b3} is positive and significant; {valid}; and {place} passes. "
                       f"Verdict: {CONTAMINATION}: the in-sample LLM forecasts are contaminated by lookahead bias. "
                       "Restrict backtests to data after the model's training cutoff. Prompt-level fixes (masking, "
                       "instructions to ignore future information) are not a remedy unless this test, rerun, "
                       "shows they work.")
    if significant:
        failed = ([] if validation_present else ["validation"]) + ([] if placebo_feasible else ["placebo infeasible"])
        return Verdict(MIXED, failed, f"{b3} is positive and significant, but {valid} and {place}. "
                       f"Verdict: {MIXED} ({', '.join(failed)}): memorization cannot be separated from other "
                       "channels.")
    if variation:
        return Verdict(NO_EVIDENCE, [], f"{b3}: beta_3 is not significantly greater than zero while LAP varies "
                       f"meaningfully (pre-cutoff SD/mean = {cv:.2f} >= {thresholds.min_lap_cv:.2f}); {valid}; "
                       f"{place}. Verdict: {NO_EVIDENCE}.")
    return Verdict(UNDERPOWERED, ["LAP variation"], f"{b3}: beta_3 is not significantly greater than zero, but LAP barely "
                   f"varies (pre-cutoff SD/mean = {cv:.2f} < {thresholds.min_lap_cv:.2f}), so the test has little "
                   f"power; {valid}; {place}. Verdict: {UNDERPOWERED}.")
