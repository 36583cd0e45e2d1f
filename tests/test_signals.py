"""Forecast, recall and Min-K% on the real bundled model, plus the rules behind them, checked by hand."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from lapbias.config import from_dict
from lapbias.errors import ConfirmationDeclined, ParseRateError
from lapbias.io import Layout, write_parquet
from lapbias.llm.base import TokenLogprob
from lapbias.llm.cache import ResponseCache
from lapbias.signals import forecast, minkprob, recall
from lapbias.signals.batch import always
from lapbias.signals.labels import label_mass

PROMPT = ("Headline about {entity_name} ({ticker}): {text}\nWill the stock price go up or down on the next "
          "trading day? Answer with one word: up or down.")


class CountingBackend:
    """The real backend, counting how many prompts reach it (to prove cached queries are not asked again)."""

    def __init__(self, backend):
        self.backend, self.model_id, self.asked = backend, backend.model_id, 0

    def generate(self, chats, max_new_tokens, top_logprobs):
        self.asked += len(chats)
        return self.backend.generate(chats, max_new_tokens, top_logprobs)

    def next_token_logprobs(self, chats, top_logprobs):
        self.asked += len(chats)
        return self.backend.next_token_logprobs(chats, top_logprobs)

    def answer_logprobs(self, chats, top_logprobs, token_ids):
        self.asked += len(chats)
        return self.backend.answer_logprobs(chats, top_logprobs, token_ids)

    def prompt_logprobs(self, texts):
        self.asked += len(texts)
        return self.backend.prompt_logprobs(texts)

    def __getattr__(self, name):
        return getattr(self.backend, name)


@pytest.fixture()
def study(tmp_path):
    config = from_dict({
        "root": str(tmp_path),
        "study": {"cutoff": "2024-06-30"},
        "forecast": {"prompt": PROMPT, "parse_regex": r"\b(up|down|increase|decrease)\b",
                     "labels": {"up": 1, "down": -1, "increase": 1, "decrease": -1}, "max_new_tokens": 10},
        "model": {"batch_size": 4},
    })
    layout = Layout(tmp_path)
    layout.make_dirs()
    frame = pd.DataFrame({
        "row_id": ["a1", "a2", "b1", "c1", "c2"],
        "entity_id": ["AAPL", "AAPL", "BA", "NVDA", "NVDA"],
        "entity_name": ["Apple Inc.", "Apple Inc.", "Boeing Co.", "NVIDIA Corp.", "NVIDIA Corp."],
        "ticker": ["AAPL", "AAPL", "BA", "NVDA", "NVDA"],
        "text": ["Apple beats quarterly earnings estimates", "Apple faces EU antitrust fine",
                 "Boeing faces new lawsuit over safety", "Nvidia unveils next-generation AI chip",
                 "Nvidia shares slip on export curbs"],
        "text_date": pd.to_datetime(["2024-03-01", "2024-03-01", "2024-03-01", "2024-09-05", "2024-09-06"]),
        "target_date": pd.to_datetime(["2024-03-04", "2024-03-04", "2024-03-04", "2024-09-06", "2024-09-09"]),
        "outcome": [1.2, -0.4, -2.0, 0.8, -1.1],
    })
    write_parquet(frame, layout.derived_file("input.parquet"))
    return config, layout, frame


def file_hash(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_label_mass_dedups_by_token_id_strips_and_lowercases():
    top = [TokenLogprob(1, "up", math.log(0.3)), TokenLogprob(2, " Up", math.log(0.1)),
           TokenLogprob(1, "up", math.log(0.3)), TokenLogprob(3, "upward", math.log(0.2)),
           TokenLogprob(4, "down", math.log(0.05))]
    assert label_mass(top, "up") == pytest.approx((0.4, False))
    assert label_mass(top, "down") == pytest.approx((0.05, False))
    assert label_mass(top, "unknown") == (0.0, True)
    assert label_mass(top, "Up") == pytest.approx((0.4, False))  # a capitalised label in the config matches too


def test_min_k_prob_by_hand():
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0]
    assert minkprob.min_k_prob(logprobs, 0.2) == pytest.approx((math.exp(-9.5), 2))
    assert minkprob.min_k_prob(logprobs, 0.05) == pytest.approx((math.exp(-10.0), 1))  # at least one token
    assert minkprob.min_k_prob(logprobs, 1.0) == pytest.approx((math.exp(-5.5), 10))
    value, n = minkprob.min_k_prob([], 0.2)
    assert math.isnan(value) and n == 0


def test_forecast_end_to_end_cached_and_rebuilt(study, bundled_backend):
    config, layout, frame = study
    counting = CountingBackend(bundled_backend)
    result = forecast.run(config, layout, counting, always)
    assert counting.asked == len(frame)
    assert list(result["row_id"]) == list(frame["row_id"])
    for row in result.itertuples():
        found = forecast.parse_label(row.response, config.forecast.parse_regex, config.forecast.labels)
        if found is None:
            assert pd.isna(row.label) and math.isnan(row.mu_hat)
        else:
            assert row.label == found and row.mu_hat == config.forecast.labels[found]
        assert 0 < row.p_first <= 1
    lines = layout.raw_file("forecast").read_text().splitlines()
    assert len(lines) == len(frame)
    assert {json.loads(line)["task"] for line in lines} == {"forecast"}
    before = file_hash(layout.derived_file("forecast.parquet"))
    forecast.run(config, layout, counting, always)  # everything cached: no new model call
    assert counting.asked == len(frame)
    forecast.derive(config, layout)
    assert file_hash(layout.derived_file("forecast.parquet")) == before


def test_recall_one_query_per_entity_date_and_probabilities(study, bundled_backend):
    config, layout, frame = study
    counting = CountingBackend(bundled_backend)
    result = recall.run(config, layout, counting, always)
    pairs = frame.drop_duplicates(["entity_id", "target_date"])
    assert counting.asked == len(pairs) == len(result) == 4
    cache = ResponseCache(layout.raw_file("recall"))
    for row in result.itertuples():
        top = cache.get(row.cache_key)["response"]["top"]
        assert len(top) == 20
        by_label = {label: sum(math.exp(lp) for _, token, lp in top if token.strip().lower() == label)
                    for label in ("up", "down", "unknown")}
        assert row.p_up_topk == pytest.approx(by_label["up"], abs=1e-12)  # protocol: top-20 sums, kept beside
        assert row.p_down_topk == pytest.approx(by_label["down"], abs=1e-12)  # the exact p_up, p_down (item 8)
        assert row.p_up >= row.p_up_topk and row.p_down >= row.p_down_topk
        assert row.lap == pytest.approx(row.p_up + row.p_down)
        assert row.ud == pytest.approx(row.p_up - row.p_down)
        assert row.residual_mass == pytest.approx(1 - row.p_up - row.p_down - row.p_unknown)
        prompt = json.loads(cache.get(row.cache_key)["prompt"])[-1]["content"]
        assert row.target_date.strftime("%Y-%m-%d") in prompt
        assert "beats" not in prompt and "lawsuit" not in prompt  # no text in the recall query


def test_minkprob_matches_direct_computation(study, bundled_backend):
    config, layout, frame = study
    result = minkprob.run(config, layout, bundled_backend, always)
    row = frame.iloc[2]
    text = forecast.fill_prompt(PROMPT, row)
    ids = bundled_backend.tokenizer(text)["input_ids"]
    with torch.inference_mode():
        logits = bundled_backend.model(input_ids=torch.tensor([ids])).logits[0].float()
    logprobs = torch.log_softmax(logits, -1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].numpy()
    lowest = np.sort(logprobs)[: max(1, int(0.2 * len(logprobs)))]
    expected = math.exp(lowest.mean())
    got = result.set_index("row_id").loc[row["row_id"]]
    assert got["n_tokens"] == len(ids) - 1
    assert got["lap_mink"] == pytest.approx(expected, rel=1e-4)


def test_interrupted_cache_line_is_asked_again(study, bundled_backend):
    config, layout, frame = study
    recall.run(config, layout, bundled_backend, always)
    path = layout.raw_file("recall")
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # a crash in the middle of the last line
    counting = CountingBackend(bundled_backend)
    with pytest.warns(UserWarning, match="damaged line"):
        recall.run(config, layout, counting, always)
    assert counting.asked == 1
    assert len(path.read_text().splitlines()) == 4


def test_declined_confirmation_asks_nothing(study, bundled_backend):
    config, layout, _ = study
    counting = CountingBackend(bundled_backend)
    with pytest.raises(ConfirmationDeclined, match="--yes"):
        forecast.run(config, layout, counting, lambda message: False)
    assert counting.asked == 0


def test_a_prompt_whose_answers_do_not_parse_stops_after_the_first_answers(study, bundled_backend):
    """A YES/NO production prompt ran every query (29 minutes) before the parse-rate check stopped it at 1.7%, on
    answers visibly cut at max_new_tokens, which the message did not name. The check now runs on the first 32
    answers: the run stops there (the other queries not asked), with examples, the setting that cut the answers and
    the fix."""
    config, layout, frame = study
    many = pd.concat([frame.assign(row_id=frame["row_id"] + f"-{k}") for k in range(8)], ignore_index=True)
    write_parquet(many, layout.derived_file("input.parquet"))  # 40 rows
    yes_no = config.replace(forecast={"parse_regex": r"^\W*(yes|no|unknown)\b", "max_new_tokens": 1,
                                      "labels": {"yes": 1, "no": -1, "unknown": 0}}, model={"batch_size": 8})
    counting = CountingBackend(bundled_backend)
    with pytest.raises(ParseRateError) as raised:
        forecast.run(yes_no, layout, counting, always)
    message = str(raised.value)
    assert counting.asked == 32 and len(layout.raw_file("forecast").read_text().splitlines()) == 32
    assert "parse rate 0.0% is below 95.0% on the first 32 answers" in message and "row_id a1-0: " in message
    assert "32 of the 32 unparsed answers used all [forecast] max_new_tokens = 1 tokens" in message
    assert "raise max_new_tokens (e.g. to 32)" in message and "--allow-low-parse-rate" in message
    allowed = yes_no.replace(forecast={"allow_low_parse_rate": True})
    assert len(forecast.run(allowed, layout, counting, always)) == 40 and counting.asked == 40  # the rest, on override


def test_parse_rate_below_minimum_stops_with_examples(study):
    config, _, _ = study
    frame = pd.DataFrame({"row_id": [f"r{i}" for i in range(10)],
                          "response": ["up"] * 9 + ["The stock price is expected to"],
                          "parsed": [True] * 9 + [False]})
    with pytest.raises(ParseRateError, match=r"(?s)90\.0% is below 95\.0%.*row_id r9: 'The stock price"):
        forecast.check_parse_rate(frame, config)
    allowed = config.replace(forecast={"allow_low_parse_rate": True})
    assert forecast.check_parse_rate(frame, allowed) == pytest.approx(0.9)


def test_fully_cached_rerun_never_loads_the_model(study, bundled_backend):
    from lapbias.llm import LazyBackend

    config, layout, _ = study
    for stage in (forecast, recall, minkprob):
        stage.run(config, layout, bundled_backend, always)
    lazy = LazyBackend(config.model)
    for stage in (forecast, recall, minkprob):
        stage.run(config, layout, lazy, always)
    assert not lazy.loaded


def test_self_reported_confidence_and_label_parsing_by_hand():
    regex = r"confidence[:=\s]*([0-9]*\.?[0-9]+)"
    assert forecast.parse_confidence("up. Confidence: 0.8", regex) == pytest.approx(0.8)
    assert math.isnan(forecast.parse_confidence("up", regex))
    assert math.isnan(forecast.parse_confidence("up. Confidence: 0.8", ""))  # the prompt asks for none
    labels = {"up": 1.0, "down": -1.0}
    assert forecast.parse_label("  Up!", r"^\W*([A-Za-z]+)", labels) == "up"
    assert forecast.parse_label("I think down", r"^\W*([A-Za-z]+)", labels) is None  # first word only
    assert forecast.parse_label("I think down", r"\b(up|down)\b", labels) == "down"


def test_batch_message_states_count_time_and_suggests_a_sample_for_large_panels():
    from lapbias.signals.batch import describe_batch
    from lapbias.signals.timing import Timing

    timed = Timing(16, [8.0, 12.0], [16, 16], load=1.5, when="2026-01-02 10:00")
    small = describe_batch("recall", 120, 100, 500, timed.estimate(100))
    # 100 queries = 7 batches of up to 16 at the mean 10 s; range 7 x min(0.7 x 10, 8) to 7 x max(1.5 x 10, 12)
    assert "100 queries to ask (20 of 120 already cached); estimated time about 70 s (49 s to 105 s)" in small
    assert "7 batches of up to 16 at 10.0 s, measured on 2 batches (32 queries, 8.0 to 12.0 s)" in small
    assert "--sample" not in small
    assert "not yet measured" in describe_batch("recall", 120, 100, 500, None)
    assert "lapbias validate --sample N --seed S" in describe_batch("forecast", 20_000, 20_000, 20_000, None)


def test_precision_is_in_every_cache_key():
    """Answers computed in bfloat16 must never be reused for a float32 run (or the reverse): dtype is in the key."""
    from lapbias.config import from_dict
    from lapbias.signals import forecast, minkprob, recall

    frame = pd.DataFrame({"row_id": ["r1"], "entity_id": ["AAPL"], "entity_name": ["Apple Inc."], "ticker": ["AAPL"],
                          "text": ["Apple beats estimates"], "text_date": [pd.Timestamp("2024-03-01")],
                          "target_date": [pd.Timestamp("2024-03-04")]})
    keys = {}
    for dtype in ("float32", "bfloat16"):
        config = from_dict({"model": {"dtype": dtype}})
        keys[dtype] = [forecast.queries(frame, config)[0].key, minkprob.queries(frame, config)[0].key,
                       recall.queries(recall.recall_pairs(frame), config)[0].key]
    assert all(a != b for a, b in zip(keys["float32"], keys["bfloat16"]))
