"""Validate the user's panel before any query (protocol, "Input data format").

Errors stop the run (InputDataError, one line per problem, all problems at once): an unreadable or empty file,
a missing required column, an empty or duplicate row_id, unparseable dates, a non-numeric outcome. Rows breaking
a row rule are dropped and counted by reason (protocol: "Validate before querying: target_date > text_date on
every row, outcome numeric and non-missing, text non-empty. Drop failing rows and report the count"); a row
failing several rules is counted under the first in schema.DROP_RULES order. row_id is preserved through every
file; when absent, a deterministic one is made from the row's content.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import RunConfig
from ..errors import InputDataError
from ..io import Layout, write_csv, write_parquet, write_text
from ..stage import StaleResultsError, fingerprint
from . import schema, target_dates
from .cells import DATE_RANGE, ISO_DATE, MISSING_TOKENS, is_missing, unread_part
from .derived import shown

SAMPLE_SEED = 20240101
"""Default seed of the random subsample (`--sample N`; protocol Step 0: fixed seeds everywhere)."""
MAX_SEED = 2**32 - 1
"""The largest seed numpy's generator behind pandas' sample accepts (0 .. 2^32 - 1)."""
SOURCE_RECORD = "data_source.json"
"""Beside input.parquet: the data file `validate` read and its sha256 (compared by freshness.source_unchanged)."""


@dataclass
class ValidationResult:
    frame: pd.DataFrame
    dropped: pd.DataFrame
    """One row per drop reason: reason, column, rule, n_rows, example_row_id, example."""
    warnings: list[str] = field(default_factory=list)
    n_input: int = 0
    notes: list[str] = field(default_factory=list)

    def messages(self) -> list[str]:
        """Print-ready lines: one per drop reason, then the warnings."""
        lines = [f"dropped {r.n_rows} row{'s' if r.n_rows != 1 else ''}: {r.rule} "
                 f"(example row_id {r.example_row_id}: {r.example})" for r in self.dropped.itertuples()]
        lines += self.notes
        lines += [f"warning: {w}" for w in self.warnings]
        return lines


@dataclass
class UserTable:
    frame: pd.DataFrame
    ignored: list[int] = field(default_factory=list)
    """1-based numbers of the columns left out for an empty header cell over an empty column (_check_header)."""
    unnamed: list[tuple[int, str]] = field(default_factory=list)
    """(1-based number, an example value) of the columns left out for an empty header cell over values."""
    dialect: list[str] = field(default_factory=list)
    """How a CSV other than comma-separated was read (`Dialect.notes`)."""
    separator: str = ","

    def notes(self) -> list[str]:
        lines = list(self.dialect)
        if self.ignored:
            many = "s" if len(self.ignored) > 1 else ""
            lines.append(f"ignored {len(self.ignored)} column{many} with an empty header cell and no values "
                         f"(column{many} {', '.join(map(str, self.ignored))}: e.g. the empty cells Excel leaves after "
                         "the last column)")
        lines += [f"warning: ignored column {number}: it has no name in the header but holds values (e.g. {example}; "
                  "a saved pandas index?); give it a name in the header row to use it" for number, example in
                  self.unnamed]
        return lines


def read_table(path: str | Path) -> pd.DataFrame:
    """The user's file as strings (CSV) or as stored (parquet); unreadable or empty files are errors."""
    return read_user_table(path).frame


@dataclass
class Dialect:
    """How a CSV is written: its separator and whether its first line is Excel's `sep=X`."""
    separator: str = ","
    excel_line: bool = False

    def notes(self) -> list[str]:
        name = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "bars"}.get(self.separator, repr(self.separator))
        return [] if self.separator == "," and not self.excel_line else [
            f"read as separated by {name}" + (" (its first line, Excel's sep=, names the separator)"
                                              if self.excel_line else " (detected from its first lines)")]


SEPARATORS = (",", ";", "\t", "|")
"""The separators a CSV is read with (sniff_dialect), in order of preference on a tie: comma, then the semicolon of
European Excel, tab (a .tsv saved as .csv), bar."""
SNIFF_CHARACTERS = 1 << 16
DECIMAL_COMMA = re.compile(r"^[+-]?\d+(?:,\d+)?(?:[eE][+-]?\d+)?$")


