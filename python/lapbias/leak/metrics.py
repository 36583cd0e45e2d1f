"""NumLeak metrics (paper §2, App. C): by series × variant × window over the probe panel.

- parse rate = parsed / asked, with a Wilson 95% interval (statsmodels proportion_confint, method "wilson");
  refusals and unparsed replies both count as not parsed (reported apart);
- sign accuracy = share of parsed replies with sign(recall) = sign(truth) (Wilson interval);
- Pearson r of recall and truth over parsed replies, with a percentile bootstrap interval (pairs resampled
  with replacement, `reps` draws, seeded);
- MAE = mean |recall − truth| in the series' units;
- within-band accuracy = share of parsed replies with |recall − truth| ≤ band (Wilson interval); the band is in
  the series' units (config.DEFAULT_BANDS: 0.10 percentage points = 10 basis points);
- Variant C: rank accuracy = share of parsed picks naming the higher date (Wilson interval);
- Variant E: draw spread = mean |draw 1 − draw 2| over dates where both parsed, and the share within the band;
- factor-shuffle null (App. C): Pearson r with the truth permuted across dates within the series, `reps`
  permutations; reported as its 2.5% and 97.5% quantiles and the one-sided p = (1 + #{r_null ≥ r}) / (1 + reps);
- selectivity (App. C): Pearson r of each series' recall with every sibling series' truth on the same dates;
- fabricated-control commit rate = the parse rate of the fabricated variants (App. K).
Fewer than 3 parsed pairs, or no variation, leave r and its interval NaN (the `note` column says why).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

VALUE_VARIANTS = ("A", "B", "D", "E")
CONTROLS = ("fabricated_series", "fabricated_fund")


def wilson(successes: int, n: int) -> tuple[float, float, float]:
    """(share, low, high): the Wilson score 95% interval; NaNs when n = 0."""
    if n == 0:
        return math.nan, math.nan, math.nan
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    return successes / n, float(low), float(high)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:  # ptp: a constant's std can be ~1e-16, not 0
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def pearson_bootstrap(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> tuple[float, float, float]:
    """(r, low, high): percentile bootstrap 95% interval of Pearson r over resampled pairs. Draws whose r is
    undefined (a resample without variation) are left out of the quantiles."""
    r = pearson(x, y)
    if math.isnan(r):
        return r, math.nan, math.nan
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    generator = np.random.default_rng(seed)
    draws = generator.integers(0, len(x), size=(reps, len(x)))
    values = np.array([pearson(x[d], y[d]) for d in draws])
    values = values[~np.isnan(values)]
    if not len(values):
        return r, math.nan, math.nan
    return r, float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))


def shuffle_null(recall: np.ndarray, truth: np.ndarray, reps: int, seed: int) -> tuple[float, float, float]:
    """(q2.5, q97.5, p): the factor-shuffle null of Pearson r (truth permuted across dates within the series)."""
    r = pearson(recall, truth)
    if math.isnan(r):
        return math.nan, math.nan, math.nan
    generator = np.random.default_rng(seed)
    truth = np.asarray(truth, dtype=float)
    null = np.array([pearson(recall, generator.permutation(truth)) for _ in range(reps)])
    null = np.nan_to_num(null, nan=0.0)
    return float(np.quantile(null, 0.025)), float(np.quantile(null, 0.975)), float((1 + (null >= r).sum()) / (1 + reps))


def _row(group: pd.DataFrame, band: float, reps: int, seed: int) -> dict:
    variant = group["variant"].iloc[0]
    n = len(group)
    parsed = group[group["status"] == "parsed"]
    row = {"n_queries": n, "n_parsed": len(parsed), "n_refusal": int((group["status"] == "refusal").sum()),
           "n_unparsed": int((group["status"] == "unparsed").sum())}
    row["parse_rate"], row["parse_rate_lo"], row["parse_rate_hi"] = wilson(len(parsed), n)
    notes = []
    if variant == "C":
        correct = int((parsed["value"] == parsed["truth"]).sum())
        row["rank_accuracy"], row["rank_accuracy_lo"], row["rank_accuracy_hi"] = wilson(correct, len(parsed))
    elif variant in VALUE_VARIANTS:
        recall, truth = parsed["value"].to_numpy(float), parsed["truth"].to_numpy(float)
        sign_hits = int((np.sign(recall) == np.sign(truth)).sum())
        row["sign_accuracy"], row["sign_accuracy_lo"], row["sign_accuracy_hi"] = wilson(sign_hits, len(parsed))
        row["pearson_r"], row["pearson_lo"], row["pearson_hi"] = pearson_bootstrap(recall, truth, reps, seed)
        if math.isnan(row["pearson_r"]):
            notes.append("r undefined: fewer than 3 parsed replies or no variation")
        row["mae"] = float(np.abs(recall - truth).mean()) if len(parsed) else math.nan
        hits = int((np.abs(recall - truth) <= band + 1e-9).sum())
        row["within_band"], row["within_band_lo"], row["within_band_hi"] = wilson(hits, len(parsed))
        row["band"] = band
        if variant == "E":
            both = parsed.pivot_table(index="period", columns="draw", values="value", aggfunc="first").dropna()
            if both.shape[1] >= 2 and len(both):
                spread = (both.iloc[:, 0] - both.iloc[:, 1]).abs()
                row["draw_spread"] = float(spread.mean())
                row["draw_agree_within_band"] = float((spread <= band + 1e-9).mean())
    if "entropy_bits" in group and group["entropy_bits"].notna().any():
        row["mean_entropy_bits"] = float(group["entropy_bits"].mean())
    row["note"] = "; ".join(notes)
    return row


COLUMNS = [
    "series", "variant", "window", "unit", "n_queries", "n_parsed", "n_refusal", "n_unparsed",
    "parse_rate", "parse_rate_lo", "parse_rate_hi", "sign_accuracy", "sign_accuracy_lo", "sign_accuracy_hi",
    "pearson_r", "pearson_lo", "pearson_hi", "mae", "within_band", "within_band_lo", "within_band_hi", "band",
    "rank_accuracy", "rank_accuracy_lo", "rank_accuracy_hi", "draw_spread", "draw_agree_within_band",
    "shuffle_r_lo", "shuffle_r_hi", "shuffle_p", "mean_entropy_bits", "note",
]


def summarize(panel: pd.DataFrame, bands: dict[str, float], reps: int, shuffle_reps: int, seed: int) -> pd.DataFrame:
    """One row per series × variant × window with every metric and interval (results/leak/summary.csv)."""
    rows = []
    for (series, variant, window), group in panel.groupby(["series", "variant", "window"], sort=True):
        unit = group["unit"].iloc[0]
        row = {"series": series, "variant": variant, "window": window, "unit": unit}
        row.update(_row(group, bands.get(unit, math.nan), reps, seed))
        if variant in VALUE_VARIANTS:
            parsed = group[group["status"] == "parsed"]
            row["shuffle_r_lo"], row["shuffle_r_hi"], row["shuffle_p"] = shuffle_null(
                parsed["value"].to_numpy(float), parsed["truth"].to_numpy(float), shuffle_reps, seed + 1)
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def selectivity(panel: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Variant A recall of each series against the truth of every probed sibling series on the same dates."""
    recalls = panel[(panel["variant"] == "A") & (panel["status"] == "parsed")]
    rows = []
    for recalled, part in recalls.groupby("series"):
        for truth_series, truth in table.groupby("series"):
            merged = part[["date", "value"]].merge(truth[["date", "value"]], on="date", suffixes=("", "_truth"))
            rows.append({"recalled_series": recalled, "truth_series": truth_series, "n": len(merged),
                         "pearson_r": pearson(merged["value"], merged["value_truth"]),
                         "own_series": recalled == truth_series})
    return pd.DataFrame(rows, columns=["recalled_series", "truth_series", "n", "pearson_r", "own_series"])
