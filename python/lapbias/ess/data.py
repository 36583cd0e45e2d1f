"""The analysis sample of one outcome: rows, covariates X (App. C features), outcome Y, checks with clear errors.

Features (App. C "Outcomes and feature construction"): numeric covariates standardized (mean 0, sd 1 on the
analysis sample; X only, no outcome information enters); categorical covariates with levels rarer than
`min_category_count` pooled into "other", then one indicator per level with the first level dropped.
"""

from __future__ import annotations

import difflib
import re
import string
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.validate import rewrite_decimal_commas, sniff_dialect
from ..errors import InputDataError
from .config import EssConfig, Outcome


READERS = {".csv": "CSV", ".txt": "CSV", ".parquet": "parquet", ".pq": "parquet", ".dta": "Stata .dta"}
STATA_MISSING = (".", *(f".{letter}" for letter in string.ascii_lowercase))
"""Stata's missing values as a CSV exported from Stata writes them: system missing "." and the extended codes ".a" to
".z"; a CSV cell holding one is missing (as pyreadstat reads them from a .dta file), not text."""


def read(config: EssConfig) -> pd.DataFrame:
    """The dataset: a CSV (UTF-8), parquet or Stata .dta file, or statsmodels:<name>
    (statsmodels.datasets.<name>.load_pandas()); a file that cannot be read as its kind is a one-line error. A CSV is
    read with the separator the protocol's validation detects (data.validate.sniff_dialect: commas, the semicolons of
    European Excel with decimal commas, tabs, bars), and Stata's missing codes (STATA_MISSING) in it are missing."""
    source = config.data
    if source.startswith("statsmodels:"):
        import importlib

        name = source.split(":", 1)[1]
        try:
            frame = importlib.import_module(f"statsmodels.datasets.{name}").load_pandas().data
        except (ImportError, AttributeError):
            raise InputDataError(f"[ess] data = {source!r}: statsmodels has no bundled dataset {name!r}; "
                                 "e.g. data = \"statsmodels:anes96\"") from None
        frame = frame.reset_index(drop=True)
    else:
        frame = _read_file(Path(config.root) / source, source)
    frame.insert(0, "ess_row", np.arange(len(frame)))
    if config.rows and config.rows < len(frame):
        frame = frame.sample(config.rows, random_state=config.seed).sort_values("ess_row").reset_index(drop=True)
    return frame


def _read_file(path: Path, source: str) -> pd.DataFrame:
    where = f"[ess] data = {source!r}:"
    if not path.exists():
        raise InputDataError(f"{where} {path} does not exist")
    if path.is_dir():
        raise InputDataError(f"{where} {path} is a folder; give the data file itself (CSV, parquet or .dta)")
    kind = READERS.get(path.suffix.lower())
    if kind is None:
        excel = " (an Excel workbook: save it as \"CSV UTF-8\" or parquet)" if path.suffix.lower() in (
            ".xlsx", ".xls", ".xlsm") else ""
        raise InputDataError(f"{where} {path.name} is not a file the audit reads{excel}; give a .csv (UTF-8), "
                             ".parquet or .dta file")
    try:
        if kind == "CSV":
            raw = path.read_bytes()
            if b"\x00" in raw[:8192]:
                raise InputDataError(f"{where} {path.name} is not a text CSV (it holds NUL bytes: a binary file or "
                                     "UTF-16 text?); save it as CSV UTF-8")
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                line = raw.count(b"\n", 0, err.start) + 1
                raise InputDataError(f"{where} {path.name} is not UTF-8 text (line {line}: byte "
                                     f"{raw[err.start:err.start + 1]!r}, e.g. Latin-1 or Windows-1252); save it as "
                                     "CSV UTF-8") from None
            dialect = sniff_dialect(path)
            frame = pd.read_csv(path, encoding="utf-8-sig", sep=dialect.separator, na_values=list(STATA_MISSING),
                                skiprows=1 if dialect.excel_line else 0)
            if dialect.separator == ";":  # European Excel: columns of numbers written with decimal commas
                for column in rewrite_decimal_commas(frame, list(frame.columns)):
                    frame[column] = pd.to_numeric(frame[column], errors="coerce")
        elif kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            import pyreadstat

            frame = pyreadstat.read_dta(str(path))[0]
    except pd.errors.EmptyDataError:
        raise InputDataError(f"{where} {path.name} is empty (no header, no rows)") from None
    except InputDataError:
        raise
    except Exception as err:     # pandas ParserError, pyarrow ArrowInvalid, pyreadstat ReadstatError, OSError, ...
        raise InputDataError(f"{where} {path.name} cannot be read as {kind}: "
                             f"{(str(err).splitlines() or [type(err).__name__])[0]}") from None
    if frame.empty:
        raise InputDataError(f"{where} {path.name} has a header but no rows (columns: {list(frame.columns)[:8]})")
    mangled = sorted(str(c) for c in frame.columns if re.search(r"\.\d+$", str(c)) and str(c).rsplit(".", 1)[0]
                     in frame.columns)
    if mangled:
        raise InputDataError(f"{where} {path.name} has duplicate column names ({mangled[0].rsplit('.', 1)[0]!r} "
                             "twice); every column needs its own name")
    return frame


