"""The report: descriptives, LaTeX tables, the LAP figure and results/REPORT.md with the protocol's verdict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..approximation import recall_note
from ..config import RunConfig
from ..data.derived import shown
from ..data.validate import read_source_record
from ..errors import LapbiasError
from ..freshness import results_current
from ..io import Layout, read_parquet, write_csv, write_text
from ..stage import manifest_files, new_run_id, staged_outputs
from .describe import date_dependence, write_descriptives
from .figures import lap_histogram
from .markdown import render
from . import measures, units
from .tables import to_latex
from .verdict import decide
from .verdict_sentence import explain, low_parse_rate

COEFFICIENT_TABLES = {
    "validation": "Validation: outcome on U-D, pre-cutoff (pooled, high-LAP, low-LAP)",
    "detection": "Detection: outcome on mu_hat, LAP and their interaction, pre-cutoff",
    "placebo": "Placebo: the detection regression on the post-cutoff sample",
    "placebo_validation": "Validation regressions on the post-cutoff sample",
    "table2": "Paper Table II: outcome on mu_hat, then with LAP and the interaction (pre-cutoff)",
    "table3": "Paper Table III: triple interaction with the moderator (pre-cutoff)",
    "table4": "Paper Table IV: horse race, (1)-(2) with the label-token probability p(w_N+1), (3)-(4) with stated "
              "confidence instead, (2) and (4) adding LAP and mu_hat x LAP (pre-cutoff)",
    "table5": "Paper Table V: in-sample (1)-(2) and out-of-sample (3)-(4), mu_hat alone and with LAP",
}


COEFFICIENT_COLUMNS = ("model", "term", "coef", "se", "t", "p", "p_one_sided", "N")
"""What the verdict and the tables read from a coefficient table (docs/contracts.md, results files)."""
NUMERIC = ("coef", "se", "t", "p", "p_one_sided", "N")
OPTIONAL_NUMERIC = ("p_wild", "p_wild_one_sided", "p_wild_lower")
"""Numeric columns that detection.csv and placebo.csv carry (the wild cluster bootstrap's p-values)."""


class ResultsFileError(LapbiasError):
    """A results file the report reads is missing columns, unreadable, or holds text where numbers belong."""


def read_table(path: Path, coefficients: bool) -> pd.DataFrame:
    """A results CSV, checked: readable, and for coefficient tables the contract's columns with numbers (or empty
    cells) in the numeric ones, finite or missing, p-values in [0, 1]."""
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise ResultsFileError(f"{path} cannot be read as CSV ({str(err).splitlines()[0]}); rerun `lapbias "
                               "estimate`") from None
    if not coefficients:
        return table
    missing = [c for c in COEFFICIENT_COLUMNS if c not in table.columns]
    if missing:
        raise ResultsFileError(f"{path} lacks column(s) {missing} of a coefficient table (docs/contracts.md: "
                               f"{', '.join(COEFFICIENT_COLUMNS)}, ...); rerun `lapbias estimate`")
    for column in NUMERIC + tuple(c for c in OPTIONAL_NUMERIC if c in table.columns):
        values = pd.to_numeric(table[column], errors="coerce")
        bad = (values.isna() & table[column].notna()) | values.isin([np.inf, -np.inf])
        bad |= column.startswith("p") and ((values < 0) | (values > 1))
        if bad.any():
            row = int(bad.idxmax())
            raise ResultsFileError(f"{path} row {row + 2}, column {column}: {shown(table[column][row])} is not "
                                   f"{'a p-value in [0, 1]' if column.startswith('p') else 'a finite number'}; rerun "
                                   "`lapbias estimate`")
        table[column] = values
    return table


@dataclass
class WrittenReport:
    path: Path
    """results/REPORT.md"""
    label: str
    """The verdict (report/verdict.py)."""
    sentence: str
    """The one sentence that explains it (report/verdict_sentence.py)."""

    def lines(self) -> list[str]:
        """What `lapbias run` and `lapbias report` end with: the verdict, its sentence, then the path of REPORT.md."""
        return [f"verdict: {self.label}", f"  {self.sentence}", f"report: {self.path}"]


def write_report(config: RunConfig, layout: Layout) -> Path:
    """results/REPORT.md written by report_with_verdict."""
    return report_with_verdict(config, layout).path


def report_with_verdict(config: RunConfig, layout: Layout) -> WrittenReport:
    """Read results/*.csv (and the panel for the LAP figure); write .tex twins, figures and REPORT.md; return its
    path with the verdict and the sentence that explains it.

    The tables must come from one estimate run on the current panel (lapbias/stage.py); the report's own files
    are staged and moved in together, stamped with that run id."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    approximated = recall_note(panel, config)
    tables: dict[str, pd.DataFrame] = {}
    for name in (*COEFFICIENT_TABLES, "bootstrap", "descriptive", "magnitudes", "estimation_notes", "power",
                 "text_drift"):
        path = layout.results / f"{name}.csv"
        if path.exists():
            tables[name] = read_table(path, coefficients=name in COEFFICIENT_TABLES)
    if "detection" not in tables:
        raise LapbiasError("results/detection.csv does not exist: run `lapbias estimate` first")
    if tables["detection"].empty and not _detection_failed(tables.get("estimation_notes")):
        # estimate writes detection.csv without rows only with a "failed" note saying why (docs/contracts.md)
        raise ResultsFileError("results/detection.csv has no rows and results/estimation_notes.csv does not say why "
                               "(cut short or edited?); rerun `lapbias estimate`")
    run_id = results_current(config, layout, tables)
    if tables.get("estimation_notes") is None or tables["estimation_notes"].empty:
        tables["estimation_notes"] = pd.DataFrame(columns=["model", "kind", "detail"])
    with staged_outputs(layout.results, "report", run_id or new_run_id()) as folder:
        out = layout.staged(folder)
        tables.update(write_descriptives(layout, out))
        # power and verdict on the tables in raw units, as results/*.csv hold them and the paragraph cites them;
        # the display units (Min-K% LAP x 10^4) are applied after
        estimated_power = tables.get("power") if "power.csv" in manifest_files(layout.results, "estimate") else None
        power = _power(config, estimated_power, out, panel, tables["detection"], tables.get("placebo"))
        verdict = decide(tables["detection"], tables.get("validation"), tables.get("placebo"), power,
                         config.estimate, tables["estimation_notes"])
        sentence = explain(verdict, tables["detection"], config.estimate, power)
        tables["lap_measures"] = measures.table(config, layout.results, panel, {
            "detection": tables["detection"], "validation": tables.get("validation"), "placebo": tables.get("placebo"),
            "power": power, "estimation_notes": tables["estimation_notes"]})
        write_csv(tables["lap_measures"], out.results / "lap_measures.csv")
        write_text(out.results / "lap_measures.tex", measures.latex(tables["lap_measures"]))
        if tables.get("text_drift") is not None and not tables["text_drift"].empty:
            write_text(out.results / "text_drift.tex", measures.drift_latex(tables["text_drift"]))
        notice = low_parse_rate(panel["parsed"], config.forecast.min_parse_rate)
        if notice:
            sentence = f"{notice[:1].upper()}{notice[1:]}; {sentence}"
        tables["power"] = units.power(power, config)
        for name, caption in COEFFICIENT_TABLES.items():
            if name not in tables:
                continue
            tables[name] = units.coefficients(tables[name], config, name)
            caption = f"{caption}. {units.note(name, config, tables[name])}"
            if name == "table5" and "bootstrap" in tables:
                caption += " Out-of-sample pairs bootstrap p of column (2)'s interaction: results/bootstrap.csv."
            if approximated:
                caption = f"{caption} [APPROXIMATED: {approximated}]"
            write_text(out.results / f"{name}.tex",
                       to_latex(tables[name], caption, units.TERM_ORDER if name == "table4" else None))
        if "descriptive" in tables:
            tables["descriptive"] = units.statistics(tables["descriptive"], "variable", config)
        tables["lap_distribution"] = units.statistics(tables["lap_distribution"], "measure", config)
        lap_histogram(panel, out.figures / "lap_hist.png")
        engine = ", ".join(sorted(set(tables["detection"]["engine"].dropna().astype(str)))) \
            if "engine" in tables["detection"] else ""
        write_text(out.results / "REPORT.md", render(config, tables, verdict, engine or config.estimate.engine,
                                                     approximated, source=read_source_record(layout),
                                                     notice=notice,
                                                     date_note=date_dependence(panel, config.estimate.cluster,
                                                                               config.study.frequency)) + "\n")
    return WrittenReport(layout.results / "REPORT.md", verdict.label, sentence)


def _detection_failed(notes: pd.DataFrame | None) -> bool:
    if notes is None or notes.empty or "model" not in notes:
        return False
    return bool((notes["model"].astype(str).str.startswith("detection") & notes["kind"].isin(("failed", "error"))).any())


def _power(config: RunConfig, power: pd.DataFrame | None, out: Layout, panel: pd.DataFrame,
           detection: pd.DataFrame, placebo: pd.DataFrame | None) -> pd.DataFrame:
    """results/power.csv as the Python estimate stage wrote it; after the Stata engine (which does not write it)
    computed here from the panel, detection.csv and placebo.csv (estimate/power.py) and written with the report."""
    from ..estimate.power import detection_power

    if power is not None and not power.empty:
        return power
    power = detection_power(panel[panel["post"] == 0], detection, config.estimate.detection_alpha,
                            post=panel[panel["post"] == 1], placebo=placebo,
                            placebo_alpha=config.estimate.placebo_alpha,
                            wild_below_clusters=config.estimate.wild_below_clusters)
    write_csv(power, out.results / "power.csv")
    return power
