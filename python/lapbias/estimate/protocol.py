"""The protocol's regressions (Steps 3-5) on the panel, written to results/*.csv (docs/contracts.md).

Step 3, validation: reghdfe outcome ud [if high_lap == 1 | 0], absorb(entity_num period_num) cluster(entity_num);
                    and the difference of the halves' predictive content of the recalled direction in one regression
                    (model `high_minus_low`): ud_dir_std = ud_dir / SD(ud_dir) within each half, ud_dir = (P(up) −
                    P(down)) / (P(up) + P(down)) the panel's direction (panel.recall_direction; sample SD over that
                    half's rows of the validation sample -- rows with outcome, ud, ud_dir, high_lap, entity_num and
                    period_num -- before singletons are dropped; 0 in a half where the SD is 0 or undefined), then
                    reghdfe outcome c.ud_dir_std#c.high_lap ud_dir_std, absorb(entity_num#high_lap
                    period_num#high_lap) cluster(entity_num) -- each half keeps its own effects, their covariance
                    through the shared entity clusters; `p_one_sided` tests that the high half's direction predicts
                    the outcome better per SD than the low half's (> 0). The direction, not ud: |ud| <= LAP makes
                    ud = LAP x direction, so per SD of ud the test compares correlations, and a recall equally right
                    at every LAP has a lower correlation in the low half (LAP's spread relative to its mean is
                    larger there), which the per-SD test of ud read as validation (an independent review: 91-98% of
                    300 x 40 x 0.4 panels); the direction drops LAP's size, and a raw difference of ud slopes would
                    be decided by the low half's imprecise slope (theta ∝ E[LAP] / E[LAP²], larger in the low half).
Step 4, detection:  reghdfe outcome c.mu_hat##c.lap, absorb(entity_num period_num) cluster(entity_num), on the
                    pre-cutoff sample; beta_3 is the coefficient on c.mu_hat#c.lap, tested one-sided for > 0.
Step 5, placebo:    both on the post-cutoff sample.
beta_3 of the detection and placebo regressions also gets wild cluster restricted bootstrap p-values (p_wild,
p_wild_one_sided, p_wild_lower; estimate/wild.py), which the verdict reads with few clusters.
A sample with a single entity (one time series) drops the entity FE and the period FE (one row per period) and
uses Newey-West standard errors (protocol, implementation notes). A regression that cannot be estimated is noted
(kind `failed`, with the reason) and the others go on; the verdict names the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pandas as pd

from ..config import RunConfig
from ..errors import EstimationError, InputDataError
from ..io import Layout, read_parquet, write_csv
from .power import detection_power
from .reghdfe import RESULT_COLUMNS, AllOmitted, RegResult, reghdfe
from .specification import CLUSTERS
from .specification import fit as _fit
from .wild import wild_cluster_bootstrap

DETECTION_TERMS = ["mu_hat", "lap", "c.mu_hat#c.lap"]
BETA3 = "c.mu_hat#c.lap"
VALIDATION_MODELS = {"pooled": None, "high_lap": 1, "low_lap": 0}
DIFFERENCE_MODEL, DIFFERENCE = "high_minus_low", "c.ud_dir_std#c.high_lap"
DIRECTION = "ud_dir"
VALIDATION_COLUMNS = ["outcome", "ud", "high_lap", "entity_num", "period_num"]
WILD_COLUMNS = ["p_wild", "p_wild_one_sided", "p_wild_lower"]
"""Columns of detection.csv and placebo.csv after RESULT_COLUMNS: the wild cluster bootstrap's two-sided
(equal-tailed), one-sided for beta_3 > 0 and one-sided for beta_3 < 0 p of beta_3, empty on the other terms and
where not computed."""


@dataclass
class ProtocolResults:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[dict[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        detection = self.tables.get("detection")
        if detection is None or BETA3 not in set(detection["term"]):
            return "no detection regression (see results/estimation_notes.csv)"
        row = detection.set_index("term").loc[BETA3]
        if pd.isna(row["coef"]):
            return f"beta_3 omitted (collinear); N = {int(row['N'])}"
        text = (f"beta_3 = {row['coef']:.4g} (t = {row['t']:.2f}, one-sided p = {row['p_one_sided']:.4f}, "
                f"N = {int(row['N'])})")
        placebo = self.tables.get("placebo")
        if placebo is not None and BETA3 in set(placebo["term"]) and pd.notna(placebo.set_index("term").loc[BETA3, "coef"]):
            post = placebo.set_index("term").loc[BETA3]
            text += f"; post-cutoff beta_3 = {post['coef']:.4g} (one-sided p = {post['p_one_sided']:.4f})"
        return text


def standardized_direction(sample: pd.DataFrame) -> pd.DataFrame:
    """The validation sample (rows with outcome, ud, ud_dir, high_lap, entity_num and period_num) with ud_dir_std =
    ud_dir / SD(ud_dir) within each half (module docstring; 0 where that SD is 0 or undefined). A sample without
    the ud_dir column (a panel built before it existed, or by hand) is refused: the test is defined on it."""
    if DIRECTION not in sample.columns:
        raise InputDataError(f"the panel has no column {DIRECTION} (the recalled direction (P(up) - P(down)) / "
                             "(P(up) + P(down)), which the high_minus_low validation test uses): rerun `lapbias "
                             "panel`, or add it with lapbias.panel.recall_direction(ud, lap_recall)")
    frame = sample.dropna(subset=[*VALIDATION_COLUMNS, DIRECTION]).astype({"high_lap": "float64"})
    spread = frame.groupby("high_lap")[DIRECTION].transform(lambda direction: direction.std(ddof=1))
    usable = spread.notna() & (spread > 0)
    return frame.assign(ud_dir_std=(frame[DIRECTION] / spread.where(usable, 1.0)).where(usable, 0.0))


def _difference_fit(sample: pd.DataFrame, y: str, x: list[str], newey_lag: int,
                    cluster: tuple[str, ...] = CLUSTERS["entity"]) -> RegResult:
    """The high-minus-low regression on ud_dir_std (module docstring): each half's entity and period effects absorbed
    separately; a single time series has no effects, so it gets the half's own constant (high_lap) and
    Newey-West."""
    frame = standardized_direction(sample)
    if frame["entity_num"].nunique() == 1:
        return reghdfe(frame, y, [*x, "high_lap"], absorb=[], vce="newey", time="period_num", newey_lag=newey_lag)
    frame = frame.assign(entity_half=frame["entity_num"] * 2 + frame["high_lap"],
                         period_half=frame["period_num"] * 2 + frame["high_lap"])
    return reghdfe(frame, y, x, absorb=["entity_half", "period_half"], vce="cluster", cluster=list(cluster))


def _record(results: ProtocolResults, name: str, model: str, fit: RegResult) -> pd.DataFrame:
    if fit.num_singletons:
        results.notes.append({"model": f"{name}:{model}", "kind": "singletons",
                              "detail": f"{fit.num_singletons} singleton observation(s) dropped"})
    if fit.N_dropped_missing:
        results.notes.append({"model": f"{name}:{model}", "kind": "dropped_missing",
                              "detail": f"{fit.N_dropped_missing} row(s) with a missing value dropped listwise"})
    for term in fit.omitted:
        results.notes.append({"model": f"{name}:{model}", "kind": "omitted",
                              "detail": f"{term} omitted: {fit.omitted_reasons.get(term, 'collinear')}"})
    for warning in fit.warnings:
        results.notes.append({"model": f"{name}:{model}", "kind": "warning", "detail": warning})
    return fit.to_rows(model)


def _estimated(results: ProtocolResults, name: str, model: str, sample: pd.DataFrame, x: list[str],
               newey_lag: int, fit=_fit) -> pd.DataFrame | None:
    """The coefficient rows of one regression, or None with a `failed` note saying why it cannot be estimated; a
    regression whose every regressor is collinear gives rows with empty estimates (each term omitted) and reghdfe's
    _cons, with the fit's N, N_clust, df_r and singletons (AllOmitted), and the notes of any other fit."""
    try:
        return _record(results, name, model, fit(sample, "outcome", x, newey_lag))
    except AllOmitted as err:
        fit_of = err.fit
        for kind, count, detail in (("singletons", fit_of["num_singletons"], "singleton observation(s) dropped"),
                                    ("dropped_missing", fit_of["N_dropped_missing"],
                                     "row(s) with a missing value dropped listwise")):
            if count:
                results.notes.append({"model": f"{name}:{model}", "kind": kind, "detail": f"{count} {detail}"})
        for term, why in err.omitted.items():
            results.notes.append({"model": f"{name}:{model}", "kind": "omitted", "detail": f"{term} omitted: {why}"})
        shared = {"model": model, "N": fit_of["N"], "N_clust": fit_of["N_clust"], "df_r": fit_of["df_r"],
                  "num_singletons": fit_of["num_singletons"], "engine": "python"}
        return pd.DataFrame([{**shared, "term": term} for term in x] + [{**shared, "term": "_cons",
                                                                          "coef": fit_of["cons"]}],
                            columns=RESULT_COLUMNS)
    except EstimationError as err:
        results.notes.append({"model": f"{name}:{model}", "kind": "failed", "detail": str(err)})
        return None


