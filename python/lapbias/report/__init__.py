"""The report: descriptives, LaTeX tables, the LAP figure and results/REPORT.md with the protocol's verdict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..approximation import recall_note
from ..config import RunConfig
from ..data.derived import shown
from ..errors import LapbiasError
from ..io import Layout, read_parquet, write_text
from ..stage import check_run, new_run_id, staged_outputs
from .describe import write_descriptives
from .figures import lap_histogram
from .markdown import render
from .tables import to_latex
from .verdict import decide

COEFFICIENT_TABLES = {
    "validation": "Validation: outcome on U-D, pre-cutoff (pooled, high-LAP, low-LAP)",
    "detection": "Detection: outcome on mu_hat, LAP and their interaction, pre-cutoff",
    "placebo": "Placebo: the detection regression on the post-cutoff sample",
    "placebo_validation": "Validation regressions on the post-cutoff sample",
    "table2": "Paper Table II: outcome on mu_hat, then with LAP and the interaction (pre-cutoff)",
    "table3": "Paper Table III: triple interaction with the moderator (pre-cutoff)",
    "table4": "Paper Table IV: horse race with the first-token probability and stated confidence (pre-cutoff)",
    "table5": "Paper Table V: variables standardized within the pre- and post-cutoff samples",
}


COEFFICIENT_COLUMNS = ("model", "term", "coef", "se", "t", "p", "p_one_sided", "N")
"""What the verdict and the tables read from a coefficient table (docs/contracts.md, results files)."""
NUMERIC = ("coef", "se", "t", "p", "p_one_sided", "N")


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
    for column in NUMERIC:
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
    for name in (*COEFFICIENT_TABLES, "bootstrap", "descriptive", "magnitudes", "estimation_notes"):
        path = layout.results / f"{name}.csv"
        if path.exists():
            tables[name] = read_table(path, coefficients=name in COEFFICIENT_TABLES)
    if "detection" not in tables:
        raise LapbiasError("results/detection.csv does not exist: run `lapbias estimate` first")
    if tables["detection"].empty:  # estimate always writes the detection rows, beta_3 included
        raise ResultsFileError("results/detection.csv has no rows (cut short or edited?); rerun `lapbias estimate`")
    run_id = check_run(layout.results, tables, layout.root)
    if tables.get("estimation_notes") is None or tables["estimation_notes"].empty:
        tables["estimation_notes"] = pd.DataFrame(columns=["model", "kind", "detail"])
    with staged_outputs(layout.results, "report", run_id or new_run_id()) as folder:
        out = layout.staged(folder)
        tables.update(write_descriptives(layout, out))
        for name, caption in COEFFICIENT_TABLES.items():
            if name in tables:
                if approximated:
                    caption = f"{caption} [APPROXIMATED: {approximated}]"
                write_text(out.results / f"{name}.tex", to_latex(tables[name], caption))
        lap_histogram(panel, out.figures / "lap_hist.png")
        verdict = decide(tables["detection"], tables.get("validation"), tables.get("placebo"),
                         panel.loc[panel["post"] == 0, "lap"].dropna(), config.estimate)
        engine = ", ".join(sorted(set(tables["detection"]["engine"].astype(str)))) \
            if "engine" in tables["detection"] else "unknown"
        write_text(out.results / "REPORT.md", render(config, tables, verdict, engine, approximated) + "\n")
    return layout.results / "REPORT.md"
