"""The LAP-measure registry (signals/measures): the config's Literal, the panel's labels and the report's units
agree with it, so a new measure is its file, its registry entry and its Literal value."""

from __future__ import annotations

import math
from typing import get_args

import numpy as np
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
    assert measure.gap in ("absolute", "relative", "log")
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


def _power_of(lap_pre, lap_post=None):
    """power.csv's values of a synthetic pre- (and post-) cutoff LAP split at its median, as estimate/power.py does."""
    import pandas as pd

    from lapbias.estimate.power import lap_gaps
    from lapbias.panel import high_lap_flags

    def sample(values):
        frame = pd.DataFrame({"lap": values, "entity_id": range(len(values))})
        return frame.assign(high_lap=high_lap_flags(frame, "pooled"))

    gap, relative = lap_gaps(sample(lap_pre))
    values = {"lap_gap": gap, "lap_relative_gap": relative, "mean_lap": float(np.mean(lap_pre))}
    if lap_post is not None:
        gap_post, relative_post = lap_gaps(sample(lap_post))
        values.update(lap_gap_post=gap_post, lap_relative_gap_post=relative_post, mean_lap_post=float(np.mean(lap_post)))
    return values


@pytest.mark.parametrize("measure", ["minkpp", "gapk", "zlib", "ref"])
def test_a_lap_constant_but_for_noise_has_no_meaningful_variation_under_every_gate(measure):
    """The variation gate can fail for every measure: -2 + 1e-9 noise (a LAP that measures nothing, whose median split
    still gives halves 1.6 SD apart) is refused; a LAP whose halves differ by a third of its level passes."""
    from lapbias.config import EstimateConfig
    from lapbias.report.verdict import lap_variation

    rng = np.random.default_rng(0)
    thresholds = EstimateConfig(lap_measure=measure)
    assert not lap_variation(_power_of(-2 + 1e-9 * rng.normal(size=400)), thresholds)[0]
    assert lap_variation(_power_of(-2 + 0.5 * rng.normal(size=400)), thresholds)[0]


def test_the_log_gate_reads_a_factor_in_the_ratio_of_min_k_probabilities():
    from lapbias.config import EstimateConfig
    from lapbias.report.verdict import lap_variation

    thresholds = EstimateConfig(lap_measure="ref")
    halves = lambda gap: {"lap_gap": gap, "lap_relative_gap": float("nan"), "mean_lap": 0.0}  # noqa: E731
    assert not lap_variation(halves(0.04), thresholds)[0]  # exp(0.04) = 1.041 < 1.05
    varies, sentence = lap_variation(halves(0.06), thresholds)  # 1.062
    assert varies and "by a factor 1.062" in sentence


def test_a_negative_lap_that_stays_is_flagged_and_one_that_falls_is_not():
    """Min-K%++ is negative: "does not fall" and "collapsed" read the share of its level lost, not post >= 0.8 pre."""
    import pandas as pd

    from lapbias.config import EstimateConfig, from_dict
    from lapbias.report.markdown import lap_flags
    from lapbias.report.verdict import post_lap_saturated

    config = from_dict({"estimate": {"lap_measure": "minkpp"}})
    checks = pd.DataFrame(columns=["sample", "censored_up", "censored_down", "censored_unknown", "censoring_bound_max",
                                   "lap_mean", "residual_mass_mean", "p_unknown_mean", "n_queries"])
    for post, flagged in ((-2.0, True), (-2.2, True), (-4.0, False)):
        distribution = pd.DataFrame({"sample": ["pre", "post"], "measure": ["lap_minkpp"] * 2, "mean": [-2.0, post]})
        flags = lap_flags(distribution, checks, config)
        assert any("does not fall" in f for f in flags) == flagged, (post, flags)
    rng = np.random.default_rng(1)
    flat_after = _power_of(-2 + 0.5 * rng.normal(size=400), -2 + 1e-9 * rng.normal(size=400))
    assert post_lap_saturated(flat_after, EstimateConfig(lap_measure="minkpp")).startswith("post-cutoff LAP flat")
    collapsed = _power_of(-2 + 0.5 * rng.normal(size=400), -3.5 + 1e-9 * rng.normal(size=400))  # lost 75% of -2
    assert post_lap_saturated(collapsed, EstimateConfig(lap_measure="minkpp")) == ""


def test_the_robustness_table_marks_moments_from_a_top_k_approximated(tmp_path):
    """results/lap_measures.csv: Min-K%++ and Gap-K% read the moments, which a vLLM backend or server gives from its
    top-20 (panel moments_top_k = 20): approximated; Min-K% prob reads only the tokens' log-probs: exact."""
    import pandas as pd

    from lapbias.config import from_dict
    from lapbias.report import measures as robustness

    row = {"model": "pre", "term": "c.mu_hat#c.lap", "coef": 0.5, "se": 0.2, "t": 2.5, "p": 0.02,
           "p_one_sided": 0.01, "N": 100, "N_clust": 60}
    for name in ("minkprob", "minkpp"):
        folder = tmp_path / "measures" / name
        folder.mkdir(parents=True)
        pd.DataFrame([row]).to_csv(folder / "detection.csv", index=False)
    config = from_dict({"estimate": {"lap_measure": "recall"}})
    for top_k, expected in ((20, {"minkprob": False, "minkpp": True}), (0, {"minkprob": False, "minkpp": False})):
        table = robustness.table(config, tmp_path, pd.DataFrame({"moments_top_k": [top_k] * 3})).set_index("measure")
        assert table["approximated"].to_dict() == expected
        assert table.loc["minkpp", "p_one_sided"] == 0.01 and table.loc["minkpp", "inference"] == "CRV1"


def test_a_reference_that_is_the_model_or_tokenizes_otherwise_is_refused():
    from lapbias.config import from_dict
    from lapbias.errors import ConfigError
    from lapbias.llm.cache import Query
    from lapbias.signals import minkprob

    same = from_dict({"minkprob": {"reference_model": "bundled:SmolLM2-135M-Instruct"}})
    with pytest.raises(ConfigError, match="is the model itself"):
        minkprob.reference_model(same)
    served = from_dict({"model": {"backend": "openai", "base_url": "http://127.0.0.1:8000/v1", "model_id": "big",
                                  "served_model_name": "big-served"}, "minkprob": {"reference_model": "small"}})
    assert minkprob.reference_model(served).served_model_name == "small"  # never the target's served name
    query = Query("minkprob", "m", "r7", "a text", {})
    answer = {"tokens": [[1, "a", -1.0], [2, " text", -2.0]]}
    minkprob._same_tokens(answer, answer, query, "small")
    with pytest.raises(ConfigError, match="tokenizes the text of row r7 differently"):
        minkprob._same_tokens(answer, {"tokens": [[5, "a tex", -1.0], [6, "t", -2.0]]}, query, "small")
