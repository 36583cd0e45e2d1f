"""Run the protocol's estimation in Stata (do/master.do, then do/04_bootstrap.do, with the ado/ commands) and read
the results back into the results schema of docs/contracts.md.

Finding Stata (`find_stata`, every place tried is listed when none is found): `[estimate] stata_path` or STATA_PATH
naming a Stata directory or executable; then `stata-mp`, `stata-se`, `stata` (and the Windows `StataMP-64.exe` ...) on
PATH; then the usual install locations of Linux (/usr/local/stata*), macOS (/Applications/Stata*/Stata*.app) and
Windows (C:/Program Files/Stata*). A directory with utilities/pystata (Stata 17 and later) is driven through pystata:
Stata then runs inside this process, which has one working directory, so no `cd` is sent (every path the do-files get
is absolute) and the working directory is put back after each do-file, whatever it did; the do-files run quietly
(their named logs are the record, as in batch mode). Stata 15/16, a plain executable, or a pystata that will not
start falls back to batch mode: `<exe> -b do <file> <args>` (Windows: `<exe> /e do <file> <args>`) in a private working
directory, whose batch log is moved to logs/stata_batch_<do-file>.log; the do-files write their own logs
logs/stata_steps.log and logs/stata_bootstrap.log, so no log overwrites another. Batch mode exits 0 even when the
do-file fails, so the log is scanned for Stata's error line `r(###);`.

Steps 3-5 (master.do) and the bootstrap (04_bootstrap.do) are two Stata runs: a failed bootstrap becomes a note and
keeps the Steps 3-5 tables, while a step of Steps 3-5 that stopped (an `error` note of master.do: the do-files raise
only what is not a data outcome, such as an installation problem) stops the run with a StataError, so that a missing
table never reads as a verdict; a model that is not estimable for its data is a `failed` note, as in the Python
engine. Every path, [estimate] newey_lag and the bootstrap's reps, seed and resampling unit reach
the do-files as arguments, and the ado/do files come from this package (a source checkout or the installed package
data), so a run needs no copy of them in the project. Before a run every result file of either engine is removed from the output
folder (`clear_results`), so no table of an earlier run, of either engine, survives; each table states its engine.

Reading back: the do-files export every coefficient table with `_lapbias_export` (esttab csv plain, cells
"b se t p ci_l ci_u", stats N N_clust df_r r2 r2_within num_singletons p_one; an omitted term as b = 0 without a
standard error); `parse_esttab_csv` turns that layout into the results schema with engine "stata" (an omitted term:
a row with empty estimates, and an `omitted` note, as the Python engine writes it), and `_write_table` writes each
table. The validation tables hold lapvalid's fourth model, high_minus_low (the halves' slopes on the recalled
direction per SD of it: outcome on c.ud_dir_std#c.high_lap and ud_dir_std with each half's own fixed effects,
do/01_validation.do passing the panel's ud_dir as direction()); of its terms the results contract keeps the
interaction only (`_contract_rows`). The do-files' own notes (stata_notes.csv: failed models, singletons, rows dropped for missing values, the
single-series warning, in the Python engine's words) become estimation_notes.csv. The bootstrap summary
(stata_bootstrap.csv) and draws (stata_bootstrap_draws.dta) become results/bootstrap.csv, bootstrap_draws.csv and
figures/bootstrap.png through estimate/bootstrap.py's definitions of p_boot and p95 (`BootstrapResult`), so both
engines summarise draws the same way; a bootstrap the do-file reports as not identified (identified = 0 and its
note) is written as the Python engine writes it: bootstrap.csv only, and a `failed` note; a post-cutoff sample
with fewer complete rows than the Python engine resamples (bootstrap.MIN_ROWS) is not bootstrapped, with the
Python engine's `failed` note. The bootstrap gets this
Python's executable (sys.executable), so that lapboot on Stata 16+ draws with the lapbias kernel (the Python engine's
draws) instead of one reghdfe per draw.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat

from ..config import RunConfig
from ..errors import LapbiasError
from ..io import Layout, write_csv
from .protocol import DIFFERENCE_MODEL, stata_supplement
from .reghdfe import RESULT_COLUMNS, one_sided_p
from .specification import CLUSTERS

EXECUTABLES = ("stata-mp", "stata-se", "stata", "StataMP-64.exe", "StataSE-64.exe", "StataBE-64.exe", "Stata-64.exe")
KNOWN_LOCATIONS = (
    "/usr/local/stata*/stata-mp", "/usr/local/stata*/stata-se", "/usr/local/stata*/stata",
    "/opt/stata*/stata-mp", "/opt/stata*/stata-se", "/opt/stata*/stata",
    "/Applications/Stata*/StataMP.app/Contents/MacOS/stata-mp",
    "/Applications/Stata*/StataSE.app/Contents/MacOS/stata-se",
    "/Applications/Stata*/StataBE.app/Contents/MacOS/stata-be", "/Applications/Stata*/Stata.app/Contents/MacOS/stata",
    "C:/Program Files/Stata*/StataMP-64.exe", "C:/Program Files/Stata*/StataSE-64.exe",
    "C:/Program Files/Stata*/StataBE-64.exe", "C:/Program Files/Stata*/Stata-64.exe",
)
"""Glob patterns of the usual install locations (Linux, macOS app bundles, Windows), tried after PATH."""
PYSTATA_TAIL_LINES = 15
"""Lines of Stata's captured output (pystata's, or a batch executable's that did not start) an error message carries."""
ERROR_LINE = re.compile(r"^r\((\d+)\);\s*$", re.MULTILINE)
CELLS = ("b", "se", "t", "p", "ci_l", "ci_u")
STATS = ("N", "N_clust", "df_r", "r2", "r2_within", "num_singletons", "p_one")
TABLES = {"validation": "stata_validation.csv", "detection": "stata_detection.csv",
          "placebo": "stata_placebo.csv", "placebo_validation": "stata_placebo_validation.csv"}
