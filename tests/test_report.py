"""Panel -> estimation -> report on synthetic stage files: REPORT.md's six sections quote the CSV files."""

from __future__ import annotations

import pandas as pd
import pytest

from lapbias.config import from_dict
from lapbias.estimate import protocol
from lapbias.io import Layout
from lapbias.panel import build
from lapbias.report import write_report
from lapbias.report.tables import rows_to_latex, stars, to_latex
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


def test_a_table_of_rows_as_latex_escapes_text_and_leaves_missing_cells_empty():
    table = pd.DataFrame({"title": ["Min-K% prob", "the_loss"], "configured": [True, False],
                          "beta3": [0.123456, float("nan")], "verdict": ["Mixed/invalid", None]})
    tex = rows_to_latex(table, {"title": "LAP measure", "configured": "configured", "beta3": "beta_3",
                                "verdict": "verdict"}, "Robustness & more")
    assert r"\caption{Robustness \& more}" in tex and r"\begin{tabular}{lccc}" in tex
    assert r"LAP measure & configured & beta\_3 & verdict \\" in tex
    assert r"Min-K\% prob & yes & 0.1235 & Mixed/invalid \\" in tex
    assert r"the\_loss &  &  &  \\" in tex


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


def _recall_tables(pre_lap: float, post_lap: float, residual: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    lap = pd.DataFrame({"sample": ["pre", "post"], "measure": ["lap_recall"] * 2, "mean": [pre_lap, post_lap]})
    checks = pd.DataFrame({"sample": ["pre", "post"], "n_queries": [100, 100], "exact": [1.0, 1.0],
                           "censored_up": [0.0, 0.0], "censored_down": [0.0, 0.0], "censored_unknown": [0.0, 0.0],
                           "censoring_bound_max": [float("nan")] * 2, "residual_mass_mean": [residual, residual],
                           "residual_mass_max": [residual, residual], "lap_mean": [pre_lap, post_lap],
                           "p_unknown_mean": [1 - pre_lap - residual, 1 - post_lap - residual]})
    return lap, checks


def test_the_recall_answers_are_described_as_they_are_and_high_means_a_stated_threshold():
    """With 89% of the recall mass on no label, REPORT.md called a LAP of 0.10 "high" ("guessing rather than
    abstaining") and never named the residual mass. "High" is now LAP >= 0.5, stated; a LAP that does not fall but is
    low is said to be low; the answers' mass on up/down, unknown and other tokens is shown, flagged when mostly off
    the labels."""
    from lapbias.report.markdown import lap_flags

    config = from_dict({"study": {"cutoff": "2024-06-30"}})
    flags = "\n".join(lap_flags(*_recall_tables(0.1038, 0.1041, 0.8923), config))
    assert "stays high" not in flags and "guessing" not in flags
    assert "Post-cutoff LAP does not fall (mean 0.1041 vs 0.1038 pre-cutoff, at least 80% of it), but it is low on " \
           "both sides of the cutoff (below 0.5" in flags
    assert "**Recall answers mostly off the labels**, mean probability per query (pre-cutoff: up or down 0.104, " \
           "unknown 0.004, other tokens 0.892; post-cutoff: up or down 0.104, unknown 0.004, other tokens " \
           "0.892)" in flags
    flags = "\n".join(lap_flags(*_recall_tables(0.70, 0.66, 0.05), config))
    assert "**Post-cutoff LAP stays high** (mean 0.66 vs 0.7 pre-cutoff, at least 80% of it; high: at least " \
           "0.5" in flags
    assert "Recall answers, mean probability per query (pre-cutoff: up or down 0.700, unknown 0.250, other tokens " \
           "0.050" in flags and "mostly off" not in flags
    assert "does not fall" not in "\n".join(lap_flags(*_recall_tables(0.70, 0.20, 0.05), config))


def test_the_report_names_the_software_and_how_the_model_ran():
    """Issue item 'scoring that does not depend on batch order': the report's provenance gives the estimation
    library's and the backend's versions, dtype, device and batch size, and for vLLM its prefix caching and the
    batch-invariance setting."""
    from importlib import metadata

    from lapbias.config import from_dict
    from lapbias.report.markdown import software_line

    line = software_line(from_dict({"model": {"backend": "vllm", "batch_size": 64}}))
    assert f"pyfixest {metadata.version('pyfixest')}" in line and "batch size 64" in line
    assert "prefix caching off" in line and "VLLM_BATCH_INVARIANT=" in line
    assert "transformers" in software_line(from_dict({}))


def test_the_stata_engines_package_versions_reach_the_report(tmp_path):
    """results/stata_versions.csv, which master.do writes with _lapbias_versions (its ado code is checked in
    tests/test_ado_static.py; Stata cannot run here), is quoted in the software line."""
    from lapbias.config import from_dict
    from lapbias.report.markdown import software_line

    (tmp_path / "results").mkdir()
    (tmp_path / "results/stata_versions.csv").write_text(
        'package,version\nreghdfe,"6.12.3 08aug2023"\nftools,"2.49.1 08aug2023"\nboottest,"not installed"\n')
    line = software_line(from_dict({"root": str(tmp_path)}))
    assert "Stata packages: reghdfe 6.12.3 08aug2023, ftools 2.49.1 08aug2023, boottest not installed." in line
