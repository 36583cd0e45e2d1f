"""Replies collected elsewhere, scored without querying a model (`lapbias leak CONFIG --replies FILE`): the logs
of any API, or a paper's released replies, go through the same parser, metrics, tables, figures and report.

The file is JSON Lines (.jsonl, one object per line) or CSV (.csv, a header row), one row per query
(docs/leak.md, "Replies collected elsewhere"):
  series     the series asked about, as the series file names it (empty for the transmission prompt)
  date       the probed date, as the series file's dates: ISO (YYYY-MM-DD or YYYY-MM) unless
             `[leak] date_format` names the format; the row stands for the period that holds it
  variant    A, B, C, D, E, fabricated_series, fabricated_fund or transmission (App. O)
  prompt     the text that was asked (kept in the probe panel for the audit trail)
  reply      the model's reply ("" for an empty one)
optional:
  model      the model that replied; a file of several models is scored one model at a time (--model)
  truth      the published value; else it is read from the series file (`[leak] path`); the value variants
             need one of the two
  date2      Variant C: the second date the prompt names (`date` is the first); truth2 its value
  draw       the repeat number of the same query (Variant E's draws; 0 when absent); two rows with the same
             series, variant, period(s) and draw are refused as duplicates
  truncated  true when the reply ended at the answer-length limit (parse.py rule 5; the share is reported)
  unit, frequency   for a series not in the series file (else the file's): the unit defaults to `[leak]
             default_unit, the frequency to month for a date written YYYY-MM and must be given otherwise
Other columns are ignored (the report names them). Every bad row is named on its own line with its file line
number, the rule and an example, up to 20 lines.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..config import FREQUENCIES as FREQUENCY_NAMES
from ..data.validate import read_table
from ..errors import InputDataError
from .config import UNITS, VARIANTS, LeakConfig
from .probes import Item
from .probes.base import date_words
from .series import FREQUENCIES, MAX_LINES, date_problem, parse_dates, window

REQUIRED = ("series", "date", "variant", "prompt", "reply")
OPTIONAL = ("model", "truth", "date2", "truth2", "draw", "truncated", "unit", "frequency")
TRUE, FALSE = {"true", "1", "yes", "1.0"}, {"false", "0", "no", "0.0", ""}
VALUE_VARIANTS = ("A", "B", "D", "E")
MONTH = re.compile(r"\d{4}-\d{2}")


def _problems(path, problems: list[str]) -> InputDataError:
    shown = problems[:MAX_LINES]
    more = len(problems) - len(shown)
    return InputDataError("\n".join([f"replies file {path}: {len(problems)} problem(s)"] + [f"  {p}" for p in shown]
                                    + ([f"  ... and {more} more"] if more > 0 else [])))


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows, problems = [], []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise InputDataError(f"replies file {path} is not UTF-8 text (byte {err.object[err.start:err.start + 1]!r} "
                             f"at offset {err.start}); save it as UTF-8") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {number}: not JSON ({err.msg} at column {err.colno}); one object per line, e.g. "
                            '{"series": "unemp", "date": "1975-04-01", "variant": "A", "prompt": "...", '
                            '"reply": "8.9"}')
            continue
        if not isinstance(value, dict):
            problems.append(f"line {number}: a JSON {type(value).__name__}, not an object; one object per line")
            continue
        missing = [c for c in REQUIRED if c not in value]
        if missing:
            problems.append(f"line {number}: lacks {missing}; every line needs {list(REQUIRED)}")
            continue
        rows.append({**value, "line": number})
    if problems:
        raise _problems(path, problems)
    if not rows:
        raise InputDataError(f"replies file {path} has no replies")
    return pd.DataFrame(rows, dtype=object)  # values as written (an int stays an int)


def read(path: str | Path) -> pd.DataFrame:
    """The file's rows as given, with `line` (the file line: CSV's header is line 1)."""
    path = Path(path)
    if not path.is_file():
        raise InputDataError(f"replies file {str(path)!r} does not exist or is not a file (--replies)")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return _read_jsonl(path)
    if path.suffix.lower() not in (".csv", ".parquet", ".pq"):
        raise InputDataError(f"replies file {path} has extension {path.suffix!r}; give a .jsonl or .csv file")
    try:
        frame = read_table(path)
    except InputDataError as err:  # read_table names every file a "data file"
        raise InputDataError(str(err).replace("data file", "replies file", 1)) from None
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputDataError(f"replies file {path} lacks column(s) {missing}; it needs {', '.join(REQUIRED)} "
                             f"(optional {', '.join(OPTIONAL)})")
    return frame.assign(line=_csv_lines(path, len(frame)) if path.suffix.lower() == ".csv"
                        else np.arange(len(frame)) + 2)


def _csv_lines(path: Path, rows: int) -> np.ndarray:
    """The file line each CSV record starts on (the header is line 1). A quoted reply may span several lines (a
    narrative reply usually does), so the record number is not the line number; blank lines are skipped, as pandas
    skips them. Python's csv module counts the lines (pandas does not report them)."""
    starts, end = [], 0
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        for record in reader:
            if record:
                starts.append(end + 1)
            end = reader.line_num
    starts = starts[1:]
    return np.array(starts) if len(starts) == rows else np.arange(rows) + 2


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).strip()


