"""Scoring that does not depend on the batch (issue: LAP measures a referee asks for, item 5): the prompt log-probs
of the same texts, scored in two orders and in two batch sizes on the real bundled model (transformers backend,
fp32), agree within 1e-5 relative, or 1e-5 nats for a log-prob within 1 nat of 0, where a relative tolerance means
nothing (padding moves the last float32 digits: measured up to 2e-6 nats, 3e-5 relative, on a log-prob of -0.074). The same check on vLLM offline (CPU) is in
tests/test_backend_parity.py, whose vLLM run happens in a subprocess; the check of an OpenAI-compatible server's
first batch is tested against a server whose scores depend on the order (tests/fault_server.py)."""

from __future__ import annotations

import pytest

from lapbias.llm.transformers_backend import TransformersBackend

TEXTS = [
    "2024-03-13 | Apple Inc. (AAPL): Apple reports record quarterly revenue on strong iPhone demand",
    "Short text",
    "2023-11-09 | Exxon Mobil (XOM): Exxon to buy Pioneer Natural Resources for $59.5 billion in stock",
    "Quarterly earnings beat estimates; shares rose 7% in after-hours trading.",
    "2024-01-08 | Boeing Company (BA): Boeing shares fall after a door plug blew out mid-flight",
]
RELATIVE = 1e-5


def assert_same_scores(first, second):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert [t.token_id for t in a] == [t.token_id for t in b]
        for x, y in zip(a, b):
            assert abs(x.logprob - y.logprob) <= RELATIVE * max(1.0, abs(x.logprob)), (x, y)


@pytest.fixture(scope="module")
def scored():
    one, five = (TransformersBackend("bundled:SmolLM2-135M-Instruct", batch_size=size) for size in (1, 5))
    return {"in_order": five.prompt_logprobs(TEXTS), "reversed": five.prompt_logprobs(TEXTS[::-1])[::-1],
            "one_by_one": one.prompt_logprobs(TEXTS), "pairs": TransformersBackend(
                "bundled:SmolLM2-135M-Instruct", batch_size=2).prompt_logprobs(TEXTS)}


@pytest.mark.parametrize("other", ["reversed", "one_by_one", "pairs"])
def test_prompt_logprobs_do_not_depend_on_batch_order_or_size(scored, other):
    assert_same_scores(scored["in_order"], scored[other])


@pytest.mark.parametrize("scoring", ["stable", "order_dependent"])
def test_an_openai_server_whose_scores_move_with_the_order_is_stopped_before_caching(tmp_path, scoring):
    """A stand-in for vLLM's OpenAI server (tests/fault_server.py: TEST DOUBLE, a server with the prefix-cache bug
    cannot be made to show it on demand): the Min-K% stage scores its first texts in two orders first; a server
    whose scores move stops the stage naming --no-enable-prefix-caching, and nothing is cached."""
    from fault_server import FaultServer
    from lapbias.config import from_dict
    from lapbias.errors import ModelError
    from lapbias.io import Layout, write_parquet
    from lapbias.llm import make_backend
    from lapbias.signals import minkprob
    from lapbias.signals.batch import always
    from test_panel import synthetic_stage_files

    server = FaultServer()
    server.scoring = scoring
    try:
        layout = Layout(tmp_path)
        layout.make_dirs()
        inputs = synthetic_stage_files(layout, n_entities=3)
        write_parquet(inputs, layout.derived_file("input.parquet"))
        config = from_dict({"root": str(tmp_path), "model": {"backend": "openai", "base_url": server.url,
                                                              "model_id": "m", "batch_size": 4}})
        backend = make_backend(config.model)
        if scoring == "stable":
            result = minkprob.run(config, layout, backend, always)
            assert len(result) == len(inputs)
        else:
            with pytest.raises(ModelError, match="--no-enable-prefix-caching"):
                minkprob.run(config, layout, backend, always)
            assert not layout.raw_file("minkprob").exists() or not layout.raw_file("minkprob").read_text().strip()
    finally:
        server.close()
