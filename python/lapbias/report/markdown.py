"""results/REPORT.md: the protocol's six sections ("Final report"), every number read from results/*.csv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import RunConfig
from . import units
from .tables import to_markdown
from .verdict import Verdict

POST_LAP_STAYS_HIGH = 0.8
"""Post-cutoff LAP "stays high" (protocol Step 2: flag prominently) when its mean is at least 80% of the
pre-cutoff mean."""
COEF_COLUMNS = ["model", "term", "coef", "se", "t", "p", "p_one_sided", "N", "N_clust"]


def _section(title: str, body: list[str], approximated: str = "") -> list[str]:
    """A report section; with the sampling fallback in use its heading says "(approximated)"."""
    return [f"## {title}" + (" (approximated)" if approximated else ""), "", *body, ""]


def _quoted(tables: dict[str, pd.DataFrame], name: str, columns: list[str] | None = None,
            config: RunConfig | None = None) -> list[str]:
    """A results table as Markdown; a coefficient table (with `config`) carries its note (clustering, LAP
    measure and units, report/units.py)."""
    table = tables.get(name)
    if table is None:
        return [f"_No `results/{name}.csv`: not estimated (see the estimation notes)._"]
    if table.empty:
        return [f"_`results/{name}.csv` is empty: the regression could not be estimated (see the estimation notes)._"]
    columns = columns or [c for c in table.columns if c != "approximated"]
    # Which engine produced an estimated table: its `engine` column (a bootstrap.csv without one is the Python
    # engine's: estimate/stata.py writes engine = stata into the bootstrap summary it reads back).
    engine = ", ".join(sorted(set(table["engine"].dropna().astype(str)))) if "engine" in table.columns else (
        "python" if name == "bootstrap" else "")
    return [to_markdown(table, columns), "", *([f"_Note: {units.note(name, config, table)}_", ""] if config else []),
            f"Source: `results/{name}.csv`"
            + (f", LaTeX `results/{name}.tex`" if name in ("validation", "detection", "placebo",
                                                        "placebo_validation") else "")
            + (f"; engine: {engine}." if engine else ".")]


def power_lines(power: pd.DataFrame | None, alpha: float) -> list[str]:
    """beta_3 beside its minimum detectable effect (estimate/power.py) at the one-sided level `alpha` ([estimate]
    detection_alpha), as a share of the standalone LLM effect."""
    if power is None or power.empty:
        return []
    values = dict(zip(power["quantity"], power["value"].astype(float)))

    def share(name: str) -> str:
        return "undefined (b1 ≤ 0 or not estimated)" if pd.isna(values.get(name)) else f"{values[name]:.0%}"

    return [f"**Power.** beta_3 = {values.get('beta3', float('nan')):.4g} (share of the standalone LLM effect per SD "
            f"of LAP: {share('beta3_share')}); minimum detectable beta_3 at {alpha * 100:g}% one-sided with 80% "
            f"power = {values.get('mde_beta3', float('nan')):.4g} (share: {share('mde_share')}; the paper's in-sample "
            f"estimate is 37%). Within-FE SD of LAP = {values.get('sd_lap_within', float('nan')):.4g} "
            f"({share('within_share_lap')} of its SD {values.get('sd_lap', float('nan')):.4g}); standalone LLM "
            f"effect b1 = {values.get('b1_standalone', float('nan')):.4g}. Source: `results/power.csv`."]


def lap_flags(lap_distribution: pd.DataFrame, recall_checks: pd.DataFrame, config: RunConfig) -> list[str]:
    flags = []
    measure = "lap_recall" if config.estimate.lap_measure == "recall" else "lap_mink"
    rows = lap_distribution[lap_distribution["measure"].astype(str).str.split(" ").str[0] == measure]
    means = rows.set_index("sample")["mean"]
    if {"pre", "post"} <= set(means.index) and means["post"] >= POST_LAP_STAYS_HIGH * means["pre"]:
        flags.append(f"**Post-cutoff LAP stays high** (mean {means['post']:.4g} vs {means['pre']:.4g} pre-cutoff, "
                     f"≥ {POST_LAP_STAYS_HIGH:.0%}): the model is guessing rather than abstaining, so LAP measures "
                     "willingness to answer more than memorization.")
    for row in recall_checks.itertuples():
        for label, share in (("up", row.censored_up), ("down", row.censored_down), ("unknown", row.censored_unknown)):
            if share > config.recall.censoring_warning:
                flags.append(f"Heavy censoring ({row.sample}): label '{label}' is outside the top-"
                             f"{config.recall.top_logprobs} log-probs in {share:.0%} of recall queries; its mass is "
                             f"counted as 0{_bound(row.censoring_bound_max)}, so LAP understates recall there.")
    return flags


def _bound(bound: float) -> str:
    """How large a censored label's token could be (recall `censoring_bound`; NaN for sampled answers)."""
    return f" (each of its tokens has probability below {bound:.3g})" if pd.notna(bound) else ""


def _release_gap(config: RunConfig) -> str:
    if not config.study.release_date:
        return ""
    return (f"; release date {config.study.release_date} (post-cutoff = target_date > release date; the rows in "
            "between belong to neither sample, paper Table A.1)")


def _target_dates(config: RunConfig) -> str:
    if not config.data.target_date_from:
        return ""
    return (f" (target dates derived from the text dates: {config.study.horizon} after each text's news session on "
            f"the {config.study.calendar} exchange calendar, a text after the close or on a closed day being news of "
            "the next session)")