def validation_difference(results: ProtocolResults, name: str, sample: pd.DataFrame, newey_lag: int,
                          cluster: tuple[str, ...] = CLUSTERS["entity"]) -> pd.DataFrame | None:
    """The `high_minus_low` row of a validation table: the halves' slopes on the recalled direction per SD of it,
    high minus low (module docstring)."""
    table = _estimated(results, name, DIFFERENCE_MODEL, sample, [DIFFERENCE, "ud_dir_std"], newey_lag,
                       partial(_difference_fit, cluster=cluster))
    return None if table is None else table[table["term"] == DIFFERENCE]


def with_wild(results: ProtocolResults, name: str, table: pd.DataFrame, sample: pd.DataFrame, reps: int,
              seed: int, term: str = BETA3) -> pd.DataFrame:
    """`table` (detection or placebo; a validation half with term = "ud") with WILD_COLUMNS: the wild cluster
    restricted bootstrap p-values of `term` (estimate/wild.py: entity clusters, entity and period FE) on the
    regressors the regression kept, when it was estimated with clusters and reps > 0; a bootstrap that cannot run is
    a warning note."""
    table = table.reindex(columns=[*table.columns.drop(WILD_COLUMNS, errors="ignore"), *WILD_COLUMNS])
    row = table.index[table["term"] == term]
    if reps <= 0 or row.empty or pd.isna(table.loc[row[0], "coef"]) or pd.isna(table.loc[row[0], "N_clust"]):
        return table
    kept = [t for t in table.loc[table["coef"].notna(), "term"] if t != "_cons"]
    try:
        wild = wild_cluster_bootstrap(sample, "outcome", kept, term, reps, seed)
    except EstimationError as err:
        results.notes.append({"model": f"{name}:{table.loc[row[0], 'model']}", "kind": "warning",
                              "detail": f"wild cluster bootstrap of {term} not computed: {err}"})
        return table
    table.loc[row[0], WILD_COLUMNS] = [wild.p_two_sided, wild.p_one_sided, wild.p_lower]
    return table


