"""Every branch of the verdict rule (docs/contracts.md), on hand-built result rows."""

from __future__ import annotations

import pandas as pd
import pytest

from lapbias.config import EstimateConfig
from lapbias.report.verdict import CONTAMINATION, MIXED, NO_EVIDENCE, UNDERPOWERED, decide

BETA3 = "c.mu_hat#c.lap"
VARIED_LAP = pd.Series([0.1, 0.5, 0.9, 0.3])       # SD/mean = 0.76
FLAT_LAP = pd.Series([0.50, 0.51, 0.50, 0.51])    # SD/mean = 0.01


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
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), VARIED_LAP, NO_EVIDENCE, []),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), FLAT_LAP, UNDERPOWERED, ["LAP variation"]),
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
