"""The sampling fallback (protocol Step 2): frequencies in place of probabilities, read by label_mass unchanged,
at least 25 samples, its own cache key, the multiplied count confirmed separately, and sampling over HTTP
(tests/fault_server.py; on the real model: tests/test_backend_parity.py)."""

from __future__ import annotations

import math

import pytest

from lapbias.errors import ConfigError, ConfirmationDeclined, ModelError
from lapbias.llm import sampling
from lapbias.llm.base import TokenLogprob, chat
from lapbias.llm.cache import Query, canonical_json
from lapbias.llm.openai_backend import OpenAIBackend
from lapbias.signals.labels import label_mass

from fault_server import SAMPLED, FaultServer

CHAT = chat("On 2024-03-01, did the closing stock price of Apple Inc. (AAPL) go up or down? up, down, or unknown.")


def test_frequencies_replace_probabilities_in_label_mass():
    answers = ["up"] * 14 + [" up"] * 2 + ["down"] * 6 + ["Unknown"] * 3
    response = sampling.frequencies(answers)
    assert response["approximated"] is True and response["n_samples"] == 25
    top = [TokenLogprob.from_json(t) for t in response["top"]]
    assert [t.token for t in top] == ["up", "down", "Unknown", " up"]
    assert len({t.token_id for t in top}) == 4 and all(t.token_id < 0 for t in top)
    p_up, censored_up = label_mass(top, "up")
    assert p_up == pytest.approx(16 / 25, abs=1e-12) and not censored_up
    assert label_mass(top, "down")[0] == pytest.approx(6 / 25, abs=1e-12)
    assert label_mass(top, "unknown")[0] == pytest.approx(3 / 25, abs=1e-12)
    assert sum(math.exp(t.logprob) for t in top) == pytest.approx(1.0, abs=1e-12)


def test_label_never_sampled_is_censored():
    top = [TokenLogprob.from_json(t) for t in sampling.frequencies(["up"] * 25)["top"]]
    assert label_mass(top, "down") == (0.0, True)


def test_fewer_than_25_samples_or_zero_temperature_refused():
    with pytest.raises(ConfigError, match="at least 25"):
        sampling.params(24, seed=1)
    with pytest.raises(ConfigError, match="positive temperature"):
        sampling.params(25, seed=1, temperature=0.0)


def test_sampled_query_never_shares_a_key_with_a_logprob_query():
    prompt = canonical_json(CHAT)
    logprob_query = Query("recall", "m", "AAPL|2024-03-01", prompt, {"temperature": 0, "max_tokens": 1,
                                                                     "top_logprobs": 20})
    sampled = Query("recall", "m", "AAPL|2024-03-01", prompt, sampling.params(25, seed=7))
    reseeded = Query("recall", "m", "AAPL|2024-03-01", prompt, sampling.params(25, seed=8))
    assert len({logprob_query.key, sampled.key, reseeded.key}) == 3


def test_multiplied_count_printed_and_separately_confirmed():
    shown = []
    sampling.confirm(lambda message: shown.append(message) or True, "recall", 120, 25)
    assert "120 queries x 25 samples = 3000 model answers" in shown[0] and "approximated" in shown[0]
    with pytest.raises(ConfirmationDeclined, match="3000 answers"):
        sampling.confirm(lambda message: False, "recall", 120, 25)
    assert "25 samples at temperature 1 with seed 7" in sampling.note(25, 7)


def test_backend_without_sampling_refused(bundled_backend):
    with pytest.raises(ModelError, match="cannot sample"):
        sampling.ask(bundled_backend, [CHAT], 25, seed=1)


def test_sampling_over_http_sends_n_seed_and_temperature():
    server = FaultServer()
    try:
        backend = OpenAIBackend("test-model", [server.url])
        (response,) = sampling.ask(backend, [CHAT], 25, seed=42)
        (_, payload, _), = server.requests[-1:]
        assert payload["n"] == 25 and payload["seed"] == 42 and payload["temperature"] == 1.0
        assert payload["max_tokens"] == 1 and payload["top_p"] == 1.0 and "logprobs" not in payload
        expected = [SAMPLED[i % len(SAMPLED)] for i in range(25)]
        top = [TokenLogprob.from_json(t) for t in response["top"]]
        assert label_mass(top, "up")[0] == pytest.approx(expected.count("up") / 25, abs=1e-12)
        assert label_mass(top, "unknown")[0] == pytest.approx(expected.count("Unknown") / 25, abs=1e-12)
    finally:
        server.close()
