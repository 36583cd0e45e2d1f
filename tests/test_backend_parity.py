"""Parity on the real bundled model (fp32): transformers vs vLLM offline vs the HTTP client on a real vLLM
OpenAI server started here on 127.0.0.1. Same top-20 next-token log-probs and prompt log-probs (≤ 1e-3 in
log space), same greedy answers, same recall LAP and Min-K%; several server URLs share the queries; a run
interrupted on one backend resumes on another from the cache; the sampling fallback is reproducible.

vLLM starts worker processes, so the offline backend runs in a subprocess: this file run as a script
(`python tests/test_backend_parity.py OUT.json`) writes the vLLM answers to OUT.json. Skipped, with the reason,
where vLLM is not importable (the default install; CI installs the extra lapbias[vllm]).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from lapbias.config import DEFAULT_RECALL_TEMPLATE, ForecastConfig, ModelConfig
from lapbias.llm import bundled
from lapbias.llm.base import TokenLogprob, chat
from lapbias.llm.cache import Query, ResponseCache, canonical_json
from lapbias.llm import sampling
from lapbias.signals.batch import always, ask_missing
from lapbias.signals.labels import label_mass
from lapbias.signals.measures.minkprob import min_k_prob

MODEL = "bundled:SmolLM2-135M-Instruct"
SERVED_NAME = "smollm2-test"
TOL = 1e-3
MOMENT_TOL = 5e-3
SERVER_START_LIMIT = 900
VLLM_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _recall(name: str, ticker: str, date: str) -> list[dict]:
    return chat(DEFAULT_RECALL_TEMPLATE.format(target_date=date, entity_name=name, ticker=ticker,
                                               outcome_description="the closing stock price",
                                               reference_period="the previous trading day"))


def _forecast(name: str, ticker: str, headline: str) -> str:
    return ForecastConfig().prompt.format(entity_name=name, ticker=ticker, text_date="2024-03-01", text=headline)


CHATS = [
    _recall("Apple Inc.", "AAPL", "2024-03-01"),
    _recall("NVIDIA Corporation", "NVDA", "2023-05-25"),
    _recall("Boeing Company", "BA", "2024-01-08"),
    chat(_forecast("Microsoft Corporation", "MSFT", "Microsoft names new chief financial officer")),
    chat(_forecast("Tesla Inc.", "TSLA", "Tesla recalls 2 million vehicles over Autopilot")),
    chat("Hi"),
]
TEXTS = [
    _forecast("Apple Inc.", "AAPL", "Apple reports record quarterly revenue on strong iPhone demand"),
    _forecast("Exxon Mobil", "XOM", "Exxon to buy Pioneer Natural Resources for $59.5 billion"),
    "Short text",
    "Quarterly earnings beat estimates; shares rose 7% in after-hours trading.",
]
LABELS = ("up", "down", "unknown")
MAX_NEW_TOKENS = 8


def vllm_answers() -> dict:
    """What the vLLM offline backend gives on CHATS and TEXTS (run in a subprocess, see the module docstring)."""
    from lapbias.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend(MODEL)
    label_ids = sorted({i for label in LABELS for i in backend.label_variants(label)})
    return {
        "top": [[t.to_json() for t in top] for top in backend.next_token_logprobs(CHATS, 20)],
        "generate": [{"text": g.text, "first_token": g.first_token.to_json(), "tokens": [t.to_json() for t in g.tokens]}
                     for g in backend.generate(CHATS, MAX_NEW_TOKENS, 20)],
        "exact": {"ids": label_ids, "requested": [[t.to_json() for t in answer.requested]
                                                  for answer in backend.answer_logprobs(CHATS[:3], 20, label_ids)]},
        "prompt": [[t.to_json() for t in tokens] for tokens in backend.prompt_logprobs(TEXTS)],
        "prompt_reversed": [[t.to_json() for t in tokens] for tokens in backend.prompt_logprobs(TEXTS[::-1])[::-1]],
        "prompt_one_by_one": [[t.to_json() for t in backend.prompt_logprobs([text])[0]] for text in TEXTS],
        "scores": [{"tokens": [t.to_json() for t in s.tokens], "moments": [list(m) for m in s.moments],
                    "top_k": s.top_k} for s in backend.prompt_scores(TEXTS)],
        "vocabulary": backend.vocabulary,
        "described": backend.describe(),
        "labels": {label: backend.label_token_ids(label) for label in LABELS},
        "samples": backend.sample(CHATS[:3], 25, 7),
        "samples_again": backend.sample(CHATS[:3], 25, 7),
    }


pytestmark = pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                reason="vLLM is not importable: install the extra lapbias[vllm] (docs/backends.md)")


# ---- fixtures: vLLM offline in a subprocess, a vLLM OpenAI server on 127.0.0.1 -------------------------------
@pytest.fixture(scope="module")
def offline(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("vllm") / "answers.json"
    result = subprocess.run([sys.executable, __file__, str(out)], capture_output=True, text=True,
                            timeout=SERVER_START_LIMIT, env={**os.environ, **VLLM_ENV})
    assert result.returncode == 0, f"vLLM offline run failed:\n{result.stderr[-3000:]}"
    answers = json.loads(out.read_text())
    answers["top"] = [[TokenLogprob.from_json(t) for t in top] for top in answers["top"]]
    for key in ("prompt", "prompt_reversed", "prompt_one_by_one"):
        answers[key] = [[TokenLogprob.from_json(t) for t in tokens] for tokens in answers[key]]
    return answers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(offline, tmp_path_factory):
    """A real vLLM OpenAI server (started after the offline run, so two engines never share the 2 cores);
    bounded start-up wait, stopped at the end of the module."""
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "vllm_server.log"
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", bundled.resolve(MODEL),
               "--served-model-name", SERVED_NAME, "--dtype", "float32", "--gpu-memory-utilization", "0.3",
               "--enforce-eager", "--no-enable-chunked-prefill", "--no-enable-prefix-caching", "--generation-config",
               "vllm", "--host", "127.0.0.1", "--port", str(port)]  # prefix caching off: docs/backends.md
    with open(log, "w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                   env={**os.environ, **VLLM_ENV}, start_new_session=True)
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_LIMIT
        while True:
            assert process.poll() is None, f"vLLM server exited:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"vLLM server not up in {SERVER_START_LIMIT} s:\n" \
                                                f"{log.read_text()[-3000:]}"
            try:
                if requests.get(root + "/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(2)
        yield root
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def http_backend(*roots: str):
    from lapbias.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(MODEL, [r + "/v1" for r in roots], served_model_name=SERVED_NAME, concurrency=4,
                         request_timeout=300)


@pytest.fixture(scope="module")
def http(server):
    return http_backend(server)


# ---- comparison helpers --------------------------------------------------------------------------------------
def assert_same_top(expected: list[TokenLogprob], actual: list[TokenLogprob]) -> None:
    """Same candidates with log-probs within TOL; a candidate may be swapped only at a tie on the 20th place."""
    assert len(actual) == len(expected) == 20
    got = {t.token_id: t for t in actual}
    for token in expected:
        if token.token_id in got:
            assert abs(got[token.token_id].logprob - token.logprob) <= TOL, (token, got[token.token_id])
            assert got[token.token_id].token == token.token
        else:
            assert abs(token.logprob - expected[-1].logprob) <= TOL, f"{token} missing, not a tie at rank 20"


def assert_same_prompt(expected: list[TokenLogprob], actual: list[TokenLogprob]) -> None:
    assert [t.token_id for t in actual] == [t.token_id for t in expected]
    assert [t.token for t in actual] == [t.token for t in expected]
    assert max((abs(a.logprob - e.logprob) for a, e in zip(actual, expected)), default=0.0) <= TOL


def lap(top: list[TokenLogprob]) -> float:
    return label_mass(top, "up")[0] + label_mass(top, "down")[0]


# ---- parity --------------------------------------------------------------------------------------------------
def test_top20_next_token_parity(bundled_backend, offline, http):
    reference = bundled_backend.next_token_logprobs(CHATS, 20)
    over_http = http.next_token_logprobs(CHATS, 20)
    for expected, vllm_top, http_top in zip(reference, offline["top"], over_http):
        assert_same_top(expected, vllm_top)
        assert_same_top(expected, http_top)


def test_prompt_logprob_parity(bundled_backend, offline, http):
    reference = bundled_backend.prompt_logprobs(TEXTS)
    over_http = http.prompt_logprobs(TEXTS)
    for expected, vllm_tokens, http_tokens in zip(reference, offline["prompt"], over_http):
        assert len(expected) >= 1
        assert_same_prompt(expected, vllm_tokens)
        assert_same_prompt(expected, http_tokens)


def test_greedy_answers_parity(bundled_backend, offline, http):
    reference = bundled_backend.generate(CHATS, MAX_NEW_TOKENS, 20)
    over_http = http.generate(CHATS, MAX_NEW_TOKENS, 20)
    for expected, vllm_gen, http_gen in zip(reference, offline["generate"], over_http):
        assert vllm_gen["text"] == expected.text == http_gen.text
        vllm_first = TokenLogprob.from_json(vllm_gen["first_token"])
        for first in (vllm_first, http_gen.first_token):
            assert first.token_id == expected.first_token.token_id
            assert abs(first.logprob - expected.first_token.logprob) <= TOL


def test_exact_label_logprobs_and_every_generated_token_agree_offline(bundled_backend, offline):
    """Issue 11, items 4 and 8: the log-prob of every token decoding to a label, and of every generated token."""
    ids = offline["exact"]["ids"]
    assert ids == sorted({i for label in LABELS for i in bundled_backend.label_variants(label)}) and len(ids) >= 12
    for expected, got in zip(bundled_backend.answer_logprobs(CHATS[:3], 20, ids), offline["exact"]["requested"]):
        got = [TokenLogprob.from_json(t) for t in got]
        assert [t.token_id for t in got] == [t.token_id for t in expected.requested] == ids
        assert max(abs(g.logprob - e.logprob) for g, e in zip(got, expected.requested)) <= TOL
    for expected, got in zip(bundled_backend.generate(CHATS, MAX_NEW_TOKENS, 20), offline["generate"]):
        got = [TokenLogprob.from_json(t) for t in got["tokens"]]
        assert [t.token_id for t in got] == [t.token_id for t in expected.tokens]
        assert max(abs(g.logprob - e.logprob) for g, e in zip(got, expected.tokens)) <= TOL


def test_recall_lap_and_minkprob_agree_across_backends(bundled_backend, offline, http):
    for expected, vllm_top, http_top in zip(bundled_backend.next_token_logprobs(CHATS[:3], 20), offline["top"],
                                            http.next_token_logprobs(CHATS[:3], 20)):
        assert abs(lap(vllm_top) - lap(expected)) <= TOL and abs(lap(http_top) - lap(expected)) <= TOL
    for expected, vllm_tokens, http_tokens in zip(bundled_backend.prompt_logprobs(TEXTS), offline["prompt"],
                                                  http.prompt_logprobs(TEXTS)):
        reference = min_k_prob([t.logprob for t in expected], 0.2)[0]
        assert abs(min_k_prob([t.logprob for t in vllm_tokens], 0.2)[0] - reference) <= TOL
        assert abs(min_k_prob([t.logprob for t in http_tokens], 0.2)[0] - reference) <= TOL


def test_label_tokens_agree(bundled_backend, offline, http):
    for label in LABELS:
        ids = bundled_backend.label_token_ids(label)
        assert len(ids) == 1 and offline["labels"][label] == ids == http.label_token_ids(label)


# ---- scale-out and resume ------------------------------------------------------------------------------------
def test_two_server_urls_share_queries_with_identical_answers(server, http):
    alias = server.replace("127.0.0.1", "localhost")
    shared = http_backend(server, alias)
    tops = shared.next_token_logprobs(CHATS * 2, 20)
    assert all(n > 0 for n in shared.pool.answered) and sum(shared.pool.answered) == 2 * len(CHATS)
    for got, expected in zip(tops, http.next_token_logprobs(CHATS * 2, 20)):
        assert [t.to_json() for t in got] == [t.to_json() for t in expected]


class Counting:
    def __init__(self, backend):
        self.backend, self.model_id, self.asked = backend, backend.model_id, 0

    def next_token_logprobs(self, chats, top_logprobs):
        self.asked += len(chats)
        return self.backend.next_token_logprobs(chats, top_logprobs)


def test_run_interrupted_on_transformers_resumes_on_http_from_cache(bundled_backend, http, tmp_path):
    params = {"temperature": 0, "max_tokens": 1, "top_logprobs": 20}
    queries = [Query("recall", MODEL, f"q{i}", canonical_json(c), params) for i, c in enumerate(CHATS)]
    path = tmp_path / "recall.jsonl"

    def asker(backend):
        return lambda batch: [{"top": [t.to_json() for t in top]} for top in
                              backend.next_token_logprobs([json.loads(q.prompt) for q in batch], 20)]

    model = ModelConfig(batch_size=2)
    ask_missing("recall", queries[:3], ResponseCache(path), asker(bundled_backend), model, always, 6)
    resumed = Counting(http)
    assert http.model_id == bundled_backend.model_id == MODEL  # the key holds the model, never the endpoint
    asked = ask_missing("recall", queries, ResponseCache(path), asker(resumed), model, always, 6)
    assert asked == resumed.asked == 3
    cache = ResponseCache(path)
    assert len(cache) == 6 and not cache.missing(queries)
    for query, expected in zip(queries, bundled_backend.next_token_logprobs(CHATS, 20)):
        assert_same_top(expected, [TokenLogprob.from_json(t) for t in cache.response(query)["top"]])
    other_model = [Query("recall", "another-model", q.query_id, q.prompt, q.params) for q in queries]
    assert len(cache.missing(other_model)) == 6


# ---- scoring that does not depend on the batch (vllm-project/vllm#42019) -------------------------------------------
@pytest.mark.parametrize("other", ["prompt_reversed", "prompt_one_by_one"])
def test_vllm_prompt_logprobs_do_not_depend_on_batch_order_or_size(offline, other):
    """The vLLM backend turns prefix caching off (with it on, vLLM's default, the prompt log-probs of a prompt change
    with the order of the batch): the same texts in reverse order and one at a time give the same log-probs (1e-5
    relative, 1e-5 nats near 0: tests/test_batch_invariance.py), and the backend's record says so."""
    from test_batch_invariance import assert_same_scores

    assert_same_scores(offline["prompt"], offline[other])
    assert offline["described"]["prefix_caching"] == "off"


