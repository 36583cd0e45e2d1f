"""Recall query, LAP and the recalled direction (protocol Step 2).

One query per unique (entity_id, target_date), merged many-to-one onto rows by the panel stage. The query holds
only the entity identifier and the realization date (never the text): the protocol template filled with the
outcome description and reference period. Temperature 0, one answer token, top-20 log-probs at the answer
position. lap = P(up) + P(down) (the lookahead propensity); ud = P(up) − P(down) (the recalled direction);
residual_mass = 1 − P(up) − P(down) − P(unknown). Probabilities are raw mass, never renormalized.

Exact label probabilities (a documented deviation from the protocol's top-20 summing that removes censoring):
with a local backend (transformers, vLLM offline) the whole next-token distribution is at hand, so P(label) is
the exact sum of exp(logprob) over EVERY token id of the vocabulary whose decoded string, stripped and
lower-cased, equals the label (" up", "Up", "UP", ... ; llm/local_tokens.py), and no label is ever censored.
p_up, p_down, p_unknown, lap, ud and residual_mass use these exact values where they exist (`exact` = True);
the protocol's top-k sums are kept beside them (p_*_topk, censored_*_topk). The cache stores the log-prob of
every matching token id, so `lapbias rebuild` reproduces them without the model; the labels enter the query
parameters, so answers for other labels are never reused. With an HTTP endpoint only the top-k exists: p_* are
the top-k sums, a label outside the top-k is censored, and `censoring_bound` = exp(k-th largest log-prob) is the
largest probability any token outside the top-k (hence any single token of a censored label) can have.

Where the endpoint returns no log-probs, `[recall] fallback = "sampling"` asks n_samples (≥ 25) answers per
query at temperature 1 with a fixed seed (protocol Step 2 fallback, llm/sampling.py): answer frequencies take
the place of probabilities, the multiplied count is confirmed separately, and every row carries
`approximated = True` so the panel and the report label the results.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from ..config import RunConfig
from ..data import schema
from ..errors import ConfigError
from ..io import Layout, read_parquet, write_parquet
from ..llm.base import Backend, LocalBackend, TokenLogprob, chat
from ..llm import sampling
from ..llm.cache import Query, ResponseCache, canonical_json
from . import label_record, provenance
from .batch import Confirm, ask_missing, check_context, refuse_unconfirmable
from .labels import check_single_token, label_mass
from .recall_mode import uses_exact, uses_sampling

TASK = "recall"
LABEL_NAMES = ("up", "down", "unknown")
COLUMNS = list(schema.RECALL_COLUMNS)


def recall_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Unique (entity_id, target_date) pairs in first-appearance order, with the entity's name (its first row's: a
    name must not vary within an entity; validation warns if it does) and the ticker of the pair's first row that has
    one, else the entity's first ticker (a ticker changes with time, FB before 2022 and META after: each date is
    asked under the ticker it traded as; validation names the entities whose ticker varies)."""
    names = frame.drop_duplicates("entity_id").set_index("entity_id")[["entity_name"]]
    given = frame[frame["ticker"].astype(str) != ""]
    own = given.drop_duplicates(["entity_id", "target_date"]).set_index(["entity_id", "target_date"])["ticker"]
    entity = given.drop_duplicates("entity_id").set_index("entity_id")["ticker"]
    pairs = frame.drop_duplicates(["entity_id", "target_date"])[["entity_id", "target_date"]].join(names, on="entity_id")
    keys = pd.MultiIndex.from_frame(pairs[["entity_id", "target_date"]])
    pairs["ticker"] = own.reindex(keys).to_numpy()
    pairs["ticker"] = pairs["ticker"].fillna(pairs["entity_id"].map(entity)).fillna("")
    return pairs.reset_index(drop=True)


def fill_template(config: RunConfig, entity_name: str, ticker: str, target_date: pd.Timestamp) -> str:
    """The protocol template; with no ticker the empty "()" after the name is removed."""
    try:
        text = config.recall.template.format(
            target_date=f"{target_date:%Y-%m-%d}", entity_name=entity_name, ticker=ticker,
            outcome_description=config.study.outcome_description, reference_period=config.study.reference_period,
        )
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(f"[recall] template has a placeholder that cannot be filled ({err})") from None
    return text.replace(" ()", "") if not ticker else text


