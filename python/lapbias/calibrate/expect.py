"""What a calibration must show, checked on the run's own numbers (results/calibration/expected.csv and the
"Expected results" table of its REPORT.md); `lapbias calibrate` fails loudly when one is not met.

By `[calibrate] control` (docs/calibrate.md):
- "none" (the self-validation): the planted model's verdict is "Contamination detected" and the base model's is
  not; both models answer the forecast prompt (parse rate at least [forecast] min_parse_rate on every row); on the
  planted model the LAP the run measures ([estimate] lap_measure) separates exposed from never-exposed pre-cutoff
  pairs by at least MIN_LAP_GAP_SD pooled SDs in every exposed arm, while the post-cutoff pairs' lies at most
  MAX_POST_GAP_SD above the never-exposed ones' (the placebo's LAP is that of an unexposed model);
- "flipped" (the opposite of each realized direction planted): the planted model's verdict is not "Contamination
  detected" (its forecasts follow the memorized, wrong, direction: beta_3 < 0);
- "post_cutoff" (post-cutoff pairs planted too): the placebo fails, so the verdict is "Mixed/invalid";
- "shuffled" (recall answers and Min-K% scores permuted over the pre-cutoff pairs after training): beta_3 is not significant
  (one-sided p at least [estimate] detection_alpha) and the verdict is not "Contamination detected".
Under every control the base model's verdict is not "Contamination detected" and its pre-cutoff beta_3 is not
significant: it was never shown anything. The second half is the specificity check that can fail: a base model
without skill cannot reach "No evidence" (b1 <= 0 makes it "Underpowered"), and a placebo that fails by chance makes
it "Mixed/invalid", which the verdict alone would count as a pass; the row shows both p-values.
"""

from __future__ import annotations

import math

import pandas as pd

from ..errors import LapbiasError
from ..report.verdict import CONTAMINATION, MIXED
from .experiment import LAP_PREFIX, SHUFFLED, configured_verdicts


MIN_LAP_GAP_SD = 1.0
"""The design's separation of exposed from never-exposed pairs on the measured LAP, in SDs (experiment._gap_sd; for
Min-K% on the log scale, experiment.LOG_SCALE) -- not a verdict threshold: what the planting must achieve for the
test to have something to find."""
MAX_POST_GAP_SD = 0.5
"""Post-cutoff pairs are never exposed: their LAP may lie at most this many pooled SDs ABOVE the never-exposed
pre-cutoff pairs' (planted memory would show there, and would make the planted model's placebo fail for the wrong
reason). Below is no defect: the planting raises the Min-K% of every text, more for those dated in the months its
articles were dated (MEASURED 2026-11-28, the planted models of the full runs in docs/calibrate.md: post-cutoff
-0.20 to -0.58 SD from the never-exposed pre-cutoff texts, which rose 13- to 19-fold over the base model's, the
post-cutoff 4- to 5-fold; base models -0.11 to +0.07 SD), the fall after the training cutoff that the paper's LAP
shows."""


class CalibrationNotMet(LapbiasError):
    """A calibration ran to the end but did not show what its design expects (the outputs are written)."""


def _row(model: str, expectation: str, observed: str, met: bool) -> dict:
    return {"model": model, "expectation": expectation, "observed": observed, "met": bool(met)}


