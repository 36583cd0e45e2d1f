"""Every LAP measure through the CLI with the real bundled model on a slice of the demo panel: the Min-K% pass writes
one column per measure (no other query), the estimate stage runs Steps 3-5 under each, and the report's robustness
table (results/lap_measures.csv, REPORT.md section 7) gives for each the beta_3, p and verdict that a user who
configured that measure gets, while the report's verdict reads the configured measure only."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.signals.measures import REGISTRY, TEXT_MEASURES

ROOT = Path(__file__).resolve().parents[1]
ENTITIES = ["AAPL", "NVDA", "PFE", "KO"]


def study(root: Path, measure: str) -> Path:
    config = (ROOT / "data/demo/demo.toml").read_text()
    config = config.replace('root = "."', f'root = "{root}"').replace(
        'path = "data/demo/demo_panel.csv"', f'path = "{root / "panel.csv"}"').replace(
        "min_parse_rate = 0.95", "min_parse_rate = 0.95\nallow_low_parse_rate = true  # a small slice may parse < 95%")
    assert 'lap_measure = "recall"' in config
    path = root / f"study_{measure}.toml"
    path.write_text(config.replace('lap_measure = "recall"', f'lap_measure = "{measure}"'))
    return path


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("measures")
    demo = pd.read_csv(ROOT / "data/demo/demo_panel.csv", dtype=str, keep_default_na=False)
    demo[demo["entity_id"].isin(ENTITIES)].to_csv(root / "panel.csv", index=False)
    first = CliRunner().invoke(main, ["run", str(study(root, "recall")), "--yes"])
    assert first.exit_code == 0, first.output
    return root, pd.read_csv(root / "results/lap_measures.csv"), (root / "results/REPORT.md").read_text()


def test_the_min_k_pass_gives_every_measure(project):
    root, _, _ = project
    scored = pd.read_parquet(root / "data/derived/minkprob.parquet")
    for measure in TEXT_MEASURES.values():
        if measure.name == "ref":  # no [minkprob] reference_model in this study
            assert scored[measure.column].isna().all()
            continue
        assert np.isfinite(scored[measure.column]).all(), measure.name
    assert (scored["moments_top_k"] == 0).all()  # the transformers backend: the whole vocabulary
    panel = pd.read_parquet(root / "data/derived/panel.parquet")
    assert all(m.column in panel for m in REGISTRY.values())


def test_the_robustness_table_has_every_measure_and_the_configured_one_is_the_reports(project):
    root, measures, report = project
    assert list(measures["measure"]) == [name for name in REGISTRY if name != "ref"]  # ref: no reference model
    configured = measures[measures["configured"]].iloc[0]
    assert configured["measure"] == "recall"
    detection = pd.read_csv(root / "results/detection.csv")
    beta3 = detection[(detection["model"] == "pre") & (detection["term"] == "c.mu_hat#c.lap")].iloc[0]
    assert configured["beta3"] == pytest.approx(beta3["coef"], rel=1e-9)
    assert f"Verdict: {configured['verdict']}" in report
    assert "The verdict above reads the configured measure only, `recall`" in report
    assert "## 7. The verdict's robustness to the LAP measure" in report


def test_the_robustness_and_drift_tables_have_latex_twins(project):
    """results/lap_measures.tex: one row per row of the CSV, beta_3 and the verdict as the CSV holds them;
    results/text_drift.tex: one row per check."""
    root, measures, _ = project
    tex = (root / "results/lap_measures.tex").read_text()
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == len(measures)
    for line, (_, row) in zip(body, measures.iterrows()):
        cells = [cell.strip() for cell in line.removesuffix("\\\\").split(" & ")]
        assert cells[0] == row["title"].replace("%", "\\%")
        assert cells[1] == ("yes" if row["configured"] else "")
        assert cells[3] == ("" if math.isnan(row["beta3"]) else f"{row['beta3']:.4g}")
        assert cells[-1] == row["verdict"]
    drift = pd.read_csv(root / "results/text_drift.csv")
    drift_tex = (root / "results/text_drift.tex").read_text()
    assert drift_tex.count("\\\\\n") == len(drift) + 1  # the header and one line per check
    assert "s.e. & one-sided p & N" in drift_tex
    body = drift_tex.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    for line, (_, row) in zip(body, drift.iterrows()):  # beta_3's se and p as the CSV holds them (empty elsewhere)
        cells = [cell.strip() for cell in line.removesuffix("\\\\").split(" & ")]
        assert cells[4] == ("" if math.isnan(row["se"]) else f"{row['se']:.4g}")
        assert cells[5] == ("" if math.isnan(row["p_one_sided"]) else f"{row['p_one_sided']:.4g}")
    assert drift["se"].notna().any()


@pytest.mark.parametrize("measure", ["gapk", "minkprob"])
def test_a_row_is_what_configuring_that_measure_gives(project, measure):
    """lapbias run with [estimate] lap_measure = the measure, from the same cache (no model query): its detection
    beta_3, the p the verdict reads and the verdict are the robustness row's."""
    root, measures, _ = project
    row = measures[measures["measure"] == measure].iloc[0]
    result = CliRunner().invoke(main, ["run", str(study(root, measure))])
    assert result.exit_code == 0, result.output
    assert result.output.count("queries cached, no model call") == 3
    again = pd.read_csv(root / "results/lap_measures.csv")
    mine = again[again["measure"] == measure].iloc[0]
    assert bool(mine["configured"])
    for column in ("beta3", "se", "p_one_sided", "beta3_post", "p_one_sided_post"):
        assert mine[column] == pytest.approx(row[column], rel=1e-9, abs=1e-12), column
    assert mine["verdict"] == row["verdict"]
    report = (root / "results/REPORT.md").read_text()
    assert f"Verdict: {row['verdict']}" in report
    detection = pd.read_csv(root / "results/detection.csv")
    beta3 = detection[(detection["model"] == "pre") & (detection["term"] == "c.mu_hat#c.lap")].iloc[0]
    assert beta3["coef"] == pytest.approx(row["beta3"], rel=1e-9)
    assert not math.isnan(beta3["coef"])