RESULT_FILES = (
    # Steps 3-5 (both engines) and their LaTeX twins (lapbias report)
    "validation.csv", "detection.csv", "placebo.csv", "placebo_validation.csv",
    "validation.tex", "detection.tex", "placebo.tex", "placebo_validation.tex", "estimation_notes.csv",
    # Python engine only: extended specifications (estimate/extended.py)
    "descriptive.csv", "table2.csv", "magnitudes.csv", "table3.csv", "table4.csv", "table5.csv",
    "table2.tex", "table3.tex", "table4.tex", "table5.tex", "extended_notes.csv",
    # bootstrap (both engines)
    "bootstrap.csv", "bootstrap_draws.csv", "figures/bootstrap.png",
    # Stata engine's own exports
    "stata_validation.csv", "stata_detection.csv", "stata_placebo.csv", "stata_placebo_validation.csv",
    "stata_validation.tex", "stata_detection.tex", "stata_placebo.tex", "stata_placebo_validation.tex",
    "stata_notes.csv", "stata_bootstrap.csv", "stata_bootstrap_draws.dta", "figures/bootstrap_stata.png",
    "stata_versions.csv",  # reghdfe, ftools, boottest, estout, esttab as their ado files state them (REPORT.md)
)
"""Every file under results/ that `lapbias estimate` writes with either engine (removed before each run)."""
NOTE_COLUMNS = ["model", "kind", "detail"]
BOOTSTRAP_SUMMARY = ("b3_in_sample", "p_boot", "p95", "B", "seed", "resampling", "N", "n_unidentified", "identified",
                     "note", "method")
"""The columns of 04_bootstrap.do's stata_bootstrap.csv (method: python = the lapbias kernel, reghdfe = one reghdfe
per draw, none = no draw made)."""


class StataError(LapbiasError):
    """Stata ran and stopped with an error (the message holds the log excerpt)."""


class StataNotStarted(StataError):
    """The Stata executable ran but Stata did not (it wrote no batch log): a broken or unlicensed installation."""


@dataclass(frozen=True)
class StataInstall:
    kind: str
    """"pystata" (an installation directory of Stata 17+) or "batch" (an executable)."""
    location: str
    edition: str = "mp"
    executable: str = ""
    """The console executable, for batch mode (also the fallback when pystata will not start)."""


