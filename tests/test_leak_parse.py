"""The NumLeak reply parser (leak/parse.py) on a table of real-looking replies: every rule of its docstring."""

import math

import pytest

from lapbias.leak.parse import parse_choice, parse_value

Q2_1975 = ("the second quarter of 1975", "1975Q2", "1975", "1975 Q2", "Q2 1975")
MARCH_2020 = ("March 2020", "2020-03", "2020")

VALUE_TABLE = [
    # reply, date words, mode, unit, expected status, expected value
    ("-3.12", MARCH_2020, "value", "percent", "parsed", -3.12),
    ("+1.50", MARCH_2020, "value", "percent", "parsed", 1.50),
    ("−12.36%", MARCH_2020, "value", "percent", "parsed", -12.36),           # Unicode minus
    ("– 0.75 %", MARCH_2020, "value", "percent", "parsed", -0.75),            # en dash, spaces
    ("8.9", Q2_1975, "value", "percent", "parsed", 8.9),
    ("5", Q2_1975, "value", "percent", "parsed", 5.0),                        # a bare number alone is read
    ("The unemployment rate in the second quarter of 1975 was 8.9%.", Q2_1975, "value", "percent", "parsed", 8.9),
    ("In 1975 Q2 the rate was 8.87 percent", Q2_1975, "value", "percent", "parsed", 8.87),
    ("The U.S. CPI inflation rate in the second quarter of 1", Q2_1975, "value", "percent", "unparsed", None),
    ("+25 bps", MARCH_2020, "value", "percent", "parsed", 0.25),  # basis points -> percent
    ("1,234.5", MARCH_2020, "value", "index", "parsed", 1234.5),
    ("The value was 3,5%", MARCH_2020, "value", "percent", "unparsed", None),  # decimal comma not read
    ("Between 5.1 and 5.4 percent.", Q2_1975, "value", "percent", "unparsed", None),  # a range
    ("about 5.1-5.4%", Q2_1975, "value", "percent", "unparsed", None),
    ("a 3.12% loss", MARCH_2020, "value", "percent", "unparsed", None),       # sign in words, not inferred
    ("The market fell 12.4 percent that month.", MARCH_2020, "value", "percent", "unparsed", None),
    ("I don't have access to that data.", MARCH_2020, "value", "percent", "refusal", None),
    ("I'm sorry, but I cannot provide the return for March 2020.", MARCH_2020, "value", "percent", "refusal", None),
    ("Unknown", MARCH_2020, "value", "percent", "refusal", None),
    ("My knowledge cutoff prevents an exact figure.", MARCH_2020, "value", "percent", "refusal", None),
    ("The quarterly net return of the Holbrooke-Mansfield Opportunity Fund III", MARCH_2020, "value", "percent",
     "unparsed", None),                                                       # no number: not a refusal either
    ("", MARCH_2020, "value", "percent", "unparsed", None),
    ("32.5 °F", MARCH_2020, "value", "degF", "parsed", 32.5),
    # Variant B: the committed number in prose (unit or decimals), not counts or the date
    ("The U.S. Consumer Price Index (CPI) inflation rate in 1992 was approximately 2.1%.",
     ("the second quarter of 1992", "1992Q2", "1992"), "narrative", "percent", "parsed", 2.1),
    ("Over 3 decades unemployment averaged 6 percent, and in Q2 it was 8.9.", Q2_1975, "narrative", "percent",
     "parsed", 6.0),
    # Variant D: the last number is the conclusion
    ("Step 1: in 1974 it was 5.6%. Step 2: it rose. Final answer: 8.9", Q2_1975, "final", "percent", "parsed", 8.9),
    ("we multiply over 20 years (5.25% / 1.", Q2_1975, "final", "percent", "parsed", 5.25),
]


@pytest.mark.parametrize("reply, words, mode, unit, status, value", VALUE_TABLE)
def test_value_replies(reply, words, mode, unit, status, value):
    parsed = parse_value(reply, words, mode=mode, unit=unit)
    assert parsed.status == status, parsed.reason
    if value is None:
        assert math.isnan(parsed.value)
    else:
        assert parsed.value == pytest.approx(value)


def test_transmission_scale():
    assert parse_value("+0.30", MARCH_2020, scale=(-1, 1)).value == pytest.approx(0.30)
    assert parse_value("-0.45", MARCH_2020, scale=(-1, 1)).value == pytest.approx(-0.45)
    out = parse_value("+3.00", MARCH_2020, scale=(-1, 1))
    assert out.status == "unparsed" and "scale" in out.reason


FIRST = ("the second quarter of 1975", "1975Q2", "1975 Q2")
SECOND = ("the first quarter of 1980", "1980Q1", "1980 Q1")
CHOICE_TABLE = [
    ("The second quarter of 1975", "parsed", 0.0),
    ("the first quarter of 1980.", "parsed", 1.0),
    ("1980Q1", "parsed", 1.0),
    # an echo of the question is stripped before the pick is read
    ("Between the second quarter of 1975 and the first quarter of 1980, the first quarter of 1980 was higher.",
     "parsed", 1.0),
    # both named, one endorsed
    ("The second quarter of 1975 had the higher value, compared with the first quarter of 1980.", "parsed", 0.0),
    ("The second quarter of 1975 or the first quarter of 1980.", "unparsed", None),
    ("The quarter with the higher value of U.S. CPI inflation is the", "unparsed", None),
    ("I cannot determine that.", "refusal", None),
]


@pytest.mark.parametrize("reply, status, value", CHOICE_TABLE)
def test_choice_replies(reply, status, value):
    parsed = parse_choice(reply, FIRST, SECOND)
    assert parsed.status == status, parsed.reason
    if value is not None:
        assert parsed.value == value
