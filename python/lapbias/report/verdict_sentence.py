"""The one sentence that explains the verdict, printed under it at the end of `lapbias run` and `lapbias report`.

REPORT.md's section 6 gives the verdict paragraph (report/verdict.py); the terminal gets the label and this one
sentence, made from what the paragraph is made of: the label, the parts of the rule that failed (Verdict.failed),
the pre-cutoff beta_3 and its one-sided p (results/detection.csv) and, for a test without power, the minimum
detectable share or why there is none (results/power.csv: no share when the standalone LLM effect b1 is not
positive). A label or failure this module does not know (a rule added to verdict.py later) points to section 6
instead of guessing.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config import EstimateConfig
from .verdict import BETA3, CONTAMINATION, MIXED, NO_EVIDENCE, UNDERPOWERED, Verdict, term_row

SEE_REPORT = "section 6 of REPORT.md gives the reasons."


def explain(verdict: Verdict, detection: pd.DataFrame | None, thresholds: EstimateConfig,
            power: pd.DataFrame | dict | None = None) -> str:
    """One sentence: why the pre-cutoff beta_3 test ended in `verdict` (module docstring); `power` is what
    verdict.decide read (results/power.csv as a table or {quantity: value})."""
    row = term_row(detection, "pre", BETA3)
    estimated = row is not None and pd.notna(row["coef"]) and pd.notna(row["p_one_sided"])
    p = f"one-sided p = {row['p_one_sided']:.4f}" if estimated else ""
    significant = estimated and row["coef"] > 0 and row["p_one_sided"] < thresholds.detection_alpha
    failed = set(verdict.failed)
    null = f"beta_3 is not significantly greater than zero ({p})"
    if verdict.label == CONTAMINATION:
        return (f"beta_3 > 0 before the training cutoff ({p}), the recall of high-LAP rows predicts the outcomes while "
                "that of low-LAP rows does not, and the post-cutoff placebo passes: the in-sample forecasts draw on "
                "memorized outcomes.")
    if verdict.label == NO_EVIDENCE and estimated:
        return (f"{null}, and the test had the power to find a contamination as large as the paper's (minimum "
                f"detectable share at most {thresholds.max_mde_share:.0%} of the LLM's own effect).")
    if verdict.label == UNDERPOWERED:
        if "detection regression" in failed:
            return "the detection regression could not be estimated, so this sample cannot test for contamination."
        if "beta_3 omitted" in failed:
            return ("beta_3 is not identified: LAP or mu_hat has no variation within the entity and period effects "
                    "of the pre-cutoff sample.")
        if "validation" in failed and estimated:
            return (f"{null}, but nothing shows that the model recalls these outcomes (the high-LAP recall does not "
                    "predict them), so the test has little power.")
        if "power" in failed and estimated:
            if isinstance(power, pd.DataFrame):
                power = dict(zip(power["quantity"], power["value"].astype(float)))
            share, b1 = ((power or {}).get(key, math.nan) for key in ("mde_share", "b1_standalone"))
            if math.isfinite(share):
                return (f"{null}, but its minimum detectable effect is above {thresholds.max_mde_share:.0%} of the "
                        "LLM's own effect, so a contamination of consequence could be missed.")
            own = (f"the LLM's forecasts have no positive effect of their own (standalone b1 = {b1:.4g})"
                   if math.isfinite(b1) else "the LLM's own effect (standalone b1) could not be estimated")
            return (f"{null}, and {own}, so no contamination share the test could detect can be stated: it cannot "
                    "show that a contamination of consequence would have been found.")
    if verdict.label == MIXED:
        if "placebo" in failed:
            return ("beta_3 > 0 survives after the training cutoff (the placebo fails), so LAP proxies for something "
                    "other than memorization.")
        if "detection regression" in failed:
            return "beta_3 has no standard error, hence no p-value, so the test could not be run."
        if significant and failed <= {"validation", "placebo infeasible"} and failed:
            what = " and ".join(part for key, part in (
                ("validation", "the validation pattern is absent"),
                ("placebo infeasible", "the post-cutoff placebo cannot be run")) if key in failed)
            return (f"beta_3 > 0 before the training cutoff ({p}), but {what}, so memorization cannot be separated "
                    "from other channels.")
        if "validation" in failed and estimated:
            return (f"{null}, but the validation regressions contradict the memorization pattern or cannot be "
                    "estimated, so LAP cannot be read as a measure of memorization.")
    return SEE_REPORT
