"""The ESS section of the report and the error-curve figure, read back from results/ess/*.csv."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..report.tables import to_markdown

TITLE = "Equivalent sample size of the LLM (ESS audit)"


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
    rows = []
    for r in ess.itertuples():
        plug = f"> {r.grid_max}" if r.plugin_beyond_grid else f"{int(r.ess_plugin)}"
        lower = f"[{r.ess_lower}, ∞)" + (" (all grid nulls rejected)" if r.exceeds_grid else "")
        # §5.1 / Table 1: the error of a squared-loss outcome is reported as the RMSE √R̂_LLM.
        error = float(np.sqrt(r.llm_error)) if r.loss == "squared" else r.llm_error
        rows.append({"outcome": r.outcome, "loss": r.loss, "LLM error (rmse for squared loss)": error,
                     "algorithm": r.comparator,
                     "ESS (plug-in)": plug, f"one-sided {1 - alpha:.0%} CI": lower,
                     "CI with (4.7)": f"[{r.ess_lower_sum}, ∞)", "N": r.N})
    lines = [f"## {TITLE}", "",
             "How many observations of this domain a comparator algorithm needs to predict as well as the LLM "
             "(Gao, Han, Liang): error curves by block-out cross-validation (§3.2), the LLM's error on the full "
             f"sample (eq. 3.1), and Algorithm 3.1's sequential one-sided tests at level {alpha:g} giving the lower "
             f"confidence bound (test variance: {ess['test_variance'].iloc[0]}, eq. "
             f"{'4.6' if ess['test_variance'].iloc[0] == 'difference' else '4.7'}). The ESS is relative to the algorithm, "
             "the model, its prompt and the task.", "",
             to_markdown(pd.DataFrame(rows), list(rows[0])), "",
             "LLM predictions:", "",
             to_markdown(llm, ["outcome", "loss", "metric", "N", "llm_risk", "llm_se", "metric_value", "metric_ci_low",
                           "metric_ci_high", "llm_unanswered", "source"]), ""]
    shown = curve[["outcome", "comparator", "n", "K", "risk", "ci_low", "ci_high", "variance_rule", "excess_risk",
                   "excess_ci_low", "rejected"]]
    lines += ["Error curves (pointwise two-sided bands; `excess_ci_low` is the one-sided lower end for R(n) − R_LLM, "
              "Remark 3.1; `variance_rule`: fixed_n = Theorem 4.2 when K ≥ 20 blocks, fixed_K = Corollary B.1):", "",
              to_markdown(shown, list(shown.columns)), "",
              f"![ESS error curves]({figures}/ess_curve.png)", "",
              "Source: `results/ess/ess.csv`, `results/ess/curve.csv`, `results/ess/llm.csv`; configuration "
              "`results/ess/run_config.json`.", ""]
    return lines


def figure(tables: dict[str, pd.DataFrame], path: Path) -> Path:
    """One panel per outcome: each comparator's curve (metric scale) with its band, the LLM's line and band,
    the plug-in ESS (dotted) and the one-sided lower bound (dashed) marked."""
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
            if not np.isnan(row["ess_plugin"]):
                ax.axvline(row["ess_plugin"], color=colour, linestyle=":", linewidth=1,
                           label=f"{comparator}: plug-in {int(row['ess_plugin'])}")
        ax.axhline(line["metric_value"], color="black", label="LLM")
        ax.axhspan(line["metric_ci_low"], line["metric_ci_high"], color="grey", alpha=0.2)
        ax.set_xscale("log")
        ax.set_xlabel("training size n")
        ax.set_ylabel(line["metric"])
        ax.set_title(name)
        ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)
    return path
