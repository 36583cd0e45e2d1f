"""Whether what a stage reads is current: the one rule, stage by stage.

Every stage records what it read, and every later stage compares that record with the files and the configuration
as they are now, refusing (StaleResultsError: one line naming what changed and what to rerun) rather than
estimating or reporting old rows under new settings:

| stage | records | compared by |
|---|---|---|
| validate | data/derived/data_source.json: the data file's sha256, the [data.columns] mapping, the --sample subsample | the signal steps, panel, estimate (`source_unchanged`); rebuild draws the subsample again |
| forecast, recall, minkprob | in each parquet's metadata: input.parquet's sha256 and the settings its queries read | panel (`panel.read_signal`), which copies the settings into panel.parquet |
| panel | in panel.parquet's metadata: the sha256 of input.parquet and of each signal file, the signals' settings; its files in data/derived/.panel-manifest.json | estimate (`panel_current`; the Stata engine also the .dta files' manifest) |
| estimate | results/run_config.json: the configuration, the run id, the sha256 of every input; its files in results/.estimate-manifest.json | report (`report.write_report`: every table from that run, every file unchanged, the same study settings) |

`check(stage, config, layout)` runs the comparisons a stage needs before it reads anything; a new stage or input is
one entry of CHECKS."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .config import RunConfig
from .io import Layout


def source_unchanged(config: RunConfig, layout: Layout, **_context) -> None:
    """The data file and mapping are those `validate` read (data/derived/data_source.json)."""
    from .data.validate import check_source

    check_source(config, layout)


def panel_current(config: RunConfig, layout: Layout, engine: str = "python", **_context) -> None:
    """panel.parquet was built from input.parquet and the signal files as they are now, under this configuration;
    for the Stata engine, the .dta files are those `lapbias panel` wrote."""
    from . import stage
    from .data.derived import read_checked
    from .panel import check_built_from, check_built_from_files, check_built_with, check_signals

    path = layout.derived_file("panel.parquet")
    built = read_checked(path)
    check_built_from_files(built, layout, path)
    check_built_from(built, read_checked(layout.derived_file("input.parquet")), path)
    check_built_with(built, config, path)
    check_signals(built, config, path)
    if engine == "stata":  # Stata estimates on the .dta files written beside panel.parquet
        stage.check_manifest(layout.derived, "panel", None, then="estimate")


CHECKS: dict[str, tuple[Callable[..., None], ...]] = {
    "signals": (source_unchanged,),
    "panel": (source_unchanged,),
    "estimate": (source_unchanged, panel_current),
}
"""What each stage compares before it reads anything (the module docstring's table)."""


def check(stage: str, config: RunConfig, layout: Layout, **context) -> None:
    for comparison in CHECKS[stage]:
        comparison(config, layout, **context)


def estimate_inputs(config: RunConfig, layout: Layout, engine: str) -> dict[str, Path]:
    """The files whose sha256 results/run_config.json records, so that `report` refuses the tables once one of them
    changed (a data file, mapping or --sample validated again; data_source.json is compared by its content less the
    data path's spelling: stage.run_record's `validated`)."""
    inputs = {"panel": layout.derived_file("panel.parquet"), "input": layout.derived_file("input.parquet"),
              "validation_report": layout.derived_file("validation_report.csv")}
    if engine == "stata":
        inputs.update({dta: layout.derived_file(f"{dta}.dta") for dta in ("panel_pre", "panel_post")})
    if config.data.path and Path(config.data.path).is_file():
        inputs["data"] = Path(config.data.path)
    return inputs
