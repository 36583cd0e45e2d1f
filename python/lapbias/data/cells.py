"""What a cell of the user's data file holds: the tokens read as missing, the date formats read as dates, and the
days pandas can hold (shared by validate, the target-date rule and init's column guesses)."""

from __future__ import annotations

import pandas as pd

MISSING_TOKENS = {"", "na", "n/a", "nan", "null", "none", "."}
"""Cell values read as missing in dates and outcomes (CSV conventions, and Stata's "." for missing)."""


def is_missing(values: pd.Series) -> pd.Series:
    """True where a cell is empty, NaN or one of MISSING_TOKENS (case and surrounding spaces ignored)."""
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        return values.isna() | values.astype(str).str.strip().str.lower().isin(MISSING_TOKENS)
    return values.isna()


ISO_DATE = r"^\d{4}-\d{2}-\d{2}(?:[ T](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
"""A date cell: YYYY-MM-DD, optionally followed by a valid ISO 8601 time of day (HH:MM[:SS[.f]], and a Z or
±HH:MM offset), which is dropped; anything else after the date ("2024-03-02 approx") is not a date."""
DATE_RANGE = (pd.Timestamp("1677-09-22"), pd.Timestamp("2262-04-11"))
"""The calendar days pandas' datetime64[ns] holds in full."""
