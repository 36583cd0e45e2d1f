"""The TOML run configuration: defaults, and one clear ConfigError per kind of mistake."""

from __future__ import annotations

import pytest

from lapbias.config import DEFAULT_RECALL_TEMPLATE, from_dict, load
from lapbias.errors import ConfigError


def test_defaults_follow_the_protocol():
    config = from_dict({})
    assert config.minkprob.k == 0.20  # paper eq. 1: K = 20
    assert config.recall.top_logprobs == 20 and config.recall.labels == ("up", "down", "unknown")
    assert config.estimate.placebo_alpha == 0.10 and config.estimate.detection_alpha == 0.05
    assert "If you do not recall, answer \"unknown\"." in DEFAULT_RECALL_TEMPLATE


@pytest.mark.parametrize("values, message", [
    ({"modle": {}}, r"unknown section\(s\) \['modle'\]"),
    ({"model": {"batchsize": 4}}, r"\[model\] has unknown key\(s\) \['batchsize'\]"),
    ({"study": {"frequency": "hourly"}}, r"frequency = 'hourly'"),
    ({"study": {"cutoff": "June 2024"}}, r"cutoff = 'June 2024' is not a date in YYYY-MM-DD"),
    ({"estimate": {"lap_measure": "loss"}}, r"lap_measure = 'loss'"),
    ({"minkprob": {"k": 20}}, r"k = 20; it is a share"),
    ({"recall": {"labels": ["up", "down"]}}, r"three labels"),
    ({"data": {"columns": {"returns": "ret"}}}, r"unknown protocol column\(s\) \['returns'\]"),
])
def test_mistakes_are_one_line_config_errors(values, message):
    with pytest.raises(ConfigError, match=message):
        from_dict(values)


def test_labels_are_lower_cased_and_numeric(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text('[forecast]\nlabels = {UP = 1, Down = -1}\n[study]\ncutoff = "2024-06-30"\n')
    config = load(path)
    assert config.forecast.labels == {"up": 1.0, "down": -1.0}
    assert config.study.cutoff_date.isoformat() == "2024-06-30"


def test_toml_syntax_error_and_missing_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[model\nbackend = 1\n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load(tmp_path / "nope.toml")
