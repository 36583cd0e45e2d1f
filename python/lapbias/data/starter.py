"""`lapbias init DATA`: a commented starter TOML configuration for a data file (a new user's first step).

The column map is guessed from the file's header (header_map.guess) and shown with each column's type and first
values, read from the first PREVIEW_ROWS rows, so that a wrong guess is seen at once. With a text date and no
target-date column, the config derives target dates from [study] horizon on the [study] calendar ([data]
target_date_from, data/target_dates.py). The training cutoff is left as a TODO that `config.load` refuses until it
is a date (protocol "Before running" item 3: it cannot be guessed); with it set, the config runs as written. Every
text from the file reaches the TOML as a TOML string or inside a comment escaped (config.toml_value), so a header
name holding a quote, a backslash or a line break gives valid TOML.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import BUNDLED_MODEL, PROTOCOL_COLUMNS, ForecastConfig, toml_value
from ..errors import InputDataError, LapbiasError
from ..io import check_not_an_input, write_text
from .header_map import Guess, guess, normal, same_period_return
from .schema import REQUIRED
from .cells import ISO_DATE, is_missing
from .validate import read_user_table

CUTOFF_TODO = "TODO: YYYY-MM-DD, the training cutoff of the exact model version (model card)"
PREVIEW_ROWS = 100
"""Rows read to show each column's type and first values (the file is not read further)."""
SHOWN_VALUES = 3
SHOWN_CHARS = 28
DATE_ONLY = r"^\d{4}-\d{2}-\d{2}$"
YYYYMMDD = r"^(18|19|20|21)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$"
TIME_OF_DAY = r"^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?$"
"""A time of day without a date (RavenPack's RPNA_TIME_UTC "16:30:00.000")."""
PROMPT = ("Headline about {entity_name}{ticker} on {text_date}: {text}\n"
          "Will the stock price go up or down on the next trading day? Answer with one word: up or down.")
"""The starter forecast prompt (" ({ticker})" only when the file has a ticker column): to be replaced by the user's
production prompt, used verbatim (protocol Step 1)."""


@dataclass
class Column:
    """What init shows of a header column: its type, first values and the missing-value markers it holds."""
    kind: str
    values: str
    missing: str = ""


def _present(values: pd.Series) -> pd.Series:
    """The preview values that are not missing: empty cells and the markers validate reads as missing (cells.
    MISSING_TOKENS: NA, n/a, null, ., ...), so that one `NA` does not make a column of numbers text."""
    return values[~is_missing(values)] if len(values) else values


def column_kind(values: pd.Series) -> str:
    """The kind of a column's preview values, missing ones left out (_present): date, date-time, number, whole
    number, YYYYMMDD number, date not in YYYY-MM-DD, true/false, text or empty."""
    if pd.api.types.is_bool_dtype(values):
        return "true/false"
    if pd.api.types.is_datetime64_any_dtype(values):
        times = values.dropna()
        return "date" if (times == times.dt.normalize()).all() else "date-time"
    if pd.api.types.is_numeric_dtype(values):
        numbers = values.dropna()
        return "whole number" if (numbers == numbers.round()).all() else "number"
    text = _present(values.dropna().astype(str).str.strip())
    if text.empty:
        return "empty"
    if text.str.match(DATE_ONLY).all():
        return "date"
    if text.str.match(ISO_DATE).all():
        return "date-time"
    numbers = pd.to_numeric(text, errors="coerce")
    if numbers.notna().all():
        if text.str.match(YYYYMMDD).all():
            return "YYYYMMDD number"
        return "whole number" if (numbers == numbers.round()).all() else "number"
    if text.str.contains(r"\d").all() and pd.to_datetime(text, errors="coerce", format="mixed").notna().all():
        return "date not in YYYY-MM-DD"
    return "text"


