"""Forecast signal mu_hat (protocol Step 1) and the label-token probability p(w_{N+1}) (paper Table IV).

The user's production prompt is used verbatim (placeholders filled from the row), decoded greedily
(temperature 0). The user's parser: group 1 of the first match of `parse_regex` in the response, lower-cased,
looked up in the label map -> mu_hat.

p_first = p(w_{N+1}) = exp(log P(t | prompt, tokens before t)), where t is the generated token that carries the
first character of the parsed label (paper Table IV: the probability of the answer's label token, "good", "bad",
"neutral"), NOT whatever token comes first: with an answer format such as `{good}` the first token is "{" and its
probability is ≈ 1 whatever the model believes. The label is located by running the same parser on the
concatenated decoded strings of the generated tokens (every generated token's log-prob is cached); p_first is
NaN when the response does not parse or the endpoint returned no log-probs. `label_token` names t.
`confidence` is parsed from the response with `confidence_regex` when the prompt asks for a self-reported
confidence.
"""

from __future__ import annotations

import json
import math
import re

import pandas as pd

from ..config import FORECAST_PLACEHOLDERS, RunConfig
from ..data import schema
from ..errors import ConfigError, ParseRateError
from ..io import Layout, read_parquet, write_parquet
from ..llm.base import Backend, Generation, TokenLogprob, chat
from ..llm.cache import Query, ResponseCache, canonical_json
from . import provenance
from .batch import Confirm, ask_missing, check_context

TASK = "forecast"
TOP_LOGPROBS = 20
PLACEHOLDERS = FORECAST_PLACEHOLDERS


def fill_prompt(template: str, row: pd.Series) -> str:
    """The user's prompt with {placeholders} filled from the row (dates as YYYY-MM-DD), nothing else changed."""
    values = {
        "text": row["text"], "entity_name": row["entity_name"], "ticker": row["ticker"],
        "entity_id": row["entity_id"], "text_date": f"{row['text_date']:%Y-%m-%d}",
        "target_date": f"{row['target_date']:%Y-%m-%d}",
    }
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(f"[forecast] prompt has a placeholder that cannot be filled ({err}); "
                          f"available: {', '.join('{' + p + '}' for p in PLACEHOLDERS)} "
                          "(write literal braces as {{ and }})") from None


def queries(frame: pd.DataFrame, config: RunConfig) -> list[Query]:
    params = {"decoding": "greedy", "temperature": 0, "max_new_tokens": config.forecast.max_new_tokens,
              "dtype": config.model.dtype,
              "top_logprobs": TOP_LOGPROBS, "token_logprobs": "every generated token"}
    return [
        Query(TASK, config.model.model_id, str(row["row_id"]),
              canonical_json(chat(fill_prompt(config.forecast.prompt, row), config.forecast.system_prompt)),
              params)
        for _, row in frame.iterrows()
    ]


def _encode(generation: Generation) -> dict:
    return {"text": generation.text, "tokens": [t.to_json() for t in generation.tokens],
            "first_top": [t.to_json() for t in generation.first_top]}


def asker(config: RunConfig, backend: Backend):
    """The function asking a batch of forecast queries: greedy generation, every generated token's log-prob."""
    def ask(batch: list[Query]) -> list[dict]:
        chats = [json.loads(q.prompt) for q in batch]
        return [_encode(g) for g in backend.generate(chats, config.forecast.max_new_tokens, TOP_LOGPROBS)]

    return ask


def context_check(config: RunConfig, backend: Backend):
    """Prompts plus max_new_tokens longer than the model's context are refused before any is asked (batch.py)."""
    return lambda todo: check_context(backend, todo, lambda local, query: len(local.tokens.render(
        json.loads(query.prompt))), reserved=config.forecast.max_new_tokens, reserved_by="[forecast] max_new_tokens")


def run(config: RunConfig, layout: Layout, backend: Backend, confirm: Confirm) -> pd.DataFrame:
    """Ask the forecast of every row not in the cache (the parse rate checked on the first answers), then derive
    forecast.parquet."""
    check_parser(config)
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    ask_missing(TASK, queries(frame, config), cache, asker(config, backend), config.model, confirm, len(frame),
                check=context_check(config, backend),
                first_check=lambda first: check_first_answers(first, cache, config))
    return derive(config, layout)


def check_parser(config: RunConfig) -> None:
    try:
        re.compile(config.forecast.parse_regex)
    except re.error as err:
        raise ConfigError(f"[forecast] parse_regex is not a valid regular expression: {err}") from None


def parse_label(response: str, parse_regex: str, labels: dict[str, float]) -> str | None:
    """Group 1 of the first regex match, lower-cased, if it is a key of the label map; else None."""
    match = re.search(parse_regex, response, flags=re.IGNORECASE)
    if match is None or not match.groups():
        return None
    label = (match.group(1) or "").strip().lower()
    return label if label in labels else None


def label_token(tokens: list[TokenLogprob], parse_regex: str, label: str | None) -> TokenLogprob | None:
    """The generated token carrying the first character of the parsed `label` (paper Table IV's w_{N+1}).

    The parser runs on the concatenated decoded token strings (the text the log-probs belong to); None when
    there is no label, no token log-probs, or the parser finds another label there."""
    if label is None or not tokens:
        return None
    text = "".join(t.token for t in tokens)
    match = re.search(parse_regex, text, flags=re.IGNORECASE)
    group = (match.group(1) or "") if match is not None and match.groups() else ""
    if group.strip().lower() != label:
        return None
    start = match.start(1) + len(group) - len(group.lstrip())
    end = 0
    for token in tokens:
        end += len(token.token)
        if end > start:
            return token
    return None


