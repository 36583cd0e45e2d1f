"""LLM backends behind one interface (base.Backend) and the raw-response cache shared by all signals."""

from __future__ import annotations

from ..config import ModelConfig
from ..errors import ConfigError
from .base import Backend, Chat, Generation, TokenLogprob, chat


def make_backend(model: ModelConfig) -> Backend:
    """The backend named by `[model] backend`."""
    if model.backend == "transformers":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(model.model_id, dtype=model.dtype, device=model.device,
                                   batch_size=model.batch_size)
    raise ConfigError(f"[model] backend = {model.backend!r} is not available in this installation; "
                      "use backend = \"transformers\"")


__all__ = ["Backend", "Chat", "Generation", "TokenLogprob", "chat", "make_backend"]
