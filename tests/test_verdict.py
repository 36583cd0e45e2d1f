"""Every branch of the verdict rule (docs/contracts.md), on hand-built result rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lapbias.config import EstimateConfig
from lapbias.report.verdict import (CONTAMINATION, MIXED, NO_EVIDENCE, NO_EVIDENCE_UNTESTED, UNDERPOWERED, decide,
                                    placebo_check)

BETA3 = "c.mu_hat#c.lap"
LAP = {"sd_lap": 0.29, "lap_gap": 0.5, "lap_relative_gap": 1.0, "beta3_per_sd": 0.23, "placebo_ucb_beta3": 0.1,
       "placebo_ucb_per_sd": 0.03, "pre_minus_post_per_sd": 0.2, "z_pre_minus_post": 2.1, "p_pre_minus_post": 0.018}
POWERED = {"mde_beta3": 0.2, "mde_share": 0.18, "ucb_beta3": 0.15, "ucb_share": 0.12, "b1_standalone": 0.5,
           "sd_lap_within": 0.3, "within_share_lap": 0.9, **LAP}
WEAK = {"mde_beta3": 3.0, "mde_share": 2.5, "ucb_beta3": 2.8, "ucb_share": 2.3, "b1_standalone": 0.5,
        "sd_lap_within": 0.01, "within_share_lap": 0.05, **LAP}
VARIED_LAP, FLAT_LAP = POWERED, WEAK


def row(model, term, coef, t, p, clusters=60, **extra):
    return {"model": model, "term": term, "coef": coef, "t": t, "p": p,
            "p_one_sided": p / 2 if t > 0 else 1 - p / 2, "N_clust": clusters, **extra}


def detection(coef, t, p, clusters=60, **extra):
    return pd.DataFrame([row("pre", "mu_hat", 0.1, 1.0, 0.3, clusters),
                         row("pre", BETA3, coef, t, p, clusters, **extra)])


def validation(high_p, low_p, high_coef=0.5, diff_p=None, low_coef=0.01):
    """Pooled, high- and low-LAP thetas and the difference of the halves' slopes on the recalled direction per SD of
    it (model high_minus_low); the difference's two-sided p defaults to the high-LAP theta's."""
    diff_p = high_p if diff_p is None else diff_p
    diff = high_coef - low_coef
    return pd.DataFrame([row("pooled", "ud", 0.3, 2.0, 0.05), row("high_lap", "ud", high_coef, 3.0, high_p),
                         row("low_lap", "ud", low_coef, 0.2 if low_coef > 0 else -0.2, low_p),
                         row("high_minus_low", "c.ud_dir_std#c.high_lap", diff, 2.0 if diff > 0 else -2.0, diff_p)])


def placebo(t, p, clusters=60, **extra):
    return pd.DataFrame([row("post", BETA3, 0.01 * t, t, p, clusters, **extra)])


@pytest.mark.parametrize("det, val, plc, lap, label, failed", [
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, CONTAMINATION, []),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(2.5, 0.02), VARIED_LAP, MIXED, ["placebo"]),
    (detection(0.8, 3.0, 0.004), validation(0.30, 0.6), placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.01, diff_p=0.4), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6, high_coef=-0.5), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), None, VARIED_LAP, MIXED, ["placebo infeasible"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, NO_EVIDENCE, []),
    # a null high-LAP theta with a powered test: no memorization detected, so LAP's validity is untested -- its own
    # label, not "Underpowered" (the power rule says the test had power)
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), VARIED_LAP, NO_EVIDENCE_UNTESTED,
     ["validation"]),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), FLAT_LAP, UNDERPOWERED, ["power"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), FLAT_LAP, UNDERPOWERED, ["power"]),
    # the final rule's "Mixed/invalid: validation fails": the pattern is contradicted (a significant low-LAP theta,
    # or a significantly negative high-LAP theta), or the validation regressions could not be run
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.01, diff_p=0.4), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6, high_coef=-0.5), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.1, 0.5, 0.62), None, placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(-0.9, -3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, MIXED, ["beta_3 negative"]),
])
def test_decision_rule(det, val, plc, lap, label, failed):
    verdict = decide(det, val, plc, lap, EstimateConfig())
    assert verdict.label == label and verdict.failed == failed
    assert f"Verdict: {label}" in verdict.paragraph


def test_one_sided_p_of_exactly_point_zero_five_is_not_significant():
    verdict = decide(detection(0.8, 2.0, 0.10), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP,
                     EstimateConfig())
    assert verdict.label == NO_EVIDENCE  # p_one_sided = 0.05 is not < 0.05


def test_contamination_paragraph_recommends_post_cutoff_backtests():
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP,
                     EstimateConfig())
    assert "Restrict backtests to data after the model's training cutoff" in verdict.paragraph


def test_underpowered_states_the_minimum_detectable_share():
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), WEAK, EstimateConfig())
    assert verdict.label == UNDERPOWERED and "250% of the standalone LLM effect" in verdict.paragraph


def test_thresholds_are_the_configured_ones():
    lenient = EstimateConfig(max_ucb_share=3.0, detectable_share=3.0)
    assert decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), WEAK, lenient).label == NO_EVIDENCE


def test_non_positive_standalone_effect_is_underpowered_with_the_reason():
    power = {**POWERED, "mde_share": float("nan"), "b1_standalone": -0.1}
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), power, EstimateConfig())
    assert verdict.label == UNDERPOWERED and "b1 = -0.1 is not positive" in verdict.paragraph


def test_omitted_beta3_is_underpowered_not_mixed():
    omitted = pd.DataFrame([row("pre", "mu_hat", 0.1, 1.0, 0.3),
                            {"model": "pre", "term": BETA3, "coef": float("nan"), "t": float("nan"),
                             "p": float("nan"), "p_one_sided": float("nan")}])
    notes = pd.DataFrame([{"model": "detection:pre", "kind": "omitted",
                           "detail": "c.mu_hat#c.lap omitted: collinear with the fixed effects"}])
    verdict = decide(omitted, None, None, None, EstimateConfig(), notes)
    assert verdict.label == UNDERPOWERED and "collinear with the fixed effects" in verdict.paragraph


def test_collapsed_post_cutoff_lap_passes_the_placebo_and_is_not_called_missing():
    collapsed = pd.DataFrame([{"model": "post", "term": t, "coef": float("nan"), "p_one_sided": float("nan")}
                              for t in ("lap", BETA3)])
    notes = pd.DataFrame([{"model": "placebo:post", "kind": "omitted",
                           "detail": "lap omitted: collinear with the fixed effects"}])
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), collapsed, POWERED, EstimateConfig(), notes)
    assert verdict.label == CONTAMINATION and "collapsed" in verdict.paragraph
    assert "no post-cutoff" not in verdict.paragraph


def test_placebo_beta3_without_a_p_value_is_infeasible_not_failed():
    """A post-cutoff beta_3 whose standard error is 0 has no p (reghdfe._finish): the placebo could not be run,
    which is neither a pass nor a "beta_3 > 0 after the cutoff" failure (protocol Step 5)."""
    no_p = pd.DataFrame([{"model": "post", "term": BETA3, "coef": 0.02, "t": float("nan"), "p": float("nan"),
                          "p_one_sided": float("nan")}])
    quiet = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), no_p, POWERED, EstimateConfig())
    assert quiet.label == NO_EVIDENCE and "placebo is infeasible" in quiet.paragraph, quiet.paragraph
    loud = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), no_p, POWERED, EstimateConfig())
    assert loud.label == MIXED and loud.failed == ["placebo infeasible"], loud.paragraph
    assert "nan" not in loud.paragraph


def test_power_sentence_states_the_configured_test_level():
    """The MDE is computed at detection_alpha (estimate/power.py); the verdict must not say 5% when it is 10%."""
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), WEAK,
                     EstimateConfig(detection_alpha=0.10))
    assert "(10% one-sided, 80% power)" in verdict.paragraph and "5% one-sided" not in verdict.paragraph


def _with_unestimated(half):
    """validation.csv when one half's ud is omitted as collinear (protocol._estimated: a row with empty estimates),
    e.g. a low-LAP half whose recall is all censored 'unknown' (LAP = ud = 0, ties go to the low half)."""
    table = validation(0.30, 0.6)
    table.loc[table["model"] == half, ["coef", "t", "p", "p_one_sided"]] = float("nan")
    return table


@pytest.mark.parametrize("half", ["high_lap", "low_lap"])
def test_a_validation_theta_omitted_as_collinear_is_zero_recall(half):
    """ud omitted in one half (constant within the fixed effects there, e.g. a low-LAP half whose recall is all
    censored 'unknown': LAP = ud = 0) carries no recall signal at all: its theta is zero, the 'near zero' of
    protocol Step 3 -- neither a failed validation nor a contradiction. With the other half null too and a quiet
    beta_3 the verdict is "No evidence (LAP untested)", as for a null theta: no memorization detected."""
    notes = pd.DataFrame([{"model": f"validation:{half}", "kind": "omitted",
                           "detail": "ud omitted: collinear with the fixed effects"}])
    verdict = decide(detection(0.1, 0.5, 0.62), _with_unestimated(half), placebo(0.3, 0.8), POWERED,
                     EstimateConfig(), notes)
    assert verdict.label == NO_EVIDENCE_UNTESTED and verdict.failed == ["validation"], verdict.paragraph
    assert "contradicted" not in verdict.paragraph, verdict.paragraph
    assert f"{half.replace('_lap', '')}-LAP half" in verdict.paragraph and "no variation" in verdict.paragraph


def test_a_low_lap_theta_omitted_as_collinear_keeps_the_validation_pattern():
    table = validation(0.01, 0.6)
    table.loc[table["model"] == "low_lap", ["coef", "t", "p", "p_one_sided"]] = float("nan")
    verdict = decide(detection(0.8, 3.0, 0.004), table, placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert verdict.label == CONTAMINATION, verdict.paragraph


@pytest.mark.parametrize("half", ["high_lap", "low_lap"])
def test_a_validation_theta_not_estimated_is_not_null_or_contradicted(half):
    """A theta without a p-value (zero standard error) or a validation regression that failed (no row) is neither
    'null' nor 'significant' (as for beta_3): the validation could not be run -- Mixed/invalid (validation),
    naming the half (docs/contracts.md rule 4)."""
    no_p = validation(0.30, 0.6)
    no_p.loc[no_p["model"] == half, ["t", "p", "p_one_sided"]] = float("nan")
    failed = validation(0.30, 0.6)
    failed = failed[failed["model"] != half]
    for table in (no_p, failed):
        verdict = decide(detection(0.1, 0.5, 0.62), table, placebo(0.3, 0.8), POWERED, EstimateConfig())
        assert verdict.label == MIXED and verdict.failed == ["validation"], verdict.paragraph
        assert "contradicted" not in verdict.paragraph and "is null" not in verdict.paragraph, verdict.paragraph
        assert f"{half.replace('_lap', '')}-LAP theta could not be estimated" in verdict.paragraph


def test_contradicted_validation_names_what_contradicts_it():
    """Protocol, final rule: 'Mixed/invalid: validation fails or placebo fails -- explain which'."""
    low = decide(detection(0.1, 0.5, 0.62), validation(0.30, 0.01), placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert "low-LAP theta is significant" in low.paragraph and "negative" not in low.paragraph, low.paragraph
    high = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6, high_coef=-0.5), placebo(0.3, 0.8), POWERED,
                  EstimateConfig())
    assert "high-LAP theta is significantly negative" in high.paragraph and "low-LAP theta is significant" \
        not in high.paragraph, high.paragraph


def _collapsed_placebo():
    collapsed = pd.DataFrame([{"model": "post", "term": t, "coef": float("nan"), "p_one_sided": float("nan")}
                              for t in ("lap", BETA3)])
    notes = pd.DataFrame([{"model": "placebo:post", "kind": "omitted",
                           "detail": "lap omitted: collinear with the fixed effects"}])
    return collapsed, notes


@pytest.mark.parametrize("det, val, lap, label", [
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), POWERED, NO_EVIDENCE),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), WEAK, UNDERPOWERED),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), POWERED, NO_EVIDENCE_UNTESTED),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.01, diff_p=0.4), POWERED, MIXED),
    (detection(0.8, 3.0, 0.004), validation(0.30, 0.6), POWERED, MIXED),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), POWERED, CONTAMINATION),
])
def test_a_collapsed_placebo_is_said_to_pass_in_every_branch(det, val, lap, label):
    """The collapsed-LAP placebo sentence ended in '...: the placebo' and relied on the Contamination branch to add
    'passes'; every other branch printed the dangling '...: the placebo.'"""
    collapsed, notes = _collapsed_placebo()
    verdict = decide(det, val, collapsed, lap, EstimateConfig(), notes)
    assert verdict.label == label, verdict.paragraph
    assert "the placebo passes" in verdict.paragraph and "the placebo." not in verdict.paragraph, verdict.paragraph
    assert "passes passes" not in verdict.paragraph


def test_a_significantly_negative_beta3_is_mixed_naming_the_two_sided_p():
    """Paper, Proposition 1: beta_3 >= 0 whenever LAP measures memorization. A beta_3 with t = -5 says LAP proxies
    for something else: never "No evidence of contamination" (it was, read one-sidedly)."""
    verdict = decide(detection(-0.9, -5.0, 2e-5), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["beta_3 negative"], verdict.paragraph
    assert "significantly negative" in verdict.paragraph and "two-sided p = 0.0000" in verdict.paragraph
    assert "Proposition 1" in verdict.paragraph
    # the two one-sided tests at detection_alpha: one-sided p for beta_3 < 0 of 0.04 (two-sided 0.08) is negative
    assert decide(detection(-0.3, -1.8, 0.08), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED,
                  EstimateConfig()).label == MIXED
    quiet = decide(detection(-0.1, -1.2, 0.24), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert quiet.label == NO_EVIDENCE, quiet.paragraph


def test_no_evidence_needs_the_upper_confidence_bound_not_only_the_mde():
    """The review's panel (seed 600004, paper-sized contamination): t = 1.66, one-sided p = 0.0516, point share
    0.23, MDE share 0.35, one-sided 95% upper bound of the share 0.46. Under max_ucb_share = 0.37 the MDE alone
    cleared it; the interval includes 46%, so it is Underpowered, the MDE stated beside it."""
    power = {**POWERED, "beta3_share": 0.23, "mde_beta3": 0.35, "mde_share": 0.35, "ucb_beta3": 0.46,
             "ucb_share": 0.46}
    verdict = decide(detection(0.23, 1.66, 0.1032), validation(0.01, 0.6), placebo(0.3, 0.8), power,
                     EstimateConfig(max_ucb_share=0.37))
    assert verdict.label == UNDERPOWERED and verdict.failed == ["power"], verdict.paragraph
    assert "the interval includes an interaction of 46%" in verdict.paragraph
    assert "an interaction of ≥ 35% of the standalone LLM effect per SD of LAP would have been detected with 80% " \
           "probability" in verdict.paragraph
    cleared = decide(detection(0.02, 0.16, 0.87), validation(0.01, 0.6), placebo(0.3, 0.8),
                     {**power, "ucb_share": 0.30}, EstimateConfig(max_ucb_share=0.37))
    assert cleared.label == NO_EVIDENCE, cleared.paragraph


def test_default_threshold_is_a_fifth_and_the_sentence_is_exact():
    """The upper bound's threshold was the paper's point estimate (0.37): 34% power against half the paper's effect.
    The default is 0.20, and the paragraph states the MDE as "an interaction of ≥ X% of the standalone LLM effect per
    SD of LAP would have been detected with 80% probability"."""
    assert EstimateConfig().max_ucb_share == 0.20
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert verdict.label == NO_EVIDENCE
    assert ("an interaction of ≥ 18% of the standalone LLM effect per SD of LAP would have been detected with 80% "
            "probability") in verdict.paragraph, verdict.paragraph
    assert "would have been found" not in verdict.paragraph
    between = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), {**POWERED, "ucb_share": 0.3},
                     EstimateConfig())
    assert between.label == UNDERPOWERED  # 30% > 20%: it was cleared under 0.37


