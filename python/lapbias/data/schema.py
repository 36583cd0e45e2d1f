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
    "duplicate_row": ("row_id", "a row repeating an earlier row (same entity_id, text_date, target_date, text and "
                                "outcome) under another row_id is one observation, kept once"),
}
"""Rows failing these rules are dropped and counted (protocol: "Drop failing rows and report the count")."""
DUPLICATE_KEY = ("entity_id", "text_date", "target_date", "text", "outcome")
"""What makes two rows one observation (a row exported twice under two row ids would be counted twice)."""

ONE_SIGNED_SHARE = 0.80
"""Outcome "heavily skewed toward one direction" (protocol item 5): more than 80% of non-zero outcomes share a sign."""

DERIVED = ("mu_hat", "label", "parsed", "p_first", "confidence", "response", "p_up", "p_down", "p_unknown", "ud",
           "residual_mass", "lap_recall", "lap_approximated", "lap_mink", "lap", "n_tokens", "n_lowest",
           "censored_up", "censored_down", "censored_unknown", "approximated", "n_samples", "cache_key",
           "entity_num", "period", "period_num", "post", "high_lap", "run_id")
"""Columns the later stages add (docs/contracts.md): an input column of one of these names would be shadowed
in the panel (pandas would make mu_hat_x / mu_hat_y), so validation refuses it."""
