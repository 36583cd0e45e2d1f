"""Coefficient tables as Markdown (for REPORT.md) and LaTeX (booktabs; t-statistics in parentheses;
stars * p < 0.10, ** p < 0.05, *** p < 0.01 on the two-sided p); a table of rows (one per LAP measure, one per
check) as LaTeX with its own columns (`rows_to_latex`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

STARS = ((0.01, "***"), (0.05, "**"), (0.10, "*"))


def stars(p: float) -> str:
    for level, mark in STARS:
        if not math.isnan(p) and p < level:
            return mark
    return ""


def _tex_escape(text: str) -> str:
    return str(text).replace("_", r"\_").replace("#", r"\#").replace("%", r"\%").replace("&", r"\&")


def to_latex(table: pd.DataFrame, caption: str, order: list[str] | None = None) -> str:
    """One column per model, one row pair (coefficient, t-statistic) per term (in `order` where given, else in
    order of appearance; `_cons` last), then N and R²; an omitted term's cell is empty."""
    models = list(dict.fromkeys(table["model"]))
    terms = [t for t in dict.fromkeys(table["term"]) if t != "_cons"]
    if order:
        terms.sort(key=lambda t: order.index(t) if t in order else len(order))
    terms += ["_cons"] if "_cons" in set(table["term"]) else []
    lines = [r"\begin{table}[htbp]\centering", rf"\caption{{{_tex_escape(caption)}}}",
             rf"\begin{{tabular}}{{l{'c' * len(models)}}}", r"\toprule",
             " & " + " & ".join(f"({i + 1}) {_tex_escape(m)}" for i, m in enumerate(models)) + r" \\", r"\midrule"]
    for term in terms:
        coefs, tstats = [], []
        for model in models:
            row = table[(table["model"] == model) & (table["term"] == term)]
            if row.empty or pd.isna(row.iloc[0]["coef"]):
                coefs.append("")
                tstats.append("")
            else:
                r = row.iloc[0]
                coefs.append(f"{r['coef']:.4f}{stars(r['p'])}")
                tstats.append(f"({r['t']:.2f})")
        lines.append(f"{_tex_escape(term)} & " + " & ".join(coefs) + r" \\")
        lines.append(" & " + " & ".join(tstats) + r" \\")
    first = table.drop_duplicates("model").set_index("model")
    lines += [r"\midrule",
              "N & " + " & ".join(str(int(first.loc[m, "N"])) for m in models) + r" \\",
              "$R^2$ & " + " & ".join(f"{first.loc[m, 'r2']:.3f}" for m in models) + r" \\",
              r"\bottomrule", r"\end{tabular}",
              r"\par\footnotesize t-statistics in parentheses. * $p<0.10$, ** $p<0.05$, *** $p<0.01$.",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def rows_to_latex(table: pd.DataFrame, columns: dict[str, str], caption: str) -> str:
    """A booktabs table with one row per row of `table` and the given columns ({column: header}), numbers to 4
    significant digits, a missing value as an empty cell, True as "yes" (the cells of `to_latex`; pandas'
    Styler.to_latex needs jinja2, which lapbias does not depend on, and would be given this same formatting)."""
    def cell(value) -> str:
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else ""
        if isinstance(value, (float, np.floating)):
            return "" if math.isnan(value) else f"{value:.4g}"
        return "" if pd.isna(value) else _tex_escape(value)

    lines = [r"\begin{table}[htbp]\centering", rf"\caption{{{_tex_escape(caption)}}}",
             rf"\begin{{tabular}}{{l{'c' * (len(columns) - 1)}}}", r"\toprule",
             " & ".join(_tex_escape(header) for header in columns.values()) + r" \\", r"\midrule"]
    lines += [" & ".join(cell(row[column]) for column in columns) + r" \\" for _, row in table.iterrows()]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(table: pd.DataFrame, columns: list[str]) -> str:
    """A Markdown table of the given columns, numbers to 4 significant digits."""
    def cell(value) -> str:
        if isinstance(value, float):
            return "" if math.isnan(value) else f"{value:.4g}"
        return str(value)

    header = "| " + " | ".join(columns) + " |"
    rule = "|" + "---|" * len(columns)
    body = ["| " + " | ".join(cell(row[c]) for c in columns) + " |" for _, row in table.iterrows()]
    return "\n".join([header, rule, *body])
