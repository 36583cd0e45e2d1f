"""Verdict-level Monte Carlo, quick version (the full rates: benchmarks/bench_verdict_mc.py and
benchmarks/results/verdict_mc.md). Simulated panels (demo shape: 30 entities x 8 periods; few clusters: 8
heterogeneous entities x 150 days; entity and period effects; DGP in lapbias/simulate.py) go through the
regressions and the report's rule, the wild cluster bootstrap with 199 draws (the benchmark: the product's 9,999).
With few draws the rates are checked for consistency with the requirement at the 1% level (a binomial tail), the
labels of the degenerate scenarios exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scipy import stats

from lapbias.config import EstimateConfig
from lapbias.estimate.power import detection_power
from lapbias.estimate.protocol import DETECTION_TERMS, ProtocolResults, _estimated
from lapbias.simulate import DEMO, FEW_8, PAPER_SHARE, Shape, simulate, verdict
from lapbias.report.verdict import CONTAMINATION, MIXED, NO_EVIDENCE, NO_EVIDENCE_UNTESTED, UNDERPOWERED

REPS = 8
QUICK = EstimateConfig(wild_bootstrap_reps=199)


def labels(share: float, reps: int, lap_design: str = "uniform", noise_factor: float = 1.0, first_seed: int = 0,
           recall: bool = True, shape: Shape = DEMO):
    return [verdict(*simulate(first_seed + r, shape, share, lap_design, noise_factor, recall), QUICK).label
            for r in range(reps)]


def at_most(found: list[str], label: str, rate: float) -> bool:
    """The count of `label` is consistent with a rate of at most `rate` (binomial upper tail above 1%)."""
    return stats.binom.sf(found.count(label) - 1, len(found), rate) > 0.01


def at_least(found: list[str], labels: tuple[str, ...], rate: float) -> bool:
    return stats.binom.cdf(sum(found.count(label) for label in labels), len(found), rate) > 0.01


def test_no_contamination_is_rarely_called_contamination_and_mostly_cleared():
    found = labels(0.0, REPS, first_seed=100)
    assert at_most(found, CONTAMINATION, 0.05), found
    assert at_least(found, (NO_EVIDENCE, NO_EVIDENCE_UNTESTED), 0.5), found


def test_paper_sized_interaction_is_detected():
    found = labels(PAPER_SHARE, REPS, first_seed=200)
    assert at_least(found, (CONTAMINATION,), 0.80), found


def test_lap_without_variation_and_weak_signal_are_underpowered():
    assert labels(PAPER_SHARE, 2, "flat", first_seed=300) == [UNDERPOWERED] * 2
    assert labels(0.0, 2, noise_factor=5.0, first_seed=400) == [UNDERPOWERED] * 2


def test_a_negative_interaction_is_not_cleared():
    """beta_3 x SD(LAP) = -37% of the standalone effect: accuracy falls with LAP (Proposition 1 says LAP then proxies
    for something else). Mixed/invalid (beta_3 significantly negative), "No evidence" at most as often as the test
    of beta_3 < 0 misses (about 1% at this precision)."""
    found = labels(-PAPER_SHARE, REPS, first_seed=700)
    assert at_most(found, NO_EVIDENCE, 0.02) and at_least(found, (MIXED,), 0.8), found


def test_a_clean_model_is_cleared_in_most_panels():
    """A model that recalls nothing and is not contaminated (LAP varying, ud unrelated to the outcome): "No evidence
    of contamination (LAP untested)" in most panels -- it was "Underpowered" in 74% and "No evidence" in 1%."""
    found = labels(0.0, REPS, first_seed=800, recall=False)
    assert at_least(found, (NO_EVIDENCE_UNTESTED,), 0.5), found
    assert at_most(found, NO_EVIDENCE, 0.05) and at_most(found, CONTAMINATION, 0.05), found  # spurious pattern ~1%


def test_a_lap_constant_to_six_digits_is_never_cleared():
    """A recall mass of 0.3 +- 2e-6 (`lap` omitted as collinear with the FE, beta_3 still estimated): the shares do
    not see it, the LAP-variation gate does."""
    found = labels(0.0, REPS, "six_digits", first_seed=900)
    assert NO_EVIDENCE not in found and NO_EVIDENCE_UNTESTED not in found, found
    assert at_least(found, (UNDERPOWERED,), 0.7), found