def sniff_dialect(path: Path) -> Dialect:
    """The separator of a CSV, from its first SNIFF_CHARACTERS characters: Excel's `sep=X` first line when there
    is one, else, of SEPARATORS under which every complete row there has the header's number of fields (more than
    one), the one giving the most fields (a semicolon file with decimal commas splits evenly on commas too, into
    fewer fields; ties go to the earlier in SEPARATORS), else the one giving the header the most fields. Byte-order
    marks before the header are skipped.
    A file that is not UTF-8 is left to the reader's own message."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            sample = handle.read(SNIFF_CHARACTERS).lstrip("\ufeff")
    except (UnicodeDecodeError, OSError):
        return Dialect()
    first = sample.split("\n", 1)[0].rstrip("\r")
    excel = re.fullmatch(r'"?sep=(.)"?', first)
    if excel:
        return Dialect(excel.group(1), True)
    complete = sample if len(sample) < SNIFF_CHARACTERS else sample[:sample.rfind("\n") + 1]
    widths, consistent = {}, {}
    for separator in SEPARATORS:
        rows = [len(row) for row in csv.reader(io.StringIO(complete), delimiter=separator) if row]
        widths[separator] = rows[0] if rows else 0
        consistent[separator] = widths[separator] > 1 and all(n == rows[0] for n in rows)
    candidates = [s for s in SEPARATORS if consistent[s]] or list(SEPARATORS)
    best = max(candidates, key=lambda s: (widths[s], -SEPARATORS.index(s)))
    return Dialect(best if widths[best] > 1 else ",")


NOT_NUMBERS = ("row_id", "entity_id", "entity_name", "ticker", "text", "text_date", "target_date")
"""Protocol columns never read as numbers: an id 12345,1 or a headline "1,5" is text."""


def rewrite_decimal_commas(frame: pd.DataFrame, columns) -> list[str]:
    """Of `columns` of a semicolon-separated file (European Excel), those whose every filled cell is a number written
    with a decimal comma (at least one comma: 0,012; -1,5e-3) are rewritten in place with decimal points; returns
    their names. Ids and texts are never passed here (NOT_NUMBERS)."""
    rewritten = []
    for column in columns:
        values = frame[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue
        filled = values[~is_missing(values)].astype(str).str.strip()
        if len(filled) and filled.str.match(DECIMAL_COMMA).all() and filled.str.contains(",").any():
            frame[column] = values.astype(str).str.replace(",", ".", regex=False).where(values.notna(), values)
            rewritten.append(column)
    return rewritten


def read_user_table(path: str | Path, nrows: int | None = None) -> UserTable:
    """read_table, also saying which empty columns without a name were left out; `nrows` reads only the first rows
    (a preview: a file with a header and no rows is then no error). A CSV's separator is detected (sniff_dialect)
    and said; header cells are matched without surrounding spaces and byte-order marks."""
    path = Path(path)
    if not str(path) or not path.exists():
        raise InputDataError(f"data file {str(path)!r} does not exist ([data] path in the config)")
    suffix = path.suffix.lower()
    dialect = sniff_dialect(path) if suffix == ".csv" else Dialect()
    try:
        if suffix == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, nrows=nrows, sep=dialect.separator,
                                skiprows=1 if dialect.excel_line else 0, encoding="utf-8-sig")
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path) if nrows is None else _parquet_head(path, nrows)
        else:
            raise InputDataError(f"data file {path} has extension {suffix!r}; give a .csv or .parquet file")
    except pd.errors.EmptyDataError:
        raise InputDataError(f"data file {path} is empty") from None
    except UnicodeDecodeError:
        raise InputDataError(_not_utf8(path)) from None
    except (pd.errors.ParserError, OSError, ValueError) as err:
        raise InputDataError(f"data file {path} cannot be read as {suffix[1:]}: {str(err).splitlines()[0]}") from None
    if frame.empty and nrows is None:
        raise InputDataError(f"data file {path} has a header but no rows")
    table = _check_header(path, frame, dialect)
    table.dialect, table.separator = dialect.notes(), dialect.separator
    return table


def _parquet_head(path: Path, nrows: int) -> pd.DataFrame:
    """The first `nrows` rows of a parquet file, without reading the rest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(path)
    batch = next(handle.iter_batches(batch_size=max(nrows, 1)), None)
    table = pa.Table.from_batches([batch]) if batch is not None else handle.schema_arrow.empty_table()
    return table.to_pandas()


def _not_utf8(path: Path) -> str:
    """Where a CSV stops being UTF-8: its line and the byte (Excel's "CSV" is often Latin-1 or UTF-16)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
        where = ""
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        where = f" (line {line}: byte {data[err.start:err.start + 1]!r})"
    return (f"data file {path} cannot be read as csv: it is not UTF-8 text{where}; save it as UTF-8 (Excel: \"CSV UTF-8\"), the encoding "
            "lapbias reads")


def header_name(cell) -> str:
    """A header cell as a name: without surrounding spaces and byte-order marks (a file saved twice with a BOM)."""
    return str(cell).replace("\ufeff", "").strip()


def _check_header(path: Path, frame: pd.DataFrame, dialect: Dialect) -> UserTable:
    """Columns without a name (an empty or blank header cell) are left out: those empty throughout (the cells Excel
    writes after the last column) with a note, those holding values (e.g. a saved pandas index) with a warning naming
    the column and an example -- without a name, no setting can refer to them. Two columns of one name are refused
    (pandas would rename the second `outcome` to `outcome.1` and use the first silently). The CSV header is read as
    written to see both. Names are header_name's: "row_id " is row_id."""
    if path.suffix.lower() == ".csv":
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle, delimiter=dialect.separator)
            if dialect.excel_line:
                next(reader, None)
            header = next(reader, [])
    else:
        header = [str(c) for c in frame.columns]
    names = [header_name(h) for h in header]
    unnamed = [i for i, name in enumerate(names) if not name]
    if unnamed and len(names) != frame.shape[1]:
        raise InputDataError(f"data file {path} has {len(unnamed)} column(s) with an empty header cell (column(s) "
                             f"{', '.join(str(i + 1) for i in unnamed)}); give every column a name in the header row")
    empty, holding = [], []
    for i in unnamed:
        values = frame.iloc[:, i]
        filled = values.notna() & (values.astype(str).str.strip() != "")
        if filled.any():
            holding.append((i + 1, shown(values.iloc[int(filled.to_numpy().argmax())])))
        else:
            empty.append(i + 1)
    names = [name for name in names if name]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise InputDataError(f"data file {path} has duplicate column name(s) {duplicated}; every column needs its "
                             "own name (which one is meant cannot be guessed)")
    kept = frame.iloc[:, [i for i in range(frame.shape[1]) if i not in set(unnamed)]]
    kept.columns = [header_name(c) for c in kept.columns]
    return UserTable(kept, empty, holding)


