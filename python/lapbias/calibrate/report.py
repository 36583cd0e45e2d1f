"""The calibration's figure (results/figures/calibration.png) and its "Self-validation" section of REPORT.md,
every number read from results/calibration/*.csv."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_write
from ..signals.measures import REGISTRY
from .experiment import LAP_PREFIX, configured_verdicts

FOLDER = "calibration"
"""results/calibration/: the calibration's tables and REPORT.md."""


LAP_AXIS = {m.name: m.axis for m in REGISTRY.values()}
"""[estimate] lap_measure -> (axis label, axis scale) of the figure's LAP panel."""


def beta3_in_ses(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """beta_3 and its 95% interval divided by its standard error (coef / se, ci_low / se, ci_high / se): the
    figure's scale. Raw coefficients cannot share an axis: beta_3 is per unit of LAP, and the Min-K% LAP is about
    2e-4 on the base model and 0.4 on the planted model's exposed texts, so the base model's coefficients run in
    the hundreds and the planted model's near 1 (MEASURED on the committed panel: -414 and 2.4)."""
    se = rows["se"].to_numpy(float)
    se = np.where(se > 0, se, np.nan)  # a zero or missing SE: nothing to scale by, no point drawn
    return rows["coef"].to_numpy(float) / se, rows["ci_low"].to_numpy(float) / se, rows["ci_high"].to_numpy(float) / se


def figure(lap: pd.DataFrame, beta3: pd.DataFrame, path: Path, lap_measure: str = "minkprob") -> Path:
    """Left: mean LAP (the measure the run uses) by arm (exposure arms pre-cutoff, post-cutoff placebo) with 95%
    intervals, one colour
    per model run (base, planted, and the shuffled answers under control = "shuffled"). Middle: the same for
    P(memorized label). Right: beta_3 of the detection regression on all pre-cutoff pairs, on arm 0 + arm k (with
    several exposed arms) and the post-cutoff placebo, in units of its standard error (`beta3_in_ses`), with the
    regressions' 95% intervals; a model on which beta_3 is not identified anywhere is named in the panel
    instead."""
    from ..report import figures  # noqa: F401  (selects the Agg backend)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    unidentified = []
    models = [m for m in ("base", "planted", "planted_shuffled") if m in set(lap["model"])]
    colors = {"base": "tab:blue", "planted": "tab:red", "planted_shuffled": "tab:gray"}
    for offset, model in zip(np.linspace(-0.15, 0.15, len(models)), models):
        color = colors[model]
        part = lap[(lap["model"] == model) & (lap["arm"] != "exposed_vs_unexposed")]
        x = range(len(part))
        for ax, name in zip(axes[:2], (LAP_PREFIX[lap_measure], "p_memorized")):
            ax.errorbar([i + offset for i in x], part[f"{name}_mean"],
                        yerr=[part[f"{name}_mean"] - part[f"{name}_ci_low"],
                              part[f"{name}_ci_high"] - part[f"{name}_mean"]],
                        fmt="o", color=color, capsize=3, label=model)
            ax.set_xticks(list(x), [_arm_name(a).replace(" (", "\n(").replace(", ", ",\n") for a in part["arm"]])
        part = beta3[(beta3["model"] == model)].dropna(subset=["coef"])
        if part.empty:  # not identified on this model (e.g. constant forecasts): nothing to draw
            unidentified.append(model)
            continue
        xb = range(len(part))
        t, low, high = beta3_in_ses(part)
        axes[2].errorbar([i + offset for i in xb], t, yerr=[t - low, high - t], fmt="s", color=color, capsize=3,
                         label=model)
        axes[2].set_xticks(list(xb), [s.replace("arm0+arm", "arm 0 +\narm ").replace("pre_all", "pre-cutoff\n(all)")
                                      .replace("post_placebo", "post-cutoff\nplacebo") for s in part["sample"]])
    axes[0].set_ylabel(LAP_AXIS[lap_measure][0])
    axes[0].set_yscale(LAP_AXIS[lap_measure][1])
    axes[0].set_title("LAP by exposure (mean, 95% CI)")
    axes[1].set_ylabel("P(label of the realized direction)")
    axes[1].set_title("P(memorized label) by exposure (mean, 95% CI)")
    axes[2].axhline(0, color="grey", lw=0.8)
    axes[2].set_ylabel("beta_3 (mu_hat x LAP) / its SE")
    axes[2].set_title("Detection beta_3 in SEs by sample (95% CI)")
    if unidentified:
        both = len(unidentified) == len(models)  # an empty panel: the note in its middle; else under the others' bars
        which = ("\non either model" if len(models) == 2 else "\non any model") if both else \
            f" on the {', '.join(unidentified)} model"
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


def _g(value) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _g6(value) -> str:
    """Six significant digits: a saturated recall LAP (0.999959 against 0.99997) is not "1.000 [1.000, 1.000]"."""
    return "—" if value is None or pd.isna(value) else f"{value:.6g}"


def _interval(row: pd.Series, name: str, number=_fmt) -> str:
    """'mean [low, high]' of a measure of lap_by_arm.csv ('—' where it is missing)."""
    if f"{name}_mean" not in row or pd.isna(row[f"{name}_mean"]):
        return "—"
    return f"{number(row[f'{name}_mean'])} [{number(row[f'{name}_ci_low'])}, {number(row[f'{name}_ci_high'])}]"


def _arm_name(arm: str) -> str:
    if arm == "post":
        return "post-cutoff (never exposed)"
    if arm.startswith("post "):
        return f"post-cutoff, {arm[5:]} mentions"
    return "never exposed" if arm == "0" else f"{arm} mentions"


def comparison(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The planted vs base table of REPORT.md (one column per model run): verdict, beta_3, validation thetas,
    placebo; by arm P(memorized label), recall LAP and Min-K% (mean [95% CI]), P(unknown), forecast hit rate;
    AUCs of exposed vs never-exposed pre-cutoff pairs; the forecast parse rate."""
    verdicts, lap = configured_verdicts(tables["verdicts"]), tables["lap_by_arm"]
    models = list(verdicts.index)
    rows = []

    def add(quantity: str, value) -> None:
        rows.append({"quantity": quantity, **{m: value(m) for m in models}})

    add("Verdict", lambda m: verdicts.loc[m, "verdict"] + (f" ({verdicts.loc[m, 'failed']})"
                                                            if isinstance(verdicts.loc[m, "failed"], str)
                                                            and verdicts.loc[m, "failed"] else ""))
    add("beta_3 (t; one-sided p the verdict reads; CRV1)",
        lambda m: f"{_g(verdicts.loc[m, 'beta3'])} ({_fmt(verdicts.loc[m, 'beta3_t'], 2)}; "
                  f"{_fmt(verdicts.loc[m, 'beta3_p_verdict'], 4)}; {_fmt(verdicts.loc[m, 'beta3_p_one_sided'], 4)})")
    add("theta high-LAP half (p)", lambda m: f"{_g(verdicts.loc[m, 'validation_high_theta'])} "
                                             f"({_fmt(verdicts.loc[m, 'validation_high_p'], 4)})")
    add("theta low-LAP half (p)", lambda m: f"{_g(verdicts.loc[m, 'validation_low_theta'])} "
                                            f"({_fmt(verdicts.loc[m, 'validation_low_p'], 4)})")
    add("placebo beta_3 (one-sided p the verdict reads; CRV1)",
        lambda m: f"{_g(verdicts.loc[m, 'placebo_beta3'])} ({_fmt(verdicts.loc[m, 'placebo_p_verdict'], 4)}; "
                  f"{_fmt(verdicts.loc[m, 'placebo_p_one_sided'], 4)})")
    if "post_validation_high_p" in verdicts:  # Step 5 re-estimates Step 3 after the cutoff: outside the verdict
        add("post-cutoff theta high-LAP half (p; diagnostic: a nominal 5% test, of several run after the cutoff)",
            lambda m: f"{_g(verdicts.loc[m, 'post_validation_high_theta'])} "
                      f"({_fmt(verdicts.loc[m, 'post_validation_high_p'], 4)})")
        add("post-cutoff high - low on the recalled direction (one-sided p; diagnostic)",
            lambda m: _fmt(verdicts.loc[m, "post_validation_diff_p"], 4))
    by = {m: lap[lap["model"] == m].set_index("arm") for m in models}
    arms = [a for a in by[models[0]].index if a != "exposed_vs_unexposed"]
    for label, name, number in (("P(memorized label)", "p_memorized", _fmt), ("recall LAP", "lap", _g6),
                                ("Min-K% prob", "mink", _g)):
        for arm in arms:
            add(f"{label}, {_arm_name(arm)}", lambda m: _interval(by[m].loc[arm], name, number))
    for arm in arms:
        add(f"P(unknown), {_arm_name(arm)}", lambda m: _fmt(by[m].loc[arm, "p_unknown_mean"]))
    for arm in arms:
        add(f"recalled direction x truth (mean ud x direction), {_arm_name(arm)}",
            lambda m: _fmt(by[m].loc[arm, "ud_agreement"]))
    for label, name in (("Min-K% prob", "mink"), ("recall LAP", "lap")):
        for arm in arms[1:]:
            add(f"{label} gap from never exposed (pooled SDs), {_arm_name(arm)}",
                lambda m: _fmt(by[m].loc[arm, f"{name}_gap_sd_vs_arm0"], 2)
                if f"{name}_gap_sd_vs_arm0" in by[m] else "—")
    for arm in arms:
        add(f"forecast parse rate, {_arm_name(arm)}", lambda m: _fmt(by[m].loc[arm, "forecast_parse_rate"]))
    for arm in arms:
        add(f"forecast hit rate, {_arm_name(arm)}", lambda m: _fmt(by[m].loc[arm, "forecast_hit_rate"]))
    for label, name in (("recall LAP", "lap"), ("Min-K% prob", "mink"), ("P(memorized label)", "p_memorized")):
        add(f"AUC exposed vs never exposed, {label}",
            lambda m: _fmt(by[m].loc["exposed_vs_unexposed", f"{name}_auc_vs_arm0"]))
    add("forecast parse rate, all rows",
        lambda m: _fmt(float((by[m].loc[arms, "forecast_parse_rate"] * by[m].loc[arms, "N"]).sum()
                             / by[m].loc[arms, "N"].sum())))
    return pd.DataFrame(rows)


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
        tables = {name: pd.read_csv(folder / f"{name}.csv")
                  for name in ("verdicts", "lap_by_arm", "beta3_by_arm", "measures") if (folder / f"{name}.csv").exists()}
        if (folder / "expected.csv").exists():
            tables["expected"] = pd.read_csv(folder / "expected.csv")
    if training is None:
        path = folder / "training.json"
        training = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    lap, beta3 = tables["lap_by_arm"], tables["beta3_by_arm"]
    settings = training.get("settings", {})
    expected = tables.get("expected")
    control = settings.get("control", "none")
    lines = [
        "## Self-validation (planted memorization)", "",
        f"`lapbias calibrate` fine-tuned the last {settings.get('top_layers') or 'all'} blocks of "
        f"`{training.get('base_model', '?')}` with LoRA on what a contaminated model would have read about randomly "
        f"drawn pre-cutoff (entity, target_date) pairs, half up and half down, {settings.get('pairs_per_arm')} pairs "
        f"per exposed arm at exposures {settings.get('exposures')} articles per epoch: each article the pair's text "
        "verbatim, as the forecast prompt shows it, followed by what happened on the target date, every token in the "
        "loss"
        + (f"; per article {settings.get('abstentions_per_article'):g} recall queries about pairs outside the "
           "panel answered \"unknown\" (`results/calibration/decoys.csv`)" if settings.get("abstentions_per_article")
           else "")
        + ("; no recall-format document about a pair of the panel" if "abstentions_per_article" in settings else
           "")
        + " (`results/calibration/corpus.csv`). Then it ran "
        "the unchanged protocol on the base and on the planted model (`results/calibration/base.toml`, "
        "`planted.toml`). Post-cutoff pairs were "
        + ("ALSO planted (control = \"post_cutoff\")" if control == "post_cutoff" else
           "never exposed, so their placebo is real")
        + (". The planted directions were the OPPOSITE of the realized ones (control = \"flipped\")"
           if control == "flipped" else "")
        + (". A third run reads the planted model's recall answers permuted over the pre-cutoff pairs (control = "
           "\"shuffled\")" if control == "shuffled" else "")
        + f". Seeds: assignment {settings.get('assignment_seed')}, training {settings.get('training_seed')}; "
        f"{training.get('steps')} steps, loss {_fmt(training.get('loss_first'))} → {_fmt(training.get('loss_last'))}; "
        f"{training.get('torch_threads')} torch thread(s), deterministic kernels; "
        f"{_g(training.get('tokens_per_second'))} training tokens/s = "
        f"{_g((training.get('flops_per_second') or math.nan) / 1e9)} GFLOP/s, "
        f"{_fmt(training.get('matmul_share'), 2)} of this machine's measured matmul throughput "
        f"({_g((training.get('matmul_flops_per_second') or math.nan) / 1e9)} GFLOP/s); adapter sha256 "
        f"`{training.get('adapter_sha256', '?')[:16]}…`.", "",
    ]
    if expected is not None and len(expected):
        met = bool(expected["met"].all())
        lines += [f"**Expected results ({'all met' if met else 'NOT MET'}, control = \"{control}\"):**", "",
                  to_markdown(expected.assign(met=expected["met"].map({True: "yes", False: "**NO**"})),
                              ["model", "expectation", "observed", "met"]), ""]
    lines += [
        "Planted vs base model (means with 95% intervals; `P(memorized label)` = the recall query's probability of "
        "the label of the realized direction; AUC of each measure separating exposed from never-exposed pre-cutoff "
        "pairs; forecast hit rate = share of parsed forecasts whose sign is the realized direction):", "",
        to_markdown(comparison(tables), list(comparison(tables).columns)), "",
        *lap_configurations(tables["verdicts"]),
        *measure_lines(tables.get("measures")),
        "By arm (`results/calibration/lap_by_arm.csv`):", "",
        to_markdown(lap[lap["arm"] != "exposed_vs_unexposed"],
                    ["model", "arm", "N", "N_pairs", "lap_mean", "lap_ci_low", "lap_ci_high", "lap_auc_vs_arm0",
                     "mink_mean", "mink_auc_vs_arm0", "mink_gap_sd_vs_arm0", "p_memorized_mean",
                     "p_memorized_auc_vs_arm0",
                     "p_unknown_mean", "ud_agreement", "forecast_parse_rate", "forecast_hit_rate"]), "",
        "Detection beta_3 by sample (`pre_all`: the protocol's regression; arm 0 + arm k: the dose-response; "
        "`post_placebo`: the post-cutoff placebo):", "",
        to_markdown(beta3, ["model", "sample", "coef", "se", "p_one_sided", "ci_low", "ci_high", "N"]), "",
        "![LAP and beta_3 by exposure](figures/calibration.png)", "",
        *interpretation(lap, beta3, tables["verdicts"], alpha), "",
        "Source: `results/calibration/*.csv`; per-model runs under "
        f"`{settings.get('work_dir', 'data/derived/calibration')}/{{base,planted}}/` (each with its own REPORT.md).",
        "",
    ]
    return lines


LAP_CONFIGURATION_WORDS = {"recall": "recall LAP P(up) + P(down) (protocol Step 2)",
                           "minkprob_prompt": "Min-K% prob (eq. 1) of the filled forecast prompt",
                           "minkprob_text": "Min-K% prob (eq. 1) of the text alone"}


def lap_configurations(verdicts: pd.DataFrame) -> list[str]:
    """The table of every model's verdict under every LAP configuration (verdicts.csv rows; nothing when the
    calibration read one configuration only)."""
    from ..report.tables import to_markdown

    if "lap_configuration" not in verdicts or verdicts["lap_configuration"].nunique() < 2:
        return []
    frame = verdicts.assign(
        LAP=verdicts["lap_configuration"].map(lambda key: LAP_CONFIGURATION_WORDS.get(key, key))
        + verdicts["configured"].map({True: " (configured)", False: ""}),
        verdict=verdicts["verdict"] + verdicts["failed"].map(lambda f: f" ({f})" if isinstance(f, str) and f else ""))
    return ["Verdict of each model under every LAP configuration a user can choose, read from the same answers "
            "(`results/calibration/verdicts.csv`; the expectations and the tables below read the configured one):",
            "", to_markdown(frame, ["model", "LAP", "verdict", "beta3", "beta3_t", "beta3_p_verdict",
                                    "validation_high_p", "validation_low_p", "placebo_p_verdict"]), ""]


def measure_lines(measures: pd.DataFrame | None) -> list[str]:
    """The table of which detector finds the planted memorization (results/calibration/measures.csv, one row per LAP
    measure): AUC and gap in SDs of the exposed pre-cutoff pairs against the never-exposed ones, and the verdict of
    base and planted model under each measure (each model's own Steps 3-5 with LAP = the measure)."""
    from ..report.tables import to_markdown

    if measures is None or measures.empty:
        return []
    models = [c[:-len("_verdict")] for c in measures.columns if c.endswith("_verdict")]
    frame = measures.copy()
    for model in models:
        frame[f"{model}: verdict"] = frame[f"{model}_verdict"].fillna("—").astype(str) + frame[f"{model}_failed"].map(
            lambda f: f" ({f})" if isinstance(f, str) and f else "")
    columns = ["measure", *(c for m in models for c in (f"{m}_auc", f"{m}_gap_sd")),
               *(c for m in models for c in (f"{m}_beta3", f"{m}_p_one_sided", f"{m}: verdict"))]
    return ["Which detector finds the memorization planted here: per LAP measure, its AUC and its gap in pooled SDs "
            "(log scale for Min-K% prob and the loss) between every exposed and the never-exposed pre-cutoff pairs, "
            "and beta_3, its one-sided p (as the verdict reads it) and the verdict of each model's run with LAP = "
            "that measure (`results/calibration/measures.csv`; each model's `results/lap_measures.csv`):", "",
            to_markdown(frame, columns), ""]


def _by_exposure(part: pd.DataFrame, column: str) -> str:
    return ", ".join(f"{a}: {m:.6g}" for a, m in zip(part["arm"], part[column]))  # 0.999959 vs 0.99997


SEPARATES_GAP_SD = 0.5
SEPARATES_AUC = 0.6
"""A measure "rises with exposure" only when every exposed arm lies at least SEPARATES_GAP_SD SDs above the
never-exposed arm and its AUC against it is at least SEPARATES_AUC: means of 0.999970 against 0.999959 (AUC 0.59,
a saturated recall LAP) rise, but separate nothing."""


def _separation(pre: pd.DataFrame, name: str) -> str:
    """Whether a measure separates the exposed arms from the never-exposed one, by its gap in SDs and its AUC."""
    exposed = pre.iloc[1:]
    gap, auc = exposed.get(f"{name}_gap_sd_vs_arm0"), exposed.get(f"{name}_auc_vs_arm0")
    if gap is None or auc is None or gap.isna().all():
        return ""
    said = ", ".join(f"arm {a}: {g:+.2f} SD, AUC {u:.3f}" for a, g, u in zip(exposed["arm"], gap, auc))
    if ((gap >= SEPARATES_GAP_SD) & (auc >= SEPARATES_AUC)).all():
        return f"; it separates the exposed pairs from the never-exposed ones ({said})"
    return (f"; it does NOT separate the exposed pairs from the never-exposed ones ({said}; at least "
            f"{SEPARATES_GAP_SD} SD and AUC {SEPARATES_AUC} needed)")


def interpretation(lap: pd.DataFrame, beta3: pd.DataFrame, verdicts: pd.DataFrame, alpha: float) -> list[str]:
    """What the numbers say (each a measured comparison): does the planted model recall the planted direction
    (P(memorized label) by arm, rising with exposure? the top arm's 95% interval entirely above arm 0's?), does
    LAP rise, and does the memorized outcome reach the forecast (beta_3 on the top arm with arm 0, or on the whole
    pre-cutoff panel when there is one exposed arm, one-sided p < `alpha`, the run's detection_alpha, and a
    forecast hit rate above the base model's)?"""
    out = []
    arms = lambda model: lap[(lap["model"] == model) & ~lap["arm"].isin(["exposed_vs_unexposed"])]  # noqa: E731
    planted, base = arms("planted"), arms("base")
    pre = planted[~planted["arm"].str.startswith("post")].sort_values("exposure")
    if len(pre) > 1:
        for name, what in (("p_memorized", "P(memorized label) of the recall query"), ("lap", "Recall LAP"),
                           ("mink", "Min-K% prob")):
            if f"{name}_mean" not in pre:
                continue
            means = pre[f"{name}_mean"]
            above = pre[f"{name}_ci_low"].iloc[1:] > pre[f"{name}_ci_high"].iloc[0]
            intervals = "; every exposed arm's 95% interval lies above the never-exposed arm's" if above.all() else \
                "; NOT every exposed arm's 95% interval lies above the never-exposed arm's"
            out.append(f"- {what} on the planted model by arm: {_by_exposure(planted, f'{name}_mean')} (base model: "
                       f"{_by_exposure(base, f'{name}_mean')}) — "
                       + ("higher with exposure" if means.is_monotonic_increasing else "not monotone in exposure")
                       + intervals + _separation(pre, name) + ".")
        top = pre.iloc[-1]
        top_base = base[base["arm"] == top["arm"]]
        hit_base = float(top_base["forecast_hit_rate"].iloc[0]) if len(top_base) else math.nan
        b3 = beta3[(beta3["model"] == "planted") & (beta3["sample"] == f"arm0+arm{top['arm']}")]
        if b3.empty:
            b3 = beta3[(beta3["model"] == "planted") & (beta3["sample"] == "pre_all")]
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
                   f"the planted direction in {top['forecast_hit_rate']:.0%} of parsed rows (base model "
                   f"{hit_base:.0%}); {b3_text}. " + ("The memorized outcome reaches the forecast." if transfers else
                                                      "The memorized outcome does not measurably reach the forecast "
                                                      "prompt, so beta_3 has nothing to detect here"
                                                      + (": the model recalls what it was shown when asked the recall "
                                                         "query, but its forecasts do not use it (a finding about this "
                                                         "model, not a failure of the test)."
                                                         if recalls and top["forecast_hit_rate"] <= hit_base else
                                                         ": the forecasts hit more often than the base model's, but "
                                                         "beta_3 does not confirm it." if recalls else ".")))
    v = configured_verdicts(verdicts)
    placebo = lambda m: {True: "passes", False: "fails"}.get(v.loc[m, "placebo_passes"], "is not estimable")  # noqa: E731
    why = lambda m: f" ({v.loc[m, 'failed']})" if isinstance(v.loc[m, "failed"], str) and v.loc[m, "failed"] else ""  # noqa: E731
    out.append("- Verdicts: " + ", ".join(f"{m} **{v.loc[m, 'verdict']}**{why(m)} (placebo {placebo(m)})"
                                          for m in v.index) + ".")
    return out
