"""LLM prediction rule g(x) (ESS paper §2.2, §5.2): a persona prompt filled from the covariates, asked through
lapbias's backends (llm/) with every answer in the raw-response cache data/raw/ess.jsonl (llm/cache.py).

The model's answer is its greedy completion of the chat (its chat template, `max_new_tokens` tokens), and the
prediction is read from what it wrote:

- Discrete outcome: the label the answer BEGINS WITH (case ignored; leading spaces, quotes, asterisks and
  similar marks skipped; the label must end at a word boundary, so "Doles" is not "Dole"; several words may share
  a value, e.g. labels = {Clinton = 0, "Bill Clinton" = 0, Dole = 1}, and the longest match counts). An answer that
  begins with no label ("I'm not sure ...") is UNANSWERED: counted and shown in the report, and scored as a wrong
  prediction (conservative against the LLM). Why not the labels' next-token log-probs, or a forced choice among
  the labels' whole continuations: both always produce a label, even when the model would write something else
  (a 135M model gives its first token "I" to every persona, yet its letter "D" outranks "Cl", which read as "Dole"
  for every row); checking that the model's own greedy path spells the label, which any choice needs to call a
  prompt answered, is this rule. It needs only generation, which every backend has, hosted APIs included.
- Continuous outcome: the first number in the answer is the prediction. An answer without a number is an error
  naming the row (no silent default).
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
    params = {"decoding": "greedy", "temperature": 0, "max_new_tokens": outcome.max_new_tokens,
              "dtype": config.model.dtype}
    return [Query(TASK, config.model.model_id, f"{outcome.name}:{int(row['ess_row'])}",
                  canonical_json(chat(persona(outcome.prompt, row, config.value_labels, where), outcome.system_prompt)),
                  params) for _, row in frame.iterrows()]


LEADING_MARKS = " \t\n\r\"'`*_-:>([{“”‘’«»"


def choose_label(answer: str, labels: dict) -> object:
    """The outcome value of the label the answer begins with (module docstring), else UNANSWERED."""
    text = str(answer).lstrip(LEADING_MARKS).lower()
    best, length = UNANSWERED, 0
    for label, value in labels.items():
        word = str(label).strip().lower()
        if len(word) > length and text.startswith(word) and not text[len(word):len(word) + 1].isalnum():
            best, length = value, len(word)
    return best


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
        return [{"text": g.text} for g in backend.generate(chats, outcome.max_new_tokens, 1)]

    ask_missing(f"{TASK} {outcome.name}", todo, cache, ask, config.model, confirm, len(frame))
    rows = []
    for query, (_, row) in zip(todo, frame.iterrows()):
        shown = cache.response(query)["text"]
        if outcome.discrete:
            value = choose_label(shown, outcome.labels)
        else:
            value = parse_number(shown)
            if np.isnan(value):
                raise InputDataError(f"[ess.outcomes] {outcome.name!r}: the model's answer for row {int(row['ess_row'])} "
                                     f"has no number ({shown!r}); change the prompt so it asks for a number, or give "
                                     "the predictions in llm_column")
        rows.append({"ess_row": int(row["ess_row"]), "response": shown, "llm_prediction": value,
                     "cache_key": query.key})
    return pd.DataFrame(rows)