def test_a_clean_model_has_its_own_label():
    """A model that recalls nothing (high- and low-LAP theta null) and whose powered beta_3 is null: the power rule
    says the test had power, so not "Underpowered" (the label of 74% of such panels), but "No evidence of
    contamination (LAP untested)", saying that no memorization was detected and LAP's validity is untested."""
    verdict = decide(detection(0.02, 0.3, 0.76), validation(0.40, 0.7, high_coef=0.02), placebo(0.3, 0.8), POWERED,
                     EstimateConfig())
    assert verdict.label == NO_EVIDENCE_UNTESTED == "No evidence of contamination (LAP untested)", verdict.paragraph
    assert "no memorization is detected by the recall query" in verdict.paragraph
    assert "LAP's validity as a measure of memorization is untested" in verdict.paragraph
    weak = decide(detection(0.02, 0.3, 0.76), validation(0.40, 0.7, high_coef=0.02), placebo(0.3, 0.8), WEAK,
                  EstimateConfig())
    assert weak.label == UNDERPOWERED


@pytest.mark.parametrize("measure, gap, relative, label", [
    ("recall", 2e-6, 7e-6, UNDERPOWERED),      # a recall mass constant to six digits (0.3 +- 2e-6)
    ("recall", 0.02, 1.0, UNDERPOWERED),       # 2 percentage points: absolute, whatever the relative gap
    ("recall", 0.06, 0.1, NO_EVIDENCE),
    ("minkprob", 1e-9, 0.6, NO_EVIDENCE),      # Min-K% (~1e-8): relative, whatever the units
    ("minkprob", 3e-14, 3e-6, UNDERPOWERED),   # constant to six digits
])
def test_lap_must_show_meaningful_variation(measure, gap, relative, label):
    """The shares are invariant to affine maps of LAP, so a recall LAP of 0.3 +- 2e-6 was "No evidence". The final
    rule's "LAP showing meaningful variation": for the recall LAP the high/low-half gap in probability (min_lap_gap,
    5 points); for Min-K% the gap relative to its mean (min_lap_relative_gap)."""
    power = {**POWERED, "lap_gap": gap, "lap_relative_gap": relative}
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), power,
                     EstimateConfig(lap_measure=measure))
    assert verdict.label == label, verdict.paragraph
    if label == UNDERPOWERED:
        assert verdict.failed == ["LAP variation"] and "no meaningful variation" in verdict.paragraph
        assert ("percentage points" if measure == "recall" else "relative") in verdict.paragraph


