"""Min-K% prob LAP (paper eq. 1, Shi et al. 2023):

    LAP(w, K) = exp( (1/|S_K|) · Σ_{n ∈ S_K} log P(w_n | w_<n) ),

S_K = the K% of scored tokens with the lowest log P(w_n | w_<n), K = 20% by default.

Which tokens count (a documented choice):
- The scored text is raw text, with no chat template: `[minkprob] scored_text = "prompt"` (default) scores the
  user's forecast prompt filled with the row (the paper: w is "any text provided to the model, including
  prompts, headlines"); `"text"` scores the text column alone. Chat-template and system-prompt tokens never
  count: they are the same on every row and would only add noise.
- The text is tokenized as the tokenizer does by default (with a BOS token if the model adds one). The first
  token has no context and no conditional probability (vLLM's prompt log-probs start with null there), so
  n_tokens = (number of tokens) − 1 scored tokens.
- |S_K| = max(1, floor(K · n_tokens)): the reference implementation's int(n · K), but never empty, so a short
  text still has a score ("at least one token"). A text of a single token has no scored token: lap_mink is NaN.

The same forward pass gives every other LAP measure of the text (signals/measures: Min-K%++, Gap-K%, the zlib ratio,
the loss): each cached answer holds, per scored token, its log-prob and the next-token distribution's (mu, m2, top1)
(llm/base.py PromptScore), over the whole vocabulary on the transformers backend and from the top-20 on vLLM and
servers; which one names the cache key (llm/moments.py mode). minkprob.parquet has one column per measure.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from ..config import ModelConfig, RunConfig
from ..data import schema
from ..errors import ConfigError, ModelError
from ..io import Layout, read_parquet, write_parquet
from ..llm import LazyBackend, moments
from ..llm.base import Backend
from ..llm.cache import Query, ResponseCache
from . import measures, provenance
from .batch import Confirm, ask_missing, check_context
from .forecast import fill_prompt
from .measures import ScoredText
from .measures.minkprob import min_k_prob

TASK = "minkprob"


def scored_text(row: pd.Series, config: RunConfig) -> str:
    if config.minkprob.scored_text == "text":
        return str(row["text"])
    return fill_prompt(config.forecast.prompt, row)


def queries(frame: pd.DataFrame, config: RunConfig, model_id: str = "") -> list[Query]:
    """The Min-K% pass of every row under the model (`model_id` "": [model] model_id; else the reference model)."""
    params = {"prompt_logprobs": True, "chat_template": False, "dtype": config.model.dtype,
              "moments": moments.mode(config.model)}
    return [Query(TASK, model_id or config.model.model_id, str(row["row_id"]), scored_text(row, config), params)
            for _, row in frame.iterrows()]


def reference_model(config: RunConfig) -> ModelConfig:
    """[model] with [minkprob] reference_model as the model (and, on a server, as the name served): the same backend,
    dtype, device and batch size. A reference that is the model itself is refused (its LAP would be 0 everywhere)."""
    reference = config.minkprob.reference_model
    if reference in (config.model.model_id, config.model.served_model_name):
        raise ConfigError(f"[minkprob] reference_model = {reference!r} is the model itself ([model] model_id"
                          f"{' or served_model_name' if config.model.served_model_name else ''}): Min-K% against a "
                          "reference needs another model, e.g. a smaller one of the same family (same tokenizer)")
    return config.model.model_copy(update={"model_id": reference, "served_model_name": reference})


def asker(config: RunConfig, backend: Backend):
    """The function asking a batch of Min-K% queries: every prompt token's log-prob, and at its position the
    next-token distribution's (mu, m2, top1) (JSON null where the backend returned none) and the top-k they come
    from (0: the whole vocabulary)."""
    def ask(batch: list[Query]) -> list[dict]:
        scored = backend.prompt_scores([q.prompt for q in batch])
        return [{"tokens": [t.to_json() for t in score.tokens],
                 "moments": [[None if math.isnan(v) else v for v in stats] for stats in score.moments],
                 "top_k": score.top_k} for score in scored]

    return ask


def context_check(config: RunConfig, backend: Backend):
    """Texts longer than the model's context are refused before any is scored (batch.py)."""
    return lambda todo: check_context(backend, todo, lambda local, query: len(local.tokens.encode(query.prompt)))


ORDER_CHECK_TEXTS = 4
"""Texts of the first batch an OpenAI-compatible server scores twice, in two orders (order_check)."""
ORDER_TOLERANCE = 1e-5
"""Relative, or nats within 1 nat of 0: padding moves the last float32 digits (tests/test_batch_invariance.py)."""


