"""The schema and laws of a cached line and of its response, per task.

A cached line is trusted only when it has the shape of ARCHITECTURE.md's cache line and its response obeys the
laws of what it claims to be: a log-probability is a number <= 0 (natural log; 1e-4 of float32 rounding allowed), the
probabilities of distinct candidate tokens at one position sum to at most 1 (+1e-3: servers round), a token id
is an integer and a token a string. Responses may carry extra keys (a later version's additions); the keys read
by the signals must be there with these types.
"""

from __future__ import annotations

import math
import re
from typing import Any

LINE_FIELDS = {"key": str, "task": str, "model_id": str, "query_id": str, "prompt": str, "params": dict}
LOGPROB_TOLERANCE = 1e-4
MASS_TOLERANCE = 1e-3


def check_line(record: Any) -> str | None:
    """What is wrong with a parsed cache line's shape, or None."""
    if not isinstance(record, dict):
        return f"is a JSON {type(record).__name__}, not an object with keys {sorted(LINE_FIELDS)} and response"
    missing = [k for k in (*LINE_FIELDS, "response") if k not in record]
    if missing:
        return f"lacks key(s) {missing}"
    wrong = [f"{k} ({type(record[k]).__name__}, not {t.__name__})" for k, t in LINE_FIELDS.items()
             if not isinstance(record[k], t)]
    return f"has key(s) of the wrong type: {', '.join(wrong)}" if wrong else None


def _candidate(value: Any, where: str, nullable: bool) -> str | None:
    """[token_id, token, logprob]: int, str, number <= 0 (or null where an endpoint may return none)."""
    if not isinstance(value, list) or len(value) != 3:
        return f"{where} is {value!r}, not [token_id, token, logprob]"
    token_id, token, logprob = value
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        return f"{where} has token id {token_id!r}, not an integer"
    if not isinstance(token, str):
        return f"{where} has token {token!r}, not a string"
    if logprob is None:
        return None if nullable else f"{where} has no log-prob (null)"
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)) or math.isnan(logprob):
        return f"{where} has log-prob {logprob!r}, not a number"
    if logprob > LOGPROB_TOLERANCE:
        return f"{where} has log-prob {logprob:+g} > 0 (a probability above 1)"
    return None


def _candidates(values: Any, where: str, nullable: bool, one_position: bool) -> str | None:
    if not isinstance(values, list):
        return f"{where} is {type(values).__name__}, not a list of [token_id, token, logprob]"
    for index, value in enumerate(values):
        problem = _candidate(value, f"{where}[{index}]", nullable)
        if problem:
            return problem
    if one_position:  # alternatives at one position: distinct tokens' probabilities sum to at most 1
        mass = sum(math.exp(lp) for _, _, lp in {v[0]: v for v in values}.values() if lp is not None)
        if mass > 1 + MASS_TOLERANCE:
            return f"{where}: the probabilities of its distinct tokens sum to {mass:.4g} > 1"
    return None


def _exact_labels(labels: Any) -> str | None:
    """Exact label probabilities (signals/recall.py ask_exact): {label: [[id, token, logprob], ...]}, every
    log-prob <= 0, and the distinct token ids of all labels together at most probability 1 (one position)."""
    if labels is None:
        return None
    if not isinstance(labels, dict):
        return f"response labels is {type(labels).__name__}, not an object of label -> tokens"
    for label, values in labels.items():
        problem = _candidates(values, f"response labels[{label!r}]", nullable=False, one_position=False)
        if problem:
            return problem
    every = [v for values in labels.values() for v in values]
    return _candidates(every, "response labels (all labels)", nullable=False, one_position=True)


SPECIAL_TOKEN = re.compile(r"^<\|?[^<>\s]+\|?>$")
"""A special token's string (<|im_end|>, <|eot_id|>, <s>): decoded answers skip them, the token list keeps them."""
UNSPELLED = re.compile(r"\ufffd|\\x[0-9a-fA-F]{2}|^bytes:")
"""A token string that does not spell its characters: U+FFFD (one character split over tokens, each decoded alone)
or the escaped bytes some servers write for a partial character (\\xf0, bytes:...)."""