@dataclass
class StataRun:
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[dict[str, str]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    """Steps that stopped, e.g. ["bootstrap"] (their notes say why; the other tables are kept)."""


def stata_files() -> tuple[Path, Path]:
    """(ado folder, do folder): a source checkout's ado/ and do/ beside python/, else the copies installed with the
    package (setup.py maps them to lapbias/stata_ado and lapbias/stata_do)."""
    package = Path(__file__).resolve().parents[1]
    for ado, do in ((package.parents[1] / "ado", package.parents[1] / "do"),
                    (package / "stata_ado", package / "stata_do")):
        if (ado / "lapbias.ado").is_file() and (do / "master.do").is_file():
            return ado, do
    raise LapbiasError(f"the lapbias ado/do files are missing from {package} (reinstall lapbias: pip install .)")


def _executable_in(directory: Path) -> str:
    for name in EXECUTABLES:
        if (directory / name).is_file():
            return str(directory / name)
    for app in sorted(directory.glob("Stata*.app/Contents/MacOS/stata*")):
        return str(app)
    return ""


def find_stata(config: RunConfig, tried: list[str] | None = None) -> StataInstall | None:
    """The Stata to run, or None; `tried` collects every place looked at (for the error message)."""
    tried = [] if tried is None else tried
    edition = config.estimate.stata_edition
    path = config.estimate.stata_path or os.environ.get("STATA_PATH", "")
    if path:
        where = Path(path)
        if where.is_file():
            return StataInstall("batch", str(where), edition, str(where))
        if not where.is_dir():
            raise LapbiasError(f"Stata path {path!r} ([estimate] stata_path or STATA_PATH) is neither a directory nor "
                               "an executable; example: /usr/local/stata18 or /usr/local/stata18/stata-mp")
        executable = _executable_in(where)
        if (where / "utilities" / "pystata").is_dir():  # pystata ships with Stata 17 and later
            return StataInstall("pystata", str(where), edition, executable)
        if executable:  # Stata 15/16: no pystata, batch mode
            return StataInstall("batch", executable, edition, executable)
        raise LapbiasError(f"Stata path {path!r} has neither utilities/pystata (Stata 17+) nor an executable "
                           f"({', '.join(EXECUTABLES)}, Stata*.app)")
    tried.append("[estimate] stata_path and STATA_PATH (unset)")
    for name in EXECUTABLES:
        tried.append(f"{name} on PATH")
        found = shutil.which(name)
        if found:
            return StataInstall("batch", found, edition, found)
    for pattern in KNOWN_LOCATIONS:
        tried.append(pattern)
        hits = sorted(glob.glob(pattern))
        if hits:
            return StataInstall("batch", hits[-1], edition, hits[-1])
    return None


def select_engine(config: RunConfig, requested: str) -> tuple[str, StataInstall | None, str]:
    """(engine, install, message): auto takes Stata when it is found, else the Python engine, and says which."""
    if requested == "python":
        return "python", None, "engine: python (reghdfe's conventions on pyfixest)"
    tried: list[str] = []
    install = find_stata(config, tried)
    if install is not None:
        return "stata", install, f"engine: stata ({install.kind}: {install.location})"
    if requested == "stata":
        raise LapbiasError("--engine stata: no Stata found; tried " + "; ".join(tried) + ". Set [estimate] "
                           "stata_path or STATA_PATH to the Stata directory, e.g. STATA_PATH=/usr/local/stata18")
    return "python", None, "engine: python (auto: no Stata found via stata_path, STATA_PATH, PATH or the usual places)"


def clear_results(results: Path) -> list[str]:
    """Remove every result file either engine writes (RESULT_FILES) from `results`; returns the names removed."""
    removed = []
    for name in RESULT_FILES:
        path = Path(results) / name
        if path.exists():
            path.unlink()
            removed.append(name)
    return removed


def check_log(log_text: str, log_path: Path) -> None:
    """Fail with the log excerpt when Stata's batch log holds an error line r(###);."""
    match = ERROR_LINE.search(log_text)
    if match:
        lines = log_text[: match.end()].splitlines()[-15:]
        raise StataError(f"Stata stopped with error r({match.group(1)}) (full log: {log_path}):\n"
                         + "\n".join(f"  {line}" for line in lines))


def _do_command(do_file: Path, args: list[str]) -> list[str]:
    """The do-file and its arguments, each quoted for Stata's `do` (paths may hold spaces)."""
    return [f'"{do_file}"'] + [f'"{a}"' for a in args]


def batch_command(executable: str, do_file: Path, args: list[str]) -> list[str]:
    """Stata's batch mode: `<exe> -b do <file> <args>` (Linux, macOS), `<exe> /e do <file> <args>` (Windows)."""
    flag = "/e" if executable.lower().endswith(".exe") or sys.platform == "win32" else "-b"
    return [executable, flag, "do", *_do_command(do_file, args)]


def _run_batch(executable: str, logs: Path, do_file: Path, args: list[str]) -> None:
    """Batch mode in a private working directory (the batch log is written there as <stem>.log), log moved to
    logs/stata_batch_<stem>.log and scanned for r(###);. No batch log means Stata did not start: StataNotStarted
    with the exit status and the last lines the executable printed (its own reason: a missing library, no
    licence), and the way around it, the Python engine."""
    command = batch_command(executable, do_file, args)
    if sys.platform == "win32":  # a list would be joined by list2cmdline, which escapes Stata's quotes as \"
        command = " ".join([f'"{executable}"', *command[1:]])
    work = Path(tempfile.mkdtemp(prefix="stata-run-", dir=logs))
    try:
        ran = subprocess.run(command, cwd=work, check=False, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, errors="replace")
        log = work / f"{do_file.stem}.log"
        if not log.exists():
            said = (ran.stderr + ran.stdout).strip().splitlines()[-PYSTATA_TAIL_LINES:]
            raise StataNotStarted(
                f"Stata did not start: {executable} (batch mode, {do_file.name}) ended with exit status "
                f"{ran.returncode} without writing its batch log. Repair that Stata or point [estimate] stata_path (or STATA_PATH) to a "
                "working one, or estimate with the Python engine: `lapbias estimate CONFIG --engine python` "
                f"([estimate] engine = \"python\"). {'What it printed:' if said else 'It printed nothing.'}"
                + "".join(f"\n  {line}" for line in said))
        target = logs / f"stata_batch_{do_file.stem}.log"
        shutil.move(str(log), target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    check_log(target.read_text(errors="replace"), target)


_PYSTATA = {}


def _pystata(install: StataInstall):
    """pystata's `stata` module, started once per process; StataError when it cannot start (wrong path or edition,
    stata_setup missing, no licence)."""
    if "stata" not in _PYSTATA:
        try:
            import stata_setup

            stata_setup.config(install.location, install.edition, splash=False)
            from pystata import stata
        except (Exception, SystemExit) as err:  # stata_setup raises plain exceptions, or exits, for a bad setup
            raise StataError(f"cannot start Stata through pystata from {install.location} "
                             f"(edition {install.edition}): {err}") from None
        _PYSTATA["stata"] = stata
    return _PYSTATA["stata"]


def _run_pystata(install: StataInstall, work: Path, do_file: Path, args: list[str]) -> None:
    """One do-file through pystata. Stata runs inside this process: its `cd` would be this process's chdir, and every
    relative path of lapbias (the default root ".") would then point into another folder. So no `cd` is sent (the
    do-files get absolute paths) and the working directory is put back whatever the do-file did. pystata prints
    Stata's output through Python's stdout, also under quietly=True (the do-files' `capture noisily` turns it back
    on): it is captured here, the do-files' named logs keep it, and a Stata error carries its last lines."""
    try:
        stata = _pystata(install)
    except StataError:
        if not install.executable:
            raise
        _run_batch(install.executable, work, do_file, args)  # Stata 17+ whose pystata will not start: batch mode
        return
    cwd, output = os.getcwd(), io.StringIO()
    try:
        with contextlib.redirect_stdout(output):
            stata.run("do " + " ".join(_do_command(do_file, args)), quietly=True, echo=False)
    except (SystemError, RuntimeError) as err:  # pystata reports a Stata error r(###) as SystemError
        tail = "\n".join(output.getvalue().strip().splitlines()[-PYSTATA_TAIL_LINES:])
        raise StataError(f"Stata stopped with an error in {do_file.name}: {err}"
                         + (f"\nStata's last lines:\n{tail}" if tail else "")) from None
    finally:
        os.chdir(cwd)


def _run(install: StataInstall, logs: Path, do_file: Path, args: list[str]) -> None:
    if install.kind == "batch":
        _run_batch(install.location, logs, do_file, args)
    else:
        _run_pystata(install, logs, do_file, args)


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
    coefficients, stats = [], {m: {} for m in models}
    for row in rows[2:]:
        name = _clean(row[0])
        if name in STATS:
            for model, start in zip(models, starts):
                stats[model][name] = _number(row[start]) if start < len(row) else math.nan
            continue
        for model, start in zip(models, starts):
            values = {cell: _number(row[start + k]) if start + k < len(row) else math.nan
                      for k, cell in enumerate(CELLS)}
            if values["b"] == 0 and not values["se"] > 0:
                # esttab keeps an omitted term (o./co. prefix stripped) as b = 0 with no standard error (estout's
                # default `omitted`); the contract's omitted term is a row with empty estimates, as the Python engine
                # writes it (a null theta for the verdict, not an estimate of 0 without a p-value)
                values = dict.fromkeys(CELLS, math.nan)
            elif math.isnan(values["b"]):
                continue
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


def _stata_summary(results: Path) -> pd.Series:
    """04_bootstrap.do's one-line summary; Stata writes a missing value (no identified draw: p_boot, p95; an
    in-sample beta_3 that is not identified) as ".", and an empty note as ""."""
    summary = pd.read_csv(results / "stata_bootstrap.csv", na_values=["."], keep_default_na=False).iloc[0]
    missing = [c for c in BOOTSTRAP_SUMMARY if c not in summary.index]
    if missing:
        raise StataError(f"{results / 'stata_bootstrap.csv'} lacks {missing}: written by an older do/04_bootstrap.do?")
    return summary


def read_bootstrap(results: Path):
    """Stata's bootstrap (stata_bootstrap.csv summary, stata_bootstrap_draws.dta draws) as a BootstrapResult, so that
    p_boot and p95 follow estimate/bootstrap.py's definitions; written as bootstrap.csv (engine "stata"),
    bootstrap_draws.csv and figures/bootstrap.png by `run_stata`. A summary with identified = 0 is a result with
    `identified` False, its note as the reason and every draw NaN (no draws file is read), as the Python engine's."""
    from .bootstrap import BootstrapResult

    summary = _stata_summary(results)
    B, identified = int(summary["B"]), int(summary["identified"]) == 1
    if identified:
        draws = pyreadstat.read_dta(str(results / "stata_bootstrap_draws.dta"))[0].sort_values("draw")
        if len(draws) != B:
            raise StataError(f"{results / 'stata_bootstrap_draws.dta'} holds {len(draws)} draws, the summary says {B}")
        values = draws["beta3"].to_numpy(dtype=float)
    else:
        values = np.full(B, np.nan)
    return BootstrapResult(values, float(summary["b3_in_sample"]), B, int(summary["seed"]), str(summary["resampling"]),
                           int(summary["N"]), standardized=True, identified=identified,
                           reason="" if identified else str(summary["note"]))


def _write_bootstrap(results: Path, run: StataRun) -> None:
    """bootstrap.csv (engine "stata"), and when identified bootstrap_draws.csv and figures/bootstrap.png; notes: lapboot's
    own p_boot, p95, n_unidentified against the draws', why a bootstrap is not identified (as `lapbias estimate` notes
    it for the Python engine), and that draws made by reghdfe follow Stata's random stream."""
    from .bootstrap import histogram

    result = read_bootstrap(results)
    stata_summary = _stata_summary(results)
    table = result.summary()
    table["engine"] = "stata"
    write_csv(table, results / "bootstrap.csv")
    if not result.identified:
        run.notes.append({"model": "bootstrap", "kind": "failed",
                          "detail": f"the pairs bootstrap is not identified: {result.reason}"})
        return
    for name in ("p_boot", "p95", "n_unidentified"):
        ours, theirs = float(table[name].iloc[0]), float(stata_summary[name])
        if not (math.isnan(ours) and math.isnan(theirs)) and not math.isclose(ours, theirs, rel_tol=1e-9,
                                                                              abs_tol=1e-12):
            run.notes.append({"model": "bootstrap", "kind": "warning",
                              "detail": f"lapboot's {name} = {stata_summary[name]} differs from the draws' {ours}"})
    if stata_summary["method"] == "reghdfe":
        run.notes.append({"model": "bootstrap", "kind": "warning", "detail": "lapboot re-estimated reghdfe on each "
                          "draw (Stata's random stream, not the lapbias kernel's): p_boot agrees with the Python "
                          "engine within Monte Carlo error only"})
    write_csv(pd.DataFrame({"draw": range(1, result.B + 1), "beta3": result.draws}), results / "bootstrap_draws.csv")
    histogram(result, results / "figures" / "bootstrap.png")


def _write_table(results: Path, name: str, table: pd.DataFrame) -> None:
    """results/<name>.csv of one coefficient table in the results schema (engine "stata"): the one place where the
    Stata engine writes a coefficient table, so a column computed on the Python side for both engines goes here."""
    write_csv(table, results / f"{name}.csv")


def _contract_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the results contract: of lapvalid's difference model (DIFFERENCE_MODEL, whose esttab export holds
    every term of its regression) the interaction, the difference per SD of the recalled direction, only, as the
    Python engine writes it."""
    difference = table["model"] == DIFFERENCE_MODEL
    return table[~difference | table["term"].str.contains("#", regex=False)].reset_index(drop=True)


def _read_tables(results: Path, run: StataRun) -> None:
    """The do-files' esttab exports (TABLES) into run.tables and results/<table>.csv, with an `omitted` note for each
    omitted term (the verdict's collapse rule reads the placebo's `lap omitted` note)."""
    for name, export in TABLES.items():
        if not (results / export).exists():
            continue
        table = parse_esttab_csv(results / export)
        for row in table[table["coef"].isna()].itertuples():
            run.notes.append({"model": f"{name}:{row.model}", "kind": "omitted",
                              "detail": f"{row.term} omitted: collinear with the fixed effects or the other "
                                        "regressors (Stata: no standard error)"})
        run.tables[name] = _contract_rows(table)
        _write_table(results, name, run.tables[name])


def _bootstrap_too_small(data: Path) -> str:
    """The Python engine's refusal of a bootstrap sample too small to resample (bootstrap.too_few_rows), on the .dta
    panels' complete rows; '' when do/04_bootstrap.do should run (it handles an empty sample itself, as the Python
    engine, which then writes no bootstrap and no note)."""
    from .bootstrap import ABSORB, VARIABLES, too_few_rows

    pre, post = (pyreadstat.read_dta(str(data / f"panel_{part}.dta"), usecols=VARIABLES + ABSORB)[0].dropna()
                 for part in ("pre", "post"))
    return "" if pre.empty or post.empty else too_few_rows(len(post))


def run_stata(config: RunConfig, layout: Layout, install: StataInstall, results: Path | None = None) -> StataRun:
    """Steps 3-5 (do/master.do), then the bootstrap (do/04_bootstrap.do), in Stata on layout.derived's panel_*.dta.
    Writes only into `results` (default layout.results; give a fresh folder to swap in on success) and Stata's logs
    into layout.logs: <table>.csv in the results schema, bootstrap.csv/_draws.csv/figures/bootstrap.png and
    estimation_notes.csv. A failed bootstrap is a note (StataRun.failed); a step of Steps 3-5 that stopped, or no
    detection table, is a StataError."""
    results = Path(results if results is not None else layout.results).resolve()
    logs, data = layout.logs.resolve(), layout.derived.resolve()
    if not (data / "panel_pre.dta").exists():
        raise LapbiasError(f"{data / 'panel_pre.dta'} does not exist: run `lapbias panel` first")
    clear_results(results)
    (results / "figures").mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    ado, do = stata_files()
    run = StataRun()
    try:
        _run(install, logs, do / "master.do", [str(data), str(results), str(logs), str(ado), str(do),
                                              str(config.estimate.newey_lag),
                                              " ".join(CLUSTERS[config.estimate.cluster])])
        steps_error = ""
    except StataNotStarted:
        raise  # nothing ran: no table, note or log of Steps 3-5 to read
    except StataError as err:
        steps_error = str(err)
    notes_file = results / "stata_notes.csv"
    if notes_file.exists() and notes_file.stat().st_size:
        run.notes += pd.read_csv(notes_file, dtype=str).fillna("").to_dict("records")
    stopped = [f"{note['model']}: {note['detail']}" for note in run.notes if note["kind"] == "error"]
    if stopped:
        # a do-file raises only what is not a data outcome (ado/_lapbias_datarc.ado): an installation problem,
        # invalid syntax; a table missing for it would read as a verdict
        raise StataError(f"a step of Steps 3-5 stopped with an error that is not a property of the data: "
                         f"{'; '.join(stopped)}; see {logs / 'stata_steps.log'}")
    _read_tables(results, run)
    if "detection" not in run.tables and any(note["model"].startswith("detection:") and note["kind"] == "failed"
                                             for note in run.notes):
        # the contract (docs/contracts.md): detection.csv is always written; without rows when the regression
        # cannot be estimated, and estimation_notes.csv says why -- the report's verdict is then Underpowered
        run.tables["detection"] = pd.DataFrame(columns=RESULT_COLUMNS)
        _write_table(results, "detection", run.tables["detection"])
    if "detection" not in run.tables:
        batch_log = logs / "stata_batch_master.log"
        tail = batch_log.read_text(errors="replace").splitlines()[-10:] if batch_log.exists() else []
        reasons = (steps_error or "; ".join(f"{n['model']}: {n['detail']}" for n in run.notes)
                   or "the log's last lines:\n" + "\n".join(f"  {line}" for line in tail) or "no note")
        written = [str(path) for path in (logs / "stata_steps.log", batch_log) if path.exists()]
        raise StataError(f"Stata wrote no detection table ({results / TABLES['detection']}): {reasons}"
                         + (f"; see {' and '.join(written)}" if written else "; Stata wrote no log"))
    estimate = config.estimate
    # beta_3's wild cluster bootstrap p-values are not in the do-files: the Python engine computes them on the same
    # exported panel (estimate/protocol.py), the report says so
    samples = [pyreadstat.read_dta(str(data / f"{name}.dta"))[0] if (data / f"{name}.dta").exists() else None
               for name in ("panel_pre", "panel_post")]
    run.notes += stata_supplement(run.tables, *samples, estimate.wild_bootstrap_reps, estimate.bootstrap_seed)
    for name in ("detection", "placebo", "validation", "placebo_validation"):
        if name in run.tables:
            write_csv(run.tables[name], results / f"{name}.csv")
    too_small = _bootstrap_too_small(data) if (data / "panel_post.dta").exists() else ""
    if estimate.bootstrap_reps > 0 and too_small:
        run.notes.append({"model": "bootstrap", "kind": "failed",
                          "detail": f"the pairs bootstrap could not run: {too_small}"})
    elif estimate.bootstrap_reps > 0 and (data / "panel_post.dta").exists():
        try:
            _run(install, logs, do / "04_bootstrap.do", [str(data), str(results), str(logs), str(ado),
                                                         str(estimate.bootstrap_reps), str(estimate.bootstrap_seed),
                                                         estimate.bootstrap_resample, sys.executable])
            if (results / "stata_bootstrap.csv").exists():
                _write_bootstrap(results, run)
        except StataError as err:
            run.failed.append("bootstrap")
            first = str(err).splitlines()[0]
            run.notes.append({"model": "bootstrap", "kind": "error",
                              "detail": f"do/04_bootstrap.do failed, the Steps 3-5 tables are kept: {first}"})
    run.notes.append({"model": "all", "kind": "warning", "detail": "estimated in Stata: Stata's own output is in "
                      "logs/stata_steps.log and logs/stata_bootstrap.log"})
    write_csv(pd.DataFrame(run.notes, columns=NOTE_COLUMNS), results / "estimation_notes.csv")
    return run


def install_instructions(copy_to: Path | None = None) -> str:
    """The Stata commands that install the ado files of this lapbias installation (`net install` from the folder
    holding lapbias.pkg and stata.toc) and run its do-files; with `copy_to`, the files are first copied to
    <copy_to>/ado and <copy_to>/do and the commands name those copies."""
    ado, do = stata_files()
    if copy_to is not None:
        copy_to = Path(copy_to).resolve()
        for source, name in ((ado, "ado"), (do, "do")):
            shutil.copytree(source, copy_to / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
        ado, do = copy_to / "ado", copy_to / "do"
    return "\n".join([
        "* In Stata, once: the dependencies and lapbias's commands (help lapbias, lapvalid, lapplacebo, lapboot)",
        "ssc install require, replace", "ssc install reghdfe, replace", "ssc install ftools, replace",
        "ssc install estout, replace",
        f'net install lapbias, from("{ado}") replace', "help lapbias", "",
        "* The protocol's Steps 3-5, then the bootstrap, from the project folder (paths are arguments):",
        f'do "{do / "master.do"}" "data/derived" "results" "logs" "{ado}" "{do}" -1 "entity_num"'
        "   // the last two: [estimate] newey_lag and the cluster variables (\"entity_num date_num\": two-way)",
        f'do "{do / "04_bootstrap.do"}" "data/derived" "results" "logs" "{ado}" 10000 20251222 obs "{sys.executable}"',
    ])