def test_the_validation_pattern_needs_a_significant_difference_of_the_halves():
    """Step 3's "near zero on the low-LAP half" is a test of theta_high - theta_low > 0 (validation.csv model
    high_minus_low), not the low half's non-significance: an imprecise low half (0.45, p = 0.06) no longer makes the
    pattern, and a significant low half below a significantly larger high half no longer breaks it."""
    imprecise = validation(0.01, 0.06, low_coef=0.45, diff_p=0.8)
    verdict = decide(detection(0.8, 3.0, 0.004), imprecise, placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["validation"], verdict.paragraph
    graded = validation(0.001, 0.03, high_coef=0.9, low_coef=0.2, diff_p=0.004)
    verdict = decide(detection(0.8, 3.0, 0.004), graded, placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert verdict.label == CONTAMINATION and "better than the low-LAP recall by 0.7" in verdict.paragraph
    # a significant high half not significantly above the low one: LAP's separation is untested
    flat = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6, diff_p=0.3), placebo(0.3, 0.8), POWERED,
                  EstimateConfig())
    assert flat.label == NO_EVIDENCE_UNTESTED and "does not predict the outcome significantly better" in flat.paragraph


def test_few_clusters_read_the_wild_cluster_bootstrap():
    """With 8 entity clusters the CRV1 t test over-rejects; below wild_below_clusters (42) the verdict reads the
    wild cluster restricted bootstrap's p (detection.csv p_wild_one_sided) and says so; at 60 clusters the CRV1 p."""
    few = detection(0.8, 2.6, 0.02, clusters=8, p_wild=0.16, p_wild_one_sided=0.08)
    verdict = decide(few, validation(0.01, 0.6), placebo(0.3, 0.8, clusters=8, p_wild=0.7, p_wild_one_sided=0.6),
                     POWERED, EstimateConfig())
    assert verdict.label != CONTAMINATION, verdict.paragraph
    assert "8 entity clusters (< 42" in verdict.paragraph and "one-sided p = 0.0800" in verdict.paragraph
    many = detection(0.8, 2.6, 0.02, clusters=60, p_wild=0.16, p_wild_one_sided=0.08)
    assert decide(many, validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, EstimateConfig()).label == CONTAMINATION
    assert decide(few, validation(0.01, 0.6), placebo(0.3, 0.8, clusters=8), POWERED,
                  EstimateConfig(wild_below_clusters=0)).label == CONTAMINATION