def order_check(config: RunConfig, backend: Backend):
    """An OpenAI-compatible server's prompt log-probs must not depend on the batch: vLLM's do with prefix caching on,
    its default (vllm-project/vllm#42019, open), and a server's flags cannot be read from here. Before anything is
    cached, the first ORDER_CHECK_TEXTS texts to score are scored in their order and in the reverse one; a log-prob
    that moves by more than ORDER_TOLERANCE stops the stage naming the text, the token and the fix (the server's
    --no-enable-prefix-caching, docs/backends.md). Local backends are checked in the tests instead."""
    def check(todo: list[Query]) -> None:
        if config.model.backend != "openai" or len(todo) < 2:
            return
        texts = [query.prompt for query in todo[:ORDER_CHECK_TEXTS]]
        first = [score.tokens for score in backend.prompt_scores(texts)]
        again = [score.tokens for score in backend.prompt_scores(texts[::-1])[::-1]]
        for query, a, b in zip(todo, first, again):
            if len(a) != len(b):
                raise ModelError(f"minkprob: the server scored row {query.query_id}'s text as {len(a)} tokens, then "
                                 f"as {len(b)} when the same {len(texts)} texts were sent in the reverse order: its "
                                 "answers depend on the batch; check the server (--no-enable-prefix-caching, "
                                 "docs/backends.md), then rerun; nothing was cached")
            for position, (x, y) in enumerate(zip(a, b), start=1):
                if abs(x.logprob - y.logprob) > ORDER_TOLERANCE * max(1.0, abs(x.logprob)):
                    raise ModelError(
                        f"minkprob: the server scored one text differently when the same {len(texts)} texts were sent "
                        f"in the reverse order (row {query.query_id}, token {position} {x.token!r}: {x.logprob:.7g}, "
                        f"then {y.logprob:.7g}): its prompt log-probs depend on the batch, as vLLM's do with prefix "
                        "caching on (vllm-project/vllm#42019), so Min-K% would too. Restart the server with "
                        "--no-enable-prefix-caching (docs/backends.md; a bfloat16 server may also need "
                        "VLLM_BATCH_INVARIANT=1), then rerun; nothing was cached")
    return check


def run(config: RunConfig, layout: Layout, backend: Backend, confirm: Confirm) -> pd.DataFrame:
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    context, order = context_check(config, backend), order_check(config, backend)

    def check(todo: list[Query]) -> None:
        context(todo)
        order(todo)

    ask_missing(TASK, queries(frame, config), cache, asker(config, backend), config.model, confirm, len(frame), check=check)
    if config.minkprob.reference_model:
        _score_reference(config, frame, cache, confirm, backend)
    return derive(config, layout)


def _score_reference(config: RunConfig, frame: pd.DataFrame, cache: ResponseCache, confirm: Confirm,
                     target: Backend) -> None:
    """The same texts through [minkprob] reference_model (loaded only when a text is not cached, closed after); the
    target model is released first (`release`, llm.LazyBackend: loaded again if asked again), so the two models are
    never in memory together."""
    model = reference_model(config)
    if cache.missing(queries(frame, config, model.model_id)) and hasattr(target, "release"):
        target.release()
    reference = LazyBackend(model, on_load=lambda m: print(f"loading reference model {m.model_id} ({m.backend}) ...",
                                                           file=sys.stderr))
    try:
        ask_missing(f"{TASK} (reference)", queries(frame, config, model.model_id), cache, asker(config, reference),
                    model, confirm, len(frame), check=context_check(config, reference))
    finally:
        reference.close()


def scored(response: dict, text: str) -> ScoredText:
    """One cached answer as the measures read it (signals/measures/base.py)."""
    logprobs = np.array([token[2] for token in response["tokens"]], dtype=np.float64)
    stats = np.array([[math.nan if v is None else v for v in row] for row in response.get("moments", [])],
                     dtype=np.float64).reshape(-1, 3)
    if len(stats) != len(logprobs):
        stats = np.full((len(logprobs), 3), math.nan)
    return ScoredText(text, logprobs, stats[:, 0], stats[:, 1], stats[:, 2])


def _same_tokens(response: dict, reference: dict, query: Query, model_id: str) -> None:
    """Min-K% against a reference compares the K% least likely tokens of one text under two models: only meaningful
    when both see the same tokens (a reference of the same family); ConfigError naming the row otherwise."""
    ids, reference_ids = [t[0] for t in response["tokens"]], [t[0] for t in reference["tokens"]]
    if ids != reference_ids:
        raise ConfigError(f"[minkprob] reference_model = {model_id!r} tokenizes the text of row {query.query_id} "
                          f"differently ({len(reference_ids)} tokens, the model {len(ids)}): Min-K% against a "
                          "reference needs the same tokenizer (a smaller model of the same family); choose one, then "
                          "rerun `lapbias minkprob --yes`")


def derive(config: RunConfig, layout: Layout) -> pd.DataFrame:
    """minkprob.parquet from input.parquet and the cached answers alone: every measure of the Min-K% pass
    (measures.TEXT_MEASURES, one column each), n_tokens, |S_K| and the top-k behind the moments (K and the window
    apply here, so changing them re-derives without asking the model again)."""
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    rows = []
    references = queries(frame, config, config.minkprob.reference_model) if config.minkprob.reference_model else None
    for index, query in enumerate(queries(frame, config)):
        response = cache.response(query)
        text = scored(response, query.prompt)
        if references is not None:
            reference = cache.response(references[index])
            _same_tokens(response, reference, query, config.minkprob.reference_model)
            text = replace(text, reference=scored(reference, query.prompt))
        values = {m.column: m.score(text, config) for m in measures.TEXT_MEASURES.values()}
        rows.append({"row_id": query.query_id, **values, "n_tokens": len(text.logprobs),
                     "n_lowest": min_k_prob(text.logprobs, config.minkprob.k)[1],
                     "moments_top_k": response.get("top_k", 0), "cache_key": query.key})
    result = pd.DataFrame(rows, columns=list(schema.MINKPROB_COLUMNS))
    write_parquet(provenance.stamp(result, config, layout, TASK), layout.derived_file("minkprob.parquet"))
    return result
