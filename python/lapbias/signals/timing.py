"""How long the model queries still to ask will take on this machine: measured, never assumed (protocol Step 0:
"print the query count and a cost estimate" before a batch).

Queries are asked in batches of B, the configured size ([model] batch_size; concurrency x servers for an HTTP
backend), and every batch is timed. With t = the mean seconds of the timed batches, N queries still to ask take

    seconds = ceil(N / B) x t,   range [ceil(N / B) x min(0.7 t, t_fastest), ceil(N / B) x max(1.5 t, t_slowest)]:

a batch costs much the same however many of its B places are filled (one forward pass, or one decoding step, for all
its rows: on the bundled model on 2 cores, a batch of 8 forecasts took about as long as one of 16, a batch of 8
recall or Min-K% queries 60-70% as long), so the last, partial batch is counted whole. t_fastest and t_slowest are
the fastest and slowest timed batch: the spread between batches (answers of different lengths, other
jobs on the machine), widened to at least -30% / +50% for a machine whose load changes during the run. The estimate
holds for the load under which the batches were timed; the load average is stated with it. Only queries whose answer
is not in the cache count (a cached answer costs no model call).

The timings come from the stage's own first batches, or from the last timing of the same work on this machine (the
same backend, model, precision, device, batch size, task and query parameters), kept in
~/.cache/lapbias/probe_rates.json ($LAPBIAS_CACHE_DIR overrides): `lapbias run --dry-run` times the first batches of
each stage (their answers are kept in the cache: they are real queries, not a benchmark) and each stage records its
own batches, so the dry run, the stage's confirmation and the stage's estimate once its first batch is answered are
one estimate, from one function (`Timing.estimate`). [model] seconds_per_query > 0 states the time of one query
instead (N x it), measuring nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..config import ModelConfig
from ..io import write_text
from ..llm.cache import Query, ResponseCache, canonical_json

FIRST_ANSWERS = 32
"""Queries in a stage's first timed batches (whole batches, at least this many): the dry run's probe, and the
forecast answers whose parse rate is checked before the rest is asked (protocol Step 1)."""
SPREAD = (0.7, 1.5)
"""The narrowest range stated around an estimate, as multiples of it (see the module docstring)."""


def first_size(batch_size: int) -> int:
    """Whole batches of `batch_size`, at least FIRST_ANSWERS queries."""
    return batch_size * math.ceil(FIRST_ANSWERS / batch_size)


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def machine() -> str:
    return f"{platform.node()} ({os.cpu_count()} cores, {cpu_model()})"


def load_average() -> float:
    """The 1-minute load average (NaN where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return math.nan


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class Estimate:
    """The time of `n` queries: `seconds` and its range [low, high], from `basis`."""
    n: int
    seconds: float
    low: float
    high: float
    basis: str

    def text(self) -> str:
        return f"about {duration(self.seconds)} ({duration(self.low)} to {duration(self.high)})"


@dataclass
class Timing:
    """The seconds and queries of each timed batch of up to `batch_size` queries of one kind of work; or a rate stated
    in the config (`stated` seconds per query)."""
    batch_size: int = 1
    seconds: list[float] = field(default_factory=list)
    queries: list[int] = field(default_factory=list)
    load: float = math.nan
    when: str = ""
    stated: float = 0.0

    def add(self, seconds: float, queries: int) -> None:
        self.seconds.append(seconds)
        self.queries.append(queries)
        self.load = load_average()
        self.when = f"{dt.datetime.now():%Y-%m-%d %H:%M}"

    def estimate(self, n: int) -> Estimate:
        """ceil(N / B) x t and its range (module docstring); N x the stated rate when one is stated."""
        if self.stated:
            return Estimate(n, n * self.stated, n * self.stated * SPREAD[0], n * self.stated * SPREAD[1],
                            f"[model] seconds_per_query = {self.stated:g}")
        batches = math.ceil(n / self.batch_size)
        mean = sum(self.seconds) / len(self.seconds)
        low, high = min(SPREAD[0] * mean, min(self.seconds)), max(SPREAD[1] * mean, max(self.seconds))
        timed = len(self.seconds)
        basis = (f"{batches} batch{'es' if batches != 1 else ''} of up to {self.batch_size} at {mean:.1f} s, measured "
                 f"on {timed} batch{'es' if timed != 1 else ''} ({sum(self.queries)} queries, "
                 f"{min(self.seconds):.1f} to {max(self.seconds):.1f} s) at {self.when}, load average {self.load:.1f}")
        return Estimate(n, batches * mean, batches * low, batches * high, basis)

    def to_json(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "seconds": self.seconds, "queries": self.queries, "load": self.load,
                "when": self.when}

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> "Timing":
        return cls(int(record["batch_size"]), [float(s) for s in record["seconds"]],
                   [int(q) for q in record["queries"]], float(record.get("load", math.nan)),
                   str(record.get("when", "")))


def _rates_file() -> Path:
    return Path(os.environ.get("LAPBIAS_CACHE_DIR", Path.home() / ".cache" / "lapbias")) / "probe_rates.json"


def work_key(model: ModelConfig, task: str, queries: Sequence[Query]) -> str:
    """What a query's time depends on: this machine, the backend, model, precision, device, batch size, the task
    and the query parameters (max_new_tokens, top-k, samples per query, ...)."""
    params = canonical_json(queries[0].params) if queries else ""
    return "|".join([machine(), model.backend, model.model_id, model.dtype, model.device,
                     str(model.queries_per_batch), task, params])


def _read_rates() -> dict[str, Any]:
    try:
        rates = json.loads(_rates_file().read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return rates if isinstance(rates, dict) else {}


def recorded(model: ModelConfig, task: str, queries: Sequence[Query]) -> Timing | None:
    """The stated rate, else the last timing of this work on this machine, else None."""
    if model.seconds_per_query:
        return Timing(stated=model.seconds_per_query)
    record = _read_rates().get(work_key(model, task, queries))
    try:
        timing = Timing.from_json(record) if record else None
    except (KeyError, TypeError, ValueError):
        return None
    return timing if timing is not None and timing.seconds and timing.batch_size > 0 else None


def record(model: ModelConfig, task: str, queries: Sequence[Query], timing: Timing) -> None:
    """Keep `timing` as the last timing of this work on this machine (an unwritable file only loses the record)."""
    if not timing.queries:
        return
    rates = _read_rates()
    rates[work_key(model, task, queries)] = timing.to_json()
    try:
        write_text(_rates_file(), json.dumps(rates, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass


def ask_timed(queries: Sequence[Query], cache: ResponseCache, ask: Callable[[list[Query]], list[Any]],
              batch_size: int, timing: Timing, progress=None) -> Timing:
    """Ask `queries` in batches of `batch_size`, append each batch's answers to the cache, add its time to `timing`."""
    for start in range(0, len(queries), batch_size):
        batch = list(queries[start:start + batch_size])
        began = time.perf_counter()
        cache.append(zip(batch, ask(batch)))
        timing.add(time.perf_counter() - began, len(batch))
        if progress is not None:
            progress.update(len(batch))
    return timing