def test_a_few_cluster_placebo_is_judged_by_the_wild_bootstrap():
    """CRV1 placebo p of 0.04 with 8 clusters (a spurious failure in 14.8% of such panels at a nominal 10%); the wild
    bootstrap's p of 0.35 passes. The calibration's placebo_passes reads the same judgement."""
    post = placebo(2.1, 0.08, clusters=8, p_wild=0.7, p_wild_one_sided=0.35)
    verdict = decide(detection(0.8, 3.0, 0.004, clusters=8, p_wild=0.002, p_wild_one_sided=0.001),
                     validation(0.01, 0.6), post, POWERED, EstimateConfig())
    assert verdict.label == CONTAMINATION, verdict.paragraph
    assert placebo_check(post, None, 0.10)[1] is True
    assert placebo_check(post, None, 0.10, wild_below_clusters=0)[1] is False


def test_an_uninformative_placebo_does_not_support_contamination():
    """A post-cutoff sample whose one-sided 90% upper bound of beta_3, per SD of post-cutoff LAP (0.5), is above the
    pre-cutoff beta_3 per SD of LAP (0.23) could not have excluded the interaction found before the cutoff: it
    "passes" almost surely, which is Mixed/invalid (placebo uninformative), with the bound stated."""
    power = {**POWERED, "placebo_ucb_beta3": 2.0, "placebo_ucb_per_sd": 0.5}
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), power, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["placebo uninformative"], verdict.paragraph
    assert "0.5 per SD of post-cutoff LAP, not below the pre-cutoff beta_3 per SD of LAP (0.23)" in verdict.paragraph
    informative = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED,
                         EstimateConfig())
    assert informative.label == CONTAMINATION and "could have failed" in informative.paragraph


