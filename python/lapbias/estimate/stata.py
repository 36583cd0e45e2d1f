"""Run the protocol's estimation in Stata (do/master.do with the ado/ commands) and read the results back.

Finding Stata: `[estimate] stata_path` or the environment variable STATA_PATH names a Stata installation
directory, driven through pystata (`stata_setup.config(path, edition)`); otherwise an executable `stata-mp`,
`stata-se` or `stata` on PATH runs `<exe> -b do do/master.do`. Batch mode exits 0 even when the do-file fails, so the
log is scanned for Stata's error line `r(###);` and a failure raises with the log's last lines.

Reading back: the do-files export every coefficient table with `esttab ..., csv plain cells("b se t p ci_l ci_u")
stats(N N_clust df_r r2 r2_within num_singletons)`; `parse_esttab_csv` turns that layout (one column group per
model, esttab's `="..."` quoting tolerated) into the results schema of docs/contracts.md with engine "stata", so the
report reads either engine's files the same way.
"""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import RunConfig
from ..errors import LapbiasError
from ..io import Layout, write_csv
from .reghdfe import RESULT_COLUMNS, one_sided_p

EXECUTABLES = ("stata-mp", "stata-se", "stata")
ERROR_LINE = re.compile(r"^r\((\d+)\);\s*$", re.MULTILINE)
CELLS = ("b", "se", "t", "p", "ci_l", "ci_u")
TABLES = {"validation": "stata_validation.csv", "detection": "stata_detection.csv",
          "placebo": "stata_placebo.csv", "placebo_validation": "stata_placebo_validation.csv"}


class StataError(LapbiasError):
    """Stata ran and stopped with an error (the message holds the log excerpt)."""


@dataclass(frozen=True)
class StataInstall:
    kind: str
    """"pystata" (an installation directory) or "batch" (an executable)."""
    location: str
    edition: str = "mp"


def find_stata(config: RunConfig) -> StataInstall | None:
    path = config.estimate.stata_path or os.environ.get("STATA_PATH", "")
    if path:
        if not Path(path).is_dir():
            raise LapbiasError(f"Stata path {path!r} ([estimate] stata_path or STATA_PATH) is not a directory")
        return StataInstall("pystata", path, config.estimate.stata_edition)
    for name in EXECUTABLES:
        found = shutil.which(name)
        if found:
            return StataInstall("batch", found, config.estimate.stata_edition)
    return None


def select_engine(config: RunConfig, requested: str) -> tuple[str, StataInstall | None, str]:
    """(engine, install, message): auto takes Stata when it is found, else the Python engine, and says which."""
    if requested == "python":
        return "python", None, "engine: python (reghdfe's conventions on pyfixest)"
    install = find_stata(config)
    if install is not None:
        return "stata", install, f"engine: stata ({install.kind}: {install.location})"
    if requested == "stata":
        raise LapbiasError("--engine stata: no Stata found; set [estimate] stata_path or STATA_PATH to the Stata "
                           f"directory, or put one of {', '.join(EXECUTABLES)} on PATH")
    return "python", None, "engine: python (auto: no Stata found via stata_path, STATA_PATH or PATH)"


def check_log(log_text: str, log_path: Path) -> None:
    """Fail with the log excerpt when Stata's batch log holds an error line r(###);."""
    match = ERROR_LINE.search(log_text)
    if match:
        lines = log_text[: match.end()].splitlines()[-15:]
        raise StataError(f"Stata stopped with error r({match.group(1)}) (full log: {log_path}):\n"
                         + "\n".join(f"  {line}" for line in lines))