def theta_with_wild(results: ProtocolResults, name: str, table: pd.DataFrame | None, sample: pd.DataFrame,
                    reps: int, seed: int) -> pd.DataFrame | None:
    """A validation half's rows with the wild cluster restricted bootstrap p-values of theta (term ud), which the
    verdict reads below wild_below_clusters entity clusters beside the CRV1 p (report.verdict.theta_p: the larger of
    the two; the CRV1 t test of theta over-rejects there: MEASURED on the self-validation's base model, the low-LAP
    theta's nominal 5% test rejected in 10.7% of outcome redraws, benchmarks/results/calibration_size.md)."""
    if table is None:
        return None
    return with_wild(results, name, table, sample, reps, seed, term="ud")


def _sample_results(results: ProtocolResults, sample: pd.DataFrame, validation: str, detection: str,
                    newey_lag: int, wild_reps: int, wild_seed: int, cluster: tuple[str, ...]) -> None:
    fit = partial(_fit, cluster=cluster)
    rows = []
    for model, flag in VALIDATION_MODELS.items():
        part = sample if flag is None else sample[sample["high_lap"] == flag]
        table = _estimated(results, validation, model, part, ["ud"], newey_lag, fit)
        rows.append(theta_with_wild(results, validation, table, part, wild_reps, wild_seed))
    rows.append(validation_difference(results, validation, sample, newey_lag, cluster))
    rows = [r for r in rows if r is not None]
    results.tables[validation] = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=RESULT_COLUMNS)
    model = "pre" if detection == "detection" else "post"
    table = _estimated(results, detection, model, sample, DETECTION_TERMS, newey_lag, fit)
    table = table if table is not None else pd.DataFrame(columns=RESULT_COLUMNS)
    results.tables[detection] = with_wild(results, detection, table, sample, wild_reps, wild_seed)


def estimate_panel(pre: pd.DataFrame, post: pd.DataFrame | None, newey_lag: int = -1, wild_reps: int = 0,
                   wild_seed: int = 0, cluster: tuple[str, ...] = CLUSTERS["entity"]) -> ProtocolResults:
    """Validation and detection on the pre-cutoff panel; the same on the post-cutoff panel (placebo), beta_3 with
    `wild_reps` wild cluster bootstrap draws (0: none), every variance clustered by `cluster` (specification.CLUSTERS).
    Never raises for a degenerate sample: a regression that cannot be estimated leaves an empty table and a `failed`
    note naming the reason, which the verdict reports."""
    results = ProtocolResults()
    if pre.empty:
        results.notes.append({"model": "detection:pre", "kind": "failed", "detail": "the pre-cutoff sample is "
                              "empty: there is nothing to test (check [study] cutoff)"})
        results.tables["detection"] = pd.DataFrame(columns=RESULT_COLUMNS + WILD_COLUMNS)
    else:
        _sample_results(results, pre, "validation", "detection", newey_lag, wild_reps, wild_seed, cluster)
    if post is None or post.empty:
        results.notes.append({"model": "placebo", "kind": "warning",
                              "detail": "no post-cutoff observations: the placebo (Step 5) is infeasible"})
    else:
        _sample_results(results, post, "placebo_validation", "placebo", newey_lag, wild_reps, wild_seed, cluster)
    return results