def test_model_that_almost_always_answers_unknown_is_never_no_evidence():
    """Recall almost always "unknown": LAP = P(up) + P(down) between 0.001 and 0.02, ud = P(up) - P(down) unrelated
    to the outcome. The shares are scale-free (next test), so the power rule does not flag it; its high/low LAP gap
    of about 1 percentage point does (LAP without meaningful variation, min_lap_gap = 5 points)."""
    found = []
    for seed in range(500, 500 + REPS):
        pre, post = simulate(seed, DEMO, 0.0, "unknown")
        assert 0.001 <= pre["lap"].min() and pre["lap"].max() <= 0.02
        assert (pre["ud"].abs() <= pre["lap"]).all()
        found.append(verdict(pre, post, QUICK))
    found_labels = [v.label for v in found]
    assert NO_EVIDENCE not in found_labels and NO_EVIDENCE_UNTESTED not in found_labels, found_labels
    assert at_least(found_labels, (UNDERPOWERED,), 0.7), found_labels
    assert all(v.failed == ["LAP variation"] for v in found if v.label == UNDERPOWERED), [v.paragraph for v in found]


def test_few_heterogeneous_clusters_keep_false_positives_at_the_nominal_rate():
    """8 entities x 150 days, unbalanced, heteroskedastic AR(1) errors, persistent forecasts, LAP correlated with the
    entity effect, no contamination: the verdict reads the wild cluster bootstrap (8 < 42 clusters)."""
    found = labels(0.0, REPS, first_seed=1000, shape=FEW_8)
    assert at_most(found, CONTAMINATION, 0.05), found


def test_a_narrow_lap_range_is_as_powerful_per_sd_as_a_wide_one():
    """LAP mapped affinely from [0, 1] onto [0.001, 0.02] (same outcome): beta_3's t, the high/low-LAP split and the
    power shares are unchanged -- a narrow range of LAP is not by itself a lack of power (the LAP-variation gate
    reads the absolute gap of the recall LAP instead)."""
    for seed in (600, 601):
        pre, post = simulate(seed, DEMO, 0.0)
        narrow = [frame.assign(lap=0.001 + 0.019 * frame["lap"]) for frame in (pre, post)]
        wide_power, narrow_power = (detection_power(p, _detection(p)).set_index("quantity")["value"]
                                    for p in (pre, narrow[0]))
        for quantity in ("mde_share", "ucb_share", "beta3_share"):
            assert math.isclose(wide_power[quantity], narrow_power[quantity], rel_tol=1e-6), quantity
        assert math.isclose(narrow_power["lap_gap"], 0.019 * wide_power["lap_gap"], rel_tol=1e-9)
        assert verdict(pre, post, QUICK).label != UNDERPOWERED or verdict(*narrow, QUICK).label == UNDERPOWERED


def _detection(pre):
    return _estimated(ProtocolResults(), "detection", "pre", pre, DETECTION_TERMS, -1)


def test_lap_varying_only_between_entities_keeps_the_interactions_power():
    """The entity effects absorb LAP's between variation but not that of mu_hat x LAP (mu_hat varies within
    entities), so a LAP that varies across entities and barely within them has the MDE share of an iid LAP:
    the within-FE SD of LAP (reported) is no measure of the interaction's power (estimate/power.py)."""
    pre, _ = simulate(610, DEMO, 0.0)
    rng = np.random.default_rng(610)
    level = rng.uniform(0.001, 0.02, size=pre["entity_num"].max() + 1)[pre["entity_num"]]
    between = pre.assign(lap=level + 0.0005 * pre["lap"])
    iid, entity = (detection_power(p, _detection(p)).set_index("quantity")["value"] for p in (pre, between))
    assert entity["within_share_lap"] < 0.05 < iid["within_share_lap"]
    assert 0.67 < entity["mde_share"] / iid["mde_share"] < 1.5, (entity["mde_share"], iid["mde_share"])


