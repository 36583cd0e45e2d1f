"""The LAP-measure robustness table: results/lap_measures.csv (and a REPORT.md section), one row for the configured
measure (the report's own tables) and one per other measure the estimate stage ran Steps 3-5 under
(estimate/measures.py, results/measures/<measure>/), with beta_3, its
one-sided p as the verdict reads it (the wild cluster bootstrap's with few clusters), the post-cutoff beta_3 and its
p, and the verdict the protocol's rule (report/verdict.py decide) reaches on that measure's own tables, under that
measure's own variation gate. The report's verdict reads the configured measure only: the other rows say whether the
sign and significance of beta_3 depend on the detector, which is what a referee asks; they decide nothing."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..config import RunConfig
from ..signals.measures import REGISTRY
from .verdict import BETA3, decide, inference, power_values, term_row

FOLDER = "measures"
TABLES = ("detection", "validation", "placebo", "power", "estimation_notes")
COLUMNS = ["measure", "title", "column", "configured", "approximated", "beta3", "se", "p_one_sided", "inference",
           "beta3_post", "p_one_sided_post", "mean_lap_pre", "mean_lap_post", "verdict", "failed"]


def _read(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / f"{name}.csv"
    if not path.exists():
        return None
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def table(config: RunConfig, results: Path, panel: pd.DataFrame,
          verdict_tables: dict[str, pd.DataFrame | None] | None = None) -> pd.DataFrame:
    """One row per measure, in registry order: the configured one from `verdict_tables` (the tables the report's
    verdict reads: detection, validation, placebo, power, estimation_notes; whichever engine wrote them), every other
    from results/measures/<measure>/."""
    estimate = config.estimate
    rows = []
    for name, measure in REGISTRY.items():
        folder = results / FOLDER / name
        if name == estimate.lap_measure and verdict_tables is not None:
            found = {table_name: verdict_tables.get(table_name) for table_name in TABLES}
        elif (folder / "detection.csv").exists():
            found = {table_name: _read(folder, table_name) for table_name in TABLES}
        else:
            continue
        thresholds = estimate.model_copy(update={"lap_measure": name})
        verdict = decide(found["detection"], found["validation"], found["placebo"], found["power"], thresholds,
                         found["estimation_notes"])
        pre, post = (term_row(found[t], sample, BETA3) for t, sample in (("detection", "pre"), ("placebo", "post")))
        p_pre, p_post = (inference(row, estimate.wild_below_clusters, estimate.wild_bootstrap_reps)
                         if row is not None and pd.notna(row["coef"]) else None for row in (pre, post))
        power = power_values(found["power"])
        top_k = panel.get("moments_top_k")
        rows.append({
            "measure": name, "title": measure.title, "column": measure.column,
            "configured": name == estimate.lap_measure,
            "approximated": bool(getattr(measure, "needs_moments", False) and top_k is not None and (top_k > 0).any()),
            "beta3": _get(pre, "coef"), "se": _get(pre, "se"),
            "p_one_sided": p_pre.p_one_sided if p_pre else math.nan,
            "inference": ("wild cluster bootstrap" if p_pre.wild else "CRV1") if p_pre else "",
            "beta3_post": _get(post, "coef"), "p_one_sided_post": p_post.p_one_sided if p_post else math.nan,
            "mean_lap_pre": power.get("mean_lap", math.nan), "mean_lap_post": power.get("mean_lap_post", math.nan),
            "verdict": verdict.label, "failed": "; ".join(verdict.failed)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _get(row: pd.Series | None, column: str) -> float:
    return math.nan if row is None or pd.isna(row.get(column)) else float(row[column])


def lines(measures: pd.DataFrame, config: RunConfig) -> list[str]:
    """The REPORT.md section's body: what the table is, that the verdict reads the configured measure only, the table."""
    if measures.empty:
        return []
    from .tables import to_markdown

    configured = REGISTRY[config.estimate.lap_measure]
    agree = measures.loc[~measures["configured"], "verdict"]
    shown = measures.drop(columns=["column", "title"]).assign(
        configured=measures["configured"].map({True: "yes", False: ""}),
        approximated=measures["approximated"].map({True: "top-20", False: ""}))
    return [f"The verdict above reads the configured measure only, `{configured.name}` ({configured.title}; "
            "`[estimate] lap_measure`). Each row below runs Steps 3-5 again with LAP = that measure (high_lap "
            "re-split on it, the same estimator, clusters and thresholds, the Python engine) and applies the "
            "protocol's rule to it: whether beta_3's sign and significance depend on the detector. "
            + (f"{int((agree == measures.loc[measures['configured'], 'verdict'].iloc[0]).sum())} of {len(agree)} "
               "other measure(s) reach the same verdict. " if len(agree) and measures["configured"].any() else "")
            + "beta_3 is per unit of each measure (raw units: they differ across rows; the p-values compare). "
            "Measures: Min-K% prob (Shi et al. 2023, eq. 1), Min-K%++ (Zhang et al. 2024), Gap-K% (Kwak and Kim "
            "2026), the zlib ratio and the loss (Carlini et al. 2021), Min-K% against a reference model (Carlini et al. "
            "2021; the Min-K%++ authors' run_ref.py); `approximated` = moments from the top-20 "
            "(vLLM or a server) rather than the whole vocabulary. results/lap_measures.csv (LaTeX "
            "results/lap_measures.tex); each measure's tables in results/measures/<measure>/.", "",
            to_markdown(shown, list(shown.columns)), ""]


