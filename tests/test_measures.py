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
    assert measure.gap in ("absolute", "relative", "spread")
    if measure.task == "minkprob":
        assert measure.column in schema.MINKPROB_COLUMNS, "a measure of the Min-K% pass is a minkprob.parquet column"
    assert math.log10(measure.display_factor) == round(math.log10(measure.display_factor))
    assert measure.source and measure.title and measure.calibration_prefix
    assert measure.axis[1] in ("linear", "log")


def test_columns_and_calibration_prefixes_are_distinct():
    assert len({m.column for m in REGISTRY.values()}) == len(REGISTRY)
    assert len({m.calibration_prefix for m in REGISTRY.values()}) == len(REGISTRY)


GOOD = {"tokens": [[1, "a", -2.0], [2, "b", -0.1]], "moments": [[-1.5, 3.0, -0.1], [None, None, None]], "top_k": 20}


@pytest.mark.parametrize("change, problem", [
    ({}, None),
    ({"moments": None}, None),  # an answer from before the moments were kept
    ({"moments": [[-1.5, 3.0, -0.1]]}, "not a list of one [mu, m2, top1] per token (2 tokens)"),
    ({"moments": [[-1.5, 3.0, 0.5], [None] * 3]}, "break mu <= top-1 <= 0 or log p(token) <= top-1"),
    ({"moments": [[-1.5, 3.0, -2.5], [None] * 3]}, "break mu <= top-1 <= 0 or log p(token) <= top-1"),
    ({"moments": [[-1.5, 1.0, -0.1], [None] * 3]}, "a negative variance"),
    ({"moments": [[-1.5, "x", -0.1], [None] * 3]}, "holds something other than numbers or null"),
    ({"top_k": -1}, "top_k = -1 is not a count"),
])
def test_a_cached_min_k_answer_obeys_the_laws_of_a_distributions_moments(change, problem):
    from lapbias.llm.responses import check_response

    response = {key: value for key, value in {**GOOD, **change}.items() if value is not None}
    found = check_response("minkprob", response)
    assert (found is None) if problem is None else (problem in found), found


def test_a_measure_the_minkprob_file_cannot_give_is_refused_by_name(tmp_path):
    """lap_measure = "ref" without [minkprob] reference_model, and "minkpp" from a Min-K% pass without moments (a
    server that returned no candidates): the panel stops naming what is missing, never estimates on an empty LAP."""
    from lapbias.config import from_dict
    from lapbias.errors import ConfigError
    from lapbias.io import Layout, read_parquet, write_parquet
    from lapbias.panel import build
    from test_panel import synthetic_stage_files

    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=6)
    settings = {"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}}
    with pytest.raises(ConfigError, match=r'lap_measure = "ref" .* needs \[minkprob\] reference_model'):
        build(from_dict({**settings, "estimate": {"lap_measure": "ref"}}), layout)
    path = layout.derived_file("minkprob.parquet")
    write_parquet(read_parquet(path).assign(lap_minkpp=float("nan")), path)
    with pytest.raises(ConfigError, match=r'lap_measure = "minkpp" \(Min-K%\+\+\) needs the next-token'):
        build(from_dict({**settings, "estimate": {"lap_measure": "minkpp"}}), layout)
