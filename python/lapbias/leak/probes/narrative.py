"""Variant B (App. O): a short narrative; the committed number is extracted from the prose (parse.py: the mean of
the numbers written with the unit, as the authors' parser reads it; `[leak] parser = "explicit_estimate"` reads
the number after "best estimate" first)."""

from __future__ import annotations

from .base import UNIT_WORDS, Item, Plan, read_value, series_items


class NarrativeProbe:
    name = "B"

    def items(self, plan: Plan) -> list[Item]:
        def prompt(row, when: str) -> str:
            return (f"Describe {row.label} in {when}. Include your best estimate of its value as a signed decimal "
                    f"{UNIT_WORDS[row.unit][0]} (use a negative sign for negative values).")

        return series_items(plan, self.name, prompt, plan.leak.narrative_tokens)

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)