def test_an_imprecise_test_is_not_cleared_by_an_estimate_below_zero():
    """With 5 times the paper's noise the minimum detectable share is ~95%; an estimate that falls well below zero
    (but not significantly) puts the upper bound under 20%. The bound alone cleared 8% of such null panels; the test
    must also have had 80% power against a paper-sized interaction (detectable_share, 37%)."""
    power = {**POWERED, "beta3_share": -0.5, "ucb_share": 0.15, "mde_share": 0.95}
    verdict = decide(detection(-0.5, -1.2, 0.24), validation(0.01, 0.6), placebo(0.3, 0.8), power, EstimateConfig())
    assert verdict.label == UNDERPOWERED and verdict.failed == ["power"], verdict.paragraph
    assert "less than 80% power against an interaction of 37%" in verdict.paragraph
    assert "(minimum detectable share 95%)" in verdict.paragraph


def test_the_interval_sentence_is_the_issue_s_wording():
    """A quiet beta_3 whose one-sided upper bound is 46% of the standalone effect: the verdict reads
    "Underpowered: the interval includes an interaction of 46%" (it read "Underpowered (the interval ...)")."""
    power = {**POWERED, "ucb_beta3": 0.46, "ucb_share": 0.46}
    verdict = decide(detection(0.23, 1.2, 0.23), validation(0.01, 0.6), placebo(0.3, 0.8), power, EstimateConfig())
    assert verdict.label == UNDERPOWERED and verdict.failed == ["power"], verdict.paragraph
    assert "Verdict: Underpowered: the interval includes an interaction of 46%." in verdict.paragraph, \
        verdict.paragraph


def test_negative_beta3_reads_the_lower_tail_with_ties_against_rejection():
    """With few clusters the wild bootstrap's draws can tie with the data's t (the draw with every Webb weight 1
    reproduces the data). The one-sided p for beta_3 < 0 is #{t*_b <= t} / B, ties counted against rejection as in
    the upper tail; 1 - p_wild_one_sided = #{t*_b < t} / B counted them for it: 4% of draws below t and 2% tied
    made beta_3 "significantly negative" at 5%, whose lower-tail p is 6%."""
    from lapbias.estimate.wild import WildResult

    draws = np.concatenate([np.full(40, -3.0), np.full(20, -2.0), np.linspace(-1.9, 3.0, 940)])
    wild = WildResult(t=-2.0, draws=draws, clusters=6, reps=draws.size, seed=0)
    assert wild.p_two_sided == pytest.approx(0.12) and wild.p_one_sided == pytest.approx(0.96)
    det = detection(-0.5, -2.0, 0.09, clusters=6, p_wild=wild.p_two_sided, p_wild_one_sided=wild.p_one_sided,
                    p_wild_lower=wild.p_lower)
    verdict = decide(det, validation(0.01, 0.6), placebo(0.3, 0.8, clusters=6, p_wild=0.8, p_wild_one_sided=0.6),
                     POWERED, EstimateConfig())
    assert verdict.failed != ["beta_3 negative"], verdict.paragraph
    negative = decide(detection(-0.5, -2.0, 0.09, clusters=6, p_wild=0.08, p_wild_one_sided=0.97, p_wild_lower=0.04),
                      validation(0.01, 0.6), placebo(0.3, 0.8, clusters=6, p_wild=0.8, p_wild_one_sided=0.6),
                      POWERED, EstimateConfig())
    assert negative.failed == ["beta_3 negative"] and "= 0.0400 < 0.05" in negative.paragraph, negative.paragraph


