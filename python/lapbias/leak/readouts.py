"""Log-prob readouts, where the backend exposes them.

Readout entropy (App. R): H = −Σ_i p_i log2 p_i − r log2 r over the paper's top-5 candidates of the first answer
token, with the mass below the top-5, r = max(0, 1 − Σ_i p_i), as one "rest" bucket. The paper averages the first
two answer tokens (sign + first numeric chunk); the backend interface (llm/base.py) exposes the top-k at the first
generated position only, so this is the first token's entropy (a stated deviation). It reads the value only when
that token is part of the number (a sign or a digit, as in "+5.25"): the table averages those replies
(`n_value_first`) and gives the mean over every reply apart, so that the entropy of a preamble word ("The") is
never read as the readout of a value.

Candidate ranking (App. T): for each probed (series, date), five completions of Variant A's question written as
"Question: …\\nAnswer: <candidate>" (raw text, no chat template, as App. T probes in its Q&A format) — the true
value, its sign flip, the adjacent date's true value (the next period; the previous one for the last), another
probed series' value on the same date, and a random decoy drawn uniformly between the series' minimum and
maximum — each formatted with a sign and the series' decimals. Score = length-normalised sequence log-prob, the
mean log P of the candidate's tokens. A candidate whose text equals an earlier one (e.g. the adjacent value
equals the true value) is left out. Reported (Tab. 18): top-1 accuracy (Wilson interval), mean rank of the true
value (1 = best) with chance (k + 1)/2, the mean gap (true − best other: the true value's score minus the best
other candidate's; positive = the true value wins), and which kind wins when the true value loses.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from ..llm.cache import Query
from .metrics import wilson
from .probes.base import value_question
from .series import human_date

KINDS = ("true", "sign_flipped", "adjacent_date", "other_series", "random_decoy")
TOP_K = 5
"""App. R's top-5 candidates."""
VALUE_TOKEN = re.compile(r"^\s*(?:[-+−–]|\d)")
"""A first token that is part of a number: a sign or a digit."""


def entropy_bits(top_logprobs: list[float]) -> float:
    """Shannon entropy in bits of the TOP_K most likely candidates plus the "rest" bucket (App. R)."""
    known = sorted((v for v in top_logprobs if v is not None and not math.isnan(v)), reverse=True)[:TOP_K]
    probs = np.exp(np.asarray(known, dtype=float))
    if not len(probs):
        return math.nan
    rest = max(0.0, 1.0 - float(probs.sum()))
    buckets = np.append(probs, rest)
    buckets = buckets[buckets > 0]
    return float(-(buckets * np.log2(buckets)).sum())


def decimals(values: pd.Series) -> int:
    """The fewest decimals (0-4) that write every value of the series exactly."""
    for places in range(5):
        if np.allclose(np.round(values * 10 ** places), values * 10 ** places, atol=1e-6):
            return places
    return 4


