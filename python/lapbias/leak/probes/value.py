"""Variant A (App. O): the direct value question, greedy; the primary probe of every metric (§2)."""

from __future__ import annotations

from .base import Item, Plan, read_value, series_items, value_question


class ValueProbe:
    name = "A"

    def items(self, plan: Plan) -> list[Item]:
        return series_items(plan, self.name, lambda row, when: value_question(row.label, when, row.unit),
                            plan.leak.max_new_tokens)

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)