def parse_confidence(response: str, confidence_regex: str) -> float:
    if not confidence_regex:
        return math.nan
    match = re.search(confidence_regex, response, flags=re.IGNORECASE)
    try:
        return float(match.group(1)) if match else math.nan
    except (IndexError, ValueError):
        return math.nan


def derive(config: RunConfig, layout: Layout) -> pd.DataFrame:
    """forecast.parquet from input.parquet and the cached responses alone (no model call)."""
    frame = read_parquet(layout.derived_file("input.parquet"))
    cache = ResponseCache(layout.raw_file(TASK))
    check_parser(config)
    rows = []
    for query, (_, row) in zip(queries(frame, config), frame.iterrows()):
        response = cache.response(query)
        label = parse_label(response["text"], config.forecast.parse_regex, config.forecast.labels)
        token = label_token([TokenLogprob.from_json(t) for t in response["tokens"]], config.forecast.parse_regex,
                            label)
        rows.append({
            "row_id": row["row_id"], "entity_id": row["entity_id"], "text_date": row["text_date"],
            "target_date": row["target_date"], "response": response["text"], "label": label,
            "parsed": label is not None,
            "mu_hat": config.forecast.labels[label] if label is not None else math.nan,
            "p_first": math.exp(token.logprob) if token is not None else math.nan,
            "label_token": token.token if token is not None else None,
            "confidence": parse_confidence(response["text"], config.forecast.confidence_regex),
            "cache_key": query.key,
        })
    result = pd.DataFrame(rows, columns=list(schema.FORECAST_COLUMNS))
    result["label_token"] = result["label_token"].astype("string")
    result["label"] = result["label"].astype("string")
    result["mu_hat"] = result["mu_hat"].astype("float64")
    result["confidence"] = result["confidence"].astype("float64")
    write_parquet(provenance.stamp(result, config, layout, TASK), layout.derived_file("forecast.parquet"))
    return result


FIRST_ANSWERS_LEVEL = 0.01
"""The first answers stop the run when the one-sided 99% Clopper-Pearson upper bound of their parse rate is below
[forecast] min_parse_rate: a full run could then reach the minimum only with probability below 1%."""


def answers_table(queries: list[Query], cache: ResponseCache, config: RunConfig) -> tuple[pd.DataFrame, int]:
    """(row_id, response, parsed) of answered forecast queries, and how many unparsed answers used every one of the
    [forecast] max_new_tokens tokens (cut before their end, perhaps before their label)."""
    rows, cut = [], 0
    for query in queries:
        response = cache.response(query)
        parsed = parse_label(response["text"], config.forecast.parse_regex, config.forecast.labels) is not None
        cut += not parsed and len(response["tokens"]) >= config.forecast.max_new_tokens
        rows.append({"row_id": query.query_id, "response": response["text"], "parsed": parsed})
    return pd.DataFrame(rows, columns=["row_id", "response", "parsed"]), cut


def check_first_answers(first: list[Query], cache: ResponseCache, config: RunConfig) -> None:
    """Protocol Step 1's sanity check on the first answers, before the rest is asked: ParseRateError (check_parse_rate)
    when even the upper bound of their parse rate (FIRST_ANSWERS_LEVEL) is below the minimum."""
    from scipy import stats

    answers, cut = answers_table(first, cache, config)
    parsed = int(answers["parsed"].sum())
    upper = 1.0 if parsed == len(answers) else float(stats.beta.ppf(1 - FIRST_ANSWERS_LEVEL, parsed + 1,
                                                                        len(answers) - parsed))
    if upper < config.forecast.min_parse_rate:
        check_parse_rate(answers, config, cut=cut, first=f" on the first {len(answers)} answers (its 99% upper bound "
                                                         f"{upper:.1%} too; the other queries were not asked)")


def check_parse_rate(forecast: pd.DataFrame, config: RunConfig, cut: int | None = None, first: str = "") -> float:
    """Protocol Step 1 sanity check: below `min_parse_rate`, show 10 unparsed examples and stop, unless the
    user gave the explicit override ([forecast] allow_low_parse_rate = true or --allow-low-parse-rate). The message
    names [forecast] max_new_tokens, which cuts every answer (with `cut`, how many unparsed answers it cut)."""
    rate = float(forecast["parsed"].mean()) if len(forecast) else 0.0
    if rate >= config.forecast.min_parse_rate or config.forecast.allow_low_parse_rate:
        return rate
    unparsed = int((~forecast["parsed"]).sum())
    examples = forecast.loc[~forecast["parsed"], ["row_id", "response"]].head(10)
    shown = "\n".join(f"  row_id {r.row_id}: {r.response!r}" for r in examples.itertuples())
    tokens = config.forecast.max_new_tokens
    length = (f"{cut} of the {unparsed} unparsed answers used all [forecast] max_new_tokens = {tokens} tokens: cut "
              f"there, perhaps before their label; raise max_new_tokens (e.g. to {max(32, 4 * tokens)}) if the "
              "prompt's answers are longer" if cut else
              f"every answer is cut at [forecast] max_new_tokens = {tokens} tokens: raise it if the prompt's answers "
              "are longer" if cut is None else
              f"no unparsed answer reached [forecast] max_new_tokens = {tokens} tokens, so none was cut")
    raise ParseRateError(
        f"parse rate {rate:.1%} is below {config.forecast.min_parse_rate:.1%}{first}: "
        f"{unparsed} of {len(forecast)} responses match no label of "
        f"{sorted(config.forecast.labels)} with parse_regex {config.forecast.parse_regex!r}. Unparsed examples:\n"
        f"{shown}\n{length}.\nThe prompt and parser are the object under test and are not changed silently: fix "
        "them in the config ([forecast] prompt, parse_regex, labels, max_new_tokens), or accept this rate "
        "explicitly with --allow-low-parse-rate ([forecast] allow_low_parse_rate = true)."
    )
