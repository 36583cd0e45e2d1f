"""The TOML run configuration: defaults, and one clear ConfigError per kind of mistake."""

from __future__ import annotations

import pytest

from lapbias.config import DEFAULT_RECALL_TEMPLATE, EstimateConfig, from_dict, load
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
    ({"study": {"frequency": "hourly"}}, r'frequency = "hourly"'),
    ({"study": {"cutoff": "June 2024"}}, r'cutoff = "June 2024" is not a date in YYYY-MM-DD'),
    ({"estimate": {"lap_measure": "perplexity"}}, r'lap_measure = "perplexity"'),
    ({"minkprob": {"k": 20}}, r"k = 20; it must be <= 1"),
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


@pytest.mark.parametrize("values, message", [
    ({"model": {"backend": "openai"}}, "needs base_url"),
    ({"model": {"backend": "openai", "base_url": "http://127.0.0.1:8000/v1",
                "base_urls": ["http://127.0.0.1:8001/v1"]}}, "both base_url and base_urls"),
    ({"model": {"backend": "openai", "base_urls": "http://127.0.0.1:8000/v1"}}, "must be a list of URLs"),
    ({"recall": {"fallback": "guess"}}, 'choose one of "none", "sampling"'),
    ({"recall": {"fallback": "sampling", "n_samples": 10}}, "at least 25"),
    ({"recall": {"fallback": "sampling", "sampling_temperature": 0}}, "positive temperature"),
    ({"model": {"api_key": "sk-secret"}}, "unknown key"),
    ({"model": {"allow_external": "false"}}, r'allow_external = "false"; it must be true or false'),
    ({"forecast": {"allow_low_parse_rate": 1}}, r"allow_low_parse_rate = 1; it must be true or false"),
])
def test_backend_and_fallback_mistakes(values, message):
    with pytest.raises(ConfigError, match=message):
        from_dict(values)


def test_backend_options_reach_the_backends():
    from lapbias.llm import make_backend

    config = from_dict({"model": {"backend": "openai", "base_urls": ["http://127.0.0.1:1/v1", "http://localhost:2/v1"],
                                  "served_model_name": "served", "concurrency": 3, "max_retries": 2}})
    backend = make_backend(config.model)
    assert backend.pool.urls == ["http://127.0.0.1:1/v1", "http://localhost:2/v1"]
    assert (backend.served_model_name, backend.concurrency, backend.max_retries) == ("served", 3, 2)
    assert backend.model_id == config.model.model_id  # the cache identity is the model, never the endpoint
    with pytest.raises(ConfigError, match="allow_external = true"):
        make_backend(from_dict({"model": {"backend": "openai", "base_url": "https://api.example.com/v1"}}).model)


def test_http_batches_keep_every_server_busy():
    servers = ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1", "http://127.0.0.1:3/v1"]
    assert from_dict({"model": {"backend": "openai", "base_urls": servers}}).model.queries_per_batch == 24
    assert from_dict({"model": {"backend": "openai", "base_url": servers[0], "batch_size": 64}}).model.queries_per_batch == 64
    assert from_dict({"model": {"batch_size": 4}}).model.queries_per_batch == 4


def test_a_long_key_description_is_shortened_at_a_word_not_cut_mid_word():
    """The error quotes the key's description; a long one ends in ' ...' at a word boundary, never 'at mo)'."""
    with pytest.raises(ConfigError) as caught:
        from_dict({"estimate": {"max_ucb_share": "abc"}})
    said = str(caught.value)
    assert 'max_ucb_share = "abc"; it must be a number' in said
    hint = said.split("(no quotes) (", 1)[1][:-1]
    words = EstimateConfig.model_fields["max_ucb_share"].description.split()
    assert hint.endswith(" ...") and hint[:-4].split() == words[:len(hint[:-4].split())]


def test_the_upper_bound_threshold_is_named_for_what_it_bounds_and_keeps_its_old_name():
    """[estimate] max_mde_share was the threshold on the upper confidence bound's share, not on the minimum
    detectable effect's (that is detectable_share): renamed max_ucb_share, the old name still accepted. A message
    about the old key names the key as written, in one line; both keys at once is one line naming both."""
    assert from_dict({"estimate": {"max_mde_share": 0.3}}).estimate.max_ucb_share == 0.3
    assert from_dict({"estimate": {"max_ucb_share": 0.25}}).estimate.max_ucb_share == 0.25
    assert EstimateConfig(max_mde_share=0.4).max_ucb_share == 0.4
    with pytest.raises(ConfigError) as caught:
        from_dict({"estimate": {"max_mde_share": -1}})
    assert str(caught.value).startswith("[estimate] max_mde_share = -1; it must be > 0")
    assert "\n" not in str(caught.value) and "upper confidence bound" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        from_dict({"estimate": {"max_mde_share": 0.3, "max_ucb_share": 0.2}})
    assert str(caught.value) == ("[estimate] max_mde_share is the old name of max_ucb_share, which is also given: "
                                 "keep only max_ucb_share")
