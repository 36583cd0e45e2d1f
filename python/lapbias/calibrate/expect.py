"""What a calibration must show, checked on the run's own numbers (results/calibration/expected.csv and the
"Expected results" table of its REPORT.md); `lapbias calibrate` fails loudly when one is not met.

By `[calibrate] control` (docs/calibrate.md):
- "none" (the self-validation): the planted model's verdict is "Contamination detected" and the base model's is
  not; the planted model still answers the forecast prompt (parse rate at least [forecast] min_parse_rate) and its
  recall query answers "unknown" more often for never-exposed pre-cutoff pairs than for exposed ones (mean
  P(unknown) of arm 0 above that of every exposed arm);
- "flipped" (the opposite of each realized direction planted): the planted model's verdict is not "Contamination
  detected" (its forecasts follow the memorized, wrong, direction: beta_3 < 0);
- "post_cutoff" (post-cutoff pairs planted too): the placebo fails, so the verdict is "Mixed/invalid";
- "shuffled" (recall answers permuted over the pre-cutoff pairs after training): beta_3 is not significant
  (one-sided p at least [estimate] detection_alpha) and the verdict is not "Contamination detected".
Under every control the base model's verdict is not "Contamination detected" (it was never shown anything).
"""

from __future__ import annotations

import math

import pandas as pd

from ..errors import LapbiasError
from ..report.verdict import CONTAMINATION, MIXED
from .experiment import SHUFFLED


class CalibrationNotMet(LapbiasError):
    """A calibration ran to the end but did not show what its design expects (the outputs are written)."""


def _row(model: str, expectation: str, observed: str, met: bool) -> dict:
    return {"model": model, "expectation": expectation, "observed": observed, "met": bool(met)}


def check(control: str, tables: dict[str, pd.DataFrame], min_parse_rate: float, alpha: float) -> pd.DataFrame:
    """One row per expectation of `control` (module docstring): model, expectation, observed, met."""
    verdicts = tables["verdicts"].set_index("model")
    lap = tables["lap_by_arm"]
    rows = [_row("base", f"verdict is not {CONTAMINATION}", verdicts.loc["base", "verdict"],
                 verdicts.loc["base", "verdict"] != CONTAMINATION)]
    planted = verdicts.loc["planted"]
    if control == "none":
        rows.append(_row("planted", f"verdict is {CONTAMINATION}", _verdict(planted),
                         planted["verdict"] == CONTAMINATION))
        arms = lap[(lap["model"] == "planted") & (lap["post"] == 0) & (lap["exposure"] >= 0)]
        parsed = float((arms["forecast_parse_rate"] * arms["N"]).sum() / arms["N"].sum())
        rows.append(_row("planted", f"forecast parse rate >= {min_parse_rate:.0%} (pre-cutoff rows)", f"{parsed:.1%}",
                         parsed >= min_parse_rate))
        unknown = arms.set_index("exposure")["p_unknown_mean"]
        exposed = unknown.drop(0, errors="ignore")
        rows.append(_row("planted", "recall answers \"unknown\" more often for never-exposed pairs than for exposed "
                         "ones (mean P(unknown), arm 0 above every exposed arm)",
                         ", ".join(f"arm {e}: {p:.3f}" for e, p in unknown.items()),
                         0 in unknown and len(exposed) > 0 and bool((unknown[0] > exposed).all())))
    elif control == "flipped":
        rows.append(_row("planted", f"verdict is not {CONTAMINATION} (the planted directions are wrong)",
                         _verdict(planted), planted["verdict"] != CONTAMINATION))
    elif control == "post_cutoff":
        rows.append(_row("planted", f"the placebo fails and the verdict is {MIXED}", _verdict(planted),
                         planted["verdict"] == MIXED and _failed(planted["placebo_passes"])))
    elif control == "shuffled":
        shuffled = verdicts.loc[SHUFFLED]
        p = shuffled["beta3_p_one_sided"]
        rows.append(_row(SHUFFLED, f"beta_3 not significant (one-sided p >= {alpha:g}) and the verdict is not "
                         f"{CONTAMINATION}", _verdict(shuffled),
                         (math.isnan(p) or p >= alpha) and shuffled["verdict"] != CONTAMINATION))
    return pd.DataFrame(rows)


def _failed(passes) -> bool:
    """A placebo judged and failed (passes is False; None or NaN: infeasible, not failed)."""
    return passes is not None and not pd.isna(passes) and not bool(passes)


def _verdict(row: pd.Series) -> str:
    """The verdict with beta_3, its one-sided p and the placebo's, as observed."""
    failed = f" ({row['failed']})" if isinstance(row["failed"], str) and row["failed"] else ""
    return (f"{row['verdict']}{failed}; beta_3 = {row['beta3']:.4g} (one-sided p = {row['beta3_p_one_sided']:.4f}); "
            f"placebo one-sided p = {row['placebo_p_one_sided']:.4f}")


def failures(expected: pd.DataFrame) -> str:
    """The unmet expectations in one line ('' when every one is met)."""
    missed = expected[~expected["met"]]
    return "; ".join(f"{m}: expected {e}, observed {o}" for m, e, o in
                     zip(missed["model"], missed["expectation"], missed["observed"]))
