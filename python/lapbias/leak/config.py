"""The `[leak]` section of a TOML run configuration (the NumLeak audit), read and checked on its own.

A leak config is a TOML file with `root`, a `[model]` section (the same keys as the protocol's `[model]`, checked
by lapbias.config) and a `[leak]` section (below; NumLeak paper §2, App. O, I). Every key has a default. Every key
has a kind and a range (SCHEMA); an unknown key, a value of the wrong kind or out of range is a ConfigError naming
its key path and the value as the TOML file writes it (`[leak] n_dates = "8"; it must be a whole number ...`).
Checks that need the series file (an unknown `series` or `transmission_series`) are made where it is read
(series.load).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

from .. import config as run_config
from ..errors import ConfigError
from .parse import PARSERS

VARIANTS = ("A", "B", "C", "D", "E", "fabricated_series", "fabricated_fund", "transmission")
"""The probe family of App. O: value (A), narrative (B), comparison (C), step-by-step (D), temperature 1 (E),
the two fabricated controls and the date-only transmission prompt."""
UNITS = ("percent", "degF", "degC", "index")
DEFAULT_BANDS = {"percent": 0.25, "degF": 0.5, "degC": 0.25, "index": 1.0}
"""Within-band accuracy (§2): |recall − truth| < band (strict), in the series' units. 0.25 percentage points =
25 basis points, the paper's band ("25 bps is the precision band a rounded memorized value should hit"); 0.5 °F is
App. H's within-0.5°F column; 0.25 °C and 1 index point are our choices for units the paper does not probe."""
DEFAULT_FINE_BANDS = {"percent": 0.05, "degF": 0.1, "degC": 0.05, "index": 0.2}
"""The narrower band reported beside it: 5 basis points (App. C's within-5 bps column); the other units keep the
paper's 1 : 5 ratio (our choice)."""
MAX_SEED = 2 ** 32 - 1
APP_K_NAMES = ("the Gleason-Zeta volatility-conditioned residual factor",
               "the Brennan-Iyer mean-reversion premium factor", "the Northrop-Calloway long-horizon dispersion factor",
               "the Pemberton-Yi cross-sectional liquidity premium factor")
"""App. K's four fictional factor names (the fifth name is the fund, `fabricated_fund`)."""


@dataclass(frozen=True)
class LeakConfig:
    path: str = ""
    """A series file (CSV or parquet: series, date, value, optional label and unit); "" = the bundled US
    quarterly unemployment and CPI inflation of statsmodels' macrodata (1959–2009)."""
    series: tuple[str, ...] = ()
    """The series to probe (sibling series for the selectivity table and the factor-shuffle null); empty =
    every series in the file."""
    cutoff: str = "2024-06-30"
    """The model's training cutoff: dates after it form the holdout window (App. I), the rest the pre window."""
    dates: tuple[str, ...] = ()
    """Probe these dates (each must be in every probed series) instead of sampling."""
    date_format: str = ""
    """How the series, replies and signal files write their dates: "" = ISO (YYYY-MM-DD or YYYY-MM); else a
    strftime format such as "%d/%m/%Y". A day/month date like 01/02/2020 is refused unless this names the order."""
    n_dates: int = 8
    """Dates sampled per series and window (seeded, without replacement)."""
    famous_dates: tuple[str, ...] = ()
    """Famous periods (§2's temporal control ii): probed in addition to the sample, and recall on them is
    compared with recall on the other periods."""
    seed: int = 20260423
    """Seed of the date sample, the Variant-E draws, the decoys, the bootstrap and the null draws."""
    variants: tuple[str, ...] = VARIANTS
    parser: str = "paper"
    """"paper": the authors' parse decisions; "explicit_estimate": a number after an explicit commitment
    ("best estimate: -2.3%") first (parse.py)."""
    band: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_BANDS))
    fine_band: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_FINE_BANDS))
    default_unit: str = "percent"
    """Unit of a series whose file has no unit column."""
    fabricated_series: tuple[str, ...] = APP_K_NAMES
    """Fabricated-series control (App. K): names of series that do not exist, asked with Variant A's syntax."""
    fabricated_fund: str = "the Holbrooke-Mansfield Opportunity Fund III (2007 vintage)"
    n_control_dates: int = 4
    """Pre-window dates (of the first series' sample) asked for each fabricated name."""
    transmission_series: str = ""
    """The series whose truth and recall the transmission signal is attributed against (App. N); "" = the
    first probed series."""
    signal_path: str = ""
    """Optional user signal (CSV/parquet: date, signal) to attribute instead of the transmission prompt."""
    max_new_tokens: int = 48
    """Answer length of Variants A, C, E, the controls and the transmission prompt (the authors' cap: 48)."""
    narrative_tokens: int = 384
    """Variant B's answer length (the authors' cap: 384)."""
    stepwise_tokens: int = 384
    """Variant D's answer length (App. J: 384)."""
    n_draws: int = 2
    """Variant E: independent draws per date at temperature 1 (App. J: two)."""
    top_logprobs: int = 5
    """Candidates kept at the first answer position; the readout entropy uses the 5 most likely (App. R)."""
    ranking: bool = True
    """Log-prob ranking of candidate completions (App. T), where the backend scores prompt tokens."""
    bootstrap_reps: int = 1000
    shuffle_reps: int = 1000
    """Factor-shuffle null (§2, App. C): draws of another series' estimate at the same date."""
    permutation_reps: int = 200
    """Date-permutation test of Pearson r: permutations of the truth across dates within a series."""


