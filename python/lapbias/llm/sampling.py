"""Sampling fallback when the endpoint returns no log-probs (protocol Step 2, implementation notes).

"Fallback when logprobs are unavailable: >= 25 samples per query at temperature 1, answer frequencies in place
of probabilities. This multiplies the query count ~25x — print the new count and get separate confirmation,
and label all downstream results as approximated." and "fixed seed for any sampling fallback".

A sampled query's cached response has the shape of a log-prob response, so `signals.labels.label_mass` reads
it unchanged: `{"top": [[token_id, answer, log(frequency)], ...], "approximated": true, "n_samples": n}`.
exp(log(count / n)) is the answer's frequency, so P(label) is the share of samples whose answer, stripped and
lower-cased, is the label. Distinct answer strings get placeholder ids −1, −2, … (most frequent first), so the
protocol's "deduplicate by token id" never merges two answers. An answer never sampled is censored, as a label
missing from a top-20 is. The query parameters (`params`) name the mode, sample count, temperature and seed, so
a sampled response never shares a cache key with a log-prob response.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

from ..config import check_sampling
from ..errors import ConfirmationDeclined, ModelError
from .base import Backend, Chat

APPROXIMATED_NOTE = ("approximated: sampling fallback (protocol Step 2), answer frequencies of {n} samples at "
                     "temperature {t:g} with seed {seed} in place of probabilities")


def params(n_samples: int, seed: int, temperature: float = 1.0) -> dict[str, Any]:
    """The cache-key parameters of a sampled recall query (compare the log-prob query's params)."""
    check_sampling(n_samples, temperature)
    return {"mode": "sampling", "n_samples": n_samples, "temperature": temperature, "max_tokens": 1, "seed": seed}


def frequencies(answers: Sequence[str]) -> dict[str, Any]:
    """The log-prob-shaped response of one query from its sampled answers (see the module docstring)."""
    if not answers:
        raise ModelError("the sampling fallback got no answers for a query")
    counts = sorted(Counter(answers).items(), key=lambda item: (-item[1], item[0]))
    n = len(answers)
    top = [[-1 - rank, answer, math.log(count / n)] for rank, (answer, count) in enumerate(counts)]
    return {"top": top, "approximated": True, "n_samples": n}


def ask(backend: Backend, chats: Sequence[Chat], n_samples: int, seed: int,
        temperature: float = 1.0) -> list[dict[str, Any]]:
    """Sample every chat `n_samples` times (one answer token, fixed seed) and return frequency responses."""
    check_sampling(n_samples, temperature)
    sample = getattr(backend, "sample", None)
    if sample is None:
        raise ModelError(f"backend {backend.describe().get('backend', '?')} cannot sample; the sampling fallback "
                         "runs on backend = \"openai\" or \"vllm\"")
    return [frequencies(answers) for answers in sample(list(chats), n_samples, seed, temperature, 1)]


def describe(task: str, n_queries: int, n_samples: int) -> str:
    """The multiplied query count, printed before the separate confirmation."""
    return (f"{task}: the endpoint returns no log-probs, so the sampling fallback (protocol Step 2) asks "
            f"{n_queries} queries x {n_samples} samples = {n_queries * n_samples} model answers "
            f"({n_samples}x the log-prob query count) at temperature 1 with a fixed seed; every result derived "
            "from them is labelled approximated")


def confirm(confirm_fn, task: str, n_queries: int, n_samples: int) -> None:
    """The protocol's separate confirmation of the multiplied count; ConfirmationDeclined when refused."""
    if n_queries and not confirm_fn(describe(task, n_queries, n_samples)):
        raise ConfirmationDeclined(f"{task}: sampling fallback ({n_queries * n_samples} answers) not confirmed")


def is_approximated(response: dict[str, Any]) -> bool:
    return bool(response.get("approximated", False))


def note(n_samples: int, seed: int, temperature: float = 1.0) -> str:
    """The label every downstream table, figure and REPORT.md section carries when recall was sampled."""
    return APPROXIMATED_NOTE.format(n=n_samples, t=temperature, seed=seed)