def test_a_wild_lower_tail_is_counted_not_halved_from_the_equal_tailed_p():
    """The one-sided p for beta_3 < 0 is #{t*_b <= t} / B (boottest's ptype(lower)). Half the equal-tailed p_wild
    equals it only when the lower count is the smaller: a skewed bootstrap distribution with t = -2.0, 97% of the
    draws below it and 3% above, has p_wild = 0.06, whose half (0.03) called beta_3 "significantly negative" though
    97% of the draws lie below t."""
    from lapbias.estimate.wild import WildResult

    draws = np.concatenate([np.linspace(-6.0, -2.1, 970), np.linspace(-1.9, 1.0, 30)])
    wild = WildResult(t=-2.0, draws=draws, clusters=8, reps=draws.size, seed=0)
    assert wild.p_lower == pytest.approx(0.97) and wild.p_two_sided == pytest.approx(0.06)
    det = detection(-0.5, -2.0, 0.08, clusters=8, p_wild=wild.p_two_sided, p_wild_one_sided=wild.p_one_sided,
                    p_wild_lower=wild.p_lower)
    verdict = decide(det, validation(0.01, 0.6), placebo(0.3, 0.8, clusters=8, p_wild=0.8, p_wild_one_sided=0.6,
                                                         p_wild_lower=0.4), POWERED, EstimateConfig())
    assert verdict.failed != ["beta_3 negative"], verdict.paragraph


def test_a_detection_table_without_p_wild_lower_still_finds_a_significantly_negative_beta3():
    """A detection.csv written before p_wild_lower existed has p_wild and p_wild_one_sided only. The lower test read
    the missing column as NaN and never rejected, so a beta_3 significantly below zero by the wild bootstrap (lower
    tail 2%) was missed with few clusters. The lower p falls back to max(p_wild / 2, 1 - p_wild_one_sided): half
    the equal-tailed p where the lower tail is the smaller one, and a skewed distribution's large lower tail (97% of
    the draws below t, p_wild = 0.06) is not halved into significance."""
    from lapbias.estimate.wild import WildResult

    few_post = placebo(0.3, 0.8, clusters=8, p_wild=0.8, p_wild_one_sided=0.6)
    negative = decide(detection(-0.5, -2.4, 0.03, clusters=8, p_wild=0.04, p_wild_one_sided=0.98),
                      validation(0.01, 0.6), few_post, POWERED, EstimateConfig())
    assert negative.failed == ["beta_3 negative"], negative.paragraph
    assert "one-sided p for beta_3 < 0 = 0.0200 < 0.05" in negative.paragraph, negative.paragraph
    draws = np.concatenate([np.linspace(-6.0, -2.1, 970), np.linspace(-1.9, 1.0, 30)])
    wild = WildResult(t=-2.0, draws=draws, clusters=8, reps=draws.size, seed=0)
    skewed = decide(detection(-0.5, -2.0, 0.08, clusters=8, p_wild=wild.p_two_sided,
                              p_wild_one_sided=wild.p_one_sided), validation(0.01, 0.6), few_post, POWERED,
                    EstimateConfig())
    assert skewed.failed != ["beta_3 negative"], skewed.paragraph


def test_the_paper_s_own_table_v_placebo_is_informative():
    """Gao, Jiang, Yan, Table V (variables standardized within each sample, so SD(LAP) = 1 in each): in-sample
    b1 = 0.0487, beta_3 = 0.0120 (t = 3.44), N = 82,234; out-of-sample beta_3 = -0.00736 (t = -0.74), N = 9,942.
    The placebo's one-sided 90% upper bound, -0.00736 + t_.90 x 0.00995 = 0.0054, lies below the in-sample 0.0120:
    the post-cutoff data exclude the pre-cutoff interaction, so the placebo is informative, and with the validation
    pattern the verdict is "Contamination detected". The MDE rule it replaces called it uninformative (placebo MDE
    share 2.123 x 0.00995 / 0.0487 = 0.434 > 0.37). The two-sample z of the difference, 1.84 (one-sided p = 0.033),
    is the paper's bootstrap p."""
    from scipy import stats

    from lapbias.estimate.power import placebo_bounds

    pre_coef, pre_se, post_coef, post_se = 0.0120, 0.0120 / 3.44, -0.00736, -0.00736 / -0.74
    df_pre, df_post = 82_234 - 4, 9_942 - 4
    bounds = placebo_bounds(pre_coef, pre_se, 1.0, post_coef, post_se, df_post, 1.0, 0.10)
    assert bounds["placebo_ucb_per_sd"] == pytest.approx(0.0054, abs=5e-5) and bounds["beta3_per_sd"] == 0.0120
    assert round(bounds["z_pre_minus_post"], 2) == 1.84 and round(bounds["p_pre_minus_post"], 3) == 0.033
    mde_share = (stats.t.ppf(0.9, df_post) + stats.t.ppf(0.8, df_post)) * post_se / 0.0487
    power = {**POWERED, **bounds, "sd_lap": 1.0, "sd_lap_post": 1.0, "b1_standalone": 0.0487,
             "placebo_mde_beta3": mde_share * 0.0487, "placebo_mde_share": mde_share}
    assert mde_share == pytest.approx(0.434, abs=1e-3)
    p_pre, p_post = 2 * stats.t.sf(3.44, df_pre), 2 * stats.t.sf(0.74, df_post)
    detection_table = pd.DataFrame([row("pre", "mu_hat", 0.0487, 9.0, 1e-18, 1_000),
                                    row("pre", BETA3, pre_coef, 3.44, p_pre, 1_000)])
    placebo_table = pd.DataFrame([row("post", BETA3, post_coef, -0.74, p_post, 1_000)])
    verdict = decide(detection_table, validation(0.01, 0.6), placebo_table, power, EstimateConfig())
    assert verdict.label == CONTAMINATION, verdict.paragraph
    assert "could have failed" in verdict.paragraph