@pytest.fixture(scope="module")
def reference_dir(tmp_path_factory):
    """A second, real model for the reference: a 2-layer Llama with random weights (seed 0) and the bundled model's
    tokenizer, saved as transformers saves any model."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from lapbias.llm import bundled

    folder = tmp_path_factory.mktemp("reference") / "tiny-llama"
    tokenizer = AutoTokenizer.from_pretrained(bundled.resolve("bundled:SmolLM2-135M-Instruct"))
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=512))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_reference_model_scores_the_same_texts_and_ref_is_the_log_min_k_difference(tmp_path, reference_dir):
    """[minkprob] reference_model: the Min-K% step scores every text under both models (two models' answers in one
    cache, keyed by model), lap_ref = log Min-K% (target) - log Min-K% (reference) as the reference backend scores it
    independently here, lap_measure = "ref" runs end to end, and a rerun asks neither model anything."""
    from lapbias.llm.transformers_backend import TransformersBackend
    from lapbias.signals.measures.minkprob import min_k_prob

    demo = pd.read_csv(ROOT / "data/demo/demo_panel.csv", dtype=str, keep_default_na=False)
    demo[demo["entity_id"].isin(ENTITIES[:3])].to_csv(tmp_path / "panel.csv", index=False)
    path = study(tmp_path, "ref")
    assert 'reference_model = ""' in path.read_text()
    path.write_text(path.read_text().replace('reference_model = ""', f'reference_model = "{reference_dir}"'))
    first = CliRunner().invoke(main, ["run", str(path), "--yes"])
    assert first.exit_code == 0, first.output
    scored = pd.read_parquet(tmp_path / "data/derived/minkprob.parquet")
    assert np.isfinite(scored["lap_ref"]).all()
    inputs = pd.read_parquet(tmp_path / "data/derived/input.parquet")
    from lapbias import config as config_module
    from lapbias.signals.minkprob import scored_text

    config = config_module.load(path)
    texts = [scored_text(row, config) for _, row in inputs.iterrows()]
    reference = TransformersBackend(str(reference_dir))
    expected = [math.log(a) - math.log(min_k_prob([t.logprob for t in tokens], 0.2)[0])
                for a, tokens in zip(scored["lap_mink"], reference.prompt_logprobs(texts))]
    assert scored["lap_ref"].to_numpy() == pytest.approx(expected, rel=1e-5, abs=1e-5)
    lines = (tmp_path / "data/raw/minkprob.jsonl").read_text().splitlines()
    assert len(lines) == 2 * len(inputs)
    report = (tmp_path / "results/REPORT.md").read_text()
    assert "The verdict above reads the configured measure only, `ref`" in report
    again = CliRunner().invoke(main, ["run", str(path)])
    assert again.exit_code == 0, again.output
    assert "loading" not in again.output and again.output.count("queries cached, no model call") == 4
