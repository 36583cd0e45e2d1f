"""The report: descriptives, LaTeX tables, the LAP figure and results/REPORT.md with the protocol's verdict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..approximation import recall_note
from ..config import RunConfig, settings_difference, snapshot, study_settings
from ..data.derived import shown
from ..data.validate import validated_record
from ..errors import LapbiasError
from ..io import Layout, read_parquet, write_csv, write_text
from ..stage import (RERUN_AFTER_VALIDATE, VALIDATED, StaleResultsError, check_manifest, check_run, manifest_files,
                     new_run_id, read_run_record, staged_outputs)
from .describe import write_descriptives
from .figures import lap_histogram
from .markdown import render
from . import units
from .tables import to_latex
from .verdict import decide

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
OPTIONAL_NUMERIC = ("p_wild", "p_wild_one_sided")
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


def write_report(config: RunConfig, layout: Layout) -> Path:
    """Read results/*.csv (and the panel for the LAP figure); write .tex twins, figures and REPORT.md.

    The tables must come from one estimate run on the current panel (lapbias/stage.py); the report's own files
    are staged and moved in together, stamped with that run id."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    approximated = recall_note(panel, config)
    tables: dict[str, pd.DataFrame] = {}
    for name in (*COEFFICIENT_TABLES, "bootstrap", "descriptive", "magnitudes", "estimation_notes", "power"):
        path = layout.results / f"{name}.csv"
        if path.exists():
            tables[name] = read_table(path, coefficients=name in COEFFICIENT_TABLES)
    if "detection" not in tables:
        raise LapbiasError("results/detection.csv does not exist: run `lapbias estimate` first")
    if tables["detection"].empty and not _detection_failed(tables.get("estimation_notes")):
        # estimate writes detection.csv without rows only with a "failed" note saying why (docs/contracts.md)
        raise ResultsFileError("results/detection.csv has no rows and results/estimation_notes.csv does not say why "
                               "(cut short or edited?); rerun `lapbias estimate`")
    run_id = check_run(layout.results, tables, layout.root)
    check_manifest(layout.results, "estimate", run_id)
    record = read_run_record(layout.results)
    _check_validated(layout, record, run_id)
    _check_settings(config, record, run_id)
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
                                                     approximated) + "\n")
    return layout.results / "REPORT.md"


def _check_settings(config: RunConfig, record: dict | None, run_id: str | None) -> None:
    """The config's study settings equal those results/run_config.json records for the estimate: a report written
    under an edited config would label the old tables with the new settings (recall-LAP coefficients shown as Min-K%
    x 10^4, an MDE computed at another alpha, another horizon or prompt in the text). StaleResultsError names the
    first setting that differs. Nothing to compare when the tables were written through the Python API (no record)."""
    if not record:
        return
    recorded, current = study_settings(record), study_settings(snapshot(config))
    differ = [key for key in current if key not in recorded or recorded[key] != current[key]]
    if differ:
        raise StaleResultsError(f"results/ come from estimate run {run_id}, made with "
                                f"{settings_difference(recorded, current, differ)}: rerun `lapbias estimate` with this "
                                "config (then `lapbias report`), or report with the config that run used (its settings "
                                "are in results/run_config.json)")


def _check_validated(layout: Layout, record: dict | None, run_id: str | None) -> None:
    """`validate` has not run again on another data file, mapping or --sample since the estimate (data_source.json
    compared by content, less the data path's spelling). Nothing to compare without a record (older versions, the
    Python API)."""
    if not record or record.get(VALIDATED) is None:
        return
    if record[VALIDATED] != validated_record(layout):
        raise StaleResultsError(f"`lapbias validate` ran again since estimate run {run_id} (data/derived/"
                                f"data_source.json: another data file, [data.columns] mapping or --sample); "
                                f"{RERUN_AFTER_VALIDATE}")


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
                            placebo_alpha=config.estimate.placebo_alpha)
    write_csv(power, out.results / "power.csv")
    return power