def _number(value) -> float | None:
    """A finite number, NaN for an empty cell, None when the cell is not a number."""
    if isinstance(value, bool):
        return None
    text = _text(value)
    if not text:
        return math.nan
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def select_model(frame: pd.DataFrame, model: str | None, path) -> tuple[pd.DataFrame, str]:
    """The rows of one model (--model, or the file's only one) and its name ("" when the file names none)."""
    names = sorted({_text(m) for m in frame["model"]} - {""}) if "model" in frame else []
    if model is not None:
        if model not in names:
            raise InputDataError(f"--model {model} is not in replies file {path}; it has "
                                 f"{names if names else 'no model column'}")
        return frame[frame["model"].map(_text) == model], model
    if len(names) > 1:
        raise InputDataError(f"replies file {path} holds replies of {len(names)} models {names}; score one at a "
                             f"time with --model (e.g. --model {names[0]})")
    return frame, names[0] if names else ""


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def items_of(frame: pd.DataFrame, table: pd.DataFrame, leak: LeakConfig, cutoff: dt.date,
             path) -> tuple[list[Item], list[dict], list[str]]:
    """(items, replies, notes): one probe item and its reply per row, scored like the model's own replies; the
    truth from the row or the series file; every bad row named (module docstring)."""
    problems: list[str] = []
    info = {name: part.iloc[0] for name, part in table.groupby("series")}
    values = {(row.series, row.period): float(row.value) for row in table.itertuples()}
    famous = pd.to_datetime(list(leak.famous_dates))
    dates = list(parse_dates(frame["date"], leak.date_format))
    dates2 = list(parse_dates(frame["date2"], leak.date_format)) if "date2" in frame else [pd.NaT] * len(frame)
    items, replies, seen = [], [], {}
    differ = 0
    known: dict[tuple[str, str], tuple] = {}

    def facts(period: pd.Period, frequency: str) -> tuple:
        """(start, window, date words, famous) of a period, worked out once per period: a file repeats few periods
        over many rows."""
        key = (str(period), frequency)
        if key not in known:
            place = pd.DataFrame({"period": [key[0]], "frequency": [frequency]})
            words = date_words(SimpleNamespace(date=period.start_time, period=key[0], frequency=frequency))
            known[key] = (period.start_time, str(window(place, cutoff).iloc[0]), words,
                          bool(len(famous)) and period in set(famous.to_period(FREQUENCIES[frequency])))
        return known[key]

    for i, row in enumerate(frame.to_dict("records")):
        where = f"line {row['line']}:"
        before = len(problems)
        variant, name = _text(row["variant"]), _text(row["series"])
        if variant not in VARIANTS:
            problems.append(f"{where} variant {_text(row['variant'])!r} is not a probe variant; use one of "
                            f"{', '.join(VARIANTS)}")
            continue
        if variant == "transmission":
            name = ""
        elif not name:
            problems.append(f"{where} series is empty; name the series asked about (e.g. unemp)")
        date = dates[i]
        if pd.isna(date):
            empty = "null" if row["date"] is None else "empty" if not _text(row["date"]) else ""
            problems.append(f"{where} date is missing ({empty}); give the probed date, e.g. 1975-04-01" if empty
                            else f"{where} {date_problem(row['date'], leak.date_format)}")
            continue
        frequency, unit = _text(row.get("frequency")), _text(row.get("unit"))
        if name in info:
            if frequency and frequency != info[name].frequency:
                problems.append(f"{where} frequency {frequency!r} but series {name} is {info[name].frequency}ly in "
                                "the series file")
            frequency, unit, label = info[name].frequency, info[name].unit, info[name].label
        else:
            label = name
            unit = unit or leak.default_unit
            if not frequency and MONTH.fullmatch(_text(row["date"])):
                frequency = "month"
            if frequency not in FREQUENCY_NAMES:
                problems.append(f"{where} series {name!r} is not in the series file, so its frequency is needed: give "
                                f"a frequency column ({', '.join(FREQUENCY_NAMES)})" if not frequency else
                                f"{where} frequency {frequency!r} is not one of {', '.join(FREQUENCY_NAMES)}")
            if unit not in UNITS:
                problems.append(f"{where} unit {unit!r} is not one of {', '.join(UNITS)}")
        truth, truth2, draw = _number(row.get("truth")), _number(row.get("truth2")), _number(row.get("draw"))
        for column, number in (("truth", truth), ("truth2", truth2)):
            if number is None:
                problems.append(f"{where} {column} {_text(row.get(column))!r} is not a finite number (e.g. 8.9)")
        if draw is None or (not math.isnan(draw) and (draw < 0 or draw != int(draw))):
            problems.append(f"{where} draw {_text(row.get('draw'))!r} is not a whole number 0 or more")
        flag = _text(row.get("truncated")).lower()
        if flag not in TRUE | FALSE:
            problems.append(f"{where} truncated {_text(row.get('truncated'))!r} is not true or false")
        if row.get("reply") is None:
            problems.append(f"{where} reply is missing (null); leave out queries that got no reply, or give \"\" for "
                            "an empty one")
        if len(problems) > before:
            continue
        period = date.to_period(FREQUENCIES[frequency])
        if math.isnan(truth) and variant in VALUE_VARIANTS + ("C",):
            truth = values.get((name, str(period)), math.nan)
            if math.isnan(truth):
                problems.append(f"{where} no truth for series {name} at {period}: give a truth column or a series "
                                "file ([leak] path) that holds it")
                continue
        elif not math.isnan(truth) and abs(truth - values.get((name, str(period)), truth)) > 1e-9:
            differ += 1
        other, key_period2 = {}, ""
        if variant == "C":
            date2 = dates2[i]
            if pd.isna(date2):
                problems.append(f"{where} Variant C needs date2, the second date the prompt names ("
                                f"{date_problem(row.get('date2', ''), leak.date_format)})")
                continue
            period2 = date2.to_period(FREQUENCIES[frequency])
            if math.isnan(truth2):
                truth2 = values.get((name, str(period2)), math.nan)
            if math.isnan(truth2) or truth2 == truth:
                problems.append(f"{where} Variant C needs two different truths (truth2 or the series file) for "
                                f"{period} and {period2}")
                continue
            other = {"other_date": period2.start_time, "other_period": str(period2), "other_truth": truth2}
            key_period2 = str(period2)
            truth = 0.0 if truth > truth2 else 1.0
        key = (name, variant, str(period), key_period2, 0 if math.isnan(draw) else int(draw))
        if key in seen:
            problems.append(f"{where} repeats line {seen[key]} (series {name!r}, variant {variant}, {period}, draw "
                            f"{key[-1]}); number repeated queries with a draw column")
            continue
        seen[key] = row["line"]
        start, place, words, is_famous = facts(period, frequency)
        items.append(Item(variant, name, label, start, str(period), place, frequency, unit, truth,
                          _text(row["prompt"]), 0, words, temperature=1.0 if variant == "E" else 0.0, draw=key[-1],
                          other=other, famous=is_famous))
        replies.append({"text": str(row["reply"]) if not isinstance(row["reply"], str) else row["reply"],
                        "truncated": None if flag == "" else flag in TRUE})
    if problems:
        raise _problems(path, problems)
    extra = sorted(set(frame.columns) - set(REQUIRED) - set(OPTIONAL) - {"line"})
    notes = []
    if extra:
        notes.append(f"columns {extra} of the replies file were ignored")
    if differ:
        notes.append(f"{differ} replies carry a truth that differs from the series file; the replies' truth was used")
    return items, replies, notes
