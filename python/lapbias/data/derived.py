"""Checks on the derived files a stage reads (docs/contracts.md, stage files): a truncated or hand-edited file,
a missing column, text where numbers belong or an infinite value is one line naming the file, the column, the
rule and an example row, and the stage that rewrites it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import LapbiasError
from ..io import read_parquet

TEXT, DATE, NUMBER, PROBABILITY, FLAG = "text", "date", "number", "probability", "flag"
RULES = {TEXT: "text", DATE: "a date (without a time zone)", NUMBER: "a finite number or missing",
         PROBABILITY: "a probability in [0, 1] or missing", FLAG: "true/false (0/1)"}
PROBABILITY_TOLERANCE = 1e-6

SPECS = {
    "input.parquet": ("validate", {"row_id": TEXT, "entity_id": TEXT, "entity_name": TEXT, "text": TEXT,
                                   "text_date": DATE, "target_date": DATE, "outcome": NUMBER}),
    "forecast.parquet": ("forecast", {"row_id": TEXT, "mu_hat": NUMBER, "parsed": FLAG, "p_first": PROBABILITY,
                                      "confidence": NUMBER}),
    "recall.parquet": ("recall", {"entity_id": TEXT, "target_date": DATE, "p_up": PROBABILITY,
                                  "p_down": PROBABILITY, "p_unknown": PROBABILITY, "lap": PROBABILITY, "ud": NUMBER,
                                  "residual_mass": NUMBER, "censored_up": FLAG, "censored_down": FLAG,
                                  "censored_unknown": FLAG}),
    "minkprob.parquet": ("minkprob", {"row_id": TEXT, "lap_mink": PROBABILITY}),
    "panel.parquet": ("panel", {"outcome": NUMBER, "mu_hat": NUMBER, "lap": NUMBER, "ud": NUMBER,
                                "ud_dir": NUMBER, "entity_num": NUMBER, "period_num": NUMBER, "post": FLAG,
                                "high_lap": NUMBER}),
}
"""file -> (the stage that writes it, {column: kind}) for the columns the next stages read."""


class DerivedFileError(LapbiasError):
    """A derived file is damaged, or breaks its schema (docs/contracts.md)."""


def shown(value) -> str:
    """A cell for a message: numpy scalars as plain Python values (3.0, not np.float64(3.0))."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _bad(values: pd.Series, kind: str) -> pd.Series:
    """Rows whose value breaks the kind's rule (missing values pass: the stages handle them)."""
    if kind == TEXT:
        return values.notna() & ~values.map(lambda v: isinstance(v, str))
    if kind == DATE:  # a calendar date: datetime64 without a time zone (the stages merge on it)
        naive = pd.api.types.is_datetime64_any_dtype(values) and getattr(values.dt, "tz", None) is None
        return pd.Series(not naive, index=values.index)
    if kind == FLAG:
        if pd.api.types.is_bool_dtype(values):
            return pd.Series(False, index=values.index)
        return values.notna() & ~values.isin([0, 1, True, False])
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values.notna()  # text, even "0.5", is not a number column (the stages compute on it)
    numbers = values.astype("float64")
    bad = np.isinf(numbers)
    if kind == PROBABILITY:
        bad |= (numbers < -PROBABILITY_TOLERANCE) | (numbers > 1 + PROBABILITY_TOLERANCE)
    return pd.Series(bad, index=values.index)


def read_checked(path: Path) -> pd.DataFrame:
    """Read a derived parquet file and check the columns its readers use (SPECS)."""
    path = Path(path)
    stage, spec = SPECS[path.name]
    frame = read_parquet(path)
    rerun = f"rerun `lapbias {stage}` (or `lapbias rebuild`) to write it again"
    if frame.empty:
        raise DerivedFileError(f"{path} has no rows; {rerun}")
    missing = [c for c in spec if c not in frame.columns]
    if missing:
        raise DerivedFileError(f"{path} lacks column(s) {missing}; {rerun}")
    for column, kind in spec.items():
        bad = _bad(frame[column], kind)
        if bad.any():
            row = int(np.argmax(bad.to_numpy()))
            raise DerivedFileError(f"{path}, column {column}: {int(bad.sum())} value(s) are not {RULES[kind]} "
                                   f"(e.g. row {row + 1}: {shown(frame[column].iloc[row])}); {rerun}")
    return frame
