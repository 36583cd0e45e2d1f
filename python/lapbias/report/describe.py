"""Descriptive files for the report (protocol Step 2 sanity checks and Final report items 1-2)."""

from __future__ import annotations

import pandas as pd

from ..data.validate import read_source_record
from ..estimate.scaling import mean_sd
from ..io import Layout, read_parquet, write_csv
from ..signals import measures

SAMPLES = {"pre": 0, "post": 1}
DEFAULTS = {"lap_exact": False, "censoring_bound": float("nan"), "release_gap": 0}
"""Panel columns a panel written before them (or built by hand) lacks: top-k recall, no release-date gap."""


def with_defaults(panel: pd.DataFrame) -> pd.DataFrame:
    return panel.assign(**{column: value for column, value in DEFAULTS.items() if column not in panel})


def lap_distribution(panel: pd.DataFrame) -> pd.DataFrame:
    """Protocol Step 2: distribution of LAP pre vs post cutoff (n, mean, sd, min, quartiles, max), both measures."""
    rows = []
    for sample, flag in SAMPLES.items():
        part = panel[panel["post"] == flag]
        for measure in [m.column for m in measures.REGISTRY.values() if m.column in panel]:  # an older panel: fewer
            values = part[measure].dropna()
            mean, spread = mean_sd(values)  # at any units: Min-K% LAP is ~1e-8
            rows.append({"sample": sample, "measure": measure, "n": len(values), "mean": mean,
                         "sd": spread, "min": values.min(), "p25": values.quantile(0.25),
                         "median": values.median(), "p75": values.quantile(0.75), "max": values.max()})
    return pd.DataFrame(rows)


def recall_checks(panel: pd.DataFrame) -> pd.DataFrame:
    """Protocol Step 2: censoring share per label and residual mass, per sample, over unique recall queries;
    `exact` = share of queries with exact label probabilities (local backends: never censored);
    `censoring_bound_max` = the largest probability a token of a censored label could have (exp of the k-th
    log-prob, max over the queries with a censored label; empty when none is censored); where the answers' mass
    goes: `lap_mean` (P(up) + P(down)), `residual_mass_mean` (1 - P(up) - P(down) - P(unknown)) and so
    `p_unknown_mean` = 1 - lap_mean - residual_mass_mean (means over the same queries)."""
    rows = []
    queries = with_defaults(panel).drop_duplicates(["entity_id", "target_date"])
    for sample, flag in SAMPLES.items():
        part = queries[queries["post"] == flag]
        censored = part[["censored_up", "censored_down", "censored_unknown"]].any(axis=1)
        rows.append({"sample": sample, "n_queries": len(part), "exact": part["lap_exact"].mean(),
                     "censored_up": part["censored_up"].mean(), "censored_down": part["censored_down"].mean(),
                     "censored_unknown": part["censored_unknown"].mean(),
                     "censoring_bound_max": part.loc[censored, "censoring_bound"].max(),
                     "residual_mass_mean": part["residual_mass"].mean(),
                     "residual_mass_max": part["residual_mass"].max(), "lap_mean": part["lap_recall"].mean(),
                     "p_unknown_mean": 1.0 - part["lap_recall"].mean() - part["residual_mass"].mean()})
    return pd.DataFrame(rows)


def sample_description(panel: pd.DataFrame, dropped: pd.DataFrame, source: dict | None = None) -> pd.DataFrame:
    """Final report item 1: N pre/post, entities, periods, rows dropped in validation (by reason), rows left out by a
    `--sample` subsample (data/derived/data_source.json), the forecast parse rate of the panel's rows."""
    panel = with_defaults(panel)
    n_dropped = int(dropped["n_rows"].sum()) if len(dropped) else 0
    subsample = (source or {}).get("subsample")
    valid = int(source["valid_rows"]) if subsample else len(panel)
    items = [("rows in the input file", valid + n_dropped), ("rows dropped in validation", n_dropped)]
    items += [(f"  dropped: {r.rule}", int(r.n_rows)) for r in dropped.itertuples()]
    if subsample:
        items.append((f"rows left out by --sample {subsample['rows']} (a random subsample of the valid rows, seed "
                      f"{subsample['seed']})", valid - len(panel)))
    items += [
        ("rows in the panel", len(panel)),
        ("rows pre-cutoff", int((panel["post"] == 0).sum())),
        ("rows post-cutoff", int((panel["post"] == 1).sum())),
        ("rows in the release-date gap (cutoff < target date ≤ release date: neither sample)",
         int(panel["release_gap"].sum())),
        ("entities", int(panel["entity_id"].nunique())),
        ("realization periods", int(panel["period_num"].nunique())),
        ("first target date", f"{panel['target_date'].min():%Y-%m-%d}"),
        ("last target date", f"{panel['target_date'].max():%Y-%m-%d}"),
        ("forecast parse rate", f"{panel['parsed'].astype(bool).mean():.1%}"),
        ("rows with an unparsed forecast (dropped by the estimator)", int((~panel["parsed"].astype(bool)).sum())),
    ]
    return pd.DataFrame(items, columns=["item", "value"])


