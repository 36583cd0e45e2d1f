"""What `lapbias estimate` and `lapbias report` write for the verdict: beta_3's wild cluster bootstrap p-values in
detection.csv and placebo.csv, the high-minus-low validation row, the power quantities the rule reads, and REPORT.md's
statements (wild bootstrap, upper bound beside the MDE, the pairs bootstrap's size at this sample's N_post/N_pre)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from lapbias.cli import main
from lapbias.config import from_dict
from lapbias.io import Layout
from lapbias.panel import build
from test_panel import synthetic_stage_files

DATES = ([f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(5)]
         + [f"2024-{m}-1{d}" for m in (10, 11) for d in range(5)])


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdict_report")
    layout = Layout(root)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=25, dates=DATES)
    build(from_dict({"root": str(root), "study": {"cutoff": "2024-06-30"}}), layout)
    config = root / "study.toml"
    config.write_text(f'root = "{root}"\n[study]\ncutoff = "2024-06-30"\n[estimate]\nbootstrap_reps = 50\n'
                      "wild_bootstrap_reps = 999\n")
    for command in ("estimate", "report"):
        result = CliRunner().invoke(main, [command, str(config)])
        assert result.exit_code == 0, result.output
    return layout, (layout.results / "REPORT.md").read_text()


def test_detection_and_placebo_carry_the_wild_cluster_bootstrap(reported):
    layout, report = reported
    for name in ("detection", "placebo"):
        table = pd.read_csv(layout.results / f"{name}.csv").set_index("term")
        row = table.loc["c.mu_hat#c.lap"]
        assert 0 <= row["p_wild_one_sided"] <= 1 and 0 <= row["p_wild"] <= 1 and 0 <= row["p_wild_lower"] <= 1
        assert table.drop(index="c.mu_hat#c.lap")[["p_wild", "p_wild_one_sided", "p_wild_lower"]].isna().all().all()
    assert "| p_wild | p_wild_one_sided | p_wild_lower |" in report and "Webb six-point weights, 999 draws" in report
    # 25 clusters < 42: the verdict reads the wild bootstrap's p and says so
    detection = pd.read_csv(layout.results / "detection.csv").set_index("term").loc["c.mu_hat#c.lap"]
    verdict = report[report.index("## 6. Verdict"):]
    assert f"one-sided p = {detection['p_wild_one_sided']:.4f}" in verdict and "25 entity clusters (< 42" in verdict


def test_validation_carries_the_difference_of_the_halves(reported, halves_per_sd_difference):
    """The halves' slopes on the recalled direction ud_dir (panel.parquet's column) per SD of it (each half's SD over
    its rows of the validation sample), high minus low: each half's own regression of the outcome on ud_dir, times
    that SD."""
    from lapbias.io import read_parquet

    layout, _ = reported
    validation = pd.read_csv(layout.results / "validation.csv").set_index(["model", "term"])
    difference = validation.loc[("high_minus_low", "c.ud_dir_std#c.high_lap")]
    panel = read_parquet(layout.derived_file("panel.parquet"))
    pre = panel[panel["post"] == 0].dropna(subset=["outcome", "ud", "ud_dir", "high_lap"])
    assert difference["coef"] == pytest.approx(halves_per_sd_difference(pre), rel=1e-8)
    assert difference["engine"] == "python" and difference["N_clust"] == 25


def test_power_states_the_upper_bound_beside_the_mde(reported):
    layout, report = reported
    power = pd.read_csv(layout.results / "power.csv").set_index("quantity")["value"]
    # 25 entity clusters < 42: the bound and the MDE use the CV3 jackknife's se with t(G - 1) = t(24)
    assert power["cv3_bound"] == 1 and power["df_bound"] == 24
    assert power["ucb_beta3"] == pytest.approx(power["beta3"] + stats.t.ppf(0.95, 24) * power["se_bound"])
    assert power["ucb_share"] == pytest.approx(power["ucb_beta3"] * power["sd_lap"] / power["b1_standalone"])
    assert power["placebo_ucb_per_sd"] == pytest.approx(
        (power["beta3_post"] + stats.t.ppf(0.90, power["df_bound_post"]) * power["se_bound_post"])
        * power["sd_lap_post"])
    for quantity in ("lap_gap", "lap_relative_gap", "placebo_mde_beta3", "sd_lap_post", "placebo_mde_share",
                     "beta3_per_sd", "placebo_ucb_beta3", "z_pre_minus_post"):
        assert pd.notna(power[quantity]), quantity
    section = report[report.index("## 4. Detection"):report.index("## 5. Post-cutoff")]
    assert "one-sided 95% upper confidence bound" in section and "CV3 jackknife standard error" in section
    placebo = report[report.index("## 5. Post-cutoff"):report.index("## Pairs bootstrap")]
    assert "**Diagnostics (not part of the verdict's rule).** Post-cutoff beta_3 = " in placebo
    assert re.search(r"an interaction of ≥ \d+% of the standalone LLM effect per SD of LAP would have been detected "
                     r"with 80% probability", section)


def test_the_pairs_bootstrap_states_its_size_at_this_samples_ratio(reported):
    """p_boot treats the in-sample beta_3 as fixed (as the paper does): its size under 'the same beta_3 before and
    after' is 1 - Phi(1.645 / sqrt(1 + N_post/N_pre)): 6% at the paper's sizes, 12% at N_post = N_pre, 23% at
    N_post = 4 N_pre. REPORT.md states it next to p_boot with this sample's ratio (here 250/375)."""
    layout, report = reported
    section = report[report.index("## Pairs bootstrap"):report.index("## Extended")]
    n_post = int(pd.read_csv(layout.results / "bootstrap.csv")["N"].iloc[0])
    n_pre = int(pd.read_csv(layout.results / "detection.csv")["N"].iloc[0])
    size = stats.norm.sf(1.6448536 / (1 + n_post / n_pre) ** 0.5)
    assert f"N_post/N_pre = {n_post:,}/{n_pre:,} = {n_post / n_pre:.3g}, so about {size:.1%}" in section
    assert "12% when N_post = N_pre, 23% at N_post = 4 N_pre" in section


