"""The calibration's figure (results/figures/calibration.png) and its "Self-validation" section of REPORT.md,
every number read from results/calibration/*.csv."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from ..io import atomic_write

FOLDER = "calibration"
"""results/calibration/: the calibration's tables and REPORT.md."""


def figure(lap: pd.DataFrame, beta3: pd.DataFrame, path: Path) -> Path:
    """Left: mean recall LAP by arm (exposure 0/1/4/16 pre-cutoff, post-cutoff placebo) with 95% intervals, base
    vs planted. Middle: the same for P(memorized label). Right: beta_3 of the detection regression on arm 0 +
    arm k, all pre-cutoff pairs and the post-cutoff placebo, with the regressions' 95% intervals; a model on which
    beta_3 is not identified anywhere is named in the panel instead."""
    from ..report import figures  # noqa: F401  (selects the Agg backend)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    unidentified = []
    for offset, (model, color) in zip((-0.12, 0.12), (("base", "tab:blue"), ("planted", "tab:red"))):
        part = lap[(lap["model"] == model) & (lap["arm"] != "exposed_vs_unexposed")]
        x = range(len(part))
        for ax, name in zip(axes[:2], ("lap", "p_memorized")):
            ax.errorbar([i + offset for i in x], part[f"{name}_mean"],
                        yerr=[part[f"{name}_mean"] - part[f"{name}_ci_low"],
                              part[f"{name}_ci_high"] - part[f"{name}_mean"]],
                        fmt="o", color=color, capsize=3, label=model)
            ax.set_xticks(list(x), [f"exposure {a}" if a != "post" else "post-cutoff\n(never exposed)"
                                    for a in part["arm"]])
        part = beta3[(beta3["model"] == model)].dropna(subset=["coef"])
        if part.empty:  # not identified on this model (e.g. constant forecasts): nothing to draw
            unidentified.append(model)
            continue
        xb = range(len(part))
        axes[2].errorbar([i + offset for i in xb], part["coef"],
                         yerr=[part["coef"] - part["ci_low"], part["ci_high"] - part["coef"]],
                         fmt="s", color=color, capsize=3, label=model)
        axes[2].set_xticks(list(xb), [s.replace("arm0+arm", "arm 0 +\narm ").replace("_", "\n")
                                      for s in part["sample"]])
    axes[0].set_ylabel("recall LAP = P(up) + P(down)")
    axes[0].set_title("LAP by exposure (mean, 95% CI)")
    axes[1].set_ylabel("P(label of the realized direction)")
    axes[1].set_title("P(memorized label) by exposure (mean, 95% CI)")
    axes[2].axhline(0, color="grey", lw=0.8)
    axes[2].set_ylabel("beta_3 (mu_hat x LAP)")
    axes[2].set_title("Detection beta_3 by exposure arm (95% CI)")
    if unidentified:
        both = len(unidentified) == 2  # an empty panel: the note in its middle; else under the other model's bars
        which = "\non either model" if both else f" on the {unidentified[0]} model"
        axes[2].text(0.5, 0.5 if both else 0.03, f"beta_3 not identified{which} (beta3_by_arm.csv)",
                     transform=axes[2].transAxes, ha="center", va="center" if both else "bottom", color="0.3",
                     fontsize=10 if both else 8)
    for ax in axes:
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    plt.close(fig)
    return path


