"""Target dates derived from text dates on an exchange calendar ([data] target_date_from = "text_date").

For data with a text date but no realization date (e.g. `Firm, Date, Headline, Return next day`), target_date is
[study] horizon = "h trading days" after the text, counted in the sessions of the exchange calendar [study] calendar
(exchange-calendars: holidays, weekends and early closes of each exchange). The rule generalizes the paper's (Gao,
Jiang and Yan, "A Test of Lookahead Bias in LLM Forecasts", Section 3.3): "if a headline is published before 4 p.m.,
it is considered news on day t and will link it to the next-day stock return; otherwise, it is treated as news on
day t+1":

    news session = the first session whose close is after the text: the text's own day when that day is a session
                   and the text came before its close; the next session when the text came at or after the close
                   (an early close counts as the close), or on a weekend or holiday;
    target_date  = the session h sessions after the news session (h = 1: the next-day return of the news day).

A text with no time of day is dated at the start of its day on the exchange (before the close: on a session day, that
session is its news session), whatever [data] text_time_zone says: a date names a day of the exchange. A time with an
offset (2024-03-01T21:30:00Z, +01:00) is converted to the exchange's time zone; a time without one is read as the
exchange's local time (an hour that a daylight-saving change makes ambiguous is read as standard time; none is near a
close), or in [data] text_time_zone when it is set (e.g. "UTC" for RavenPack's TIMESTAMP_UTC).

text_date becomes the text's day on the exchange's clock (Derivation.day): 2024-03-05T02:00:00+09:00 is 12:00 on
Monday 4 March in New York, news of that session with target date Tuesday 5 March; kept as written (the 5th), the row
would break the protocol's rule target_date > text_date and be dropped. A date, or a time in the exchange's own zone,
keeps its date; the validation sample shows each text as written.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..config import StudyConfig, toml_value
from ..errors import InputDataError
from .cells import DATE_RANGE, ISO_DATE, is_missing, iso_times
from .derived import shown

CASES = {"before_close": "before the close", "after_close": "at or after the close",
         "closed_day": "on a weekend or holiday"}
"""Where a text falls on the calendar, in the order the validation summary counts them."""
END_MARGIN_DAYS = 60
"""Calendar days loaded past the last text, beyond two per horizon session; more are loaded when a closure (e.g.
the NYSE's in 1914) puts a target date further out."""
SPAN = pd.Timedelta(days=30)
"""The shortest calendar loaded: texts all outside the days a calendar records are named against its first or last
month."""
LAST_DAY = pd.Timestamp("2262-04-10")
"""The last full day pandas' datetime64[ns] holds (a target date must fit it)."""
SAMPLE_ROWS = 5


@dataclass
class Derivation:
    target: pd.Series
    """target_date (datetime64[ns], midnight; NaT where the text date is missing or not a date)."""
    news: pd.Series
    """The news session of each row (datetime64[ns]; NaT with target)."""
    case: pd.Series
    """CASES key of each row (None where target is NaT)."""
    day: pd.Series
    """The text's day on the exchange's clock, the validated text_date (datetime64[ns], midnight; NaT with target)."""
    calendar: str
    sessions_ahead: int

    def summary(self, frame: pd.DataFrame, written: pd.Series) -> list[str]:
        """Print-ready lines: the rule, the count per case and a sample of derived dates (each case's first row,
        then the first rows), by the rows' row_id; `written` is text_date as the file has it."""
        counts = self.case.value_counts()
        plural = "s" if self.sessions_ahead != 1 else ""
        where = ", ".join(f"{CASES[c]}: {int(counts[c])}" for c in CASES if c in counts)
        lines = [f"target_date derived from text_date on the {self.calendar} calendar: {self.sessions_ahead} "
                 f"trading session{plural} after each text's news session (its own session if it came before the "
                 f"close, else the next one); texts {where}; e.g.:"]
        first = [self.case[self.case == c].index[0] for c in CASES if c in counts]
        for index in list(dict.fromkeys(first + list(self.case.dropna().index)))[:SAMPLE_ROWS]:
            news, target = self.news[index], self.target[index]
            value = written[index]
            value = value.isoformat(sep=" ") if isinstance(value, pd.Timestamp) else shown(value)
            lines.append(f"  row_id {frame.at[index, 'row_id']}: text_date {value} "
                         f"({CASES[self.case[index]]}, news session {news:%a %Y-%m-%d}) -> target_date "
                         f"{target:%a %Y-%m-%d}")
        return lines


def text_times(values: pd.Series, text_zone, exchange_zone) -> pd.Series:
    """Each text's moment in UTC (datetime64[ns, UTC]): ISO 8601 text (YYYY-MM-DD, optionally with a time and an
    offset) or date/datetime values, read by the module's rule (a date alone at midnight in `exchange_zone`, a time
    without an offset in `text_zone`); NaT where the value is missing or not such a date (validate reports those)."""
    out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns, UTC]")
    if pd.api.types.is_datetime64_any_dtype(values):
        local = values if getattr(values.dt, "tz", None) is not None else _localize(values, text_zone)
        return local.dt.tz_convert("UTC").astype("datetime64[ns, UTC]")
    text = values.where(~is_missing(values)).astype(str).str.strip()
    well_formed = text.str.match(ISO_DATE) & values.notna() & ~is_missing(values)
    text = iso_times(text)
    day = text.str[:10]
    well_formed &= (day >= f"{DATE_RANGE[0]:%Y-%m-%d}") & (day <= f"{DATE_RANGE[1]:%Y-%m-%d}")
    with_offset = well_formed & text.str.contains(r"(?:Z|[+-]\d{2}:?\d{2})$", regex=True)
    date_only = well_formed & (text.str.len() == 10)
    for rows, zone in ((well_formed & ~with_offset & ~date_only, text_zone), (date_only, exchange_zone)):
        if rows.any():
            out[rows] = _localize(pd.to_datetime(text[rows], format="ISO8601", errors="coerce"), zone
                                  ).dt.tz_convert("UTC")
    if with_offset.any():
        out[with_offset] = pd.to_datetime(text[with_offset], format="ISO8601", utc=True, errors="coerce")
    return out


