"""Variant D (App. O, J): Variant A after "Think step-by-step"; the reply is read as every value reply is (parse.py:
the authors read their Variant-D replies with the same parser, so the mean of the percentages a reasoning mentions
is its value; `[leak] parser = "explicit_estimate"` reads a "final answer: X" first)."""

from __future__ import annotations

from .base import Item, Plan, read_value, series_items, value_question


class StepwiseProbe:
    name = "D"

    def items(self, plan: Plan) -> list[Item]:
        def prompt(row, when: str) -> str:
            return (f"Think step-by-step about the historical values of {row.label}, then answer:\n"
                    + value_question(row.label, when, row.unit))

        return series_items(plan, self.name, prompt, plan.leak.stepwise_tokens)

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)
