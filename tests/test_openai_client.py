"""The OpenAI-compatible HTTP client against a local fault-injecting server (tests/fault_server.py, 127.0.0.1):
retries with Retry-After, 5xx, timeouts, malformed JSON, concurrency, several servers, the API key kept out of
everything but the Authorization header, the external-host guard, and the limits of a non-vLLM server."""

from __future__ import annotations

import json
import math
import time

import pytest

from lapbias import config as config_module
from lapbias.errors import ConfigError, LogprobsUnavailable, ModelError
from lapbias.llm.base import TokenLogprob, chat
from lapbias.llm.cache import Query, ResponseCache, canonical_json
from lapbias.llm.openai_backend import OpenAIBackend
from lapbias.signals.labels import label_mass

from fault_server import CANDIDATES, FaultServer

CHAT = chat("On 2024-03-01, did the closing stock price of Apple Inc. (AAPL) go up or down? up, down, or unknown.")
KEY = "sk-test-5f1c0ffee-never-print-me"


@pytest.fixture()
def server():
    fault_server = FaultServer()
    yield fault_server
    fault_server.close()


def client(urls, **options) -> OpenAIBackend:
    settings = {"max_retries": 3, "backoff_factor": 0.05, "backoff_max": 1.0, "request_timeout": 5.0}
    settings.update(options)
    return OpenAIBackend("test-model", urls if isinstance(urls, list) else [urls], **settings)


def test_top_logprobs_parsed_with_distinct_placeholder_ids(server):
    (top,) = client(server.url).next_token_logprobs([CHAT], 20)
    assert [(t.token, round(math.exp(t.logprob), 12)) for t in top] == CANDIDATES
    assert [t.token_id for t in top] == [-1, -2, -3, -4]
    assert label_mass(top, "up") == (pytest.approx(0.7), False)
    (_, payload, _), = [r for r in server.requests if r[0] == "/v1/chat/completions"]
    assert payload["temperature"] == 0 and payload["max_tokens"] == 1 and payload["top_logprobs"] == 20
    assert "return_tokens_as_token_ids" not in payload  # vLLM-only extension, never sent to a generic server


def test_429_waits_for_retry_after_then_succeeds(server):
    server.plan = [("429", 1)]
    start = time.monotonic()
    (top,) = client(server.url).next_token_logprobs([CHAT], 20)
    assert time.monotonic() - start >= 1.0
    assert server.count("/v1/chat/completions") == 2 and top[0].token == "up"


def test_retry_after_is_capped_at_backoff_max(server):
    server.plan = [("429", 3600)]
    start = time.monotonic()
    client(server.url, backoff_max=1.0).next_token_logprobs([CHAT], 20)
    assert time.monotonic() - start < 5


def test_5xx_retried_with_backoff_then_succeeds(server):
    server.plan = [("status", 500), ("status", 502), ("status", 503)]
    (top,) = client(server.url).next_token_logprobs([CHAT], 20)
    assert server.count("/v1/chat/completions") == 4 and top[0].token == "up"


def test_persistent_5xx_fails_loudly_after_bounded_retries(server):
    server.plan = [("status", 500)] * 10
    with pytest.raises(ModelError, match="HTTP 500 after up to 2 retries"):
        client(server.url, max_retries=2).next_token_logprobs([CHAT], 20)
    assert server.count("/v1/chat/completions") == 3


def test_timeout_retried_then_succeeds(server):
    server.plan = [("sleep", 2.0)]
    start = time.monotonic()
    (top,) = client(server.url, request_timeout=0.5).next_token_logprobs([CHAT], 20)
    assert top[0].token == "up" and 0.5 <= time.monotonic() - start < 2.0


def test_persistent_timeout_fails_loudly_in_bounded_time(server):
    server.plan = [("sleep", 1.5)] * 3
    start = time.monotonic()
    with pytest.raises(ModelError, match="no answer after 2 retries"):
        client(server.url, request_timeout=0.3, max_retries=2).next_token_logprobs([CHAT], 20)
    assert time.monotonic() - start < 3 and server.count("/v1/chat/completions") == 3


def test_malformed_json_retried_then_succeeds(server):
    server.plan = [("malformed",), ("malformed",)]
    (top,) = client(server.url).next_token_logprobs([CHAT], 20)
    assert server.count("/v1/chat/completions") == 3 and top[0].token == "up"


