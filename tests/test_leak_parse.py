"""The NumLeak reply parser (leak/parse.py).

1. The regression table: 512 replies of the Anthropic models released with the NumLeak paper (public repository
   akotawala10/NumLeak_ICML2026, MIT licence; tests/fixtures/README.md names the files), each with the decision
   of the authors' reference parser factor_leak/parse.py, the parser behind the paper's tables. lapbias's default
   parser must make the same decision on every one.
2. Each rule of the module docstring on a reply written for it, including the rules the authors' parser has not
   (a number cut off at the length limit, the transmission scale, the other units) and the explicit_estimate option.
"""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from lapbias.leak.parse import parse_choice, parse_value

FIXTURE = Path(__file__).parent / "fixtures" / "numleak_anthropic_replies.jsonl"
TABLE = [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def decision(row: dict, parser: str = "paper") -> str:
    """lapbias's decision written as the fixture writes the authors': repr of the value, the month picked, or ""."""
    if row["variant"] == "C":
        picked = parse_choice(row["reply"], row["date"], row["date2"], "month")
        return "" if not picked.parsed else (row["date"] if picked.value == 0 else row["date2"])
    stamp = pd.Timestamp(row["date"] + "-01")
    words = (f"{stamp:%B %Y}", row["date"], str(stamp.year))
    value = parse_value(row["reply"], row.get("unit", "percent"), words, parser, row.get("truncated", False))
    return repr(value.value) if value.parsed else ""


def test_the_table_is_the_vendored_one():
    assert len(TABLE) == 512 and FIXTURE.stat().st_size < 400_000
    assert {row["variant"] for row in TABLE} == {"A", "B", "C", "D", "E", "fabricated_series", "fabricated_fund",
                                                 "transmission"}
    assert {row["model"] for row in TABLE} == {"claude-opus-4.7", "claude-sonnet-4.6", "claude-haiku-4.5"}
    assert sum(row["authors"] != "" for row in TABLE) > 300 and sum(row["truncated"] for row in TABLE) > 50


@pytest.mark.parametrize("source", sorted({row["source"] for row in TABLE}))
def test_same_decision_as_the_authors_parser(source):
    rows = [row for row in TABLE if row["source"] == source]
    differ = [(row["reply"][:80], row["authors"], decision(row)) for row in rows if decision(row) != row["authors"]]
    assert not differ, f"{len(differ)} of {len(rows)} replies of {source} differ: {differ[:3]}"


def test_explicit_estimate_changes_only_narrative_replies():
    changed = [row for row in TABLE if decision(row, "explicit_estimate") != row["authors"]]
    assert changed and {row["variant"] for row in changed} == {"B"}


MARCH_2020 = ("March 2020", "2020-03", "2020")
Q2_1975 = ("the second quarter of 1975", "1975Q2", "1975", "1975 Q2", "Q2 1975")

VALUE_TABLE = [
    # reply, unit, date words, parser, truncated, expected status, expected value
    ("-3.12", "percent", MARCH_2020, "paper", False, "parsed", -3.12),
    ("+1.50", "percent", MARCH_2020, "paper", False, "parsed", 1.50),
    ("−12.36%", "percent", MARCH_2020, "paper", False, "parsed", -12.36),            # Unicode minus
    ("– 0.75 %", "percent", MARCH_2020, "paper", False, "parsed", 0.75),              # a sign apart is not read
    ("+25 bps", "percent", MARCH_2020, "paper", False, "parsed", 0.25),               # basis points -> percent
    ("between -5% and -3%", "percent", MARCH_2020, "paper", False, "parsed", -4.0),  # mentions averaged
    ("a 3.12% loss", "percent", MARCH_2020, "paper", False, "parsed", 3.12),          # sign words are not read
    ("The market fell 12.4 percent in March 2020, its worst month since October 2008.", "percent", MARCH_2020,
     "paper", False, "parsed", 12.4),
    ("1975: 8.9", "percent", Q2_1975, "paper", False, "unparsed", None),              # first bare number 1975 > 100
    ("The rate was 8.9 in the second quarter of 1975 per BLS", "percent", Q2_1975, "paper", False, "unparsed",
     None),                                                                             # over 30 characters, no %
    ("I don't have access to data from February 2026, as my knowledge cutoff is early 2025.\n\n-999.99",
     "percent", MARCH_2020, "paper", False, "refusal", None),                         # a sentinel stays a refusal
    ("-999.99", "percent", MARCH_2020, "paper", False, "unparsed", None),              # beyond the bound
    ("I don't know.", "percent", MARCH_2020, "paper", False, "refusal", None),
    ("The quarterly net return of the Holbrooke-Mansfield Opportunity Fund III", "percent", MARCH_2020, "paper",
     False, "unparsed", None),
    ("", "percent", MARCH_2020, "paper", False, "unparsed", None),
    # the length limit: a bare number running to the end of a cut reply is not a value
    ("-0.", "percent", MARCH_2020, "paper", True, "unparsed", None),
    ("-0.", "percent", MARCH_2020, "paper", False, "parsed", -0.0),
    ("-0.7", "percent", MARCH_2020, "paper", True, "unparsed", None),
    ("-0.75\n\nNote", "percent", MARCH_2020, "paper", True, "parsed", -0.75),
    # other units: their unit words, their bound, the date words removed before a bare number
    ("32.5 °F", "degF", MARCH_2020, "paper", False, "parsed", 32.5),
    ("The contiguous U.S. averaged about 41.2 degrees Fahrenheit that month.", "degF", MARCH_2020, "paper", False,
     "parsed", 41.2),
    ("1975 Q2: 104.2", "index", Q2_1975, "paper", False, "parsed", 104.2),
    ("1,234.5", "index", MARCH_2020, "paper", False, "parsed", 1234.5),                # thousands read (not percent)
    ("1,234.5", "percent", MARCH_2020, "paper", False, "parsed", 1.0),                 # the authors' number pattern
    # the option: an explicit commitment first
    ("Dow falling approximately 22.6% in a single day. Best estimate: approximately -23%", "percent", MARCH_2020,
     "paper", False, "parsed", (22.6 - 23) / 2),
    ("Dow falling approximately 22.6% in a single day. Best estimate: approximately -23%", "percent", MARCH_2020,
     "explicit_estimate", False, "parsed", -23.0),
    ("My best estimate for March 2020 is -13.4%.", "percent", MARCH_2020, "explicit_estimate", False, "parsed",
     -13.4),                                                                            # the date is not the estimate
    ("Mostly flat, 2.1% up; final answer: +1.9", "percent", MARCH_2020, "explicit_estimate", False, "parsed", 1.9),
]


@pytest.mark.parametrize("reply, unit, words, parser, truncated, status, value", VALUE_TABLE)
def test_value_replies(reply, unit, words, parser, truncated, status, value):
    parsed = parse_value(reply, unit, words, parser, truncated)
    assert parsed.status == status, parsed.reason
    if value is None:
        assert math.isnan(parsed.value)
    else:
        assert parsed.value == pytest.approx(value, abs=1e-12)


def test_transmission_scale():
    assert parse_value("+0.30", scale=(-1, 1)).value == pytest.approx(0.30)
    out = parse_value("+3.00", scale=(-1, 1))
    assert out.status == "unparsed" and "scale" in out.reason


CHOICE_TABLE = [
    # reply, first period, second period, frequency, status, value (0 = the first date picked)
    ("March 2020.", "2020-03", "2008-10", "month", "parsed", 0.0),                      # only one mentioned
    ("Between March 2020 and October 2008, October 2008 was higher.", "2020-03", "2008-10", "month", "parsed",
     1.0),                                                                               # an echo: the last mention
    ("October 2008 was higher than March 2020.", "2020-03", "2008-10", "month", "parsed", 1.0),  # leading answer
    ("Looking at both, March 2020 saw the COVID crash while October 2008 ... my answer is March 2020", "2020-03",
     "2008-10", "month", "parsed", 0.0),                                                 # strong endorsement
    ("I don't have reliable data for March 2020 or October 2008.", "2020-03", "2008-10", "month", "refusal", None),
    ("I don't have reliable data, but my answer is October 2008 rather than March 2020.", "2020-03", "2008-10",
     "month", "parsed", 1.0),                                                            # refusal words + endorsement
    ("Neither month stands out.", "2020-03", "2008-10", "month", "unparsed", None),
    ("The second quarter of 1975", "1975Q2", "1980Q1", "quarter", "parsed", 0.0),
    ("Q1 1980 had the higher value; the second quarter of 1975 was lower", "1975Q2", "1980Q1", "quarter", "parsed",
     1.0),
    ("1980Q1", "1975Q2", "1980Q1", "quarter", "parsed", 1.0),
]


@pytest.mark.parametrize("reply, first, second, frequency, status, value", CHOICE_TABLE)
def test_choice_replies(reply, first, second, frequency, status, value):
    parsed = parse_choice(reply, first, second, frequency)
    assert parsed.status == status, parsed.reason
    if value is not None:
        assert parsed.value == value


def test_a_value_made_of_the_prompts_own_numbers_is_an_echo():
    from lapbias.leak.parse import prompt_echo

    prompt = ("What was U.S. CPI inflation in the second quarter of 1975? Answer with a single signed decimal "
              "percentage (e.g., -0.75 for -0.75%, +5.25 for 5.25%) and nothing else.")
    assert prompt_echo(parse_value("The U.S. CPI inflation rate in the second quarter of 1975 was -0.75%."), prompt)
    assert prompt_echo(parse_value("It was -0.75% - 5.25% ="), prompt)                # the example's numbers mixed
    assert not prompt_echo(parse_value("It was 7.48%."), prompt)
    assert not prompt_echo(parse_value("I don't know."), prompt)


def test_a_number_the_rules_do_not_read_is_flagged():
    # the bundled model's reply to App. K's first name: a number, but bare in a reply over 30 characters (rule 3):
    # unparsed, as the authors' parser leaves it, and flagged as an answer the rules do not read
    from lapbias.leak.parse import unread_numbers

    name = "the Gleason-Zeta volatility-conditioned residual factor"
    words = ("the second quarter of 1968", "1968Q2", "1968", "1968 Q2", "Q2 1968")
    reply = "The Gleason-Zeta volatility-conditioned residual factor is -0.75."
    parsed = parse_value(reply, "percent", words)
    assert parsed.status == "unparsed" and unread_numbers(parsed, reply, words + (name,), False) == (-0.75,)
    fund = "the Holbrooke-Mansfield Opportunity Fund III (2007 vintage)"            # the name's and date's numbers
    reply = "The quarterly net return of the Holbrooke-Mansfield Opportunity Fund III (2007 vintage) in the second"
    assert unread_numbers(parse_value(reply, "percent", words), reply, words + (fund,), True) == ()
    reply = "The return of the Holbrooke-Mansfield Opportunity Fund III (2007 vintage) in 1968 was -0."
    assert unread_numbers(parse_value(reply, "percent", words), reply, words + (fund,), True) == ()   # cut off
    assert unread_numbers(parse_value(reply, "percent", words), reply, words + (fund,), False) == (-0.0,)
    for read in ("It was -0.75%.", "I don't have data for that month; -999.99"):                  # parsed, refusal
        assert unread_numbers(parse_value(read, "percent", words), read, words, False) == ()
    reply = "I need to recall the Fama-French 5-factor returns for 1968; the selloff of May 24, 1970-1971 ..."
    assert unread_numbers(parse_value(reply, "percent", words), reply, words, True) == ()    # a count, a day, a range
    reply = "Thinking about it, the value was close to +1.9 or 2.41, I believe."
    assert unread_numbers(parse_value(reply, "percent", words), reply, words, False) == (1.9, 2.41)