def _apply_mapping(raw: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """Protocol columns taken from the user's columns by [data.columns]; one file column may feed two protocol
    columns (e.g. entity_id = "ticker": the ticker column is both). Other columns are kept as they are."""
    problems = []
    sources: dict[str, str] = {}
    derived_target = bool(config.data.target_date_from)
    if derived_target and "target_date" in raw.columns:
        raise InputDataError(f"the data file has a target_date column and [data] target_date_from = "
                             f"\"{config.data.target_date_from}\" derives target_date from [study] horizon; drop "
                             "target_date_from to use the column, or rename the column")
    for name in schema.REQUIRED + schema.OPTIONAL:
        column = config.data.column(name)
        if column in raw.columns:
            sources[name] = column
        elif name in schema.REQUIRED and not (derived_target and name == "target_date"):
            mapped = f" (mapped to {column!r} by [data.columns])" if column != name else ""
            problems.append(f"required column {name!r}{mapped} is missing; the file has columns {list(raw.columns)}")
    if problems:
        raise InputDataError("\n".join(problems))
    shadowed = [name for name, column in sources.items()
                if column != name and name in raw.columns and name not in sources.values()]
    if shadowed:
        raise InputDataError(f"column(s) {shadowed} exist in the file and are also the target of a [data.columns] "
                             "mapping; rename one of them")
    used = set(sources.values())
    extra = [c for c in raw.columns if c not in used and c not in sources]
    derived = [c for c in extra if c in schema.DERIVED]
    if derived:
        raise InputDataError(f"input column(s) {derived} have the name of a column lapbias derives (the forecast, "
                             "recall, LAP or panel columns of docs/contracts.md); rename them in the file, e.g. "
                             f"{derived[0]!r} -> 'user_{derived[0]}'")
    frame = pd.DataFrame({name: raw[column] for name, column in sources.items()})
    return pd.concat([frame, raw[extra]], axis=1)


def _label(frame: pd.DataFrame, index) -> str:
    row_id = frame.at[index, "row_id"] if "row_id" in frame.columns else None
    return f"row_id {row_id}" if row_id is not None and str(row_id).strip() else f"row {int(index) + 1}"


def _parse_dates(frame: pd.DataFrame, column: str, problems: list[str]) -> pd.Series:
    """Calendar dates as written (a time of day, and a time-zone offset with it, is dropped); ISO 8601 text
    YYYY-MM-DD or date/datetime values. Partial dates ("2024-02", "2024") and dates outside pandas' range
    (1677-09-22 .. 2262-04-11) are errors."""
    values = frame[column]
    missing = is_missing(values)
    if pd.api.types.is_datetime64_any_dtype(values):
        parsed = values.dt.tz_localize(None) if getattr(values.dt, "tz", None) is not None else values
        return parsed.dt.normalize().astype("datetime64[ns]")
    text = values.where(~missing).astype(str).str.strip()
    well_formed = text.str.match(ISO_DATE) & ~missing
    day = text.str[:10].where(well_formed)
    out_of_range = well_formed & ((day < f"{DATE_RANGE[0]:%Y-%m-%d}") | (day > f"{DATE_RANGE[1]:%Y-%m-%d}"))
    parsed = pd.to_datetime(day.where(~out_of_range), errors="coerce", format="%Y-%m-%d")
    bad = parsed.isna() & ~missing & ~out_of_range
    if bad.any():
        first = bad.idxmax()
        part = unread_part(values[first])
        unread = (f"; the part after the date, {part!r}, is not a time of day HH:MM[:SS] with an optional offset "
                  "(Z, +01:00, -05:00[America/New_York])" if part else "")
        problems.append(f"{column}: {int(bad.sum())} value(s) are not dates in YYYY-MM-DD form, a full calendar "
                        f"date (example {_label(frame, first)}: {shown(values[first])}){unread}")
    if out_of_range.any():
        first = out_of_range.idxmax()
        problems.append(f"{column}: {int(out_of_range.sum())} date(s) outside the supported range "
                        f"{DATE_RANGE[0]:%Y-%m-%d} to {DATE_RANGE[1]:%Y-%m-%d} (example {_label(frame, first)}: "
                        f"{shown(values[first])})")
    return parsed.astype("datetime64[ns]")


def _parse_outcome(frame: pd.DataFrame, problems: list[str]) -> pd.Series:
    values = frame["outcome"]
    if pd.api.types.is_bool_dtype(values) or values.map(lambda v: isinstance(v, (bool, np.bool_))).any():
        first = values.map(lambda v: isinstance(v, (bool, np.bool_))).idxmax()
        problems.append(f"outcome: true/false values are not a signed numeric Y (larger = up) (example "
                        f"{_label(frame, first)}: {shown(values[first])}); give the outcome as a number, e.g. the "
                        "return, or +1/-1 for up/down")
        return pd.Series(np.nan, index=frame.index)
    numbers, bad = _numbers(values)
    if bad.any():
        first = bad.idxmax()
        problems.append(f"outcome: {int(bad.sum())} value(s) are not finite numbers; the outcome must be a signed "
                        f"numeric Y (larger = up) (example {_label(frame, first)}: {values[first]!r})")
    far = _beyond_scale(numbers)
    if far.any():
        first = far.idxmax()
        problems.append(f"outcome: {int(far.sum())} value(s) lie more than {OUTCOME_Z_LIMIT:.0e} robust SDs from the "
                        f"median outcome, or beyond {OUTCOME_MAGNITUDE_LIMIT:.0e} (squares overflow): far beyond any "
                        "return, a value that would dominate or break the estimation (example "
                        f"{_label(frame, first)}: {numbers[first]:g}, median {numbers.median():g}); correct the value "
                        "or drop the row")
    return numbers


OUTCOME_Z_LIMIT = 1e6
"""Robust z (|y - median| / (1.4826 MAD), the SD when MAD is 0: mostly-zero outcomes) beyond which an outcome is a data
error: a daily return of 0.01 with MAD 0.01 would need a 1,000,000% move."""
OUTCOME_MAGNITUDE_LIMIT = 1e150
"""|outcome| beyond which its square, and the regressions' cross-products, overflow float64 (1e308)."""


def _beyond_scale(numbers: pd.Series) -> pd.Series:
    """Outcomes far beyond the scale of the others (OUTCOME_Z_LIMIT) or of float64 (OUTCOME_MAGNITUDE_LIMIT)."""
    far = numbers.abs() > OUTCOME_MAGNITUDE_LIMIT
    finite = numbers[np.isfinite(numbers)]
    if len(finite) >= 3:
        deviation = (finite - finite.median()).abs()
        spread = 1.4826 * deviation.median() or float(finite.std())
        if spread > 0:
            far |= (numbers - finite.median()).abs() / spread > OUTCOME_Z_LIMIT
    return far.fillna(False) & np.isfinite(numbers)  # a cell that is not a finite number has its own message


def _numbers(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(numbers, bad): a column's cells as float64, missing cells (is_missing) NaN; `bad` where a cell that is not
    missing is not a finite number."""
    missing = is_missing(values)
    numbers = pd.to_numeric(values.where(~missing), errors="coerce").astype("float64")
    return numbers, (numbers.isna() | ~np.isfinite(numbers.fillna(0.0))) & ~missing


def _parse_moderator(frame: pd.DataFrame, column: str, problems: list[str]) -> pd.Series:
    """The [estimate] moderator of paper Table III (eq. 8, e.g. a 0/1 small-firm indicator) as numbers; a CSV is read
    as text, so without this the triple interaction is never estimated. Missing cells stay missing (those rows leave
    Table III only); any other text is an error."""
    values = frame[column]
    numbers, bad = _numbers(values)
    if bad.any():
        first = bad.idxmax()
        problems.append(f"{column}: {int(bad.sum())} value(s) are not finite numbers; [estimate] moderator = "
                        f"\"{column}\" enters paper Table III's triple interaction as a number, e.g. 0/1 (example "
                        f"{_label(frame, first)}: {shown(values[first])}); fix the values or set [estimate] moderator "
                        "to another column")
    return numbers


def _row_ids(frame: pd.DataFrame, problems: list[str], written: pd.Series) -> pd.Series:
    """The user's row_id as text, or sha256(entity_id|text_date|target_date|text)[:12] when the column is absent.

    Our rule for repeated rows: rows agreeing on schema.DUPLICATE_KEY are one observation, kept once (the later ones
    are dropped with a note, `_repeats`), whatever their row_id. Two rows that are not one observation but share a
    row_id (the file's, or the one made from their content) are an error naming them, what differs between them and
    the fix: without a row_id column, rows agreeing on entity_id, text_date (its day: a time of day is not part of
    it; `written` shows the dates as written), target_date and text but not on the outcome cannot be told apart."""
    given = "row_id" in frame.columns
    if given:
        ids = frame["row_id"].astype(str).str.strip()
        empty = frame["row_id"].isna() | (ids == "")
        marker = is_missing(frame["row_id"]) & ~empty
        if empty.any():
            problems.append(f"row_id: {int(empty.sum())} row(s) have an empty row_id "
                            f"(example row {int(empty.idxmax()) + 1}); every row needs a unique row_id")
        if marker.any():
            first = marker.idxmax()
            problems.append(f"row_id: {int(marker.sum())} row(s) have a missing-value marker as row_id (example row "
                            f"{int(first) + 1}: {frame['row_id'][first]!r}; pandas and Stata read it back as "
                            "missing); give every row a real, unique identifier")
    else:
        # a missing date is "" (pandas' str of NaT is missing, not text): such a row is dropped, but needs an id
        material = (frame["entity_id"].astype(str) + "|" + frame["text_date"].astype(str).fillna("") + "|"
                    + frame["target_date"].astype(str).fillna("") + "|" + frame["text"].astype(str))
        ids = material.map(lambda s: "r" + hashlib.sha256(s.encode("utf-8")).hexdigest()[:12])
    dropped = pd.concat([mask for reason, mask in _drop_masks(frame).items() if reason != "duplicate_row"],
                        axis=1).any(axis=1)
    kept = ids[~_repeats(frame) & ~dropped & (ids != "")]  # a repeated observation is kept once; a dropped row is out
    clashing = kept[kept.duplicated(keep=False)]
    if clashing.empty:
        return ids
    groups = list(clashing.groupby(clashing, sort=False).groups.items())
    fix = _distinguishing_column(frame)
    if given:
        shown = "; ".join(f"{key!r} on rows {', '.join(str(int(i) + 1) for i in rows)}, which differ in "
                          f"{', '.join(_differences(frame, rows))}" for key, rows in groups[:3])
        problems.append(f"duplicate row_id: {len(groups)} value(s) name different rows, row_id must be unique "
                        f"({shown}); give each row its own row_id{fix}")
        return ids
    rows = groups[0][1]
    times = ", ".join(str(written[i]) for i in rows)
    outcomes = ", ".join(f"{frame.at[i, 'outcome']:g}" for i in rows)
    problems.append(f"{len(groups)} group(s) of rows share entity_id, text_date (the day), target_date and text but "
                    f"differ in outcome (e.g. rows {', '.join(str(int(i) + 1) for i in rows)}: text_date as written "
                    f"{times}; outcome {outcomes}): without a row_id column a row is known by those four, so these "
                    f"cannot be told apart. If they are different observations, give each row its own id{fix}; if "
                    "one of them is wrong, delete it")
    return ids


ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
"""Characters that print as nothing: a zero-width space pasted into an id makes it another id."""
NAMING_COLUMNS = ("entity_id", "entity_name", "ticker")


def _normal_name(value: str) -> str:
    """One way to write an id, name or ticker: Unicode NFC (SOCIÉTÉ typed or pasted as E + combining accent), no
    zero-width characters, every run of white space one space."""
    return re.sub(r"\s+", " ", ZERO_WIDTH.sub("", unicodedata.normalize("NFC", value))).strip()


def _normalise_names(frame: pd.DataFrame, problems: list[str], notes: list[str]) -> None:
    """Our rule for one firm, one entity: entity_id, entity_name and ticker are normalised (_normal_name; an
    entity_id that is an integer written as a float, 10107.0, is 10107), with a note giving how many cells changed
    and an example; ids that then differ only by case (MSFT, msft) are an error naming both forms -- one firm or
    two cannot be guessed. Each distinct value is normalised once (10^6 rows hold few ids)."""
    for column in NAMING_COLUMNS:
        before = frame[column]
        forms = {value: _normal_name(value) for value in before.unique()}
        if column == "entity_id":
            forms = {value: re.sub(r"^([+-]?\d+)\.0+$", r"\1", form) for value, form in forms.items()}
        after = before.map(forms)
        changed = before != after
        if changed.any():
            first = changed.idxmax()
            notes.append(f"{column}: {int(changed.sum())} value(s) normalised to one way of writing them (Unicode "
                         "NFC, no zero-width characters, single spaces"
                         + (", an integer id written as 10107.0 read as 10107" if column == "entity_id" else "")
                         + f"), e.g. {before[first]!r} -> {after[first]!r} ({_label(frame, first)})")
        frame[column] = after
    ids = frame.loc[frame["entity_id"] != "", "entity_id"]
    spellings = ids.groupby(ids.str.casefold()).unique()
    clashing = spellings[spellings.map(len) > 1]
    if len(clashing):
        forms = list(clashing.iloc[0])[:3]
        rows = [_label(frame, (frame["entity_id"] == form).idxmax()) for form in forms]
        problems.append(f"entity_id: {len(clashing)} id(s) are written in more than one case, e.g. "
                        f"{' and '.join(repr(f) for f in forms)} ({', '.join(rows)}): one entity or several cannot be "
                        "guessed; write each id the same way on every row, or make distinct entities' ids differ "
                        "by more than case")


def _marker_names(frame: pd.DataFrame) -> list[str]:
    """Warnings for ids, names and tickers that read like missing-value markers (NA, None, n/a): kept as written --
    National Bank of Canada trades as NA -- since the markers are missing values only in dates and numbers."""
    out = []
    for column in NAMING_COLUMNS:
        marked = frame[column].str.lower().isin(MISSING_TOKENS - {""})
        if marked.any():
            first = marked.idxmax()
            out.append(f"{column} is {frame[column][first]!r} on {int(marked.sum())} row(s) (e.g. "
                       f"{_label(frame, first)}): kept as written, a {column.replace('_', ' ')} (a ticker NA, a "
                       "name None); if these cells mean a missing value, fill them or drop the rows")
    return out


def _conflicting_outcomes(frame: pd.DataFrame, keep: str, problems: list[str]) -> pd.Series:
    """Rows of one entity_id and target_date whose outcomes differ (several headlines of a firm-day share its one
    outcome; two outcomes are a bad merge or a re-export with a corrected value), among the rows no other rule
    drops: with [data] on_conflicting_outcome = "refuse" an error naming the rows, else the mask of the rows whose
    outcome differs from that of the group's "first" or "last" row in file order (dropped and counted); "all" keeps
    every row."""
    mask = pd.Series(False, index=frame.index)
    if keep == "all":
        return mask
    valid = ~pd.concat([m for reason, m in _drop_masks(frame).items() if reason not in ("duplicate_row",
                                                                                      "conflicting_outcome")],
                       axis=1).any(axis=1)
    rows = frame[valid]
    if rows.empty:
        return mask
    key = ["entity_id", "target_date"]
    clash = rows[rows.groupby(key)["outcome"].transform("nunique") > 1]
    if clash.empty:
        return mask
    if keep == "refuse":
        groups = clash.groupby(key, sort=False)
        (entity, date), first = next(iter(groups))
        shown_rows = ", ".join(f"{_label(frame, i)} outcome {frame.at[i, 'outcome']:g}" for i in first.index[:3])
        problems.append(f"outcome: {groups.ngroups} (entity_id, target_date) pair(s) have rows with different "
                        f"outcomes, but an entity's outcome on a date is one number (e.g. entity_id {entity!r} on "
                        f"{date:%Y-%m-%d}: {shown_rows}): a bad merge, or a re-export with corrected outcomes? Delete "
                        "the wrong rows, or set [data] on_conflicting_outcome = \"first\" or \"last\" to keep the "
                        "outcome of the first or last such row in file order (the rows with another outcome are "
                        "dropped and counted), or \"all\" when each row's outcome is its own (measured from each "
                        "text's time)")
        return mask
    kept = clash.groupby(key)["outcome"].transform(keep)
    mask[clash.index] = clash["outcome"] != kept
    return mask


def _differences(frame: pd.DataFrame, rows) -> list[str]:
    """The columns of schema.DUPLICATE_KEY in which the first two of `rows` differ."""
    first, second = frame.loc[rows[0]], frame.loc[rows[1]]
    return [c for c in schema.DUPLICATE_KEY
            if not (first[c] == second[c] or (pd.isna(first[c]) and pd.isna(second[c])))]


def _distinguishing_column(frame: pd.DataFrame) -> str:
    """The fix for rows that cannot be told apart: map a column with a distinct value on every row to row_id, naming
    the first such column of the file (outside the protocol's columns) when there is one."""
    for column in frame.columns:
        if column in schema.ORDER:
            continue
        values = frame[column]
        if not is_missing(values).any() and values.astype(str).str.strip().is_unique:
            return (f": map a column holding a distinct value on every row to row_id in [data.columns] (e.g. row_id = "
                    f"{json.dumps(str(column))}, distinct on every row)")
    return (": add a column holding a distinct value on every row (e.g. a story id joined with the entity id) and map "
            "it to row_id in [data.columns]")


def _repeats(frame: pd.DataFrame) -> pd.Series:
    """Rows repeating an earlier row's schema.DUPLICATE_KEY (the first is kept)."""
    return frame.duplicated(subset=list(schema.DUPLICATE_KEY), keep="first")


def _drop_masks(frame: pd.DataFrame, conflicting: pd.Series | None = None) -> dict[str, pd.Series]:
    """The row rules (schema.DROP_RULES), each a mask; `conflicting` from _conflicting_outcomes. An id or name is
    missing only when empty: missing-value markers (NA) are values there (_marker_names)."""
    text_empty = frame["text"].isna() | (frame["text"].astype(str).str.strip() == "")
    entity_missing = (frame["entity_id"].astype(str) == "") | (frame["entity_name"].astype(str) == "")
    date_missing = frame["text_date"].isna() | frame["target_date"].isna()
    return {
        "missing_entity": entity_missing,
        "missing_date": date_missing,
        "target_not_after_text": ~date_missing & (frame["target_date"] <= frame["text_date"]),
        "missing_outcome": frame["outcome"].isna(),
        "empty_text": text_empty,
        "conflicting_outcome": conflicting if conflicting is not None else pd.Series(False, index=frame.index),
        "duplicate_row": _repeats(frame),
    }


def _example(frame: pd.DataFrame, index, reason: str, written: pd.Series | None = None) -> str:
    row = frame.loc[index]
    if reason == "target_not_after_text":
        return f"text_date {row['text_date']:%Y-%m-%d}, target_date {row['target_date']:%Y-%m-%d}"
    if reason == "missing_outcome":
        raw = "" if written is None or pd.isna(written[index]) else written[index]
        return f"outcome is missing ({shown(raw)})" if str(raw).strip() else "outcome is empty"
    if reason == "empty_text":
        return "text is empty"
    if reason == "conflicting_outcome":
        return f"outcome {row['outcome']:g} of entity_id {row['entity_id']!r} on {row['target_date']:%Y-%m-%d}"
    if reason == "missing_date":
        return ", ".join(f"{column} {'missing' if pd.isna(row[column]) else f'{row[column]:%Y-%m-%d}'}"
                         for column in schema.DATES)
    if reason == "duplicate_row":
        key = list(schema.DUPLICATE_KEY)
        first = frame.index[(frame[key] == row[key]).all(axis=1)][0]
        if frame.at[first, "row_id"] == row["row_id"]:
            return f"repeats row {int(first) + 1}"
        return f"repeats row_id {frame.at[first, 'row_id']} (row {int(first) + 1})"
    return f"entity_id {row['entity_id']!r}, entity_name {row['entity_name']!r}"


def _warnings(frame: pd.DataFrame, config: RunConfig, has_ticker: bool) -> list[str]:
    out = []
    if not has_ticker:
        out.append("no ticker column: the recall query names the entity by entity_name only "
                   "(the protocol recommends a ticker or short identifier)")
    names = frame.groupby("entity_id")["entity_name"].nunique()
    if (names > 1).any():
        out.append(f"entity_name varies within entity_id for {int((names > 1).sum())} entities (example "
                   f"{names[names > 1].index[0]!r}); the recall query uses each entity's first name")
    tickers = frame[frame["ticker"] != ""].groupby("entity_id")["ticker"].unique()
    changing = tickers[tickers.map(len) > 1]
    if len(changing):
        out.append(f"ticker varies within entity_id for {len(changing)} entities (example {changing.index[0]!r}: "
                   f"{', '.join(map(str, changing.iloc[0][:3]))}): each recall query names the ticker of its own "
                   "target date's first row")
    out += _marker_names(frame)
    if config.study.cutoff:
        cutoff = pd.Timestamp(config.study.cutoff_date)
        if (frame["target_date"] <= cutoff).all():
            out.append(f"every target_date is on or before the training cutoff {config.study.cutoff}: the "
                       "post-cutoff placebo (Step 5) is infeasible; Steps 1-4 only")
        elif (frame["target_date"] > cutoff).all():
            out.append(f"every target_date is after the training cutoff {config.study.cutoff}: there is no "
                       "in-sample period to test")
    nonzero = frame.loc[frame["outcome"] != 0, "outcome"]
    if len(nonzero):
        positive = float((nonzero > 0).mean())
        if max(positive, 1 - positive) > schema.ONE_SIGNED_SHARE:
            out.append(f"the outcome is heavily one-signed ({max(positive, 1 - positive):.0%} of non-zero outcomes "
                       f"are {'positive' if positive > 0.5 else 'negative'}): the up/down recall query will be "
                       "uninformative; recast the outcome as a direction of change first")
    if frame["entity_id"].nunique() == 1:
        out.append("a single entity (one time series): entity fixed effects are dropped, standard errors are "
                   "Newey-West, and power is limited")
    return out


def _apply_drop_rules(frame: pd.DataFrame, written: pd.Series | None = None,
                      conflicting: pd.Series | None = None) -> tuple[pd.Series, pd.DataFrame]:
    """(rows kept, one line per drop reason); a row is counted under the first rule it fails."""
    remaining = pd.Series(True, index=frame.index)
    drops = []
    for reason, mask in _drop_masks(frame, conflicting).items():
        hit = mask & remaining
        if hit.any():
            first = hit.idxmax()
            column, rule = schema.DROP_RULES[reason]
            drops.append({"reason": reason, "column": column, "rule": rule, "n_rows": int(hit.sum()),
                          "example_row_id": frame.at[first, "row_id"], "example": _example(frame, first, reason, written)})
        remaining &= ~mask
    return remaining, pd.DataFrame(drops, columns=["reason", "column", "rule", "n_rows", "example_row_id", "example"])


def validate_frame(raw: pd.DataFrame, config: RunConfig, decimal_comma: bool = False) -> ValidationResult:
    """Check the protocol's input rules on an in-memory table (columns as in the user's file); `decimal_comma`: the
    file is semicolon-separated, its columns of numbers other than ids and texts may use decimal commas."""
    frame = _apply_mapping(raw.reset_index(drop=True), config)
    problems: list[str] = []
    comma_columns = rewrite_decimal_commas(frame, [c for c in frame.columns if c not in NOT_NUMBERS]) \
        if decimal_comma else []
    has_ticker = "ticker" in frame.columns
    if not has_ticker:
        frame["ticker"] = ""
    for column in ("entity_id", "entity_name", "ticker", "text"):
        raw_bytes = frame[column].map(lambda v: isinstance(v, (bytes, bytearray)))
        if raw_bytes.any():
            first = raw_bytes.idxmax()
            problems.append(f"{column}: {int(raw_bytes.sum())} value(s) are bytes, not text (example "
                            f"{_label(frame, first)}: {frame[column][first]!r}); store the column as strings")
        frame[column] = frame[column].where(frame[column].notna(), "").astype(str).str.strip()
    notes: list[str] = [f"column(s) {comma_columns} read with decimal commas (e.g. 0,012 = 0.012)"] \
        if comma_columns else []
    _normalise_names(frame, problems, notes)
    text_date_as_written = frame["text_date"].copy()
    written = {column: frame[column].copy() for column in schema.DATES if column in frame.columns}
    derivation = None
    if config.data.target_date_from:
        derivation = target_dates.derive(frame["text_date"], config.study, lambda index: _label(frame, index),
                                         config.data.text_time_zone)
        frame.insert(frame.columns.get_loc("text_date") + 1, "target_date", derivation.target)
    for column in schema.DATES:
        frame[column] = _parse_dates(frame, column, problems)
    if derivation is not None:  # the text's day on the exchange's clock (target_dates: the day of its news)
        frame["text_date"] = derivation.day.where(derivation.day.notna(), frame["text_date"])
    outcome_as_written = frame["outcome"].copy()
    frame["outcome"] = _parse_outcome(frame, problems)
    frame["row_id"] = _row_ids(frame, problems, text_date_as_written)
    moderator = config.estimate.moderator
    if moderator in frame.columns and moderator not in schema.ORDER:
        frame[moderator] = _parse_moderator(frame, moderator, problems)
    conflicting = _conflicting_outcomes(frame, config.data.on_conflicting_outcome, problems)
    remaining, dropped = _apply_drop_rules(frame, outcome_as_written, conflicting)
    if problems:
        # rows with a value an error already names (a date or outcome that cannot be read) are not counted again
        # as rows whose value is missing
        unread = frame["outcome"].isna() & ~is_missing(outcome_as_written)
        for column, values in written.items():
            unread |= frame[column].isna() & ~is_missing(values)
        rest = _apply_drop_rules(frame[~unread], outcome_as_written)[1]
        also = [f"note: {r.n_rows} row{'s' if r.n_rows != 1 else ''} would also be dropped: {r.rule} "
                f"(example row_id {r.example_row_id}: {r.example})" for r in rest.itertuples()]
        raise InputDataError("\n".join(problems + also))
    kept = frame.loc[remaining].reset_index(drop=True)
    if kept.empty:
        rules = "; ".join(f"{r.n_rows} row{'s' if r.n_rows != 1 else ''}: {r.rule} (column {r.column}; example row_id "
                          f"{r.example_row_id}: {r.example})" for r in dropped.itertuples())
        raise InputDataError(f"no valid rows left after validation ({len(frame)} rows read, all dropped: {rules})")
    extra = [c for c in kept.columns if c not in schema.ORDER]
    kept = kept[list(schema.ORDER) + extra]
    notes += derivation.summary(frame, text_date_as_written) if derivation is not None else []
    return ValidationResult(kept, dropped, _warnings(kept, config, has_ticker), n_input=len(frame), notes=notes)


def validate_file(path: str | Path, config: RunConfig) -> ValidationResult:
    """The validated rows of the data file `path` (config.data.path; every caller: validate, calibrate, the dry
    run); an unset path is a one-line error."""
    if not path:
        raise InputDataError("no data file: set [data] path in the config")
    table = read_user_table(path)
    result = validate_frame(table.frame, config, decimal_comma=table.separator == ";")
    result.notes[:0] = table.notes()
    return result


def run(config: RunConfig, layout: Layout, sample: int | None = None, seed: int = SAMPLE_SEED) -> ValidationResult:
    """Validate config.data.path; write data/derived/input.parquet and validation_report.csv.

    `sample` keeps a random subsample of that many valid rows (fixed `seed`), as the protocol suggests for
    panels over ~10,000 rows; the kept rows stay in file order.
    """
    _outside_outputs(config.data.path, layout)
    result = validate_file(config.data.path, config)
    valid_rows, subsample = len(result.frame), None
    if sample is not None and sample < len(result.frame):
        if sample < 1:
            raise InputDataError(f"--sample {sample}: give a positive number of rows")
        kept = result.frame.sample(n=sample, random_state=seed).sort_index().reset_index(drop=True)
        result.notes.append(f"kept a random subsample of {sample} of {len(result.frame)} valid rows (seed {seed})")
        result.frame, subsample = kept, {"rows": sample, "seed": seed}
    write_parquet(result.frame, layout.derived_file("input.parquet"))
    write_csv(result.dropped, layout.derived_file("validation_report.csv"))
    # written last: a run cut short before it keeps the previous record, whose digest a changed file then misses
    write_text(layout.derived_file(SOURCE_RECORD), json.dumps(
        {"data": str(config.data.path), "sha256": fingerprint(Path(config.data.path)),
         "columns": config.data.columns, "target_dates": target_date_settings(config), "valid_rows": valid_rows,
         "on_conflicting_outcome": config.data.on_conflicting_outcome,
         "subsample": subsample}, indent=2) + "\n")
    return result


def _outside_outputs(path: str, layout: Layout) -> None:
    """The user's data file is never inside a folder lapbias writes (data/derived, data/raw, results, logs): a data
    file kept as data/derived/input.parquet was overwritten by `validate` itself (its invalid rows and text columns
    lost)."""
    if not path:
        return
    resolved = Path(path).resolve()
    for folder in (layout.derived, layout.raw, layout.results, layout.logs):
        if resolved.is_relative_to(folder.resolve()):
            raise InputDataError(f"[data] path = {str(path)!r} is inside lapbias's output folder {folder}, which "
                                 "`validate` and the later steps rewrite: move the data file out of it (e.g. to "
                                 f"data/{resolved.name}) and point [data] path there")


def target_date_settings(config: RunConfig) -> dict | None:
    """The settings target dates were derived under ([data] target_date_from and text_time_zone, [study] horizon and
    calendar); None when they are a column of the data file."""
    if not config.data.target_date_from:
        return None
    return {"from": config.data.target_date_from, "horizon": config.study.horizon, "calendar": config.study.calendar,
            "text_time_zone": config.data.text_time_zone}


def validated_record(layout: Layout) -> dict | None:
    """What `validate` read, for results/run_config.json: data_source.json less the data path (the same file named
    by another path is the same validation: its sha256 is what counts)."""
    record = read_source_record(layout)
    return {key: value for key, value in record.items() if key != "data"} if record else None


def recorded_subsample(layout: Layout) -> dict | None:
    """The {rows, seed} of the --sample the last `validate` drew (data_source.json), None when it drew none or there
    is no record; StaleResultsError when the record is damaged (`rebuild` would otherwise validate every row)."""
    record = read_source_record(layout)
    subsample = (record or {}).get("subsample")
    rows, seed = (subsample.get(key) if isinstance(subsample, dict) else None for key in ("rows", "seed"))
    whole = all(isinstance(value, int) and not isinstance(value, bool) for value in (rows, seed)) and rows >= 1 \
        and 0 <= seed <= MAX_SEED
    unreadable = record is None and layout.derived_file(SOURCE_RECORD).exists()
    if unreadable or (subsample is not None and not whole):
        why = "not readable JSON" if unreadable else f"subsample {subsample!r}"
        raise StaleResultsError(f"{layout.derived_file(SOURCE_RECORD)} is damaged ({why}); rerun `lapbias validate` "
                                "(with its --sample, if any), then `lapbias rebuild`")
    return subsample


def read_source_record(layout: Layout) -> dict | None:
    """data/derived/data_source.json (what `validate` read: the data file's path and sha256, the column mapping, the
    number of valid rows and the --sample subsample, if any); None when absent or unreadable."""
    try:
        record = json.loads(layout.derived_file(SOURCE_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None
