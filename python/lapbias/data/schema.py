"""The protocol's input format ("Input data format"): one row per (entity, text-date) observation."""

from __future__ import annotations

REQUIRED = ("entity_id", "entity_name", "text", "text_date", "target_date", "outcome")
"""Columns that must be present (row_id and ticker are optional: created / left empty when absent)."""
OPTIONAL = ("row_id", "ticker")
DATES = ("text_date", "target_date")
STRINGS = ("row_id", "entity_id", "entity_name", "ticker", "text")
ORDER = ("row_id", "entity_id", "entity_name", "ticker", "text", "text_date", "target_date", "outcome")

DROP_RULES = {
    "missing_entity": ("entity_id", "entity_id and entity_name must be non-empty"),
    "missing_date": ("text_date", "text_date and target_date must be present"),
    "target_not_after_text": ("target_date", "target_date must be after text_date"),
    "missing_outcome": ("outcome", "outcome must be numeric and non-missing"),
    "empty_text": ("text", "text must be non-empty"),
    "conflicting_outcome": ("outcome", "one outcome per entity_id and target_date: a row whose outcome differs from "
                                       "the row [data] on_conflicting_outcome keeps is dropped"),
    "duplicate_row": ("row_id", "a row repeating an earlier row (same entity_id, text_date, target_date, text and "
                                "outcome, whatever its row_id) is one observation, kept once"),
}
"""Rows failing these rules are dropped and counted (protocol: "Drop failing rows and report the count")."""
DUPLICATE_KEY = ("entity_id", "text_date", "target_date", "text", "outcome")
"""What makes two rows one observation (a row exported twice under two row ids would be counted twice)."""

ONE_SIGNED_SHARE = 0.80
"""Outcome "heavily skewed toward one direction" (protocol item 5): more than 80% of non-zero outcomes share a sign."""

FORECAST_COLUMNS = ("row_id", "entity_id", "text_date", "target_date", "response", "label", "parsed", "mu_hat",
                    "p_first", "label_token", "confidence", "cache_key")
"""data/derived/forecast.parquet (protocol Step 1; docs/contracts.md)."""
RECALL_COLUMNS = ("entity_id", "target_date", "p_up", "p_down", "p_unknown", "lap", "ud", "residual_mass",
                  "censored_up", "censored_down", "censored_unknown", "exact", "p_up_topk", "p_down_topk",
                  "p_unknown_topk", "censored_up_topk", "censored_down_topk", "censored_unknown_topk", "censoring_bound",
                  "approximated", "n_samples", "cache_key")
"""data/derived/recall.parquet (protocol Step 2)."""
MINKPROB_COLUMNS = ("row_id", "lap_mink", "lap_minkpp", "lap_gapk", "lap_zlib", "lap_loss", "lap_ref", "n_tokens",
                    "n_lowest", "moments_top_k", "cache_key")
"""data/derived/minkprob.parquet: every LAP measure of the Min-K% pass (signals/measures; paper eq. 1 first), the
scored tokens, |S_K| and the top-k behind the next-token moments (0: the whole vocabulary)."""
PANEL_LABELS = {
    "row_id": "Row identifier (preserved from the input)",
    "entity_id": "Entity identifier",
    "entity_name": "Entity name",
    "ticker": "Ticker",
    "text_date": "Date of the text",
    "target_date": "Realization date of the outcome",
    "outcome": "Realized outcome Y (larger = up)",
    "mu_hat": "LLM forecast from the label map (Step 1)",
    "parsed": "Forecast response parsed to a label",
    "p_first": "Probability of the first generated token",
    "confidence": "Self-reported confidence of the forecast",
    "p_up": "Recall P(up) (Step 2)",
    "p_down": "Recall P(down) (Step 2)",
    "p_unknown": "Recall P(unknown) (Step 2)",
    "ud": "Recalled direction P(up) - P(down)",
    "ud_dir": "Recalled direction (P(up) - P(down)) / (P(up) + P(down))",
    "residual_mass": "1 - P(up) - P(down) - P(unknown)",
    "lap_recall": "LAP, recall: P(up) + P(down)",
    "lap_approximated": "Recall LAP approximated by sampling (Step 2 fallback)",
    "lap_mink": "LAP, Min-K% prob (paper eq. 1)",
    "lap_minkpp": "LAP, Min-K%++ (Zhang et al. 2024)",
    "lap_gapk": "LAP, Gap-K% (Kwak and Kim 2026)",
    "lap_zlib": "LAP, zlib ratio: mean log-prob / zlib bytes",
    "lap_loss": "LAP, loss: exp(mean token log-prob)",
    "lap_ref": "LAP, log Min-K% minus the reference model's",
    "moments_top_k": "Next-token moments from the top-k (0: whole vocabulary)",
    "lap": "LAP used in estimation",
    "entity_num": "Entity id (integer)",
    "period_num": "Realization period id (integer)",
    "date_num": "Target date id (integer; second cluster of cluster(entity_num date_num))",
    "period": "Realization period",
    "post": "Target date after the cutoff (after the release date when set)",
    "release_gap": "Target date between cutoff and release date (neither sample)",
    "lap_exact": "Recall label probabilities exact (full distribution)",
    "censoring_bound": "Largest probability of a token outside the recall top-k",
    "high_lap": "LAP above the sample median",
}
"""data/derived/panel.parquet's columns (protocol Step 3) with their Stata variable labels (panel_pre/post.dta)."""
RESULT_COLUMNS = ("run_id", "approximated")
"""Columns the estimate and report stages add to results tables (lapbias/stage.py, lapbias/approximation.py)."""
DERIVED = tuple(dict.fromkeys(column for column in (*FORECAST_COLUMNS, *RECALL_COLUMNS, *MINKPROB_COLUMNS,
                                                    *PANEL_LABELS, *RESULT_COLUMNS) if column not in ORDER))
"""Every column a later stage writes beside the input's (the union of the files above): an input column of one of
these names would be shadowed in the panel (a merge makes censoring_bound_x / _y) or overwritten (release_gap), so
validation refuses it. Derived from the files' column lists, which the stages build their files from."""