def check(control: str, tables: dict[str, pd.DataFrame], min_parse_rate: float, alpha: float,
          lap_measure: str = "minkprob") -> pd.DataFrame:
    """One row per expectation of `control` (module docstring): model, expectation, observed, met."""
    verdicts = configured_verdicts(tables["verdicts"])
    lap = tables["lap_by_arm"]
    base = verdicts.loc["base"]
    rows = [_row("base", f"verdict is not {CONTAMINATION} and its pre-cutoff beta_3 is not significant (one-sided "
                 f"p >= {alpha:g}, the p the verdict reads)", _verdict(base), base["verdict"] != CONTAMINATION
                 and not _p(base) < alpha)]
    planted = verdicts.loc["planted"]
    if control == "none":
        rows.append(_row("planted", f"verdict is {CONTAMINATION}", _verdict(planted),
                         planted["verdict"] == CONTAMINATION))
        for model in ("base", "planted"):
            arms = lap[(lap["model"] == model) & (lap["exposure"] >= 0)]
            parsed = float((arms["forecast_parse_rate"] * arms["N"]).sum() / arms["N"].sum())
            rows.append(_row(model, f"forecast parse rate >= {min_parse_rate:.0%} (over all rows)", f"{parsed:.1%}",
                             parsed >= min_parse_rate))
        rows += _separation(lap[lap["model"] == "planted"], LAP_PREFIX[lap_measure], lap_measure)
    elif control == "flipped":
        rows.append(_row("planted", f"verdict is not {CONTAMINATION} (the planted directions are wrong)",
                         _verdict(planted), planted["verdict"] != CONTAMINATION))
    elif control == "post_cutoff":
        rows.append(_row("planted", f"the placebo fails and the verdict is {MIXED}", _verdict(planted),
                         planted["verdict"] == MIXED and _failed(planted["placebo_passes"])))
    elif control == "shuffled":
        shuffled = verdicts.loc[SHUFFLED]
        p = _p(shuffled)
        rows.append(_row(SHUFFLED, f"beta_3 not significant (one-sided p >= {alpha:g}) and the verdict is not "
                         f"{CONTAMINATION}", _verdict(shuffled),
                         (math.isnan(p) or p >= alpha) and shuffled["verdict"] != CONTAMINATION))
    return pd.DataFrame(rows)


def _separation(lap: pd.DataFrame, prefix: str, lap_measure: str) -> list[dict]:
    """The planted model's LAP: every exposed pre-cutoff arm at least MIN_LAP_GAP_SD above arm 0, the post-cutoff
    pairs at most MAX_POST_GAP_SD above it (gaps in pooled SDs, lap_by_arm's `<prefix>_gap_sd_vs_arm0`)."""
    gap = lap.set_index("arm")[f"{prefix}_gap_sd_vs_arm0"] if f"{prefix}_gap_sd_vs_arm0" in lap else pd.Series()
    exposed = lap.loc[(lap["post"] == 0) & (lap["exposure"] > 0), "arm"]
    observed = ", ".join(f"arm {arm}: {gap.get(arm, math.nan):+.2f} SD" for arm in exposed)
    post = float(gap.get("post", math.nan))
    return [_row("planted", f"LAP ({lap_measure}) of every exposed arm >= {MIN_LAP_GAP_SD:g} SD above the "
                 "never-exposed pre-cutoff pairs", observed,
                 len(exposed) > 0 and all(gap.get(a, math.nan) >= MIN_LAP_GAP_SD for a in exposed)),
            _row("planted", f"LAP ({lap_measure}) of the post-cutoff pairs at most {MAX_POST_GAP_SD:g} SD above the "
                 "never-exposed pre-cutoff pairs'", f"{post:+.2f} SD", post <= MAX_POST_GAP_SD)]


def _p(row: pd.Series) -> float:
    """The one-sided p of beta_3 > 0 that the verdict reads (the wild cluster bootstrap's with few clusters:
    experiment.read_p); the CRV1 p of a verdicts.csv written before that column existed."""
    value = row.get("beta3_p_verdict", math.nan)
    return float(row["beta3_p_one_sided"]) if pd.isna(value) else float(value)


def _failed(passes) -> bool:
    """A placebo judged and failed (passes is False; None or NaN: infeasible, not failed)."""
    return passes is not None and not pd.isna(passes) and not bool(passes)


def _verdict(row: pd.Series) -> str:
    """The verdict with beta_3, its one-sided p and the placebo's, as observed."""
    failed = f" ({row['failed']})" if isinstance(row["failed"], str) and row["failed"] else ""
    return (f"{row['verdict']}{failed}; beta_3 = {row['beta3']:.4g} (one-sided p = {_p(row):.4f}, CRV1 "
            f"{row['beta3_p_one_sided']:.4f}); placebo one-sided p = {row['placebo_p_one_sided']:.4f}")


def failures(expected: pd.DataFrame) -> str:
    """The unmet expectations in one line ('' when every one is met)."""
    missed = expected[~expected["met"]]
    return "; ".join(f"{m}: expected {e}, observed {o}" for m, e, o in
                     zip(missed["model"], missed["expectation"], missed["observed"]))
