"""Min-K%++ (Zhang et al. 2024, "Min-K%++: Improved baseline for detecting pre-training data", eq. 3-4): each scored
token's log-prob standardised by the next-token distribution at its position,

    z_n = (log p(w_n | w_<n) − mu_n) / sigma_n,   mu_n = E_{v~p}[log p(v)],   sigma_n^2 = E_{v~p}[(log p(v))^2] − mu_n^2,

and LAP = the mean of the K% lowest z_n, K = [minkprob] k (the authors' code, zjysteven/mink-plus-plus run.py, with
|S_K| = max(1, floor(K n)) as Min-K% here, and sigma_n^2 floored at 1e-8 as the Gap-K% authors' code does, which
binds only on a one-hot distribution). Higher = member. Exact on the transformers backend (the whole vocabulary);
from the top-20 on vLLM and servers (llm/moments.py), marked approximated (minkprob.parquet moments_top_k > 0)."""

from __future__ import annotations

import math

import numpy as np

from ...config import RunConfig
from .base import ScoredText, TextMeasure
from .minkprob import lowest_mean

MIN_VARIANCE = 1e-8
"""sigma_n^2 floor (meaoww/gap-k wikimia.py: `torch.clamp(sigma, min=1e-8)`)."""


def standardised(scored: ScoredText, centre: np.ndarray) -> np.ndarray:
    """(log p(w_n) − centre_n) / sigma_n: Min-K%++ with centre mu, Gap-K% with centre the top-1 log-prob."""
    variance = np.maximum(scored.m2 - scored.mu ** 2, MIN_VARIANCE)
    return (scored.logprobs - centre) / np.sqrt(variance)


class MinKPlusPlus(TextMeasure):
    name = "minkpp"
    column = "lap_minkpp"
    title = "Min-K%++"
    source = "Zhang et al. (2024), eq. 3-4 (zjysteven/mink-plus-plus)"
    needs_moments = True
    calibration_prefix = "minkpp"
    axis = ("Min-K%++ (mean of the K% lowest standardised log-probs)", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return f"LAP = Min-K%++ (K = {config.minkprob.k:.0%}): the mean of the lowest standardised token log-probs"

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        if not scored.has_moments:
            return math.nan
        return lowest_mean(standardised(scored, scored.mu), config.minkprob.k)
