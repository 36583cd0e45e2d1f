"""Asking a batch of queries: cached answers reused, the rest confirmed, asked in batches, appended.

Protocol Step 0: "Before launching any query batch, print the query count and a cost estimate, and get
explicit confirmation; if the dataset exceeds ~10,000 rows, suggest a random subsample first." The cache is
appended after every batch, so an interrupted run re-asks only what is missing.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Protocol, Sequence

from tqdm import tqdm

from ..errors import ConfirmationDeclined, ModelError
from ..llm.cache import Query, ResponseCache

LARGE_SAMPLE = 10_000


class Confirm(Protocol):
    def __call__(self, message: str) -> bool:
        """Show `message`, return True to go ahead."""
        ...


def always(message: str) -> bool:
    """Confirmation given up front (`--yes`): print the message and go ahead."""
    print(message, file=sys.stderr)
    return True


def describe_batch(task: str, n_total: int, n_todo: int, seconds_per_query: float, n_rows: int) -> str:
    minutes = n_todo * seconds_per_query / 60
    lines = [
        f"{task}: {n_todo} queries to ask ({n_total - n_todo} of {n_total} already cached); "
        f"estimated compute time ≈ {minutes:.1f} min (rough)"
    ]
    if n_rows > LARGE_SAMPLE:
        lines.append(f"the panel has {n_rows} rows (> {LARGE_SAMPLE:,}): consider a random subsample first "
                     "(`lapbias validate --sample N --seed S`)")
    return "\n".join(lines)


def check_context(backend, todo: Sequence[Query], tokens: Callable[[Any, Query], int], reserved: int = 0) -> None:
    """Our rule for prompts longer than the model's context: refused before any of the batch is asked (a prompt past
    the model's context is scored or answered without a word of warning, and its Min-K% is an outlier; truncating
    the text would change the production prompt under test). ModelError counting the prompts over the limit and
    naming the longest (row, tokens). `tokens(local_backend, query)` counts a prompt's tokens; `reserved` is added
    for the answer (the forecast's max_new_tokens). Backends that do not state a context (an HTTP server, which
    refuses an over-long prompt itself) are not checked."""
    limit = getattr(backend, "context_length", 0) or 0
    if not limit:
        return
    lengths = [(tokens(backend, query) + reserved, query) for query in todo]
    over = [(length, query) for length, query in lengths if length > limit]
    if over:
        length, query = max(over, key=lambda item: item[0])
        answer = f" including the {reserved} tokens of the answer" if reserved else ""
        raise ModelError(f"{query.task}: {len(over)} prompt(s) are longer than the model's context of {limit:,} tokens "
                         f"(the longest: row {query.query_id}, {length:,} tokens{answer}); nothing was asked. Shorten "
                         "those texts in the data file (e.g. keep the headline or first paragraph), then rerun "
                         "`lapbias validate` and this step")


def ask_missing(
    task: str,
    queries: Sequence[Query],
    cache: ResponseCache,
    ask: Callable[[list[Query]], list[Any]],
    batch_size: int,
    seconds_per_query: Callable[[], float],
    confirm: Confirm,
    n_rows: int,
    check: Callable[[list[Query]], None] | None = None,
) -> int:
    """Ask every query whose key is not cached; returns how many were asked. `seconds_per_query` is called
    only when something is to be asked (it may need the model loaded); so is `check(queries to ask)`, which may
    refuse them before the first is asked (check_context)."""
    todo = cache.missing(queries)
    n_total = len({q.key for q in queries})
    if not todo:
        print(f"{task}: all {n_total} queries cached, no model call", file=sys.stderr)
        return 0
    if check is not None:
        check(todo)
    if not confirm(describe_batch(task, n_total, len(todo), seconds_per_query(), n_rows)):
        raise ConfirmationDeclined(f"{task}: {len(todo)} queries not confirmed; rerun with --yes (in Python: "
                                   "yes=True) to go ahead")
    with tqdm(total=len(todo), desc=task, unit="query", file=sys.stderr) as progress:
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            cache.append(zip(batch, ask(batch)))
            progress.update(len(batch))
    return len(todo)