def check_value_labels(frame: pd.DataFrame, config: EssConfig) -> None:
    """Every table [ess.value_labels.<column>] labels a column of the data. RULE: labels of a column that is not
    there (a typo, "incom" for "income") are refused, not ignored: the persona would then read the column's codes
    ("You earn 3.") while the config says they are words."""
    columns = [str(c) for c in frame.columns[1:]]  # ess_row is read's own
    for column in config.value_labels:
        if column not in columns:
            close = difflib.get_close_matches(column, columns, n=1)
            guess = f"; did you mean {close[0]!r}?" if close else "."
            raise InputDataError(f"[ess.value_labels.{column}] labels column {column!r}, which is not a column of "
                                 f"[ess] data = {config.data!r} (its columns: {columns[:12]}"
                                 f"{' ...' if len(columns) > 12 else ''}){guess} Name the table after the column "
                                 f"it labels, e.g. [ess.value_labels.{close[0] if close else columns[0]}]")


def _example(frame: pd.DataFrame, mask: pd.Series) -> str:
    rows = frame.loc[mask]
    return f"row {int(rows['ess_row'].iloc[0])}" if len(rows) else "no row"


def check_columns(frame: pd.DataFrame, config: EssConfig, outcome: Outcome) -> None:
    """Every named column exists, has no missing value, and numeric where it must be."""
    where = f"[ess.outcomes] {outcome.name!r}"
    needed = {c: "[ess] covariates" for c in config.covariates}
    needed[outcome.column] = f"{where} column"
    if outcome.llm_column:
        needed[outcome.llm_column] = f"{where} llm_column"
    for key in ("arm", "cate"):
        spec = getattr(outcome, key)
        if spec:
            needed[spec["treatment"]] = f"{where} {key}.treatment"
            if key == "cate" and isinstance(spec.get("propensity"), str):
                needed[spec["propensity"]] = f"{where} cate.propensity"
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputDataError(f"column {missing[0]!r} named by {needed[missing[0]]} is not in the data; "
                             f"columns are {list(frame.columns)[1:12]}{' ...' if frame.shape[1] > 12 else ''}")
    for column, by in needed.items():
        if frame[column].isna().any():
            raise InputDataError(f"column {column!r} ({by}) has {int(frame[column].isna().sum())} missing value(s), "
                                 f"first at {_example(frame, frame[column].isna())}; drop or fill them first")
        if pd.api.types.is_float_dtype(frame[column]) and np.isinf(frame[column]).any():
            infinite = np.isinf(frame[column])
            raise InputDataError(f"column {column!r} ({by}) has {int(infinite.sum())} infinite value(s), first at "
                                 f"{_example(frame, infinite)} ({frame.loc[infinite, column].iloc[0]}); losses and "
                                 "standardized features need finite numbers: drop or fix those rows")
    for column in config.covariates:
        if column not in config.categorical and not pd.api.types.is_numeric_dtype(frame[column]):
            bad = pd.to_numeric(frame[column], errors="coerce").isna()
            raise InputDataError(f"covariate {column!r} is not numeric ({_example(frame, bad)}: "
                                 f"{frame.loc[bad, column].iloc[0]!r}); list it in [ess] categorical = [\"{column}\"]")
    if outcome.discrete:
        observed = set(frame[outcome.column].tolist())
        codes = set(outcome.labels.values()) if outcome.prompt else set(frame[outcome.llm_column].tolist())
        foreign = sorted((str(c) for c in codes - observed))
        if foreign:
            source = "labels" if outcome.prompt else f"llm_column {outcome.llm_column!r}"
            raise InputDataError(f"{where} {source} has value(s) {foreign[:5]} that column {outcome.column!r} never "
                                 f"takes (its values: {sorted(map(str, observed))[:5]}); predictions must use the "
                                 "outcome's codes, e.g. labels = {Clinton = 0, Dole = 1}")
    if not outcome.discrete:
        for column in [outcome.column] + ([outcome.llm_column] if outcome.llm_column else []):
            if not pd.api.types.is_numeric_dtype(frame[column]) or pd.api.types.is_bool_dtype(frame[column]):
                bad = pd.to_numeric(frame[column], errors="coerce").isna()
                shown = frame.loc[bad, column].iloc[0] if bad.any() else frame[column].iloc[0]
                raise InputDataError(f"column {column!r} of the continuous outcome {outcome.name!r} is not numeric "
                                     f"(e.g. {shown!r}); squared error needs numbers, e.g. 12.5, or set type = \"discrete\"")


