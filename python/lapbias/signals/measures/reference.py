"""Min-K% against a reference model: LAP = log Min-K% prob (Shi et al. 2023, eq. 1) of the text under the target
model minus log Min-K% under [minkprob] reference_model, i.e. the mean of the K% lowest token log-probs under the
target minus the same under the reference. It is the reference-model calibration of how familiar a text is anyway:
Carlini et al. (2021) compare the target's perplexity with a reference model's (as a ratio), the Min-K%++ authors'
run_ref.py takes the difference of the mean log-likelihoods; here with Min-K%, the paper's LAP, as a difference in
nats. Both models must tokenize the text alike (a smaller model of the same family: signals/minkprob.py refuses
another tokenizer). A text every model finds easy scores near 0; one the target alone finds easy (memorized) scores
above. Its variation gate reads it as a log-ratio (a factor 1 + min_lap_relative_gap: Min-K%'s 5%).
"""

from __future__ import annotations

import math

import numpy as np

from ...config import RunConfig
from .base import ScoredText, TextMeasure
from .minkprob import lowest_mean


class ReferenceMinK(TextMeasure):
    name = "ref"
    column = "lap_ref"
    title = "Min-K% vs reference"
    source = ("Carlini et al. (2021) and the Min-K%++ authors' run_ref.py: a reference model's log-likelihood "
              "subtracted, here with Min-K% prob (Shi et al. 2023, eq. 1)")
    gap = "log"
    calibration_prefix = "ref"
    axis = ("log Min-K% (target) - log Min-K% (reference)", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return (f"LAP = log Min-K% prob (K = {config.minkprob.k:.0%}) under the model minus under the reference "
                f"model {config.minkprob.reference_model}")

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        if scored.reference is None or not scored.logprobs.size or not scored.reference.logprobs.size:
            return math.nan
        # log Min-K% prob is the mean of the K% lowest log-probs (no exp and log round trip)
        return lowest_mean(scored.logprobs, config.minkprob.k) - lowest_mean(scored.reference.logprobs,
                                                                              config.minkprob.k)
