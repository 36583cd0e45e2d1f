"""The recall LAP of protocol Step 2: LAP = P(up) + P(down) at the answer position of the date-only recall query
(signals/recall.py computes it; the panel carries it as lap_recall)."""

from __future__ import annotations

from ...config import RunConfig
from .base import LapMeasure


class RecallLap(LapMeasure):
    name = "recall"
    column = "lap_recall"
    task = "recall"
    title = "recall LAP"
    source = "protocol Step 2: P(up) + P(down) of the date-only recall query"
    gap = "absolute"
    probability = True
    calibration_prefix = "lap"
    axis = ("recall LAP = P(up) + P(down)", "linear")

    def describe(self, config: RunConfig, standardized: bool = False) -> str:
        return "LAP = P(up) + P(down) from the recall prompt (protocol Step 2)"
