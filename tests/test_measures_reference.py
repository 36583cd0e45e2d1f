"""Each LAP measure of the Min-K% pass equals an independent implementation on the real bundled model: the authors'
own formulas, run here on the model's logits for one text at a time (no padding), in float64 -- Min-K%++ as
zjysteven/mink-plus-plus run.py computes it, Gap-K% as meaoww/gap-k wikimia.py does (`window_lowmean`), the zlib
ratio and the loss from the mean log-likelihood (run.py's `ll = -loss.item()`, the loss being the mean token NLL;
here in float64, as every other line, and checked against transformers' own float32 loss,
`model(input_ids, labels=input_ids).loss`, to FLOAT32_LOSS) and the standard library's zlib. lapbias scores the same texts through its backend (batch size 1, so the logits are the same) and its
measures (signals/measures); they must agree to 1e-6. The moments are also invariant to the batch (1e-5, as the
log-probs: tests/test_batch_invariance.py)."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
import torch

from lapbias.config import from_dict
from lapbias.llm import moments
from lapbias.llm.transformers_backend import TransformersBackend
from lapbias.signals.measures import REGISTRY, ScoredText

TEXTS = [
    "2024-03-13 | Apple Inc. (AAPL): Apple reports record quarterly revenue on strong iPhone demand",
    "2023-11-09 | Exxon Mobil (XOM): Exxon to buy Pioneer Natural Resources for $59.5 billion in stock",
    "Quarterly earnings beat estimates; shares rose 7% in after-hours trading.",
    "Short text",
    "Fed",
]
TOLERANCE = 1e-6
FLOAT32_LOSS = 1e-4
"""transformers' loss is float32 (a log-sum-exp over 49,152 logits, ~sqrt(49152) x 6e-8 ~ 1e-5 relative) and its last
digits vary with the CPU and its threads: 1.0e-6 to 4.0e-6 from the float64 mean on these texts (AMD EPYC, 2 threads),
enough to fail a 1e-6 comparison of the zlib ratio. A wrong formula (a sum for the mean, a token off) is off by far
more than 1e-4."""
RATIO, WINDOW = 0.2, 3


@pytest.fixture(scope="module")
def one_by_one():
    return TransformersBackend("bundled:SmolLM2-135M-Instruct", batch_size=1)


def authors_scores(backend, text: str) -> dict[str, float]:
    """The reference scores of one text, written as the detectors' authors wrote them (quoted in each line)."""
    ids = torch.tensor([backend.tokens.encode(text)])
    with torch.inference_mode():
        output = backend.model(input_ids=ids, labels=ids)
    logits = output.logits[0, :-1].double()
    input_ids = ids[0][1:].unsqueeze(-1)
    probs = torch.softmax(logits, dim=-1)
    log_probs = torch.log_softmax(logits, dim=-1)
    token_log_probs = log_probs.gather(dim=-1, index=input_ids).squeeze(-1)
    ll = token_log_probs.mean().item()  # mink-plus-plus run.py: ll = -loss.item(), the loss in float64
    assert abs(ll + output.loss.item()) <= FLOAT32_LOSS * abs(ll)  # transformers' own (float32) loss
    mu = (probs * log_probs).sum(-1)
    sigma = (probs * torch.square(log_probs)).sum(-1) - torch.square(mu)
    mink_plus = ((token_log_probs - mu) / sigma.sqrt()).numpy()
    k_length = max(1, int(len(mink_plus) * RATIO))  # run.py's int(len * ratio); max(1, .) as gap-k's
    top1_logp = log_probs.gather(-1, torch.argmax(logits, -1).unsqueeze(-1)).squeeze(-1)
    gap_norm = ((token_log_probs - top1_logp) / torch.clamp(sigma, min=1e-8).sqrt()).numpy()
    smoothed = gap_norm if gap_norm.size < WINDOW else np.convolve(gap_norm, np.ones(WINDOW) / WINDOW, mode="valid")
    return {"minkpp": float(np.mean(np.sort(mink_plus)[:k_length])),
            "gapk": float(np.mean(np.sort(smoothed)[:max(1, int(len(smoothed) * RATIO))])),
            "zlib": ll / len(zlib.compress(bytes(text, "utf-8"))),
            "loss": math.exp(ll),
            "minkprob": math.exp(np.mean(np.sort(token_log_probs.numpy())[:k_length]))}


def lapbias_scores(backend, texts: list[str]) -> list[dict[str, float]]:
    config = from_dict({"minkprob": {"k": RATIO, "gap_window": WINDOW}})
    out = []
    for text, score in zip(texts, backend.prompt_scores(texts)):
        stats = np.array(score.moments, dtype=float).reshape(-1, 3)
        scored = ScoredText(text, np.array([t.logprob for t in score.tokens]), stats[:, 0], stats[:, 1], stats[:, 2])
        out.append({name: m.score(scored, config) for name, m in REGISTRY.items()
                    if m.task == "minkprob" and name != "ref"})  # ref: tests/test_measures_pipeline.py
    return out


