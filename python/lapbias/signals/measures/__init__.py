"""The LAP measures (one file each, behind measures/base.py's interface): name -> measure. `[estimate] lap_measure`
names one of them; the panel carries every measure computed."""

from __future__ import annotations

from ...config import RunConfig
from .base import LapMeasure, ScoredText, TextMeasure
from .gapk import GapK
from .loss import Loss
from .minkpp import MinKPlusPlus
from .minkprob import MinKProb
from .recall import RecallLap
from .reference import ReferenceMinK
from .zlib_ratio import ZlibRatio

REGISTRY: dict[str, LapMeasure] = {measure.name: measure for measure in (
    RecallLap(), MinKProb(), MinKPlusPlus(), GapK(), ZlibRatio(), Loss(), ReferenceMinK())}
TEXT_MEASURES: dict[str, TextMeasure] = {name: m for name, m in REGISTRY.items() if isinstance(m, TextMeasure)}
"""The measures derived from the Min-K% forward pass, in registry order."""


def configured(config: RunConfig) -> LapMeasure:
    """The measure `[estimate] lap_measure` names (the config's Literal and REGISTRY agree: tests/test_measures.py)."""
    return REGISTRY[config.estimate.lap_measure]


__all__ = ["REGISTRY", "TEXT_MEASURES", "LapMeasure", "ScoredText", "TextMeasure", "configured"]
