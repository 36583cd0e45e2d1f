"""The verdict (protocol, "Final report" item 6), with the rule's terms made precise (docs/contracts.md).

All on the pre-cutoff detection coefficient beta_3 (term c.mu_hat#c.lap). Terms:
- p-values of beta_3: the CRV1 t test's (`p_one_sided`, two-sided `p`); with fewer entity clusters than
  wild_below_clusters (42; the table's N_clust, with two-way clustering the smaller dimension as reghdfe's
  e(N_clust), so "entity clusters" means the clusters counted there) those of the wild cluster restricted bootstrap (`p_wild_one_sided`, `p_wild`,
  `p_wild_lower`; estimate/wild.py), because the t test over-rejects with few clusters; the same rule for the
  placebo's beta_3 with its own cluster count.
- significant beta_3: coef > 0 and one-sided p < detection_alpha (0.05); significantly negative beta_3: coef < 0 and
  the one-sided p for beta_3 < 0 below detection_alpha (t test: p / 2 = 1 − p_one_sided; wild bootstrap:
  p_wild_lower = #{t*_b <= t} / B, the lower tail counted itself, ties against rejection as in the upper tail; a
  detection.csv written before p_wild_lower existed has p_wild and p_wild_one_sided only, and the lower p is then
  max(p_wild / 2, 1 − p_wild_one_sided): half the equal-tailed p is the lower tail whenever that tail is the smaller
  one, which it is when beta_3 < 0 can be significant, and 1 − p_wild_one_sided = #{t*_b < t} / B keeps a skewed
  distribution's large lower tail from being halved into significance). The
  protocol's "No evidence" asks for beta_3 "indistinguishable from zero", a two-sided notion: the two one-sided
  tests at the same level distinguish beta_3 from zero. A beta_3 < 0 that the lower test misses is then "No
  evidence": with expected t statistic t_e < 0 that happens with probability about Phi(z_{1−alpha} − |t_e|)
  (0.5% at t_e = −4.3), a statement true about contamination and silent about LAP's validity.
- validation pattern present: high-LAP theta (outcome on ud, model high_lap) > 0 with two-sided p <
  validation_alpha (0.05; each theta's p as `theta_p` reads it: below wild_below_clusters entity clusters the larger
  of the CRV1 and the wild cluster bootstrap p), and the halves' difference in the predictive content of the recalled direction ud_dir =
  ud / LAP_recall, per SD of it within each half, > 0 with one-sided p < validation_alpha (validation.csv model
  high_minus_low, term c.ud_dir_std#c.high_lap: Step 3's "predictive power on high-LAP observations, with a null on
  low-LAP observations" as a test of the difference; on the direction because |ud| <= LAP makes ud's size grow with
  LAP, so a recall equally right at every LAP would look more predictive per SD of ud in the high half;
  estimate/protocol.py). Contradicted: the high-LAP theta
  significantly negative, or the low-LAP theta significant without a significantly larger predictive content in
  the high half. No memorization detected: the high-LAP theta null (not significant, or zero: ud omitted as
  collinear, constant within the FE of that half) and the pattern not contradicted. Not estimable: a validation
  regression failed, or a theta (or, when the high-LAP theta is significant, their difference) without a p-value.
- placebo passes: post-cutoff one-sided p for beta_3 > 0 above placebo_alpha (0.10) (protocol Step 5); it also passes
  when post-cutoff LAP has collapsed to a constant (Step 5's "LAP collapsed toward zero": beta_3 is then not
  identified there); infeasible without post-cutoff rows, when the placebo regression cannot be estimated, or when
  its beta_3 has no p-value. Informative: the post-cutoff data exclude the interaction found before the cutoff, per
  SD of LAP in each sample: (beta_3,post + t_{1−placebo_alpha, df} se_post) x SD(lap_post) < beta_3,pre x
  SD(lap_pre) (power.csv placebo_ucb_per_sd < beta3_per_sd; few clusters: the CV3 se, estimate/power.py). A placebo
  that could not have excluded it has not passed in the protocol's sense; nor has one whose post-cutoff beta_3 is
  estimated without a bound (the CV3 jackknife not defined: deleting one entity leaves beta_3 unidentified). Its
  informativeness cannot be stated (None) when there is no post-cutoff beta_3, e.g. post-cutoff LAP collapsed,
  which is Step 5's pass itself. beta_3,pre is treated as fixed (the size caveat of the paper's bootstrap p).
- LAP showing meaningful variation (the final rule): the high-LAP half's mean LAP exceeds the low half's by at
  least min_lap_gap (0.05, probability points) for the recall LAP; by at least min_lap_relative_gap (0.05) of mean
  LAP for Min-K%, whose gate is relative (it has no natural unit). The power shares below are invariant to affine
  maps of LAP, so they cannot tell a LAP constant to six digits from a varying one.
- power (estimate/power.py), two conditions: the test could detect a paper-sized interaction, its minimum
  detectable share (one-sided at detection_alpha, 80% power) at most detectable_share (0.37), stated as "an
  interaction of ≥ X% of the standalone LLM effect per SD of LAP would have been detected with 80% probability";
  and the data exclude a contamination of consequence, the one-sided (1 − detection_alpha) upper confidence bound of
  beta_3 as a share, (beta_3 + t_{1−alpha, df} se) × SD(lap) / b1, at most max_ucb_share (0.20); with fewer than
  wild_below_clusters entity clusters both use the CV3 jackknife se with t(G − 1). The bound alone would clear an
  imprecise test whose estimate happens to fall below zero (with 5 times the paper's noise, 8% of null panels);
  the MDE alone ignores where beta_3 sits (a paper-sized contamination with t = 1.66 was cleared).
- maintained assumption of "No evidence" (paper, Proposition 1): the LLM's genuine accuracy does not vary with LAP.
  A genuine skill falling with LAP can mask a contamination rising with it (beta_3 ≈ 0), which no rule on the
  pre-cutoff beta_3 detects; the paragraph states the assumption and, as diagnostics outside the rule, the
  post-cutoff beta_3's two-sided test and the pre-minus-post difference per SD of LAP (a skill gradient persists
  after the cutoff, a contamination does not).
Order: beta_3 not estimable (regression failed, or beta_3 omitted as collinear) -> Underpowered, naming why;
beta_3 without a p-value -> Mixed/invalid; a failed placebo -> Mixed/invalid; a significantly negative beta_3 ->
Mixed/invalid (paper, Proposition 1: beta_3 >= 0 whenever LAP measures memorization, so LAP proxies for something
else); significant beta_3 with the validation pattern and a passing placebo not shown uninformative -> Contamination
detected; significant beta_3 otherwise -> Mixed/invalid, naming what failed (validation, placebo infeasible,
placebo uninformative); non-significant beta_3 with the validation pattern contradicted or not estimable ->
Mixed/invalid (the final rule's "validation fails"); non-significant beta_3 and LAP without meaningful variation ->
Underpowered (LAP variation); the minimum detectable share above detectable_share, or b1 <= 0 -> Underpowered (with
the number); the upper bound's share above max_ucb_share -> "Underpowered: the interval includes an interaction of
X%"; else, with the validation pattern present -> No evidence of contamination; with no memorization detected or the
pattern absent (a significant high-LAP theta without a significantly larger predictive content than the low one)
-> "No evidence of contamination (LAP untested)": no contamination that rises with LAP, but LAP is not shown to
measure memorization, so the test's power against memorization-driven contamination is unknown (protocol Step 3:
with a null high-LAP theta "the detection test in Step 4 has little power").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..config import EstimateConfig
from ..signals import measures

BETA3 = "c.mu_hat#c.lap"
DIFFERENCE_MODEL, DIFFERENCE = "high_minus_low", "c.ud_dir_std#c.high_lap"
SATURATED_RECALL_LAP = 0.95
"""Mean recall LAP from which a LAP without meaningful variation is called saturated: nearly all of the answer's
probability on up or down (1 - min_lap_gap at the default), the model answering every recall query with a direction
rather than abstaining (protocol Step 2's "guessing")."""
CONTAMINATION = "Contamination detected"
NO_EVIDENCE = "No evidence of contamination"
NO_EVIDENCE_UNTESTED = "No evidence of contamination (LAP untested)"
UNDERPOWERED = "Underpowered"
MIXED = "Mixed/invalid"
LABELS = (CONTAMINATION, NO_EVIDENCE, NO_EVIDENCE_UNTESTED, UNDERPOWERED, MIXED)
ASSUMPTION = ("This reading assumes that the LLM's genuine accuracy does not vary with LAP (the paper's Proposition "
              "1): a genuine skill that falls as LAP rises could mask a contamination that rises with it")


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


def _value(row: pd.Series, column: str) -> float:
    value = row.get(column, math.nan)
    return math.nan if value is None or pd.isna(value) else float(value)


@dataclass
class Inference:
    """The p-values of one beta_3 the verdict reads, and how they were obtained (`wild`: the wild cluster
    bootstrap's): one-sided for beta_3 > 0, two-sided, one-sided for beta_3 < 0 (module docstring)."""
    p_one_sided: float
    p_two_sided: float
    p_lower: float
    text: str
    wild: bool = False


def inference(row: pd.Series, wild_below_clusters: int, reps: int) -> Inference:
    """CRV1 p-values of beta_3, or with fewer entity clusters than `wild_below_clusters` those of the wild cluster
    restricted bootstrap (module docstring), and the words that say which."""
    crv1 = Inference(_value(row, "p_one_sided"), _value(row, "p"), _value(row, "p") / 2,
                     f"one-sided p = {row['p_one_sided']:.4f}")
    clusters = _value(row, "N_clust")
    if not (math.isfinite(clusters) and clusters < wild_below_clusters):
        return crv1
    wild_one, wild_two, wild_lower = (_value(row, c) for c in ("p_wild_one_sided", "p_wild", "p_wild_lower"))
    if not math.isfinite(wild_lower) and math.isfinite(wild_two):  # a table from before p_wild_lower (docstring)
        wild_lower = max(wild_two / 2, 1 - wild_one)
    few = f"{clusters:.0f} entity clusters (< {wild_below_clusters}, wild_below_clusters)"
    if not math.isfinite(wild_one):
        crv1.text += (f"; with only {few} the CRV1 t test over-rejects, and no wild cluster bootstrap p was computed "
                      "(results/estimation_notes.csv), so this p is read as it is")
        return crv1
    engine = ", by the Python engine on the same panel" if str(row.get("engine", "")) == "stata" else ""
    return Inference(wild_one, wild_two, wild_lower, f"CRV1 one-sided p = {row['p_one_sided']:.4f}; with {few} the "
                     f"verdict reads the wild cluster restricted bootstrap's: one-sided p = {wild_one:.4f}, "
                     f"two-sided {wild_two:.4f} (Webb weights, {reps:,} draws{engine})", wild=True)


COLLAPSED_SHARE = 0.5
"""A post-cutoff LAP has collapsed (protocol Step 5, "collapsed toward zero") when it has lost at least this share of
its pre-cutoff level (the measure's `fall`: (pre - post) / |pre|, so a negative score collapses by falling further
below 0; 1 - exp(post - pre) for the reference log-ratio), or, for the recall LAP, when its mean is below
min_lap_gap: a fall of a few percent is not a collapse."""


def post_lap_saturated(power: dict[str, float], thresholds: EstimateConfig) -> str:
    """The sentence naming a post-cutoff LAP the placebo cannot be judged on ("" when it can, or when power.csv
    predates the means): post-cutoff LAP without meaningful variation (its own halves' gap below min_lap_gap for the
    recall LAP, below min_lap_relative_gap of its level for the other measures; a constant LAP, or one whose halves
    are not defined because most rows tie) that has not collapsed either (it lost less than COLLAPSED_SHARE of its
    pre-cutoff level, and for the recall LAP its mean is at least min_lap_gap). Step 5's pass is for a LAP "collapsed
    toward zero"; a LAP that stays where it was, at a high level (a planted model answering every recall query with
    a direction: 0.99995 +- 7e-5 after the cutoff, 0.99996 before) or a low one, has not collapsed, and a post-cutoff
    beta_3 on its noise cannot pass the placebo (placebo_check: a significant one still fails it, Step 5). Called
    "saturated" for a
    recall LAP of mean at least SATURATED_RECALL_LAP."""
    mean, mean_post = power.get("mean_lap", math.nan), power.get("mean_lap_post", math.nan)
    if not (math.isfinite(mean) and math.isfinite(mean_post)):
        return ""
    recall = _absolute_gap(thresholds)
    if recall:
        gap, floor = power.get("lap_gap_post", math.nan), thresholds.min_lap_gap
        spread = (f"its high-LAP half's mean exceeds the low half's by {gap * 100:.3g} percentage points, less than "
                  f"min_lap_gap = {floor * 100:g}" if math.isfinite(gap) else "it has no high-LAP half (constant, "
                  "or most rows tie at the median)")
    else:
        gap, floor = _relative_gap(power, thresholds, "_post"), thresholds.min_lap_relative_gap
        spread = (f"its high-LAP half's mean exceeds the low half's by {gap:.3g} of its level, less than "
                  f"min_lap_relative_gap = {floor:g}" if math.isfinite(gap) else "it has no high-LAP half "
                  "(constant, or most rows tie at the median)")
    fall = measures.REGISTRY[thresholds.lap_measure].fall(mean, mean_post)
    collapsed = fall >= COLLAPSED_SHARE or (recall and mean_post < thresholds.min_lap_gap)
    if (math.isfinite(gap) and gap >= floor) or collapsed:
        return ""
    name = "post-cutoff LAP saturated" if recall and mean_post >= SATURATED_RECALL_LAP else "post-cutoff LAP flat"
    lost = ("its fall is not defined" if not math.isfinite(fall) else
            f"it lost {fall:.0%} of its level" if fall >= 0 else f"it rose by {-fall:.0%} of its level")
    return (f"{name}: {spread}, and at a mean of {mean_post:.6g} against {mean:.6g} before the cutoff ({lost}) it has "
            f"not collapsed (protocol Step 5: a loss of at least {COLLAPSED_SHARE:.0%} of the pre-cutoff level"
            + (f", or a mean below {thresholds.min_lap_gap:g}" if recall else "") + "; results/power.csv)")


def placebo_check(placebo: pd.DataFrame | None, notes: pd.DataFrame | None, alpha: float,
                  wild_below_clusters: int = 42, reps: int = 9999, saturated: str = "") -> tuple[bool, bool, str]:
    """(feasible, passes, sentence) of the post-cutoff placebo; the sentence says "passes" when it passes. The
    p-value is the wild cluster bootstrap's with fewer than `wild_below_clusters` entity clusters (`inference`).
    `saturated` (post_lap_saturated's sentence): a placebo that would pass is not judged (its LAP has neither varied
    nor collapsed, so the pass tests nothing); one that fails still fails (Step 5: a surviving beta_3 > 0 after the
    cutoff is a failed placebo), with the sentence added."""
    feasible, passes, text = _placebo_check(placebo, notes, alpha, wild_below_clusters, reps)
    if saturated and feasible and passes:
        return False, False, f"the placebo cannot be judged ({saturated})"
    if saturated and feasible:
        return feasible, passes, f"{text} ({saturated})"
    return feasible, passes, text


def power_values(power: pd.DataFrame | dict | None) -> dict[str, float]:
    """results/power.csv as {quantity: value} (a dict passes through; None: empty)."""
    if isinstance(power, pd.DataFrame):
        return dict(zip(power["quantity"], power["value"].astype(float)))
    return power or {}


def placebo_judgement(placebo: pd.DataFrame | None, notes: pd.DataFrame | None, power: pd.DataFrame | dict | None,
                      thresholds: EstimateConfig) -> tuple[bool, bool, str]:
    """`placebo_check` as the verdict applies it: the configured level, wild bootstrap and saturation rule."""
    return placebo_check(placebo, notes, thresholds.placebo_alpha, thresholds.wild_below_clusters,
                         thresholds.wild_bootstrap_reps, post_lap_saturated(power_values(power), thresholds))


def _placebo_check(placebo: pd.DataFrame | None, notes: pd.DataFrame | None, alpha: float,
                   wild_below_clusters: int, reps: int) -> tuple[bool, bool, str]:
    post = term_row(placebo, "post", BETA3)
    if post is not None and not pd.isna(post["coef"]) and pd.isna(post["p_one_sided"]):
        return False, False, (f"the placebo is infeasible (post-cutoff beta_3 = {post['coef']:.4g} has no standard "
                              "error, hence no p-value; results/estimation_notes.csv)")
    if post is not None and not pd.isna(post["coef"]):
        read = inference(post, wild_below_clusters, reps)
        text = f"the post-cutoff placebo beta_3 = {post['coef']:.4g} ({read.text}, results/placebo.csv)"
        passes = read.p_one_sided > alpha
        return True, passes, text + (" passes" if passes else "")
    lap = term_row(placebo, "post", "lap")
    omitted = _reasons(notes, "placebo:post", ("omitted",))
    if post is not None and (lap is None or pd.isna(lap["coef"])) and any(n.startswith("lap omitted") for n in omitted):
        return True, True, ("post-cutoff LAP is constant within the fixed effects (it collapsed, as expected after "
                            "the training cutoff, e.g. every recall answer is 'unknown'), so beta_3 cannot arise "
                            "after the cutoff: the placebo passes")
    reasons = _reasons(notes, "placebo", ("failed", "error", "warning", "omitted"))
    reasons = [r for r in reasons if "clusters (<" not in r and "wild cluster bootstrap" not in r] \
        or ["no post-cutoff observations"]
    return False, False, f"the placebo is infeasible ({'; '.join(reasons)})"


def placebo_power(power: dict[str, float], thresholds: EstimateConfig) -> tuple[bool | None, str]:
    """(informative, sentence): do the post-cutoff data exclude the pre-cutoff interaction, per SD of LAP in each
    sample (module docstring)? None when that cannot be stated (no post-cutoff beta_3, e.g. post-cutoff LAP collapsed,
    or no pre-cutoff beta_3 per SD); False when the post-cutoff beta_3 exists but its bound does not (the CV3
    jackknife not defined: beta_3 rests on one entity, and no bound excludes anything)."""
    bound, own = power.get("placebo_ucb_per_sd", math.nan), power.get("beta3_per_sd", math.nan)
    if math.isfinite(own) and not math.isfinite(bound) and math.isfinite(power.get("beta3_post", math.nan)):
        return False, ("the post-cutoff beta_3 is estimated but its upper bound cannot be computed (results/power.csv "
                       "se_bound_post; with few clusters: the CV3 jackknife is not defined when deleting one entity "
                       "leaves beta_3 unidentified, i.e. it rests on that entity), so the post-cutoff data are not "
                       "shown to exclude the interaction found before the cutoff and the placebo could not have "
                       "failed")
    if not (math.isfinite(bound) and math.isfinite(own)):
        return None, ""
    informative = bound < own
    level = 1 - thresholds.placebo_alpha
    few = " (CV3 jackknife se, few clusters)" if power.get("cv3_bound_post", 0) == 1 else ""
    return informative, (f"the placebo's one-sided {level:.0%} upper bound of beta_3 is "
                         f"{power.get('placebo_ucb_beta3', math.nan):.4g}{few}, {bound:.4g} per SD of post-cutoff "
                         f"LAP, {'below' if informative else 'not below'} the pre-cutoff beta_3 per SD of LAP "
                         f"({own:.4g}), so the post-cutoff data {'exclude' if informative else 'cannot exclude'} "
                         "the interaction found before the cutoff and the placebo "
                         f"{'could' if informative else 'could not'} have failed (results/power.csv; the pre-cutoff "
                         "estimate taken as fixed)")


def diagnostics(placebo: pd.DataFrame | None, power: dict[str, float], thresholds: EstimateConfig) -> str:
    """The post-cutoff beta_3's two-sided test and the pre-minus-post difference per SD of LAP: diagnostics of a
    skill gradient (which persists after the cutoff) outside the rule (module docstring); "" when not estimated."""
    post = term_row(placebo, "post", BETA3)
    if post is None or pd.isna(post["coef"]) or pd.isna(post.get("p", math.nan)):
        return ""
    read = inference(post, thresholds.wild_below_clusters, thresholds.wild_bootstrap_reps)
    text = (f"diagnostics outside the rule: the post-cutoff beta_3 = {post['coef']:.4g} has two-sided "
            f"{'wild bootstrap ' if read.wild else ''}p = {read.p_two_sided:.4f}")
    difference, z = power.get("pre_minus_post_per_sd", math.nan), power.get("z_pre_minus_post", math.nan)
    if math.isfinite(difference) and math.isfinite(z):
        text += (f", and beta_3 before minus after the cutoff, per SD of LAP, is {difference:.4g} (z = {z:.2f}, "
                 f"one-sided p = {power.get('p_pre_minus_post', math.nan):.4f}; results/power.csv)")
    return text


@dataclass
class Validation:
    """The validation pattern (module docstring): present, contradicted (reasons), not estimable (reasons), no
    memorization detected, or absent (a significant high-LAP theta not significantly above the low one)."""
    present: bool
    contradicted: list[str]
    missing: list[str]
    no_memorization: bool
    zero_halves: list[str]


def theta_p(row: pd.Series, wild_below_clusters: int) -> float:
    """A validation theta's two-sided p: the CRV1 t test's, or with fewer entity clusters than wild_below_clusters
    the larger of it and the wild cluster restricted bootstrap's (p_wild): both tests must reject. The CRV1 test of
    theta over-rejects with few clusters (MEASURED on the self-validation's clean model, 40 clusters: the low-LAP
    theta's nominal 5% test rejected in 10.7% of outcome redraws, the wild one in 6.0%,
    benchmarks/results/calibration_size.md), while the wild bootstrap of a half whose theta rests on a few clusters
    can be degenerate (MEASURED on an 8-cluster null panel, tests/test_verdict_mc.py: wild p 0.010 against CRV1
    0.60); the CRV1 p alone where no bootstrap p was computed (a table written before it, a single series)."""
    clusters, wild, crv1 = _value(row, "N_clust"), _value(row, "p_wild"), _value(row, "p")
    if math.isfinite(clusters) and clusters < wild_below_clusters and math.isfinite(wild) and math.isfinite(crv1):
        return max(crv1, wild)
    return crv1


def _theta_state(row: pd.Series | None, alpha: float, wild_below_clusters: int = 0) -> str:
    """A validation theta: "missing" (regression failed, or an estimate without a p-value -- neither null nor
    significant, as for beta_3); "zero" (ud omitted as collinear: constant within the fixed effects of that half,
    e.g. all recall censored to 'unknown', so the half carries no recall signal and theta is zero -- Step 3's
    "near zero", treated as null); "positive" / "negative" (two-sided p < alpha); else "null"."""
    if row is None:
        return "missing"
    if pd.isna(row["coef"]):
        return "zero"
    p = theta_p(row, wild_below_clusters)
    if not math.isfinite(p):
        return "missing"
    if p < alpha:
        return "positive" if row["coef"] > 0 else "negative"
    return "null"


def validation_pattern(validation: pd.DataFrame | None, notes: pd.DataFrame | None, alpha: float,
                       wild_below_clusters: int = 0) -> Validation:
    """The pattern (module docstring); each theta's p as `theta_p` reads it (wild below wild_below_clusters)."""
    high, low = term_row(validation, "high_lap", "ud"), term_row(validation, "low_lap", "ud")
    difference = term_row(validation, DIFFERENCE_MODEL, DIFFERENCE)
    high_state, low_state = (_theta_state(high, alpha, wild_below_clusters),
                             _theta_state(low, alpha, wild_below_clusters))
    larger = (difference is not None and not pd.isna(difference["p_one_sided"]) and difference["coef"] > 0
              and difference["p_one_sided"] < alpha)
    missing = []
    for half, state in (("high", high_state), ("low", low_state)):
        if state == "missing":
            reasons = (_reasons(notes, f"validation:{half}_lap", ("failed", "error", "omitted"))
                       or ["no p-value; results/estimation_notes.csv"])
            missing.append(f"the {half}-LAP theta could not be estimated ({'; '.join(reasons)})")
    if high_state == "positive" and (difference is None or pd.isna(difference["p_one_sided"])):
        reasons = (_reasons(notes, f"validation:{DIFFERENCE_MODEL}", ("failed", "error", "omitted"))
                   or ["no row or no p-value in results/validation.csv"])
        missing.append(f"the test of theta_high - theta_low could not be run ({'; '.join(reasons)})")
    contradicted = []
    if low_state in ("positive", "negative") and not larger:
        contradicted.append(f"the validation pattern is contradicted: the low-LAP theta is significant "
                            f"({low['coef']:.4g}, {_theta_p_text(low, wild_below_clusters)}) and the high-LAP recall "
                            "does not predict the "
                            "outcome significantly better per SD of the recalled direction (results/validation.csv)")
    if high_state == "negative":
        contradicted.append(f"the validation pattern is contradicted: the high-LAP theta is significantly negative "
                            f"({high['coef']:.4g}, {_theta_p_text(high, wild_below_clusters)}, "
                            "results/validation.csv)")
    return Validation(present=high_state == "positive" and larger and not missing, contradicted=contradicted,
                      missing=missing, no_memorization=high_state in ("null", "zero"),
                      zero_halves=[half for half, state in (("high", high_state), ("low", low_state))
                                   if state == "zero"])


def _theta_p_text(row: pd.Series, wild_below_clusters: int) -> str:
    clusters, wild = _value(row, "N_clust"), _value(row, "p_wild")
    if math.isfinite(clusters) and clusters < wild_below_clusters and math.isfinite(wild):
        return (f"p = {theta_p(row, wild_below_clusters):.4f}, the larger of the CRV1 p {row['p']:.4f} and the wild "
                f"cluster bootstrap's {wild:.4f} ({clusters:.0f} clusters)")
    return f"p = {row['p']:.4f}"


def _validation_text(validation: pd.DataFrame | None, pattern: Validation) -> str:
    if pattern.present:
        diff = term_row(validation, DIFFERENCE_MODEL, DIFFERENCE)
        return (f"the validation pattern is present (high-LAP theta positive and significant, and per SD of the "
                f"recalled direction the high-LAP recall predicts the outcome better than the low-LAP recall by "
                f"{diff['coef']:.4g}, "
                f"one-sided p = {diff['p_one_sided']:.4f}; results/validation.csv)")
    return "the validation pattern is absent (results/validation.csv)"


def lap_variation(power: dict[str, float], thresholds: EstimateConfig) -> tuple[bool, str]:
    """(meaningful, sentence): does LAP vary enough for a null beta_3 to mean anything (module docstring)?"""
    if _absolute_gap(thresholds):
        gap = power.get("lap_gap", math.nan)
        meaningful = math.isfinite(gap) and gap >= thresholds.min_lap_gap
        return meaningful, (f"the high-LAP half's mean recall LAP exceeds the low half's by {gap * 100:.3g} "
                            f"percentage points of probability, {'at least' if meaningful else 'less than'} "
                            f"min_lap_gap = {thresholds.min_lap_gap * 100:g} points (results/power.csv)")
    title = measures.REGISTRY[thresholds.lap_measure].title
    gap = _relative_gap(power, thresholds)
    meaningful = math.isfinite(gap) and gap >= thresholds.min_lap_relative_gap
    if _gate(thresholds) == "log":
        return meaningful, (f"the high-LAP half's mean {title} LAP exceeds the low half's by a factor "
                            f"{1 + gap:.4g} in the ratio of Min-K% probabilities, {'at least' if meaningful else 'less than'} "
                            f"1 + min_lap_relative_gap = {1 + thresholds.min_lap_relative_gap:g} (a log-ratio; "
                            "results/power.csv)")
    return meaningful, (f"the high-LAP half's mean {title} LAP exceeds the low half's by {gap:.3g} of mean LAP, "
                        f"{'at least' if meaningful else 'less than'} min_lap_relative_gap = "
                        f"{thresholds.min_lap_relative_gap:g} (relative: {title} has no natural unit; "
                        "results/power.csv)")


def _relative_gap(power: dict[str, float], thresholds: EstimateConfig, sample: str = "") -> float:
    """The high-minus-low gap of the configured measure as a share of its level (`sample` "_post": after the
    cutoff): power.csv's lap_relative_gap (gap / |mean|), or for a log-ratio exp(lap_gap) − 1."""
    measure = measures.REGISTRY[thresholds.lap_measure]
    if measure.gap == "log":
        return measure.relative_gap(power.get(f"lap_gap{sample}", math.nan), math.nan)
    return power.get(f"lap_relative_gap{sample}", math.nan)


def _gate(thresholds: EstimateConfig) -> str:
    """The configured measure's variation gate (signals/measures/base.py `gap`): "absolute" (min_lap_gap, the recall
    LAP, a probability with a natural level), "relative" (min_lap_relative_gap of |mean|: Min-K% prob, the loss,
    Min-K%++, Gap-K%, the zlib ratio) or "log" (a factor 1 + min_lap_relative_gap: the reference measure)."""
    return measures.REGISTRY[thresholds.lap_measure].gap


def _absolute_gap(thresholds: EstimateConfig) -> bool:
    return _gate(thresholds) == "absolute"


def lap_saturated(power: dict[str, float], thresholds: EstimateConfig) -> bool:
    """A recall LAP without meaningful variation at a high level (mean at least SATURATED_RECALL_LAP: most of the
    answer's probability on up or down, the model answering every recall query with a direction rather than
    abstaining, protocol Step 2's "guessing"): named "saturated" rather than merely flat. Min-K% has no natural level,
    so it is never called saturated here."""
    mean = power.get("mean_lap", math.nan)
    return _absolute_gap(thresholds) and math.isfinite(mean) and mean >= SATURATED_RECALL_LAP


def _power_text(power: dict[str, float], alpha: float) -> tuple[float, str]:
    """(upper bound's share, sentence with the upper bound and the MDE beside it); the share is inf when b1 <= 0 or
    the bound's standard error is undefined."""
    upper, ucb_share = power.get("ucb_beta3", math.nan), power.get("ucb_share", math.nan)
    mde, share, b1 = (power.get(k, math.nan) for k in ("mde_beta3", "mde_share", "b1_standalone"))
    caveat = (f" (CV3 jackknife standard error with t({power.get('df_bound', math.nan):.0f}): the CRV1 standard error "
              "is biased down with few clusters)" if power.get("cv3_bound", 0) == 1 else "")
    if math.isfinite(ucb_share) and math.isfinite(share):
        return ucb_share, (
            f"the one-sided {1 - alpha:.0%} upper confidence bound of beta_3 is {upper:.4g}{caveat}, an interaction "
            f"of {ucb_share:.0%} of the standalone LLM effect per SD of LAP (b1 = {b1:.4g}, SD of LAP = "
            f"{power.get('sd_lap', math.nan):.4g}; the paper's in-sample estimate is 37%); the minimum detectable "
            f"beta_3 ({alpha * 100:g}% one-sided, 80% power) is {mde:.4g}, i.e. an interaction of ≥ {share:.0%} of "
            "the standalone LLM effect per SD of LAP would have been detected with 80% probability (within-FE SD of "
            f"LAP = {power.get('sd_lap_within', math.nan):.3g}, {power.get('within_share_lap', math.nan):.0%} of "
            "its SD; results/power.csv)")
    if math.isfinite(b1) and b1 > 0:
        why = ("the standard error of its bounds could not be computed (results/power.csv se_bound; with few "
               "clusters: the CV3 jackknife is not defined when deleting one entity leaves beta_3 unidentified, i.e. "
               "beta_3 rests on that entity), so no upper bound or minimum detectable share can be stated")
    elif math.isfinite(b1):
        why = f"the standalone LLM effect b1 = {b1:.4g} is not positive, so no interaction share can be stated"
    else:
        why = "its share of the standalone LLM effect could not be computed"
    return math.inf, f"the minimum detectable beta_3 is {mde:.4g} and {why} (results/power.csv)"


def decide(detection: pd.DataFrame, validation: pd.DataFrame | None, placebo: pd.DataFrame | None,
           power: pd.DataFrame | dict | None, thresholds: EstimateConfig,
           notes: pd.DataFrame | None = None) -> Verdict:
    """The label and paragraph from results/detection.csv, validation.csv, placebo.csv, power.csv and
    estimation_notes.csv (module docstring)."""
    power = power_values(power)
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
    alpha, reps = thresholds.detection_alpha, thresholds.wild_bootstrap_reps
    read = inference(beta3, thresholds.wild_below_clusters, reps)
    significant = beta3["coef"] > 0 and read.p_one_sided < alpha
    negative = beta3["coef"] < 0 and read.p_lower < alpha
    pattern = validation_pattern(validation, notes, thresholds.validation_alpha, thresholds.wild_below_clusters)
    saturated_post = post_lap_saturated(power, thresholds)
    placebo_feasible, placebo_passes, place = placebo_judgement(placebo, notes, power, thresholds)
    informative, placebo_says = placebo_power(power, thresholds)
    if significant and placebo_feasible and placebo_passes and placebo_says:  # only a significant beta_3 is compared
        place += f" ({placebo_says})"
    share, power_text = _power_text(power, alpha)
    b3 = f"The pre-cutoff interaction beta_3 = {beta3['coef']:.4g} (t = {beta3['t']:.2f}, {read.text}, " \
         "results/detection.csv)"
    valid = _validation_text(validation, pattern)

    if placebo_feasible and not placebo_passes:
        return Verdict(MIXED, ["placebo"], f"{b3}; {place}, so the placebo fails: a beta_3 > 0 after the "
                       "training cutoff means the recall measure proxies for something other than memorization. "
                       f"Also, {valid}. Verdict: {MIXED} (placebo failed).")
    if negative:
        return Verdict(MIXED, ["beta_3 negative"], f"{b3} is significantly negative (one-sided p for beta_3 < 0 "
                       f"= {read.p_lower:.4f} < {alpha:g}; two-sided p = {read.p_two_sided:.4f}): forecast "
                       "accuracy falls as LAP rises. The paper's "
                       "Proposition 1 gives beta_3 >= 0 whenever LAP measures memorization (beta_3 has the sign of "
                       "E[L^2 Var(e | mu_hat, L)]), so here LAP proxies for something other than memorization and "
                       f"cannot clear the forecasts; {valid}; {place}. Verdict: {MIXED} (beta_3 significantly "
                       "negative).")
    if significant and pattern.present and placebo_passes and informative is not False:
        return Verdict(CONTAMINATION, [], f"{b3} is positive and significant; {valid}; and {place}. "
                       f"Verdict: {CONTAMINATION}: the in-sample LLM forecasts are contaminated by lookahead bias. "
                       "Restrict backtests to data after the model's training cutoff. Prompt-level fixes (masking, "
                       "instructions to ignore future information) are not a remedy unless this test, rerun, "
                       "shows they work.")
    if significant:
        unjudged = (saturated_post.split(":", 1)[0] if place.startswith("the placebo cannot be judged")
                    else "placebo infeasible")
        failed = (([] if pattern.present else ["validation"]) + ([] if placebo_feasible else [unjudged])
                  + (["placebo uninformative"] if placebo_feasible and informative is False else []))
        weak = (" (a placebo that could not have excluded the pre-cutoff interaction has not passed in the protocol's "
                "sense)" if "placebo uninformative" in failed else "")
        return Verdict(MIXED, failed, f"{b3} is positive and significant, but {valid} and {place}{weak}. "
                       f"Verdict: {MIXED} ({', '.join(failed)}): memorization cannot be separated from other "
                       "channels.")
    quiet = f"{b3}: beta_3 is not significantly greater than zero"
    varies, variation = lap_variation(power, thresholds)
    measured = math.isfinite(power.get("lap_gap" if _gate(thresholds) in ("absolute", "log") else "lap_relative_gap",
                                       math.nan))
    split_on_noise = not varies and measured  # an unknown gap (no power.csv row) never hides a contradiction
    why = pattern.missing + ([] if split_on_noise else pattern.contradicted)
    if why:
        return Verdict(MIXED, ["validation"], f"{quiet}, but {'; and '.join(why)}, so LAP cannot be read as a "
                       f"measure of memorization; {place}. Verdict: {MIXED} (validation).")
    if not varies:
        saturated = lap_saturated(power, thresholds)
        unjudged = ("; the validation halves differ too little in LAP to separate what the model recalls, so a "
                    "significant theta in either half does not contradict the pattern and the validation cannot be "
                    "judged (results/validation.csv)" if pattern.contradicted else f"; {valid}")
        what = (f"LAP saturated: {variation} at a mean LAP of {power.get('mean_lap', math.nan):.6g}, nearly every "
                "recall answer a direction" if saturated else f"{variation}: LAP shows no meaningful variation")
        return Verdict(UNDERPOWERED, ["LAP saturated" if saturated else "LAP variation"],
                       f"{quiet}, but {what} (protocol, final rule), so a quiet beta_3 says nothing about "
                       f"contamination whatever its standard error ({power_text}){unjudged}; {place}. Verdict: "
                       f"{UNDERPOWERED} (LAP {'saturated' if saturated else 'without meaningful variation'}).")
    detectable = power.get("mde_share", math.nan)
    if math.isinf(share) or not detectable <= thresholds.detectable_share:
        size = "undefined" if math.isinf(share) else f"{detectable:.0%}"
        return Verdict(UNDERPOWERED, ["power"], f"{quiet}, but {power_text}: the test had less than 80% power "
                       f"against an interaction of {thresholds.detectable_share:.0%} (detectable_share, the paper's "
                       "in-sample size), so a contamination of consequence could be missed; "
                       f"{valid}; {place}. Verdict: {UNDERPOWERED} (minimum detectable share {size}).")
    if share > thresholds.max_ucb_share:
        return Verdict(UNDERPOWERED, ["power"], f"{quiet}, but {power_text}: the one-sided {1 - alpha:.0%} "
                       f"confidence interval includes an interaction of {share:.0%} of the standalone LLM effect per "
                       f"SD of LAP, above {thresholds.max_ucb_share:.0%} (max_ucb_share), so a contamination of "
                       f"consequence is not excluded; {valid}; {place}. Verdict: {UNDERPOWERED}: the interval "
                       f"includes an interaction of {share:.0%}.")
    checks = diagnostics(placebo, power, thresholds)
    excluded = (f"{quiet}, and {power_text}; the minimum detectable share is at most "
                f"{thresholds.detectable_share:.0%} (detectable_share) and the upper bound at most "
                f"{thresholds.max_ucb_share:.0%} (max_ucb_share), so the data exclude a larger interaction that "
                f"rises with LAP; {variation}")
    assumption = ASSUMPTION + (f"; {checks}" if checks else "")
    if pattern.present:
        return Verdict(NO_EVIDENCE, [], f"{excluded}; {valid}; {place}. {assumption}. Verdict: {NO_EVIDENCE}.")
    if pattern.no_memorization:
        constant = "".join(f"; ud has no variation within the fixed effects in the {half}-LAP half (omitted as "
                           "collinear), so theta is zero there" for half in pattern.zero_halves)
        untested = ("no memorization is detected by the recall query: the high-LAP theta is null"
                    f"{constant} (results/validation.csv)")
    else:
        untested = ("the high-LAP theta is significant but the high-LAP recall does not predict the outcome "
                    "significantly better than the low-LAP recall per SD of the recalled direction "
                    "(results/validation.csv model "
                    "high_minus_low)")
    return Verdict(NO_EVIDENCE_UNTESTED, ["validation"], f"{excluded}; but {untested}, so LAP is not shown to "
                   "measure memorization and the test's power against memorization-driven contamination is unknown "
                   f"(protocol Step 3); {place}. {assumption}. Verdict: {NO_EVIDENCE_UNTESTED}: no contamination "
                   "that rises with LAP, but LAP's validity as a measure of memorization is untested.")
