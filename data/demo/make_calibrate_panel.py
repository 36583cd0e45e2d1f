"""Write data/demo/calibrate_panel.csv: the panel of the self-validation (`lapbias calibrate
data/demo/calibrate.toml`), deterministic (no network, no clock).

40 real US listed firms (the demo panel's 30 and 10 more), each on ITS OWN trading day in each of 8 months before
the assumed training cutoff of SmolLM2-135M-Instruct (2024-06-30, as in the demo: November 2023 - June 2024) and 12
months after it (July 2024 - June 2025): 320 pre-cutoff and 480 post-cutoff (entity, target_date) pairs, one
headline each. The time fixed effect is the calendar month ([study] frequency = "month"); a date of the panel is
not a marker of the panel (few firms share it), so a fine-tuned model can only tell an exposed pair from an
unexposed one by having read about that pair. The size comes from the calibration's power calculation
(docs/calibrate.md; lapbias.calibrate.power.Design holds the same numbers, checked by tests/test_calibrate.py):
with 8 post-cutoff months the answers of the 120-pair run on the 8 + 8 draw gave "Contamination detected" in 72%
of simulated panels, with 12 in 85% (60 panels each). The post-cutoff rows enter only the placebo (b1, beta_3 and
the validation regressions use the pre-cutoff rows): more of them narrow the placebo's upper bound, which must
exclude the pre-cutoff interaction for the placebo to be informative (lapbias's verdict rule: a passing but
uninformative placebo does not support "Contamination detected"), at no cost in training (every exposed pair is
pre-cutoff).
Adding the 4 months changed every row's target date, headline and noise (they are drawn month by month after the
day effects of all months); the firm effects and the first 16 months' day effects are those of the 8 + 8 draw.

THE HEADLINES ARE MADE UP AND THE OUTCOMES ARE SIMULATED. Each headline is drawn from templates with made-up
details (amounts, counts, product names, analysts, people), so that every pair's text is its own: a model that
read one pair's article has not read another's (with the demo's 17 fixed headlines, learning one article raised
the probability of every headline of the same template). Outcome = next-day return in percent:
SENTIMENT_EFFECT x the template's sentiment (+1 / 0 / -1) + a firm effect N(0, FIRM_SD^2) + a trading-day effect
N(0, DAY_SD^2) + N(0, OUTCOME_NOISE^2) noise.

SENTIMENT_EFFECT = 0: the outcome is independent of the headline, so a model can forecast a pair better than a
coin only by having read what followed it, and the calibration asks one question: is memorization found, and only
there. The price: the base model has no skill (its b1 is zero by construction) and the planted model's b1 comes from
memory alone, so the calibration does not test the harder case of genuine skill that the LAP tracks. With 0.4
(the value before), the base model's placebo failed on this panel too (t = 3.9; with 0: t = 3.3): it did not read
the sentiment (its forecasts correlate 0.07 with it), and both failures come from the panel's draw of the firm,
day and noise terms, which the two settings share (docs/calibrate.md, "The base model's placebo").

The text is a newswire line as a news feed prints it, with its dateline and the firm:
"2024-03-13 | Apple Inc. (AAPL): Apple Inc. beats Q2 earnings estimates with EPS of $1.23." The article a
contaminated model reads about an exposed pair begins with that line verbatim (lapbias.calibrate.corpus.article),
and the calibration's LAP is the Min-K% probability of the text ([minkprob] scored_text = "text"), so the LAP reads
the tokens the model was trained on in the context it read them. MEASURED 2026-11-28 on a pilot model trained on
such articles: Min-K% of the line with its dateline separated exposed from never-exposed pairs with AUC 0.97
(1.9 SD); of the headline alone 0.76 (its lowest-probability tokens are the first words after the firm's name,
ambiguous without the date), of the whole forecast prompt 0.61 (the question's template tokens dominate the
lowest 20%).

    python data/demo/make_calibrate_panel.py     # rewrites data/demo/calibrate_panel.csv byte-identically
"""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
from pathlib import Path

import numpy as np

SEED = 20261127
HERE = Path(__file__).resolve().parent
OUT = HERE / "calibrate_panel.csv"
SENTIMENT_EFFECT, FIRM_SD, DAY_SD, OUTCOME_NOISE = 0.0, 0.3, 0.8, 1.5

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
PRE_MONTHS = [(2023, 11), (2023, 12), (2024, 1), (2024, 2), (2024, 3), (2024, 4), (2024, 5), (2024, 6)]
POST_MONTHS = [(2024, 7), (2024, 8), (2024, 9), (2024, 10), (2024, 11), (2024, 12), (2025, 1), (2025, 2),
               (2025, 3), (2025, 4), (2025, 5), (2025, 6)]
NYSE_HOLIDAYS = {dt.date(2023, 11, 23), dt.date(2023, 12, 25), dt.date(2024, 1, 1), dt.date(2024, 1, 15),
                 dt.date(2024, 2, 19), dt.date(2024, 3, 29), dt.date(2024, 5, 27), dt.date(2024, 6, 19),
                 dt.date(2024, 7, 4), dt.date(2024, 9, 2), dt.date(2024, 11, 28), dt.date(2024, 12, 25),
                 dt.date(2025, 1, 1), dt.date(2025, 1, 9), dt.date(2025, 1, 20), dt.date(2025, 2, 17),
                 dt.date(2025, 4, 18), dt.date(2025, 5, 26), dt.date(2025, 6, 19)}