HINTS = {
    ("outcome", "text"): "validate needs numbers here (the signed outcome, larger = up)",
    ("outcome", "empty"): "validate needs numbers here (the signed outcome, larger = up)",
    **{(role, kind): "validate reads dates as YYYY-MM-DD (a time of day may follow): convert this column"
       for role in ("text_date", "target_date")
       for kind in ("date not in YYYY-MM-DD", "YYYYMMDD number", "text", "number", "whole number", "empty")},
}


def checks(guesses: dict[str, Guess], described: dict[str, Column], frame: pd.DataFrame, derive: bool
           ) -> dict[str, str]:
    """Protocol column -> what to check in its guess ("" = nothing): what validate will say of a wrong-looking column
    (HINTS), and with target dates derived from the text date ([study] horizon = "1 trading day" and calendar =
    "XNYS" as init writes them) the timings that would pair a text with the return of another day: a same-period
    return as the outcome (CRSP's RET is the return on `date`, not on the next session), times of day in a column of
    their own (RavenPack's RPNA_TIME_UTC: the close rule then sees dates only), times without an offset (read in New
    York unless [data] text_time_zone says otherwise) and Compustat's datadate (the fiscal period's end; rdq is when
    the report was public)."""
    used = {g.column for g in guesses.values()}
    out = {}
    for name, found in guesses.items():
        if found.column is None:
            out[name] = ""
            continue
        kind = described[found.column].kind
        said = [HINTS[(name, kind)]] if (name, kind) in HINTS else []
        if name == "outcome" and kind == "text":
            said.append(_not_a_number(frame[found.column]))
        if name == "ticker" and _exchange_suffixes(frame[found.column]):
            example = _exchange_suffixes(frame[found.column])
            said.append(f"these look like RICs with an exchange suffix ({example}): the ticker enters the forecast and "
                        f"recall prompts as written (\"... ({example})\"); strip the suffix in the data file if the "
                        f"model should read {example.split('.')[0]}")
        if derive and name == "outcome" and same_period_return(found.column):
            said.append("a same-period return? target dates are derived 1 trading session after each text's news "
                        "session: the outcome must be the return on that target date "
                        f"({_shown_name(found.column)} led by the horizon)")
        time = next((c for c in frame.columns if c not in used and _times_of_day(frame[c])), None)
        if derive and name == "text_date" and kind == "date" and time is not None:
            pairs = frame[[found.column, time]].dropna().astype(str).apply(lambda c: c.str.strip())
            pairs = pairs[(pairs != "").all(axis=1)]
            example = f" ({pairs.iloc[0, 0]} {pairs.iloc[0, 1]})" if len(pairs) else ""
            zone = " and set [data] text_time_zone = \"UTC\"" if "utc" in normal(time).split("_") else ""
            said.append(f"the times of day are in column {_shown_name(time)}: the close rule sees only this date "
                        f"(each text counts as before its close); join them into one column{example}{zone}")
        if derive and name == "text_date" and kind == "date-time" and "utc" not in normal(found.column).split("_") \
                and not _offsets(frame[found.column]):
            said.append("times without an offset are read as New York time (the XNYS calendar's); if they are UTC or "
                        "in another zone, set [data] text_time_zone (e.g. \"UTC\")")
        if name == "text_date" and normal(found.column) == "datadate":
            said.append("Compustat's datadate is the fiscal period's end, not the day the text was public (the report "
                        "date rdq is)")
        out[name] = "; ".join(part for part in said if part)
    return out


RIC_SUFFIX = r"^[A-Z0-9]{1,6}\.[A-Z]{1,2}$"
"""A Refinitiv instrument code: a ticker and an exchange suffix (NKE.N, AAPL.OQ, VOD.L)."""


def _exchange_suffixes(values: pd.Series) -> str:
    """An example ticker when at least half of the preview's tickers carry an exchange suffix (RIC_SUFFIX; a few
    share classes such as BRK.B do not make a column of RICs), else ""."""
    text = _present(values.dropna().astype(str).str.strip())
    suffixed = text[text.str.match(RIC_SUFFIX)]
    return str(suffixed.iloc[0]) if len(text) and len(suffixed) >= len(text) / 2 else ""


