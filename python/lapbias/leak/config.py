"""The `[leak]` section of a TOML run configuration (the NumLeak audit), read and checked on its own.

A leak config is a TOML file with `root`, a `[model]` section (the same keys as the protocol's `[model]`, checked
by lapbias.config) and a `[leak]` section (below; NumLeak paper §2, App. O, I). Every key has a default; an
unknown key or a value of the wrong kind is a ConfigError naming its key path (`[leak] n_dates`,
`[leak.band] percent`), the rule and an example.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import config as run_config
from ..errors import ConfigError

VARIANTS = ("A", "B", "C", "D", "E", "fabricated_series", "fabricated_fund", "transmission")
"""The probe family of App. O: value (A), narrative (B), comparison (C), step-by-step (D), temperature 1 (E),
the two fabricated controls and the date-only transmission prompt."""
UNITS = ("percent", "degF", "degC", "index")
DEFAULT_BANDS = {"percent": 0.10, "degF": 1.0, "degC": 0.5, "index": 1.0}
"""Within-band accuracy (§2): |recall − truth| ≤ band, in the series' units. 0.10 percentage points = 10 basis
points, the paper's band for returns; the temperature bands follow App. H's within-1°F column."""


@dataclass(frozen=True)
class LeakConfig:
    path: str = ""
    """A series file (CSV or parquet: series, date, value, optional label and unit); "" = the bundled US
    quarterly unemployment and CPI inflation of statsmodels' macrodata (1959–2009)."""
    series: tuple[str, ...] = ()
    """The series to probe (sibling series for the selectivity table); empty = every series in the file."""
    cutoff: str = "2024-06-30"
    """The model's training cutoff: dates after it form the holdout window (App. I), the rest the pre window."""
    dates: tuple[str, ...] = ()
    """Probe these dates (YYYY-MM-DD, each must be in every probed series) instead of sampling."""
    n_dates: int = 8
    """Dates sampled per series and window (seeded, without replacement)."""
    seed: int = 20260423
    """Seed of the date sample, the Variant-E draws, the decoys, the bootstrap and the shuffle null."""
    variants: tuple[str, ...] = VARIANTS
    band: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_BANDS))
    default_unit: str = "percent"
    """Unit of a series whose file has no unit column."""
    fabricated_series: tuple[str, ...] = ("the Gleason-Zeta volatility-conditioned residual index",)
    """Fabricated-series control (App. K): names of series that do not exist, asked with Variant A's syntax."""
    fabricated_fund: str = "the Holbrooke-Mansfield Opportunity Fund III (2007 vintage)"
    n_control_dates: int = 4
    """Dates (of the first series' sample) asked for each fabricated name."""
    transmission_series: str = ""
    """The series whose truth and recall the transmission signal is attributed against (App. N); "" = the
    first probed series."""
    signal_path: str = ""
    """Optional user signal (CSV/parquet: date, signal) to attribute instead of the transmission prompt."""
    max_new_tokens: int = 24
    narrative_tokens: int = 40
    """Variant B's answer length (a short narrative)."""
    stepwise_tokens: int = 48
    """Variant D's answer length (the reasoning and the final value)."""
    n_draws: int = 2
    """Variant E: independent draws per date at temperature 1 (App. J: two)."""
    top_logprobs: int = 20
    """Candidates kept at the first answer position (readout entropy, App. R)."""
    ranking: bool = True
    """Log-prob ranking of candidate completions (App. T), where the backend scores prompt tokens."""
    bootstrap_reps: int = 1000
    shuffle_reps: int = 200
    """Factor-shuffle null: permutations of the truth across dates within a series (App. C)."""


@dataclass(frozen=True)
class LeakRun:
    leak: LeakConfig
    model: run_config.ModelConfig
    root: str = "."

    @property
    def cutoff_date(self) -> dt.date:
        return dt.date.fromisoformat(self.leak.cutoff)


_TUPLES = {"series", "dates", "variants", "fabricated_series"}