def _text_of_tokens(text: str, tokens: list) -> str | None:
    """A generated answer is spelled by its tokens: with white space and special tokens (SPECIAL_TOKEN) left out,
    the text is part of the tokens' strings joined (generation may run past an end-of-turn token). An answer edited
    in the cache while its tokens spell the old one (mu_hat 1 -> -1) breaks it. Not checked without tokens (an
    endpoint that returns no log-probs), or when a token string does not spell its characters (UNSPELLED, or an
    empty string while the text is not)."""
    pieces = [token for _, token, _ in tokens if not SPECIAL_TOKEN.match(token)]
    joined = "".join(pieces)
    if not pieces or any(UNSPELLED.search(piece) or (piece == "" and text) for piece in pieces):
        return None
    if re.sub(r"\s+", "", text) not in re.sub(r"\s+", "", joined):
        return (f"response text {text[:60]!r} is not what its tokens spell ({joined[:60]!r}): the answer was edited "
                "after the model gave it")
    return None


def check_response(task: str, response: Any) -> str | None:
    """What breaks the schema or the laws of a `task` response, or None (unknown tasks are not checked)."""
    if task not in ("forecast", "recall", "minkprob"):
        return None
    if not isinstance(response, dict):
        return f"response is a JSON {type(response).__name__}, not an object"
    needed = {"forecast": ("text", "tokens", "first_top"), "recall": ("top",), "minkprob": ("tokens",)}[task]
    missing = [k for k in needed if k not in response]
    if missing:
        return f"response lacks key(s) {missing}"
    if task == "forecast":
        if not isinstance(response["text"], str):
            return "response text is not a string"
        return (_candidates(response["tokens"], "response tokens", nullable=True, one_position=False)
                or _candidates(response["first_top"], "response first_top", nullable=True, one_position=True)
                or _text_of_tokens(response["text"], response["tokens"]))
    if task == "recall":
        problem = (_candidates(response["top"], "response top", nullable=False, one_position=True)
                   or _exact_labels(response.get("labels")))
        n_samples = response.get("n_samples", 0)
        if not problem and (isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 0):
            problem = f"response n_samples = {n_samples!r} is not a count"
        return problem
    return (_candidates(response["tokens"], "response tokens", nullable=False, one_position=False)
            or _moments(response.get("moments"), response["tokens"], response.get("top_k", 0)))


def _moments(moments: Any, tokens: list, top_k: Any) -> str | None:
    """A Min-K% answer's next-token moments (signals/minkprob.py): one [mu, m2, top1] per scored token (numbers, or
    null where the backend returned none), obeying what a distribution's moments must: mu = E[log p] <= top1 =
    max log p <= 0, the realised token's log-prob <= top1, and the variance m2 - mu^2 >= 0 (LOGPROB_TOLERANCE, and
    its relative size on m2, for rounding); `top_k` a count. Answers written before the moments were kept pass."""
    if moments is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        return f"response top_k = {top_k!r} is not a count"
    if not isinstance(moments, list) or len(moments) != len(tokens):
        return f"response moments is not a list of one [mu, m2, top1] per token ({len(tokens)} tokens)"
    for index, (row, token) in enumerate(zip(moments, tokens)):
        where = f"response moments[{index}]"
        if not isinstance(row, list) or len(row) != 3:
            return f"{where} is {row!r}, not [mu, m2, top1]"
        if any(v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v))
               for v in row):
            return f"{where} = {row!r} holds something other than numbers or null"
        if any(v is None for v in row):
            continue
        mu, m2, top1 = row
        tolerance = LOGPROB_TOLERANCE * max(1.0, abs(m2))
        if top1 > LOGPROB_TOLERANCE or mu > top1 + tolerance or token[2] > top1 + tolerance:
            return (f"{where}: mu {mu:+g}, top-1 {top1:+g} and the token's log-prob {token[2]:+g} break "
                    "mu <= top-1 <= 0 or log p(token) <= top-1")
        if m2 - mu * mu < -tolerance:
            return f"{where}: m2 {m2:g} < mu^2 {mu * mu:g} (a negative variance)"
    return None
