"""The LAP-measure registry (signals/measures): the config's Literal, the panel's labels and the report's units
agree with it, so a new measure is its file, its registry entry and its Literal value."""

from __future__ import annotations

import math
from typing import get_args

import pytest

from lapbias.config import EstimateConfig
from lapbias.data import schema
from lapbias.signals.measures import REGISTRY, TEXT_MEASURES, TextMeasure


def test_the_config_accepts_exactly_the_registered_measures():
    assert set(get_args(EstimateConfig.model_fields["lap_measure"].annotation)) == set(REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_each_measure_states_its_column_pass_gate_units_and_source(name):
    measure = REGISTRY[name]
    assert measure.name == name
    assert measure.column in schema.PANEL_LABELS, "its panel column needs a Stata label in data/schema.py"
    assert measure.task in ("recall", "minkprob")
    assert (measure.task == "minkprob") == isinstance(measure, TextMeasure) == (name in TEXT_MEASURES)
    assert measure.gap in ("absolute", "relative")
    assert math.log10(measure.display_factor) == round(math.log10(measure.display_factor))
    assert measure.source and measure.title and measure.calibration_prefix
    assert measure.axis[1] in ("linear", "log")


def test_columns_and_calibration_prefixes_are_distinct():
    assert len({m.column for m in REGISTRY.values()}) == len(REGISTRY)
    assert len({m.calibration_prefix for m in REGISTRY.values()}) == len(REGISTRY)
