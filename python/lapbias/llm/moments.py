"""The next-token distribution's moments from its top-k, where a backend returns no more (vLLM, vLLM's server).

Min-K%++ (Zhang et al. 2024, eq. 3) standardises log p(x_t) by mu = E_p[log p] and sigma^2 = E_p[(log p)^2] − mu^2
over the whole vocabulary (zjysteven/mink-plus-plus run.py: `mu = (probs * log_probs).sum(-1)`); a server returns
only the k most likely tokens (vLLM caps k at 20 by default), and the realised token. Two approximations, chosen by
what is known:
- with the vocabulary size V ("rest spread", vLLM offline, or a server with `[model] tokenizer`): the returned tokens
  S with their own log-probs, and the probability they leave, r = 1 − sum_S p, spread evenly over the V − |S| others:
  mu ≈ sum_S p log p + r log(r / (V − |S|)), m2 ≈ sum_S p (log p)^2 + r log(r / (V − |S|))^2;
- without it ("renormalised"): the returned tokens weighted by their probabilities renormalised to sum to one (the
  field's advice against Recall Guard's unweighted top-k mean), w_i = p_i / sum_S p.
Measured on the bundled model against the whole vocabulary's moments (benchmarks/bench_measures.py): the spread rest
is much the closer. The top-1 log-prob (Gap-K%) is exact whenever k >= 1.
A server's candidates are keyed by token string (the OpenAI-compatible API returns no ids): two ids that decode
alike (a byte-fallback "\ufffd") are one entry there, and the realised token counts as returned when another id
with its string is: inherent to the API.
"""

from __future__ import annotations

import math
from typing import Iterable

from ..config import ModelConfig

MOMENT_TOP_K = 20
"""Candidates per prompt position behind the approximated moments: vLLM's default max_logprobs, so a server started
with its defaults returns them."""


def mode(model: ModelConfig) -> str:
    """Which distribution the moments of a Min-K% pass come from: "vocabulary" (the transformers backend's whole
    softmax), "top-20, rest spread" (vLLM offline; a server with `[model] tokenizer`, whose length is V) or "top-20
    renormalised" (a server without; module docstring). It names the Min-K% cache keys: two backends that give
    different moments never share an answer."""
    if model.backend == "transformers":
        return "vocabulary"
    known = model.backend == "vllm" or bool(model.tokenizer)
    return f"top-{MOMENT_TOP_K}, rest spread" if known else f"top-{MOMENT_TOP_K} renormalised"


def from_top(logprobs: Iterable[float], vocabulary: int = 0) -> tuple[float, float, float]:
    """(mu, m2, top1) from distinct tokens' log-probs at one position (the top-k, and the realised token): the rest
    spread over `vocabulary` tokens when it is given (> the tokens returned), else renormalised."""
    values = [float(v) for v in logprobs if v is not None and math.isfinite(float(v))]
    if not values:
        return math.nan, math.nan, math.nan
    top1 = max(values)
    if vocabulary > len(values):
        probabilities = [math.exp(v) for v in values]
        rest = max(0.0, 1.0 - sum(probabilities))
        each = math.log(rest / (vocabulary - len(values))) if rest > 0 else 0.0
        mu = sum(p * v for p, v in zip(probabilities, values)) + rest * each
        m2 = sum(p * v * v for p, v in zip(probabilities, values)) + rest * each * each
        return mu, m2, top1
    weights = [math.exp(v - top1) for v in values]  # shifted by the top-1: no underflow
    total = sum(weights)
    mu = sum(w * v for w, v in zip(weights, values)) / total
    m2 = sum(w * v * v for w, v in zip(weights, values)) / total
    return mu, m2, top1
