"""How the recall query asks its label probabilities (protocol Step 2), a property of the configuration alone: by
sampling answers (the fallback), exactly from a local model's whole distribution, or from a server's top-k log-probs.
The mode names the recall's cache keys and is part of what a recall file was derived under (signals/provenance.py)."""

from __future__ import annotations

from ..config import RunConfig

EXACT_BACKENDS = ("transformers", "vllm")
"""Backends that hold the model and give exact label probabilities (LocalBackend in llm/base.py)."""


def uses_sampling(config: RunConfig) -> bool:
    return config.recall.fallback == "sampling"


def uses_exact(config: RunConfig) -> bool:
    """Exact label probabilities: a local backend (the whole distribution at hand), log-prob mode."""
    return config.model.backend in EXACT_BACKENDS and not uses_sampling(config)


def mode(config: RunConfig) -> str:
    """"sampled", "exact" or "top-k"."""
    return "sampled" if uses_sampling(config) else "exact" if uses_exact(config) else "top-k"
