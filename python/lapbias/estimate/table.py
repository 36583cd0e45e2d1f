"""A reghdfe-style text table of a RegResult (header statistics, coefficient table, absorbed FE)."""

from __future__ import annotations

import math

from .reghdfe import RegResult


def _number(value: float, width: int = 10) -> str:
    return f"{value:>{width}.7g}" if not math.isnan(value) else f"{'.':>{width}}"


def format_result(result: RegResult, y: str) -> str:
    vce = {"unadjusted": "unadjusted", "robust": "robust"}.get(result.vce, result.vce)
    header = [
        f"HDFE Linear regression                        Number of obs     = {result.N:>10,}",
        f"Absorbing {len(result.absorb)} HDFE group(s)                     R-squared         = {result.r2:>10.4f}",
        f"Std. errors: {vce:<33}Adj R-squared     = {result.r2_a:>10.4f}",
        f"{'':46}Within R-sq.      = {result.r2_within:>10.4f}",
        f"{'':46}Root MSE          = {result.rmse:>10.5g}",
    ]
    if result.N_clust is not None:
        header.append(f"{'':46}Number of clusters = {result.N_clust:>9}")
    rule = "-" * 78
    lines = [*header, "", rule, f"{y[:12]:>12} | {'Coefficient':>11} {'Std. err.':>10} {'t':>8} {'P>|t|':>7} "
             f"{'[95% conf. interval]':>22}", rule]
    for term in result.coef.index:
        lines.append(f"{term[:12]:>12} | {_number(result.coef[term], 11)} {_number(result.se[term])} "
                     f"{result.t[term]:>8.2f} {result.p[term]:>7.3f} {_number(result.ci_low[term], 11)} "
                     f"{_number(result.ci_high[term], 11)}")
    lines.append(rule)
    for term in result.omitted:  # reghdfe's two notes: collinear with the FEs, or with the other regressors
        lines.append(f"note: {term} omitted: {result.omitted_reasons.get(term, 'collinear')}")
    lines.append(f"df_r = {result.df_r}, df_a = {result.df_a}, df_a_nested = {result.df_a_nested}, "
                 f"singletons dropped = {result.num_singletons}, rows with missing values = {result.N_dropped_missing}")
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)
