"""The zlib ratio (Carlini et al. 2021, "Extracting training data from large language models", section 5.1), in
the sign the Min-K%++ authors use: LAP = ll / the zlib length of the scored text ([minkprob] scored_text: the filled
prompt, template included, unless set to the text), ll = the mean of log P(w_n | w_<n) over the scored tokens, the
length in bytes of zlib.compress(text.encode("utf-8")) at the standard library's default level. Carlini et al. rank
by log-perplexity / zlib entropy, lower = memorized; ll is minus the log-perplexity, so this is their ratio negated,
as zjysteven/mink-plus-plus run.py computes it (`ll / len(zlib.compress(bytes(text, 'utf-8')))`), higher = member.
It scales the model's log-likelihood of the text by a model-free measure of how predictable the text is anyway."""

from __future__ import annotations

import math
import zlib

from ...config import RunConfig
from .base import ScoredText, TextMeasure


def zlib_bytes(text: str) -> int:
    """The zlib-compressed length of the text's UTF-8 bytes (the standard library, default level)."""
    return len(zlib.compress(text.encode("utf-8")))


class ZlibRatio(TextMeasure):
    name = "zlib"
    column = "lap_zlib"
    title = "zlib ratio"
    source = "Carlini et al. (2021), section 5.1, negated as in zjysteven/mink-plus-plus run.py"
    calibration_prefix = "zlib"
    axis = ("mean token log-prob / zlib bytes", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return "LAP = mean token log-prob / zlib-compressed bytes of the scored text (the zlib ratio)"

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        return float(scored.logprobs.mean()) / zlib_bytes(scored.text) if scored.logprobs.size else math.nan
