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
    """The backend named by `[model] backend`."""
    if model.backend == "transformers":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(model.model_id, dtype=model.dtype, device=model.device,
                                   batch_size=model.batch_size)
    raise ConfigError(f"[model] backend = {model.backend!r} is not available in this installation; "
                      "use backend = \"transformers\"")


__all__ = ["Backend", "Chat", "Generation", "LazyBackend", "TokenLogprob", "chat", "make_backend"]
