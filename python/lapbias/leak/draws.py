"""Temperature-1 draws with a fixed seed per draw (Variant E, App. J).

Backends with a `sample` method (vLLM, OpenAI-compatible servers; llm/sampling.py) are asked one answer per
draw with the draw's seed. The transformers backend deliberately has no `sample` (the recall sampling fallback
must refuse it, tests/test_sampling_fallback.py), so its draws are decoded here with its model and chat
rendering. Hand-written because `model.generate` takes one global RNG for the whole batch, so a draw would
depend on its batch-mates; here every row samples from softmax(logits / T) with its own `torch.Generator`
seeded by the draw's seed (left padding with position ids from the mask, as the backend's greedy path, and the
model's KV cache). A draw is reproducible from its seed up to float rounding of the batched forward pass.
Each draw comes back with whether it ended at the length limit (max_new_tokens tokens and no end of sequence; None
where the backend's `sample` does not say).
"""

from __future__ import annotations

from typing import Sequence

from ..errors import ModelError
from ..llm.base import Chat


def draw(backend, chats: Sequence[Chat], seeds: Sequence[int], temperature: float,
         max_new_tokens: int) -> list[tuple[str, bool | None]]:
    """(text, ended at the length limit) per chat, each drawn with its own seed."""
    sample = getattr(backend, "sample", None)
    if sample is not None:
        return [(sample([c], 1, s, temperature, max_new_tokens)[0][0], None) for c, s in zip(chats, seeds)]
    model, tokens = getattr(backend, "model", None), getattr(backend, "tokens", None)
    if model is None or tokens is None:
        raise ModelError(f"backend {backend.describe().get('backend', '?')} cannot draw at temperature "
                         f"{temperature:g}; leave variant E out of [leak] variants")
    return _local_draws(backend, model, tokens, chats, seeds, temperature, max_new_tokens)


def _local_draws(backend, model, tokens, chats, seeds, temperature, max_new_tokens) -> list[tuple[str, bool]]:
    import torch

    rows = [tokens.render(c) for c in chats]
    width, pad = max(len(r) for r in rows), backend.tokenizer.pad_token_id
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=model.device)
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=model.device)
    generators = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
    eos = backend.tokenizer.eos_token_id
    new: list[list[int]] = [[] for _ in rows]
    done = [False] * len(rows)
    with torch.inference_mode():
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
        for _ in range(max_new_tokens):
            probs = torch.softmax(out.logits[:, -1, :].float() / temperature, dim=-1).cpu()
            step = [int(torch.multinomial(probs[i], 1, generator=generators[i])) for i in range(len(rows))]
            for i, token in enumerate(step):
                if not done[i]:
                    done[i] = token == eos
                    if not done[i]:
                        new[i].append(token)
            if all(done):
                break
            mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=mask.dtype, device=mask.device)], dim=1)
            positions = positions[:, -1:] + 1
            out = model(input_ids=torch.tensor(step, device=model.device).unsqueeze(1), attention_mask=mask,
                        position_ids=positions, past_key_values=out.past_key_values, use_cache=True)
    return [(backend.tokenizer.decode(t, skip_special_tokens=True), not finished and len(t) == max_new_tokens)
            for t, finished in zip(new, done)]
