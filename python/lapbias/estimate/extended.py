"""The paper's extended specifications (Gao, Jiang, Yan, Tables I-V), on the pre-cutoff panel unless stated.

- Table I, descriptive statistics: mean, SD, P10, P25, median, P75, P90, N of each variable, pre and post cutoff
  (percentiles as Stata's `summarize, detail` / `_pctile`: Hyndman-Fan type 2, numpy "averaged_inverted_cdf").
- Table II and its economic magnitudes: (1) outcome on mu_hat; (2) outcome on mu_hat, lap, mu_hat x lap. The paper:
  "a one-standard-deviation increase in the LLM prediction measure predicts a 0.197% higher next-day return"
  (= b1 of column 1 x SD(mu_hat)); "a one-standard-deviation increase in LAP increases the marginal effect of LLM
  ... by 0.077%, which is about 37% of the standalone LLM effect shown in Column (1)" (= b3 of column 2 x SD(lap),
  and its share of the standalone marginal effect b1 of column 1 — the reading under which both of the paper's
  examples, returns 37% and CapEx 19%, are consistent).
- Table III, eq. (8): the triple interaction with a moderator such as Small: (1) mu_hat, small, mu_hat x small;
  (2) adds lap, mu_hat x lap, lap x small and mu_hat x lap x small.
- Table IV, horse race (paper Table IV): (1) mu_hat, p_first, mu_hat x p_first; (2) adds lap and mu_hat x lap;
  (3) mu_hat, confidence, mu_hat x confidence (confidence replaces p_first); (4) adds lap and mu_hat x lap.
- Table V (paper Table V): every variable standardized separately within the in-sample (pre) and out-of-sample
  (post) periods; (1) in-sample mu_hat; (2) in-sample mu_hat, lap, mu_hat x lap; (3)-(4) the same out-of-sample.
All regressions absorb entity_num and period_num; the paper's tables cluster by date (period_num), the default here
(`[estimate] extended_cluster`); the protocol's Steps 3-5 keep entity clustering (estimate/protocol.py). A
specification whose variables are absent or all missing, or that cannot be estimated, is skipped with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..config import RunConfig
from ..errors import EstimationError
from ..io import Layout, read_parquet, write_csv
from ..signals import measures
from .reghdfe import RESULT_COLUMNS, reghdfe
from .scaling import mean_sd, sd, zscores

DESCRIBED = ["outcome", "mu_hat", "lap", *[m.column for m in measures.REGISTRY.values()], "ud", "p_first",
             "confidence"]
ABSORB = ["entity_num", "period_num"]
TABLES = ("descriptive", "table2", "magnitudes", "table3", "table4", "table5")


@dataclass
class ExtendedResults:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def descriptive(panel: pd.DataFrame) -> pd.DataFrame:
    """Table I: mean, SD, P10, P25, median, P75, P90 and N per variable and sample."""
    rows = []
    for sample, part in (("pre", panel[panel["post"] == 0]), ("post", panel[panel["post"] == 1])):
        for variable in [v for v in DESCRIBED if v in panel.columns]:
            values = part[variable].dropna().to_numpy(np.float64)
            q = (np.percentile(values, [10, 25, 50, 75, 90], method="averaged_inverted_cdf") if values.size
                 else [float("nan")] * 5)
            mean, spread = mean_sd(values)
            rows.append({"sample": sample, "variable": variable, "mean": mean, "sd": spread, "p10": q[0], "p25": q[1],
                         "median": q[2], "p75": q[3], "p90": q[4], "N": values.size})
    return pd.DataFrame(rows)


def standardize_within(panel: pd.DataFrame, columns: list[str], by: str = "post") -> pd.DataFrame:
    """Table V: z-scores (x − mean) / SD computed separately within each sample, at any units (scaling.zscores)."""
    out = panel.copy()
    for column in columns:
        for value, rows in out.groupby(by)[column]:
            if len(rows) > 1 and rows.nunique(dropna=True) == 1:
                # a z-score of a constant is 0/0: say which variable, not "every row is missing"
                raise EstimationError(f"{column} is constant (= {rows.iloc[0]:g}) on all {len(rows)} rows with {by} = "
                                      f"{value}: it cannot be standardized (paper Table V) and carries no information "
                                      "for the detection regression (e.g. a model that always answers the same label)")
            out.loc[rows.index, column] = zscores(rows)
    return out


def _standardized(panel: pd.DataFrame, post: int, results: ExtendedResults) -> pd.DataFrame | None:
    """Table V's sample (pre- or post-cutoff) with outcome, mu_hat and lap standardized within it; None, with a
    note, when one of them is constant there (a z-score of a constant is 0/0)."""
    sample = panel[panel["post"] == post].dropna(subset=["outcome", "mu_hat", "lap"])
    try:
        return standardize_within(sample, ["outcome", "mu_hat", "lap"])
    except EstimationError as err:
        results.notes.append(f"table5:{'(1)-(2)' if post == 0 else '(3)-(4)'} skipped: {err}")
        return None


def _usable(sample: pd.DataFrame, variables: list[str]) -> bool:
    return all(v in sample.columns and sample[v].notna().any() for v in variables)


def _columns(sample: pd.DataFrame, specs: dict[str, list[str]], needed: dict[str, list[str]],
             results: ExtendedResults, name: str, cluster: str) -> pd.DataFrame | None:
    rows = []
    for model, terms in specs.items():
        if not _usable(sample, needed[model]):
            results.notes.append(f"{name}:{model} skipped: {needed[model]} not all present in the panel")
            continue
        try:
            fit = reghdfe(sample, "outcome", terms, absorb=ABSORB, vce="cluster", cluster=[cluster])
        except EstimationError as err:
            results.notes.append(f"{name}:{model} skipped: {err}")
            continue
        rows.append(fit.to_rows(model))
        results.notes += [f"{name}:{model}: {term} omitted: {fit.omitted_reasons.get(term, 'collinear')}"
                          for term in fit.omitted]
    return pd.concat(rows, ignore_index=True) if rows else None


def magnitudes(table2: pd.DataFrame, sample: pd.DataFrame) -> pd.DataFrame:
    """Economic magnitudes of Table II as the paper states them (module docstring)."""
    b1 = table2[(table2["model"] == "(1)") & (table2["term"] == "mu_hat")]["coef"].iloc[0]
    b3 = table2[(table2["model"] == "(2)") & (table2["term"] == "c.mu_hat#c.lap")]["coef"].iloc[0]
    sd_mu, sd_lap = sd(sample["mu_hat"]), sd(sample["lap"])
    return pd.DataFrame([
        {"quantity": "one_sd_llm_effect", "value": b1 * sd_mu, "formula": "b1(1) x SD(mu_hat)"},
        {"quantity": "one_sd_lap_interaction_effect", "value": b3 * sd_lap, "formula": "b3(2) x SD(lap)"},
        {"quantity": "interaction_share_of_standalone", "value": b3 * sd_lap / b1,
         "formula": "b3(2) x SD(lap) / b1(1)"},
    ])


def estimate_extended(panel: pd.DataFrame, moderator: str = "small", cluster: str = "period_num") -> ExtendedResults:
    """Tables I-V and the magnitudes (module docstring) on a panel with the contract's columns."""
    results = ExtendedResults()
    results.tables["descriptive"] = descriptive(panel)
    pre = panel[panel["post"] == 0]
    base = ["mu_hat", "lap", "c.mu_hat#c.lap"]
    table2 = _columns(pre, {"(1)": ["mu_hat"], "(2)": base}, {"(1)": ["mu_hat"], "(2)": ["mu_hat", "lap"]},
                      results, "table2", cluster)
    if table2 is not None and set(table2["model"]) == {"(1)", "(2)"}:
        results.tables["table2"] = table2
        results.tables["magnitudes"] = magnitudes(table2, pre.dropna(subset=["outcome", "mu_hat", "lap"]))
    m = moderator
    table3 = None
    if m in pre.columns:
        table3 = _columns(pre, {"(1)": ["mu_hat", m, f"c.mu_hat#c.{m}"],
                                "(2)": ["mu_hat", m, f"c.mu_hat#c.{m}", "lap", "c.mu_hat#c.lap", f"c.lap#c.{m}",
                                        f"c.mu_hat#c.lap#c.{m}"]},
                          {"(1)": ["mu_hat", m], "(2)": ["mu_hat", m, "lap"]}, results, "table3", cluster)
    else:
        results.notes.append(f"table3 skipped: the panel has no column {m!r}, the [estimate] moderator; to estimate "
                             "paper Table III, set [estimate] moderator to a 0/1 column of your data file (e.g. a "
                             "small-firm indicator)")
    first = ["mu_hat", "p_first", "c.mu_hat#c.p_first"]
    confidence = ["mu_hat", "confidence", "c.mu_hat#c.confidence"]
    table4 = _columns(pre, {"(1)": first, "(2)": [*base, *first[1:]], "(3)": confidence,
                            "(4)": [*base, *confidence[1:]]},
                      {"(1)": ["p_first"], "(2)": ["p_first", "lap"], "(3)": ["confidence"],
                       "(4)": ["confidence", "lap"]}, results, "table4", cluster)
    table5 = pd.concat([t for t in (
        _columns(sample, specs, {m: ["mu_hat", "lap"][: len(terms)] for m, terms in specs.items()}, results, "table5",
                 cluster)
        for sample, specs in ((_standardized(panel, 0, results), {"(1)": ["mu_hat"], "(2)": base}),
                              (_standardized(panel, 1, results), {"(3)": ["mu_hat"], "(4)": base}))
        if sample is not None) if t is not None]
                       or [pd.DataFrame(columns=RESULT_COLUMNS)], ignore_index=True)
    for name, table in (("table3", table3), ("table4", table4), ("table5", table5)):
        if table is not None and len(table):
            results.tables[name] = table
    return results


def run_extended(config: RunConfig, layout: Layout) -> ExtendedResults:
    """Write results/descriptive.csv, table2.csv, magnitudes.csv, table3.csv, table4.csv, table5.csv (those the
    panel supports) and results/extended_notes.csv (why a specification was skipped)."""
    results = estimate_extended(read_parquet(layout.derived_file("panel.parquet")), config.estimate.moderator,
                                config.estimate.extended_cluster)
    for name in TABLES:  # a table this run does not produce must not survive from an earlier run
        if name in results.tables:
            write_csv(results.tables[name], layout.results / f"{name}.csv")
        else:
            (layout.results / f"{name}.csv").unlink(missing_ok=True)
    write_csv(pd.DataFrame({"note": results.notes}), layout.results / "extended_notes.csv")
    return results


run = run_extended
"""The stage entry point under the name every stage uses (`lapbias.cli` calls `extended.run`)."""