def query_id(entity_id: str, target_date: pd.Timestamp) -> str:
    return f"{entity_id}|{target_date:%Y-%m-%d}"


def queries(pairs: pd.DataFrame, config: RunConfig) -> list[Query]:
    """One query per pair. The params name the mode, so a sampled answer never shares a key with a log-prob one,
    and the precision (`[model] dtype`), so answers computed at different precisions never mix in one run; in
    exact mode they name the labels, whose every token's log-prob the answer stores."""
    if uses_sampling(config):
        params = sampling.params(config.recall.n_samples, config.recall.sampling_seed,
                                 config.recall.sampling_temperature)
    else:
        params = {"temperature": 0, "max_tokens": 1, "top_logprobs": config.recall.top_logprobs}
        if uses_exact(config):
            params["exact_labels"] = [label.strip().lower() for label in config.recall.labels]
    params["dtype"] = config.model.dtype
    return [
        Query(TASK, config.model.model_id, query_id(p.entity_id, p.target_date),
              canonical_json(chat(fill_template(config, p.entity_name, p.ticker, p.target_date))), params)
        for p in pairs.itertuples()
    ]


def asker(config: RunConfig, backend: Backend):
    """The function asking a batch of recall queries (after checking that the labels are single tokens): top-k
    log-probs, plus the exact label probabilities on a local backend, or the sampling fallback's answers."""
    n_samples = config.recall.n_samples if uses_sampling(config) else 1

    def ask(batch: list[Query]) -> list[dict]:
        check_single_token(backend, config.recall.labels)
        chats = [json.loads(q.prompt) for q in batch]
        if uses_sampling(config):
            return sampling.ask(backend, chats, n_samples, config.recall.sampling_seed,
                                config.recall.sampling_temperature)
        if uses_exact(config):
            return ask_exact(backend, chats, config)
        tops = backend.next_token_logprobs(chats, config.recall.top_logprobs)
        return [{"top": [t.to_json() for t in top]} for top in tops]

    return ask


def run(config: RunConfig, layout: Layout, backend: Backend, confirm: Confirm,
        confirm_sampling: Confirm | None = None) -> pd.DataFrame:
    """Ask every uncached pair (after verifying the labels are single tokens), then derive recall.parquet.

    With the sampling fallback, `confirm_sampling` must separately accept the multiplied answer count first
    (protocol Step 2); the batch's time is that of n_samples answers per query, as timed."""
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    todo_queries = queries(recall_pairs(frame), config)
    refuse_unconfirmable(TASK, todo_queries, cache, confirm)  # before the labels load the model
    if cache.missing(todo_queries) or label_record.unrecorded(layout, TASK, config.model.model_id,
                                                              config.recall.labels):
        label_record.record(layout, TASK, backend, check_single_token(backend, config.recall.labels))
    if uses_sampling(config):
        n_todo = len(cache.missing(todo_queries))
        sampling.confirm(confirm_sampling or confirm, TASK, n_todo, config.recall.n_samples)
    ask_missing(TASK, todo_queries, cache, asker(config, backend), config.model, confirm, len(frame),
                check=context_check(config, backend))
    return derive(config, layout)


def context_check(config: RunConfig, backend: Backend):
    """Recall queries plus their one answer token longer than the model's context are refused before any is asked,
    as the forecast's and Min-K%'s (batch.check_context). The query holds no text, so what is long is the entity's
    name (or ticker) or the template."""
    column = config.data.column("entity_name")
    fix = (f"The recall query is the [recall] template filled with the entity's name and ticker and [study] "
           f"outcome_description and reference_period: shorten the entity names (column {column!r} of the data file"
           f"{f' {config.data.path}' if config.data.path else ''}) or the template, then rerun `lapbias validate` "
           "and this step")
    return lambda todo: check_context(backend, todo, lambda local, query: len(local.tokens.render(
        json.loads(query.prompt))), reserved=1, fix=fix)


