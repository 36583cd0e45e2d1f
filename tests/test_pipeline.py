"""The whole protocol through the CLI with the real bundled model on a small slice of the demo panel:
`lapbias run` writes REPORT.md with a verdict; a second run asks the model nothing and loads no weights;
`lapbias rebuild` regenerates every derived parquet byte-identically from the raw JSONL."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENTITIES = ["AAPL", "BA", "NVDA", "PFE", "SNAP", "KO"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    demo = pd.read_csv(ROOT / "data/demo/demo_panel.csv", dtype=str, keep_default_na=False)
    demo[demo["entity_id"].isin(ENTITIES)].to_csv(root / "panel.csv", index=False)
    config = (ROOT / "data/demo/demo.toml").read_text()
    config = config.replace('root = "."', f'root = "{root}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{root / "panel.csv"}"').replace("batch_size = 16", "batch_size = 8").replace(
        "min_parse_rate = 0.95", "min_parse_rate = 0.95\nallow_low_parse_rate = true  # a 59-row slice may parse < 95%")
    (root / "study.toml").write_text(config)
    first = CliRunner().invoke(main, ["run", str(root / "study.toml"), "--yes"])
    return root, first


def test_first_run_writes_report_with_verdict(project):
    root, first = project
    assert first.exit_code == 0, first.output
    report = (root / "results/REPORT.md").read_text()
    assert "## 6. Verdict" in report and "Verdict:" in report
    for name in ("forecast", "recall", "minkprob"):
        assert (root / f"data/raw/{name}.jsonl").exists()
    assert (root / "data/derived/panel_pre.dta").exists() and (root / "data/derived/panel_post.dta").exists()
    assert (root / "results/figures/lap_hist.png").exists()


def test_second_run_makes_no_model_query(project):
    root, _ = project
    lines = {n: (root / f"data/raw/{n}.jsonl").read_text().count("\n") for n in ("forecast", "recall", "minkprob")}
    second = CliRunner().invoke(main, ["run", str(root / "study.toml")])  # no --yes needed: nothing to ask
    assert second.exit_code == 0, second.output
    assert "loading model" not in second.output
    assert second.output.count("queries cached, no model call") == 3
    assert lines == {n: (root / f"data/raw/{n}.jsonl").read_text().count("\n") for n in lines}


def test_rebuild_is_byte_identical(project):
    root, _ = project
    files = ["input.parquet", "forecast.parquet", "recall.parquet", "minkprob.parquet", "panel.parquet"]
    before = {f: digest(root / "data/derived" / f) for f in files}
    for f in files:
        (root / "data/derived" / f).unlink()
    result = CliRunner().invoke(main, ["rebuild", str(root / "study.toml")])
    assert result.exit_code == 0, result.output
    assert {f: digest(root / "data/derived" / f) for f in files} == before