def _localize(times: pd.Series, tz) -> pd.Series:
    """Naive times as the exchange's local time; an ambiguous hour (daylight saving ends) as standard time, a
    skipped one moved forward."""
    return times.dt.tz_localize(tz, ambiguous=np.zeros(len(times), dtype=bool), nonexistent="shift_forward")


def derive(values: pd.Series, study: StudyConfig, label: Callable[[Any], str], text_zone: str = "") -> Derivation:
    """target_date of each row from its text date `values` (the module's rule); `label(index)` names a row in an
    error ("row 3", "row_id r3"); `text_zone` ([data] text_time_zone) is the zone of times without an offset ("" = the
    exchange's). A text outside the years the calendar records (some, e.g. XSHG or XTKS, record holidays only from a
    year on; XHKG up to 2049) or whose target would lie past the last day pandas holds is a one-line InputDataError."""
    import exchange_calendars

    sessions_ahead = study.horizon_sessions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        default = exchange_calendars.get_calendar(study.calendar)
    low, tz = type(default).bound_min(), default.tz
    high = min(type(default).bound_max() or LAST_DAY, LAST_DAY)
    times = text_times(values, text_zone or tz, tz)
    known = times.notna()
    target = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    news_session, day = target.copy(), target.copy()
    case = pd.Series([None] * len(values), index=values.index, dtype=object)
    if not known.any():
        return Derivation(target, news_session, case, day, study.calendar, sessions_ahead)
    local_day = times[known].dt.tz_convert(tz).dt.tz_localize(None).dt.normalize()
    # the calendar spans the texts, clipped to the days it records and kept at least SPAN long, so that texts all
    # before (or after) those days still give a calendar to name them against
    start = min(local_day.min() - pd.Timedelta(days=7), high - SPAN)
    start = max(start, low) if low is not None else start
    margin = pd.Timedelta(days=2 * sessions_ahead + END_MARGIN_DAYS)
    while True:
        end = high if local_day.max() >= high - margin else max(local_day.max() + margin, min(start + SPAN, high))
        with warnings.catch_warnings():  # exchange-calendars 4.13 uses a Series.values that pandas 3.1 deprecates
            warnings.simplefilter("ignore", DeprecationWarning)
            calendar = exchange_calendars.get_calendar(study.calendar, start=start, end=end)
        closes = calendar.closes
        utc = closes.dt.tz_convert(None).to_numpy()
        news = utc.searchsorted(times[known].dt.tz_convert(None).to_numpy(), side="right")  # first close after it
        position = news + sessions_ahead
        beyond = position >= len(closes)
        if not beyond.any() or end >= high:
            break
        margin *= 4
    before = (local_day < calendar.first_session).to_numpy()
    if before.any() or beyond.any():
        bad = before if before.any() else beyond
        where = local_day.index[bad][0]
        limit = (f"before the first session it records ({calendar.first_session:%Y-%m-%d})" if before.any() else
                 f"{sessions_ahead} sessions after which is past the last session it records "
                 f"({calendar.last_session:%Y-%m-%d})")
        raise InputDataError(f"text_date: {int(bad.sum())} date(s) on which the {study.calendar} calendar cannot "
                             f"count [study] horizon = {toml_value(study.horizon)} (example {label(where)}: "
                             f"{shown(values[where])}, {limit}); drop those rows or give target dates as a column")
    sessions = closes.index
    target[known] = sessions[position].to_numpy()
    news_day = sessions[news]
    news_session[known] = news_day.to_numpy()
    day[known] = local_day.to_numpy()
    is_session = pd.Series(local_day.isin(sessions).to_numpy(), index=local_day.index)
    case[known] = np.where(news_day == local_day.to_numpy(), "before_close",
                           np.where(is_session, "after_close", "closed_day"))
    return Derivation(target, news_session, case, day, study.calendar, sessions_ahead)
