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
}
"""Rows failing these rules are dropped and counted (protocol: "Drop failing rows and report the count")."""

ONE_SIGNED_SHARE = 0.80
"""Outcome "heavily skewed toward one direction" (protocol item 5): more than 80% of non-zero outcomes share a sign."""
