"""LLM prediction rule g(x) (ESS paper §2.2, §5.2): a persona prompt filled from the covariates, asked through
lapbias's backends (llm/) with every answer in the raw-response cache data/raw/ess.jsonl (llm/cache.py).

- Discrete outcome: the next-token log-probs at the answer position (top 20) are read, and the prediction is
  the label whose first token carries the largest log-prob among the labels' first tokens present (a token
  counts for a label when its stripped, lower-cased text is a non-empty prefix of exactly that label).
  Deterministic and independent of how a small model phrases its answer. No label in the top 20 → the row is
  unanswered; it is then scored as a wrong prediction (conservative against the LLM) and counted in the
  report (`llm_unanswered`).
- Continuous outcome: greedy generation of `max_new_tokens` tokens; the first number in the answer is the
  prediction. An answer without a number is an error naming the row (no silent default).
The model is never tuned on the data and sees no examples from it (§5.2).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from ..errors import ConfigError, InputDataError
from ..llm.base import Backend, chat
from ..llm.cache import Query, ResponseCache, canonical_json
from .config import EssConfig, Outcome

TASK = "ess"
TOP_LOGPROBS = 20
NUMBER = re.compile(r"(?P<grouped>-?\d{1,3}(?:,\d{3})+(?![\d,])(?:\.\d+)?)|-?\d+(?:[.,]\d+)?")
"""A number: with thousands groups ("45,000", "1,250,000.5") or a plain decimal with point or comma ("12.5", "12,5")."""
UNANSWERED = "__unanswered__"


def _word(value, labels: dict) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return labels.get(str(value), str(value))


def persona(template: str, row: pd.Series, value_labels: dict, where: str) -> str:
    """The template with each {column} replaced by the row's value, in words where [ess.value_labels] has them."""
    values = {column: _word(row[column], value_labels.get(column, {})) for column in row.index}
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(f"{where} prompt has a placeholder that cannot be filled ({err}); placeholders are "
                          f"column names, e.g. {{age}} (write literal braces as {{{{ and }}}})") from None


def queries(frame: pd.DataFrame, config: EssConfig, outcome: Outcome) -> list[Query]:
    where = f"[ess.outcomes] {outcome.name!r}"
    if outcome.discrete:
        params = {"read": "next_token_logprobs", "top_logprobs": TOP_LOGPROBS, "dtype": config.model.dtype}
    else:
        params = {"decoding": "greedy", "temperature": 0, "max_new_tokens": outcome.max_new_tokens,
                  "dtype": config.model.dtype}
    return [Query(TASK, config.model.model_id, f"{outcome.name}:{int(row['ess_row'])}",
                  canonical_json(chat(persona(outcome.prompt, row, config.value_labels, where), outcome.system_prompt)),
                  params) for _, row in frame.iterrows()]


def choose_label(top: list, labels: dict) -> object:
    """The outcome value of the label with the highest first-token log-prob in `top` ([id, token, logprob])."""
    names = [str(label).lower() for label in labels]
    best, best_logprob = UNANSWERED, -np.inf
    for _, token, logprob in top:
        text = str(token).strip().lower()
        owners = [name for name in names if text and name.startswith(text)]
        if len(owners) == 1 and logprob is not None and logprob > best_logprob:
            best, best_logprob = owners[0], logprob
    lookup = {str(label).lower(): value for label, value in labels.items()}
    return lookup.get(best, UNANSWERED)


def parse_number(text: str) -> float:
    """The first number in the answer; a comma followed by exactly three digits groups thousands, any other comma
    is a decimal comma."""
    match = NUMBER.search(text)
    if not match:
        return np.nan
    if match.group("grouped"):
        return float(match.group(0).replace(",", ""))
    return float(match.group(0).replace(",", "."))


def predict(frame: pd.DataFrame, config: EssConfig, outcome: Outcome, backend: Backend, cache: ResponseCache,
            confirm) -> pd.DataFrame:
    """Ask what is not cached, then one row per analysis row: ess_row, response, llm_prediction."""
    from ..signals.batch import ask_missing

    todo = queries(frame, config, outcome)

    def ask(batch: list[Query]) -> list:
        chats = [json.loads(q.prompt) for q in batch]
        if outcome.discrete:
            return [[t.to_json() for t in top] for top in backend.next_token_logprobs(chats, TOP_LOGPROBS)]
        return [{"text": g.text} for g in backend.generate(chats, outcome.max_new_tokens, 1)]

    ask_missing(f"{TASK} {outcome.name}", todo, cache, ask, config.model.queries_per_batch,
                lambda: config.model.seconds_per_query or backend.seconds_per_query("forecast"), confirm, len(frame))
    rows = []
    for query, (_, row) in zip(todo, frame.iterrows()):
        response = cache.response(query)
        if outcome.discrete:
            value, shown = choose_label(response, outcome.labels), canonical_json(response[:3])
        else:
            value, shown = parse_number(response["text"]), response["text"]
            if np.isnan(value):
                raise InputDataError(f"[ess.outcomes] {outcome.name!r}: the model's answer for row {int(row['ess_row'])} "
                                     f"has no number ({shown!r}); change the prompt so it asks for a number, or give "
                                     "the predictions in llm_column")
        rows.append({"ess_row": int(row["ess_row"]), "response": shown, "llm_prediction": value,
                     "cache_key": query.key})
    return pd.DataFrame(rows)