def test_persistent_malformed_json_fails_loudly_after_bounded_retries(server):
    server.plan = [("malformed",)] * 10
    with pytest.raises(ModelError, match="not JSON"):
        client(server.url, max_retries=2).next_token_logprobs([CHAT], 20)
    assert server.count("/v1/chat/completions") == 3


def test_api_key_sent_only_as_header_never_in_errors_describe_or_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LAPBIAS_TEST_KEY", KEY)
    backend = client(server.url, api_key_env="LAPBIAS_TEST_KEY")
    (top,) = backend.next_token_logprobs([CHAT], 20)
    assert server.requests[-1][2] == f"Bearer {KEY}"
    server.plan = [("echo_auth",)]
    with pytest.raises(ModelError) as caught:
        backend.next_token_logprobs([CHAT], 20)
    assert KEY not in str(caught.value) and "Bearer ***" in str(caught.value)
    assert KEY not in json.dumps(backend.describe()) and KEY not in repr(backend)
    cache = ResponseCache(tmp_path / "recall.jsonl")
    query = Query("recall", backend.model_id, "AAPL|2024-03-01", canonical_json(CHAT), {"top_logprobs": 20})
    cache.append([(query, {"top": [t.to_json() for t in top]})])
    assert KEY not in (tmp_path / "recall.jsonl").read_text()


def test_a_key_straddling_the_quoted_part_of_an_error_is_still_hidden(server, monkeypatch):
    monkeypatch.setenv("LAPBIAS_TEST_KEY", KEY)
    backend = client(server.url, api_key_env="LAPBIAS_TEST_KEY")
    before_key = len(json.dumps({"error": "bad request, header was Bearer "})) - 2
    server.plan = [("echo_auth", 300 - before_key - 10)]  # the key starts 10 characters before the quote ends
    with pytest.raises(ModelError, match="HTTP 400") as caught:
        backend.next_token_logprobs([CHAT], 20)
    assert KEY[:10] not in str(caught.value) and "Bearer ***" in str(caught.value)


def test_pieces_of_the_key_echoed_by_a_server_are_hidden(server, monkeypatch):
    """A server that echoes the key less a character, or a piece of it, must not show it either: every run of 8 or
    more characters of the key is masked, not only the whole key."""
    monkeypatch.setenv("LAPBIAS_TEST_KEY", KEY)
    backend = client(server.url, api_key_env="LAPBIAS_TEST_KEY")
    server.plan = [("echo_auth_pieces",)]
    with pytest.raises(ModelError, match="HTTP 401") as caught:
        backend.next_token_logprobs([CHAT], 20)
    message = str(caught.value)
    assert "invalid token Bearer ***" in message and "token ending ***" in message
    assert not [KEY[i:i + 8] for i in range(len(KEY) - 7) if KEY[i:i + 8] in message]


def test_scrub_masks_a_short_key_whole_and_reads_only_what_it_shows(monkeypatch):
    monkeypatch.setenv("LAPBIAS_TEST_KEY", "abc12")
    backend = client("http://127.0.0.1:9", api_key_env="LAPBIAS_TEST_KEY")
    assert backend._scrub("key abc12, not abc1", 300) == "key ***, not abc1"  # shorter than 8: the whole key only
    monkeypatch.setenv("LAPBIAS_TEST_KEY", KEY)
    backend = client("http://127.0.0.1:9", api_key_env="LAPBIAS_TEST_KEY")
    body = "x" * 295 + KEY + "y" * 20_000_000  # a key cut by the limit; a large error page after it
    shown = backend._scrub(body, 300)
    assert shown.startswith("x" * 295 + "***") and len(shown) <= 300 and not set(shown) - {"x", "*", "y"}


@pytest.mark.parametrize("value", ["sk-live-5f1c0ffee", "MY KEY", "1KEY", "$OPENAI_API_KEY"])
def test_api_key_env_must_be_a_variable_name_and_is_never_echoed(server, value):
    with pytest.raises(ConfigError, match="NAME of an environment variable") as caught:
        client(server.url, api_key_env=value)
    assert value not in str(caught.value)
    with pytest.raises(ConfigError, match="NAME of an environment variable") as caught:
        config_module.from_dict({"model": {"backend": "openai", "base_url": server.url, "api_key_env": value}})
    assert value not in str(caught.value)


