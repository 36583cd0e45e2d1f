"""The probe registry (App. O): variant name -> probe. Each probe is one small class in its own file."""

from __future__ import annotations

from .base import Item, Plan, Probe
from .compare import CompareProbe
from .fabricated import FabricatedFundProbe, FabricatedSeriesProbe
from .narrative import NarrativeProbe
from .sampled import SampledProbe
from .stepwise import StepwiseProbe
from .transmission import TransmissionProbe
from .value import ValueProbe

REGISTRY: dict[str, Probe] = {probe.name: probe for probe in (
    ValueProbe(), NarrativeProbe(), CompareProbe(), StepwiseProbe(), SampledProbe(), FabricatedSeriesProbe(),
    FabricatedFundProbe(), TransmissionProbe())}

__all__ = ["REGISTRY", "Item", "Plan", "Probe"]
