"""The verdict on the terminal: `lapbias run` and `lapbias report` end with the verdict, the one sentence that
explains it, then the path of REPORT.md; the sentence exists for every branch of the verdict rule."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from lapbias.cli import main
from lapbias.config import EstimateConfig
from lapbias.io import Layout
from lapbias.report.verdict import CONTAMINATION, MIXED, NO_EVIDENCE, NO_EVIDENCE_UNTESTED, UNDERPOWERED, decide
from lapbias.report.verdict_sentence import SEE_REPORT, explain
from test_panel import synthetic_stage_files
from test_verdict import BETA3, POWERED, WEAK, detection, placebo, row, validation

NAN = float("nan")
OMITTED = pd.DataFrame([row("pre", "mu_hat", 0.1, 1.0, 0.3),
                        {"model": "pre", "term": BETA3, "coef": NAN, "t": NAN, "p": NAN, "p_one_sided": NAN}])
NO_P = pd.DataFrame([row("pre", "mu_hat", 0.1, 1.0, 0.3),
                     {"model": "pre", "term": BETA3, "coef": 0.4, "t": NAN, "p": NAN, "p_one_sided": NAN}])

NEGATIVE_B1 = {**POWERED, "mde_share": NAN, "b1_standalone": -0.5}
NO_B1 = {**POWERED, "mde_share": NAN, "b1_standalone": NAN}

BRANCHES = [  # (detection, validation, placebo, power, label, fragment of the sentence)
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, CONTAMINATION,
     "beta_3 > 0 before the training cutoff (one-sided p = 0.0020), the recalled direction of high-LAP rows predicts"),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(2.5, 0.02), POWERED, MIXED,
     "beta_3 > 0 survives after the training cutoff (the placebo fails)"),
    (detection(0.8, 3.0, 0.004), validation(0.30, 0.6), placebo(0.3, 0.8), POWERED, MIXED,
     "but the validation pattern is absent, so memorization cannot be separated"),
    (detection(0.8, 3.0, 0.004), validation(0.30, 0.6), None, POWERED, MIXED,
     "but the validation pattern is absent and the post-cutoff placebo cannot be run"),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), None, POWERED, MIXED,
     "but the post-cutoff placebo cannot be run"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, NO_EVIDENCE,
     "not significantly greater than zero (one-sided p = 0.3100), and the test had power"),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), POWERED, NO_EVIDENCE_UNTESTED,
     "the high-LAP recall does not predict the outcomes better than the low-LAP recall"),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), WEAK, UNDERPOWERED,
     "of the LLM's own effect per SD of LAP, above 37%"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), WEAK, UNDERPOWERED,
     "its minimum detectable effect is 250% of the LLM's own effect per SD of LAP, above 37%"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.01, diff_p=0.4), placebo(0.3, 0.8), POWERED, MIXED,
     "the validation regressions contradict the memorization pattern or cannot be estimated"),
    (detection(0.1, 0.5, 0.62), None, placebo(0.3, 0.8), POWERED, MIXED,
     "the validation regressions contradict the memorization pattern or cannot be estimated"),
    (pd.DataFrame(), None, None, None, UNDERPOWERED, "the detection regression could not be estimated"),
    (OMITTED, None, None, None, UNDERPOWERED, "beta_3 is not identified"),
    (NO_P, validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, MIXED, "beta_3 has no standard error"),
    # no share to compare with 37%: the verdict says "minimum detectable share undefined" (the sentence said "above
    # 37% of the LLM's own effect")
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), NEGATIVE_B1, UNDERPOWERED,
     "the LLM's forecasts have no positive effect of their own (standalone b1 = -0.5), so no contamination share"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), NO_B1, UNDERPOWERED,
     "the LLM's own effect (standalone b1) could not be estimated, so no contamination share"),
]


@pytest.mark.parametrize("det, val, plc, power, label, fragment", BRANCHES)
def test_every_branch_of_the_rule_has_its_sentence(det, val, plc, power, label, fragment):
    verdict = decide(det, val, plc, power, EstimateConfig())
    sentence = explain(verdict, det, EstimateConfig(), power)
    assert verdict.label == label and fragment in sentence, (verdict.label, verdict.failed, sentence)
    assert ("37%" in sentence) == (label == NO_EVIDENCE or "above 37%" in fragment)
    assert sentence != SEE_REPORT and sentence.endswith(".") and sentence.count(". ") == 0 and "nan" not in sentence


def test_run_and_report_end_with_the_verdict_its_sentence_and_the_report(tmp_path):
    layout = Layout(tmp_path)
    layout.make_dirs()
    synthetic_stage_files(layout, n_entities=12)
    config = tmp_path / "study.toml"
    config.write_text(f'root = "{tmp_path}"\n[study]\ncutoff = 2024-06-30\n[estimate]\nbootstrap_reps = 20\n')
    for step in ("panel", "estimate"):
        assert CliRunner().invoke(main, [step, str(config)]).exit_code == 0
    result = CliRunner().invoke(main, ["report", str(config)])
    assert result.exit_code == 0, result.output
    last = result.output.rstrip("\n").splitlines()[-3:]
    label = next(line for line in (tmp_path / "results/REPORT.md").read_text().splitlines()
                 if line.startswith("**Verdict: ")).removeprefix("**Verdict: ").split(".**")[0]
    assert last[0] == f"verdict: {label}" and last[2] == f"report: {tmp_path / 'results/REPORT.md'}"
    assert last[1].startswith("  ") and len(last[1]) > 40 and SEE_REPORT not in last[1]
    log = (tmp_path / "logs/lapbias.log").read_text()
    assert f"verdict: {label}" in log and last[1].strip() in log


NEW_BRANCHES = [  # (detection, validation, placebo, power, label, failed, fragment of the sentence)
    # the rule's two power conditions, each with its own threshold (the sentence said "minimum detectable share at
    # most 20%", max_ucb_share being the upper bound's threshold)
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, NO_EVIDENCE, [],
     "would have been detected with 80% probability (at most 37%, detectable_share), and the one-sided 95% upper "
     "bound excludes an interaction above 12% (at most 20%, max_ucb_share); this assumes the LLM's genuine accuracy "
     "does not vary with LAP"),
    # Underpowered by the upper bound: the interval includes 46% (the sentence blamed the MDE)
    (detection(0.23, 1.2, 0.23), validation(0.01, 0.6), placebo(0.3, 0.8), {**POWERED, "ucb_share": 0.46},
     UNDERPOWERED, ["power"], "but the interval includes an interaction of 46% of the LLM's own effect per SD of LAP"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), WEAK, UNDERPOWERED, ["power"],
     "its minimum detectable effect is 250% of the LLM's own effect per SD of LAP, above 37% (detectable_share)"),
    # branches that had no sentence (the terminal pointed to REPORT.md)
    (detection(-0.9, -3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, MIXED, ["beta_3 negative"],
     "beta_3 < 0 before the training cutoff (one-sided p for beta_3 < 0 = 0.0020, two-sided p = 0.0040)"),
    (detection(0.1, 0.5, 0.62), validation(0.30, 0.6), placebo(0.3, 0.8), POWERED, NO_EVIDENCE_UNTESTED,
     ["validation"], "so LAP is not shown to measure memorization and the test's power against memorization-driven "
     "contamination is unknown"),
    (detection(0.1, 0.5, 0.62), validation(0.01, 0.6), placebo(0.3, 0.8), {**POWERED, "lap_gap": 0.01},
     UNDERPOWERED, ["LAP variation"], "but LAP shows no meaningful variation"),
    (detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), {**POWERED, "placebo_ucb_per_sd": 0.5},
     MIXED, ["placebo uninformative"], "the post-cutoff placebo could not have excluded the interaction found before "
     "the cutoff"),
    # with 8 clusters the verdict reads the wild bootstrap's p (0.2000): the sentence read the CRV1 p (0.0100) and
    # said "beta_3 > 0 before the training cutoff" of a beta_3 the verdict found not significant
    (detection(0.8, 2.8, 0.02, clusters=8, p_wild=0.4, p_wild_one_sided=0.2), validation(0.01, 0.01, diff_p=0.4),
     placebo(0.3, 0.8, clusters=8, p_wild=0.8, p_wild_one_sided=0.6), POWERED, MIXED, ["validation"],
     "beta_3 is not significantly greater than zero (wild cluster bootstrap one-sided p = 0.2000)"),
    (detection(0.8, 2.8, 0.02, clusters=8, p_wild=0.02, p_wild_one_sided=0.01), validation(0.01, 0.6),
     placebo(0.3, 0.8, clusters=8, p_wild=0.8, p_wild_one_sided=0.6), POWERED, CONTAMINATION, [],
     "beta_3 > 0 before the training cutoff (wild cluster bootstrap one-sided p = 0.0100)"),
]


@pytest.mark.parametrize("det, val, plc, power, label, failed, fragment", NEW_BRANCHES)
def test_the_sentence_states_the_rule_that_decided(det, val, plc, power, label, failed, fragment):
    verdict = decide(det, val, plc, power, EstimateConfig())
    sentence = explain(verdict, det, EstimateConfig(), power)
    assert verdict.label == label and verdict.failed == failed, verdict.paragraph
    assert fragment in sentence, sentence
    assert sentence != SEE_REPORT and sentence.endswith(".") and sentence.count(". ") == 0 and "nan" not in sentence


def test_a_collapsed_placebo_is_not_said_to_exclude_the_pre_cutoff_interaction():
    """Post-cutoff LAP collapsed: the placebo passes by Step 5 itself and has no upper bound (power.csv leaves
    placebo_ucb_per_sd empty), so "Contamination detected" reads it as it is. The terminal sentence said the placebo
    "passes and excludes the pre-cutoff interaction", a bound that was never computed; with a bound below the
    pre-cutoff beta_3 per SD it still says so."""
    from test_verdict import _collapsed_placebo

    collapsed, notes = _collapsed_placebo()
    unbounded = {**POWERED, "placebo_ucb_beta3": NAN, "placebo_ucb_per_sd": NAN, "beta3_post": NAN}
    verdict = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), collapsed, unbounded, EstimateConfig(), notes)
    assert verdict.label == CONTAMINATION, verdict.paragraph
    sentence = explain(verdict, detection(0.8, 3.0, 0.004), EstimateConfig(), unbounded)
    assert "excludes" not in sentence and "the post-cutoff placebo passes" in sentence, sentence
    bounded = decide(detection(0.8, 3.0, 0.004), validation(0.01, 0.6), placebo(0.3, 0.8), POWERED, EstimateConfig())
    assert "passes and excludes the pre-cutoff interaction" in explain(bounded, detection(0.8, 3.0, 0.004),
                                                                       EstimateConfig(), POWERED)