def _run_batch(install: StataInstall, root: Path, do_file: str) -> Path:
    subprocess.run([install.location, "-b", "do", do_file], cwd=root, check=False,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = root / (Path(do_file).stem + ".log")
    if not log.exists():
        raise StataError(f"Stata wrote no log {log} for {do_file}: did it start? ({install.location})")
    target = root / "logs" / f"stata_{log.name}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(log), target)
    check_log(target.read_text(errors="replace"), target)
    return target


def _run_pystata(install: StataInstall, root: Path, do_file: str) -> None:
    try:
        import stata_setup

        stata_setup.config(install.location, install.edition)
        from pystata import stata
    except Exception as err:  # stata_setup raises plain exceptions for a wrong path or edition
        raise StataError(f"cannot start Stata through pystata from {install.location}: {err}") from None
    cwd = os.getcwd()
    try:
        os.chdir(root)
        stata.run(f'do "{do_file}"', echo=False)
    except SystemError as err:
        raise StataError(f"Stata stopped with an error in {do_file}: {err}") from None
    finally:
        os.chdir(cwd)


def _clean(cell: str) -> str:
    """esttab's csv cells: `="0.123"` (Excel-safe quoting) or plain; stars and parentheses dropped."""
    cell = cell.strip()
    if cell.startswith('="') and cell.endswith('"'):
        cell = cell[2:-1]
    return cell.strip().strip("*()")


def _number(cell: str) -> float:
    cell = _clean(cell)
    try:
        return float(cell) if cell not in ("", ".") else math.nan
    except ValueError:
        return math.nan


def parse_esttab_csv(path: Path) -> pd.DataFrame:
    """The esttab export of the do-files -> the results schema (one row per model and term)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.reader(handle) if any(_clean(c) for c in row)]
    if len(rows) < 3:
        raise StataError(f"{path} is not an esttab table of the expected layout (too few rows)")
    header, cells = rows[0], [_clean(c) for c in rows[1]]
    starts = [i for i, name in enumerate(cells) if name == "b"]
    models = [_clean(header[i]) for i in starts]
    if not starts or any(not m for m in models):
        raise StataError(f"{path}: no model labels above the 'b' columns; expected cells(\"b se t p ci_l ci_u\")")
    stats_names = {"N", "N_clust", "df_r", "r2", "r2_within", "num_singletons", "p_one"}
    coefficients, stats = [], {m: {} for m in models}
    for row in rows[2:]:
        name = _clean(row[0])
        if name in stats_names:
            for model, start in zip(models, starts):
                stats[model][name] = _number(row[start]) if start < len(row) else math.nan
            continue
        for model, start in zip(models, starts):
            values = {cell: _number(row[start + k]) if start + k < len(row) else math.nan
                      for k, cell in enumerate(CELLS)}
            if not math.isnan(values["b"]):
                coefficients.append((model, name, values))
    out = []
    coefficients.sort(key=lambda item: models.index(item[0]))  # model by model, terms in table order (stable)
    for model, term, v in coefficients:
        s = stats[model]
        out.append({"model": model, "term": term, "coef": v["b"], "se": v["se"], "t": v["t"], "p": v["p"],
                     "p_one_sided": one_sided_p(v["t"], v["p"]), "ci_low": v["ci_l"], "ci_high": v["ci_u"],
                     "N": s.get("N", math.nan), "N_clust": s.get("N_clust", math.nan), "df_r": s.get("df_r", math.nan),
                     "r2": s.get("r2", math.nan), "r2_within": s.get("r2_within", math.nan),
                     "num_singletons": s.get("num_singletons", math.nan), "engine": "stata"})
    return pd.DataFrame(out, columns=RESULT_COLUMNS)


def run_stata(config: RunConfig, layout: Layout, install: StataInstall, do_file: str = "do/master.do") -> dict:
    """Run the do-files, then write results/<table>.csv in the results schema from their esttab exports."""
    root = layout.root.resolve()
    if not (root / do_file).exists():
        raise LapbiasError(f"{root / do_file} does not exist: run from the lapbias project folder")
    if install.kind == "batch":
        _run_batch(install, root, do_file)
    else:
        _run_pystata(install, root, do_file)
    tables = {}
    for name, export in TABLES.items():
        path = layout.results / export
        if path.exists():
            tables[name] = parse_esttab_csv(path)
            write_csv(tables[name], layout.results / f"{name}.csv")
        elif name in ("validation", "detection"):
            raise StataError(f"Stata finished but wrote no {path}; see logs/stata_master.log")
    return tables