def test_simulated_verdict_is_the_one_lapbias_estimate_and_report_give(tmp_path):
    """simulate.verdict() is the pipeline's verdict: a simulated 25 x 9 panel (seed 20: Contamination detected)
    written as panel.parquet goes through `lapbias estimate` and `lapbias report`; REPORT.md ends in the same verdict
    sentence."""
    from click.testing import CliRunner

    from lapbias.cli import main
    from lapbias.config import from_dict
    from lapbias.io import Layout, read_parquet
    from lapbias.panel import build, high_lap_flags
    from test_panel import synthetic_stage_files, write_hand_built_panel

    layout = Layout(tmp_path)
    layout.make_dirs()
    dates = [f"2024-0{m}-1{d}" for m in (3, 4, 5) for d in range(3)] + [f"2024-{m}-1{d}" for m in (10, 11, 12)
                                                                        for d in range(3)]
    synthetic_stage_files(layout, n_entities=25, dates=dates)
    build(from_dict({"root": str(tmp_path), "study": {"cutoff": "2024-06-30"}}), layout)
    panel = read_parquet(layout.derived_file("panel.parquet")).sort_values(["post", "entity_num", "period_num"])
    pre, post = simulate(20, Shape("panel", 25, 9), PAPER_SHARE)
    for column in ("outcome", "mu_hat", "lap", "ud", "ud_dir"):
        panel[column] = np.concatenate([pre[column].to_numpy(), post[column].to_numpy()])
    panel["lap_recall"] = panel["lap"]
    for _, sample in panel.groupby("post"):
        panel.loc[sample.index, "high_lap"] = high_lap_flags(sample, "pooled")
    write_hand_built_panel(layout, panel, read_parquet(layout.derived_file("input.parquet")))
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[study]\ncutoff = "2024-06-30"\n[estimate]\nbootstrap_reps = 0\n')
    for command in ("estimate", "report"):
        result = CliRunner().invoke(main, [command, str(config)])
        assert result.exit_code == 0, result.output
    simulated = verdict(*(panel[panel["post"] == flag].astype({"high_lap": int}) for flag in (0, 1)),
                        EstimateConfig(bootstrap_reps=0))
    report = (layout.results / "REPORT.md").read_text()
    sentence = simulated.paragraph[simulated.paragraph.index("Verdict: "):].split(".")[0]
    assert simulated.label == CONTAMINATION and sentence in report[report.index("## 6. Verdict"):], sentence


def test_the_simulated_recall_respects_its_probability_bound():
    """ud = P(up) - P(down) and LAP = P(up) + P(down), so |ud| <= LAP on every row, in every design, shape and sample
    (the benchmark's recall was 0.5 1{high} e + 0.5 N(0, 1), |ud| up to 1.5 at LAP = 0.01, which overstated the
    validation test's power); the memorized high-LAP rows recall the shock's sign, right 90% of the time."""
    from lapbias.simulate import FEW_15, PAPER_LIKE

    for shape, design, recall in ((DEMO, "uniform", True), (DEMO, "uniform", False), (DEMO, "six_digits", True),
                                  (DEMO, "unknown", False), (FEW_8, "uniform", True), (FEW_15, "uniform", True),
                                  (PAPER_LIKE, "uniform", True)):
        for sample in simulate(3, shape, PAPER_SHARE, design, recall=recall):
            assert (sample["ud"].abs() <= sample["lap"]).all(), (shape.name, design, recall)
    from lapbias.simulate import TABLE_V

    assert all((sample["ud"].abs() <= sample["lap"]).all() for sample in simulate(3, TABLE_V, PAPER_SHARE))
    pre, post = simulate(4, PAPER_LIKE, 0.0)
    high = pre[pre["high_lap"] == 1]
    shock = high["outcome"] - high.groupby("entity_num")["outcome"].transform("mean")
    assert 0.6 < float(np.mean(np.sign(high["ud"]) == np.sign(shock))) < 0.9
    assert abs(float(np.corrcoef(post["ud"], post["outcome"])[0, 1])) < 0.05
    pre_v, post_v = simulate(5, TABLE_V, 0.0)
    assert len(post_v) / len(pre_v) == pytest.approx(5 / 40, abs=0.02)


