"""`lapbias init DATA`: a commented starter TOML configuration for a data file (a new user's first step).

The column map is guessed from the file's header: a header name that, lower-cased with every run of other
characters turned into "_", equals the protocol name or one of its usual synonyms (SYNONYMS, first match wins,
each header column used once). The training cutoff is left as a TODO that `config.load` refuses until it is a
date (protocol "Before running" item 3: it cannot be guessed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..config import BUNDLED_MODEL, PROTOCOL_COLUMNS
from ..errors import InputDataError
from .schema import REQUIRED

SYNONYMS = {
    "row_id": ("row_id", "rowid", "id", "obs_id", "observation_id"),
    "entity_id": ("entity_id", "permno", "gvkey", "cik", "firm_id", "company_id", "isin", "cusip", "entity", "firm"),
    "entity_name": ("entity_name", "company_name", "firm_name", "comnam", "conm", "name", "company"),
    "ticker": ("ticker", "symbol", "tic", "ticker_symbol"),
    "text": ("text", "headline", "title", "news", "article", "body", "content", "sentence"),
    "text_date": ("text_date", "date", "news_date", "publish_date", "pub_date", "published", "headline_date"),
    "target_date": ("target_date", "outcome_date", "realization_date", "return_date", "ret_date", "next_date"),
    "outcome": ("outcome", "ret", "return", "ret_next_day", "next_ret", "ret_fwd", "excess_return", "car", "y"),
}
CUTOFF_TODO = "TODO: YYYY-MM-DD, the training cutoff of the exact model version (model card)"


def header(path: str | Path) -> list[str]:
    """The column names of a .csv or .parquet file, read without loading its rows."""
    path = Path(path)
    if not path.is_file():
        raise InputDataError(f"data file {path} does not exist; give the path of your panel (.csv or .parquet)")
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return [str(c) for c in pd.read_csv(path, nrows=0).columns]
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
    except Exception as err:  # pandas and pyarrow raise many types for a damaged file
        raise InputDataError(f"data file {path} cannot be read as {suffix[1:]}: {str(err).splitlines()[0]}") from None
    raise InputDataError(f"data file {path} has extension {suffix!r}; give a .csv or .parquet file")


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def guess_columns(columns: list[str]) -> dict[str, str | None]:
    """Protocol column -> the header column guessed for it (None when nothing matches)."""
    by_normal: dict[str, str] = {}
    for column in columns:
        by_normal.setdefault(_normal(column), column)
    used: set[str] = set()
    guessed: dict[str, str | None] = {}
    for name in PROTOCOL_COLUMNS:
        match = next((by_normal[s] for s in SYNONYMS[name] if s in by_normal and by_normal[s] not in used), None)
        if match is not None:
            used.add(match)
        guessed[name] = match
    return guessed


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(data_path: str, columns: list[str], guessed: dict[str, str | None]) -> str:
    """The starter TOML: [data] path and column map, the required cutoff TODO, the main options with defaults."""
    mapping = []
    for name in PROTOCOL_COLUMNS:
        found = guessed[name]
        need = "required" if name in REQUIRED else "optional"
        if found is None:
            mapping.append(f"# {name} = \"...\"   # TODO ({need}): no header column looks like {name}; name yours")
        elif found == name:
            mapping.append(f"# {name}: found as is")
        else:
            mapping.append(f"{name} = {_quote(found)}   # guessed from the header: check")
    return "\n".join([
        f"# lapbias run configuration for {data_path}, written by `lapbias init`. Check every line marked TODO or",
        "# \"guessed\", then run `lapbias validate THIS_FILE` and `lapbias run THIS_FILE`. Unknown keys are errors.",
        "root = \".\"                                # results/, data/derived/, data/raw/, logs/ go under this folder",
        "",
        "[data]",
        f"path = {_quote(data_path)}",
        f"# header: {', '.join(columns)}",
        "",
        "[data.columns]",
        "# protocol column = your column (row_id and ticker are optional; the others are required)",
        *mapping,
        "",
        "[model]",
        "backend = \"transformers\"                  # transformers | vllm | openai (docs/backends.md)",
        f"model_id = {_quote(BUNDLED_MODEL)}  # or a local HF model directory: the model you forecast with",
        "dtype = \"float32\"",
        "",
        "[study]",
        "# REQUIRED: the training cutoff of the exact frozen model version, from its model card. Every lapbias",
        "# command refuses this file until it is a date such as cutoff = 2024-06-30.",
        f"cutoff = {_quote(CUTOFF_TODO)}",
        "# release_date = 2024-09-01               # optional: rows between cutoff and release belong to no sample",
        "horizon = \"1 trading day\"",
        "frequency = \"day\"                         # period of the time fixed effect: day | week | month | quarter | year",
        "outcome_description = \"the closing stock price\"   # fills the recall query (protocol Step 2)",
        "reference_period = \"the previous trading day\"",
        "",
        "[forecast]",
        "# TODO: your production prompt, parser and label map, used verbatim (protocol Step 1). Placeholders:",
        "# {text} {entity_name} {ticker} {text_date} {target_date} {entity_id}; write literal braces as {{ }}.",
        "prompt = \"\"\"Headline about {entity_name} ({ticker}) on {text_date}: {text}",
        "Will the stock price go up or down on the next trading day? Answer with one word: up or down.\"\"\"",
        "parse_regex = '\\b(up|down)\\b'            # group 1, lower-cased, is looked up in labels",
        "labels = { up = 1, down = -1 }",
        "",
        "[estimate]",
        "lap_measure = \"recall\"                    # recall: P(up) + P(down) | minkprob: Min-K% prob",
        "engine = \"python\"                         # python | stata | auto",
        "",
    ])