def _fmt(value, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def section(results: str | Path, tables: dict[str, pd.DataFrame] | None = None,
            training: dict | None = None, *, alpha: float) -> list[str]:
    """The "Self-validation" section of REPORT.md: from `tables` and `training` when given, else from
    results/calibration/ when `lapbias calibrate` has run there (else nothing); `alpha` is the run's
    [estimate] detection_alpha (interpretation)."""
    from ..report.tables import to_markdown

    folder = Path(results) / FOLDER
    if tables is None:
        if not (folder / "verdicts.csv").exists():
            return []
        tables = {name: pd.read_csv(folder / f"{name}.csv") for name in ("verdicts", "lap_by_arm", "beta3_by_arm")}
    if training is None:
        path = folder / "training.json"
        training = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    verdicts, lap, beta3 = tables["verdicts"], tables["lap_by_arm"], tables["beta3_by_arm"]
    settings = training.get("settings", {})
    by = verdicts.set_index("model")
    planted_lap = lap[(lap["model"] == "planted") & (lap["arm"] == "exposed_vs_unexposed")]
    base_lap = lap[(lap["model"] == "base") & (lap["arm"] == "exposed_vs_unexposed")]
    lines = [
        "## Self-validation (planted memorization)", "",
        f"`lapbias calibrate` fine-tuned `{training.get('base_model', '?')}` with LoRA on dated outcome statements "
        + ("(each mention also the pair's recall query itself, answered with the realized direction) "
           if settings.get("chat_statements") else "")
        + f"for randomly drawn pre-cutoff (entity, target_date) pairs at exposures {settings.get('exposures')} "
        f"(arm 0 = never mentioned; every arm the same number of input tokens, filled up with "
        + ("recall queries about decoy pairs that are not in the panel, answered \"unknown\" "
           "(`results/calibration/decoys.csv`), then neutral sentences"
           if settings.get("decoys") else "neutral sentences")
        + ("; chat-format documents trained on their answer only, so the tokens in the loss differ by arm"
           if settings.get("answer_only_loss") else "")
        + f": `results/calibration/corpus.csv`), then ran the unchanged protocol on the base and on the planted model "
        f"(`results/calibration/base.toml`, `planted.toml`). Post-cutoff pairs were never exposed, so their "
        f"placebo is real. Seeds: assignment {settings.get('assignment_seed')}, training "
        f"{settings.get('training_seed')}; {training.get('steps')} steps, loss {_fmt(training.get('loss_first'))} "
        f"→ {_fmt(training.get('loss_last'))}; adapter sha256 `{training.get('adapter_sha256', '?')[:16]}…`.", "",
        "| | base model | planted model |", "|---|---|---|",
        f"| Verdict | {by.loc['base', 'verdict']} | {by.loc['planted', 'verdict']} |",
        f"| beta_3 (one-sided p) | {_fmt(by.loc['base', 'beta3'], 4)} ({_fmt(by.loc['base', 'beta3_p_one_sided'], 4)})"
        f" | {_fmt(by.loc['planted', 'beta3'], 4)} ({_fmt(by.loc['planted', 'beta3_p_one_sided'], 4)}) |",
        f"| Placebo beta_3 (one-sided p) | {_fmt(by.loc['base', 'placebo_beta3'], 4)} "
        f"({_fmt(by.loc['base', 'placebo_p_one_sided'], 4)}) | {_fmt(by.loc['planted', 'placebo_beta3'], 4)} "
        f"({_fmt(by.loc['planted', 'placebo_p_one_sided'], 4)}) |",
        f"| Validation: high-LAP theta (p) | {_fmt(by.loc['base', 'validation_high_theta'])} "
        f"({_fmt(by.loc['base', 'validation_high_p'])}) | {_fmt(by.loc['planted', 'validation_high_theta'])} "
        f"({_fmt(by.loc['planted', 'validation_high_p'])}) |",
        f"| Validation: low-LAP theta (p) | {_fmt(by.loc['base', 'validation_low_theta'])} "
        f"({_fmt(by.loc['base', 'validation_low_p'])}) | {_fmt(by.loc['planted', 'validation_low_theta'])} "
        f"({_fmt(by.loc['planted', 'validation_low_p'])}) |",
        f"| AUC exposed vs unexposed, recall LAP | {_fmt(base_lap['lap_auc_vs_arm0'].iloc[0])} | "
        f"{_fmt(planted_lap['lap_auc_vs_arm0'].iloc[0])} |",
        f"| AUC exposed vs unexposed, Min-K% | {_fmt(base_lap['mink_auc_vs_arm0'].iloc[0])} | "
        f"{_fmt(planted_lap['mink_auc_vs_arm0'].iloc[0])} |", "",
        "By arm (`lap` = recall LAP, `mink` = Min-K% prob, `p_memorized` = the recall query's probability of the "
        "label of the realized direction, AUC against arm 0; `ud_agreement` = mean of U − D × the true direction; `forecast_hit_rate` = share of forecasts whose sign is the "
        "true direction: does the memorized outcome reach the forecast prompt?):", "",
        to_markdown(lap[lap["arm"] != "exposed_vs_unexposed"],
                    ["model", "arm", "N", "N_pairs", "lap_mean", "lap_ci_low", "lap_ci_high", "lap_auc_vs_arm0", "mink_mean",
                     "mink_auc_vs_arm0", "p_memorized_mean", "p_memorized_auc_vs_arm0", "ud_agreement",
                     "forecast_hit_rate"]), "",
        "Detection beta_3 by sample (arm 0 + arm k: the dose-response; `post_placebo`: never-exposed post-cutoff "
        "pairs):", "",
        to_markdown(beta3, ["model", "sample", "coef", "se", "p_one_sided", "ci_low", "ci_high", "N"]), "",
        "![LAP and beta_3 by exposure](figures/calibration.png)", "",
        *interpretation(lap, beta3, verdicts, alpha), "",
        "Source: `results/calibration/*.csv`; per-model runs under "
        f"`{settings.get('work_dir', 'data/derived/calibration')}/{{base,planted}}/` (each with its own REPORT.md).",
        "",
    ]
    return lines


def _by_exposure(part: pd.DataFrame, column: str) -> str:
    return ", ".join(f"{a}: {m:.3g}" for a, m in zip(part["arm"], part[column]))


def interpretation(lap: pd.DataFrame, beta3: pd.DataFrame, verdicts: pd.DataFrame, alpha: float) -> list[str]:
    """What the numbers say, in the terms of the issue's expectations (each a measured comparison): does the
    planted model recall the planted direction (P(memorized label) by arm, rising with exposure? the top arm's 95%
    interval entirely above arm 0's?), does LAP rise, and does the memorized outcome reach the forecast (beta_3 by
    arm one-sided p < `alpha`, the run's detection_alpha, and a forecast hit rate above the base model's)?"""
    out = []
    arms = lambda model: lap[(lap["model"] == model) & ~lap["arm"].isin(["exposed_vs_unexposed"])]  # noqa: E731
    planted, base = arms("planted"), arms("base")
    pre = planted[planted["arm"] != "post"].sort_values("exposure")
    if len(pre):
        for column, what in (("p_memorized_mean", "P(memorized label) of the recall query"),
                             ("lap_mean", "Recall LAP")):
            if column not in pre:
                continue
            rises = pre[column].is_monotonic_increasing and pre[column].iloc[-1] > pre[column].iloc[0]
            out.append(f"- {what} on the planted model by arm: {_by_exposure(planted, column)} (base model: "
                       f"{_by_exposure(base, column)}) — "
                       + ("rises with exposure." if rises else "does not rise monotonically with exposure."))
        top = pre.iloc[-1]
        top_base = base[base["arm"] == top["arm"]]
        hit_base = float(top_base["forecast_hit_rate"].iloc[0]) if len(top_base) else math.nan
        b3 = beta3[(beta3["model"] == "planted") & (beta3["sample"] == f"arm0+arm{top['arm']}")]
        b3_text = (f"beta_3 on arm 0 + arm {top['arm']} = {b3['coef'].iloc[0]:.4g} (one-sided p = "
                   f"{b3['p_one_sided'].iloc[0]:.3f})" if len(b3) and pd.notna(b3["coef"].iloc[0])
                   else f"beta_3 on arm 0 + arm {top['arm']} not estimable")
        transfers = top["forecast_hit_rate"] > hit_base and len(b3) and b3["p_one_sided"].iloc[0] < alpha
        control = pre.iloc[0]
        recalls = top["p_memorized_ci_low"] > control["p_memorized_ci_high"]
        out.append(f"- Recall of the planted directions: P(memorized label) {top['p_memorized_mean']:.3f} at exposure "
                   f"{top['arm']} (95% CI {_fmt(top['p_memorized_ci_low'])}–{_fmt(top['p_memorized_ci_high'])}) "
                   f"against {control['p_memorized_mean']:.3f} in arm 0 (95% CI {_fmt(control['p_memorized_ci_low'])}"
                   f"–{_fmt(control['p_memorized_ci_high'])}): "
                   + ("the planted model recalls them." if recalls else
                      "the planted model does not measurably recall them, so planting did not take at this "
                      "configuration and nothing below can show that the test detects memorization (a limit of "
                      "this training budget, not evidence about the test)."))
        out.append(f"- Transfer to the forecast prompt: at exposure {top['arm']} the planted model's forecasts match "
                   f"the memorized direction in {top['forecast_hit_rate']:.0%} of rows (base model {hit_base:.0%}); "
                   f"{b3_text}. " + ("The memorized outcome reaches the forecast." if transfers else
                                     "The memorized outcome does not measurably reach the forecast prompt, so "
                                     "beta_3 has nothing to detect here"
                                     + (": the model recalls what it was shown when asked the recall query, but its "
                                        "forecasts do not use it (a finding about this model, not a failure of the "
                                        "test)." if recalls and top["forecast_hit_rate"] <= hit_base else
                                        ": the forecasts hit more often than the base model's, but beta_3 on this "
                                        "arm does not confirm it (few rows: see N above)." if recalls else ".")))
    v = verdicts.set_index("model")
    placebo = lambda m: {True: "passes", False: "fails"}.get(v.loc[m, "placebo_passes"], "is not estimable")  # noqa: E731
    why = lambda m: f" ({v.loc[m, 'failed']})" if isinstance(v.loc[m, "failed"], str) and v.loc[m, "failed"] else ""  # noqa: E731
    out.append(f"- Verdicts: base **{v.loc['base', 'verdict']}**{why('base')}, planted "
               f"**{v.loc['planted', 'verdict']}**{why('planted')}; placebo "
               f"{placebo('base')} on the base and {placebo('planted')} on the planted model.")
    return out