@dataclass(frozen=True)
class LeakRun:
    leak: LeakConfig
    model: run_config.ModelConfig
    root: str = "."

    @property
    def cutoff_date(self) -> dt.date:
        return dt.date.fromisoformat(self.leak.cutoff)


def written(value: Any) -> str:
    """A value as a TOML file writes it: "text", true, 8, 0.25, 2024-06-30, ["A", "B"], { percent = 0.25 }."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(written(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {written(v)}" for k, v in value.items()) + " }"
    return str(value)


def _fail(key: str, value: Any, rule: str, example: str = "") -> ConfigError:
    """`[leak] KEY = VALUE; RULE (e.g. KEY = EXAMPLE)`; the example is the key's default unless given."""
    example = example or written(getattr(LeakConfig(), key))
    return ConfigError(f"[leak] {key} = {written(value)}; {rule} (e.g. {key} = {example})")


def _whole(low: int, high: int = 10 ** 9):
    def check(key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(key, value, "it must be a whole number (no quotes, no decimal point)")
        if not low <= value <= high:
            rule = f"it must be at least {low}" if high == 10 ** 9 else f"it must be from {low} to {high}"
            raise _fail(key, value, rule)
        return value
    return check


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _fail(key, value, "it must be text in quotes")
    return value


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(key, value, "it must be true or false (TOML booleans, no quotes)")
    return value


def _iso(key: str, value: Any, shown: Any = None, example: str = '"2024-06-30"') -> str:
    """A date: "YYYY-MM-DD" text or a TOML date, kept as ISO text."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, str) and run_config.ISO_DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise _fail(key, value if shown is None else shown, "it must be a date in YYYY-MM-DD form", example)


def _date(key: str, value: Any) -> str:
    return _iso(key, value)


def _list(item, example: str, empty: bool = True):
    def check(key: str, value: Any) -> tuple:
        if not isinstance(value, list):
            raise _fail(key, value, "it must be a list", example)
        if not value and not empty:
            raise _fail(key, value, "list at least one", example)
        out = tuple(item(key, v, value) for v in value)
        repeated = sorted({v for v in out if out.count(v) > 1})
        if repeated:
            raise _fail(key, value, f"{written(repeated[0])} is listed twice", example)
        return out
    return check


def _text_item(key: str, value: Any, whole: list) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(key, whole, "it must be a list of non-empty texts in quotes", '["unemp", "infl"]')
    return value


def _date_item(key: str, value: Any, whole: list) -> str:
    return _iso(key, value, shown=whole, example='["1975-04-01", "2008-10-01"]')


def _variant_item(key: str, value: Any, whole: list) -> str:
    if value not in VARIANTS:
        raise ConfigError(f"[leak] variants = {written(whole)}; {written(value)} is not a variant: choose from "
                          f"{written(list(VARIANTS))}")
    return value


def _choice(options: tuple[str, ...]):
    def check(key: str, value: Any) -> str:
        if value not in options:
            raise _fail(key, value, f"choose one of {written(list(options))}")
        return value
    return check


def _format(key: str, value: Any) -> str:
    """A strftime format that writes a date and reads it back (year and month at least)."""
    value = _text(key, value)
    if value:
        sample = dt.date(2001, 2, 3)
        try:
            back = dt.datetime.strptime(sample.strftime(value), value).date()
        except ValueError:
            back = None
        if back is None or (back.year, back.month) != (sample.year, sample.month) or "%" not in value:
            raise _fail(key, value, "it must be a strftime format naming the year and the month (\"\" = ISO dates)",
                        '"%d/%m/%Y"')
    return value


def _bands(defaults: dict[str, float]):
    def check(key: str, value: Any) -> dict[str, float]:
        if not isinstance(value, dict):
            raise ConfigError(f"[{key}] must be a table of unit = width lines, e.g. [{key}] then percent = "
                              f"{defaults['percent']}")
        bands = dict(defaults)
        for unit, width in value.items():
            if unit not in UNITS:
                raise ConfigError(f"[{key}] {unit} = {written(width)}; {unit} is not a unit: choose from "
                                  f"{written(list(UNITS))}")
            if isinstance(width, bool) or not isinstance(width, (int, float)) or not 0 < width < math.inf:
                raise ConfigError(f"[{key}] {unit} = {written(width)}; it must be a positive number in the series' "
                                  f"units (e.g. percent = {defaults['percent']} for "
                                  f"{defaults['percent'] * 100:g} basis points)")
            bands[unit] = float(width)
        return bands
    return check


SCHEMA = {
    "path": _text, "series": _list(_text_item, '["unemp", "infl"]'), "cutoff": _date,
    "dates": _list(_date_item, '["1975-04-01", "2008-10-01"]'), "date_format": _format, "n_dates": _whole(1),
    "famous_dates": _list(_date_item, '["1975-04-01", "2008-10-01"]'), "seed": _whole(0, MAX_SEED),
    "variants": _list(_variant_item, '["A", "C"]', empty=False), "parser": _choice(PARSERS),
    "band": _bands(DEFAULT_BANDS), "fine_band": _bands(DEFAULT_FINE_BANDS), "default_unit": _choice(UNITS),
    "fabricated_series": _list(_text_item, written(list(APP_K_NAMES[:1]))), "fabricated_fund": _text,
    "n_control_dates": _whole(0), "transmission_series": _text, "signal_path": _text,
    "max_new_tokens": _whole(1, 100_000), "narrative_tokens": _whole(1, 100_000), "stepwise_tokens": _whole(1, 100_000),
    "n_draws": _whole(1, 1000), "top_logprobs": _whole(5, 20), "ranking": _bool, "bootstrap_reps": _whole(1, 10 ** 6),
    "shuffle_reps": _whole(1, 10 ** 6), "permutation_reps": _whole(1, 10 ** 6),
}
"""Every [leak] key -> its check (kind and range); each returns the value as LeakConfig holds it."""


def _leak_section(values: dict[str, Any]) -> LeakConfig:
    unknown = sorted(set(values) - set(SCHEMA))
    if unknown:
        raise ConfigError(f"[leak] has unknown key(s) {written(unknown)}; known keys: {written(sorted(SCHEMA))}")
    kwargs = {key: SCHEMA[key](f"leak.{key}" if key in ("band", "fine_band") else key, value)
              for key, value in values.items()}
    leak = LeakConfig(**kwargs)
    for unit, fine in leak.fine_band.items():
        if fine > leak.band[unit]:
            raise ConfigError(f"[leak.fine_band] {unit} = {written(fine)}; it must not exceed [leak.band] {unit} = "
                              f"{written(leak.band[unit])} (the fine band is the narrower one)")
    if "fabricated_fund" in leak.variants and not leak.fabricated_fund.strip():
        raise ConfigError('[leak] fabricated_fund = ""; name the fund, or leave "fabricated_fund" out of variants')
    return leak


def from_dict(values: dict[str, Any]) -> LeakRun:
    values = dict(values)
    root = values.pop("root", ".")
    if not isinstance(root, str):
        raise ConfigError(f"root = {written(root)}; it must be a folder path in quotes (e.g. root = \".\")")
    unknown = sorted(set(values) - {"leak", "model"})
    if unknown:
        raise ConfigError(f"a leak config has sections [leak] and [model] and key `root`; unknown: {written(unknown)}")
    model = run_config.from_dict({"model": values.get("model", {})}).model
    if not isinstance(values.get("leak", {}), dict):
        raise ConfigError("[leak] must be a TOML table ([leak] on its own line, then key = value lines)")
    return LeakRun(leak=_leak_section(values.get("leak", {})), model=model, root=root)


def load(path) -> LeakRun:
    """Read a leak config; a data file, a missing or unreadable file or a TOML syntax error is a one-line
    ConfigError (lapbias.config.read_toml)."""
    return from_dict(run_config.read_toml(path))


def snapshot(run: LeakRun) -> dict[str, Any]:
    """The run as plain JSON-ready values ([model] is lapbias.config's pydantic ModelConfig)."""
    return run_config.plain(run)

