"""What the ESS report states: a plug-in censored by the grid is written "≤ n₁" / "> n_J" in ess.csv, ESS.md, the
CLI line and the figure; an LLM worse than the constant rule or than one observation is said so; constant
predictions are warned about; the bands' caption reads the configured min_blocks. Real pipeline, real
comparators, predictions given in llm_column (no model)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.ess import config as ess_config
from lapbias.ess.pipeline import run
from lapbias.io import Layout

N = 120


def _data(tmp_path, llm) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x1": rng.normal(size=N), "x2": rng.normal(size=N)})
    frame["y"] = (frame["x1"] + 0.3 * rng.normal(size=N) > 0).astype(int)
    frame["g"] = llm(frame)
    frame.to_csv(tmp_path / "d.csv", index=False)


def _config(tmp_path, **changes):
    values = {"data": "d.csv", "covariates": ["x1", "x2"], "grid": [5, 10], "trees": 20,
              "outcomes": [{"name": "y", "column": "y", "llm_column": "g", "comparators": ["l1logit", "rf"]}],
              **changes}
    return ess_config.from_dict(values, str(tmp_path))


def _run(tmp_path, **changes):
    tables = run(_config(tmp_path, **changes), Layout(tmp_path), backend=None, confirm=None)
    return tables, (tmp_path / "results" / "ess" / "ESS.md").read_text(encoding="utf-8")


def test_llm_worse_than_the_grid_is_stated_as_below_it_everywhere(tmp_path):
    _data(tmp_path, lambda f: 1 - f["y"])                       # always wrong: error 1
    tables, text = _run(tmp_path)
    ess = pd.read_csv(tmp_path / "results" / "ess" / "ess.csv")
    assert list(ess["ess_plugin"]) == ["≤ 5", "≤ 5"] and ess["plugin_below_grid"].all()
    assert list(ess["ess_plugin_n"]) == [5, 5]
    assert "| ≤ 5 |" in text and "the grid places the ESS only somewhere in 1..5" in text
    # The LLM is worse than the majority-class rule and than one observation: said in words, with the numbers.
    llm = tables["llm"].iloc[0]
    share = np.mean(pd.read_csv(tmp_path / "d.csv")["y"])
    assert llm["constant_rule_risk"] == pytest.approx(min(share, 1 - share))
    assert llm["one_observation_risk"] == pytest.approx(2 * share * (1 - share))
    assert (f"the LLM's error (1) is larger than that of always predicting the most common outcome "
            f"({llm['constant_rule_risk']:.4g}) and than the expected error of predicting the outcome of one random "
            "observation") in text and "the LLM is worth less than one observation" in text
    from lapbias.ess.report import draw

    labels = draw(tables).axes[0].get_legend_handles_labels()[1]
    assert "l1logit: plug-in ≤ 5" in labels and "rf: plug-in ≤ 5" in labels


def test_llm_beyond_the_grid_is_stated_as_above_it_and_on_the_cli_line(tmp_path):
    _data(tmp_path, lambda f: f["y"])                           # always right: no comparator reaches error 0
    (tmp_path / "ess.toml").write_text(
        f'root = "{tmp_path}"\n[ess]\ndata = "d.csv"\ncovariates = ["x1", "x2"]\ngrid = [5, 10]\ntrees = 20\n'
        '[[ess.outcomes]]\nname = "y"\ncolumn = "y"\nllm_column = "g"\ncomparators = ["l1logit"]\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["ess", str(tmp_path / "ess.toml"), "--yes"])
    assert result.exit_code == 0, result.output
    assert "ess: y vs l1logit: LLM error 0, plug-in ESS > 10, one-sided 95% CI" in result.output
    text = (tmp_path / "results" / "ess" / "ESS.md").read_text(encoding="utf-8")
    assert "| > 10 |" in text and "no grid size reaches the LLM's error; extend the grid beyond n = 10" in text
    ess = pd.read_csv(tmp_path / "results" / "ess" / "ess.csv")
    assert ess["ess_plugin"].iloc[0] == "> 10" and ess["plugin_beyond_grid"].iloc[0]


def test_constant_predictions_are_warned_about(tmp_path):
    _data(tmp_path, lambda f: np.zeros(len(f), dtype=int))
    tables, text = _run(tmp_path)
    llm = tables["llm"].iloc[0]
    assert (llm["llm_answered"], llm["llm_unanswered"], llm["llm_distinct"]) == (N, 0, 1)
    assert json.loads(llm["llm_answers"]) == {"0": N}
    assert "Warning: `y`: the LLM's predictions are constant (every answered row gets 0)" in text


def test_curve_caption_reads_the_configured_min_blocks(tmp_path):
    _data(tmp_path, lambda f: f["y"])
    _, text = _run(tmp_path, min_blocks=7)
    assert "when K ≥ 7 blocks" in text and "K ≥ 20" not in text
    # Every value the bands' and the test's variance rules can take is explained in the caption (variance.band,
    # variance.for_test).
    from lapbias.ess.report import band_rule

    assert all(f"{rule} = " in band_rule(7) for rule in ("finite_K", "fixed_K_fallback"))
    assert all(f"{rule} = " in text for rule in ("finite_K", "fixed_K_fallback", "untested"))
    curve = pd.read_csv(tmp_path / "results" / "ess" / "curve.csv")
    # n = 5: K = 24 ≥ 7 → the finite-K variance; n = 10: K = 12 ≥ 7 as well (and the test's variance everywhere)
    assert set(curve["variance_rule"]) == {"finite_K"} and set(curve["excess_variance_rule"]) == {"finite_K"}


def test_report_names_the_variance_the_test_used(tmp_path):
    # test_variance = "sum": the report must not say the test used the loss difference's variance (eq. 4.6).
    _data(tmp_path, lambda f: f["y"])
    _, text = _run(tmp_path, test_variance="sum", outcomes=[{"name": "y", "column": "y", "llm_column": "g",
                                                             "comparators": ["l1logit"]}])
    assert "test variance: sum, eq. 4.7, the finite-K variance of the comparator's loss plus" in text
    assert "with the variance of eq. 4.7 (`excess_se_sum`" in text
    assert "finite-K variance of the loss difference and Student" not in text