def render(config: RunConfig, tables: dict[str, pd.DataFrame], verdict: Verdict, engine: str,
           approximated: str = "") -> str:
    """REPORT.md; `approximated` (approximation.recall_note) labels the report and each section."""
    notes = tables.get("estimation_notes", pd.DataFrame(columns=["model", "kind", "detail"]))
    lines = [
        "# Lookahead-bias test report", "",
        f"Model `{config.model.model_id}` ({config.model.backend} backend); training cutoff {config.study.cutoff} "
        f"(pre-cutoff = target_date ≤ cutoff){_release_gap(config)}; horizon {config.study.horizon}"
        f"{_target_dates(config)}; period fixed "
        f"effect by {config.study.frequency}; LAP measure in the regressions: `{config.estimate.lap_measure}`; "
        "high_lap by "
        f"{'pooled median' if config.panel.high_lap == 'pooled' else 'median of entity-mean LAP'} within each "
        f"sample. Estimation engine: **{engine}** (reghdfe conventions: absorb(entity_num period_num), "
        "cluster(entity_num), singletons dropped, t-based p-values with reghdfe's residual df).", "",
        f"**Verdict: {verdict.label}.** (section 6)", "",
    ]
    if approximated:
        lines[2:2] = [f"> **APPROXIMATED.** The recall answers come from the sampling fallback (protocol Step 2): "
                      f"{approximated}. P(up), P(down), LAP and U − D are answer frequencies, not probabilities; "
                      "every table below is approximated.", ""]
    lines += _section("1. Sample", _quoted(tables, "sample"), approximated)
    flags = lap_flags(tables["lap_distribution"], tables["recall_checks"], config)
    lines += _section("2. LAP distribution, pre vs post cutoff", [
        *_quoted(tables, "lap_distribution"), "", *_quoted(tables, "recall_checks"), "",
        "![LAP before and after the cutoff](figures/lap_hist.png)", "", *[f"- {f}" for f in flags]], approximated)
    lines += _section("3. Validation regression (Step 3): outcome on U − D, pre-cutoff",
                      _quoted(tables, "validation", COEF_COLUMNS, config), approximated)
    lines += _section("4. Detection regression (Step 4): outcome on mu_hat, LAP, mu_hat × LAP, pre-cutoff", [
        "beta_1 = `mu_hat`, beta_2 = `lap`, beta_3 = `c.mu_hat#c.lap`; `p_one_sided` tests beta_3 > 0 "
        "(p/2 if t > 0, else 1 − p/2).", "", *_quoted(tables, "detection", COEF_COLUMNS, config), "",
        *power_lines(tables.get("power"), config.estimate.detection_alpha)], approximated)
    lines += _section("5. Post-cutoff placebo (Step 5)", [
        f"The placebo passes when the post-cutoff one-sided p for beta_3 > 0 exceeds "
        f"{config.estimate.placebo_alpha:.2f}.", "", *_quoted(tables, "placebo", COEF_COLUMNS, config), "",
        "Validation regressions on the post-cutoff sample:", "",
        *_quoted(tables, "placebo_validation", COEF_COLUMNS, config)], approximated)
    if "bootstrap" in tables:
        lines += _section("Pairs bootstrap of the post-cutoff beta_3 (paper Figure III)", [
            "Observations of the post-cutoff sample resampled with replacement; `p_boot` = share of draws at least "
            "as large as the in-sample beta_3 (one-sided bootstrap p).", "", *_quoted(tables, "bootstrap"), "",
            "![Bootstrap distribution](figures/bootstrap.png)"], approximated)
    extended = [name for name in ("descriptive", "table2", "magnitudes", "table3", "table4", "table5") if name in tables]
    if extended:
        described = {"descriptive": "descriptive statistics (Table I)",
                     "table2": "the Table II columns" + (" with their economic magnitudes" if "magnitudes" in tables
                                                          else ""),
                     "table3": f"the triple interaction with `{config.estimate.moderator}` (Table III)",
                     "table4": "the horse race with the first-token probability and stated confidence (Table IV)",
                     "table5": "the detection regression standardized within each sample (Table V)"}
        written = "; ".join(text for name, text in described.items() if name in tables)  # only tables written
        lines += _section("Extended specifications (paper Tables I-V)", [
            f"{written[:1].upper()}{written[1:]}, all on the pre-cutoff panel unless the table "
            "says otherwise (a specification the panel cannot support is skipped; why: "
            "`results/extended_notes.csv`):", "",
            *[f"- `results/{name}.csv`" + (f" (LaTeX `results/{name}.tex`: {units.note(name, config)})"
                                            if name.startswith("table") else "") for name in extended], "",
            *_quoted(tables, "magnitudes")], approximated)
    lines += _section("6. Verdict", [verdict.paragraph], approximated)
    if (Path(config.root) / "results" / "leak").is_dir():  # the NumLeak audit's section (leak/report.py)
        from ..leak.report import section as leak_section

        lines += leak_section(Path(config.root) / "results")
    from ..ess.report import section as ess_section   # the ESS audit's section, when results/ess/ exists

    lines += ess_section(Path(config.root) / "results" / "ess")
    from ..calibrate.report import section as self_validation  # `lapbias calibrate` results, if any

    lines += self_validation(Path(config.root) / "results", alpha=config.estimate.detection_alpha)
    lines += _section("Estimation notes", [to_markdown(notes, ["model", "kind", "detail"]) if len(notes)
                                           else "None (no singletons, omitted terms or warnings).",
                                           "", "Source: `results/estimation_notes.csv`; run configuration: "
                                           "`results/run_config.json`."])
    return "\n".join(lines)
