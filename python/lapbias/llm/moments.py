"""The next-token distribution's moments from its top-k, where a backend returns no more (vLLM, vLLM's server).

Min-K%++ (Zhang et al. 2024, eq. 3) standardises log p(x_t) by mu = E_p[log p] and sigma^2 = E_p[(log p)^2] − mu^2
over the whole vocabulary (zjysteven/mink-plus-plus run.py: `mu = (probs * log_probs).sum(-1)`); a server returns
only the k most likely tokens (vLLM caps k at 20 by default). The approximation here weights the returned tokens by
their probabilities renormalised to sum to one (the field's advice against Recall Guard's unweighted top-k mean),
the realised token included when it lies outside the top-k: mu ≈ sum_i w_i log p_i, m2 ≈ sum_i w_i (log p_i)^2,
w_i = p_i / sum_j p_j. The top-1 log-prob (Gap-K%) is exact whenever k >= 1. Measured against the exact moments on
the bundled model: benchmarks/bench_measures.py.
"""

from __future__ import annotations

import math
from typing import Iterable

MOMENT_TOP_K = 20
"""Candidates per prompt position behind the approximated moments: vLLM's default max_logprobs, so a server started
with its defaults returns them."""


def mode(backend: str) -> str:
    """Which distribution the moments of a Min-K% pass come from ("vocabulary": the transformers backend's whole
    softmax; "top-20": vLLM's and servers' candidates). It names the Min-K% cache keys: two backends that give
    different moments never share an answer."""
    return "vocabulary" if backend == "transformers" else f"top-{MOMENT_TOP_K}"


def from_top(logprobs: Iterable[float]) -> tuple[float, float, float]:
    """(mu, m2, top1) from distinct tokens' log-probs at one position (the top-k, and the realised token)."""
    values = [float(v) for v in logprobs if v is not None and math.isfinite(float(v))]
    if not values:
        return math.nan, math.nan, math.nan
    top1 = max(values)
    weights = [math.exp(v - top1) for v in values]  # shifted by the top-1: no underflow
    total = sum(weights)
    mu = sum(w * v for w, v in zip(weights, values)) / total
    m2 = sum(w * v * v for w, v in zip(weights, values)) / total
    return mu, m2, top1
