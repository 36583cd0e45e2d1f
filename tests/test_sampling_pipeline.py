"""The sampling fallback end to end through the CLI, against a local OpenAI-compatible server that returns no
log-probs at all (tests/fault_server.py in its `varied` and `no_logprobs` modes, 127.0.0.1): the forecast is
parsed from the text with p_first missing, the multiplied count needs its own
confirmation (--yes-sampling), Min-K% is skipped with the recall LAP kept, and every downstream table is
labelled approximated (results/*.csv column, LaTeX captions, REPORT.md banner and section headings)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main

from fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[1]
SEED = 4242


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    server = FaultServer()
    server.varied = True
    server.no_logprobs = True
    root = tmp_path_factory.mktemp("sampled")
    config = (ROOT / "data/demo/demo.toml").read_text()
    config = config.replace('root = "."', f'root = "{root}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{ROOT / "data/demo/demo_panel.csv"}"').replace(
        'backend = "transformers"                  # transformers | vllm | openai',
        f'backend = "openai"\nbase_url = "{server.url}"\ntokenizer = "bundled:SmolLM2-135M-Instruct"\n'
        'request_timeout = 10\nmax_retries = 1').replace(
        'labels = ["up", "down", "unknown"]        # each must be one token on the model\'s tokenizer (checked)',
        f'labels = ["up", "down", "unknown"]\nfallback = "sampling"\nn_samples = 25\nsampling_seed = {SEED}').replace(
        'engine = "python"                         # python | stata | auto', 'engine = "python"\nbootstrap_reps = 50')
    (root / "study.toml").write_text(config)
    yield root, server
    server.close()


def test_sampling_needs_its_own_confirmation(study):
    root, server = study
    result = CliRunner().invoke(main, ["run", str(root / "study.toml"), "--yes"])
    assert result.exit_code != 0
    n_pairs = len(pd.read_parquet(root / "data/derived/input.parquet").drop_duplicates(["entity_id", "target_date"]))
    assert n_pairs > 100
    assert f"{n_pairs} queries x 25 samples = {25 * n_pairs} model answers" in result.output
    assert "rerun with --yes-sampling" in result.output and "Traceback" not in result.output
    assert not any(p.get("n") for _, p, _ in server.requests)  # nothing was sampled
    recall_cache = root / "data/raw/recall.jsonl"
    assert not recall_cache.exists() or not recall_cache.read_text().strip()


def test_confirmed_run_labels_every_table_approximated(study):
    root, server = study
    result = CliRunner().invoke(main, ["run", str(root / "study.toml"), "--yes", "--yes-sampling"])
    assert result.exit_code == 0, result.output
    sampled = [p for path, p, _ in server.requests if p.get("n")]
    n_pairs = len(pd.read_parquet(root / "data/derived/recall.parquet"))
    assert len(sampled) == n_pairs and {(p["n"], p["seed"], p["temperature"]) for p in sampled} == {(25, SEED, 1.0)}
    assert not any("top_k" in p for _, p, _ in server.requests)  # vLLM-only fields never go to other servers
    assert "minkprob skipped, the recall LAP is used" in result.output
    assert not (root / "data/derived/minkprob.parquet").exists()

    panel = pd.read_parquet(root / "data/derived/panel.parquet")
    assert panel["lap_approximated"].all() and panel["lap"].nunique() > 10
    assert panel["mu_hat"].notna().all() and panel["p_first"].isna().all()  # text answers, no log-probs
    assert not (root / "results/table4.csv").exists()  # paper Table IV needs p_first
    assert "table4:(1) skipped" in (root / "results/extended_notes.csv").read_text()
    first = json.loads((root / "data/raw/recall.jsonl").read_text().splitlines()[0])
    assert first["response"]["approximated"] is True and first["response"]["n_samples"] == 25

    for name in ("validation", "detection", "placebo", "bootstrap", "table2"):
        table = pd.read_csv(root / f"results/{name}.csv")
        assert table["approximated"].str.contains("sampling fallback").all(), name
        assert table["approximated"].str.contains(f"seed {SEED}").all(), name
    assert "APPROXIMATED" in (root / "results/detection.tex").read_text()
    report = (root / "results/REPORT.md").read_text()
    assert "**APPROXIMATED.**" in report
    for heading in ("## 3. Validation regression", "## 4. Detection regression", "## 6. Verdict"):
        line = next(line for line in report.splitlines() if line.startswith(heading))
        assert line.endswith("(approximated)"), line


def test_rerun_asks_nothing(study):
    root, server = study
    before = len(server.requests)
    result = CliRunner().invoke(main, ["run", str(root / "study.toml")])
    assert result.exit_code == 0, result.output
    assert result.output.count("queries cached, no model call") == 2
    sampled_again = [p for _, p, _ in server.requests[before:] if p.get("n")]
    assert not sampled_again


def test_rebuild_without_a_minkprob_cache_gives_the_same_panel(study):
    root, _ = study
    before = pd.read_parquet(root / "data/derived/panel.parquet")
    result = CliRunner().invoke(main, ["rebuild", str(root / "study.toml")])
    assert result.exit_code == 0, result.output
    assert "no minkprob cache" in result.output
    pd.testing.assert_frame_equal(pd.read_parquet(root / "data/derived/panel.parquet"), before)
