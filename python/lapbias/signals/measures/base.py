"""The LAP-measure interface (the fast-mia method registry, as leak/probes/): one measure per file, registered in
measures/__init__.py, so that a new detector touches its own file and the registry.

A measure says where it lives (its panel column), which cached pass it is derived from (`task`: the recall query
of protocol Step 2, or the Min-K% forward pass over the scored text), how the verdict's variation gate reads it
(`gap`: an absolute gap in probability for the recall LAP, a gap relative to the mean for a score without a
natural unit), and how the report and the calibration show it. A measure derived from the Min-K% pass
(`TextMeasure`) also scores one text from that pass's per-token values: a new detector adds no query and no stage.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from ...config import RunConfig


class LapMeasure(ABC):
    """One value of `[estimate] lap_measure`."""

    name: ClassVar[str]
    """The `[estimate] lap_measure` value."""
    column: ClassVar[str]
    """Its panel column (lap = this column when it is the configured measure)."""
    task: ClassVar[Literal["recall", "minkprob"]]
    """The signal pass whose cached answers it is derived from."""
    title: ClassVar[str]
    """Its name in sentences and tables ("the recall LAP", "Min-K% prob")."""
    source: ClassVar[str]
    """Where its formula is defined (paper and equation, or the authors' code)."""
    gap: ClassVar[Literal["absolute", "relative", "log"]] = "relative"
    """The verdict's variation gate (report/verdict.py lap_variation), with its collapse and "does not fall" rules
    (`fall`): "absolute", the high-LAP half's mean exceeds the low half's by min_lap_gap (probability points: the
    recall LAP); "relative", by min_lap_relative_gap of |mean| (a score with a natural zero: Min-K% prob and the loss,
    probabilities; Min-K%++, Gap-K% and the zlib ratio, on the log-probability scale whose 0 is a token as likely as
    the average one, the top-1, or certainty); "log", by a factor 1 + min_lap_relative_gap (a log-ratio in nats: the
    reference measure, whose 5% is Min-K%'s 5%)."""
    display_factor: ClassVar[float] = 1.0
    """A power of 10: coefficients per unit of this LAP are shown per unit of LAP x factor (report/units.py)."""
    log_scale: ClassVar[bool] = False
    """The calibration takes its gap from arm 0 on the log scale (it spans orders of magnitude)."""
    probability: ClassVar[bool] = False
    """A probability: the calibration cuts its intervals to [0, 1]."""
    calibration_prefix: ClassVar[str]
    """The prefix of its columns in the calibration's lap_by_arm.csv."""
    axis: ClassVar[tuple[str, str]]
    """(label, matplotlib scale) of the calibration figure's LAP axis."""

    @abstractmethod
    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        """The tables' note "LAP = ..." when this measure is the configured one."""

    def relative_gap(self, gap: float, mean: float) -> float:
        """The high-minus-low gap as a share of the measure's level: gap / |mean|, or for a log-ratio ("log") the
        factor less one, exp(gap) − 1 (NaN where undefined)."""
        if self.gap == "log":
            return math.expm1(gap) if math.isfinite(gap) else math.nan
        return gap / abs(mean) if math.isfinite(gap) and math.isfinite(mean) and mean != 0 else math.nan

    def fall(self, pre: float, post: float) -> float:
        """The share of its pre-cutoff level a LAP lost after the cutoff: (pre − post) / |pre|, or for a log-ratio
        1 − exp(post − pre) (protocol Step 5's collapse; the report's "does not fall")."""
        if self.gap == "log":
            return -math.expm1(post - pre) if math.isfinite(pre) and math.isfinite(post) else math.nan
        return (pre - post) / abs(pre) if math.isfinite(pre) and math.isfinite(post) and pre != 0 else math.nan


@dataclass(frozen=True)
class ScoredText:
    """One text's Min-K% pass: per scored token (every token after the first), log P(w_n | w_<n), and where the
    backend returned them the moments of the next-token distribution at that position, mu = sum_v p log p and
    m2 = sum_v p (log p)^2, and the top-1 log-prob max_v log p (NaN arrays where it did not)."""

    text: str
    logprobs: np.ndarray
    mu: np.ndarray
    m2: np.ndarray
    top1: np.ndarray
    reference: "ScoredText | None" = None
    """The same text's pass through [minkprob] reference_model (None without one)."""

    @property
    def has_moments(self) -> bool:
        return bool(self.logprobs.size) and bool(np.isfinite(self.mu).all() and np.isfinite(self.m2).all())


class TextMeasure(LapMeasure):
    """A measure derived from the Min-K% forward pass: a score of one text."""

    task: ClassVar[Literal["minkprob"]] = "minkprob"
    needs_moments: ClassVar[bool] = False
    """The score reads the distribution's moments (mu, m2, top-1), not only the realised token's log-prob."""

    @abstractmethod
    def score(self, scored: ScoredText, config: RunConfig) -> float:
        """The measure of one text from its Min-K% pass."""
