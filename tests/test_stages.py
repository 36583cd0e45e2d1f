"""The stage layer is the Python API: each stage runs without click, returns its result and logs its lines to the
caller's `echo` and logs/lapbias.log (model-free: synthetic stage files)."""

from __future__ import annotations

import json

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