def ask_exact(backend: LocalBackend, chats: list, config: RunConfig) -> list[dict]:
    """Top-k plus the exact log-prob of every token id that decodes to a label: {"top": [...], "labels":
    {label: [[id, token, logprob], ...]}} (labels stripped and lower-cased, as in the query parameters)."""
    variants = {label.strip().lower(): set(backend.label_variants(label)) for label in config.recall.labels}
    requested = sorted({i for ids in variants.values() for i in ids})
    answers = backend.answer_logprobs(chats, config.recall.top_logprobs, requested)
    return [{"top": [t.to_json() for t in answer.top],
             "labels": {label: [t.to_json() for t in answer.requested if t.token_id in ids]
                        for label, ids in variants.items()}}
            for answer in answers]


def exact_mass(response: dict, label: str) -> float:
    """P(label) = Σ exp(logprob) over every token id stored for the label (each id once, no renormalizing)."""
    tokens = {t.token_id: t for t in map(TokenLogprob.from_json, response["labels"][label.strip().lower()])}
    return sum(math.exp(t.logprob) for t in tokens.values())


def derive(config: RunConfig, layout: Layout) -> pd.DataFrame:
    """recall.parquet from input.parquet and the cached responses alone (no model call); the labels are checked
    on the tokenizer recorded for the cache (label_record.py)."""
    label_record.check(layout, TASK, config.model.model_id, config.recall.labels)
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    up, down, unknown = config.recall.labels
    pairs = recall_pairs(frame)
    rows = []
    for query, pair in zip(queries(pairs, config), pairs.itertuples()):
        response = cache.response(query)
        top = [TokenLogprob.from_json(t) for t in response["top"]]
        topk = {name: label_mass(top, label) for name, label in zip(LABEL_NAMES, (up, down, unknown))}
        exact = "labels" in response
        mass = {name: (exact_mass(response, label), False) if exact else topk[name]
                for name, label in zip(LABEL_NAMES, (up, down, unknown))}
        approximated = sampling.is_approximated(response)
        p_up, p_down, p_unknown = (mass[name][0] for name in LABEL_NAMES)
        rows.append({
            "entity_id": pair.entity_id, "target_date": pair.target_date, "p_up": p_up, "p_down": p_down,
            "p_unknown": p_unknown, "lap": p_up + p_down, "ud": p_up - p_down,
            "residual_mass": 1.0 - p_up - p_down - p_unknown,
            **{f"censored_{name}": mass[name][1] for name in LABEL_NAMES},
            "exact": exact,
            **{f"p_{name}_topk": topk[name][0] for name in LABEL_NAMES},
            **{f"censored_{name}_topk": topk[name][1] for name in LABEL_NAMES},
            "censoring_bound": math.nan if approximated or not top else math.exp(min(t.logprob for t in top)),
            "approximated": approximated, "n_samples": int(response.get("n_samples", 0)),
            "cache_key": query.key,
        })
    result = pd.DataFrame(rows, columns=COLUMNS)
    write_parquet(provenance.stamp(result, config, layout, TASK), layout.derived_file("recall.parquet"))
    return result


def censoring_warnings(recall: pd.DataFrame, config: RunConfig) -> list[str]:
    """Protocol Step 2: a label missing from the top-k is censored, not zero; high censoring is a warning."""
    out = []
    for label, column in zip(config.recall.labels, ("censored_up", "censored_down", "censored_unknown")):
        share = float(recall[column].mean()) if len(recall) else 0.0
        if share > config.recall.censoring_warning:
            bound = recall.loc[recall[column], "censoring_bound"].max()
            below = f" (each of its tokens below {bound:.3g} there)" if pd.notna(bound) else ""  # NaN: sampled
            out.append(f"recall label {label!r} is absent from the top-{config.recall.top_logprobs} log-probs in "
                       f"{share:.0%} of queries: its probability is censored{below}, and LAP understates recall "
                       "there")
    return out
