"""The backend interface: the three model operations the signals need (issue "backends", item 1).

1. `generate`: greedy short generation (protocol Step 1, forecast), with the top-k log-probs at the first
   generated position (paper Table IV: probability of the first answer token).
2. `next_token_logprobs`: top-k (k = 20) next-token log-probs at the answer position (protocol Step 2, recall).
3. `prompt_logprobs`: log P(w_n | w_<n) of every prompt token (paper eq. 1, Min-K% prob).

A chat is a list of {"role", "content"} messages; the backend applies the model's own chat template (for an
HTTP server, the server does). Raw text (Min-K%) is scored as it is, with no template.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, Sequence

Chat = list[dict[str, str]]


@dataclass(frozen=True)
class TokenLogprob:
    """One candidate token: its id, its decoded string and its log-probability (natural log)."""

    token_id: int
    token: str
    logprob: float

    def to_json(self) -> list:
        """[id, token, logprob]; an unknown log-prob (an endpoint that returns none) is JSON null, not NaN."""
        return [self.token_id, self.token, None if math.isnan(self.logprob) else self.logprob]

    @classmethod
    def from_json(cls, value: list) -> "TokenLogprob":
        return cls(int(value[0]), str(value[1]), math.nan if value[2] is None else float(value[2]))


@dataclass(frozen=True)
class Generation:
    """A greedy completion: its text and the top-k candidates at the first generated position.

    `first_token` is the generated first token itself (its logprob gives p_first = exp(logprob)).
    """

    text: str
    first_token: TokenLogprob
    first_top: tuple[TokenLogprob, ...]


def chat(user: str, system: str = "") -> Chat:
    """A one-turn chat; an empty system prompt leaves the model's template default in place."""
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    return messages


class Backend(Protocol):
    """What every backend (transformers, vLLM, OpenAI-compatible HTTP) provides."""

    model_id: str
    """The model identity that enters the cache key (the model, never the endpoint)."""

    def generate(self, chats: Sequence[Chat], max_new_tokens: int, top_logprobs: int) -> list[Generation]:
        ...

    def next_token_logprobs(self, chats: Sequence[Chat], top_logprobs: int) -> list[list[TokenLogprob]]:
        ...

    def prompt_logprobs(self, texts: Sequence[str]) -> list[list[TokenLogprob]]:
        """Per text: the log-prob of every token after the first (the first has no context)."""
        ...

    def label_token_ids(self, label: str) -> list[int]:
        """The token ids of `label` as the model would emit it at the answer position."""
        ...

    def seconds_per_query(self, task: str) -> float:
        """A rough compute-time estimate for one query of `task`, shown before a batch starts."""
        ...

    def describe(self) -> dict[str, str]:
        ...
