"""The transformers backend on the real bundled model, checked against direct forward passes written here."""

from __future__ import annotations

import math

import pytest
import torch

from lapbias.errors import ModelError
from lapbias.llm.base import chat
from lapbias.signals.labels import check_single_token

CHATS = [
    chat("On 2024-03-01, did the closing stock price of Apple Inc. (AAPL) go up or down compared to the "
         "previous trading day? Respond with exactly one word and nothing else: up, down, or unknown."),
    chat("Headline: Boeing faces new lawsuit. Will the stock go up or down? One word."),
    chat("Hi"),
]


def direct_logprobs(backend, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0].float()
    return torch.log_softmax(logits, dim=-1)


def rendered(backend, messages) -> list[int]:
    return list(backend.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                                      return_dict=True)["input_ids"])


def test_recall_labels_are_single_tokens(bundled_backend):
    ids = check_single_token(bundled_backend, ("up", "down", "unknown"))
    assert len(set(ids.values())) == 3


def test_multi_token_label_stops_with_clear_message(bundled_backend):
    with pytest.raises(ModelError, match="'lookaheadbiasness' is [2-9] tokens"):
        check_single_token(bundled_backend, ("up", "down", "lookaheadbiasness"))


def test_next_token_top20_matches_direct_forward_pass(bundled_backend):
    batched = bundled_backend.next_token_logprobs(CHATS, 20)
    for messages, top in zip(CHATS, batched):
        expected = direct_logprobs(bundled_backend, rendered(bundled_backend, messages))[-1]
        values, ids = torch.topk(expected, 20)
        assert [t.token_id for t in top] == ids.tolist()
        assert max(abs(t.logprob - v) for t, v in zip(top, values.tolist())) < 1e-4
        assert sum(math.exp(t.logprob) for t in top) <= 1 + 1e-6


def test_prompt_logprobs_match_direct_forward_pass(bundled_backend):
    texts = ["Apple reports record quarterly revenue on strong iPhone demand", "Short text"]
    scored = bundled_backend.prompt_logprobs(texts)
    for text, tokens in zip(texts, scored):
        ids = bundled_backend.tokenizer(text)["input_ids"]
        expected = direct_logprobs(bundled_backend, ids)
        assert [t.token_id for t in tokens] == ids[1:]
        for position, token in enumerate(tokens, start=1):
            assert abs(token.logprob - float(expected[position - 1, ids[position]])) < 1e-4


def test_greedy_generation_matches_single_row_generate(bundled_backend):
    generations = bundled_backend.generate(CHATS, 6, 20)
    for messages, generation in zip(CHATS, generations):
        ids = rendered(bundled_backend, messages)
        with torch.inference_mode():
            out = bundled_backend.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=6,
                                                 pad_token_id=bundled_backend.tokenizer.pad_token_id)
        new = out[0, len(ids):]
        assert generation.text == bundled_backend.tokenizer.decode(new, skip_special_tokens=True)
        first = direct_logprobs(bundled_backend, ids)[-1]
        assert generation.first_token.token_id == int(new[0]) == int(first.argmax())
        assert abs(generation.first_token.logprob - float(first.max())) < 1e-4
