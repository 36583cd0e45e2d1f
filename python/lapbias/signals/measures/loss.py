"""The loss (LOSS attack; Yeom et al. 2018, Carlini et al. 2021) on the probability scale: LAP = exp(ll), ll = the mean
of log P(w_n | w_<n) over the scored tokens, the geometric-mean token probability (1/perplexity; Min-K% prob with
K = 100%). log LAP is the Min-K%++ authors' `loss` score (zjysteven/mink-plus-plus run.py: `ll = -loss.item()`,
higher = member); the exponential keeps it a probability with a relative gap, as Min-K% prob."""

from __future__ import annotations

import math

from ...config import RunConfig
from .base import ScoredText, TextMeasure


class Loss(TextMeasure):
    name = "loss"
    column = "lap_loss"
    title = "loss"
    source = "Yeom et al. (2018), Carlini et al. (2021): exp of the mean token log-likelihood"
    log_scale = True
    probability = True
    calibration_prefix = "loss"
    axis = ("exp(mean token log-prob), log scale", "log")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return "LAP = exp(mean token log-prob) of the scored text (the loss, as 1/perplexity)"

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        return math.exp(scored.logprobs.mean()) if scored.logprobs.size else math.nan