def candidates(sampled: pd.DataFrame, table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One row per (series, date, kind) with the candidate text and the scored text."""
    rows = []
    for index, row in enumerate(sampled.itertuples()):
        series = table[table["series"] == row.series].reset_index(drop=True)
        places = decimals(series["value"])
        position = int(np.nonzero((series["date"] == row.date).to_numpy())[0][0])
        adjacent = series["value"].iloc[position + 1 if position + 1 < len(series) else position - 1]
        others = table[(table["series"] != row.series) & (table["date"] == row.date)].sort_values("series")
        generator = np.random.default_rng([seed, 2, index])
        values = {"true": row.value, "sign_flipped": -row.value, "adjacent_date": adjacent,
                  "other_series": others["value"].iloc[0] if len(others) else math.nan,
                  "random_decoy": generator.uniform(series["value"].min(), series["value"].max())}
        question = value_question(row.label, human_date(row.date, row.frequency), row.unit)
        seen = set()
        for kind in KINDS:
            if math.isnan(values[kind]):
                continue
            text = f"{values[kind]:+.{places}f}"
            if text in seen:
                continue
            seen.add(text)
            rows.append({"series": row.series, "date": row.date, "period": row.period, "window": row.window,
                         "kind": kind, "candidate": text, "text": f"Question: {question}\nAnswer: {text}"})
    return pd.DataFrame(rows)


def queries(table: pd.DataFrame, task: str, model_id: str, dtype: str) -> list[Query]:
    params = {"probe": "ranking", "prompt_logprobs": True, "chat_template": False, "dtype": dtype}
    return [Query(task, model_id, f"rank|{r.series}|{r.period}|{r.kind}", r.text, params)
            for r in table.itertuples()]


def candidate_score(tokens: list[list], candidate: str) -> tuple[float, int]:
    """(mean log-prob, token count) of the candidate: the trailing tokens whose text makes up " <candidate>"."""
    text, values = "", []
    for _, token, logprob in reversed(tokens):
        text = token + text
        values.append(logprob)
        if text.strip() == candidate or len(text.strip()) >= len(candidate):
            break
    return float(np.mean(values)), len(values)


def rank(scored: pd.DataFrame) -> pd.DataFrame:
    """Per (series, date): rank of the true candidate (1 = highest score), top-1, and the winner's kind."""
    rows = []
    for (series, period), group in scored.groupby(["series", "period"], sort=False):
        true_score = group.loc[group["kind"] == "true", "score"].iloc[0]
        winner = group.sort_values("score", ascending=False, kind="stable").iloc[0]
        others = group.loc[group["kind"] != "true", "score"]
        rows.append({"series": series, "period": period, "window": group["window"].iloc[0],
                     "n_candidates": len(group), "rank_true": 1 + int((group["score"] > true_score).sum()),
                     "top1": bool(winner["kind"] == "true"), "winner": winner["kind"],
                     "gap": float(true_score - others.max()) if len(others) else math.nan})
    return pd.DataFrame(rows)


def summarize_ranking(ranks: pd.DataFrame) -> pd.DataFrame:
    """One row per series × window: top-1 accuracy with its Wilson interval, mean rank, chance, losses by kind."""
    rows = []
    for (series, window), group in ranks.groupby(["series", "window"], sort=True):
        share, low, high = wilson(int(group["top1"].sum()), len(group))
        row = {"series": series, "window": window, "n_dates": len(group), "top1_accuracy": share,
               "top1_lo": low, "top1_hi": high, "chance_top1": float((1 / group["n_candidates"]).mean()),
               "mean_rank_true": float(group["rank_true"].mean()),
               "chance_mean_rank": float(((group["n_candidates"] + 1) / 2).mean()),
               "mean_gap": float(group["gap"].mean())}
        losses = group.loc[~group["top1"], "winner"].value_counts()
        for kind in KINDS[1:]:
            row[f"loses_to_{kind}"] = int(losses.get(kind, 0))
        rows.append(row)
    return pd.DataFrame(rows)


def summarize_entropy(panel: pd.DataFrame) -> pd.DataFrame:
    """Readout entropy by condition (Variant A per series, the fabricated controls) and window (App. R): the mean
    over the replies whose first token is a sign or a digit, and over every reply."""
    greedy = panel[panel["variant"].isin(["A", "fabricated_series", "fabricated_fund"])
                   & panel["entropy_bits"].notna()]
    rows = []
    for (variant, series, window), group in greedy.groupby(["variant", "series", "window"], sort=True):
        valued = group[group["first_token"].fillna("").str.match(VALUE_TOKEN.pattern)]
        committed = valued[valued["status"] == "parsed"]["entropy_bits"]
        rows.append({"variant": variant, "series": series, "window": window, "n": len(group),
                     "n_value_first": len(valued),
                     "mean_entropy_bits": float(valued["entropy_bits"].mean()) if len(valued) else math.nan,
                     "median_entropy_bits": float(valued["entropy_bits"].median()) if len(valued) else math.nan,
                     "n_committed": len(committed),
                     "mean_entropy_committed": float(committed.mean()) if len(committed) else math.nan,
                     "mean_entropy_all": float(group["entropy_bits"].mean()),
                     "first_tokens": ", ".join(f"{t!r} x{n}" for t, n in group["first_token"].value_counts()
                                               .head(3).items())})
    return pd.DataFrame(rows)
