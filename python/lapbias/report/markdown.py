"""results/REPORT.md: the protocol's six sections ("Final report"), every number read from results/*.csv."""

from __future__ import annotations

import math
import os
from importlib import metadata
from pathlib import Path

import pandas as pd

from ..config import RunConfig
from ..estimate.specification import CLUSTERS
from ..signals import measures
from . import units
from .measures import drift_lines, lines as measure_lines
from .sections import section_lines
from .tables import to_markdown
from .verdict import DIFFERENCE, Verdict

POST_LAP_STAYS_HIGH = 0.8
"""Post-cutoff LAP does not fall when it lost at most 20% of its pre-cutoff level (the measure's `fall`: 80% of
a positive mean kept)."""
LAP_HIGH = 0.5
"""Recall LAP is high at a mean of 0.5 or more: at least half of the answer's probability on up or down. Post-cutoff
LAP "stays high" (protocol Step 2: flag prominently) when it is high and does not fall."""
RESIDUAL_HIGH = 0.5
"""The recall answers are mostly off the labels when their mean residual mass is 0.5 or more (protocol Step 2: "If
large, distinguish an unconstrained prompt from top-20 censoring")."""
COEF_COLUMNS = ["model", "term", "coef", "se", "t", "p", "p_one_sided", "N", "N_clust"]
WILD_COLUMNS = ["p_wild", "p_wild_one_sided", "p_wild_lower"]
"""detection.csv and placebo.csv: beta_3's wild cluster restricted bootstrap p-values (estimate/wild.py)."""


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


def power_lines(power: pd.DataFrame | None, config: RunConfig) -> list[str]:
    """beta_3 beside its one-sided upper confidence bound and minimum detectable effect (estimate/power.py) at the
    one-sided level [estimate] detection_alpha, as shares of the standalone LLM effect, and LAP's high/low gap."""
    if power is None or power.empty:
        return []
    values = dict(zip(power["quantity"], power["value"].astype(float)))
    estimate, nan = config.estimate, float("nan")
    alpha = estimate.detection_alpha

    def share(name: str) -> str:
        return "undefined (b1 ≤ 0 or not estimated)" if pd.isna(values.get(name)) else f"{values[name]:.0%}"

    measure = measures.configured(config)
    gap = "the high-LAP half's mean LAP exceeds the low half's by "
    if measure.gap == "absolute":
        gap += f"{values.get('lap_gap', nan) * 100:.3g} percentage points (required: {estimate.min_lap_gap * 100:g})"
    elif measure.gap == "relative":
        gap += (f"{values.get('lap_relative_gap', nan):.3g} of mean LAP (required: {estimate.min_lap_relative_gap:g}; "
                f"relative, as {measure.title} has no natural unit)")
    else:
        gap += (f"a factor {1 + measure.relative_gap(values.get('lap_gap', nan), nan):.4g} in the ratio of Min-K% "
                f"probabilities (required: {1 + estimate.min_lap_relative_gap:g}; a log-ratio)")
    return [f"**Power.** beta_3 = {values.get('beta3', nan):.4g} (share of the standalone LLM effect per SD of LAP: "
            f"{share('beta3_share')}); its one-sided {1 - alpha:.0%} upper confidence bound = "
            f"{values.get('ucb_beta3', nan):.4g} (share: {share('ucb_share')}; \"No evidence\" needs at most "
            f"{estimate.max_ucb_share:.0%}, `max_ucb_share`); minimum detectable beta_3 at {alpha * 100:g}% one-sided "
            f"with 80% power = {values.get('mde_beta3', nan):.4g}: an interaction of ≥ {share('mde_share')} of the "
            "standalone LLM effect per SD of LAP would have been detected with 80% probability (\"No evidence\" "
            f"needs at most {estimate.detectable_share:.0%}, `detectable_share`, the paper's in-sample estimate). "
            f"LAP variation: {gap}. Within-FE SD of LAP = "
            f"{values.get('sd_lap_within', nan):.4g} ({share('within_share_lap')} of its SD "
            f"{values.get('sd_lap', nan):.4g}); standalone LLM effect b1 = {values.get('b1_standalone', nan):.4g}. "
            + _cv3_line(values, estimate.wild_below_clusters) + "Source: `results/power.csv`."]


