"""NumLeak metrics (paper §2, App. C, J, K): by series × variant × window over the probe panel.

- parse rate = parsed / asked, with a Wilson 95% interval (statsmodels proportion_confint, method "wilson");
  refusals and unparsed replies both count as not parsed (reported apart), and so do replies cut off at the
  answer-length limit before a value (`n_cut_unparsed`: with any, the parse rate is a lower bound); parsed
  replies whose value is only numbers the prompt itself writes (its format example) are counted apart
  (`n_prompt_echo`, parse.prompt_echo): they stay in every metric, as in the paper, and the report says so;
  unparsed replies that hold a number the rules do not read (`n_unread_number`, parse.unread_numbers: a bare
  number in a reply over 30 characters) are counted apart too: not refusals, so the share of replies that give
  a number is above the parse rate;
- sign accuracy = share of parsed replies with sign(recall) = sign(truth) over the rows whose truth is not 0
  (the authors' `dir_correct`; a recall of 0 is a miss), Wilson interval; `sign_informative` is False for a level
  series (every value of one sign, e.g. an unemployment rate), where any positive answer scores;
- Pearson r of recall and truth over parsed replies, with a percentile bootstrap interval (pairs resampled
  with replacement, `reps` draws, seeded; the authors' `bootstrap_pearson_ci`);
- MAE = mean |recall − truth| in the series' units;
- within-band accuracy = share of parsed replies with |recall − truth| < band, strict (§2's within-25-bps: the
  authors' `abs_error < tol`), Wilson interval, at the band and at the fine band (25 and 5 basis points for
  percent series). The error is rounded to 9 decimals first, so an error of exactly one band width (0.25
  between two-decimal values) is a miss whatever the float rounding of the subtraction;
- factor-shuffle null (§2 (i), App. C; the authors' `chance_rate_factor_shuffle`), Variant A only: the date is
  kept and the series swapped: each parsed date of the target series is paired with the estimate of a sibling
  series drawn at random for that date (dates whose drawn sibling has no parsed estimate are left out of that
  draw), and the within-band rate is recomputed; `shuffle_chance` is its mean over `shuffle_reps` draws and
  `shuffle_p` = (1 + #{draw rate ≥ observed}) / (1 + draws), observed on the same per-date estimates (repeated
  queries of a date averaged, as the authors' pivot does). It needs a probed sibling series;
- date-permutation test of r (not the paper's null; kept under its own name): the truth permuted across dates
  within the series, `permutation_reps` permutations; one-sided p = (1 + #{r_perm ≥ r}) / (1 + reps);
- Variant C: rank accuracy = share of parsed picks naming the higher date (Wilson interval; chance 0.5, App. J);
- Variant E: draw spread = mean |draw 1 − draw 2| over dates where both parsed, and the share within the band;
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
ROUND = 9
"""Decimals an error is rounded to before the strict band comparison."""


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


def within(recall, truth, band: float) -> np.ndarray:
    """|recall − truth| < band, strict, the error rounded to ROUND decimals (module docstring)."""
    return np.round(np.abs(np.asarray(recall, float) - np.asarray(truth, float)), ROUND) < band


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


def date_permutation(recall: np.ndarray, truth: np.ndarray, reps: int, seed: int) -> tuple[float, float, float]:
    """(q2.5, q97.5, p): Pearson r with the truth permuted across dates within the series (module docstring)."""
    r = pearson(recall, truth)
    if math.isnan(r):
        return math.nan, math.nan, math.nan
    generator = np.random.default_rng(seed)
    truth = np.asarray(truth, dtype=float)
    null = np.array([pearson(recall, generator.permutation(truth)) for _ in range(reps)])
    null = np.nan_to_num(null, nan=0.0)
    return float(np.quantile(null, 0.025)), float(np.quantile(null, 0.975)), float((1 + (null >= r).sum()) / (1 + reps))


def factor_shuffle(parsed: pd.DataFrame, bands: dict[str, float], reps: int, seed: int) -> dict[str, tuple]:
    """series -> (shuffle_chance, shuffle_p, observed) for one window's parsed Variant-A rows (module docstring);
    a series without a sibling is left out."""
    estimates = parsed.pivot_table(index="period", columns="series", values="value", aggfunc="mean")
    truths = parsed.pivot_table(index="period", columns="series", values="truth", aggfunc="mean")
    names = list(estimates.columns)
    units = parsed.groupby("series")["unit"].first()
    out = {}
    if len(names) < 2:
        return out
    generator = np.random.default_rng(seed)
    matrix = estimates.to_numpy(float)
    for column, name in enumerate(names):
        band = bands.get(units[name], math.nan)
        truth, own = truths[name].to_numpy(float), matrix[:, column]
        seen = ~np.isnan(truth) & ~np.isnan(own)
        observed = float(within(own[seen], truth[seen], band).mean())
        others = np.array([c for c in range(len(names)) if c != column])
        picks = others[generator.integers(0, len(others), size=(reps, len(truth)))]
        alternative = matrix[np.arange(len(truth))[None, :], picks]
        usable = ~np.isnan(truth)[None, :] & ~np.isnan(alternative)
        hits = (np.round(np.abs(alternative - truth[None, :]), ROUND) < band) & usable
        counts = usable.sum(axis=1)
        rates = hits.sum(axis=1)[counts > 0] / counts[counts > 0]
        if len(rates):
            out[name] = (float(rates.mean()), float((1 + (rates >= observed).sum()) / (1 + len(rates))), observed)
    return out


def _row(group: pd.DataFrame, band: float, fine_band: float, level: bool, reps: int, perm_reps: int,
         seed: int) -> dict:
    variant = group["variant"].iloc[0]
    n = len(group)
    parsed = group[group["status"] == "parsed"]
    truncated = group["truncated"] if "truncated" in group else pd.Series(np.nan, index=group.index)
    row = {"n_queries": n, "n_parsed": len(parsed), "n_refusal": int((group["status"] == "refusal").sum()),
           "n_unparsed": int((group["status"] == "unparsed").sum()), "n_truncated": int((truncated == 1).sum()),
           "n_length_unknown": int(truncated.isna().sum()),
           "n_cut_unparsed": int(((truncated == 1) & (group["status"] != "parsed")).sum()),
           "n_prompt_echo": int(group["prompt_echo"].sum()) if "prompt_echo" in group else 0,
           "n_unread_number": int(group["unread_number"].sum()) if "unread_number" in group else 0}
    row["parse_rate"], row["parse_rate_lo"], row["parse_rate_hi"] = wilson(len(parsed), n)
    notes = []
    if variant == "C":
        correct = int((parsed["value"] == parsed["truth"]).sum())
        row["rank_accuracy"], row["rank_accuracy_lo"], row["rank_accuracy_hi"] = wilson(correct, len(parsed))
    elif variant in VALUE_VARIANTS:
        recall, truth = parsed["value"].to_numpy(float), parsed["truth"].to_numpy(float)
        signed = truth != 0
        row["n_sign"] = int(signed.sum())
        row["sign_accuracy"], row["sign_accuracy_lo"], row["sign_accuracy_hi"] = wilson(
            int((np.sign(recall[signed]) == np.sign(truth[signed])).sum()), int(signed.sum()))
        row["sign_informative"] = not level
        if level:
            notes.append("sign accuracy uninformative: every value of this series has one sign")
        row["pearson_r"], row["pearson_lo"], row["pearson_hi"] = pearson_bootstrap(recall, truth, reps, seed)
        if math.isnan(row["pearson_r"]):
            notes.append("r undefined: fewer than 3 parsed replies or no variation")
        elif len(np.unique(recall)) <= 2:
            distinct = ", ".join(f"{v:g}" for v in np.unique(recall))
            notes.append(f"r rests on 2 distinct answers ({distinct}): a constant guess with exceptions, not recall")
        row["mae"] = float(np.abs(recall - truth).mean()) if len(parsed) else math.nan
        for name, width in (("within_band", band), ("within_fine_band", fine_band)):
            row[name], row[f"{name}_lo"], row[f"{name}_hi"] = wilson(int(within(recall, truth, width).sum()),
                                                                      len(parsed))
        row["band"], row["fine_band"] = band, fine_band
        row["date_perm_r_lo"], row["date_perm_r_hi"], row["date_perm_p"] = date_permutation(recall, truth, perm_reps,
                                                                                           seed + 1)
        if variant == "E":
            both = parsed.pivot_table(index="period", columns="draw", values="value", aggfunc="first").dropna()
            if both.shape[1] >= 2 and len(both):
                spread = (both.iloc[:, 0] - both.iloc[:, 1]).abs()
                row["n_draw_pairs"] = len(both)
                row["draw_spread"] = float(spread.mean())
                row["draw_agree_within_band"] = float(within(both.iloc[:, 0], both.iloc[:, 1], band).mean())
    if row["n_prompt_echo"]:
        notes.append(f"{row['n_prompt_echo']} of {len(parsed)} parsed values are only numbers of the prompt's own "
                     "example (an echo of the question)")
    if row["n_cut_unparsed"]:
        notes.append(f"{row['n_cut_unparsed']} of {n} replies ended at the length limit without a value: the parse "
                     "rate is a lower bound")
    if row["n_unread_number"]:
        notes.append(f"{row['n_unread_number']} of {n} replies hold a number the parser does not read (a bare "
                     "number in a reply over 30 characters, or beyond the plausibility bound): not refusals; the "
                     "share of replies that give a number is above the parse rate")
    row["note"] = "; ".join(notes)
    return row


COLUMNS = [
    "series", "variant", "window", "unit", "n_queries", "n_parsed", "n_refusal", "n_unparsed", "n_truncated",
    "n_length_unknown", "n_cut_unparsed", "n_prompt_echo", "n_unread_number", "parse_rate", "parse_rate_lo",
    "parse_rate_hi", "n_sign",
    "sign_accuracy", "sign_accuracy_lo", "sign_accuracy_hi", "sign_informative", "pearson_r", "pearson_lo",
    "pearson_hi", "mae", "within_band", "within_band_lo", "within_band_hi", "band", "within_fine_band",
    "within_fine_band_lo", "within_fine_band_hi", "fine_band", "shuffle_chance", "shuffle_p", "rank_accuracy",
    "rank_accuracy_lo", "rank_accuracy_hi", "n_draw_pairs", "draw_spread", "draw_agree_within_band", "date_perm_r_lo",
    "date_perm_r_hi", "date_perm_p", "note",
]


def level_series(values: pd.DataFrame) -> set[str]:
    """Series whose every value has one sign (columns series, value): sign accuracy says nothing there."""
    signs = values.groupby("series")["value"].agg(lambda v: (v > 0).all() or (v < 0).all())
    return set(signs[signs].index)


def summarize(panel: pd.DataFrame, bands: dict[str, float], fine_bands: dict[str, float], levels: set[str],
              reps: int, shuffle_reps: int, permutation_reps: int, seed: int) -> pd.DataFrame:
    """One row per series × variant × window with every metric and interval (results/leak/summary.csv)."""
    rows = []
    for (series, variant, window), group in panel.groupby(["series", "variant", "window"], sort=True):
        unit = group["unit"].iloc[0]
        row = {"series": series, "variant": variant, "window": window, "unit": unit}
        row.update(_row(group, bands.get(unit, math.nan), fine_bands.get(unit, math.nan), series in levels, reps,
                        permutation_reps, seed))
        rows.append(row)
    summary = pd.DataFrame(rows).reindex(columns=COLUMNS)
    recalls = panel[(panel["variant"] == "A") & (panel["status"] == "parsed")]
    for window, part in recalls.groupby("window"):
        for name, (chance, p, _) in factor_shuffle(part, bands, shuffle_reps, seed + 2).items():
            at = (summary["series"] == name) & (summary["variant"] == "A") & (summary["window"] == window)
            summary.loc[at, ["shuffle_chance", "shuffle_p"]] = chance, p
    return summary


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
