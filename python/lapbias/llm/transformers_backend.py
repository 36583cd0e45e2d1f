"""transformers backend: batched forward passes on CPU or GPU, greedy decoding, exact log-probs.

Batches are sorted by length to cut padding. Chats are left-padded (the answer position is the last one of
every row) with position ids computed from the attention mask, so a padded row gives the same log-probs as
the row alone; raw texts for Min-K% are right-padded (positions start at 0 without any adjustment).
"""

from __future__ import annotations

import os
from typing import Sequence

import torch

from ..errors import ModelError
from . import bundled
from .base import AnswerLogprobs, Chat, Generation, PromptScore, TokenLogprob
from .local_tokens import LocalTokens

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class TransformersBackend:
    """`model_id` is what enters the cache key; the weights come from `bundled.resolve(model_id)`."""

    name = "transformers"

    def __init__(self, model_id: str, dtype: str = "float32", device: str = "cpu", batch_size: int = 16):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype not in _DTYPES:
            raise ModelError(f"[model] dtype = {dtype!r}; choose one of {sorted(_DTYPES)}")
        self.model_id = model_id
        self.dtype = dtype
        self.device = device
        self.batch_size = max(1, int(batch_size))
        location = bundled.resolve(model_id)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(location)
            self.model = AutoModelForCausalLM.from_pretrained(location, dtype=_DTYPES[dtype])
        except OSError as err:
            raise ModelError(
                f"cannot load model {model_id!r} from {location!r} (no network at run time: give a local "
                f"model directory or a hub id already in the local cache): {str(err).splitlines()[0]}"
            ) from None
        self.model.to(device).eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.n_parameters = sum(p.numel() for p in self.model.parameters())
        self.tokens = LocalTokens(self.tokenizer)
        self.context_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)
        """Tokens the model was trained to attend over (0: not stated); longer prompts are refused (signals/batch.py)."""

    # ---- helpers -------------------------------------------------------------------------------------------
    def _batches(self, sequences: Sequence[list[int]]):
        """Yield (indices, sequences) in length-sorted batches; callers scatter results back by index."""
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            yield indices, [sequences[i] for i in indices]

    def _pad(self, rows: list[list[int]], left: bool) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            if left:
                ids[i, width - len(row):] = torch.tensor(row)
                mask[i, width - len(row):] = 1
            else:
                ids[i, :len(row)] = torch.tensor(row)
                mask[i, :len(row)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _top(self, logprobs: torch.Tensor, k: int) -> list[TokenLogprob]:
        """The top-k of one row; values are copied off the device once (a per-element float() would wait for
        the GPU once per candidate)."""
        values, ids = torch.topk(logprobs.float(), k)
        return [TokenLogprob(i, self.tokens.text(i), v) for v, i in zip(values.tolist(), ids.tolist())]

    # ---- the three operations ------------------------------------------------------------------------------
    @torch.inference_mode()
    def answer_logprobs(self, chats: Sequence[Chat], top_logprobs: int,
                        token_ids: Sequence[int]) -> list[AnswerLogprobs]:
        """One forward pass per batch: the top-k at the answer position and the exact log-prob of every id in
        `token_ids` there (read off the full log-softmax, so nothing is censored)."""
        rendered = [self.tokens.render(c) for c in chats]
        requested = torch.tensor([int(i) for i in token_ids], dtype=torch.long)
        out: list[AnswerLogprobs | None] = [None] * len(rendered)
        for indices, rows in self._batches(rendered):
            ids, mask = self._pad(rows, left=True)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                                logits_to_keep=1).logits[:, -1, :]
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            chosen = logprobs[:, requested.to(logprobs.device)].cpu().tolist()
            for row, index in enumerate(indices):
                out[index] = AnswerLogprobs(
                    top=tuple(self._top(logprobs[row], top_logprobs)),
                    requested=tuple(TokenLogprob(int(i), self.tokens.text(i), v)
                                    for i, v in zip(requested.tolist(), chosen[row])),
                )
        return out  # type: ignore[return-value]

    def next_token_logprobs(self, chats: Sequence[Chat], top_logprobs: int = 20) -> list[list[TokenLogprob]]:
        return [list(answer.top) for answer in self.answer_logprobs(chats, top_logprobs, ())]

    def label_variants(self, label: str) -> list[int]:
        return self.tokens.label_variants(label)

    @torch.inference_mode()
    def generate(self, chats: Sequence[Chat], max_new_tokens: int, top_logprobs: int = 20) -> list[Generation]:
        rendered = [self.tokens.render(c) for c in chats]
        out: list[Generation | None] = [None] * len(rendered)
        for indices, rows in self._batches(rendered):
            ids, mask = self._pad(rows, left=True)
            result = self.model.generate(
                input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=max_new_tokens,
                output_logits=True, return_dict_in_generate=True, pad_token_id=self.tokenizer.pad_token_id,
                # Plain greedy decoding whatever the model's generation_config.json sets (some models ship a
                # repetition_penalty or no_repeat_ngram_size), as vLLM's explicit SamplingParams decode.
                temperature=None, top_p=None, top_k=None, repetition_penalty=1.0, no_repeat_ngram_size=0,
            )
            first_logprobs = torch.log_softmax(result.logits[0].float(), dim=-1)
            new_tokens = result.sequences[:, ids.shape[1]:].cpu()
            # log P(generated token | prefix) at every step; a row that ended early is padded after its EOS.
            step_logprobs = torch.stack([
                torch.log_softmax(step.float(), dim=-1).gather(-1, new_tokens[:, j:j + 1].to(step.device))[:, 0]
                for j, step in enumerate(result.logits)], dim=1).cpu().tolist()
            for row, index in enumerate(indices):
                generated = self._until_eos(new_tokens[row].tolist())
                out[index] = Generation(
                    text=self.tokenizer.decode(generated, skip_special_tokens=True),
                    tokens=tuple(TokenLogprob(t, self.tokens.text(t), step_logprobs[row][j])
                                 for j, t in enumerate(generated)),
                    first_top=tuple(self._top(first_logprobs[row], top_logprobs)),
                )
        return out  # type: ignore[return-value]

    def _until_eos(self, token_ids: list[int]) -> list[int]:
        """The generated ids up to and including the first end-of-sequence id (the rest is padding)."""
        eos = self.model.generation_config.eos_token_id
        stops = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
        for j, token_id in enumerate(token_ids):
            if token_id in stops:
                return token_ids[:j + 1]
        return token_ids

    @torch.inference_mode()
    def prompt_logprobs(self, texts: Sequence[str]) -> list[list[TokenLogprob]]:
        encoded = [self.tokens.encode(t) for t in texts]
        out: list[list[TokenLogprob]] = [[] for _ in encoded]
        for indices, rows in self._batches(encoded):
            ids, mask = self._pad(rows, left=False)
            logits = self.model(input_ids=ids, attention_mask=mask).logits[:, :-1, :].float()
            targets = ids[:, 1:]
            # log P(w_n | w_<n) = logit(w_n) - logsumexp(logits): no full log-softmax tensor is kept.
            token_logprobs = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
            values = token_logprobs.cpu().tolist()  # one device-to-host copy per batch
            for row, index in enumerate(indices):
                ids_row = rows[row]
                out[index] = [TokenLogprob(ids_row[j], self.tokens.text(ids_row[j]), values[row][j - 1])
                              for j in range(1, len(ids_row))]
        return out

    @torch.inference_mode()
    def prompt_scores(self, texts: Sequence[str]) -> list[PromptScore]:
        """One forward pass per batch, as `prompt_logprobs`; then per text, over the whole vocabulary in float64
        (`_distribution`), the realised token's log p and (mu, m2, top1) at every scored position."""
        encoded = [self.tokens.encode(t) for t in texts]
        out: list[PromptScore | None] = [None] * len(encoded)
        for indices, rows in self._batches(encoded):
            ids, mask = self._pad(rows, left=False)
            logits = self.model(input_ids=ids, attention_mask=mask).logits
            for row, index in enumerate(indices):
                ids_row = rows[row]
                stats = _distribution(logits[row, :len(ids_row) - 1], ids_row[1:]).cpu().tolist()
                out[index] = PromptScore(
                    tokens=tuple(TokenLogprob(t, self.tokens.text(t), v[0]) for t, v in zip(ids_row[1:], stats)),
                    moments=tuple((v[1], v[2], v[3]) for v in stats), top_k=0)
        return out  # type: ignore[return-value]

    def label_token_ids(self, label: str) -> list[int]:
        return self.tokens.label_ids(label)

    def describe(self) -> dict[str, str]:
        return {"backend": self.name, "model_id": self.model_id, "dtype": self.dtype, "device": self.device,
                "transformers": __import__("transformers").__version__, "torch": torch.__version__}


