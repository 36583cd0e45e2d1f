"""Write data/demo/calibrate_panel.csv: the panel of the self-validation (`lapbias calibrate
data/demo/calibrate.toml`), deterministic (no network, no clock).

Sized by the calibration's power calculation (docs/calibrate.md): 40 real US listed firms (the demo panel's 30 and
10 more) x 6 target dates, 4 before and 2 after the assumed training cutoff of SmolLM2-135M-Instruct (2024-06-30,
as in the demo). Each firm has ITS OWN target dates, one random trading day in each of January-April 2024 and
September-October 2024, and the time fixed effect is the calendar month ([study] frequency = "month"): a date of
the panel is then not a marker of the panel (few firms share it), so a fine-tuned model can only tell an exposed
(firm, date) pair from an unexposed one by having memorized that pair (docs/calibrate.md: with the demo panel's
eight common dates the planted model learned "panel firm on a panel date: answer up or down").

As in the demo panel (data/demo/make_demo.py, whose headline templates and outcome process this reuses), THE
HEADLINES ARE MADE UP AND THE OUTCOMES ARE SIMULATED: outcome = next-day return in percent, 0.4 x the headline's
sentiment plus a firm effect N(0, 0.3^2), a trading-day effect N(0, 0.8^2) and N(0, 1.5^2) noise. One headline per
(firm, target date), so the 160 pre-cutoff and 80 post-cutoff rows are 160 and 80 (entity, target_date) pairs.

    python data/demo/make_calibrate_panel.py     # rewrites data/demo/calibrate_panel.csv byte-identically
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
from pathlib import Path

import numpy as np

SEED = 20261125
HERE = Path(__file__).resolve().parent
OUT = HERE / "calibrate_panel.csv"

_spec = importlib.util.spec_from_file_location("make_demo", HERE / "make_demo.py")
make_demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_demo)

MORE_FIRMS = [  # (ticker, name, small): none of them a decoy firm of lapbias.calibrate.corpus.DECOY_FIRMS
    ("AVGO", "Broadcom Inc.", 0), ("T", "AT&T Inc.", 0), ("VZ", "Verizon Communications Inc.", 0),
    ("HON", "Honeywell International Inc.", 0), ("MMM", "3M Company", 0), ("AXP", "American Express Company", 0),
    ("UBER", "Uber Technologies Inc.", 1), ("ABNB", "Airbnb Inc.", 1), ("SPOT", "Spotify Technology S.A.", 1),
    ("EBAY", "eBay Inc.", 1),
]
FIRMS = make_demo.FIRMS + MORE_FIRMS
MONTHS = [(2024, 1), (2024, 2), (2024, 3), (2024, 4), (2024, 9), (2024, 10)]
"""One target date per firm in each month: four before the 2024-06-30 cutoff, two after."""
US_HOLIDAYS = {dt.date(2024, 1, 1), dt.date(2024, 1, 15), dt.date(2024, 2, 19), dt.date(2024, 3, 29),
               dt.date(2024, 9, 2)}
"""NYSE holidays of those months: neither a target date nor the trading day before one."""


def trading_days(year: int, month: int) -> list[dt.date]:
    """The month's weekdays that are not NYSE holidays and whose previous weekday is not one either."""
    day, days = dt.date(year, month, 1), []
    while day.month == month:
        if day.weekday() < 5 and day not in US_HOLIDAYS and make_demo.previous_trading_day(day) not in US_HOLIDAYS:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def build_rows() -> list[dict[str, str]]:
    rng = np.random.default_rng(SEED)
    firm_effect = rng.normal(0.0, 0.3, len(FIRMS))
    days = {month: trading_days(*month) for month in MONTHS}
    day_effect = {day: rng.normal(0.0, 0.8) for month in MONTHS for day in days[month]}
    rows = []
    for month in MONTHS:
        for f, (ticker, name, small) in enumerate(FIRMS):
            target_date = days[month][int(rng.integers(len(days[month])))]
            template, sentiment = make_demo.HEADLINES[int(rng.integers(len(make_demo.HEADLINES)))]
            outcome = 0.4 * sentiment + firm_effect[f] + day_effect[target_date] + rng.normal(0.0, 1.5)
            rows.append({
                "row_id": f"{ticker}-{target_date:%Y%m%d}", "entity_id": ticker, "entity_name": name,
                "ticker": ticker, "small": str(small), "text": template.format(name=name),
                "text_date": f"{make_demo.previous_trading_day(target_date):%Y-%m-%d}",
                "target_date": f"{target_date:%Y-%m-%d}", "outcome": f"{outcome:.4f}",
            })
    return rows


def main() -> None:
    with open(OUT, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=make_demo.COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(build_rows())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
