"""Write data/demo/demo_panel.csv: the bundled, illustrative demo panel (deterministic; no network, no clock).

30 real US listed firms x 8 common trading-day target dates, 4 on each side of the assumed training cutoff of
the bundled model SmolLM2-135M-Instruct (2024-06-30: its model card gives no cutoff date; its pretraining
corpora include Common Crawl dumps through mid-2024 — an assumption). A few firm-dates are left out at random so
the panel is unbalanced, as real ones are.

THE HEADLINES ARE MADE UP FROM TEMPLATES AND THE OUTCOMES ARE SIMULATED: outcome = next-day return in percent,
0.4 x the headline's template sentiment (+1 / -1 / 0) plus a firm effect, a date effect and N(0, 1.5^2) noise.
The demo shows the machinery end to end; it is not evidence about any model or market.

Two rows are deliberately invalid so that validation shows its drop report: one with a missing outcome, one
whose target_date is before its text_date.

    python data/demo/make_demo.py     # rewrites data/demo/demo_panel.csv byte-identically
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

SEED = 20251222
OUT = Path(__file__).resolve().parent / "demo_panel.csv"

FIRMS = [  # (ticker, name, small)
    ("AAPL", "Apple Inc.", 0), ("MSFT", "Microsoft Corporation", 0), ("AMZN", "Amazon.com Inc.", 0),
    ("GOOGL", "Alphabet Inc.", 0), ("META", "Meta Platforms Inc.", 0), ("NVDA", "NVIDIA Corporation", 0),
    ("TSLA", "Tesla Inc.", 0), ("JPM", "JPMorgan Chase & Co.", 0), ("BAC", "Bank of America Corporation", 0),
    ("WMT", "Walmart Inc.", 0), ("KO", "The Coca-Cola Company", 0), ("PFE", "Pfizer Inc.", 0),
    ("XOM", "Exxon Mobil Corporation", 0), ("BA", "The Boeing Company", 0), ("INTC", "Intel Corporation", 0),
    ("DIS", "The Walt Disney Company", 0), ("NFLX", "Netflix Inc.", 0), ("NKE", "Nike Inc.", 0),
    ("MCD", "McDonald's Corporation", 0), ("CVX", "Chevron Corporation", 0),
    ("ETSY", "Etsy Inc.", 1), ("PTON", "Peloton Interactive Inc.", 1), ("ROKU", "Roku Inc.", 1),
    ("LYFT", "Lyft Inc.", 1), ("SNAP", "Snap Inc.", 1), ("PINS", "Pinterest Inc.", 1),
    ("DOCU", "DocuSign Inc.", 1), ("CHWY", "Chewy Inc.", 1),
    ("ZG", "Zillow Group Inc.", 1), ("HAS", "Hasbro Inc.", 1),
]

TARGET_DATES = [  # trading days (Tuesdays, no US market holiday on them or the Monday before)
    "2023-11-14", "2024-01-23", "2024-02-27", "2024-04-23",
    "2024-09-17", "2024-11-19", "2024-12-17", "2025-02-25",
]

HEADLINES = [  # (template, sentiment)
    ("{name} beats quarterly earnings estimates on strong demand", 1),
    ("{name} raises full-year revenue guidance", 1),
    ("Analysts upgrade {name} to buy, citing margin expansion", 1),
    ("{name} announces $5 billion share buyback", 1),
    ("{name} wins major multi-year contract", 1),
    ("{name} raises quarterly dividend by 8%", 1),
    ("{name} unveils new product line to upbeat reviews", 1),
    ("{name} misses profit forecasts as costs climb", -1),
    ("{name} cuts outlook, warns of slowing sales", -1),
    ("Analysts downgrade {name} on valuation concerns", -1),
    ("{name} faces new lawsuit over product safety", -1),
    ("Regulators open probe into {name} business practices", -1),
    ("{name} to lay off 6% of workforce amid weak demand", -1),
    ("{name} recalls products after defect reports", -1),
    ("{name} names new chief financial officer", 0),
    ("{name} to present at industry conference next week", 0),
    ("{name} completes previously announced debt offering", 0),
]

COLUMNS = ["row_id", "entity_id", "entity_name", "ticker", "small", "text", "text_date", "target_date", "outcome"]


def previous_trading_day(day: dt.date) -> dt.date:
    """The weekday before `day` (the demo's target dates are chosen so that no holiday intervenes)."""
    day -= dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day


def build_rows() -> list[dict[str, str]]:
    rng = np.random.default_rng(SEED)
    firm_effect = rng.normal(0.0, 0.3, len(FIRMS))
    date_effect = rng.normal(0.0, 0.8, len(TARGET_DATES))
    rows = []
    for d, target in enumerate(TARGET_DATES):
        target_date = dt.date.fromisoformat(target)
        for f, (ticker, name, small) in enumerate(FIRMS):
            if rng.random() < 0.03:  # an unbalanced panel: about 3% of firm-dates have no headline
                continue
            template, sentiment = HEADLINES[int(rng.integers(len(HEADLINES)))]
            outcome = 0.4 * sentiment + firm_effect[f] + date_effect[d] + rng.normal(0.0, 1.5)
            rows.append({
                "row_id": f"{ticker}-{target_date:%Y%m%d}", "entity_id": ticker, "entity_name": name,
                "ticker": ticker, "small": str(small), "text": template.format(name=name),
                "text_date": f"{previous_trading_day(target_date):%Y-%m-%d}", "target_date": target,
                "outcome": f"{outcome:.4f}",
            })
    rows.append({  # deliberately invalid: missing outcome
        "row_id": "BAD-missing-outcome", "entity_id": "AAPL", "entity_name": "Apple Inc.", "ticker": "AAPL",
        "small": "0", "text": "Apple Inc. schedules annual shareholder meeting", "text_date": "2024-02-26",
        "target_date": "2024-02-27", "outcome": "",
    })
    rows.append({  # deliberately invalid: target_date before text_date
        "row_id": "BAD-reversed-dates", "entity_id": "KO", "entity_name": "The Coca-Cola Company", "ticker": "KO",
        "small": "0", "text": "The Coca-Cola Company expands bottling partnership", "text_date": "2024-11-19",
        "target_date": "2024-11-18", "outcome": "0.3100",
    })
    return rows


def main() -> None:
    with open(OUT, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(build_rows())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
