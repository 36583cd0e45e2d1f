"""The backend interface: the three model operations the signals need (issue "backends", item 1).

1. `generate`: greedy short generation (protocol Step 1, forecast), with the log-prob of every generated token
   (paper Table IV: p(w_{N+1}) is the probability of the answer's label token, which signals/forecast.py finds
   among them) and the top-k at the first generated position.
2. `next_token_logprobs`: top-k (k = 20) next-token log-probs at the answer position (protocol Step 2, recall).
3. `prompt_logprobs`: log P(w_n | w_<n) of every prompt token (paper eq. 1, Min-K% prob); `prompt_scores` adds,
   at each scored position, the moments and the top-1 of the next-token distribution that Min-K%++ and Gap-K%
   read (PromptScore), from the same forward pass.

The local backends (transformers, vLLM offline) see the whole next-token distribution and also provide
`label_variants` and `answer_logprobs` (LocalBackend below): the exact log-prob of every token that decodes to a
recall label, so the recall probabilities need no top-k and are never censored (signals/recall.py).

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
    """A greedy completion: its text, every generated token with its log-prob (in order, up to and including an
    end-of-sequence token; empty when the endpoint returns no log-probs), and the top-k candidates at the first
    generated position."""

    text: str
    tokens: tuple[TokenLogprob, ...]
    first_top: tuple[TokenLogprob, ...]

    @property
    def first_token(self) -> TokenLogprob:
        """The first generated token (log-prob NaN when the endpoint returned none)."""
        return self.tokens[0] if self.tokens else TokenLogprob(-1, "", math.nan)


@dataclass(frozen=True)
class AnswerLogprobs:
    """The answer position of one chat: its top-k candidates and the log-probs of requested token ids."""

    top: tuple[TokenLogprob, ...]
    requested: tuple[TokenLogprob, ...]


@dataclass(frozen=True)
class PromptScore:
    """One raw text's prompt pass: every token after the first with its log-prob, and at each of those positions
    (mu, m2, top1) of the next-token distribution p: mu = sum_v p(v) log p(v), m2 = sum_v p(v) (log p(v))^2 (Min-K%++,
    Zhang et al. 2024, eq. 3) and top1 = max_v log p(v) (Gap-K%, Kwak & Kim 2026). Over the whole vocabulary where
    `top_k` = 0 (the transformers backend); from the `top_k` most likely tokens (llm/moments.py) on vLLM and servers."""

    tokens: tuple[TokenLogprob, ...]
    moments: tuple[tuple[float, float, float], ...]
    top_k: int


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

    def prompt_scores(self, texts: Sequence[str]) -> list[PromptScore]:
        """Per text: `prompt_logprobs` with the next-token distribution's moments and top-1 at each position."""
        ...

    def label_token_ids(self, label: str) -> list[int]:
        """The token ids of `label` as the model would emit it at the answer position."""
        ...

    def describe(self) -> dict[str, str]:
        ...


class LocalBackend(Backend, Protocol):
    """A backend holding the model (transformers, vLLM offline): the whole next-token distribution is at hand."""

    def label_variants(self, label: str) -> list[int]:
        """Every token id whose decoded string, stripped and lower-cased, equals the stripped, lower-cased label
        (with and without a leading space, in any case: " up", "Up", "UP", ...)."""
        ...

    def answer_logprobs(self, chats: Sequence[Chat], top_logprobs: int,
                        token_ids: Sequence[int]) -> list[AnswerLogprobs]:
        """Per chat: the top-k at the answer position and the exact log-prob there of every id in `token_ids`."""
        ...
