"""Asking a batch of queries: cached answers reused, the rest confirmed, asked in timed batches, appended.

Protocol Step 0: "Before launching any query batch, print the query count and a cost estimate, and get
explicit confirmation; if the dataset exceeds ~10,000 rows, suggest a random subsample first." The estimate is
signals/timing.py's (the last timing of the same work on this machine), and once the first batches are answered,
the estimate for the rest from them. The cache is appended after every batch, so an interrupted run re-asks only
what is missing.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Protocol, Sequence

from tqdm import tqdm

from ..config import ModelConfig
from ..errors import ConfirmationDeclined, ModelError
from ..llm.cache import Query, ResponseCache
from . import timing
from .timing import Estimate, Timing

LARGE_SAMPLE = 10_000


class Confirm(Protocol):
    def __call__(self, message: str) -> bool:
        """Show `message`, return True to go ahead."""
        ...


def always(message: str) -> bool:
    """Confirmation given up front (`--yes`): print the message and go ahead."""
    print(message, file=sys.stderr)
    return True


class Declined:
    """A confirmation nobody can give (no --yes and no terminal to ask on; yes=False in Python): the batch stops
    before the model is loaded or anything is asked, with the count and `how` to go ahead."""

    def __init__(self, how: str):
        self.how = how

    def __call__(self, message: str) -> bool:
        raise ConfirmationDeclined(f"{message.splitlines()[0]}; not confirmed: {self.how}")


def count_line(task: str, n_total: int, n_todo: int, unused: int = 0) -> str:
    """How many queries are to ask and cached; and, when the cache holds answers of this task and model for
    queries this run does not make (ResponseCache.unused), that the prompts changed, so they are not reused."""
    line = f"{task}: {n_todo} queries to ask ({n_total - n_todo} of {n_total} already cached)"
    if unused:
        line += (f"; the cache also holds {unused} {task} answer(s) of this model for queries this run does not send "
                 "(the prompts or query settings changed: e.g. a column no longer read, an edited prompt or text, "
                 "another --sample, dtype or recall mode): they are kept, not reused")
    return line


def describe_batch(task: str, n_total: int, n_todo: int, n_rows: int, estimate: Estimate | None,
                   first: int = timing.FIRST_ANSWERS, unused: int = 0) -> str:
    """The count, what is cached (count_line), and the time of what is to ask (timing.Estimate), or when it will be
    shown."""
    said = (f"estimated time {estimate.text()} ({estimate.basis})" if estimate is not None else
            f"time not yet measured for this work on this machine: estimated from the first {first} answers "
            "(`lapbias run CONFIG --dry-run` measures it before anything else is asked)")
    lines = [f"{count_line(task, n_total, n_todo, unused)}; {said}"]
    if n_rows > LARGE_SAMPLE:
        lines.append(f"the panel has {n_rows} rows (> {LARGE_SAMPLE:,}): consider a random subsample first "
                     "(`lapbias validate --sample N --seed S`)")
    return "\n".join(lines)


SHORTEN_TEXTS = ("Shorten those texts in the data file (e.g. keep the headline or first paragraph), then rerun "
                 "`lapbias validate` and this step")


def check_context(backend, todo: Sequence[Query], tokens: Callable[[Any, Query], int], reserved: int = 0,
                  reserved_by: str = "", fix: str = SHORTEN_TEXTS) -> None:
    """Our rule for prompts longer than the model's context: refused before any of the batch is asked (a prompt past
    the model's context is scored or answered without a word of warning, and its Min-K% is an outlier; truncating
    the text would change the production prompt under test). ModelError counting the prompts over the limit and
    naming the longest (row, tokens). `tokens(local_backend, query)` counts a prompt's tokens; `reserved` tokens of
    the answer are added to each. When the longest prompt over the limit fits without them, the answer's length is
    what does not fit: the refusal names the setting that reserves it (`reserved_by`, e.g. [forecast]
    max_new_tokens) and the most it can be (the context minus the longest prompt); else the prompts themselves are
    too long, and `fix` says what to shorten. Backends that do not state a context (an HTTP server, which refuses an
    over-long prompt itself) are not checked."""
    limit = getattr(backend, "context_length", 0) or 0
    if not limit:
        return
    lengths = [(tokens(backend, query), query) for query in todo]
    over = [(length, query) for length, query in lengths if length + reserved > limit]
    if not over:
        return
    length, query = max(over, key=lambda item: item[0])
    if reserved_by and length < limit:
        raise ModelError(f"{query.task}: {reserved_by} = {reserved:,} does not fit in the model's context of "
                         f"{limit:,} tokens: the prompt and the answer must fit together, and {len(over)} prompt(s) "
                         f"leave less room for the answer (the longest: row {query.query_id}, {length:,} tokens); "
                         f"nothing was asked. Set {reserved_by} to at most {limit - length:,} (the context minus the "
                         "longest prompt)")
    answer = f" including the answer's {reserved:,} token(s)" if reserved else ""
    raise ModelError(f"{query.task}: {len(over)} prompt(s) are longer than the model's context of {limit:,} tokens "
                     f"(the longest: row {query.query_id}, {length + reserved:,} tokens{answer}); nothing was asked. "
                     f"{fix}")


def refuse_unconfirmable(task: str, queries: Sequence[Query], cache: ResponseCache, confirm: Confirm) -> None:
    """ConfirmationDeclined, with the count, when a query is missing from the cache and `confirm` is Declined: before
    the model is loaded."""
    todo, n_total = cache.missing(queries), len({q.key for q in queries})
    if todo and isinstance(confirm, Declined):
        confirm(count_line(task, n_total, len(todo), cache.unused(queries)))


def ask_missing(
    task: str,
    queries: Sequence[Query],
    cache: ResponseCache,
    ask: Callable[[list[Query]], list[Any]],
    model: ModelConfig,
    confirm: Confirm,
    n_rows: int,
    check: Callable[[list[Query]], None] | None = None,
    first_check: Callable[[list[Query]], None] | None = None,
) -> int:
    """Ask every query whose key is not cached, in batches of [model] batch_size; returns how many were asked.

    Before anything is asked: a Declined confirmation stops (before `check`, which may load the model), then
    `check(queries to ask)` may refuse them (check_context), then the confirmation shows the count and the time
    (timing.py). The first timing.first_size(batch size) queries are asked first; `first_check(those queries)` may
    stop there (the forecast's parse rate, protocol Step 1), else the estimate for the rest, from their time, is
    printed and the rest asked. The timings are kept for the next estimate of the same work (timing.record)."""
    todo = cache.missing(queries)
    n_total = len({q.key for q in queries})
    if not todo:
        print(f"{task}: all {n_total} queries cached, no model call", file=sys.stderr)
        return 0
    refuse_unconfirmable(task, queries, cache, confirm)
    if check is not None:
        check(todo)
    earlier, batch_size = timing.recorded(model, task, todo), model.queries_per_batch
    n_first = timing.first_size(batch_size)
    if not confirm(describe_batch(task, n_total, len(todo), n_rows, earlier.estimate(len(todo)) if earlier else None,
                                  n_first, cache.unused(queries))):
        raise ConfirmationDeclined(f"{task}: {len(todo)} queries not confirmed; rerun with --yes (in Python: "
                                   "yes=True) to go ahead")
    first, rest = todo[:n_first], todo[n_first:]
    measured = Timing(batch_size)
    with tqdm(total=len(todo), desc=task, unit="query", file=sys.stderr) as progress:
        timing.ask_timed(first, cache, ask, batch_size, measured, progress)
        timing.record(model, task, todo, measured)
        if first_check is not None:
            first_check(first)
        if rest:
            estimate = measured.estimate(len(rest))
            progress.write(f"{task}: the first {len(first)} answers took {timing.duration(sum(measured.seconds))}; "
                           f"the other {len(rest)}: {estimate.text()} ({estimate.basis})", file=sys.stderr)
            timing.ask_timed(rest, cache, ask, batch_size, measured, progress)
            timing.record(model, task, todo, measured)
    return len(todo)
