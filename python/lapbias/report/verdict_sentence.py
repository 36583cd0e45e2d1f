"""The one sentence that explains the verdict, printed under it at the end of `lapbias run` and `lapbias report`.

REPORT.md's section 6 gives the verdict paragraph (report/verdict.py); the terminal gets the label and this one
sentence, made from what the paragraph is made of: the label, the parts of the rule that failed (Verdict.failed),
the pre-cutoff beta_3 and the p-value the rule read (results/detection.csv: the CRV1 t test's, or with fewer entity
clusters than wild_below_clusters the wild cluster bootstrap's, verdict.inference) and, for the power rule, the
number and threshold of the condition that decided (results/power.csv: the minimum detectable share against
detectable_share, the upper confidence bound's share against max_ucb_share; no share when the standalone LLM effect
b1 is not positive). A label or failure this module does not know (a rule added to verdict.py later) points to
section 6 instead of guessing.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config import EstimateConfig
from .verdict import (BETA3, CONTAMINATION, MIXED, NO_EVIDENCE, NO_EVIDENCE_UNTESTED, UNDERPOWERED, Verdict,
                      inference, placebo_power, term_row)

SEE_REPORT = "section 6 of REPORT.md gives the reasons."


def _power_clause(power: dict[str, float], thresholds: EstimateConfig) -> str:
    """Both power conditions of a cleared test, each with its threshold."""
    return (f"an interaction of ≥ {power.get('mde_share', math.nan):.0%} of the LLM's own effect per SD of LAP would "
            f"have been detected with 80% probability (at most {thresholds.detectable_share:.0%}, detectable_share), "
            f"and the one-sided {1 - thresholds.detection_alpha:.0%} upper bound excludes an interaction above "
            f"{power.get('ucb_share', math.nan):.0%} (at most {thresholds.max_ucb_share:.0%}, max_ucb_share)")


def _underpowered(failed: set[str], null: str, power: dict[str, float], thresholds: EstimateConfig) -> str | None:
    if "detection regression" in failed:
        return "the detection regression could not be estimated, so this sample cannot test for contamination."
    if "beta_3 omitted" in failed:
        return ("beta_3 is not identified: LAP or mu_hat has no variation within the entity and period effects of the "
                "pre-cutoff sample.")
    if "LAP saturated" in failed:
        return (f"{null}, but the recall LAP is saturated (the model answers every recall query with a direction, so "
                "the high-LAP half's mean barely exceeds the low half's): neither a quiet beta_3 nor the validation "
                "halves, split on noise, can be judged.")
    if "LAP variation" in failed:
        return (f"{null}, but LAP shows no meaningful variation (the high-LAP half's mean barely exceeds the low "
                "half's), so a quiet beta_3 says nothing about contamination.")
    if "power" not in failed:
        return None
    mde, ucb, b1 = (power.get(key, math.nan) for key in ("mde_share", "ucb_share", "b1_standalone"))
    if math.isfinite(mde) and mde > thresholds.detectable_share:
        return (f"{null}, but its minimum detectable effect is {mde:.0%} of the LLM's own effect per SD of LAP, above "
                f"{thresholds.detectable_share:.0%} (detectable_share), so a contamination of the paper's size could "
                "be missed.")
    if math.isfinite(mde) and math.isfinite(ucb):
        return (f"{null}, but the interval includes an interaction of {ucb:.0%} of the LLM's own effect per SD of LAP "
                f"(one-sided {1 - thresholds.detection_alpha:.0%} upper bound, above {thresholds.max_ucb_share:.0%}, "
                "max_ucb_share), so a contamination of consequence is not excluded.")
    if math.isfinite(b1) and b1 > 0:
        return (f"{null}, but its upper bound and minimum detectable effect cannot be computed (with few clusters the "
                "CV3 jackknife is not defined: beta_3 rests on one entity), so it cannot show that a contamination "
                "of consequence would have been found.")
    own = (f"the LLM's forecasts have no positive effect of their own (standalone b1 = {b1:.4g})"
           if math.isfinite(b1) else "the LLM's own effect (standalone b1) could not be estimated")
    return (f"{null}, and {own}, so no contamination share the test could detect can be stated: it cannot show that "
            "a contamination of consequence would have been found.")


def _mixed(failed: set[str], significant: bool, p: str, null: str, read) -> str | None:
    if "placebo" in failed:
        return ("beta_3 > 0 survives after the training cutoff (the placebo fails), so LAP proxies for something other "
                "than memorization.")
    if "detection regression" in failed:
        return "beta_3 has no standard error, hence no p-value, so the test could not be run."
    if "beta_3 negative" in failed:
        return (f"beta_3 < 0 before the training cutoff (one-sided p for beta_3 < 0 = {read.p_lower:.4f}, two-sided "
                f"p = {read.p_two_sided:.4f}): forecast accuracy falls as LAP rises, which memorization cannot "
                "produce (the paper's Proposition 1), so LAP proxies for something else.")
    parts = {"validation": "the validation pattern is absent",
             "placebo infeasible": "the post-cutoff placebo cannot be run",
             "post-cutoff LAP saturated": "the post-cutoff LAP is saturated, so the placebo cannot be judged",
             "post-cutoff LAP flat": "the post-cutoff LAP neither varies nor collapsed, so the placebo cannot be "
                                     "judged",
             "placebo uninformative": "the post-cutoff placebo could not have excluded the interaction found "
                                      "before the cutoff"}
    if significant and failed and failed <= set(parts):
        what = " and ".join(part for key, part in parts.items() if key in failed)
        return (f"beta_3 > 0 before the training cutoff ({p}), but {what}, so memorization cannot be separated from "
                "other channels.")
    if "validation" in failed and not significant:
        return (f"{null}, but the validation regressions contradict the memorization pattern or cannot be estimated, "
                "so LAP cannot be read as a measure of memorization.")
    return None


def explain(verdict: Verdict, detection: pd.DataFrame | None, thresholds: EstimateConfig,
            power: pd.DataFrame | dict | None = None) -> str:
    """One sentence: why the pre-cutoff beta_3 test ended in `verdict` (module docstring); `power` is what
    verdict.decide read (results/power.csv as a table or {quantity: value})."""
    if isinstance(power, pd.DataFrame):
        power = dict(zip(power["quantity"], power["value"].astype(float)))
    power = power or {}
    row = term_row(detection, "pre", BETA3)
    estimated = row is not None and pd.notna(row["coef"]) and pd.notna(row["p_one_sided"])
    read = inference(row, thresholds.wild_below_clusters, thresholds.wild_bootstrap_reps) if estimated else None
    p = (f"{'wild cluster bootstrap ' if read.wild else ''}one-sided p = {read.p_one_sided:.4f}" if estimated
         else "")
    significant = estimated and row["coef"] > 0 and read.p_one_sided < thresholds.detection_alpha
    failed = set(verdict.failed)
    null = f"beta_3 is not significantly greater than zero ({p})"
    sentence = None
    if verdict.label == CONTAMINATION:
        excludes = (" and excludes the pre-cutoff interaction" if placebo_power(power, thresholds)[0]
                    else " (with no post-cutoff upper bound to compare, e.g. post-cutoff LAP collapsed)")
        sentence = (f"beta_3 > 0 before the training cutoff ({p}), the recalled direction of high-LAP rows predicts "
                    "the outcomes significantly better per SD than that of low-LAP rows, and the post-cutoff placebo "
                    f"passes{excludes}: the in-sample forecasts draw on memorized outcomes.")
    elif verdict.label == NO_EVIDENCE and estimated:
        sentence = (f"{null}, and the test had power: {_power_clause(power, thresholds)}; this assumes the LLM's "
                    "genuine accuracy does not vary with LAP.")
    elif verdict.label == NO_EVIDENCE_UNTESTED and estimated:
        sentence = (f"{null}, so no contamination rises with LAP, but the high-LAP recall does not predict the "
                    "outcomes better than the low-LAP recall, so LAP is not shown to measure memorization and the "
                    "test's power against memorization-driven contamination is unknown.")
    elif verdict.label == UNDERPOWERED:
        sentence = _underpowered(failed, null, power, thresholds)
    elif verdict.label == MIXED:
        sentence = _mixed(failed, significant, p, null, read)
    return sentence or SEE_REPORT


def low_parse_rate(parsed: pd.Series, min_parse_rate: float) -> str:
    """What opens the sentence (and REPORT.md's section 6) when fewer forecasts parsed than [forecast] min_parse_rate:
    the run went on only because the user accepted the rate (--allow-low-parse-rate, protocol Step 1: "ask the user
    how to proceed"), and the regressions saw only the parsed rows; "" otherwise."""
    parsed = parsed.astype(bool)
    if not len(parsed) or parsed.mean() >= min_parse_rate:
        return ""
    return (f"only {int(parsed.sum())} of {len(parsed)} forecasts parsed ({parsed.mean():.1%}, below [forecast] "
            f"min_parse_rate = {min_parse_rate:.0%}; the run went on because the low rate was accepted, "
            "--allow-low-parse-rate), and the regressions use the parsed rows alone")
