"""Commands that work outside a project's stages: `init` (a starter configuration for a data file), `reghdfe`
(reghdfe's conventions on any table), `stata_install` (the Stata commands to install the ado files) and
`dry_run` (each stage's time and memory before anything is asked)."""

from __future__ import annotations

from pathlib import Path

from ..errors import LapbiasError
from ..io import check_not_an_input, write_csv, write_text


def init(data: str | Path, output: str | Path | None = None, force: bool = False) -> list[str]:
    """Write a commented starter config for a data file (column map guessed from its header, cutoff a TODO);
    returns the lines to show the user."""
    from ..data import starter

    target = Path(output or f"{Path(data).stem}.toml")
    check_not_an_input(target, {"data file": data}, "--output")
    if target.exists() and not force:
        raise LapbiasError(f"{target} already exists; choose another --output or add --force to overwrite it")
    columns = starter.header(data)
    guessed = starter.guess_columns(columns)
    write_text(target, starter.render(data, columns, guessed))
    lines = [f"wrote {target} for {data}; column map (protocol column <- your column):"]
    lines += [f"  {name:<12} <- {'NOT FOUND: name it in [data.columns]' if found is None else found}"
              for name, found in guessed.items()]
    lines.append(f"next: set [study] cutoff (the model's training cutoff) and check the [forecast] prompt in "
                 f"{target}, then run `lapbias validate {target}`")
    return lines


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
    """Each stage's time and memory from a short timed probe of the model (cached per machine); nothing else is
    asked and nothing is written under the run's folders."""
    from .. import config as config_module
    from ..cost import dry_run as estimate_study

    return estimate_study(config_module.load(config) if isinstance(config, (str, Path)) else config)
