"""Panel -> estimation -> report on synthetic stage files: REPORT.md's six sections quote the CSV files."""

from __future__ import annotations

import pandas as pd
import pytest

from lapbias.config import from_dict
from lapbias.estimate import protocol
from lapbias.io import Layout
from lapbias.panel import build
from lapbias.report import write_report
from lapbias.report.tables import stars, to_latex
from test_panel import synthetic_stage_files

SECTIONS = ["## 1. Sample", "## 2. LAP distribution, pre vs post cutoff", "## 3. Validation regression",
            "## 4. Detection regression", "## 5. Post-cutoff placebo", "## 6. Verdict"]


@pytest.fixture()
def finished(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}})
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)] + \
            [f"2024-{m}-1{d}" for m in (10, 11, 12) for d in range(5)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(config, layout)
    protocol.run(config, layout)
    return config, layout, write_report(config, layout)


def test_report_has_six_sections_and_a_verdict(finished):
    _, layout, path = finished
    text = path.read_text()
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert "**Verdict:" in text and "Estimation engine: **python**" in text
    for name in ("sample", "lap_distribution", "recall_checks", "validation", "detection", "placebo"):
        assert f"`results/{name}.csv`" in text and (layout.results / f"{name}.csv").exists()


def test_report_numbers_come_from_the_csv(finished):
    _, layout, path = finished
    detection = pd.read_csv(layout.results / "detection.csv").set_index("term")
    beta3 = detection.loc["c.mu_hat#c.lap"]
    assert f"{beta3['coef']:.4g}" in path.read_text()


def test_latex_twins_and_figure(finished):
    _, layout, _ = finished
    tex = (layout.results / "detection.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"c.mu\_hat\#c.lap" in tex
    assert (layout.figures / "lap_hist.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stars_and_latex_cells():
    assert [stars(p) for p in (0.005, 0.03, 0.07, 0.2)] == ["***", "**", "*", ""]
    table = pd.DataFrame([{"model": "pre", "term": "mu_hat", "coef": 0.12345, "t": 2.5, "p": 0.02, "N": 100,
                           "r2": 0.1}])
    assert r"0.1235** \\" in to_latex(table, "x") and r"(2.50) \\" in to_latex(table, "x")


def test_no_post_sample_is_said_plainly(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    config = from_dict({"root": str(tmp_path), "study": {"cutoff": "2025-06-30"}})
    synthetic_stage_files(layout, n_entities=25, dates=[f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)])
    result = build(config, layout)
    assert any("placebo (Step 5) is infeasible" in w for w in result.warnings)
    protocol.run(config, layout)
    text = write_report(config, layout).read_text()
    assert "_No `results/placebo.csv`" in text and "placebo is infeasible" in text
