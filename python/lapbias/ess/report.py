"""The ESS section of the report and the error-curve figure, read back from results/ess/*.csv."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..report.tables import to_markdown
from . import variance

TITLE = "Equivalent sample size of the LLM (ESS audit)"
TEST_VARIANCE = {"difference": "eq. 4.6, the finite-K variance of the loss difference",
                 "sum": "eq. 4.7, the finite-K variance of the comparator's loss plus the variance of the LLM's mean "
                        "loss"}
"""The variance of Algorithm 3.1's test in words, by `test_variance` (variance.for_test, variance.sum_of_variances)."""


def section(ess_dir: Path) -> list[str]:
    """REPORT.md hook: the ESS section when results/ess/ess.csv exists, else nothing."""
    return markdown(ess_dir) if (Path(ess_dir) / "ess.csv").exists() else []


def markdown(ess_dir: Path, figures: str = "figures") -> list[str]:
    """The section's lines; `figures` is the figure folder relative to the Markdown file that includes them."""
    ess_dir = Path(ess_dir)
    ess = pd.read_csv(ess_dir / "ess.csv")
    llm = pd.read_csv(ess_dir / "llm.csv")
    curve = pd.read_csv(ess_dir / "curve.csv")
    alpha = float(ess["alpha"].iloc[0])
    test_variance = ess["test_variance"].iloc[0]
    rows = []
    for r in ess.itertuples():
        lower = f"[{r.ess_lower}, ∞)" + (" (all grid nulls rejected)" if r.exceeds_grid else "")
        # §5.1 / Table 1: the error of a squared-loss outcome is reported as the RMSE √R̂_LLM.
        error = float(np.sqrt(r.llm_error)) if r.loss == "squared" else r.llm_error
        rows.append({"outcome": r.outcome, "loss": r.loss, "LLM error (rmse for squared loss)": error,
                     "algorithm": r.comparator,
                     "ESS (plug-in)": r.ess_plugin, f"one-sided {1 - alpha:.0%} CI": lower,
                     "CI with (4.7)": f"[{r.ess_lower_sum}, ∞)", "N": r.N})
    lines = [f"## {TITLE}", "",
             "How many observations of this domain a comparator algorithm needs to predict as well as the LLM "
             "(Gao, Han, Liang): error curves by block-out cross-validation (§3.2), the LLM's error on the full "
             f"sample (eq. 3.1), and Algorithm 3.1's sequential one-sided tests at level {alpha:g} giving the lower "
             f"confidence bound (test variance: {test_variance}, {TEST_VARIANCE[test_variance]}, and Student's t "
             "critical value with K − 1 degrees of freedom). The ESS is relative to the algorithm, the model, its "
             "prompt and the task.", "",
             to_markdown(pd.DataFrame(rows), list(rows[0])), ""]
    lines += [f"- {sentence}" for sentence in findings(ess, llm)] + [""]
    lines += ["LLM predictions:", "",
              to_markdown(llm, ["outcome", "loss", "metric", "N", "llm_risk", "llm_se", "metric_value", "metric_ci_low",
                                "metric_ci_high", "llm_answered", "llm_unanswered", "constant_rule_risk",
                                "one_observation_risk", "source"]), ""]
    shown = curve[["outcome", "comparator", "n", "K", "risk", "ci_low", "ci_high", "variance_rule", "excess_risk",
                   "excess_ci_low", "excess_variance_rule", "rejected"]]
    lines += [f"Error curves (pointwise two-sided bands, `variance_rule`: {band_rule(int(ess['min_blocks'].iloc[0]))}; "
              "`excess_ci_low` is the one-sided lower end for R(n) − R_LLM, Remark 3.1, with "
              + ("the variance in `excess_variance_rule`" if test_variance == "difference" else
                 "the variance of eq. 4.7 (`excess_se_sum` in curve.csv; `excess_variance_rule` is the rule of the "
                 "difference's variance, eq. 4.6, shown for comparison)")
              + ": finite_K = the finite-K variance of the loss difference, fixed_K_fallback = eq. B.2 of the "
              "difference where the finite-K variance is ≤ 0, untested = K = 2 blocks, where no variance of the "
              "difference exists):", "",
              to_markdown(shown, list(shown.columns)), "",
              f"![ESS error curves]({figures}/ess_curve.png)", "",
              "Source: `results/ess/ess.csv`, `results/ess/curve.csv`, `results/ess/llm.csv`; configuration "
              "`results/ess/run_config.json`.", ""]
    return lines


def band_rule(min_blocks: int) -> str:
    """The bands' variance rule (variance.band) in words, with the configured threshold."""
    return variance.BAND_RULE.format(min_blocks=min_blocks)


