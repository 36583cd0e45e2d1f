"""The label token's probability p(w_{N+1}) (paper Table IV) and exact recall label probabilities, on the real
bundled model, each checked against a forward pass computed here (issue 11, items 4 and 8)."""

from __future__ import annotations

import hashlib
import json
import math

import pandas as pd
import pytest
import torch

from lapbias.config import from_dict
from lapbias.io import Layout, read_parquet, write_parquet
from lapbias.llm.base import TokenLogprob
from lapbias.llm.cache import ResponseCache
from lapbias.signals import forecast, recall
from lapbias.signals.batch import always

from fault_server import FaultServer

BRACES = {"prompt": "Repeat exactly: {text}", "parse_regex": r"\{\s*(good|bad|neutral)\s*\}",
          "labels": {"good": 1, "bad": -1, "neutral": 0}, "max_new_tokens": 10}
"""The paper's `{good}` answer format. The 135M model does not follow a classification instruction in braces,
but it copies them, so the answer holds the label after a "{" token, as a compliant model's would."""


def _study(root, rows: list[tuple[str, str, str, str]], **sections) -> tuple:
    config = from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"}, **sections})
    layout = Layout(root)
    layout.make_dirs()
    frame = pd.DataFrame({
        "row_id": [f"r{i}" for i in range(len(rows))], "entity_id": [r[0] for r in rows],
        "entity_name": [r[1] for r in rows], "ticker": [r[0] for r in rows], "text": [r[2] for r in rows],
        "text_date": pd.to_datetime([r[3] for r in rows]) - pd.Timedelta(days=1),
        "target_date": pd.to_datetime([r[3] for r in rows]), "outcome": [0.5] * len(rows),
    })
    write_parquet(frame, layout.derived_file("input.parquet"))
    return config, layout


def _answer_logprobs(backend, messages, prefix: list[int]) -> torch.Tensor:
    """log P(· | chat template, prefix) at the next position, by a plain forward pass of the model."""
    ids = backend.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                                return_dict=True)["input_ids"]
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([list(ids) + prefix])).logits[0, -1].float()
    return torch.log_softmax(logits, -1)


# ---- item 4: p_first is the label token's probability -------------------------------------------------------
def test_label_token_by_hand():
    tokens = [TokenLogprob(1, "{", -0.01), TokenLogprob(2, "good", -0.7), TokenLogprob(3, "}", -0.02)]
    regex = BRACES["parse_regex"]
    assert forecast.label_token(tokens, regex, "good") == tokens[1]
    spaced = [TokenLogprob(4, "The", -1.0), TokenLogprob(5, " answer:", -0.5), TokenLogprob(1, " {", -0.1),
              TokenLogprob(6, " Good", -0.9), TokenLogprob(3, "}", -0.1)]
    assert forecast.label_token(spaced, regex, "good") == spaced[3]  # the label's first letter, past the space
    merged = [TokenLogprob(7, "{good", -0.3), TokenLogprob(3, "}", -0.1)]
    assert forecast.label_token(merged, regex, "good") == merged[0]  # the token that carries the label's start
    assert forecast.label_token(tokens, regex, None) is None  # unparsed response
    assert forecast.label_token([], regex, "good") is None  # an endpoint without log-probs
    assert forecast.label_token(tokens, regex, "bad") is None  # the tokens do not hold that label


def test_p_first_is_the_label_token_with_a_braces_answer_format(tmp_path, bundled_backend):
    config, layout = _study(tmp_path, [("AAPL", "Apple Inc.", "{good}", "2024-03-04"),
                                       ("BA", "Boeing Co.", "{bad}", "2024-03-04")], forecast=BRACES)
    result = forecast.run(config, layout, bundled_backend, always)
    cache = ResponseCache(layout.raw_file("forecast"))
    assert list(result["label"]) == ["good", "bad"]
    for row in result.itertuples():
        entry = cache.get(row.cache_key)
        tokens = [TokenLogprob.from_json(t) for t in entry["response"]["tokens"]]
        assert bundled_backend.tokenizer.decode([t.token_id for t in tokens], skip_special_tokens=True) == \
            row.response  # every generated token, nothing after the end of the answer
        position = next(j for j, t in enumerate(tokens) if t.token.strip().lower() == row.label)
        assert position > 0 and tokens[position - 1].token.endswith("{")  # the first token is not the label
        assert row.label_token == tokens[position].token
        messages = json.loads(entry["prompt"])
        expected = _answer_logprobs(bundled_backend, messages, [t.token_id for t in tokens[:position]])
        assert row.p_first == pytest.approx(math.exp(float(expected[tokens[position].token_id])), rel=1e-4)


# ---- item 8: exact label probabilities --------------------------------------------------------------------
RECALL_ROWS = [("AAPL", "Apple Inc.", "x", "2024-03-04"), ("BA", "Boeing Co.", "x", "2024-01-08"),
               ("NVDA", "NVIDIA Corp.", "x", "2024-09-06")]