# ---- the moments of the Min-K% pass (Min-K%++, Gap-K%) -----------------------------------------------------------
def test_top20_moments_agree_with_the_rule_applied_to_the_exact_distribution(bundled_backend, offline, http):
    """vLLM offline and its server return each prompt position's top-20 and the realised token; their moments are
    llm/moments.py's rule on those (offline: the rest spread over the vocabulary; the server, without [model]
    tokenizer: renormalised). The same rule applied to the transformers backend's exact top-20 gives the same moments
    (MOMENT_TOL: the log-probs agree within TOL, and m2 averages their squares, measured up to 1.3e-3 relative), and
    the top-1 is the exact top-1 of the whole distribution (TOL)."""
    import torch

    from lapbias.llm import moments

    assert offline["vocabulary"] == bundled_backend.model.config.vocab_size
    over_http = http.prompt_scores(TEXTS)
    exact = bundled_backend.prompt_scores(TEXTS)
    for text, vllm_score, http_score, full in zip(TEXTS, offline["scores"], over_http, exact):
        ids = torch.tensor([bundled_backend.tokens.encode(text)])
        with torch.inference_mode():
            log_probs = torch.log_softmax(bundled_backend.model(input_ids=ids).logits[0, :-1].double(), -1)
        top = torch.topk(log_probs, moments.MOMENT_TOP_K, -1)
        assert vllm_score["top_k"] == http_score.top_k == moments.MOMENT_TOP_K
        for j, target in enumerate(ids[0, 1:].tolist()):
            values = top.values[j].tolist() + ([] if target in top.indices[j].tolist() else [log_probs[j, target].item()])
            spread, renormalised = moments.from_top(values, offline["vocabulary"]), moments.from_top(values)
            assert vllm_score["moments"][j] == pytest.approx(spread, rel=MOMENT_TOL, abs=MOMENT_TOL), (text, j)
            assert http_score.moments[j] == pytest.approx(renormalised, rel=MOMENT_TOL, abs=MOMENT_TOL), (text, j)
            assert vllm_score["moments"][j][2] == pytest.approx(full.moments[j][2], abs=TOL)


# ---- sampling fallback on the real model ---------------------------------------------------------------------
def test_sampling_fallback_reproducible_offline(offline):
    assert [len(answers) for answers in offline["samples"]] == [25, 25, 25]
    assert offline["samples"] == offline["samples_again"]


def test_sampling_fallback_over_http_reproducible_and_close_to_probabilities(http):
    first = sampling.ask(http, CHATS[:1], 25, seed=11)
    assert first == sampling.ask(http, CHATS[:1], 25, seed=11)
    assert first[0]["approximated"] and first[0]["n_samples"] == 25
    (answers,) = http.sample(CHATS[:1], 200, seed=3)
    (top,) = http.next_token_logprobs(CHATS[:1], 20)
    for candidate in top[:3]:
        p = math.exp(candidate.logprob)
        frequency = answers.count(candidate.token) / len(answers)
        assert abs(frequency - p) <= 5 * math.sqrt(p * (1 - p) / len(answers)) + 0.01, (candidate, frequency)


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(vllm_answers()), encoding="utf-8")
