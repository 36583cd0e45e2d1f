"""What a cell of the user's data file holds: the tokens read as missing, the date formats read as dates, and the
days pandas can hold (shared by validate, the target-date rule and init's column guesses)."""

from __future__ import annotations

import re

import pandas as pd

MISSING_TOKENS = {"", "na", "n/a", "nan", "null", "none", "."}
"""Cell values read as missing in dates and outcomes (CSV conventions, and Stata's "." for missing)."""


def is_missing(values: pd.Series) -> pd.Series:
    """True where a cell is empty, NaN or one of MISSING_TOKENS (case and surrounding spaces ignored)."""
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        return values.isna() | values.astype(str).str.strip().str.lower().isin(MISSING_TOKENS)
    return values.isna()


ISO_DATE = (r"^\d{4}-\d{2}-\d{2}(?:[ T](?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?"
            r"(?:(?:Z|[+-]\d{2}(?::?\d{2})?)(?:\[[A-Za-z0-9_+\-/]+\])?)?)?$")
"""A date cell: YYYY-MM-DD, optionally followed by a time of day (HH:MM[:SS[.f]], the hour in one digit too, as
Excel writes "2023-11-13 0:00") and a Z or ±HH[:MM] offset (PostgreSQL writes "+00"), which may carry the zone's
name in brackets as Java's ZonedDateTime writes it ("-05:00[America/New_York]"); anything else after the date
("2024-03-02 approx") is not a date. `iso_times` rewrites the variants as ISO 8601."""


def iso_times(text: pd.Series) -> pd.Series:
    """ISO_DATE cells in strict ISO 8601 form, for pandas' ISO8601 parser: a one-digit hour padded ("0:00" ->
    "00:00"), an offset of hours alone completed ("+00" -> "+00:00"), a bracketed zone name after the offset dropped
    (the offset says the moment)."""
    out = text.str.replace(r"^(\d{4}-\d{2}-\d{2}[ T])(\d):", r"\g<1>0\2:", regex=True)
    out = out.str.replace(r"\[[A-Za-z0-9_+\-/]+\]$", "", regex=True)
    return out.str.replace(r"^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?[+-]\d{2})$", r"\1:00",
                           regex=True)


def unread_part(cell: str) -> str | None:
    """What follows a cell's leading YYYY-MM-DD when that is not a time of day ISO_DATE reads, else None."""
    match = re.match(r"^\s*\d{4}-\d{2}-\d{2}(.+)$", str(cell))
    if not match or re.match(ISO_DATE, str(cell).strip()):
        return None
    return match.group(1).strip()
DATE_RANGE = (pd.Timestamp("1677-09-22"), pd.Timestamp("2262-04-11"))
"""The calendar days pandas' datetime64[ns] holds in full."""