def write_descriptives(layout: Layout, out: Layout | None = None) -> dict[str, pd.DataFrame]:
    """Read the panel and validation report of `layout`; write the descriptive CSVs into `out` (default: the
    same layout)."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    dropped = validation_drops(layout)
    tables = {"lap_distribution": lap_distribution(panel), "recall_checks": recall_checks(panel),
              "sample": sample_description(panel, dropped, read_source_record(layout))}
    for name, table in tables.items():
        write_csv(table, (out or layout).results / f"{name}.csv")
    return tables


def validation_drops(layout: Layout) -> pd.DataFrame:
    """data/derived/validation_report.csv (one line per drop reason; empty when nothing was dropped)."""
    path = layout.derived_file("validation_report.csv")
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=["reason", "column", "rule", "n_rows", "example_row_id", "example"])
    return pd.read_csv(path)


DATE_SHARED_MIN, DATE_CORRELATION_MIN = 0.10, 0.10
"""The report names the risk of date dependence when at least this share of pre-cutoff rows shares its target date
with another entity and the forecasts or the recalled direction correlate at least this much within a date."""


def within_date_correlation(sample: pd.DataFrame, column: str) -> float:
    """The intra-class correlation of `column` among rows on the same target date, net of the regressions' entity
    and period effects (the residual of `column` on absorb(entity_num period_num), singletons kept): one-way ANOVA,
    (MSB - MSW) / (MSB + (k0 - 1) MSW) with k0 the ANOVA's mean group size (Snedecor and Cochran); NaN with fewer
    than two dates of two rows or more."""
    import numpy as np

    from ..estimate.reghdfe import DEMEAN_TOLERANCE
    from ..estimate.scaling import partial_out

    frame = sample[["target_date", "entity_num", "period_num", column]].dropna()
    if frame.empty:
        return float("nan")
    codes = np.column_stack([pd.factorize(frame[fe])[0] for fe in ("entity_num", "period_num")]).astype(np.uint64)
    frame = frame.assign(x=partial_out(frame[[column]].to_numpy(np.float64), codes, DEMEAN_TOLERANCE)[:, 0])
    groups = frame.groupby("target_date")["x"]
    sizes = groups.size()
    if (sizes >= 2).sum() < 2 or len(frame) <= len(sizes):
        return float("nan")
    n, g = len(frame), len(sizes)
    between = float((sizes * (groups.mean() - frame["x"].mean()) ** 2).sum()) / (g - 1)
    within = float(((frame["x"] - groups.transform("mean")) ** 2).sum()) / (n - g)
    k0 = (n - float((sizes ** 2).sum()) / n) / (g - 1)
    denominator = between + (k0 - 1) * within
    return float((between - within) / denominator) if denominator > 0 else float("nan")


def date_dependence(panel: pd.DataFrame, cluster: str, frequency: str) -> str:
    """The REPORT.md sentence on date dependence ("" when it does not arise): when the period fixed effect is coarser
    than the target date, rows of different entities on one date share that date's shock (a market-wide return), and
    when the forecasts or the recalled direction also move with the date, entity-clustered tests over-reject
    (measured in the self-validation: the validation theta's nominal 5% test rejected in 8.7% of outcome redraws;
    docs/calibrate.md). Names the share of rows on shared dates and the within-date correlations (net of the period
    effect) of mu_hat, ud_dir and the outcome, and what [estimate] cluster does about it."""
    if frequency == "day" or "target_date" not in panel:
        return ""
    pre = panel[panel["post"] == 0]
    per_date = pre.groupby("target_date")["entity_id"].transform("nunique")
    shared = float((per_date >= 2).mean()) if len(pre) else 0.0
    rho = {column: within_date_correlation(pre, column) for column in ("mu_hat", "ud_dir", "outcome")
           if column in pre}
    moving = max((v for k, v in rho.items() if k != "outcome" and v == v), default=float("nan"))
    if shared < DATE_SHARED_MIN or not moving >= DATE_CORRELATION_MIN:
        return ""
    values = ", ".join(f"{name} {value:.2f}" for name, value in rho.items() if value == value)
    told = (" Here `[estimate] cluster = \"entity date\"` clusters every regression two-way by entity and target "
            "date, which covers it." if cluster == "entity date" else
            " Entity clusters do not cover that dependence, and tests can over-reject (on the self-validation's "
            "base model, a nominal 5% validation test rejected in 8.7% of outcome redraws: docs/calibrate.md); "
            "`[estimate] cluster = \"entity date\"` clusters two-way by entity and target date.")
    return (f" **Date dependence:** the period fixed effect (by {frequency}) is coarser than the target date, "
            f"{shared:.0%} of pre-cutoff rows share their target date with another entity, and within a date "
            f"(net of the entity and period effects) the correlations are {values}." + told)