def test_exact_label_probabilities_remove_censoring_and_rebuild_without_the_model(tmp_path, bundled_backend):
    config, layout = _study(tmp_path, RECALL_ROWS)
    result = recall.run(config, layout, bundled_backend, always)
    vocabulary = [bundled_backend.tokenizer.decode([i]) for i in range(len(bundled_backend.tokenizer))]
    cache = ResponseCache(layout.raw_file("recall"))
    assert result["exact"].all()
    assert not result[["censored_up", "censored_down", "censored_unknown"]].to_numpy().any()
    assert result["censored_unknown_topk"].any()  # the protocol's top-20 censors "unknown" on this model
    for row in result.itertuples():
        entry = cache.get(row.cache_key)
        logprobs = _answer_logprobs(bundled_backend, json.loads(entry["prompt"]), [])
        for label, value in (("up", row.p_up), ("down", row.p_down), ("unknown", row.p_unknown)):
            ids = [i for i, text in enumerate(vocabulary) if text.strip().lower() == label]
            assert len(ids) >= 4  # " up", "up", "Up", " Up", ... all count
            assert value == pytest.approx(float(torch.exp(logprobs[ids]).sum()), rel=1e-4)  # batched fp32
        top = [TokenLogprob.from_json(t) for t in entry["response"]["top"]]
        for label, value in (("up", row.p_up_topk), ("down", row.p_down_topk), ("unknown", row.p_unknown_topk)):
            assert value == pytest.approx(sum(math.exp(t.logprob) for t in top if t.token.strip().lower() == label))
        assert row.p_unknown >= row.p_unknown_topk and row.lap == pytest.approx(row.p_up + row.p_down)
        assert row.censoring_bound == pytest.approx(math.exp(top[-1].logprob))
        assert row.residual_mass == pytest.approx(1 - row.p_up - row.p_down - row.p_unknown)
    before = hashlib.sha256(layout.derived_file("recall.parquet").read_bytes()).hexdigest()
    layout.derived_file("recall.parquet").unlink()
    recall.derive(config, layout)  # from the raw JSONL alone
    assert hashlib.sha256(layout.derived_file("recall.parquet").read_bytes()).hexdigest() == before
    other = config.replace(recall={"labels": ("rise", "fall", "unknown")})
    pairs = recall.recall_pairs(read_parquet(layout.derived_file("input.parquet")))
    assert len(cache.missing(recall.queries(pairs, other))) == len(pairs)  # other labels: never these answers


def test_http_recall_keeps_top_k_and_states_the_censoring_bound(tmp_path):
    server = FaultServer()  # top candidates up 0.6, down 0.2, " up" 0.1, unknown 0.05
    try:
        config, layout = _study(tmp_path, RECALL_ROWS[:1], recall={"top_logprobs": 3},
                                model={"backend": "openai", "base_url": server.url,
                                       "tokenizer": "bundled:SmolLM2-135M-Instruct"})
        from lapbias.llm import make_backend

        (row,) = recall.run(config, layout, make_backend(config.model), always).itertuples()
    finally:
        server.close()
    assert not row.exact and row.censored_unknown and row.censored_unknown_topk
    assert (row.p_up, row.p_down, row.p_unknown) == pytest.approx((0.7, 0.2, 0.0))
    assert row.censoring_bound == pytest.approx(0.1)  # "unknown" is below the 3rd candidate's probability
    warning = recall.censoring_warnings(pd.DataFrame([row._asdict()]), config)
    assert len(warning) == 1 and "below 0.1" in warning[0]


def test_report_states_the_censoring_bound_and_the_exact_share():
    from lapbias.report.describe import lap_distribution, recall_checks
    from lapbias.report.markdown import lap_flags

    panel = pd.DataFrame({
        "entity_id": ["A", "B", "C", "D"], "target_date": pd.to_datetime(["2024-01-02"] * 4), "post": [0, 0, 0, 1],
        "censored_up": False, "censored_down": False, "censored_unknown": [True, True, False, False],
        "censoring_bound": [0.012, 0.009, 0.5, 0.3], "lap_exact": [False, False, False, True],
        "residual_mass": 0.5, "lap_recall": 0.1, "lap_mink": 0.0})
    checks = recall_checks(panel).set_index("sample")
    assert checks.loc["pre", "censoring_bound_max"] == 0.012  # over the queries with a censored label only
    assert checks.loc["pre", "exact"] == 0 and checks.loc["post", "exact"] == 1
    assert pd.isna(checks.loc["post", "censoring_bound_max"])
    flags = lap_flags(lap_distribution(panel), checks.reset_index(), from_dict({}))
    assert any("label 'unknown'" in f and "probability below 0.012" in f for f in flags)