def test_the_benchmark_uses_the_product_s_wild_draws():
    """benchmarks/bench_verdict_mc.py measures the verdict as `lapbias estimate` computes it: 9,999 wild draws."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_verdict_mc

    assert bench_verdict_mc.THRESHOLDS == EstimateConfig() and bench_verdict_mc.THRESHOLDS.wild_bootstrap_reps == 9999
    assert "| Contamination detected |" in bench_verdict_mc.table_v()


def test_power_reports_the_standalone_effects_t_statistic():
    """power.csv carries b1's t beside b1 (paper Table II column 1 reports 12.24): the t of mu_hat in the
    standalone regression outcome ~ mu_hat with the same fixed effects and clustering."""
    from lapbias.estimate.reghdfe import reghdfe

    pre, _ = simulate(3, DEMO, PAPER_SHARE)
    power = detection_power(pre, _detection(pre)).set_index("quantity")["value"]
    standalone = reghdfe(pre, "outcome", ["mu_hat"], absorb=["entity_num", "period_num"], vce="cluster",
                         cluster=["entity_num"])
    assert power["b1_standalone"] == pytest.approx(standalone.coef["mu_hat"], rel=1e-10)
    assert power["t_b1_standalone"] == pytest.approx(standalone.t["mu_hat"], rel=1e-10)


def _one_entity_post_lap(seed: int = 3):
    """A few-cluster panel (8 entities) whose post-cutoff LAP varies within one entity only (the others answer
    "unknown" alike, LAP 0.01, ud 0): the post-cutoff beta_3 is estimated, with a CRV1 standard error and a wild
    bootstrap p, but deleting that entity leaves it unidentified, so the CV3 jackknife of the placebo's bound is not
    defined."""
    pre, post = simulate(seed, FEW_8, PAPER_SHARE)
    others = post["entity_num"] != post["entity_num"].min()
    post = post.assign(lap=post["lap"].where(~others, 0.01), ud=post["ud"].where(~others, 0.0))
    return pre, post.assign(high_lap=(post["lap"] > post["lap"].median()).astype(int))


def test_a_placebo_whose_few_cluster_bound_is_not_defined_is_not_informative():
    """Below wild_below_clusters the placebo's upper bound uses the CV3 jackknife. Where it is not defined (the
    post-cutoff beta_3 rests on one entity) power.csv has no placebo bound although the post-cutoff beta_3 and its
    CRV1 standard error exist: the post-cutoff data are not shown to exclude the pre-cutoff interaction, so the
    placebo is uninformative (Mixed/invalid). It was read as "informativeness cannot be stated", the case reserved
    for a post-cutoff beta_3 that does not exist (LAP collapsed), and the panel was labelled "Contamination
    detected" with a sentence saying the placebo excludes the pre-cutoff interaction."""
    from lapbias.report.verdict import decide
    from lapbias.report.verdict_sentence import explain
    from lapbias.simulate import tables

    thresholds = EstimateConfig(wild_bootstrap_reps=999)
    found = tables(*_one_entity_post_lap(), thresholds)
    power = dict(zip(found["power"]["quantity"], found["power"]["value"]))
    assert math.isnan(power["placebo_ucb_per_sd"]) and math.isfinite(power["beta3_post"])
    assert math.isfinite(power["se_beta3_post"]) and power["cv3_bound_post"] == 1
    result = decide(found["detection"], found["validation"], found["placebo"], found["power"], thresholds,
                    found["notes"])
    assert result.label == MIXED and result.failed == ["placebo uninformative"], result.paragraph
    assert "CV3 jackknife" in result.paragraph and "not defined" in result.paragraph, result.paragraph
    assert "excludes the pre-cutoff interaction" not in explain(result, found["detection"], thresholds, power)


def test_an_undefined_few_cluster_bound_is_not_called_a_negative_b1():
    """Where the CV3 jackknife of the detection regression is not defined (pre-cutoff LAP varies within one entity,
    every other entity at one value: beta_3 rests on that entity), power.csv has no upper bound and no MDE and the
    verdict is Underpowered. The reason given was "the standalone LLM effect b1 = 0.23 is not positive" (and on the
    terminal "the LLM's forecasts have no positive effect of their own"), with b1 positive."""
    from lapbias.report.verdict import decide
    from lapbias.report.verdict_sentence import explain
    from lapbias.simulate import tables

    pre, post = simulate(5, FEW_8, 0.0)
    others = pre["entity_num"] != pre["entity_num"].min()
    pre = pre.assign(lap=pre["lap"].where(~others, 0.3))
    pre = pre.assign(high_lap=(pre["lap"] > pre["lap"].median()).astype(int))
    thresholds = EstimateConfig(wild_bootstrap_reps=999)
    found = tables(pre, post, thresholds)
    power = dict(zip(found["power"]["quantity"], found["power"]["value"]))
    assert power["b1_standalone"] > 0 and math.isnan(power["ucb_beta3"]) and power["cv3_bound"] == 1
    assert power["lap_gap"] >= thresholds.min_lap_gap
    present = found["validation"].assign(  # the validation pattern present, so that the power rule decides
        p=np.where(found["validation"]["model"] == "low_lap", 0.6, 0.001),
        p_one_sided=np.where(found["validation"]["model"] == "low_lap", 0.3, 0.0005),
        coef=found["validation"]["coef"].abs())
    result = decide(found["detection"], present, found["placebo"], found["power"], thresholds, found["notes"])
    assert result.label == UNDERPOWERED and result.failed == ["power"], result.paragraph
    sentence = explain(result, found["detection"], thresholds, power)
    assert "is not positive" not in result.paragraph and "no positive effect" not in sentence, (result.paragraph,
                                                                                                 sentence)
    assert "CV3" in result.paragraph and "CV3" in sentence, (result.paragraph, sentence)
