"""Variant E (App. O, J): Variant A at temperature 1, `n_draws` independent draws per date (the paper: two), each
with a fixed seed derived from the run seed and the query (base.draw_seed), so a rerun draws the same answers."""

from __future__ import annotations

import dataclasses

from .base import Item, Plan, draw_seed, read_value, series_items, value_question


class SampledProbe:
    name = "E"

    def items(self, plan: Plan) -> list[Item]:
        base = series_items(plan, self.name, lambda row, when: value_question(row.label, when, row.unit),
                            plan.leak.max_new_tokens, temperature=1.0)
        items = []
        for item in base:
            for draw in range(plan.leak.n_draws):
                drawn = dataclasses.replace(item, draw=draw)
                items.append(dataclasses.replace(drawn, seed=draw_seed(plan.leak.seed, drawn.query_id)))
        return items

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)
