"""The verdict (protocol, "Final report" item 6), with the rule's terms made precise (docs/contracts.md).

All on the pre-cutoff detection coefficient beta_3 (term c.mu_hat#c.lap):
- significant beta_3: coef > 0 and one-sided p < detection_alpha (0.05);
- validation pattern: high-LAP theta > 0 with two-sided p < validation_alpha (0.05), and low-LAP theta not
  significant (two-sided p >= validation_alpha);
- placebo passes: post-cutoff one-sided p for beta_3 > placebo_alpha (0.10) (protocol Step 5); it also passes when
  post-cutoff LAP has collapsed to a constant (protocol Step 5 expects "LAP collapsed toward zero": beta_3 is then
  not identified there, the strongest form of "indistinguishable from zero"); infeasible without post-cutoff rows,
  when the placebo regression cannot be estimated, or when its beta_3 has no p-value (the reason is named);
- power (estimate/power.py): the minimum detectable beta_3 (one-sided at detection_alpha, 80% power) as a share of
  the standalone LLM effect, MDE x SD(lap) / b1, at most max_mde_share (0.37, the paper's in-sample magnitude).
Order: beta_3 not estimable (regression failed, or beta_3 omitted as collinear) -> Underpowered, naming why;
a failed placebo -> Mixed/invalid; significant beta_3 with validation and placebo -> Contamination detected;
significant beta_3 otherwise -> Mixed/invalid (naming what failed); non-significant beta_3 with the validation
pattern contradicted (a significant low-LAP theta or a significantly negative high-LAP theta) or not estimable
(a validation regression failed, or a theta without a p-value: neither null nor significant, as for beta_3) ->
Mixed/invalid (final rule: "validation fails"), naming which; non-significant beta_3 with a null high-LAP theta
(a theta whose ud is omitted as collinear -- constant within the FE of that half -- is zero, so null) -> Underpowered
(protocol Step 3: "there is no evidence of memorization and the detection test in Step 4 has little power"; the
issue-11 case of a model that almost always answers "unknown"); non-significant beta_3 with the MDE share above
max_mde_share -> Underpowered with the number; else No evidence of contamination. Choice where the protocol is
ambiguous: a null high-LAP theta is read as Step 3's "little power", not as the final rule's "validation fails",
which is kept for a validation that contradicts the memorization pattern.
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


def term_row(table: pd.DataFrame | None, model: str, term: str) -> pd.Series | None:
    """The row of `term` in sample `model` of a results table (detection/validation/placebo.csv), None if absent."""
    if table is None or table.empty:
        return None
    rows = table[(table["model"] == model) & (table["term"] == term)]
    return None if rows.empty else rows.iloc[0]


def _reasons(notes: pd.DataFrame | None, prefix: str, kinds: tuple[str, ...]) -> list[str]:
    if notes is None or notes.empty:
        return []
    rows = notes[notes["model"].astype(str).str.startswith(prefix) & notes["kind"].isin(kinds)]
    return list(dict.fromkeys(rows["detail"].astype(str)))


def placebo_check(placebo: pd.DataFrame | None, notes: pd.DataFrame | None, alpha: float) -> tuple[bool, bool, str]:
    """(feasible, passes, sentence) of the post-cutoff placebo; the sentence says "passes" when it passes."""
    post = term_row(placebo, "post", BETA3)
    if post is not None and not pd.isna(post["coef"]) and pd.isna(post["p_one_sided"]):
        return False, False, (f"the placebo is infeasible (post-cutoff beta_3 = {post['coef']:.4g} has no standard "
                              "error, hence no p-value; results/estimation_notes.csv)")
    if post is not None and not pd.isna(post["coef"]):
        text = (f"the post-cutoff placebo beta_3 = {post['coef']:.4g} (one-sided p = {post['p_one_sided']:.4f}, "
                "results/placebo.csv)")
        passes = post["p_one_sided"] > alpha
        return True, passes, text + (" passes" if passes else "")
    lap = term_row(placebo, "post", "lap")
    omitted = _reasons(notes, "placebo:post", ("omitted",))
    if post is not None and (lap is None or pd.isna(lap["coef"])) and any(n.startswith("lap omitted") for n in omitted):
        return True, True, ("post-cutoff LAP is constant within the fixed effects (it collapsed, as expected after "
                            "the training cutoff, e.g. every recall answer is 'unknown'), so beta_3 cannot arise "
                            "after the cutoff: the placebo passes")
    reasons = _reasons(notes, "placebo", ("failed", "error", "warning", "omitted"))
    reasons = [r for r in reasons if "clusters (<" not in r] or ["no post-cutoff observations"]
    return False, False, f"the placebo is infeasible ({'; '.join(reasons)})"


def _theta_state(row: pd.Series | None, alpha: float) -> str:
    """A validation theta: "missing" (regression failed, or an estimate without a p-value -- neither null nor
    significant, as for beta_3); "zero" (ud omitted as collinear: constant within the fixed effects of that half,
    e.g. all recall censored to 'unknown', so the half carries no recall signal and theta is zero -- Step 3's
    "near zero", treated as null); "positive" / "negative" (two-sided p < alpha); else "null"."""
    if row is None:
        return "missing"
    if pd.isna(row["coef"]):
        return "zero"
    if pd.isna(row["p"]):
        return "missing"
    if row["p"] < alpha:
        return "positive" if row["coef"] > 0 else "negative"
    return "null"


def _power_text(power: dict[str, float], alpha: float) -> tuple[float, str]:
    share = power.get("mde_share", math.nan)
    mde, b1 = power.get("mde_beta3", math.nan), power.get("b1_standalone", math.nan)
    if math.isfinite(share):
        return share, (f"the minimum detectable beta_3 ({alpha * 100:g}% one-sided, 80% power) is {mde:.4g}, i.e. "
                       f"{share:.0%} of the standalone LLM effect per SD of LAP (paper's in-sample estimate: 37%; "
                       f"within-FE SD of LAP = {power.get('sd_lap_within', math.nan):.3g}, "
                       f"{power.get('within_share_lap', math.nan):.0%} of its SD; results/power.csv)")
    why = (f"the standalone LLM effect b1 = {b1:.4g} is not positive, so no detectable contamination share can "
           "be stated" if math.isfinite(b1) else "its share of the standalone LLM effect could not be computed")
    return math.inf, f"the minimum detectable beta_3 is {mde:.4g} and {why} (results/power.csv)"


def decide(detection: pd.DataFrame, validation: pd.DataFrame | None, placebo: pd.DataFrame | None,
           power: pd.DataFrame | dict | None, thresholds: EstimateConfig,
           notes: pd.DataFrame | None = None) -> Verdict:
    """The label and paragraph from results/detection.csv, validation.csv, placebo.csv, power.csv and
    estimation_notes.csv (module docstring)."""
    if isinstance(power, pd.DataFrame):
        power = dict(zip(power["quantity"], power["value"].astype(float)))
    power = power or {}
    beta3 = term_row(detection, "pre", BETA3)
    if beta3 is None:
        reasons = _reasons(notes, "detection", ("failed", "error")) or ["see results/estimation_notes.csv"]
        return Verdict(UNDERPOWERED, ["detection regression"], "The detection regression could not be estimated "
                       f"({'; '.join(reasons)}), so the sample cannot test for contamination. Verdict: "
                       f"{UNDERPOWERED} (detection regression not estimable).")
    if pd.isna(beta3["coef"]):
        reasons = _reasons(notes, "detection", ("omitted",)) or ["c.mu_hat#c.lap omitted: collinear"]
        return Verdict(UNDERPOWERED, ["beta_3 omitted"], f"beta_3 is not identified ({'; '.join(reasons)}): LAP "
                       "(or mu_hat) has no usable variation within the entity and period effects of the pre-cutoff "
                       f"sample, so the test has no power. Verdict: {UNDERPOWERED} (beta_3 omitted as collinear).")
    if pd.isna(beta3["p_one_sided"]):  # an estimate without a p-value is not "not significant"
        return Verdict(MIXED, ["detection regression"], f"The detection regression estimates beta_3 = "
                       f"{beta3['coef']:.4g} but gives it no p-value (no standard error; see "
                       "results/estimation_notes.csv): the test could not be run.")
    significant = beta3["coef"] > 0 and beta3["p_one_sided"] < thresholds.detection_alpha
    high, low = term_row(validation, "high_lap", "ud"), term_row(validation, "low_lap", "ud")
    high_state, low_state = (_theta_state(high, thresholds.validation_alpha),
                             _theta_state(low, thresholds.validation_alpha))
    validation_present = high_state == "positive" and low_state in ("null", "zero")
    placebo_feasible, placebo_passes, place = placebo_check(placebo, notes, thresholds.placebo_alpha)
    share, power_text = _power_text(power, thresholds.detection_alpha)

    b3 = (f"The pre-cutoff interaction beta_3 = {beta3['coef']:.4g} (t = {beta3['t']:.2f}, one-sided p = "
          f"{beta3['p_one_sided']:.4f}, results/detection.csv)")
    valid = ("the validation pattern is present (high-LAP theta positive and significant, low-LAP theta not)"
             if validation_present else "the validation pattern is absent (results/validation.csv)")

    if placebo_feasible and not placebo_passes:
        return Verdict(MIXED, ["placebo"], f"{b3}; {place}, so the placebo fails: a beta_3 > 0 after the "
                       "training cutoff means the recall measure proxies for something other than memorization. "
                       f"Also, {valid}. Verdict: {MIXED} (placebo failed).")
    if significant and validation_present and placebo_passes:
        return Verdict(CONTAMINATION, [], f"{b3} is positive and significant; {valid}; and {place}. "
                       f"Verdict: {CONTAMINATION}: the in-sample LLM forecasts are contaminated by lookahead bias. "
                       "Restrict backtests to data after the model's training cutoff. Prompt-level fixes (masking, "
                       "instructions to ignore future information) are not a remedy unless this test, rerun, "
                       "shows they work.")
    if significant:
        failed = ([] if validation_present else ["validation"]) + ([] if placebo_feasible else ["placebo infeasible"])
        return Verdict(MIXED, failed, f"{b3} is positive and significant, but {valid} and {place}. "
                       f"Verdict: {MIXED} ({', '.join(failed)}): memorization cannot be separated from other "
                       "channels.")
    why = []
    for half, state in (("high", high_state), ("low", low_state)):
        if state == "missing":
            reasons = (_reasons(notes, f"validation:{half}_lap", ("failed", "error", "omitted"))
                       or ["no p-value; results/estimation_notes.csv"])
            why.append(f"the {half}-LAP theta could not be estimated ({'; '.join(reasons)})")
    if low_state in ("positive", "negative"):
        why.append(f"the validation pattern is contradicted: the low-LAP theta is significant "
                   f"({low['coef']:.4g}, p = {low['p']:.4f}, results/validation.csv)")
    if high_state == "negative":
        why.append(f"the validation pattern is contradicted: the high-LAP theta is significantly negative "
                   f"({high['coef']:.4g}, p = {high['p']:.4f}, results/validation.csv)")
    if why:
        return Verdict(MIXED, ["validation"], f"{b3}: beta_3 is not significantly greater than zero, but "
                       f"{'; and '.join(why)}, so LAP cannot be read as a measure of memorization; {place}. "
                       f"Verdict: {MIXED} (validation).")
    above = "" if math.isinf(share) else f", above {thresholds.max_mde_share:.0%} (max_mde_share)"
    if high_state in ("null", "zero"):  # the low-LAP theta is null or zero here: anything else returned above
        failed = ["validation"] + (["power"] if share > thresholds.max_mde_share else [])
        constant = "".join(f"; ud has no variation within the fixed effects in the {half}-LAP half (omitted as "
                           "collinear), so theta is zero there"
                           for half, state in (("high", high_state), ("low", low_state)) if state == "zero")
        return Verdict(UNDERPOWERED, failed, f"{b3}: beta_3 is not significantly greater than zero, but the "
                       f"high-LAP theta is null{constant} (results/validation.csv): there is no evidence that the model "
                       "recalls these outcomes, nothing shows that LAP separates memorized from unmemorized rows, "
                       "and the detection test has little power (protocol Step 3), whatever its minimum detectable "
                       f"effect ({power_text}); {place}. Verdict: {UNDERPOWERED} (validation: high-LAP theta null).")
    if share <= thresholds.max_mde_share:
        return Verdict(NO_EVIDENCE, [], f"{b3}: beta_3 is not significantly greater than zero, and {power_text}, "
                       f"at most {thresholds.max_mde_share:.0%} (max_mde_share): a contamination of that size would "
                       f"have been found; {valid}; {place}. Verdict: {NO_EVIDENCE}.")
    return Verdict(UNDERPOWERED, ["power"], f"{b3}: beta_3 is not significantly greater than zero, but "
                   f"{power_text}{above}: the test could miss a "
                   f"contamination of consequence; {valid}; {place}. Verdict: {UNDERPOWERED} (minimum detectable "
                   f"share {'undefined' if math.isinf(share) else f'{share:.0%}'}).")
