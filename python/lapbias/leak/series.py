"""Series input of the NumLeak audit: a user file or statsmodels' bundled macrodata, validated; dates sampled.

A series file (CSV or parquet) has one row per (series, date): `series`, `date`, `value`, and optionally
`label` (how a prompt names the series) and `unit` (one of config.UNITS). Rules, each broken row reported on
its own line (file line numbers: the header is line 1):
- every date parses: ISO (YYYY-MM-DD, or YYYY-MM for a month) unless `[leak] date_format` names the file's
  format; a day/month date such as 01/02/2020 is refused without it (it reads as 1 February or 2 January);
- every value is a number (no missing values: a missing value is a gap);
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
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.cells import MISSING_TOKENS
from ..data.validate import read_table
from ..errors import ConfigError, InputDataError
from .config import UNITS, LeakConfig, written

COLUMNS = ("series", "date", "value", "label", "unit")
FREQUENCIES = {"day": "D", "week": "W", "month": "M", "quarter": "Q", "year": "Y"}
MAX_LINES = 20
"""Problems listed one per line; beyond this many the rest are counted."""

ISO = re.compile(r"^\d{4}-\d{2}(?:-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?)?$")
"""ISO dates: YYYY-MM-DD (a time of day after it is allowed, as spreadsheets write it) or YYYY-MM."""
DAY_MONTH = re.compile(r"^\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}$")

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


def parse_dates(values: pd.Series, date_format: str = "") -> pd.Series:
    """Dates as Timestamps (NaT where a value is not a date): a datetime column as stored; text in ISO form, or in
    `date_format` when the config names one (ISO is accepted beside it)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.dt.tz_localize(None) if getattr(values.dt, "tz", None) is not None else values
    text = values.astype(str).str.strip()
    iso = text.where(text.str.match(ISO.pattern))
    parsed = pd.to_datetime(iso.str.slice(0, 10).where(iso.str.len() != 7, iso + "-01"), format="%Y-%m-%d",
                            errors="coerce")
    if date_format:
        parsed = parsed.fillna(pd.to_datetime(text, format=date_format, errors="coerce"))
    return parsed


def date_problem(value, date_format: str = "") -> str:
    """Why a date cell was not read (for one line of a file's problem list)."""
    text = str(value).strip()
    if DAY_MONTH.match(text) and not date_format:
        return (f"date {text!r} is not an ISO date (YYYY-MM-DD): a day/month date is ambiguous (01/02/2020 is "
                "1 February or 2 January); write ISO dates or name the order in the config, [leak] date_format = "
                "\"%d/%m/%Y\" (or \"%m/%d/%Y\")")
    wanted = f"in the format [leak] date_format = \"{date_format}\" or ISO" if date_format else \
        "an ISO date (YYYY-MM-DD, e.g. 1975-04-01)"
    return f"date {text!r} is not {wanted}"


def _frequency(days: np.ndarray) -> str | None:
    """The frequency from the median spacing of consecutive dates in days."""
    median = float(np.median(days))
    for name, (low, high) in {"day": (1, 1), "week": (7, 7), "month": (28, 31), "quarter": (89, 92),
                              "year": (365, 366)}.items():
        if low <= median <= high:
            return name
    return None


def _problem_lines(problems: list[str], path: str, what: str = "series file") -> str:
    shown = problems[:MAX_LINES]
    more = len(problems) - len(shown)
    return "\n".join([f"{what} {path}: {len(problems)} problem(s)"] + [f"  {p}" for p in shown]
                     + ([f"  ... and {more} more"] if more > 0 else []))


def validate(raw: pd.DataFrame, default_unit: str, path: str = "<series>", date_format: str = "") -> pd.DataFrame:
    """The checked series table: series, date (period start), value, label, unit, frequency, period."""
    missing = [c for c in ("series", "date", "value") if c not in raw.columns]
    if missing:
        raise InputDataError(f"series file {path} lacks column(s) {missing}; it needs series, date, value "
                             "(optional label, unit), e.g. a row `unemp,1975-04-01,8.9`")
    frame = pd.DataFrame({"line": np.arange(len(raw)) + 2, "series": raw["series"].astype(str).str.strip()})
    text = raw["value"].astype(str).str.strip()
    frame["value"] = pd.to_numeric(text.where(~text.str.lower().isin(MISSING_TOKENS)), errors="coerce")
    frame["date"] = parse_dates(raw["date"], date_format).to_numpy()
    frame["label"] = raw["label"].astype(str).str.strip() if "label" in raw else ""
    frame["label"] = frame["label"].where(frame["label"] != "", frame["series"])
    frame["unit"] = raw["unit"].astype(str).str.strip() if "unit" in raw else default_unit
    problems: list[str] = []
    for row in frame.itertuples():
        original = raw.iloc[row.Index]
        if pd.isna(row.date):
            problems.append(f"line {row.line}: {date_problem(original['date'], date_format)}")
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


def _read_file(path: str, key: str, what: str, fix: str) -> pd.DataFrame:
    """The file `[leak] key` names, read as the protocol reads a data file (data.validate.read_table); a path that is
    no file is refused naming the setting (read_table's own message names the protocol's [data] path)."""
    if not Path(path).is_file():
        where = "is a folder, not " + what if Path(path).is_dir() else what + " does not exist"
        raise InputDataError(f"[leak] {key} = {written(path)}: {where}; {fix}")
    return read_table(Path(path))