@pytest.mark.parametrize("index", range(len(TEXTS)))
def test_every_measure_equals_its_authors_formula_on_the_bundled_model(one_by_one, index):
    text = TEXTS[index]
    expected = authors_scores(one_by_one, text)
    found = lapbias_scores(one_by_one, [text])[0]
    assert set(found) == set(expected)
    for name, value in expected.items():
        assert abs(found[name] - value) <= TOLERANCE * max(1.0, abs(value)), (name, found[name], value)


def test_a_one_token_text_has_no_score():
    """Nothing is scored after the only token: every measure is missing (NaN), not 0 as gap-k's code returns."""
    config = from_dict({})
    empty = ScoredText("a", np.array([]), np.array([]), np.array([]), np.array([]))
    assert all(math.isnan(m.score(empty, config)) for m in REGISTRY.values() if m.task == "minkprob")


def test_measures_reading_the_moments_are_missing_without_them(one_by_one):
    """An endpoint that returns no candidates at the prompt positions (moments NaN): Min-K%++ and Gap-K% are missing,
    the measures of the tokens' log-probs are not."""
    config = from_dict({})
    score = one_by_one.prompt_scores(TEXTS[:1])[0]
    n = len(score.tokens)
    bare = ScoredText(TEXTS[0], np.array([t.logprob for t in score.tokens]), *(np.full(n, np.nan),) * 3)
    values = {name: m.score(bare, config) for name, m in REGISTRY.items() if m.task == "minkprob"}
    assert math.isnan(values["minkpp"]) and math.isnan(values["gapk"])
    assert all(math.isfinite(values[name]) for name in ("minkprob", "zlib", "loss"))


def test_moments_do_not_depend_on_the_batch():
    five, two = (TransformersBackend("bundled:SmolLM2-135M-Instruct", batch_size=size) for size in (5, 2))
    first, again = five.prompt_scores(TEXTS), two.prompt_scores(TEXTS[::-1])[::-1]
    for a, b in zip(first, again):
        for x, y in zip(a.moments, b.moments):
            for u, v in zip(x, y):
                assert abs(u - v) <= 1e-5 * max(1.0, abs(u)), (x, y)


def test_the_top_k_moments_are_exact_when_the_top_k_is_the_whole_vocabulary(one_by_one):
    """llm/moments.py from every token's log-prob reproduces the whole-vocabulary moments (the approximation is only
    in leaving tokens out)."""
    ids = torch.tensor([one_by_one.tokens.encode(TEXTS[2])])
    with torch.inference_mode():
        log_probs = torch.log_softmax(one_by_one.model(input_ids=ids).logits[0, :-1].double(), -1)
    exact = one_by_one.prompt_scores(TEXTS[2:3])[0].moments
    for position in (0, 5, len(exact) - 1):
        approx = moments.from_top(log_probs[position].tolist())
        assert approx == pytest.approx(exact[position], rel=1e-9, abs=1e-9)


def test_the_top_k_rest_is_spread_over_the_vocabulary_or_renormalised():
    """llm/moments.py by hand: two tokens of probability 0.5 and 0.25 in a vocabulary of 6; the rest, 0.25, spread
    as 0.0625 on each of the 4 others; renormalised, the two alone with weights 2/3 and 1/3."""
    values = [math.log(0.5), math.log(0.25)]
    mu = 0.5 * math.log(0.5) + 0.25 * math.log(0.25) + 0.25 * math.log(0.0625)
    m2 = 0.5 * math.log(0.5) ** 2 + 0.25 * math.log(0.25) ** 2 + 0.25 * math.log(0.0625) ** 2
    assert moments.from_top(values, 6) == pytest.approx((mu, m2, math.log(0.5)), rel=1e-12)
    assert moments.from_top(values) == pytest.approx(
        (2 / 3 * math.log(0.5) + 1 / 3 * math.log(0.25), 2 / 3 * math.log(0.5) ** 2 + 1 / 3 * math.log(0.25) ** 2,
         math.log(0.5)), rel=1e-12)
    assert all(math.isnan(v) for v in moments.from_top([None]))


def test_the_moments_are_the_same_computed_in_chunks_of_positions(one_by_one, monkeypatch):
    """_distribution holds POSITIONS_PER_CHUNK positions' float64 distributions at a time: chunks of 3 give what one
    chunk gives, to float64 rounding (the batched product may sum in another order: measured 2e-15 relative)."""
    from lapbias.llm import transformers_backend

    whole = one_by_one.prompt_scores(TEXTS[:2])
    monkeypatch.setattr(transformers_backend, "POSITIONS_PER_CHUNK", 3)
    chunked = one_by_one.prompt_scores(TEXTS[:2])
    for a, b in zip(whole, chunked):
        assert np.array(b.moments) == pytest.approx(np.array(a.moments), rel=1e-12, abs=1e-12)
        assert [t.logprob for t in b.tokens] == pytest.approx([t.logprob for t in a.tokens], rel=1e-12, abs=1e-12)
