"""The zlib ratio (Carlini et al. 2021, "Extracting training data from large language models"): LAP = ll / the zlib
length of the text, ll = the mean of log P(w_n | w_<n) over the scored tokens, the length in bytes of
zlib.compress(text.encode("utf-8")) at the standard library's default level: the Min-K%++ authors' `zlib` score
(zjysteven/mink-plus-plus run.py: `ll / len(zlib.compress(bytes(text, 'utf-8')))`, higher = member). It divides the
model's surprise by a model-free measure of how predictable the text is anyway."""

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
    source = "Carlini et al. (2021): mean token log-likelihood / zlib-compressed bytes"
    calibration_prefix = "zlib"
    axis = ("mean token log-prob / zlib bytes", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return "LAP = mean token log-prob / zlib-compressed bytes of the scored text (the zlib ratio)"

    def score(self, scored: ScoredText, config: RunConfig) -> float:
        return float(scored.logprobs.mean()) / zlib_bytes(scored.text) if scored.logprobs.size else math.nan