def test_readme_quotes_the_verdict_monte_carlo_as_measured():
    """README's verdict paragraph gives the simulated rates that benchmarks/results/verdict_mc.md records, for the
    requirements the rule is held to (it ended in an unfilled placeholder, "MC_NUMBERS")."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("**Measured error rates**"):].split("\n\n")[0]
    results = (root / "benchmarks" / "results" / "verdict_mc.md").read_text(encoding="utf-8").splitlines()
    header = next(line for line in results if line.startswith("| shape |")).strip("|").split(" | ")
    header = [name.strip() for name in header]
    quoted = [("demo", "no contamination", "Contamination"), ("demo", "paper-sized interaction", "Contamination"),
              ("paper-like", "paper-sized interaction", "Contamination"),
              ("paper-like", "no contamination", "Contamination"),
              ("Table V ratio", "paper-sized interaction", "Contamination"),
              ("8 entities", "paper-sized interaction", "Contamination"),
              ("demo", "beta_3 = -37%", "No evidence"), ("demo", "clean model", "No evidence (LAP untested)"),
              ("demo", "recall LAP constant to six digits", "No evidence"),
              ("8 entities", "no contamination", "Contamination"), ("15 entities", "no contamination", "Contamination")]
    assert "MC_NUMBERS" not in readme
    for shape, scenario, label in quoted:
        row = next(line for line in results if line.startswith(f"| {shape}") and f" | {scenario}" in line)
        rate = [cell.strip() for cell in row.strip("|").split(" | ")][header.index(label)]
        assert rate.split(" [")[0] in paragraph, (shape, scenario, label, rate)
    for shape in ("8 entities", "15 entities"):  # the CV3 bound's coverage, and the CRV1 bound's it replaced
        note = next(line for line in results if line.startswith(f"- {shape}") and "no contamination" in line)
        found = re.search(r"below its true value 0 in ([\d.]+%) .*?with the CRV1 se: ([\d.]+%)", note)
        assert found and found.group(1) in paragraph and found.group(2) in paragraph, (shape, found)
    table_v = next(line for line in results if line.startswith("| the paper's Table V"))
    assert table_v.endswith("| Contamination detected |") and "Table V numbers the rule gives \"Contamination " \
        "detected\"" in " ".join(paragraph.split())


def test_an_undefined_cv3_bound_is_said_to_be_undefined(tmp_path):
    """Below wild_below_clusters the bound and the MDE use the CV3 jackknife; where it is not defined (beta_3 rests
    on one entity: power.csv se_bound and df_bound empty) REPORT.md said "With nan entity clusters ... = nan with
    t(nan)"."""
    from lapbias.report.markdown import power_lines

    nan = float("nan")
    power = pd.DataFrame({"quantity": ["beta3", "cv3_bound", "se_bound", "df_bound", "ucb_beta3", "mde_beta3",
                                       "b1_standalone"], "value": [0.1, 1.0, nan, nan, nan, nan, 0.2]})
    line = power_lines(power, from_dict({"root": str(tmp_path)}))[0]
    assert "nan entity clusters" not in line and "t(nan)" not in line, line
    assert "CV3 jackknife standard error (leave one entity out), which is not defined here" in line, line
