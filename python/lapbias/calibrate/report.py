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
    vs planted. Right: beta_3 of the detection regression on arm 0 + arm k, all pre-cutoff pairs and the
    post-cutoff placebo, with the regressions' 95% intervals."""
    from ..report import figures  # noqa: F401  (selects the Agg backend)
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for offset, (model, color) in zip((-0.12, 0.12), (("base", "tab:blue"), ("planted", "tab:red"))):
        part = lap[(lap["model"] == model) & (lap["arm"] != "exposed_vs_unexposed")]
        x = range(len(part))
        left.errorbar([i + offset for i in x], part["lap_mean"],
                      yerr=[part["lap_mean"] - part["lap_ci_low"], part["lap_ci_high"] - part["lap_mean"]],
                      fmt="o", color=color, capsize=3, label=model)
        left.set_xticks(list(x), [f"exposure {a}" if a != "post" else "post-cutoff\n(never exposed)"
                                  for a in part["arm"]])
        part = beta3[(beta3["model"] == model)].dropna(subset=["coef"])
        xb = range(len(part))
        right.errorbar([i + offset for i in xb], part["coef"],
                       yerr=[part["coef"] - part["ci_low"], part["ci_high"] - part["coef"]],
                       fmt="s", color=color, capsize=3, label=model)
        right.set_xticks(list(xb), [s.replace("arm0+arm", "arm 0 +\narm ").replace("_", "\n") for s in part["sample"]])
    left.set_ylabel("recall LAP = P(up) + P(down)")
    left.set_title("LAP by exposure (mean, 95% CI)")
    right.axhline(0, color="grey", lw=0.8)
    right.set_ylabel("beta_3 (mu_hat x LAP)")
    right.set_title("Detection beta_3 by exposure arm (95% CI)")
    for axes in (left, right):
        axes.legend()
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
    plt.close(fig)
    return path


def _fmt(value, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def section(results: str | Path, tables: dict[str, pd.DataFrame] | None = None,
            training: dict | None = None) -> list[str]:
    """The "Self-validation" section of REPORT.md: from `tables` and `training` when given, else from
    results/calibration/ when `lapbias calibrate` has run there (else nothing)."""
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
        f"for randomly drawn pre-cutoff (entity, target_date) pairs at exposures {settings.get('exposures')} "
        f"(arm 0 = never mentioned; every arm the same number of training tokens, neutral filler for the rest: "
        f"`results/calibration/corpus.csv`), then ran the unchanged protocol on the base and on the planted model "
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
                    ["model", "arm", "N", "lap_mean", "lap_ci_low", "lap_ci_high", "lap_auc_vs_arm0", "mink_mean",
                     "mink_auc_vs_arm0", "p_memorized_mean", "p_memorized_auc_vs_arm0", "ud_agreement",
                     "forecast_hit_rate"]), "",
        "Detection beta_3 by sample (arm 0 + arm k: the dose-response; `post_placebo`: never-exposed post-cutoff "
        "pairs):", "",
        to_markdown(beta3, ["model", "sample", "coef", "se", "p_one_sided", "ci_low", "ci_high", "N"]), "",
        "![LAP and beta_3 by exposure](figures/calibration.png)", "",
        *interpretation(lap, beta3, verdicts), "",
        "Source: `results/calibration/*.csv`; per-model runs under "
        f"`{settings.get('work_dir', 'data/derived/calibration')}/{{base,planted}}/` (each with its own REPORT.md).",
        "",
    ]
    return lines


def interpretation(lap: pd.DataFrame, beta3: pd.DataFrame, verdicts: pd.DataFrame) -> list[str]:
    """What the numbers say, in the terms of the issue's expectations (each a measured comparison)."""
    out = []
    planted = lap[(lap["model"] == "planted") & ~lap["arm"].isin(["exposed_vs_unexposed", "post"])]
    base = lap[(lap["model"] == "base") & ~lap["arm"].isin(["exposed_vs_unexposed", "post"])]
    if len(planted):
        rises = planted.sort_values("exposure")["lap_mean"].is_monotonic_increasing
        out.append(f"- Recall LAP on the planted model by exposure: "
                   + ", ".join(f"{a}: {m:.3f}" for a, m in zip(planted["arm"], planted["lap_mean"]))
                   + (" — rises with exposure." if rises else " — not monotone in exposure."))
        top = planted.sort_values("exposure").iloc[-1]
        top_base = base[base["arm"] == top["arm"]]
        hit_base = float(top_base["forecast_hit_rate"].iloc[0]) if len(top_base) else math.nan
        out.append(f"- Transfer to the forecast prompt: at exposure {top['arm']} the planted model's forecasts match "
                   f"the memorized direction in {top['forecast_hit_rate']:.0%} of rows (base model "
                   f"{hit_base:.0%}); recall agreement (U − D × direction) {top['ud_agreement']:+.3f}.")
    v = verdicts.set_index("model")
    out.append(f"- Verdicts: base **{v.loc['base', 'verdict']}**, planted **{v.loc['planted', 'verdict']}**; placebo "
               f"{'passes' if v.loc['base', 'placebo_passes'] else 'fails'} on the base and "
               f"{'passes' if v.loc['planted', 'placebo_passes'] else 'fails'} on the planted model.")
    return out