def load(leak: LeakConfig) -> pd.DataFrame:
    """The configured series, validated, restricted to `[leak] series`."""
    if leak.path:
        raw = _read_file(leak.path, "path", "the series file", "give the CSV or parquet file of the series (columns "
                         "series, date, value), or remove path to probe statsmodels' macrodata")
        table = validate(raw, leak.default_unit, leak.path, leak.date_format)
    else:
        table = validate(macrodata().astype({"value": str}), leak.default_unit, "statsmodels macrodata")
    if leak.series:
        unknown = [s for s in leak.series if s not in set(table["series"])]
        if unknown:
            raise ConfigError(f"[leak] series = {written(list(leak.series))}; {written(unknown[0])} is not in the "
                              f"series file, which has {written(sorted(set(table['series'])))}")
        table = table[table["series"].isin(leak.series)]
    if table.empty:
        raise InputDataError("the series file has no rows")
    return table.reset_index(drop=True)


def check_transmission(leak: LeakConfig, names) -> None:
    """`[leak] transmission_series` must be one of the probed series (the series file's, or a replies file's)."""
    if leak.transmission_series and leak.transmission_series not in set(names):
        raise ConfigError(f"[leak] transmission_series = {written(leak.transmission_series)} is not a probed series; "
                          f"name one of {written(sorted(set(names)))} (\"\" = the first)")


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


def _fixed_rows(table: pd.DataFrame, dates: tuple[str, ...], key: str) -> pd.DataFrame:
    """The rows of every series at each listed date's period (`[leak] dates` or `famous_dates`): a date outside a
    series, or two dates in the same period, is refused (the same period asked twice would count twice)."""
    wanted = pd.to_datetime(list(dates))
    rows = []
    for name, part in table.groupby("series", sort=False):
        frequency = part["frequency"].iloc[0]
        periods = pd.Series(part["date"].dt.to_period(FREQUENCIES[frequency]).to_numpy())
        seen: dict = {}
        for index, when in enumerate(wanted):
            period = when.to_period(FREQUENCIES[frequency])
            if period in seen:
                raise InputDataError(
                    f"[leak] {key}[{index}] = {dates[index]} is in the same {frequency} {period} of series {name} as "
                    f"{key}[{seen[period]}] = {dates[seen[period]]}; list each period once (e.g. {key} = "
                    "[\"1975-04-01\", \"1975-07-01\"])")
            seen[period] = index
            match = part[(periods == period).to_numpy()]
            if match.empty:
                raise InputDataError(
                    f"[leak] {key}[{index}] = {dates[index]} is outside series {name}, which has "
                    f"{part['period'].iloc[0]} to {part['period'].iloc[-1]} (every listed date must be a date of "
                    "every probed series)")
            rows.append(match)
    return pd.concat(rows)


def sample_dates(table: pd.DataFrame, leak: LeakConfig, cutoff: dt.date) -> pd.DataFrame:
    """The probed (series, date) rows with their window and `famous` flag: `[leak] dates` when given (each must be
    a date of every series), else `n_dates` per window drawn without replacement (numpy's generator seeded by
    (seed, window)) from the dates all probed series share, so sibling series are asked about the same dates;
    series with no date in common are sampled one by one. The `famous_dates` periods are probed as well (§2's
    temporal control: famous periods against the others)."""
    table = table.assign(window=window(table, cutoff))
    if leak.dates:
        sampled = _fixed_rows(table, leak.dates, "dates")
    else:
        parts = []
        for label, in_window in table.groupby("window", sort=False):
            by_series = [set(part["date"]) for _, part in in_window.groupby("series")]
            common = sorted(set.intersection(*by_series))
            generator = np.random.default_rng([leak.seed, 0 if label == "pre" else 1])
            if common:  # sibling series share their dates (selectivity, transmission, the factor-shuffle null)
                chosen = [common[i] for i in np.sort(generator.choice(len(common), min(leak.n_dates, len(common)),
                                                                      replace=False))]
                parts.append(in_window[in_window["date"].isin(chosen)])
                continue
            for _, part in in_window.groupby("series", sort=False):
                take = min(leak.n_dates, len(part))
                parts.append(part.iloc[np.sort(generator.choice(len(part), size=take, replace=False))])
        sampled = pd.concat(parts)
    famous = _fixed_rows(table, leak.famous_dates, "famous_dates") if leak.famous_dates else table.iloc[:0]
    sampled = pd.concat([sampled, famous]).drop_duplicates(["series", "period"])
    sampled["famous"] = sampled.set_index(["series", "period"]).index.isin(
        famous.set_index(["series", "period"]).index)
    return sampled.sort_values(["series", "date"], kind="stable").reset_index(drop=True)


def read_signal(path: str, date_format: str = "") -> pd.DataFrame:
    """A user signal for leak attribution (App. N), `[leak] signal_path`: columns date (as the series file's dates)
    and signal (finite numbers), each bad cell named on its own line; a path that is no file is refused naming the
    setting."""
    raw = _read_file(path, "signal_path", "the signal file", "give the CSV or parquet file of the signal (columns "
                     "date, signal), or remove signal_path to attribute the transmission prompt")
    missing = [c for c in ("date", "signal") if c not in raw.columns]
    if missing:
        raise InputDataError(f"signal file {path} lacks column(s) {missing}; it needs date, signal")
    frame = pd.DataFrame({"date": parse_dates(raw["date"], date_format),
                          "signal": pd.to_numeric(raw["signal"].astype(str).str.strip(), errors="coerce")})
    bad = []
    for i in range(len(frame)):
        if pd.isna(frame["date"].iloc[i]):
            bad.append(f"line {i + 2}: {date_problem(raw['date'].iloc[i], date_format)}")
        if not np.isfinite(frame["signal"].iloc[i]):
            bad.append(f"line {i + 2}: signal {str(raw['signal'].iloc[i])!r} is not a finite number (e.g. 0.35)")
    if bad:
        raise InputDataError(_problem_lines(bad, path, "signal file"))
    return frame
