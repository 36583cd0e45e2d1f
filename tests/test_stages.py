"""The stage layer is the Python API: each stage runs without click, returns its result and logs its lines to the
caller's `echo` and logs/lapbias.log (model-free: synthetic stage files)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

import lapbias
from lapbias.config import from_dict
from lapbias.errors import ConfirmationDeclined
from lapbias.io import Layout
from test_bad_inputs import DATES, STUDY, write_config
from test_panel import synthetic_stage_files


@pytest.fixture()
def project(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    return layout, write_config(tmp_path, STUDY)


def test_panel_estimate_report_from_python(project):
    layout, config = project
    lines: list[str] = []
    built = lapbias.stages.panel(config, echo=lines.append)
    assert len(built.panel) == 20 * len(DATES) and lines[-1].startswith("panel: ")
    run_id = lapbias.stages.estimate(str(config), engine="python", echo=lines.append)
    assert json.loads((layout.results / "run_config.json").read_text())["run_id"] == run_id
    report = lapbias.stages.report(config, echo=lines.append)
    assert report == layout.results / "REPORT.md" and "**Verdict:" in report.read_text()
    logged = (layout.logs / "lapbias.log").read_text()
    assert all(line.splitlines()[0] in logged for line in lines)


def test_a_loaded_configuration_works_as_well_as_a_path(project):
    layout, _ = project
    config = from_dict({"root": str(layout.root), "study": {"cutoff": "2024-06-30"},
                        "estimate": {"bootstrap_reps": 20}})
    lapbias.stages.panel(config, echo=lambda line: None)
    assert layout.derived_file("panel.parquet").exists()


def test_a_query_batch_needs_consent(project):
    layout, config = project
    layout.derived_file("forecast.parquet").unlink()
    with pytest.raises(ConfirmationDeclined, match="rerun with --yes"):
        lapbias.stages.forecast(config, echo=lambda line: None)
    assert not layout.raw_file("forecast").exists()


# ---- refusals that name every step to rerun, and the report's data file ------------------------------------------
def _answered_csv() -> str:
    rows = [f"r{e}{m},E{e},Entity {e},T{e},headline {e} {m},2024-{m:02d}-04,2024-{m:02d}-05,{(-1) ** (e + m) * 0.1 * m}"
            for e in range(1, 7) for m in (2, 3, 4, 9, 10, 11)]
    return "row_id,entity_id,entity_name,ticker,text,text_date,target_date,outcome\n" + "\n".join(rows) + "\n"


@pytest.fixture()
def answered(tmp_path):
    """A 36-row study whose every forecast, recall and Min-K% answer is in the cache as the stages write them, the
    recall labels recorded (no model), then run: validated, derived, panelled, estimated and reported."""
    from lapbias.config import load
    from lapbias.llm.cache import ResponseCache
    from lapbias.signals import forecast, minkprob, recall
    from test_bad_inputs import LABEL_IDS, expect, record_labels, validate_case

    _, config_path = validate_case(tmp_path, _answered_csv(), "[estimate]\nbootstrap_reps = 20\n")
    expect(0, "36 rows kept", "validate", config_path)
    config, layout = load(config_path), Layout(tmp_path)
    frame = pd.read_parquet(layout.derived_file("input.parquet"))
    rng = np.random.default_rng(1)
    ResponseCache(layout.raw_file("forecast")).append(
        (q, {"text": word, "tokens": [[1, word, -0.1]], "first_top": [[1, word, -0.1]]})
        for q, word in zip(forecast.queries(frame, config), rng.choice(["up", "down"], len(frame))))
    ResponseCache(layout.raw_file("recall")).append(
        (q, {"top": [[1, "up", float(a)], [2, "down", float(b)], [3, "unknown", -3.0]]})
        for q, a, b in zip(recall.queries(recall.recall_pairs(frame), config), *rng.uniform(-4, -0.5, (2, len(frame)))))
    ResponseCache(layout.raw_file("minkprob")).append(
        (q, {"tokens": [[7, "w", float(v)] for v in rng.uniform(-9, -1, 12)]}) for q in minkprob.queries(frame, config))
    record_labels(layout, config.model.model_id, LABEL_IDS)
    expect(0, "report:", "run", config_path, "--yes")
    return layout, config_path


def test_a_prompt_edit_is_refused_naming_every_step_to_rerun(answered):
    """A prompt edited after the run: `estimate` named `forecast` and `panel`, then `panel` refused again naming
    `minkprob` (Min-K% scores the prompt), and `report` named only `estimate`: a chain of refusals. Each refusal now
    names every step, the model steps with --yes, and following it works."""
    from test_bad_inputs import expect

    layout, config = answered
    config.write_text(config.read_text() + '[forecast]\nprompt = "Will {entity_name} go up or down? {text}"\n')
    steps = "`lapbias forecast --yes`, `lapbias minkprob --yes`"
    output = expect(2, "forecast.parquet was derived with [forecast] prompt", "panel", config)
    assert f"(so was {layout.derived_file('minkprob.parquet')}): rerun {steps}, then `lapbias panel`" in output
    output = expect(2, "panel.parquet was derived with [forecast] prompt", "estimate", config)
    assert f"rerun {steps}, `lapbias panel`, then `lapbias estimate`" in output
    output = expect(2, "made with [forecast] prompt", "report", config)
    assert f"rerun {steps}, `lapbias panel`, `lapbias estimate`, then `lapbias report`" in output


def test_the_report_names_its_data_file_and_refuses_results_of_another(answered, tmp_path):
    """`lapbias report` accepted results made from another data file (the same rows saved by Excel with a BOM and
    CRLF) while the Python API's estimate refused the same state, and REPORT.md named no data file. The report now
    refuses as every stage does, and REPORT.md names the data file and its sha256."""
    from test_bad_inputs import expect, write_config

    layout, config = answered
    excel = tmp_path / "panel_excel.csv"
    excel.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "panel.csv").read_bytes().replace(b"\n", b"\r\n"))
    other = write_config(tmp_path, f'[data]\npath = "{excel}"\n[study]\ncutoff = 2024-06-30\n[estimate]\n'
                                   "bootstrap_reps = 20\n", "excel.toml")
    expect(0, "report:", "run", other, "--yes")
    report = (layout.results / "REPORT.md").read_text()
    digest = hashlib.sha256(excel.read_bytes()).hexdigest()
    assert f"Data: `{excel}` (sha256 `{digest}`)" in report
    expect(2, "panel.csv changed since `lapbias validate` read it (it validated", "report", config)


def test_a_low_parse_rate_accepted_is_said_by_the_verdict_sentence(project):
    """With 1.7% of the forecasts parsed and --allow-low-parse-rate, the sentence said only that the detection
    regression could not be estimated; the override was nowhere. It now opens the sentence and section 6."""
    layout, config = project
    path = layout.derived_file("forecast.parquet")
    frame = pd.read_parquet(path)
    unparsed = frame.index % 5 < 2  # 40% of the rows
    frame.loc[unparsed, ["parsed", "mu_hat", "label"]] = [False, np.nan, None]
    frame.to_parquet(path)
    lines: list[str] = []
    lapbias.stages.panel(config, allow_low_parse_rate=True, echo=lines.append)
    lapbias.stages.estimate(config, engine="python", echo=lines.append)
    lapbias.stages.report(config, echo=lines.append)
    sentence = lines[-1].splitlines()[1]
    assert sentence.startswith(f"  Only {int((~unparsed).sum())} of {len(frame)} forecasts parsed (60.0%, below "
                               "[forecast] min_parse_rate = 95%; the run went on because the low rate was accepted")
    assert "**Low parse rate accepted:** only" in (layout.results / "REPORT.md").read_text()
