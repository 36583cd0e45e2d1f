"""LLM backends behind one interface (base.Backend) and the raw-response cache shared by all signals."""

from __future__ import annotations

from ..config import ModelConfig
from ..errors import ConfigError
from .base import Backend, Chat, Generation, TokenLogprob, chat


class LazyBackend:
    """Loads the backend on first use, so a run whose queries are all cached never loads model weights.

    `model_id` (what the cache key needs) is known without loading anything.
    """

    def __init__(self, model: ModelConfig, on_load=None):
        self.model_id = model.model_id
        self._config = model
        self._on_load = on_load
        self._backend: Backend | None = None

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    def close(self) -> None:
        """Release the backend's resources if it was loaded and holds any (the vLLM engine process)."""
        if self._backend is not None and hasattr(self._backend, "close"):
            self._backend.close()

    def __getattr__(self, name: str):
        if self._backend is None:
            if self._on_load is not None:
                self._on_load(self._config)
            self._backend = make_backend(self._config)
        return getattr(self._backend, name)


def make_backend(model: ModelConfig) -> Backend:
    """The backend named by `[model] backend` (docs/backends.md); heavy imports happen here only."""
    if model.backend == "transformers":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(model.model_id, dtype=model.dtype, device=model.device,
                                   batch_size=model.batch_size)
    if model.backend == "vllm":
        from .vllm_backend import VLLMBackend

        return VLLMBackend(model.model_id, dtype=model.dtype, device=model.device,
                           tensor_parallel_size=model.tensor_parallel_size,
                           gpu_memory_utilization=model.gpu_memory_utilization,
                           max_model_len=model.max_model_len, max_logprobs=model.max_logprobs)
    if model.backend == "openai":
        from .openai_backend import OpenAIBackend

        return OpenAIBackend(model.model_id, list(model.base_urls) or [model.base_url],
                             served_model_name=model.served_model_name, api_key_env=model.api_key_env,
                             allow_external=model.allow_external, tokenizer=model.tokenizer,
                             concurrency=model.concurrency, request_timeout=model.request_timeout,
                             max_retries=model.max_retries, backoff_factor=model.backoff_factor,
                             backoff_max=model.backoff_max)
    raise ConfigError(f"[model] backend = {model.backend!r}; choose transformers, vllm or openai")


__all__ = ["Backend", "Chat", "Generation", "LazyBackend", "TokenLogprob", "chat", "make_backend"]