def test_redirects_are_not_followed(server):
    elsewhere = FaultServer()
    try:
        server.plan = [("redirect", elsewhere.url + "/chat/completions")]
        with pytest.raises(ModelError, match="HTTP 307"):
            client(server.url).next_token_logprobs([CHAT], 20)
        assert not elsewhere.requests  # the text never left for the other host
    finally:
        elsewhere.close()


def test_missing_key_variable_is_a_config_error(monkeypatch, server):
    monkeypatch.delenv("LAPBIAS_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError, match="LAPBIAS_UNSET_KEY"):
        client(server.url, api_key_env="LAPBIAS_UNSET_KEY")


def test_external_host_needs_allow_external():
    with pytest.raises(ConfigError, match="allow_external = true"):
        client("https://api.example.com/v1")
    assert client("https://api.example.com/v1", allow_external=True).pool.urls == ["https://api.example.com/v1"]
    assert client(["http://localhost:1/v1", "http://127.0.0.2:1/v1/", "http://[::1]:1/v1"]).pool.urls == [
        "http://localhost:1/v1", "http://127.0.0.2:1/v1", "http://[::1]:1/v1"]


@pytest.mark.parametrize("url", ["http://127.attacker.example/v1", "http://127.0.0.1.nip.io:8000/v1",
                                 "http://localhost.example.com/v1", "http://10.0.0.1:8000/v1"])
def test_host_names_that_look_local_are_external(url):
    with pytest.raises(ConfigError, match="allow_external = true"):
        client(url)


def test_generic_server_refuses_minkprob_without_sending_text(server):
    with pytest.raises(ModelError, match="Min-K% is unavailable on this backend"):
        client(server.url).prompt_logprobs(["Apple reports record revenue"])
    assert server.count("/v1/completions") == 0


def test_label_tokens_need_tokenize_endpoint_or_local_tokenizer(server, bundled_backend):
    with pytest.raises(ModelError, match=r"set \[model\] tokenizer"):
        client(server.url).label_token_ids("up")
    local = client(server.url, tokenizer="bundled:SmolLM2-135M-Instruct")
    for label in ("up", "down", "unknown"):
        assert local.label_token_ids(label) == bundled_backend.label_token_ids(label)


def test_endpoint_without_logprobs_points_to_sampling_fallback(server):
    server.no_logprobs = True
    with pytest.raises(LogprobsUnavailable, match="sampling fallback"):
        client(server.url).next_token_logprobs([CHAT], 20)


def test_generation_without_logprobs_keeps_the_text_and_marks_p_first_missing(server, tmp_path):
    server.no_logprobs = True
    (generation,) = client(server.url).generate([CHAT], 8)
    assert generation.text == "up" and generation.first_top == ()
    assert math.isnan(generation.first_token.logprob)
    stored = generation.first_token.to_json()
    assert stored[2] is None and "NaN" not in canonical_json(stored)  # strict JSON in the cache
    assert math.isnan(TokenLogprob.from_json(stored).logprob)


def test_concurrency_bounds_requests_in_flight(server):
    server.delay = 0.4
    start = time.monotonic()
    tops = client(server.url, concurrency=4).next_token_logprobs([CHAT] * 12, 20)
    elapsed = time.monotonic() - start
    assert len(tops) == 12 and server.max_in_flight == 4
    assert elapsed < 12 * 0.4 / 2  # 3 waves of 4 (~1.2 s), not 12 requests one after another (4.8 s)


def test_several_servers_share_the_queries():
    servers = [FaultServer(), FaultServer()]
    try:
        for s in servers:
            s.delay = 0.1
        backend = client([s.url for s in servers], concurrency=2)
        tops = backend.next_token_logprobs([CHAT] * 16, 20)
        counts = [s.count("/v1/chat/completions") for s in servers]
        assert len(tops) == 16 and sum(counts) == 16 and min(counts) >= 4
        assert backend.pool.answered == counts
        assert all(s.max_in_flight <= 2 for s in servers)
    finally:
        for s in servers:
            s.close()


def test_greedy_generation_over_http(server):
    (generation,) = client(server.url).generate([CHAT], 8, 20)
    assert generation.text == "up" and generation.first_token.token == "up"
    assert generation.first_token.token_id == generation.first_top[0].token_id
    assert server.requests[-1][1]["max_tokens"] == 8
