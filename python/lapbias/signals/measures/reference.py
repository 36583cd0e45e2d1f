"""Min-K% against a reference model (the reference-model calibration of Carlini et al. 2021, "Extracting training
data from large language models", there with the perplexity; here with Min-K% prob, paper eq. 1): LAP = log Min-K%
of the text under the target model minus log Min-K% under [minkprob] reference_model, i.e. the mean of the K% lowest
token log-probs under the target minus the same under the reference, each model on its own tokens. A text every
model finds easy scores near 0; one the target alone finds easy (memorized) scores above. Zero is natural (equally
familiar to both) but the scale is nats, so the variation gate asks that the halves differ.
"""

from __future__ import annotations

import math

import numpy as np

from ...config import RunConfig
from .base import ScoredText, TextMeasure
from .minkprob import min_k_prob


def lowest_log_mean(logprobs: np.ndarray, k: float) -> float:
    """log Min-K% prob: the mean of the max(1, floor(k n)) lowest log-probs (NaN for none)."""
    value = min_k_prob(logprobs, k)[0]
    return math.log(value) if value > 0 else math.nan


class ReferenceMinK(TextMeasure):
    name = "ref"
    column = "lap_ref"
    title = "Min-K% vs reference"
    source = "Carlini et al. (2021), reference-model calibration, with Min-K% prob (Shi et al. 2023, eq. 1)"
    gap = "spread"
    calibration_prefix = "ref"
    axis = ("log Min-K% (target) - log Min-K% (reference)", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return (f"LAP = log Min-K% prob (K = {config.minkprob.k:.0%}) under the model minus under the reference "
                f"model {config.minkprob.reference_model}")

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        if scored.reference is None or not scored.logprobs.size or not scored.reference.logprobs.size:
            return math.nan
        return lowest_log_mean(scored.logprobs, config.minkprob.k) - lowest_log_mean(scored.reference.logprobs,
                                                                                      config.minkprob.k)
