"""Descriptive files for the report (protocol Step 2 sanity checks and Final report items 1-2)."""

from __future__ import annotations

import pandas as pd

from ..data.validate import read_source_record
from ..estimate.scaling import mean_sd
from ..io import Layout, read_parquet, write_csv

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
        for measure in ("lap_recall", "lap_mink"):
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