def _cv3_line(values: dict[str, float], wild_below_clusters: int) -> str:
    """Which standard error the bound and the MDE used below wild_below_clusters entity clusters (estimate/power.py),
    or why there is none."""
    if values.get("cv3_bound") != 1:
        return ""
    if not math.isfinite(values.get("se_bound", math.nan)):
        return (f"With fewer than {wild_below_clusters} entity clusters (`wild_below_clusters`) the bound and the MDE "
                "use the CV3 jackknife standard error (leave one entity out), which is not defined here: deleting one "
                "entity leaves beta_3 unidentified, i.e. beta_3 rests on that entity, so there is no bound and no "
                "MDE. ")
    return (f"With {values['df_bound'] + 1:.0f} entity clusters (fewer than {wild_below_clusters}, "
            "`wild_below_clusters`) the bound and the MDE use the CV3 jackknife standard error (leave one entity "
            f"out) = {values['se_bound']:.4g} with t({values['df_bound']:.0f}), not the CRV1 standard error, which is "
            "biased down with few clusters. ")


def placebo_diagnostics(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The post-cutoff beta_3's two-sided test and the pre-minus-post difference per SD of LAP, diagnostics of a
    skill gradient outside the verdict's rule (report/verdict.py)."""
    power, placebo = tables.get("power"), tables.get("placebo")
    if power is None or power.empty or placebo is None or placebo.empty:
        return []
    values = dict(zip(power["quantity"], power["value"].astype(float)))
    post = placebo[placebo["term"] == "c.mu_hat#c.lap"]
    if post.empty or pd.isna(post["coef"].iloc[0]):
        return []
    row = post.iloc[0]
    wild = f", wild bootstrap p = {row['p_wild']:.4f}" if pd.notna(row.get("p_wild")) else ""
    return [f"**Diagnostics (not part of the verdict's rule).** Post-cutoff beta_3 = {row['coef']:.4g}, two-sided "
            f"p = {row['p']:.4f}{wild}: a beta_3 significantly below zero after the cutoff points to a genuine "
            "skill that falls with LAP, which could also mask a contamination before it. Pre-cutoff minus "
            f"post-cutoff beta_3 per SD of LAP = {values.get('pre_minus_post_per_sd', float('nan')):.4g} (z = "
            f"{values.get('z_pre_minus_post', float('nan')):.2f}, one-sided p = "
            f"{values.get('p_pre_minus_post', float('nan')):.4f}, both estimates' errors counted). Source: "
            "`results/placebo.csv`, `results/power.csv`."]


def wild_lines(config: RunConfig, engine: str) -> list[str]:
    """What `p_wild`, `p_wild_one_sided` and `p_wild_lower` are, and when the verdict reads them."""
    estimate = config.estimate
    if not estimate.wild_bootstrap_reps:
        return ["Wild cluster bootstrap: not run (`[estimate] wild_bootstrap_reps = 0`); with fewer than "
                f"{estimate.wild_below_clusters} entity clusters the CRV1 t test over-rejects."]
    engine = (" Computed by the Python engine on the same exported panel (`panel_pre.dta`, `panel_post.dta`)."
              if "stata" in engine else "")
    return [f"`p_wild` (two-sided, equal-tailed), `p_wild_one_sided` (beta_3 > 0) and `p_wild_lower` (beta_3 < 0): "
            "wild cluster restricted "
            f"bootstrap of beta_3 (null imposed, Webb six-point weights, {estimate.wild_bootstrap_reps:,} draws, seed "
            f"{estimate.bootstrap_seed}; CRV1 t statistic). With fewer than {estimate.wild_below_clusters} entity "
            "clusters (`wild_below_clusters`) the verdict reads these instead of the CRV1 t test's, which "
            f"over-rejects with few clusters.{engine}"]


def bootstrap_size(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The pairs bootstrap's size under 'the same beta_3 before and after the cutoff' for this sample's N_post/N_pre
    (p_boot treats the in-sample beta_3 as fixed): with r² = N_post/N_pre ≈ (se_IS/se_OOS)², a nominal one-sided 5%
    test rejects with probability 1 − Φ(1.645 / sqrt(1 + r²))."""
    from scipy import stats

    boot, detection = tables.get("bootstrap"), tables.get("detection")
    if boot is None or boot.empty or detection is None or detection.empty:
        return []
    n_post, n_pre = float(boot["N"].iloc[0]), float(detection["N"].iloc[0])
    ratio = n_post / n_pre
    size = stats.norm.sf(stats.norm.ppf(0.95) / (1 + ratio) ** 0.5)
    return [f"**Size of p_boot.** As in the paper, p_boot compares the in-sample beta_3 with the post-cutoff draws "
            "as if it were a constant; it is an estimate too. If beta_3 were the same before and after the cutoff, "
            "a nominal one-sided 5% test would reject with probability 1 − Φ(1.645/√(1 + N_post/N_pre)) (se of "
            "the in-sample beta_3 over that of the post-cutoff one ≈ √(N_post/N_pre)): 6% at the paper's sizes (9,942 "
            "/ 82,234 rows), 12% when N_post = N_pre, 23% at N_post = 4 N_pre. Here N_post/N_pre = "
            f"{n_post:,.0f}/{n_pre:,.0f} = {ratio:.3g}, so about {size:.1%}. Resampling rows also ignores the "
            "dependence within dates and entities, which understates the spread of the draws. p_boot does not "
            "enter the verdict."]


def _columns(tables: dict[str, pd.DataFrame], name: str) -> list[str]:
    """The coefficient columns shown, with the wild bootstrap's where the table has them."""
    table = tables.get(name)
    return COEF_COLUMNS + [c for c in WILD_COLUMNS if table is not None and c in table.columns]


def lap_flags(lap_distribution: pd.DataFrame, recall_checks: pd.DataFrame, config: RunConfig) -> list[str]:
    flags = []
    configured = measures.configured(config)
    measure = configured.column
    rows = lap_distribution[lap_distribution["measure"].astype(str).str.split(" ").str[0] == measure]
    means = rows.set_index("sample")["mean"]
    fallen = configured.fall(means["pre"], means["post"]) if {"pre", "post"} <= set(means.index) else math.nan
    stays = fallen <= 1 - POST_LAP_STAYS_HIGH if math.isfinite(fallen) else \
        {"pre", "post"} <= set(means.index) and means["post"] >= means["pre"]  # a level of 0 before the cutoff
    if stays:
        compared = (f"mean {means['post']:.4g} vs {means['pre']:.4g} pre-cutoff, "
                    + (f"at least {POST_LAP_STAYS_HIGH:.0%} of it" if means["pre"] > 0 and configured.gap != "log" else
                       f"{max(fallen, 0):.0%} of its level lost, at most {1 - POST_LAP_STAYS_HIGH:.0%}"))
        if configured.task == "minkprob":
            flags.append(f"**Post-cutoff LAP does not fall** ({compared}): the texts after the cutoff are as familiar "
                         f"to the model as those before, so {configured.title} reflects the texts more than "
                         "memorization.")
        elif means["post"] >= LAP_HIGH:
            flags.append(f"**Post-cutoff LAP stays high** ({compared}; high: at least {LAP_HIGH:g}, half of the "
                         "answer's probability on up or down): the model is guessing rather than abstaining, so LAP "
                         "measures willingness to answer more than memorization.")
        else:
            flags.append(f"Post-cutoff LAP does not fall ({compared}), but it is low on both sides of the cutoff "
                         f"(below {LAP_HIGH:g}, half of the answer's probability on up or down): the model seldom "
                         "answers up or down at all, so LAP has little recall to measure.")
    flags += recall_answers(recall_checks)
    for row in recall_checks.itertuples():
        for label, share in (("up", row.censored_up), ("down", row.censored_down), ("unknown", row.censored_unknown)):
            if share > config.recall.censoring_warning:
                flags.append(f"Heavy censoring ({row.sample}): label '{label}' is outside the top-"
                             f"{config.recall.top_logprobs} log-probs in {share:.0%} of recall queries; its mass is "
                             f"counted as 0{_bound(row.censoring_bound_max)}, so LAP understates recall there.")
    return flags


def recall_answers(recall_checks: pd.DataFrame) -> list[str]:
    """Protocol Step 2's residual-mass check, the recall answers as they are: per sample, the mean probability on up or
    down (LAP), on unknown and on any other token (the residual mass), over unique recall queries
    (results/recall_checks.csv); flagged when the residual mass is large (RESIDUAL_HIGH)."""
    needed = {"sample", "n_queries", "lap_mean", "p_unknown_mean", "residual_mass_mean"}
    if not needed <= set(recall_checks.columns):
        return []
    rows = [row for row in recall_checks.itertuples() if row.n_queries]
    if not rows:
        return []
    parts = "; ".join(f"{row.sample}-cutoff: up or down {row.lap_mean:.3f}, unknown {row.p_unknown_mean:.3f}, "
                      f"other tokens {row.residual_mass_mean:.3f}" for row in rows)
    line = f"mean probability per query ({parts})"
    worst = max(row.residual_mass_mean for row in rows)
    if worst < RESIDUAL_HIGH:
        return [f"Recall answers, {line}."]
    return [f"**Recall answers mostly off the labels**, {line}: most of the answer's probability (up to {worst:.3f}, "
            f"at least {RESIDUAL_HIGH:g}) falls on none of the three labels: the model neither answers up or down nor "
            "abstains with 'unknown', so LAP is small because the answers are off-format, not because recall is "
            "absent. Protocol Step 2: before revising, tell an unconstrained prompt (the model starts a sentence) "
            "from censoring (the labels outside the top-k; `exact` = 1 in the table: probabilities exact, nothing "
            "censored)."]


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


BACKEND_PACKAGES = {"transformers": ("transformers", "torch"), "vllm": ("vllm", "torch"), "openai": ("requests",)}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def software_line(config: RunConfig) -> str:
    """The software and settings the numbers depend on: lapbias, the estimation libraries, the backend's packages
    and how the model was run (dtype, device, batch size; for vLLM its prefix caching, off, and the
    VLLM_BATCH_INVARIANT setting of this environment); with the Stata engine, the versions of reghdfe, ftools,
    boottest, estout and esttab that master.do read from their ado files (results/stata_versions.csv)."""
    model = config.model
    backend = ", ".join(f"{p} {_version(p)}" for p in BACKEND_PACKAGES.get(model.backend, ()))
    run = f"dtype {model.dtype}, device {model.device}, batch size {model.batch_size}"
    if model.backend == "vllm":
        run += f", prefix caching off, VLLM_BATCH_INVARIANT={os.environ.get('VLLM_BATCH_INVARIANT', '0')}"
    line = (f"Software: lapbias {_version('lapbias')}, pyfixest {_version('pyfixest')}, numpy {_version('numpy')}, "
            f"pandas {_version('pandas')}; model run with {backend} ({run}).")
    stata = Path(config.root) / "results" / "stata_versions.csv"
    if stata.exists():
        try:
            versions = pd.read_csv(stata, dtype=str)
            line += " Stata packages: " + ", ".join(f"{r.package} {r.version}" for r in versions.itertuples()) + "."
        except (ValueError, AttributeError, pd.errors.ParserError):
            line += f" Stata packages: {stata} unreadable."
    return line


def render(config: RunConfig, tables: dict[str, pd.DataFrame], verdict: Verdict, engine: str,
           approximated: str = "", source: dict | None = None, notice: str = "", date_note: str = "") -> str:
    """REPORT.md; `approximated` (approximation.recall_note) labels the report and each section; `source` (what
    `validate` read, data/derived/data_source.json) names the data file and its sha256; `notice` (verdict_sentence.
    low_parse_rate) opens section 6; `date_note` (describe.date_dependence) follows the estimation line."""
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
        f"cluster({' '.join(CLUSTERS[config.estimate.cluster])}), singletons dropped, t-based p-values with reghdfe's "
        "residual df" + ("; beta_3's wild cluster bootstrap and the CV3 bounds cluster by entity alone"
                         if config.estimate.cluster != "entity" else "") + ")."
        + date_note, "", software_line(config), "",
        f"**Verdict: {verdict.label}.** (section 6)", "",
    ]
    if source:
        lines[2:2] = [f"Data: `{source.get('data')}` (sha256 `{source.get('sha256')}`), as `lapbias validate` read "
                      "it.", ""]
    if approximated:
        lines[2:2] = [f"> **APPROXIMATED.** The recall answers come from the sampling fallback (protocol Step 2): "
                      f"{approximated}. P(up), P(down), LAP and U − D are answer frequencies, not probabilities; "
                      "every table below is approximated.", ""]
    lines += _section("1. Sample", _quoted(tables, "sample"), approximated)
    flags = lap_flags(tables["lap_distribution"], tables["recall_checks"], config)
    lines += _section("2. LAP distribution, pre vs post cutoff", [
        *_quoted(tables, "lap_distribution"), "", *_quoted(tables, "recall_checks"), "",
        "![LAP before and after the cutoff](figures/lap_hist.png)", "", *[f"- {f}" for f in flags]], approximated)
    lines += _section("3. Validation regression (Step 3): outcome on U − D, pre-cutoff", [
        "`pooled`, `high_lap`, `low_lap`: the outcome on U − D (`ud`). `high_minus_low` (term "
        f"`{DIFFERENCE}`): the halves' slopes on the recalled direction `ud_dir` = (P(up) − P(down)) / "
        "(P(up) + P(down)), per SD of it within each half, high minus low, each half with its own fixed effects; "
        "`p_one_sided` tests > 0, the verdict's test of the validation pattern.", "",
        *_quoted(tables, "validation", COEF_COLUMNS, config)], approximated)
    lines += _section("4. Detection regression (Step 4): outcome on mu_hat, LAP, mu_hat × LAP, pre-cutoff", [
        "beta_1 = `mu_hat`, beta_2 = `lap`, beta_3 = `c.mu_hat#c.lap`; `p_one_sided` tests beta_3 > 0 "
        "(p/2 if t > 0, else 1 − p/2).", "", *_quoted(tables, "detection", _columns(tables, "detection"), config), "",
        *wild_lines(config, engine), "", *power_lines(tables.get("power"), config)], approximated)
    lines += _section("5. Post-cutoff placebo (Step 5)", [
        f"The placebo passes when the post-cutoff one-sided p for beta_3 > 0 exceeds "
        f"{config.estimate.placebo_alpha:.2f} (the wild cluster bootstrap's with fewer than "
        f"{config.estimate.wild_below_clusters} entity clusters); it is informative when the post-cutoff data "
        "exclude the interaction found before the cutoff: its one-sided "
        f"{1 - config.estimate.placebo_alpha:.0%} upper bound of beta_3 per SD of post-cutoff LAP "
        "(`placebo_ucb_per_sd` in `results/power.csv`; CV3 standard error with few clusters) below the pre-cutoff "
        "beta_3 per SD of pre-cutoff LAP (`beta3_per_sd`), the pre-cutoff estimate taken as fixed. A passing but "
        "uninformative placebo does not support \"Contamination detected\".", "",
        *placebo_diagnostics(tables), "",
        *_quoted(tables, "placebo", _columns(tables, "placebo"), config), "",
        "Validation regressions on the post-cutoff sample:", "",
        *_quoted(tables, "placebo_validation", COEF_COLUMNS, config)], approximated)
    if "bootstrap" in tables:
        lines += _section("Pairs bootstrap of the post-cutoff beta_3 (paper Figure III)", [
            "Observations of the post-cutoff sample resampled with replacement; `p_boot` = share of draws at least "
            "as large as the in-sample beta_3 (one-sided bootstrap p).", "", *_quoted(tables, "bootstrap"), "",
            *bootstrap_size(tables), "", "![Bootstrap distribution](figures/bootstrap.png)"], approximated)
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
    lines += _section("6. Verdict", [*([f"**Low parse rate accepted:** {notice}.", ""] if notice else []),
                                     verdict.paragraph], approximated)
    if "lap_measures" in tables:
        lines += _section("7. The verdict's robustness to the LAP measure", measure_lines(tables["lap_measures"], config),
                          approximated)
    if "text_drift" in tables:
        lines += _section("8. Text drift: a fall of a text-based LAP, or new language?",
                          drift_lines(tables["text_drift"]), approximated)
    lines += section_lines(Path(config.root) / "results")  # the audits' SECTION.md files (report/sections.py)
    lines += _section("Estimation notes", [to_markdown(notes, ["model", "kind", "detail"]) if len(notes)
                                           else "None (no singletons, omitted terms or warnings).",
                                           "", "Source: `results/estimation_notes.csv`; run configuration: "
                                           "`results/run_config.json`."])
    return "\n".join(lines)