def test_no_evidence_states_its_maintained_assumption_and_the_post_cutoff_diagnostics():
    """Proposition 1 assumes the LLM's genuine accuracy does not vary with LAP; a skill falling with LAP can mask a
    contamination rising with it (beta_3 ≈ 0). The "No evidence" paragraph states the assumption and prints, outside
    the rule, the post-cutoff beta_3's two-sided test and the pre-minus-post difference per SD of LAP."""
    post = placebo(-2.2, 0.03)  # significantly negative after the cutoff: a skill gradient
    for val, label in ((validation(0.01, 0.6), NO_EVIDENCE), (validation(0.30, 0.6), NO_EVIDENCE_UNTESTED)):
        verdict = decide(detection(0.1, 0.5, 0.62), val, post, POWERED, EstimateConfig())
        assert verdict.label == label, verdict.paragraph
        assert "assumes that the LLM's genuine accuracy does not vary with LAP" in verdict.paragraph
        assert "the post-cutoff beta_3 = -0.022 has two-sided p = 0.0300" in verdict.paragraph
        assert "per SD of LAP, is 0.2 (z = 2.10, one-sided p = 0.0180" in verdict.paragraph


def test_lap_untested_does_not_claim_power_against_memorization():
    """With no memorization detected, nothing shows that LAP tracks memorization, so the MDE is power against an
    interaction in LAP, not against contamination (protocol Step 3: the detection test "has little power")."""
    verdict = decide(detection(0.02, 0.3, 0.76), validation(0.40, 0.7, high_coef=0.02), placebo(0.3, 0.8), POWERED,
                     EstimateConfig())
    assert verdict.label == NO_EVIDENCE_UNTESTED, verdict.paragraph
    assert "the test had power" not in verdict.paragraph
    assert "power against memorization-driven contamination is unknown" in verdict.paragraph


def test_few_clusters_state_the_cv3_bound():
    """Below wild_below_clusters the upper bound and the MDE use the CV3 jackknife's standard error with t(G - 1)
    (power.csv cv3_bound = 1); the paragraph says so instead of calling its CRV1 bound biased."""
    power = {**POWERED, "cv3_bound": 1.0, "df_bound": 7.0}
    few = detection(0.1, 0.5, 0.62, clusters=8, p_wild=0.6, p_wild_one_sided=0.3, p_wild_lower=0.7)
    verdict = decide(few, validation(0.01, 0.6), placebo(0.3, 0.8, clusters=8, p_wild=0.8, p_wild_one_sided=0.6,
                                                          p_wild_lower=0.4), power, EstimateConfig())
    assert verdict.label == NO_EVIDENCE, verdict.paragraph
    assert "CV3 jackknife standard error with t(7)" in verdict.paragraph and "CRV1 standard error, biased" \
        not in verdict.paragraph


# ---- a saturated LAP is named, not read ---------------------------------------------------------------------------
# The planted model of the self-validation under the recall LAP (benchmarks/results/calibration_run_pairs.csv): every
# recall answer a direction, mean LAP 0.99996 before the cutoff (halves 5.2e-5 apart) and 0.99995 after (SD 7e-5);
# the median split is on noise, both halves hold exposed pairs, so the low-LAP theta is significant (p = 0.0011).
SATURATED = {**POWERED, "lap_gap": 5.2e-5, "lap_relative_gap": 5.2e-5, "mean_lap": 0.99996,
             "mean_lap_post": 0.99995, "lap_gap_post": 6e-5, "lap_relative_gap_post": 6e-5}


def test_halves_split_on_noise_are_not_a_contradicted_validation():
    """Before: "Mixed/invalid (validation) ... LAP cannot be read as a measure of memorization" for a contaminated
    model whose recall LAP saturated. The halves do not differ in LAP, so the low-LAP theta cannot contradict."""
    verdict = decide(detection(2801.0, 0.88, 0.41, clusters=60), validation(0.0042, 0.0011, high_coef=0.68,
                                                                            low_coef=0.62, diff_p=0.68),
                     placebo(0.4, 0.68), SATURATED, EstimateConfig())
    assert verdict.label == UNDERPOWERED and verdict.failed == ["LAP saturated"], verdict.paragraph
    assert "LAP saturated" in verdict.paragraph and "cannot be judged" in verdict.paragraph
    assert "cannot be read as a measure of memorization" not in verdict.paragraph
    assert "contradicted" not in verdict.paragraph
    from lapbias.report.verdict_sentence import explain
    assert "saturated" in explain(verdict, detection(2801.0, 0.88, 0.41), EstimateConfig(), SATURATED)


def test_the_same_halves_with_a_varying_lap_still_contradict():
    """The gate does not hide a real contradiction: with a LAP whose halves differ by 50 points, the same thetas read
    Mixed/invalid (validation) as before."""
    varied = {**SATURATED, "lap_gap": 0.5, "lap_relative_gap": 1.0, "mean_lap": 0.5, "mean_lap_post": 0.2,
              "lap_gap_post": 0.3, "lap_relative_gap_post": 1.5}
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.0042, 0.0011, high_coef=0.68, low_coef=0.62,
                                                           diff_p=0.68), placebo(0.4, 0.68), varied, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["validation"], verdict.paragraph
    assert "contradicted" in verdict.paragraph


