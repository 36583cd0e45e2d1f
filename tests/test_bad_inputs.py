"""Bad inputs through the real CLI (issue 12): each case has an expected exit code and message fragment; none may
show a traceback, and none may exit 0 with a wrong or stale result. Model-free: stage files are synthetic
(test_panel.synthetic_stage_files) and cache lines are written directly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.io import Layout, write_parquet
from test_panel import synthetic_stage_files

DATES = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)]


def cli(*args: str) -> tuple[int, str]:
    """Run `lapbias ARGS` in-process; never a traceback, never an unhandled exception."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def expect(code: int, fragment: str, *args: str) -> str:
    got, output = cli(*args)
    assert got == code and fragment in output, f"exit {got}, wanted {code} and {fragment!r} in:\n{output}"
    return output


def write_config(root: Path, text: str = "", name: str = "study.toml") -> Path:
    path = root / name
    path.write_text(f'root = "{root}"\n{text}')
    return path


STUDY = '[study]\ncutoff = 2024-06-30\n[estimate]\nbootstrap_reps = 20\n'


@pytest.fixture()
def project(tmp_path):
    """Stage files for 20 entities (pre and post rows) and a config; no model."""
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    return layout, write_config(tmp_path, STUDY)


@pytest.fixture(scope="module")
def _estimated_once(tmp_path_factory):
    root = tmp_path_factory.mktemp("estimated")
    layout = Layout(root)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=20, dates=DATES)
    config = write_config(root, STUDY)
    expect(0, "panel:", "panel", config)
    expect(0, "estimate (python engine)", "estimate", config)
    expect(0, "report:", "report", config)
    return root


@pytest.fixture()
def estimated(_estimated_once, tmp_path):
    """A copy of a project after panel, estimate and report (estimated once per module: CI time)."""
    root = tmp_path / "project"
    shutil.copytree(_estimated_once, root)
    return Layout(root), write_config(root, STUDY)


def results_state(layout: Layout) -> dict[str, bytes]:
    return {p.relative_to(layout.results).as_posix(): p.read_bytes()
            for p in sorted(layout.results.rglob("*")) if p.is_file()}


# ---- items 1-2: stages all or nothing, run ids, stale files ---------------------------------------------------
def test_failed_estimate_leaves_the_previous_run_whole(estimated, monkeypatch):
    layout, config = estimated
    before = results_state(layout)
    run_id = json.loads((layout.results / "run_config.json").read_text())["run_id"]
    assert {"detection.csv", "bootstrap.csv", "magnitudes.csv", "REPORT.md"} <= set(before)
    for name in ("detection.csv", "bootstrap.csv", "magnitudes.csv", "sample.csv"):
        assert set(pd.read_csv(layout.results / name)["run_id"]) == {run_id}

    from lapbias.errors import EstimationError
    from lapbias.estimate import bootstrap

    def fail(*_args, **_kwargs):  # fault injection: the last step of the stage fails after the tables were written
        raise EstimationError("injected failure in the bootstrap")

    monkeypatch.setattr(bootstrap, "run", fail)
    expect(2, "injected failure in the bootstrap", "estimate", config)
    assert results_state(layout) == before  # no new detection table beside the old bootstrap and magnitudes
    assert not list(layout.results.glob(".estimate-staging-*"))


def test_report_refuses_tables_from_different_runs(estimated):
    layout, config = estimated
    expect(0, "report:", "report", config)
    detection = layout.results / "detection.csv"
    table = pd.read_csv(detection)
    table.assign(run_id="20240101T000000Z-00000000").to_csv(detection, index=False)  # another run's table
    expect(2, "tables from different runs", "report", config)
    table.drop(columns="run_id").to_csv(detection, index=False)  # no run id (an older version, or edited by hand)
    expect(2, "detection.csv has no run_id column", "report", config)


def test_report_refuses_results_of_an_earlier_panel(estimated):
    layout, config = estimated
    panel = pd.read_parquet(layout.derived_file("panel.parquet"))
    write_parquet(panel.iloc[:-3], layout.derived_file("panel.parquet"))
    expect(2, "data/derived/panel.parquet changed since estimate run", "report", config)


def test_rerun_removes_what_the_stage_no_longer_writes(estimated):
    layout, _ = estimated
    assert (layout.results / "placebo.csv").exists() and (layout.derived_file("panel_post.dta")).exists()
    no_post = write_config(layout.root, STUDY.replace("2024-06-30", "2024-12-31"), "late.toml")
    expect(0, "no post-cutoff rows", "panel", no_post)
    assert not layout.derived_file("panel_post.dta").exists()  # item 2: no stale Stata input
    expect(0, "estimate", "estimate", no_post)
    for gone in ("placebo.csv", "placebo_validation.csv", "bootstrap.csv", "bootstrap_draws.csv", "REPORT.md",
                 "detection.tex", "figures/bootstrap.png"):
        assert not (layout.results / gone).exists(), gone
    expect(0, "report:", "report", no_post)


def test_rerun_without_pre_rows_removes_panel_pre(project, tmp_path):
    layout, config = project
    cli("panel", config)
    assert layout.derived_file("panel_pre.dta").exists()
    early = write_config(tmp_path, STUDY.replace("2024-06-30", "2023-01-31"), "early.toml")
    expect(0, "no pre-cutoff rows", "panel", early)
    assert not layout.derived_file("panel_pre.dta").exists() and layout.derived_file("panel_post.dta").exists()
