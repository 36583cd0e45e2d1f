"""The probe interface (NumLeak App. O): a probe turns the sampled dates into prompts and reads its replies.

One variant = one small class in its own file with `name`, `items(plan)` and `parse(item, reply)`, registered
in probes/__init__.py (the fast-mia registry style): adding a variant touches one file and the registry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Protocol

import pandas as pd

from ..config import LeakConfig
from ..parse import Parsed, parse_value

UNIT_WORDS = {
    "percent": ("percentage", "-0.75 for -0.75%, +5.25 for 5.25%"),
    "degF": ("in degrees Fahrenheit", "32.5"),
    "degC": ("in degrees Celsius", "-1.5 or +12.0"),
    "index": ("index value", "+104.20"),
}
"""How Variant A's answer format adapts to the unit (App. O asks for 'a signed decimal percentage'; App. H for
'a single signed decimal in degrees Fahrenheit (e.g., 32.5)')."""
ADJECTIVES = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "annual"}


@dataclass(frozen=True)
class Item:
    """One probe query: what is asked (prompt) and what it is scored against (truth; NaN for controls)."""

    variant: str
    series: str
    label: str
    date: pd.Timestamp
    period: str
    window: str
    frequency: str
    unit: str
    truth: float
    prompt: str
    max_new_tokens: int
    date_words: tuple[str, ...]
    temperature: float = 0.0
    draw: int = 0
    seed: int = -1
    """-1 for greedy decoding; else the seed of this draw (Variant E)."""
    other: dict = field(default_factory=dict)
    """Variant C: the second date (other_date, other_period, other_truth)."""
    famous: bool = False
    """A `[leak] famous_dates` period (§2's temporal control)."""

    @property
    def query_id(self) -> str:
        extra = f"|{self.other['other_period']}" if self.other else ""
        return f"{self.variant}|{self.series}|{self.period}{extra}|{self.draw}"


@dataclass(frozen=True)
class Plan:
    """What every probe builds from: the sampled (series, date) rows, the full series table, the config."""

    sampled: pd.DataFrame
    table: pd.DataFrame
    leak: LeakConfig


class Probe(Protocol):
    name: str

    def items(self, plan: Plan) -> list[Item]:
        ...

    def parse(self, item: Item, reply: str, truncated: bool, parser: str) -> Parsed:
        """The reply read (parse.py); `truncated`: it ended at the answer-length limit; `parser`: [leak] parser."""
        ...


def date_words(row) -> tuple[str, ...]:
    """The ways a reply may write the probed date (removed before a bare number is read, parse.py rule 3)."""
    from ..series import human_date

    period = str(row.period)
    words = [human_date(row.date, row.frequency), period, str(row.date.year)]
    if row.frequency == "quarter":
        words += [f"{period[:4]} {period[4:]}", f"{period[4:]} {period[:4]}"]
    return tuple(words)


def value_question(label: str, when: str, unit: str) -> str:
    """Variant A (App. O), adapted to the series' name, date wording and unit."""
    words, example = UNIT_WORDS[unit]
    return (f"What was {label} in {when}? Answer with a single signed decimal {words} "
            f"(e.g., {example}) and nothing else.")


def draw_seed(seed: int, query_id: str) -> int:
    """A fixed seed per draw, from the run seed and the query (independent of batching and order)."""
    return int(hashlib.sha256(f"{seed}|{query_id}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


def series_items(plan: Plan, variant: str, prompt_of, max_new_tokens: int, **fields) -> list[Item]:
    """One item per sampled (series, date) row, the prompt built by `prompt_of(row, when)`."""
    from ..series import human_date

    items = []
    for row in plan.sampled.itertuples():
        when = human_date(row.date, row.frequency)
        items.append(Item(variant, row.series, row.label, row.date, row.period, row.window, row.frequency,
                          row.unit, float(row.value), prompt_of(row, when), max_new_tokens, date_words(row),
                          famous=bool(row.famous), **fields))
    return items


def read_value(item: Item, reply: str, truncated: bool, parser: str) -> Parsed:
    return parse_value(reply, item.unit, item.date_words, parser, truncated)

