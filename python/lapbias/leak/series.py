"""Series input of the NumLeak audit: a user file or statsmodels' bundled macrodata, validated; dates sampled.

A series file (CSV or parquet) has one row per (series, date): `series`, `date`, `value`, and optionally
`label` (how a prompt names the series) and `unit` (one of config.UNITS). Rules, each broken row reported on
its own line (file line numbers: the header is line 1):
- every date parses; every value is a number (no missing values: a missing value is a gap);
- a series has one frequency (day, week, month, quarter or year, from the spacing of its dates), no duplicate
  period, and no gap (every period between its first and last date is present);
- a unit is one of config.UNITS; label and unit are constant within a series.

The bundled series (NumLeak App. F/G on quarterly data, loaded from the installed statsmodels, no network):
`unemp` (US civilian unemployment rate, percent, quarterly mean) and `infl` (US CPI inflation, annualized
quarterly rate in percent), 1959 Q1–2009 Q3. macrodata's first `infl` value (1959 Q1) is 0.00 by construction
(no earlier quarter to difference against), so `infl` starts in 1959 Q2.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.validate import MISSING_TOKENS, read_table
from ..errors import ConfigError, InputDataError
from .config import UNITS, LeakConfig

COLUMNS = ("series", "date", "value", "label", "unit")
FREQUENCIES = {"day": "D", "week": "W", "month": "M", "quarter": "Q", "year": "Y"}
MAX_LINES = 20
"""Problems listed one per line; beyond this many the rest are counted."""

MACRODATA_LABELS = {
    "unemp": "the U.S. civilian unemployment rate (quarterly average, seasonally adjusted)",
    "infl": "U.S. CPI inflation (annualized quarter-over-quarter rate)",
}


def macrodata() -> pd.DataFrame:
    """US quarterly unemployment and CPI inflation 1959–2009 from statsmodels' bundled macrodata."""
    import statsmodels.api as sm

    data = sm.datasets.macrodata.load_pandas().data
    dates = pd.PeriodIndex.from_fields(year=data["year"].astype(int), quarter=data["quarter"].astype(int),
                                       freq="Q").start_time
    frames = []
    for name, label in MACRODATA_LABELS.items():
        part = pd.DataFrame({"series": name, "date": dates, "value": data[name].astype(float), "label": label,
                             "unit": "percent"})
        frames.append(part.iloc[1:] if name == "infl" else part)
    return pd.concat(frames, ignore_index=True)


def _frequency(days: np.ndarray) -> str | None:
    """The frequency from the median spacing of consecutive dates in days."""
    median = float(np.median(days))
    for name, (low, high) in {"day": (1, 1), "week": (7, 7), "month": (28, 31), "quarter": (89, 92),
                              "year": (365, 366)}.items():
        if low <= median <= high:
            return name
    return None


def _problem_lines(problems: list[str], path: str) -> str:
    shown = problems[:MAX_LINES]
    more = len(problems) - len(shown)
    return "\n".join([f"series file {path}: {len(problems)} problem(s)"] + [f"  {p}" for p in shown]
                     + ([f"  ... and {more} more"] if more > 0 else []))