def run(config: RunConfig, layout: Layout) -> ProtocolResults:
    """Read data/derived/panel.parquet, estimate Steps 3-5, write results/*.csv (detection.csv always, empty when
    it cannot be estimated), power.csv (estimate/power.py) and estimation_notes.csv."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    estimate = config.estimate
    missing = [c for c in CLUSTERS[estimate.cluster] if c not in panel]
    if missing:
        raise InputDataError(f"[estimate] cluster = \"{estimate.cluster}\" needs the panel column(s) {missing}, which "
                             f"{layout.derived_file('panel.parquet')} (built by an earlier lapbias) lacks: run "
                             "`lapbias panel CONFIG` again (it reads the cached answers; nothing is asked)")
    return write_tables(panel, config, layout.results)


def write_tables(panel: pd.DataFrame, config: RunConfig, folder: Path) -> ProtocolResults:
    """Steps 3-5 on `panel` (its lap and high_lap) into `folder`: validation.csv, detection.csv, placebo.csv and
    placebo_validation.csv (removed where not estimated), power.csv and estimation_notes.csv."""
    estimate = config.estimate
    pre, post = panel[panel["post"] == 0], panel[panel["post"] == 1]
    cluster = CLUSTERS[estimate.cluster]
    results = estimate_panel(pre, post, newey_lag=estimate.newey_lag, wild_reps=estimate.wild_bootstrap_reps,
                             wild_seed=estimate.bootstrap_seed, cluster=cluster)
    for name in ("validation", "detection", "placebo", "placebo_validation"):
        path = folder / f"{name}.csv"
        if name in results.tables:
            write_csv(results.tables[name], path)
        else:
            path.unlink(missing_ok=True)
    write_csv(detection_power(pre, results.tables["detection"], estimate.detection_alpha,
                              fit=lambda sample, y, x: _fit(sample, y, x, -1, cluster), post=post,
                              placebo=results.tables.get("placebo"), placebo_alpha=estimate.placebo_alpha,
                              wild_below_clusters=estimate.wild_below_clusters),
              folder / "power.csv")
    write_csv(pd.DataFrame(results.notes, columns=["model", "kind", "detail"]), folder / "estimation_notes.csv")
    return results


def stata_supplement(tables: dict[str, pd.DataFrame], pre: pd.DataFrame, post: pd.DataFrame | None, reps: int,
                     seed: int) -> list[dict[str, str]]:
    """What the Stata do-files do not estimate, computed here on the samples they estimated (panel_pre.dta,
    panel_post.dta) and added to their tables in place: beta_3's wild cluster bootstrap p-values in detection and
    placebo (the high_minus_low validation test is lapvalid's, exported by do/01_validation.do). Returns the notes."""
    results = ProtocolResults()
    for name, sample in (("detection", pre), ("placebo", post)):
        if sample is not None and not sample.empty and name in tables:
            tables[name] = with_wild(results, name, tables[name], sample, reps, seed)
    for name, sample in (("validation", pre), ("placebo_validation", post)):
        if sample is None or sample.empty or name not in tables:
            continue
        parts = []
        for model, flag in VALIDATION_MODELS.items():
            rows = tables[name][tables[name]["model"] == model]
            if len(rows):
                part = sample if flag is None else sample[sample["high_lap"] == flag]
                parts.append(theta_with_wild(results, name, rows, part, reps, seed))
        rest = tables[name][~tables[name]["model"].isin(list(VALIDATION_MODELS))]
        tables[name] = pd.concat([*parts, rest], ignore_index=True)
    return results.notes


def append_notes(layout: Layout, notes: list[dict[str, str]]) -> None:
    """Add rows (model, kind, detail) to results/estimation_notes.csv (e.g. a bootstrap that could not run)."""
    path = layout.results / "estimation_notes.csv"
    old = pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame(columns=["model", "kind", "detail"])
    write_csv(pd.concat([old, pd.DataFrame(notes, columns=["model", "kind", "detail"])], ignore_index=True), path)