def test_a_saturated_post_cutoff_lap_is_not_a_passing_placebo():
    """A significant beta_3 with the validation pattern, and a post-cutoff recall LAP flat at 0.99995 that did not
    fall: before, the placebo "passed" (p = 0.68) and the verdict was Contamination detected on a placebo that tests
    nothing; now the placebo is not judged and the verdict says why."""
    power = {**SATURATED, "lap_gap": 0.5, "lap_relative_gap": 0.6}
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.4, 0.68), power, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["post-cutoff LAP saturated"], verdict.paragraph
    assert "post-cutoff LAP saturated" in verdict.paragraph and "cannot be judged" in verdict.paragraph
    assert "passes" not in verdict.paragraph
    feasible, passes, sentence = placebo_check(placebo(0.4, 0.68), None, 0.10, saturated="post-cutoff LAP saturated")
    assert (feasible, passes) == (False, False) and sentence.startswith("the placebo cannot be judged")


def test_a_placebo_that_fails_on_a_saturated_lap_still_fails():
    """Step 5: a surviving beta_3 > 0 after the cutoff is a failed placebo, whatever the LAP does (review of the
    saturation rule: "not judged" had turned a failing placebo into Underpowered / No evidence)."""
    power = {**SATURATED, "lap_gap": 0.5, "lap_relative_gap": 0.6}
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(3.0, 0.004), power, EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["placebo"], verdict.paragraph
    assert "post-cutoff LAP saturated" in verdict.paragraph


def test_an_unknown_lap_gap_never_hides_a_contradicted_validation():
    verdict = decide(detection(0.1, 0.5, 0.62), validation(0.01, 0.01, diff_p=0.4), placebo(0.3, 0.8), {},
                     EstimateConfig())
    assert verdict.label == MIXED and verdict.failed == ["validation"], verdict.paragraph


@pytest.mark.parametrize("mean_post, gap_post, judged", [
    (0.99995, 6e-5, False),   # flat at the pre-cutoff level: saturated
    (0.99995, float("nan"), False),  # constant at a high level: not a collapse
    (0.02, 0.01, True),       # flat but collapsed from 0.99996 (Step 5's pass)
    (0.99995, 0.2, True),     # varies after the cutoff: a real placebo
    (0.94, 6e-5, False),      # a 6% fall of a saturated LAP is not a collapse
])
def test_a_flat_post_cutoff_lap_is_judged_only_when_it_collapsed(mean_post, gap_post, judged):
    from lapbias.report.verdict import post_lap_saturated

    power = {**SATURATED, "mean_lap_post": mean_post, "lap_gap_post": gap_post}
    assert (post_lap_saturated(power, EstimateConfig()) == "") is judged


def test_a_collapse_from_a_low_level_is_a_collapse():
    """An abstaining model: recall LAP 0.04 before the cutoff, constant 0 (or 0.001) after: Step 5's collapse, not a
    flat LAP (review: the absolute 0.05 fall read it as "not collapsed")."""
    from lapbias.report.verdict import post_lap_saturated

    for after in (0.0, 0.001):
        power = {**POWERED, "mean_lap": 0.04, "mean_lap_post": after, "lap_gap_post": float("nan")}
        assert post_lap_saturated(power, EstimateConfig()) == ""
    minkprob = {**POWERED, "mean_lap": 0.17, "mean_lap_post": 0.16, "lap_relative_gap_post": 0.01}
    assert "post-cutoff LAP flat" in post_lap_saturated(minkprob, EstimateConfig(lap_measure="minkprob"))


def test_a_constant_post_cutoff_lap_at_the_pre_cutoff_level_does_not_pass_as_collapsed():
    """verdict.py's collapse branch passed a constant post-cutoff LAP whatever its level (review: "a recall LAP
    constant at 1 ... is the opposite" of a collapse)."""
    collapsed, notes = _collapsed_placebo()
    power = {**POWERED, "mean_lap": 0.6, "mean_lap_post": 1.0}
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), collapsed, power, EstimateConfig(), notes)
    assert verdict.label == MIXED and "post-cutoff LAP saturated" in verdict.failed, verdict.paragraph
    low = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), collapsed,
                 {**POWERED, "mean_lap": 0.6, "mean_lap_post": 0.0}, EstimateConfig(), notes)
    assert low.label == CONTAMINATION and "the placebo passes" in low.paragraph, low.paragraph


def test_power_csv_carries_the_means_the_saturation_rule_reads(tmp_path):
    """estimate/power.py writes mean_lap, mean_lap_post and the post-cutoff halves' gaps (absolute, relative)."""
    from lapbias.estimate.power import detection_power

    rng = np.random.default_rng(0)
    def sample(lap):
        n = len(lap)
        frame = pd.DataFrame({"outcome": rng.normal(size=n), "mu_hat": rng.choice([-1.0, 1.0], n), "lap": lap,
                              "entity_num": np.arange(n) % 20, "period_num": np.arange(n) // 20})
        return frame.assign(high_lap=(frame["lap"] > frame["lap"].median()).astype(int))
    pre, post = sample(rng.uniform(0.2, 0.8, 400)), sample(0.99995 + 1e-5 * rng.uniform(size=400))
    table = detection_power(pre, pd.DataFrame(columns=["model", "term", "coef", "se"]), post=post)
    power = dict(zip(table["quantity"], table["value"]))
    assert power["mean_lap"] == pytest.approx(pre["lap"].mean())
    assert power["mean_lap_post"] == pytest.approx(post["lap"].mean())
    assert 0 < power["lap_gap_post"] < 1e-5 and power["lap_relative_gap_post"] < 1e-5
