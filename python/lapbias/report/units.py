"""Readable LAP units and the table notes every coefficient table carries.

Min-K% LAP is of order 1e-5..1e-8; the paper reports it as LAP × 10^4 (Table I: "LAP (×10^4)", mean 0.073), and its
Table II coefficients are per unit of LAP × 10^4. The report shows Min-K% LAP in those units: a coefficient on a term
with LAP as a factor m times is divided by (10^4)^m (its t statistic unchanged), a LAP statistic multiplied by
10^4. results/*.csv keep raw units (one schema for both engines); the captions say so. Paper Table V standardizes
every variable within its sample (z-scores), so its coefficients are per SD and are shown as estimated.
"""

from __future__ import annotations

import math

import pandas as pd

from ..config import RunConfig
from ..estimate.reghdfe import term_variables
from ..signals import measures
PROTOCOL_TABLES = ("validation", "detection", "placebo", "placebo_validation")
STANDARDIZED_TABLES = ("table5",)
"""Tables on z-scores (paper Table V): no display factor, whatever the LAP measure."""
TERM_ORDER = ["mu_hat", "lap", "c.mu_hat#c.lap", "p_first", "c.mu_hat#c.p_first", "confidence",
              "c.mu_hat#c.confidence"]
"""Row order of paper Table IV: LLM, LAP, LLM × LAP, p(w_{N+1}), LLM × p(w_{N+1}), Confidence, LLM × Confidence."""


def factors(config: RunConfig) -> dict[str, float]:
    """Display factor of each LAP variable (its measure's `display_factor`: Min-K% × 10^4, paper Table I), and of
    lap, the configured measure's."""
    scale = {m.column: m.display_factor for m in measures.REGISTRY.values() if m.display_factor != 1.0}
    factor = measures.configured(config).display_factor
    return {**scale, **({"lap": factor} if factor != 1.0 else {})}


def coefficients(table: pd.DataFrame, config: RunConfig, name: str = "") -> pd.DataFrame:
    """A coefficient table with Min-K% LAP in display units (module docstring); a standardized table (`name` in
    STANDARDIZED_TABLES) unchanged."""
    if name in STANDARDIZED_TABLES:
        return table.copy()
    scale = factors(config)
    out = table.copy()
    for i, term in out["term"].items():
        divisor = 1.0
        for variable in term_variables(str(term)):  # `_cons` is its own "variable", factor 1
            divisor *= scale.get(variable, 1.0)
        for column in ("coef", "se", "ci_low", "ci_high"):
            if column in out.columns:
                out.loc[i, column] = out.loc[i, column] / divisor
    return out


def statistics(table: pd.DataFrame, key: str, config: RunConfig) -> pd.DataFrame:
    """Descriptive rows (Table I, LAP distribution) of a LAP variable in display units, the name saying so."""
    scale, out = factors(config), table.copy()
    numeric = [c for c in out.columns if c not in (key, "sample", "n", "N") and pd.api.types.is_numeric_dtype(out[c])]
    for i, variable in out[key].items():
        if variable in scale:
            out.loc[i, numeric] = out.loc[i, numeric] * scale[variable]
            out.loc[i, key] = f"{variable} (x10^{math.log10(scale[variable]):.0f})"
    return out


def power(table: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """results/power.csv in display units: beta_3, its bound and the MDEs per unit of LAP × 10^4, SDs and gap of
    LAP × 10^4."""
    factor = factors(config).get("lap", 1.0)
    out = table.copy()
    per_lap = ["beta3", "se_beta3", "se_bound", "mde_beta3", "ucb_beta3", "beta3_post", "se_beta3_post",
               "se_bound_post", "placebo_ucb_beta3", "placebo_mde_beta3"]
    out.loc[out["quantity"].isin(per_lap), "value"] /= factor
    out.loc[out["quantity"].isin(["sd_lap", "sd_lap_within", "sd_lap_post", "lap_gap"]), "value"] *= factor
    return out


def lap_measure(config: RunConfig, standardized: bool = False) -> str:
    """The tables' note "LAP = ...": the configured measure's own words."""
    return measures.configured(config).describe(config, standardized)


CLUSTERED_BY = {"entity": "standard errors clustered by entity (entity_num)",
                "entity date": "standard errors clustered two-way by entity and target date (entity_num date_num)"}
SINGLE_ENTITY = "no fixed effects, Newey-West standard errors"


def fe_clustered(config: RunConfig) -> str:
    """The protocol regressions' fixed effects and clusters ([estimate] cluster)."""
    return f"absorb(entity_num period_num), {CLUSTERED_BY[config.estimate.cluster]}"


def _protocol_estimator(table: pd.DataFrame | None, config: RunConfig) -> str:
    """What the protocol regressions of this table ran (estimate/protocol.py): entity and period FE with the
    configured clusters, or, on a single entity, no FE and Newey-West (protocol, implementation notes) -- told apart
    by N_clust, which a Newey-West fit leaves empty."""
    clustered = fe_clustered(config)
    if table is None or "N_clust" not in table.columns or table.empty:
        return clustered
    single = sorted(set(table.loc[table["N_clust"].isna(), "model"].astype(str)))
    if not single:
        return clustered
    if len(single) == table["model"].nunique():
        return f"a single entity: {SINGLE_ENTITY}"
    return f"{clustered}; model {', '.join(single)} on a single entity: {SINGLE_ENTITY}"


def note(name: str, config: RunConfig, table: pd.DataFrame | None = None) -> str:
    """The table note: estimator and clustering (protocol tables: as `table`'s models ran), LAP measure (and Table
    V's samples)."""
    if name in PROTOCOL_TABLES:
        cluster = _protocol_estimator(table, config)
    else:
        by = "date (period_num)" if config.estimate.extended_cluster == "period_num" else "entity (entity_num)"
        cluster = f"absorb(entity_num period_num), standard errors clustered by {by}"
    if name in STANDARDIZED_TABLES:
        return (f"{cluster}; {lap_measure(config, standardized=True)}; (1)-(2) in-sample (pre-cutoff), (3)-(4) "
                "out-of-sample (post-cutoff), every variable standardized within its sample (z-scores: coefficients "
                "per SD, paper Table V).")
    return f"{cluster}; {lap_measure(config)}."