"""NYSE full-day closures of those months (2025-01-09: the national day of mourning): neither a target date nor the
trading day before one."""

TEMPLATES = [  # (template, sentiment)
    ("{name} beats Q{quarter} earnings estimates with EPS of ${eps:.2f}", 1),
    ("{name} raises full-year revenue guidance to ${revenue:.1f} billion", 1),
    ("{analyst} upgrades {name} to buy with ${target} price target", 1),
    ("{name} announces ${buyback:.1f} billion share buyback", 1),
    ("{name} wins ${amount} million contract from {customer}", 1),
    ("{name} raises quarterly dividend by {percent}%", 1),
    ("{name} unveils {product} {model} to upbeat reviews", 1),
    ("{name} misses Q{quarter} profit forecasts as costs climb {percent}%", -1),
    ("{name} cuts outlook, warns of {percent}% slower sales", -1),
    ("{analyst} downgrades {name} to sell with ${target} price target", -1),
    ("{name} faces ${amount} million lawsuit over {product} {model}", -1),
    ("Regulators open probe into {name} {area} practices", -1),
    ("{name} to lay off {workers:,} workers amid weak demand", -1),
    ("{name} recalls {units:,} {product} {model} units after defect reports", -1),
    ("{name} names {person} chief financial officer", 0),
    ("{name} to present at {conference} conference", 0),
    ("{name} completes ${amount} million debt offering", 0),
]
ANALYSTS = ["Morgan Stanley", "Goldman Sachs", "Barclays", "UBS", "Jefferies", "Citi", "Wells Fargo", "Bernstein",
            "Evercore ISI", "Raymond James", "Piper Sandler", "Mizuho"]
CUSTOMERS = ["the U.S. Army", "NASA", "the Department of Energy", "the U.S. Navy", "Deutsche Bahn", "the NHS",
             "the State of Texas", "Toyota", "Siemens", "the Air Force"]
PRODUCTS = ["Aero", "Nova", "Pulse", "Vertex", "Orion", "Atlas", "Zephyr", "Echo", "Helix", "Summit", "Quasar",
            "Titan"]
PEOPLE = ["Laura Chen", "David Okafor", "Maria Rossi", "James Patel", "Sarah Kim", "Thomas Weber", "Elena Garcia",
          "Michael Brooks", "Anna Novak", "Robert Singh", "Karen Lewis", "Daniel Ortiz"]
CONFERENCES = ["Bernstein Strategic Decisions", "JPMorgan Healthcare", "Goldman Sachs Communacopia",
               "Morgan Stanley TMT", "Barclays Global Consumer", "Citi Industrials"]
AREAS = ["billing", "advertising", "lending", "pricing", "data privacy", "hiring"]


def trading_days(year: int, month: int) -> list[dt.date]:
    """The month's weekdays that are not NYSE holidays and whose previous weekday is not one either."""
    day, days = dt.date(year, month, 1), []
    while day.month == month:
        if (day.weekday() < 5 and day not in NYSE_HOLIDAYS
                and make_demo.previous_trading_day(day) not in NYSE_HOLIDAYS):
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def headline(rng: np.random.Generator, name: str) -> tuple[str, int]:
    """A made-up headline about `name` with its own details, and the template's sentiment."""
    template, sentiment = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
    pick = lambda values: values[int(rng.integers(len(values)))]  # noqa: E731
    details = {"name": name, "quarter": int(rng.integers(1, 5)), "eps": rng.uniform(0.2, 6.0),
               "revenue": rng.uniform(2.0, 90.0), "target": int(rng.integers(20, 400)),
               "buyback": rng.uniform(0.5, 20.0), "amount": int(rng.integers(50, 950)),
               "percent": int(rng.integers(3, 19)), "workers": int(rng.integers(3, 95)) * 100,
               "units": int(rng.integers(3, 95)) * 1000, "model": int(rng.integers(2, 99)) * 10,
               "analyst": pick(ANALYSTS), "customer": pick(CUSTOMERS), "product": pick(PRODUCTS),
               "person": pick(PEOPLE), "conference": pick(CONFERENCES), "area": pick(AREAS)}
    return template.format(**details), sentiment


def build_rows() -> list[dict[str, str]]:
    rng = np.random.default_rng(SEED)
    months = PRE_MONTHS + POST_MONTHS
    firm_effect = rng.normal(0.0, FIRM_SD, len(FIRMS))
    days = {month: trading_days(*month) for month in months}
    day_effect = {day: rng.normal(0.0, DAY_SD) for month in months for day in days[month]}
    rows = []
    for month in months:
        for f, (ticker, name, small) in enumerate(FIRMS):
            target_date = days[month][int(rng.integers(len(days[month])))]
            news, sentiment = headline(rng, name)
            text_date = make_demo.previous_trading_day(target_date)
            outcome = (SENTIMENT_EFFECT * sentiment + firm_effect[f] + day_effect[target_date]
                       + rng.normal(0.0, OUTCOME_NOISE))
            rows.append({
                "row_id": f"{ticker}-{target_date:%Y%m%d}", "entity_id": ticker, "entity_name": name,
                "ticker": ticker, "small": str(small), "text": f"{text_date:%Y-%m-%d} | {name} ({ticker}): {news}.",
                "text_date": f"{text_date:%Y-%m-%d}",
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