def check_persona_fields(frame: pd.DataFrame, outcome: Outcome) -> None:
    """Every {column} of the persona prompt exists and is filled in every row. RULE: a row whose persona field is
    missing or blank is refused, not sent (it would read "earns nan a year") and not dropped (the LLM and the
    comparators must be scored on the same rows): the error names the column, the count and the first row."""
    where = f"[ess.outcomes] {outcome.name!r} prompt"
    fields = [name for _, name, _, _ in string.Formatter().parse(outcome.prompt) if name]
    for field in dict.fromkeys(fields):
        if field not in frame.columns:
            raise InputDataError(f"{where} has the placeholder {{{field}}}, which is not a column of the data; "
                                 f"placeholders are column names, e.g. {{{list(frame.columns)[1]}}}")
        values = frame[field]
        empty = values.isna() | (values.astype(str).str.strip() == "")
        if empty.any():
            raise InputDataError(f"{where}: column {field!r} is empty in {int(empty.sum())} row(s), first at "
                                 f"{_example(frame, empty)}, so the persona would read \"nan\" or nothing there; fill "
                                 f"or drop those rows, or remove {{{field}}} from the prompt")


def analysis_sample(frame: pd.DataFrame, outcome: Outcome) -> pd.DataFrame:
    """The rows of this outcome: all rows, or one treatment arm (§6, arm = {treatment, value})."""
    if outcome.arm:
        frame = frame[frame[outcome.arm["treatment"]] == outcome.arm["value"]]
        if frame.empty:
            raise InputDataError(f"[ess.outcomes] {outcome.name!r} arm: no row has {outcome.arm['treatment']} = "
                                 f"{outcome.arm['value']!r}")
    return frame.reset_index(drop=True)


def transformed_outcome(frame: pd.DataFrame, outcome: Outcome) -> np.ndarray:
    """§6: Y* = Y (D − e(X)) / (e(X)(1 − e(X))), with E[Y* | X] = τ(X) under unconfoundedness and 0 < e < 1, so
    E(Y* − τ̂(X))² = E(τ(X) − τ̂(X))² + E Var(Y* | X) and the CATE-ESS is unchanged by replacing τ with Y*."""
    spec = outcome.cate
    d = frame[spec["treatment"]].to_numpy(float)
    if not np.isin(d, (0.0, 1.0)).all():
        raise InputDataError(f"[ess.outcomes] {outcome.name!r} cate.treatment {spec['treatment']!r} must be 0/1; "
                             f"found {sorted(set(d.tolist()) - {0.0, 1.0})[:3]}")
    propensity = spec.get("propensity", 0.5)
    e = frame[propensity].to_numpy(float) if isinstance(propensity, str) else np.full(len(frame), float(propensity))
    if not ((e > 0) & (e < 1)).all():
        raise InputDataError(f"[ess.outcomes] {outcome.name!r} cate.propensity must lie strictly in (0, 1) "
                             "(overlap), e.g. propensity = 0.5 in a balanced RCT")
    return frame[outcome.column].to_numpy(float) * (d - e) / (e * (1 - e))


def features(frame: pd.DataFrame, config: EssConfig) -> np.ndarray:
    """X as App. C builds it (module docstring)."""
    parts = []
    for column in config.covariates:
        values = frame[column]
        if column in config.categorical:
            levels = values.astype(str)
            counts = levels.value_counts()
            levels = levels.where(levels.map(counts) >= config.min_category_count, "other")
            parts.append(pd.get_dummies(levels, prefix=column, drop_first=True, dtype=float))
        else:
            x = values.to_numpy(float)
            sd = x.std()
            parts.append(pd.DataFrame({column: (x - x.mean()) / sd if sd > 0 else x - x.mean()}))
    return pd.concat(parts, axis=1).to_numpy(float)


def check_grid(grid: tuple, n_rows: int, outcome: str) -> None:
    """Block-out CV needs K = ⌊N/n⌋ ≥ 2 blocks at every n of the grid (one to train, one to test)."""
    too_big = [n for n in grid if n_rows // n < 2]
    if too_big:
        fits = [n for n in grid if n_rows // n >= 2]
        raise InputDataError(
            f"[ess] grid n = {too_big[0]} needs at least {2 * too_big[0]} rows (K = ⌊N/n⌋ ≥ 2 blocks) but outcome "
            f"{outcome!r} has N = {n_rows}; use n ≤ {n_rows // 2}, e.g. grid = {fits or [max(1, n_rows // 4)]}")
