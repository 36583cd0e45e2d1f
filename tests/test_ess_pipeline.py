"""`lapbias ess` end to end on a handful of anes96 rows with the real bundled model: persona prompts through the
backend and the JSONL cache, the model's greedy answer read for a label, block-out CV with both built-in
classifiers, tables, figure and a report section that states what the model answered; a rerun answers from the
cache alone."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import statsmodels.api as sm

from lapbias.config import from_dict
from lapbias.ess import config as ess_config
from lapbias.ess.llm_predict import choose_label
from lapbias.ess.pipeline import run
from lapbias.ess.report import section
from lapbias.io import Layout
from lapbias.llm.cache import ResponseCache
from lapbias.report.markdown import render
from lapbias.report.verdict import Verdict
from lapbias.signals.batch import always

ROWS, GRID = 16, [4, 8]


class NoModel:
    """Stands where a backend would be on the rerun: every answer must come from the cache."""

    model_id = "bundled:SmolLM2-135M-Instruct"

    def __getattr__(self, name):
        raise AssertionError(f"the model was asked ({name}) although every answer is cached")


def _config(root):
    demo = ess_config.load("data/demo/ess.toml")
    values = {"data": "statsmodels:anes96", "rows": ROWS, "seed": 3, "covariates": list(demo.covariates),
              "grid": GRID, "trees": 10, "value_labels": demo.value_labels,
              "outcomes": [{"name": "vote", "column": "vote", "type": "discrete", "labels": {"Clinton": 0, "Dole": 1},
                            "prompt": demo.outcomes[0].prompt, "comparators": ["l1logit", "rf"]}]}
    return ess_config.from_dict(values, str(root))


def test_ess_end_to_end_with_bundled_model(tmp_path, bundled_backend):
    layout = Layout(tmp_path)
    layout.make_dirs()
    tables = run(_config(tmp_path), layout, bundled_backend, always)
    cache = ResponseCache(layout.raw_file("ess"))
    assert len(cache) == ROWS
    first = json.loads(layout.raw_file("ess").read_text().splitlines()[0])
    content = json.loads(first["prompt"])[-1]["content"]
    assert first["task"] == "ess" and "year-old American voter" in content and "{" not in content   # all filled
    predictions = pd.read_parquet(layout.derived / "ess" / "llm_predictions.parquet")
    assert len(predictions) == ROWS and set(predictions["llm_prediction"]) <= {"0", "1", "__unanswered__"}
    # The prediction is what the model wrote: its greedy answer, read for the label it begins with.
    assert first["params"]["decoding"] == "greedy"
    read = [str(choose_label(text, {"Clinton": 0, "Dole": 1})) for text in predictions["response"]]
    assert read == list(predictions["llm_prediction"])
    answered = int((predictions["llm_prediction"] != "__unanswered__").sum())
    curve = pd.read_csv(layout.results / "ess" / "curve.csv")
    assert list(curve[["comparator", "n", "K"]].itertuples(index=False, name=None)) == [
        ("l1logit", 4, 4), ("l1logit", 8, 2), ("rf", 4, 4), ("rf", 8, 2)]
    assert (curve["ci_low"] <= curve["risk"]).all() and (curve["risk"] <= curve["ci_high"]).all()
    # K < 20 blocks: the larger of the finite-K and the fixed-K variance; K = 2 blocks (n = 8): fixed-K, untested
    assert set(curve["variance_rule"]) <= {"finite_K", "fixed_K", "fixed_K_fallback"}
    assert list(curve["excess_variance_rule"].iloc[[1, 3]]) == ["untested", "untested"]
    ess = pd.read_csv(layout.results / "ess" / "ess.csv")
    assert list(ess["comparator"]) == ["l1logit", "rf"] and ess["ess_lower"].between(1, 9).all()
    assert (ess["ess_lower"] == ess["ess_lower_excess_ci"]).all()          # Remark 3.1: the same bound
    llm = pd.read_csv(layout.results / "ess" / "llm.csv")
    vote = sm.datasets.anes96.load_pandas().data["vote"].to_numpy()[predictions["ess_row"]]
    wrong = predictions["llm_prediction"] != pd.Series(vote).astype(int).astype(str)
    assert llm["N"].iloc[0] == ROWS and llm["llm_risk"].iloc[0] == pytest.approx(wrong.mean())   # eq. (3.1)
    assert (layout.figures / "ess_curve.png").stat().st_size > 10_000
    text = "\n".join(section(layout.results / "ess"))
    assert "## Equivalent sample size of the LLM" in text and "l1logit" in text
    # The report states what the bundled model answered, and warns when that is a constant rule.
    assert (llm["llm_answered"].iloc[0], llm["llm_unanswered"].iloc[0]) == (answered, ROWS - answered)
    assert f"the model's answer began with a label in {answered} of {ROWS} prompts" in text
    if llm["llm_distinct"].iloc[0] <= 1:
        assert "the LLM's predictions are constant" in text
    # The REPORT.md hook (report/markdown.py) includes the section when results/ess/ exists.
    report = render(from_dict({"root": str(tmp_path)}), {
        "lap_distribution": pd.DataFrame(columns=["measure", "sample", "mean"]),
        "recall_checks": pd.DataFrame(columns=["sample", "censored_up", "censored_down", "censored_unknown"])},
        Verdict("inconclusive"), "python")
    assert "## Equivalent sample size of the LLM" in report and "](figures/ess_curve.png)" in report
    # Rerun: no model call, identical tables.
    again = run(_config(tmp_path), layout, NoModel(), always)
    pd.testing.assert_frame_equal(again["ess"], tables["ess"])


def test_report_section_absent_without_results(tmp_path):
    assert section(tmp_path / "results" / "ess") == []


@pytest.mark.parametrize("answer, read", [
    ("Dole", 1), ("Dole.", 1), (" **Clinton**", 0), ('"clinton" is my choice', 0), ("Bill Clinton, of course", 0),
    ("D", "__unanswered__"),                       # the letter that the first-token reading had taken for "Dole"
    ("Doles", "__unanswered__"), ("I'm not sure what to say, but I'll try", "__unanswered__"),
    ("I'd vote for Clinton", "__unanswered__"), ("", "__unanswered__"),
])
def test_the_prediction_is_the_label_the_answer_begins_with(answer, read):
    assert choose_label(answer, {"Clinton": 0, "Dole": 1, "Bill Clinton": 0}) == read
