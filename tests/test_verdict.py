"""Every branch of the verdict rule (docs/contracts.md), on hand-built result rows."""

from __future__ import annotations

import pandas as pd
import pytest

from lapbias.config import EstimateConfig
from lapbias.report.verdict import CONTAMINATION, MIXED, NO_EVIDENCE, UNDERPOWERED, decide

BETA3 = "c.mu_hat#c.lap"
POWERED = {"mde_beta3": 0.2, "mde_share": 0.20, "b1_standalone": 0.5, "sd_lap_within": 0.3, "within_share_lap": 0.9}
WEAK = {"mde_beta3": 3.0, "mde_share": 2.5, "b1_standalone": 0.5, "sd_lap_within": 0.01, "within_share_lap": 0.05}
VARIED_LAP, FLAT_LAP = POWERED, WEAK


def row(model, term, coef, t, p):
    return {"model": model, "term": term, "coef": coef, "t": t, "p": p,
            "p_one_sided": p / 2 if t > 0 else 1 - p / 2}


def detection(coef, t, p):
    return pd.DataFrame([row("pre", "mu_hat", 0.1, 1.0, 0.3), row("pre", BETA3, coef, t, p)])


def validation(high_p, low_p, high_coef=0.5):
    return pd.DataFrame([row("pooled", "ud", 0.3, 2.0, 0.05), row("high_lap", "ud", high_coef, 3.0, high_p),
                         row("low_lap", "ud", 0.01, 0.2, low_p)])


def placebo(t, p):
    return pd.DataFrame([row("post", BETA3, 0.01 * t, t, p)])


@pytest.mark.parametrize("det, val, plc, lap, label, failed", [
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, CONTAMINATION, []),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(2.5, 0.02), VARIED_LAP, MIXED, ["placebo"]),
    (detection(0.8, 3.0, 0.004), validation(0.30, 0.6), placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.01), placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6, high_coef=-0.5), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), None, VARIED_LAP, MIXED, ["placebo infeasible"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, NO_EVIDENCE, []),
    # protocol Step 3: a null high-LAP theta means "there is no evidence of memorization and the detection test in
    # Step 4 has little power" -- a quiet beta_3 then is Underpowered, never "No evidence" (issue 11: a model that
    # almost always answers "unknown")
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), VARIED_LAP, UNDERPOWERED, ["validation"]),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), FLAT_LAP, UNDERPOWERED,
     ["validation", "power"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), FLAT_LAP, UNDERPOWERED, ["power"]),
    # the final rule's "Mixed/invalid: validation fails": the pattern is contradicted (a significant low-LAP theta,
    # or a significantly negative high-LAP theta), or the validation regressions could not be run
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.01), placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6, high_coef=-0.5), placebo(0.3, 0.8), VARIED_LAP, MIXED,
     ["validation"]),
    (detection(0.1, 0.5, 0.62), None, placebo(0.3, 0.8), VARIED_LAP, MIXED, ["validation"]),
    (detection(-0.9, -3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), VARIED_LAP, NO_EVIDENCE, []),
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


def test_threshold_is_the_configured_max_mde_share():
    lenient = EstimateConfig(max_mde_share=3.0)
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
    beta_3 the verdict is Underpowered (validation), as for a null theta."""
    notes = pd.DataFrame([{"model": f"validation:{half}", "kind": "omitted",
                           "detail": "ud omitted: collinear with the fixed effects"}])
    verdict = decide(detection(0.1, 0.5, 0.62), _with_unestimated(half), placebo(0.3, 0.8), POWERED,
                     EstimateConfig(), notes)
    assert verdict.label == UNDERPOWERED and verdict.failed == ["validation"], verdict.paragraph
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
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), POWERED, UNDERPOWERED),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.01), POWERED, MIXED),
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
