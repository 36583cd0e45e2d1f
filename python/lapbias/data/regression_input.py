"""The data file of `lapbias reghdfe`: read it (CSV, parquet or .dta) and check the named variables before the
estimator sees them, so a bad file is one line naming the file, the variable, the rule and an example.

reghdfe's own rules on the variables: the dependent variable and the regressors are numeric (Stata: "string
variables not allowed in varlist"); absorbed and cluster variables may be text (they are group labels);
missing values drop the row listwise; an infinite value is an error here (Stata has no infinity, and a
regression on it is meaningless).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputDataError
from .derived import shown

FACTOR_PREFIX = re.compile(r"^(?:c|i|ib\d+|L\d*|D\d*)\.", re.IGNORECASE)


def read_data(path: str | Path) -> pd.DataFrame:
    """The file as a DataFrame by its extension (.dta, .parquet/.pq, else CSV); unreadable files are errors."""
    path = Path(path)
    suffix = path.suffix.lower()
    kind = {".dta": "Stata .dta", ".parquet": "parquet", ".pq": "parquet"}.get(suffix, "CSV")
    if kind == "CSV":
        with open(path, "rb") as handle:
            if b"\x00" in handle.read(8192):
                raise InputDataError(f"data file {path} is not a text CSV (it holds NUL bytes: a binary file?); "
                                     "give a CSV, parquet or .dta file")
    try:
        if suffix == ".dta":
            import pyreadstat

            frame = pyreadstat.read_dta(str(path))[0]
        elif kind == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise InputDataError(f"data file {path} is empty (no header, no rows)") from None
    except UnicodeDecodeError:
        raise InputDataError(f"data file {path} is not a text CSV (it holds bytes that are not UTF-8; a binary "
                             "file?); give a CSV, parquet or .dta file") from None
    except Exception as err:  # pyreadstat.ReadstatError, pyarrow.ArrowInvalid, pandas.ParserError, OSError, ...
        raise InputDataError(f"data file {path} cannot be read as {kind}: "
                             f"{(str(err).splitlines() or [type(err).__name__])[0]}") from None
    if frame.empty:
        raise InputDataError(f"data file {path} has no rows (columns: {list(frame.columns)})")
    duplicated = sorted({c for c in frame.columns if list(frame.columns).count(c) > 1})
    mangled = sorted(c for c in frame.columns if re.search(r"\.\d+$", str(c)) and str(c).rsplit(".", 1)[0]
                     in frame.columns)
    if duplicated or mangled:
        raise InputDataError(f"data file {path} has duplicate column names {duplicated or mangled}; every column "
                             "needs its own name")
    return frame


def variables(term: str) -> list[str]:
    """The variables of a term in reghdfe's syntax: `c.mu_hat#c.lap` -> ["mu_hat", "lap"]."""
    return [FACTOR_PREFIX.sub("", part) for part in term.replace("##", "#").split("#") if part]


def check_variables(frame: pd.DataFrame, path: str | Path, y: str, x: list[str], absorb: list[str],
                    cluster: list[str]) -> None:
    """Every named variable exists; y and the regressors are numeric and finite where present."""
    problems = []
    numeric = [y] + [v for term in x for v in variables(term)]
    named = numeric + [v for term in absorb for v in variables(term)] + list(cluster)
    absent = [v for v in dict.fromkeys(named) if v not in frame.columns]
    if absent:
        raise InputDataError(f"{path}: variable(s) {absent} not found; the file has {list(frame.columns)}")
    for name in dict.fromkeys(numeric):
        values = frame[name]
        if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
            converted = pd.to_numeric(values, errors="coerce")
            bad = converted.isna() & values.notna() & (values.astype(str).str.strip() != "")
            row = int(np.argmax(bad.to_numpy())) if bad.any() else 0
            problems.append(f"{path}: {name} is not numeric (e.g. row {row + 1}: {shown(values.iloc[row])}); "
                            f"{'the dependent variable' if name == y else 'a regressor'} must be a number "
                            "(string variables are not allowed, as in reghdfe)")
            continue
        infinite = np.isinf(values.to_numpy(dtype="float64", na_value=np.nan))
        if infinite.any():
            row = int(np.argmax(infinite))
            problems.append(f"{path}: {name} has {int(infinite.sum())} infinite value(s) (e.g. row {row + 1}: "
                            f"{shown(values.iloc[row])}); use a missing value instead")
    if problems:
        raise InputDataError("\n".join(problems))
