"""Fabricated controls (App. K, O): Variant A's syntax with a series or a fund that does not exist (App. K's names by
default: four fictional factors and the fund). Asked on the first `n_control_dates` sampled pre-window dates of the
first series (none when the pre window is empty: the report says so); no truth: only the commit rate (parse rate)
is read, a memorizing model that also commits here is fabricating."""

from __future__ import annotations

from ..series import human_date
from .base import ADJECTIVES, Item, Plan, date_words, read_value, value_question


def _control_rows(plan: Plan):
    first = plan.sampled["series"].iloc[0]
    rows = plan.sampled[(plan.sampled["series"] == first) & (plan.sampled["window"] == "pre")]
    return list(rows.itertuples())[:plan.leak.n_control_dates]


def _item(variant: str, name: str, row, prompt: str, plan: Plan) -> Item:
    return Item(variant, name, name, row.date, row.period, row.window, row.frequency, row.unit, float("nan"),
                prompt, plan.leak.max_new_tokens, date_words(row))


class FabricatedSeriesProbe:
    name = "fabricated_series"

    def items(self, plan: Plan) -> list[Item]:
        return [_item(self.name, name, row, value_question(name, human_date(row.date, row.frequency), row.unit), plan)
                for name in plan.leak.fabricated_series for row in _control_rows(plan)]

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)


class FabricatedFundProbe:
    name = "fabricated_fund"

    def items(self, plan: Plan) -> list[Item]:
        fund = plan.leak.fabricated_fund
        items = []
        for row in _control_rows(plan):
            prompt = (f"What was the {ADJECTIVES[row.frequency]} net return of {fund} in "
                      f"{human_date(row.date, row.frequency)}? Answer with a signed decimal percentage (e.g., -3.12 "
                      "for a 3.12% loss, +1.50 for a 1.50% gain) and nothing else.")
            items.append(_item(self.name, fund, row, prompt, plan))
        return items

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return read_value(item, reply, truncated, parser)
