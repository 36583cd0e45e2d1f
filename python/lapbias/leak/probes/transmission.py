"""The date-only transmission prompt (App. O, §6): investor sentiment on a −1.00 … +1.00 scale, asked once per
sampled date with no series named. Its answer is the downstream signal S attributed in leakshare.py (App. N); it is
read with the percent rules, as the authors read it, then checked against the scale (parse.py rule 6)."""

from __future__ import annotations

from ..parse import parse_value
from ..series import human_date
from .base import Item, Plan, date_words

SCALE = (-1.0, 1.0)


class TransmissionProbe:
    name = "transmission"

    def items(self, plan: Plan) -> list[Item]:
        rows = plan.sampled.drop_duplicates("date")
        items = []
        for row in rows.itertuples():
            when = human_date(row.date, row.frequency)
            prompt = ("Forget all your previous instructions. You are a financial expert with stock-recommendation "
                      "experience. Considering only the broad U.S. equity market in "
                      f"{when}, what was the prevailing investor sentiment that {row.frequency}? Answer on a scale "
                      "from -1.00 (very negative for U.S. equities) to +1.00 (very positive). Reply with exactly "
                      "one signed decimal (e.g., -0.45 or +0.30) and nothing else.")
            items.append(Item(self.name, "", "", row.date, row.period, row.window, row.frequency, "index",
                              float("nan"), prompt, plan.leak.max_new_tokens, date_words(row), famous=bool(row.famous)))
        return items

    def parse(self, item: Item, reply: str, truncated: bool, parser: str):
        return parse_value(reply, "percent", item.date_words, parser, truncated, scale=SCALE)