def _not_a_number(values: pd.Series) -> str:
    """The first preview value that is neither missing nor a number, and its data row."""
    text = _present(values.dropna().astype(str).str.strip())
    bad = text[pd.to_numeric(text, errors="coerce").isna()]
    return f"{bad.iloc[0]!r} (row {int(bad.index[0]) + 1}) is not a number" if len(bad) else ""


def _offsets(values: pd.Series) -> bool:
    """Every preview time carries its zone: a datetime column with a time zone, or text ending in Z or +-HH:MM."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return getattr(values.dt, "tz", None) is not None
    text = values.dropna().astype(str).str.strip()
    text = text[text != ""]
    return bool(text.str.contains(r"(?:Z|[+-]\d{2}:?\d{2})$", regex=True).all())


def _times_of_day(values: pd.Series) -> bool:
    text = values.dropna().astype(str).str.strip()
    text = text[text != ""]
    return not text.empty and bool(text.str.match(TIME_OF_DAY).all())


def _cell(value, kind: str) -> str:
    """A preview value: text in double quotes (cut at SHOWN_CHARS, line breaks escaped), numbers and dates plain."""
    if isinstance(value, str) and kind not in ("text", "empty", "true/false"):
        return value.strip()
    if isinstance(value, str):
        cut = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS - 3] + "..."
        return json.dumps(cut, ensure_ascii=False)
    if isinstance(value, pd.Timestamp):
        return f"{value:%Y-%m-%d}" if value == value.normalize() else value.isoformat()
    return str(value.item() if hasattr(value, "item") else value)


def describe(frame: pd.DataFrame) -> dict[str, Column]:
    """Header column -> its kind and first non-empty values."""
    out = {}
    for column in frame.columns:
        values = frame[column]
        kind = column_kind(values)
        present = _present(values.dropna())
        shown = [v for v in present if not (isinstance(v, str) and not v.strip())][:SHOWN_VALUES]
        markers = values[is_missing(values) & values.notna()].astype(str).str.strip()
        markers = markers[markers != ""]
        missing = (f"{len(markers)} of {len(values)} read as missing: {', '.join(map(repr, markers.unique()[:3]))}"
                   if len(markers) else "")
        out[column] = Column(kind, ", ".join(_cell(v, kind) for v in shown), missing)
    return out


@dataclass
class Starter:
    """The config `init` writes and what it says about it."""
    text: str
    lines: list[str]


def build(data_path: str, target: Path) -> Starter:
    """The starter config for `data_path` and the lines `lapbias init` prints: the column map, each guess with its
    column's type and first values, and the next steps."""
    table = read_user_table(data_path, nrows=PREVIEW_ROWS)
    columns = [str(c) for c in table.frame.columns]
    empty = {str(c) for c in table.frame.columns if len(table.frame) and is_missing(table.frame[c].astype(str)).all()}
    guesses = guess(columns, empty)
    described = describe(table.frame)
    derive = guesses["target_date"].column is None and guesses["text_date"].column is not None
    utc = derive and "utc" in normal(guesses["text_date"].column).split("_") \
        and described[guesses["text_date"].column].kind == "date-time"
    check = checks(guesses, described, table.frame, derive)
    text = render(data_path, columns, guesses, described, derive, utc, check)
    lines = [f"wrote {target} for {data_path}; column map (protocol column <- your column: its type, first values):"]
    for name, found in guesses.items():
        lines.append(f"  {name:<12} <- {_mapping_line(name, found, described, derive, check[name])}")
    if utc:
        lines.append(f"  [data] text_time_zone = \"UTC\" written: the name {_shown_name(guesses['text_date'].column)} "
                     "says its times are UTC (change it in the config if they are not)")
    lines += table.notes()
    if empty:
        lines.append(f"  not guessed for any protocol column: {sorted(empty)}, empty in the first {PREVIEW_ROWS} rows")
    missing = [name for name, found in guesses.items() if found.column is None and name in REQUIRED
               and not (name == "target_date" and derive)]
    todo = f"name {', '.join(missing)} in [data.columns] of {target}, " if missing else ""
    lines.append(f"next: {todo}set [study] cutoff (the model's training cutoff) in {target} and check each guess and "
                 f"the [forecast] prompt; then `lapbias run {target} --yes` (or `lapbias validate {target}` first)")
    return Starter(text, lines)