def validate(raw: pd.DataFrame, default_unit: str, path: str = "<series>") -> pd.DataFrame:
    """The checked series table: series, date (period start), value, label, unit, frequency, period."""
    missing = [c for c in ("series", "date", "value") if c not in raw.columns]
    if missing:
        raise InputDataError(f"series file {path} lacks column(s) {missing}; it needs series, date, value "
                             "(optional label, unit), e.g. a row `unemp,1975-04-01,8.9`")
    frame = pd.DataFrame({"line": np.arange(len(raw)) + 2, "series": raw["series"].astype(str).str.strip()})
    text = raw["value"].astype(str).str.strip()
    frame["value"] = pd.to_numeric(text.where(~text.str.lower().isin(MISSING_TOKENS)), errors="coerce")
    frame["date"] = pd.to_datetime(raw["date"].astype(str).str.strip(), errors="coerce", format="mixed")
    frame["label"] = raw["label"].astype(str).str.strip() if "label" in raw else ""
    frame["label"] = frame["label"].where(frame["label"] != "", frame["series"])
    frame["unit"] = raw["unit"].astype(str).str.strip() if "unit" in raw else default_unit
    problems: list[str] = []
    for row in frame.itertuples():
        original = raw.iloc[row.Index]
        if pd.isna(row.date):
            problems.append(f"line {row.line}: date {original['date']!r} is not a date (e.g. 1975-04-01)")
        if pd.isna(row.value):
            what = "missing (a gap)" if text.iloc[row.Index].lower() in MISSING_TOKENS else "not a number"
            problems.append(f"line {row.line}: value {original['value']!r} of series {row.series} is {what}; "
                            "values are plain numbers (e.g. 8.9)")
        if row.unit not in UNITS:
            problems.append(f"line {row.line}: unit {row.unit!r} is not a known unit; use one of {list(UNITS)}")
    good = frame.dropna(subset=["date"])
    out = []
    for name, part in good.groupby("series", sort=False):
        part = part.sort_values("date", kind="stable")
        for column in ("label", "unit"):
            if part[column].nunique() > 1:
                first, other = part.drop_duplicates(column).iloc[:2].itertuples()
                problems.append(f"line {other.line}: series {name} has {column} {getattr(other, column)!r} but "
                                f"{getattr(first, column)!r} on line {first.line}; one {column} per series")
        unique_days = np.diff(part["date"].drop_duplicates().to_numpy()).astype("timedelta64[D]").astype(int)
        frequency = _frequency(unique_days) if len(unique_days) else "day"
        if frequency is None:
            problems.append(f"line {part['line'].iloc[0]}: series {name} has no regular frequency (median spacing "
                            f"{float(np.median(unique_days)):g} days; use daily, weekly, monthly, quarterly or "
                            "yearly dates)")
            continue
        period = part["date"].dt.to_period(FREQUENCIES[frequency])
        duplicated = period.duplicated(keep="first")
        for line, when in zip(part.loc[duplicated.to_numpy(), "line"], period[duplicated]):
            first = part.loc[(period == when).to_numpy(), "line"].iloc[0]
            problems.append(f"line {line}: duplicate {frequency} {when} for series {name} (first on line {first})")
        ordinal = period[~duplicated].map(lambda p: p.ordinal).to_numpy()
        lines = part.loc[(~duplicated).to_numpy(), "line"].to_numpy()
        for k in np.nonzero(np.diff(ordinal) > 1)[0]:
            gap_start = period[~duplicated].iloc[k] + 1
            problems.append(f"line {lines[k + 1]}: gap in series {name}: {gap_start} is missing before "
                            f"{period[~duplicated].iloc[k + 1]} (one value per {frequency}, no gaps)")
        kept = part.loc[(~duplicated).to_numpy()].copy()
        kept["frequency"] = frequency
        kept["period"] = period[~duplicated].astype(str).to_numpy()
        kept["date"] = period[~duplicated].dt.start_time.to_numpy()
        out.append(kept)
    if problems:
        raise InputDataError(_problem_lines(problems, path))
    result = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=[*COLUMNS, "frequency", "period"])
    return result[["series", "date", "period", "value", "label", "unit", "frequency"]]


def load(leak: LeakConfig) -> pd.DataFrame:
    """The configured series, validated, restricted to `[leak] series`."""
    if leak.path:
        table = validate(read_table(leak.path), leak.default_unit, leak.path)
    else:
        table = validate(macrodata().astype({"date": str, "value": str}), leak.default_unit, "statsmodels macrodata")
    if leak.series:
        unknown = [s for s in leak.series if s not in set(table["series"])]
        if unknown:
            raise ConfigError(f"[leak] series lists {unknown}, not in the series file; it has "
                              f"{sorted(set(table['series']))}")
        table = table[table["series"].isin(leak.series)]
    if table.empty:
        raise InputDataError("the series file has no rows")
    return table.reset_index(drop=True)


def window(table: pd.DataFrame, cutoff: dt.date) -> pd.Series:
    """"pre" when the whole period ends on or before the cutoff, else "holdout" (App. I: after the cutoff)."""
    end = [pd.Period(p, freq=FREQUENCIES[f]).end_time.date() for p, f in zip(table["period"], table["frequency"])]
    return pd.Series(np.where(np.array(end) <= cutoff, "pre", "holdout"), index=table.index)