def _kind_error(key: str, value: Any, expected: str, example: str) -> ConfigError:
    return ConfigError(f"[leak] {key} = {value!r}; it must be {expected} (e.g. {key} = {example})")


def _leak_section(values: dict[str, Any]) -> LeakConfig:
    known = {f.name: f for f in dataclasses.fields(LeakConfig)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"[leak] has unknown key(s) {unknown}; known keys: {sorted(known)}")
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        default = known[key].default if known[key].default is not dataclasses.MISSING else None
        if key in _TUPLES:
            if isinstance(value, str) or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _kind_error(key, value, "a list of strings", '["unemp", "infl"]')
            value = tuple(value)
        elif key == "band":
            if not isinstance(value, dict):
                raise _kind_error(key, value, "a table unit -> band", "{ percent = 0.10 }")
            bands = dict(DEFAULT_BANDS)
            for unit, width in value.items():
                if unit not in UNITS:
                    raise ConfigError(f"[leak.band] {unit} is not a known unit; known units: {list(UNITS)}")
                if isinstance(width, bool) or not isinstance(width, (int, float)) or not width > 0:
                    raise ConfigError(f"[leak.band] {unit} = {width!r}; it must be a positive number in the "
                                      "series' units (e.g. percent = 0.10 for 10 basis points)")
                bands[unit] = float(width)
            value = bands
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise _kind_error(key, value, "true or false (TOML booleans, no quotes)", "true")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise _kind_error(key, value, "a whole number", str(default))
        elif isinstance(default, str) and not isinstance(value, str):
            raise _kind_error(key, value, "a string", f'"{default}"')
        kwargs[key] = value
    return LeakConfig(**kwargs)


def _check(leak: LeakConfig) -> LeakConfig:
    bad = sorted(set(leak.variants) - set(VARIANTS))
    if bad:
        raise ConfigError(f"[leak] variants has unknown variant(s) {bad}; choose from {list(VARIANTS)}")
    if leak.default_unit not in UNITS:
        raise ConfigError(f"[leak] default_unit = {leak.default_unit!r}; choose one of {list(UNITS)}")
    for key in ("n_dates", "max_new_tokens", "narrative_tokens", "stepwise_tokens", "n_draws", "top_logprobs",
                "bootstrap_reps", "shuffle_reps"):
        if getattr(leak, key) < 1:
            raise ConfigError(f"[leak] {key} = {getattr(leak, key)}; it must be at least 1")
    if leak.n_control_dates < 0:
        raise ConfigError(f"[leak] n_control_dates = {leak.n_control_dates}; it must be 0 or more")
    for key, text in [("cutoff", leak.cutoff)] + [(f"dates[{i}]", d) for i, d in enumerate(leak.dates)]:
        try:
            dt.date.fromisoformat(text)
        except ValueError:
            raise ConfigError(f"[leak] {key} = {text!r} is not a date in YYYY-MM-DD form (e.g. \"2024-06-30\")") \
                from None
    return leak


def from_dict(values: dict[str, Any]) -> LeakRun:
    values = dict(values)
    root = values.pop("root", ".")
    unknown = sorted(set(values) - {"leak", "model"})
    if unknown:
        raise ConfigError(f"a leak config has sections [leak] and [model] and key `root`; unknown: {unknown}")
    model = run_config.from_dict({"model": values.get("model", {})}).model
    if not isinstance(values.get("leak", {}), dict):
        raise ConfigError("[leak] must be a TOML table ([leak] on its own line, then key = value lines)")
    return LeakRun(leak=_check(_leak_section(values.get("leak", {}))), model=model, root=str(root))


def load(path: str | Path) -> LeakRun:
    """Read a leak config; a data file, a missing or unreadable file or a TOML syntax error is a one-line
    ConfigError (lapbias.config.read_toml)."""
    return from_dict(run_config.read_toml(path))


def snapshot(run: LeakRun) -> dict[str, Any]:
    """The run as plain JSON-ready values ([model] is lapbias.config's pydantic ModelConfig)."""
    return run_config.plain(run)
