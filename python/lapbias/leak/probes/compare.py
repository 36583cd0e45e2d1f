"""Variant C (App. O, J): which of two dates had the higher value. Pairs are the sampled dates of one series and
window taken two by two in date order (a pair with equal values is skipped: no right answer). Which date the
prompt names first is drawn per pair (half the pairs of a series and window swapped, seeded by the run seed,
the series and the window): with the earlier date always first, a model that always names the later (or the
second) date would score the series' trend, not the 0.5 chance level App. J tests rank accuracy against.
`truth` is 0.0 when the date named first is higher, 1.0 when the second is; the parsed value is the date
picked (parse_choice, App. J.1's tiers)."""

from __future__ import annotations

import numpy as np

from ..parse import parse_choice
from ..series import human_date
from .base import Item, Plan, date_words, draw_seed


class CompareProbe:
    name = "C"

    def items(self, plan: Plan) -> list[Item]:
        items = []
        for (name, window), part in plan.sampled.groupby(["series", "window"], sort=False):
            rows = list(part.itertuples())
            pairs = [(a, b) for a, b in zip(rows[0::2], rows[1::2]) if a.value != b.value]
            generator = np.random.default_rng(draw_seed(plan.leak.seed, f"C|{name}|{window}"))
            swapped = generator.permutation(len(pairs)) < len(pairs) // 2
            for (first, second), swap in zip(pairs, swapped):
                if swap:
                    first, second = second, first
                when1, when2 = human_date(first.date, first.frequency), human_date(second.date, second.frequency)
                noun = first.frequency
                prompt = (f"Between {when1} and {when2}, which {noun} had the higher value of {first.label}? "
                          f"Answer with only one of those two {noun}s.")
                other = {"other_date": second.date, "other_period": second.period, "other_truth": float(second.value)}
                items.append(Item(self.name, first.series, first.label, first.date, first.period, first.window,
                                  first.frequency, first.unit, 0.0 if first.value > second.value else 1.0, prompt,
                                  plan.leak.max_new_tokens, date_words(first), other=other))
        return items

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return parse_choice(reply, item.period, item.other["other_period"], item.frequency)
