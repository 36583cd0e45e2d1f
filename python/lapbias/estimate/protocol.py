"""The protocol's regressions (Steps 3-5) on the panel, written to results/*.csv (docs/contracts.md).

Step 3, validation: reghdfe outcome ud [if high_lap == 1 | 0], absorb(entity_num period_num) cluster(entity_num)
Step 4, detection:  reghdfe outcome c.mu_hat##c.lap, absorb(entity_num period_num) cluster(entity_num), on the
                    pre-cutoff sample; beta_3 is the coefficient on c.mu_hat#c.lap, tested one-sided for > 0.
Step 5, placebo:    both on the post-cutoff sample.
A panel with a single entity (one time series) drops the entity FE and the period FE (one row per period) and
uses Newey-West standard errors (protocol, implementation notes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..config import RunConfig
from ..errors import EstimationError
from ..io import Layout, read_parquet, write_csv
from .reghdfe import RESULT_COLUMNS, RegResult, reghdfe

DETECTION_TERMS = ["mu_hat", "lap", "c.mu_hat#c.lap"]
BETA3 = "c.mu_hat#c.lap"
VALIDATION_MODELS = {"pooled": None, "high_lap": 1, "low_lap": 0}


@dataclass
class ProtocolResults:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[dict[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        detection = self.tables.get("detection")
        if detection is None or detection.empty:
            return "no detection regression"
        row = detection.set_index("term").loc[BETA3]
        text = (f"beta_3 = {row['coef']:.4g} (t = {row['t']:.2f}, one-sided p = {row['p_one_sided']:.4f}, "
                f"N = {int(row['N'])})")
        placebo = self.tables.get("placebo")
        if placebo is not None and not placebo.empty:
            post = placebo.set_index("term").loc[BETA3]
            text += f"; post-cutoff beta_3 = {post['coef']:.4g} (one-sided p = {post['p_one_sided']:.4f})"
        return text


def _fit(sample: pd.DataFrame, y: str, x: list[str], single_entity: bool, newey_lag: int) -> RegResult:
    if single_entity:
        return reghdfe(sample, y, x, absorb=[], vce="newey", time="period_num", newey_lag=newey_lag)
    return reghdfe(sample, y, x, absorb=["entity_num", "period_num"], vce="cluster", cluster=["entity_num"])


def _record(results: ProtocolResults, name: str, model: str, fit: RegResult) -> pd.DataFrame:
    if fit.num_singletons:
        results.notes.append({"model": f"{name}:{model}", "kind": "singletons",
                              "detail": f"{fit.num_singletons} singleton observation(s) dropped"})
    if fit.N_dropped_missing:
        results.notes.append({"model": f"{name}:{model}", "kind": "dropped_missing",
                              "detail": f"{fit.N_dropped_missing} row(s) with a missing value dropped listwise"})
    for term in fit.omitted:
        results.notes.append({"model": f"{name}:{model}", "kind": "omitted",
                              "detail": f"{term} omitted because of collinearity"})
    for warning in fit.warnings:
        results.notes.append({"model": f"{name}:{model}", "kind": "warning", "detail": warning})
    return fit.to_rows(model)


def _sample_results(results: ProtocolResults, sample: pd.DataFrame, validation: str, detection: str,
                    single_entity: bool, newey_lag: int) -> None:
    rows = []
    for model, flag in VALIDATION_MODELS.items():
        part = sample if flag is None else sample[sample["high_lap"] == flag]
        try:
            rows.append(_record(results, validation, model, _fit(part, "outcome", ["ud"], single_entity, newey_lag)))
        except EstimationError as err:
            results.notes.append({"model": f"{validation}:{model}", "kind": "warning", "detail": str(err)})
    results.tables[validation] = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=RESULT_COLUMNS)
    model = "pre" if detection == "detection" else "post"
    fit = _fit(sample, "outcome", DETECTION_TERMS, single_entity, newey_lag)
    results.tables[detection] = _record(results, detection, model, fit)


def estimate_panel(pre: pd.DataFrame, post: pd.DataFrame | None, newey_lag: int = -1) -> ProtocolResults:
    """Validation and detection on the pre-cutoff panel; the same on the post-cutoff panel (placebo)."""
    results = ProtocolResults()
    if pre.empty:
        raise EstimationError("the pre-cutoff sample is empty: there is nothing to test (check [study] cutoff)")
    single_entity = pre["entity_num"].nunique() == 1
    _sample_results(results, pre, "validation", "detection", single_entity, newey_lag)
    if post is None or post.empty:
        results.notes.append({"model": "placebo", "kind": "warning",
                              "detail": "no post-cutoff observations: the placebo (Step 5) is infeasible"})
    else:
        _sample_results(results, post, "placebo_validation", "placebo", single_entity, newey_lag)
    return results


def run(config: RunConfig, layout: Layout) -> ProtocolResults:
    """Read data/derived/panel.parquet, estimate Steps 3-5, write results/*.csv and estimation_notes.csv."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    pre, post = panel[panel["post"] == 0], panel[panel["post"] == 1]
    results = estimate_panel(pre, post, newey_lag=config.estimate.newey_lag)
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        path = layout.results / f"{name}.csv"
        if name in results.tables:
            write_csv(results.tables[name], path)
        else:
            path.unlink(missing_ok=True)
    write_csv(pd.DataFrame(results.notes, columns=["model", "kind", "detail"]), layout.results / "estimation_notes.csv")
    return results
