"""Gap-K% (Kwak & Kim 2026, "Gap-K%: Measuring top-1 prediction gap for detecting pretraining data"): the gap between
each scored token's log-prob and the top-1 log-prob at its position, in units of the distribution's spread,

    g_n = (log p(w_n | w_<n) − max_v log p(v | w_<n)) / sigma_n   (sigma_n as Min-K%++'s, sigma_n^2 floored at 1e-8),

smoothed by a moving mean over w = [minkprob] gap_window consecutive tokens (n − w + 1 windows; the raw g_n when the
text has fewer than w), and LAP = the mean of the K% lowest smoothed values, |S_K| = max(1, floor(K · windows)), K =
[minkprob] k: the authors' code (meaoww/gap-k wikimia.py `window_lowmean`, RATIO 0.2, window 3 for the Pythia and
Mamba models, 6 for LLaMA), except that a text with no scored token has no score (NaN) rather than 0. g_n <= 0;
higher = member. The top-1 is exact everywhere; sigma_n exact on the transformers backend, from the top-20 on vLLM
and servers (llm/moments.py)."""

from __future__ import annotations

import math

import numpy as np

from ...config import RunConfig
from .base import ScoredText, TextMeasure
from .minkpp import standardised
from .minkprob import lowest_mean


def window_means(values: np.ndarray, window: int) -> np.ndarray:
    """Moving means over `window` consecutive values (numpy's valid convolution); the values when fewer."""
    if values.size < window:
        return values
    return np.convolve(values, np.ones(window) / window, mode="valid")


class GapK(TextMeasure):
    name = "gapk"
    column = "lap_gapk"
    title = "Gap-K%"
    source = "Kwak & Kim (2026), arXiv 2601.19936 (meaoww/gap-k)"
    needs_moments = True
    calibration_prefix = "gapk"
    axis = ("Gap-K% (mean of the K% lowest windowed top-1 gaps)", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return (f"LAP = Gap-K% (K = {config.minkprob.k:.0%}, window {config.minkprob.gap_window}): the mean of the "
                "lowest windowed gaps to the top-1 log-prob")

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        if not scored.has_moments:
            return math.nan
        gaps = standardised(scored, scored.top1)
        return lowest_mean(window_means(gaps, config.minkprob.gap_window), config.minkprob.k)
