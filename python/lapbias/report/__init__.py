"""The report: descriptives, LaTeX tables, the LAP figure and results/REPORT.md with the protocol's verdict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..approximation import recall_note
from ..config import RunConfig
from ..io import Layout, read_parquet, write_csv, write_text
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


def write_report(config: RunConfig, layout: Layout) -> Path:
    """Read results/*.csv (and the panel for the LAP figure); write .tex twins, figures and REPORT.md."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    approximated = recall_note(panel, config)
    tables = dict(write_descriptives(layout))
    for name, caption in COEFFICIENT_TABLES.items():
        path = layout.results / f"{name}.csv"
        if not path.exists():
            (layout.results / f"{name}.tex").unlink(missing_ok=True)
            continue
        tables[name] = units.coefficients(pd.read_csv(path), config)
        caption = f"{caption}. {units.note(name, config)}"
        if name == "table5" and (layout.results / "bootstrap.csv").exists():
            caption += " Out-of-sample pairs bootstrap p of column (2)'s interaction: results/bootstrap.csv."
        if approximated:
            caption = f"{caption} [APPROXIMATED: {approximated}]"
        write_text(layout.results / f"{name}.tex",
                   to_latex(tables[name], caption, units.TERM_ORDER if name == "table4" else None))
    for optional in ("bootstrap", "descriptive", "magnitudes"):
        if (layout.results / f"{optional}.csv").exists():
            tables[optional] = pd.read_csv(layout.results / f"{optional}.csv")
    if "descriptive" in tables:
        tables["descriptive"] = units.statistics(tables["descriptive"], "variable", config)
    tables["lap_distribution"] = units.statistics(tables["lap_distribution"], "measure", config)
    notes = layout.results / "estimation_notes.csv"
    tables["estimation_notes"] = pd.read_csv(notes) if notes.exists() and notes.stat().st_size else pd.DataFrame(
        columns=["model", "kind", "detail"])
    if "detection" not in tables:
        from ..errors import LapbiasError

        raise LapbiasError("results/detection.csv does not exist: run `lapbias estimate` first")
    lap_histogram(panel, layout.figures / "lap_hist.png")
    power = _power(config, layout, panel, tables["detection"])  # raw units: the verdict's shares are unit-free
    verdict = decide(tables["detection"], tables.get("validation"), tables.get("placebo"), power,
                     config.estimate, tables["estimation_notes"])
    tables["power"] = units.power(power, config)
    engine = ", ".join(sorted(set(tables["detection"]["engine"].dropna().astype(str)))) or config.estimate.engine
    path = layout.results / "REPORT.md"
    write_text(path, render(config, tables, verdict, engine, approximated) + "\n")
    return path


def _power(config: RunConfig, layout: Layout, panel: pd.DataFrame, detection: pd.DataFrame) -> pd.DataFrame:
    """results/power.csv as the Python estimate stage wrote it; after the Stata engine (which does not write it)
    computed here from the panel and detection.csv (estimate/power.py) and written."""
    from ..estimate.power import detection_power

    path = layout.results / "power.csv"
    if path.exists() and path.stat().st_size:
        return pd.read_csv(path)
    power = detection_power(panel[panel["post"] == 0], detection, config.estimate.detection_alpha)
    write_csv(power, path)
    return power