def findings(ess: pd.DataFrame, llm: pd.DataFrame) -> list[str]:
    """What the tables imply in words: what the LLM answered, a constant rule, an LLM worse than the constant rule
    or than one observation, and a plug-in censored by the grid."""
    sentences = []
    for r in llm.itertuples():
        name = f"`{r.outcome}`"
        if r.source == "prompt" and r.loss in ("zero_one", "balanced_error", "f1_error"):
            counts = json.loads(r.llm_answers)
            answered = ", ".join(f"{word} {count}" for word, count in counts.items())
            text = (f"{name}: the model's answer began with a label in {r.llm_answered} of {r.N} prompts "
                    f"({answered}); {r.llm_unanswered} unanswered, scored as wrong predictions.")
            examples = json.loads(r.llm_unanswered_examples)
            if examples:
                text += " Most common unanswered answers: " + "; ".join(f"\"{t}\" ({n})" for t, n in examples) + "."
            sentences.append(text)
        if r.llm_distinct <= 1:
            counts = json.loads(r.llm_answers)
            if r.llm_answered == 0:
                what = "no prompt was answered"
            elif counts:
                what = f"every answered row gets {max(counts, key=counts.get)}"
            else:
                what = "every row gets the same value"
            sentences.append(f"Warning: {name}: the LLM's predictions are constant ({what}); its error is that of a "
                             "constant rule, not a measure of what it knows about the rows.")
        worse = []
        if r.llm_risk > r.constant_rule_risk:
            worse.append(f"that of always predicting the most common outcome ({r.constant_rule_risk:.4g})"
                         if r.loss != "squared" else f"that of always predicting the mean ({r.constant_rule_risk:.4g})")
        if r.llm_risk > r.one_observation_risk:
            worse.append(f"the expected error of predicting the outcome of one random observation, which is what a "
                         f"comparator trained on n = 1 row does ({r.one_observation_risk:.4g})")
        if worse:
            sentences.append(f"{name}: the LLM's error ({r.llm_risk:.4g}) is larger than " + " and than ".join(worse)
                             + ": the LLM is worth less than " + ("one observation" if r.llm_risk >
                                                                  r.one_observation_risk else "a constant rule") + ".")
    for r in ess.itertuples():
        if r.plugin_below_grid:
            sentences.append(f"`{r.outcome}` vs {r.comparator}: the plug-in ESS is {r.ess_plugin}: the comparator "
                             f"already beats the LLM at the smallest grid size n = {r.grid_min}, so the grid places "
                             "the ESS only somewhere in 1.." f"{r.grid_min}.")
        elif r.plugin_beyond_grid:
            sentences.append(f"`{r.outcome}` vs {r.comparator}: the plug-in ESS is {r.ess_plugin}: no grid size "
                             f"reaches the LLM's error; extend the grid beyond n = {r.grid_max} to place it.")
    return sentences


def cli_lines(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The lines `lapbias ess` prints: one per outcome × comparator, then the findings' warnings."""
    lines = [f"ess: {r.outcome} vs {r.comparator}: LLM error {r.llm_error:.4g}, plug-in ESS {r.ess_plugin}, "
             f"one-sided {1 - r.alpha:.0%} CI [{r.ess_lower}, ∞)" for r in tables["ess"].itertuples()]
    return lines + [f"ess: {s}" for s in findings(tables["ess"], tables["llm"])]


def figure(tables: dict[str, pd.DataFrame], path: Path) -> Path:
    """One panel per outcome (`draw`), written as a PNG."""
    import matplotlib.pyplot as plt

    fig = draw(tables)
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)
    return path


def draw(tables: dict[str, pd.DataFrame]):
    """One panel per outcome: each comparator's curve (metric scale) with its band, the LLM's line and band,
    the plug-in ESS (dotted, labelled as stated: "≤ n₁", "> n_J" or n) and the one-sided lower bound (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve, llm, ess = tables["curve"], tables["llm"], tables["ess"]
    outcomes = list(llm["outcome"])
    fig, axes = plt.subplots(1, len(outcomes), figsize=(5.5 * len(outcomes), 4), squeeze=False)
    for ax, name in zip(axes[0], outcomes):
        line = llm[llm["outcome"] == name].iloc[0]
        for colour, (comparator, part) in zip(plt.rcParams["axes.prop_cycle"].by_key()["color"],
                                              curve[curve["outcome"] == name].groupby("comparator", sort=False)):
            ax.plot(part["n"], part["metric_value"], marker="o", color=colour, label=comparator)
            ax.fill_between(part["n"], part["metric_ci_low"], part["metric_ci_high"], color=colour, alpha=0.2)
            row = ess[(ess["outcome"] == name) & (ess["comparator"] == comparator)].iloc[0]
            ax.axvline(row["ess_lower"], color=colour, linestyle="--", linewidth=1,
                       label=f"{comparator}: ESS ≥ {row['ess_lower']}")
            at = row["grid_max"] if np.isnan(row["ess_plugin_n"]) else row["ess_plugin_n"]
            ax.axvline(at, color=colour, linestyle=":", linewidth=1, label=f"{comparator}: plug-in {row['ess_plugin']}")
        ax.axhline(line["metric_value"], color="black", label="LLM")
        ax.axhspan(line["metric_ci_low"], line["metric_ci_high"], color="grey", alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("training size n")
        ax.set_ylabel(line["metric"])
        ax.set_title(name)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
