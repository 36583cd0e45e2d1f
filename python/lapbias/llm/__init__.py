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

    def __getattr__(self, name: str):
        if self._backend is None:
            if self._on_load is not None:
                self._on_load(self._config)
            self._backend = make_backend(self._config)
        return getattr(self._backend, name)


def make_backend(model: ModelConfig) -> Backend:
    """The backend named by `[model] backend`. Options newer than ModelConfig are read with their defaults
    (docs/backends.md lists them)."""
    def option(name: str, default):
        return getattr(model, name, default)

    if model.backend == "transformers":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(model.model_id, dtype=model.dtype, device=model.device,
                                   batch_size=model.batch_size)
    if model.backend == "vllm":
        from .vllm_backend import VLLMBackend

        return VLLMBackend(model.model_id, dtype=model.dtype, device=model.device,
                           tensor_parallel_size=option("tensor_parallel_size", 1),
                           gpu_memory_utilization=option("gpu_memory_utilization", 0.0),
                           max_model_len=option("max_model_len", 0), max_logprobs=option("max_logprobs", 20))
    if model.backend == "openai":
        from .openai_backend import OpenAIBackend

        urls = list(option("base_urls", [])) or [option("base_url", "")]
        return OpenAIBackend(model.model_id, urls, served_model_name=option("served_model_name", ""),
                             api_key_env=option("api_key_env", ""), allow_external=option("allow_external", False),
                             tokenizer=option("tokenizer", ""), concurrency=option("concurrency", 8),
                             request_timeout=option("request_timeout", 120.0), max_retries=option("max_retries", 5),
                             backoff_factor=option("backoff_factor", 1.0), backoff_max=option("backoff_max", 60.0))
    raise ConfigError(f"[model] backend = {model.backend!r}; choose transformers, vllm or openai")


__all__ = ["Backend", "Chat", "Generation", "LazyBackend", "TokenLogprob", "chat", "make_backend"]