POSITIONS_PER_CHUNK = 256
"""Positions whose float64 distribution is held at once: 256 x 49,152 x 8 bytes = 100 MB per tensor on the bundled
model (a 2,000-token text over a 150,000-token vocabulary would otherwise hold 2.4 GB twice)."""


def _distribution(logits: torch.Tensor, targets: list[int]) -> torch.Tensor:
    """[n, 4]: per position, log p(target), mu = sum_v p log p, m2 = sum_v p (log p)^2 and max_v log p, in float64,
    POSITIONS_PER_CHUNK positions at a time (on the CPU for Apple's MPS, which has no float64).

    With x = logits − max (so top1 = −lse), e = exp(x), z = sum e, lse = log z: log p = x − lse, and the moments of
    log p follow from S1 = sum e x / z and S2 = sum e x^2 / z as mu = S1 − lse, m2 = S2 − 2 lse S1 + lse^2. Four
    passes over the [n, V] tensor and no float64 log-softmax tensor: measured 0.30 s against 0.85 s for
    log_softmax, exp and two products on 96 prompts (max difference 6e-13), so the Min-K% pass with every measure
    stays within 1.15x of Min-K% alone (benchmarks/bench_measures.py)."""
    if logits.device.type == "mps":
        logits = logits.cpu()
    ids = torch.tensor(targets, dtype=torch.long, device=logits.device)
    parts = []
    for start in range(0, logits.shape[0], POSITIONS_PER_CHUNK):
        x = logits[start:start + POSITIONS_PER_CHUNK].double()
        x = x - x.max(-1, keepdim=True).values
        e = x.exp()
        z = e.sum(-1)
        ex = e.mul_(x)
        lse = z.log()
        s1 = ex.sum(-1) / z
        s2 = torch.bmm(ex.unsqueeze(1), x.unsqueeze(2)).view(-1) / z
        chosen = x.gather(-1, ids[start:start + POSITIONS_PER_CHUNK].unsqueeze(-1)).squeeze(-1) - lse
        parts.append(torch.stack([chosen, s1 - lse, s2 - 2 * lse * s1 + lse * lse, -lse], dim=-1))
    return torch.cat(parts) if parts else torch.empty((0, 4), dtype=torch.float64)
