"""Min-K% prob (paper eq. 1, Shi et al. 2023): LAP = exp of the mean of the K% lowest token log-probs, K = [minkprob]
k (which tokens count: signals/minkprob.py)."""

from __future__ import annotations

import math

import numpy as np

from ...config import RunConfig
from .base import ScoredText, TextMeasure


def n_lowest(n: int, k: float) -> int:
    """|S_K| = max(1, floor(k n)): how many of a text's n scored tokens are the K% lowest (at least one)."""
    return max(1, int(math.floor(k * n)))


def lowest_mean(values: np.ndarray, k: float) -> float:
    """The mean of the n_lowest(n, k) lowest of n values (NaN for none): the log of Min-K% prob for log-probs, and
    the same rule over Min-K%++'s and Gap-K%'s per-token scores."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return math.nan
    return float(np.sort(values)[:n_lowest(values.size, k)].mean())


def min_k_prob(token_logprobs: list[float] | np.ndarray, k: float) -> tuple[float, int]:
    """(LAP, |S_K|) for one text from the log-probs of its scored tokens (paper eq. 1)."""
    values = np.asarray(token_logprobs, dtype=np.float64)
    if values.size == 0:
        return math.nan, 0
    return math.exp(lowest_mean(values, k)), n_lowest(values.size, k)


MINK_FACTOR = 1e4
"""The paper reports Min-K% LAP coefficients per unit of LAP x 10^4 (Min-K% prob of a prompt is about 1e-4)."""


class MinKProb(TextMeasure):
    name = "minkprob"
    column = "lap_mink"
    title = "Min-K%"
    source = "Shi et al. (2023), eq. 1"
    display_factor = MINK_FACTOR
    log_scale = True
    probability = True
    calibration_prefix = "mink"
    axis = ("Min-K% prob (paper eq. 1), log scale", "log")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return (f"LAP = Min-K% prob (K = {config.minkprob.k:.0%})" + ("" if standardized else
                " x 10^4, as the paper reports it; results/*.csv hold raw units"))

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        return min_k_prob(scored.logprobs, config.minkprob.k)[0]
