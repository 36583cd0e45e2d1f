"""Commands that work outside a project's stages: `init` (a starter configuration for a data file), `reghdfe`
(reghdfe's conventions on any table), `stata_install` (the Stata commands to install the ado files) and
`dry_run` (each stage's time and memory, from its first batches)."""

from __future__ import annotations

from pathlib import Path

from ..errors import LapbiasError
from ..io import check_not_an_input, write_csv


def init(data: str | Path, output: str | Path | None = None, force: bool = False) -> list[str]:
    """Write a commented starter config for a data file (column map guessed from its header, each guess shown with
    its column's type and first values; target dates from the horizon when there is no target-date column; the
    cutoff a TODO); returns the lines to show the user."""
    from ..data import starter

    return starter.init(str(data), str(output) if output else None, force)


def reghdfe(data: str | Path, y: str, x: list[str], absorb: list[str], vce: str | None, cluster: list[str],
            save: str | Path | None = None) -> str:
    """`reghdfe y x, absorb() vce()` on a CSV, parquet or .dta file; the coefficient table as reghdfe prints it
    (and as CSV at `save`, never over the data)."""
    from ..data.regression_input import check_variables, read_data
    from ..estimate import reghdfe as estimate_reghdfe
    from ..estimate.table import format_result

    if save:
        check_not_an_input(save, {"data file": data}, "--save")
    frame = read_data(data)
    check_variables(frame, data, y, x, absorb, cluster)
    if cluster and vce in ("unadjusted", "robust"):
        raise LapbiasError(f"--cluster {' '.join(cluster)} with --vce {vce}: the cluster variable would be ignored; "
                           "use --vce cluster (or drop --cluster)")
    result = estimate_reghdfe(frame, y, x, absorb=absorb, vce=vce or ("cluster" if cluster else "unadjusted"),
                              cluster=cluster)
    if save:
        write_csv(result.to_rows("reghdfe"), Path(save))
    return format_result(result, y)


def stata_install(copy_to: str | Path | None = None) -> str:
    """The Stata commands that install lapbias's ado files from this installation and run its do-files."""
    from ..estimate.stata import install_instructions

    return install_instructions(Path(copy_to) if copy_to else None)


def dry_run(config) -> str:
    """The time of `lapbias run CONFIG` on this machine, stage by stage, with its range: the first batches of each
    model stage's missing queries asked and timed (their answers kept in the cache), nothing else written (cost.py)."""
    from ..cost import dry_run as estimate_study
    from .project import opened

    with opened(config, "run --dry-run") as (loaded, layout, _):
        return estimate_study(loaded, layout)
