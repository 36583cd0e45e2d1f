"""§2's temporal controls (diagnostic ii: "temporal controls stratify by model cutoff and famous market months"),
on Variant A, by series (the authors' `famous_concentration` and `temporal_gradient`):

- famous periods against the others: parse rate, within-band rate and Pearson r on the `[leak] famous_dates`
  periods and on the other probed periods, and the lift = famous − other within-band rate (a model that recalls
  only the narrative-rich periods has a positive lift);
- recall against distance to the cutoff: each probed period's distance to the cutoff in years (its end to the
  cutoff; positive = before the cutoff, in the training window; negative = after, the holdout), the within-band
  rate of its parsed replies and the parse rate of its queries averaged per distinct distance (the authors' bins),
  and an OLS line (statsmodels) of each rate on the distance over those bins: the slope per year with its standard
  error and two-sided p. At least 3 bins are needed; a memorized series bounded by the training data shows recall
  and parse rate falling towards the cutoff (App. I).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import statsmodels.api as sm

from .metrics import pearson, wilson, within
from .series import FREQUENCIES

MIN_BINS = 3


def famous_split(panel: pd.DataFrame, bands: dict[str, float]) -> pd.DataFrame:
    """One row per series × slice (famous, other) of Variant A; empty without famous periods."""
    recall = panel[panel["variant"] == "A"]
    if "famous" not in recall or not recall["famous"].any():
        return pd.DataFrame()
    rows = []
    for name, part in recall.groupby("series", sort=True):
        band = bands.get(part["unit"].iloc[0], math.nan)
        rates = {}
        for label, flag in (("famous", True), ("other", False)):
            piece = part[part["famous"] == flag]
            parsed = piece[piece["status"] == "parsed"]
            hits = within(parsed["value"], parsed["truth"], band)
            rate, low, high = wilson(int(hits.sum()), len(parsed))
            rates[label] = rate
            rows.append({"series": name, "slice": label, "n_queries": len(piece), "n_parsed": len(parsed),
                         "parse_rate": wilson(len(parsed), len(piece))[0], "within_band": rate, "within_band_lo": low,
                         "within_band_hi": high, "pearson_r": pearson(parsed["value"], parsed["truth"]),
                         "band": band})
        for row in rows[-2:]:
            row["lift"] = rates["famous"] - rates["other"]
    return pd.DataFrame(rows)


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    if len(x) < MIN_BINS or np.ptp(x) == 0:
        return math.nan, math.nan, math.nan
    if np.ptp(y) == 0:  # a flat rate: slope 0 exactly (OLS would return rounding noise with a spurious p)
        return 0.0, 0.0, math.nan
    fit = sm.OLS(y, sm.add_constant(x)).fit()
    return float(fit.params[1]), float(fit.bse[1]), float(fit.pvalues[1])


def cutoff_gradient(panel: pd.DataFrame, cutoff: dt.date, bands: dict[str, float]) -> pd.DataFrame:
    """One row per series of Variant A: slopes of the within-band rate and the parse rate on years to the cutoff."""
    recall = panel[panel["variant"] == "A"].copy()
    if recall.empty:
        return pd.DataFrame()
    ends = [pd.Period(p, freq=FREQUENCIES[f]).end_time.normalize() for p, f in zip(recall["period"],
                                                                                  recall["frequency"])]
    recall["years_to_cutoff"] = [(pd.Timestamp(cutoff) - end).days / 365.25 for end in ends]
    rows = []
    for name, part in recall.groupby("series", sort=True):
        band = bands.get(part["unit"].iloc[0], math.nan)
        part = part.assign(parsed=(part["status"] == "parsed").astype(float))
        part["hit"] = np.where(part["parsed"] == 1, within(part["value"].fillna(0), part["truth"], band), np.nan)
        parse_bins = part.groupby("years_to_cutoff")["parsed"].mean()
        hit_bins = part.dropna(subset=["hit"]).groupby("years_to_cutoff")["hit"].mean()
        row = {"series": name, "n_queries": len(part), "min_years_to_cutoff": float(part["years_to_cutoff"].min()),
               "max_years_to_cutoff": float(part["years_to_cutoff"].max()), "n_bins_within_band": len(hit_bins),
               "n_bins_parse_rate": len(parse_bins)}
        row["slope_within_band_per_year"], row["se_within_band"], row["p_within_band"] = _fit(
            hit_bins.index.to_numpy(float), hit_bins.to_numpy(float))
        row["slope_parse_rate_per_year"], row["se_parse_rate"], row["p_parse_rate"] = _fit(
            parse_bins.index.to_numpy(float), parse_bins.to_numpy(float))
        rows.append(row)
    return pd.DataFrame(rows)