LATEX_COLUMNS = {"title": "LAP measure", "configured": "configured", "approximated": "top-20", "beta3": "beta_3",
                 "se": "s.e.", "p_one_sided": "one-sided p", "beta3_post": "post-cutoff beta_3",
                 "p_one_sided_post": "one-sided p (post)", "verdict": "verdict"}
DRIFT_LATEX_COLUMNS = {"check": "check", "measure": "measure", "how": "how", "value": "value", "se": "s.e.",
                       "p_one_sided": "one-sided p", "N": "N"}


def latex(measures: pd.DataFrame) -> str:
    """results/lap_measures.tex: the robustness table's LaTeX twin (the CSV's columns a paper's appendix shows)."""
    from .tables import rows_to_latex

    return rows_to_latex(measures, LATEX_COLUMNS, "The verdict under each LAP measure (Steps 3-5 with LAP = the "
                         "measure; beta_3 per unit of each measure; the verdict reads the configured measure only; "
                         "p as the verdict reads it: the wild cluster bootstrap's with few clusters)")


def drift_latex(drift: pd.DataFrame) -> str:
    """results/text_drift.tex: the text-drift diagnostics' LaTeX twin."""
    from .tables import rows_to_latex

    how = drift["detail"].astype(str).str.split(",").str[0].str.split(":").str[0]  # "ridge regression on ..."
    shown = drift.assign(how=how).reindex(columns=list(DRIFT_LATEX_COLUMNS))  # se, p: the beta_3 rows' only
    return rows_to_latex(shown, DRIFT_LATEX_COLUMNS, "Text drift: pre- vs post-cutoff and LAP from the text alone "
                         "(out-of-fold AUC and R2), and beta_3 with LAP residualised on tokens and zlib bytes")


def drift_lines(drift: pd.DataFrame | None) -> list[str]:
    """The REPORT.md section of results/text_drift.csv (estimate/text_drift.py): could a fall of a text-based LAP
    after the cutoff be new language?"""
    from .tables import to_markdown

    if drift is None or drift.empty:
        return []
    return ["A text-based LAP (Min-K% and the other measures of the Min-K% pass) also falls after the cutoff when the "
            "texts themselves change: new names, events and words are improbable to a model that never read them, "
            "memorized or not. How well the text alone tells the samples apart (AUC 0.5: not at all), how much of "
            "each measure the text alone predicts (out-of-fold R2), and beta_3 with LAP residualised on the scored "
            "text's tokens and zlib-compressed bytes (a beta_3 that survives is not carried by length or "
            "compressibility). The recall LAP asks about a date, not a text. `results/text_drift.csv` (LaTeX "
            "`results/text_drift.tex`).", "",
            to_markdown(drift, ["check", "measure", "value", "N", "detail"]), ""]
