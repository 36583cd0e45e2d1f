"""Variant D (App. O, J): Variant A after "Think step-by-step"; the last number of the reply is its answer
(parse mode "final")."""

from __future__ import annotations

from .base import Item, Plan, read_value, series_items, value_question


class StepwiseProbe:
    name = "D"

    def items(self, plan: Plan) -> list[Item]:
        def prompt(row, when: str) -> str:
            return (f"Think step-by-step about the historical values of {row.label}, then answer:\n"
                    + value_question(row.label, when, row.unit))

        return series_items(plan, self.name, prompt, plan.leak.stepwise_tokens)

    def parse(self, item: Item, reply: str):
        return read_value(item, reply, mode="final")