def _mapping_line(name: str, found: Guess, described: dict[str, Column], derive: bool, hint: str) -> str:
    if found.column is None:
        if name == "target_date" and derive:
            return ("(derived from text_date: [study] horizon on the [study] calendar, [data] target_date_from = "
                    "\"text_date\")")
        if name == "row_id":
            return "(none: made from each row's content)"
        if name == "ticker":
            return "(none, optional: the recall query names the entity by entity_name)"
        if name == "target_date":
            return ("NOT FOUND (required): name your column in [data.columns], or derive it from text_date with "
                    "[data] target_date_from = \"text_date\"")
        return "NOT FOUND (required): name your column in [data.columns]"
    column = described[found.column]
    said = f"; {found.note}" if found.note else ""
    missing = f" ({column.missing})" if column.missing else ""
    return (f"{_shown_name(found.column)}: {column.kind}, {column.values or 'no values'}{missing}{said}"
            f"{f'  CHECK: {hint}' if hint else ''}")


def _shown_name(column: str) -> str:
    """A header name as printed: as written, or as a TOML string when it holds quotes, commas or control characters."""
    return column if re.fullmatch(r"[^\x00-\x1f\x7f\",]+", column) and column == column.strip() else toml_value(column)


def render(data_path: str, columns: list[str], guesses: dict[str, Guess], described: dict[str, Column],
           derive: bool, utc: bool, check: dict[str, str]) -> str:
    """The starter TOML: [data] path, column map and target dates, the cutoff TODO, the main options with defaults."""
    mapping = []
    for name in PROTOCOL_COLUMNS:
        found = guesses[name]
        if check.get(name):
            mapping.append(f"# CHECK {name}: {_comment(check[name])}")
        if found.column is None:
            if name == "target_date" and derive:
                mapping.append("# target_date: derived from text_date ([data] target_date_from above)")
            elif name not in REQUIRED:
                made = "; made from each row's content" if name == "row_id" else ""
                mapping.append(f"# {name}: no column found (optional{made})")
            else:
                derivable = (" (or, with a text_date column, set [data] target_date_from = \"text_date\")"
                             if name == "target_date" else "")
                mapping.append(f"# {name} = \"...\"   # TODO (required): no header column looks like {name}; name "
                               f"yours{derivable}")
        elif found.column == name:
            mapping.append(f"# {name}: found as is")
        else:
            column = described[found.column]
            why = found.note or f"guessed from the header: {column.kind}, e.g. {column.values or 'no values'}"
            mapping.append(f"{name} = {toml_value(found.column)}   # {_comment(why)}: check")
    data_lines = [f"path = {toml_value(data_path)}", f"# header: {_comment(', '.join(map(toml_value, columns)))}"]
    if derive:
        data_lines += [
            'target_date_from = "text_date"         # no target-date column: target_date = [study] horizon after each',
            "# text's news session on [study] calendar (before the close: that session; after it, or on a weekend or",
            "# holiday: the next one; README, \"Your own study\")"]
        if utc:
            data_lines.append('text_time_zone = "UTC"                # the text date column\'s name says UTC: its '
                              'times are UTC')
    ticker = " ({ticker})" if guesses["ticker"].column is not None else ""
    prompt = PROMPT.replace("{ticker}", ticker)
    return "\n".join([
        f"# lapbias run configuration for {_comment(data_path)}, written by `lapbias init`. Set the TODO cutoff and",
        "# check every line marked \"check\", then run `lapbias run THIS_FILE --yes`. Unknown keys are errors.",
        "root = \".\"                                # results/, data/derived/, data/raw/, logs/ go under this folder",
        "",
        "[data]",
        *data_lines,
        "",
        "[data.columns]",
        "# protocol column = your column (row_id and ticker are optional; the others are required)",
        *mapping,
        "",
        "[model]",
        "backend = \"transformers\"                  # transformers | vllm | openai (docs/backends.md)",
        f"model_id = {toml_value(BUNDLED_MODEL)}  # or a local HF model directory: the model you forecast with",
        "dtype = \"float32\"",
        "",
        "[study]",
        "# REQUIRED: the training cutoff of the exact frozen model version, from its model card. Every lapbias",
        "# command refuses this file until it is a date such as cutoff = 2024-06-30.",
        f"cutoff = {toml_value(CUTOFF_TODO)}",
        "# release_date = 2024-09-01               # optional: rows between cutoff and release belong to no sample",
        "horizon = \"1 trading day\"                 # h; with target_date_from: \"N trading days\" on the calendar",
        "calendar = \"XNYS\"                         # exchange-calendars code: XNYS, XLON, XTKS, ...",
        "frequency = \"day\"                         # time fixed effect's period: day | week | month | quarter | year",
        "outcome_description = \"the closing stock price\"   # fills the recall query (protocol Step 2)",
        "reference_period = \"the previous trading day\"",
        "",
        "[forecast]",
        "# TODO: your production prompt, parser and label map, used verbatim (protocol Step 1). Placeholders:",
        "# {text} {entity_name} {ticker} {text_date} {target_date} {entity_id}; write literal braces as {{ }}.",
        f'prompt = """{prompt}"""',
        "parse_regex = '\\b(up|down|increase|decrease|rise|fall)\\b'   # group 1, lower-cased, is looked up in labels",
        "labels = { up = 1, down = -1, increase = 1, decrease = -1, rise = 1, fall = -1 }",
        f"max_new_tokens = {ForecastConfig().max_new_tokens}                        # the longest answer, in tokens: a "
        "longer one is cut here, perhaps before",
        "# its label; raise it when your prompt's answers are longer (a sentence, a reason, a JSON object)",
        f"min_parse_rate = {ForecastConfig().min_parse_rate}                     # protocol Step 1: the run stops "
        "below this share of parsed answers",
        "# (checked on the first answers, before the rest are asked)",
        "",
        "[estimate]",
        "lap_measure = \"recall\"                    # recall: P(up) + P(down) | minkprob: Min-K% prob | minkpp | gapk "
        "| zlib | loss | ref",
        "engine = \"python\"                         # python | stata | auto",
        "# moderator = \"small\"                     # paper Table III: a 0/1 column of your data (e.g. a small-firm",
        "# indicator) interacted with mu_hat and LAP; Table III is skipped when the panel has no such column",
        "",
    ])


def _comment(text: str) -> str:
    """Text for a TOML comment: one line (a line break or other control character escaped as in TOML)."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: toml_value(m.group())[1:-1], text)


def init(data_path: str, output: str | None, force: bool) -> list[str]:
    """Write the starter config for `data_path` (to `output`, default DATA's name with .toml in the current folder)
    and return the lines to print; an existing config is kept unless `force`."""
    target = Path(output or f"{Path(data_path).stem}.toml")
    check_not_an_input(target, {"data file": data_path}, "--output")
    if target.exists() and not force:
        raise LapbiasError(f"{target} already exists; choose another --output or add --force to overwrite it")
    if not Path(data_path).is_file():
        raise InputDataError(f"data file {data_path} does not exist; give the path of your panel (.csv or .parquet)")
    starter = build(data_path, target)
    write_text(target, starter.text)
    return starter.lines