def human_date(date: pd.Timestamp, frequency: str) -> str:
    """The date as a prompt names it: "March 2020", "the second quarter of 1975", "1975", "3 March 2020"."""
    if frequency == "quarter":
        ordinal = ("first", "second", "third", "fourth")[(date.month - 1) // 3]
        return f"the {ordinal} quarter of {date.year}"
    if frequency == "month":
        return f"{date:%B %Y}"
    if frequency == "year":
        return str(date.year)
    if frequency == "week":
        return f"the week of {date.day} {date:%B %Y}"
    return f"{date.day} {date:%B %Y}"


def sample_dates(table: pd.DataFrame, leak: LeakConfig, cutoff: dt.date) -> pd.DataFrame:
    """The probed (series, date) rows with their window: `[leak] dates` when given (each must be a date of every
    series), else `n_dates` per window drawn without replacement (numpy's generator seeded by (seed, window))
    from the dates all probed series share, so sibling series are asked about the same dates; series with no
    date in common are sampled one by one."""
    table = table.assign(window=window(table, cutoff))
    if leak.dates:
        wanted = pd.to_datetime(list(leak.dates))
        rows = []
        for name, part in table.groupby("series", sort=False):
            periods = pd.Series(part["date"].dt.to_period(FREQUENCIES[part["frequency"].iloc[0]]).to_numpy())
            seen: dict = {}
            for index, when in enumerate(wanted):
                period = when.to_period(FREQUENCIES[part["frequency"].iloc[0]])
                if period in seen:  # the same period asked twice would count twice in every metric
                    raise InputDataError(
                        f"[leak] dates[{index}] = {leak.dates[index]} is in the same {part['frequency'].iloc[0]} "
                        f"{period} of series {name} as dates[{seen[period]}] = {leak.dates[seen[period]]}; list "
                        "each period once (e.g. dates = [\"1975-04-01\", \"1975-07-01\"])")
                seen[period] = index
                match = part[(periods == period).to_numpy()]
                if match.empty:
                    raise InputDataError(
                        f"[leak] dates[{index}] = {leak.dates[index]} is outside series {name}, which has "
                        f"{part['period'].iloc[0]} to {part['period'].iloc[-1]} (every probed date must be a "
                        "date of every probed series)")
                rows.append(match)
        sampled = pd.concat(rows)
    else:
        parts = []
        for label, in_window in table.groupby("window", sort=False):
            by_series = [set(part["date"]) for _, part in in_window.groupby("series")]
            common = sorted(set.intersection(*by_series))
            generator = np.random.default_rng([leak.seed, 0 if label == "pre" else 1])
            if common:  # sibling series share their dates (selectivity, transmission)
                chosen = [common[i] for i in np.sort(generator.choice(len(common), min(leak.n_dates, len(common)),
                                                                      replace=False))]
                parts.append(in_window[in_window["date"].isin(chosen)])
                continue
            for _, part in in_window.groupby("series", sort=False):
                take = min(leak.n_dates, len(part))
                parts.append(part.iloc[np.sort(generator.choice(len(part), size=take, replace=False))])
        sampled = pd.concat(parts)
    return sampled.sort_values(["series", "date"], kind="stable").reset_index(drop=True)


def read_signal(path: str) -> pd.DataFrame:
    """A user signal for leak attribution (App. N): columns date, signal (numbers)."""
    raw = read_table(Path(path))
    missing = [c for c in ("date", "signal") if c not in raw.columns]
    if missing:
        raise InputDataError(f"signal file {path} lacks column(s) {missing}; it needs date, signal")
    frame = pd.DataFrame({"date": pd.to_datetime(raw["date"].astype(str), errors="coerce", format="mixed"),
                          "signal": pd.to_numeric(raw["signal"].astype(str), errors="coerce")})
    bad = [f"line {i + 2}: date {raw['date'].iloc[i]!r} or signal {raw['signal'].iloc[i]!r} is not readable"
           for i in np.nonzero(frame.isna().any(axis=1).to_numpy())[0]]
    if bad:
        raise InputDataError(_problem_lines(bad, path))
    return frame
