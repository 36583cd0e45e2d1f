"""beta_3 under every LAP measure computed, beside the configured one: is the detection robust to the choice of
pretraining-data detector? For each other measure of signals/measures that the panel carries (a column with values),
Steps 3-5 run again on the panel with lap = that measure and high_lap re-split on it (protocol Step 3, within each
sample), with the configured estimator, clusters and thresholds: results/measures/<measure>/ holds the same files
as results/ (validation, detection, placebo, placebo_validation, power, estimation_notes), which the report reads
to give each measure's beta_3, its one-sided p and the verdict the rule would reach on it (report/measures.py). The
verdict itself reads the configured measure only. Always estimated by the Python engine (reghdfe's conventions on
pyfixest), whichever engine ran results/."""

from __future__ import annotations

from ..config import RunConfig
from ..io import Layout, read_parquet
from ..panel import high_lap_column
from ..signals.measures import REGISTRY
from .protocol import write_tables

FOLDER = "measures"
"""results/measures/<measure>/."""


def run(config: RunConfig, layout: Layout) -> list[str]:
    """Write results/measures/<measure>/ for every other measure with values in the panel; returns their names."""
    panel = read_parquet(layout.derived_file("panel.parquet"))
    done = []
    for name, measure in REGISTRY.items():
        if name == config.estimate.lap_measure or measure.column not in panel or panel[measure.column].notna().sum() == 0:
            continue  # the configured measure is results/ itself
        frame = panel.assign(lap=panel[measure.column])
        frame["high_lap"] = high_lap_column(frame, config.panel.high_lap)
        folder = layout.results / FOLDER / name
        folder.mkdir(parents=True, exist_ok=True)
        write_tables(frame, config.replace(estimate={"lap_measure": name}), folder)
        done.append(name)
    return done
