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

    def release(self) -> None:
        """Close the backend and drop it (its weights freed): the next use loads it again."""
        self.close()
        self._backend = None

    def __getattr__(self, name: str):
        if self._backend is None:
            if self._on_load is not None:
                self._on_load(self._config)
            self._backend = make_backend(self._config)
        return getattr(self._backend, name)


def require_device(device: str) -> None:
    """`[model] device` (config.DEVICE) must be a device this machine has: "cuda" needs a CUDA device visible to
    torch, "cuda:N" at least N + 1 of them. Checked before any weights load (a model moved to a missing GPU stops with
    torch's AssertionError or RuntimeError)."""
    if device == "cpu":
        return
    import torch

    if device == "mps":
        if not torch.backends.mps.is_available():
            raise ConfigError('[model] device = "mps", but torch.backends.mps.is_available() is False (not Apple '
                              'silicon, or a torch build without MPS); set device = "cpu"')
        return

    if not torch.cuda.is_available():
        why = (f"this torch {torch.__version__} is a CPU build" if torch.version.cuda is None else
               "no GPU or driver was found, or CUDA_VISIBLE_DEVICES hides them")
        raise ConfigError(f'[model] device = "{device}", but no CUDA device is visible: torch.cuda.is_available() is '
                          f'False ({why}); set device = "cpu", or run where a GPU is visible')
    index, count = int(device.partition(":")[2] or 0), torch.cuda.device_count()
    if index >= count:
        raise ConfigError(f'[model] device = "{device}", but torch sees {count} CUDA device(s), cuda:0 to '
                          f'cuda:{count - 1}; choose one of them, e.g. device = "cuda"')


def make_backend(model: ModelConfig) -> Backend:
    """The backend named by `[model] backend` (docs/backends.md), on a device the machine has (require_device, for
    the local backends); heavy imports happen here only."""
    if model.backend in ("transformers", "vllm"):
        require_device(model.device)
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


__all__ = ["Backend", "Chat", "Generation", "LazyBackend", "TokenLogprob", "chat", "make_backend", "require_device"]
