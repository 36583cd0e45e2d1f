"""Reply parser of the NumLeak probes (paper §2: "a parser maps the model's reply to either a number or a
refusal"; App. J.1 for the comparison variant). It reproduces the decisions of the authors' reference parser,
`factor_leak/parse.py` of the paper's public repository (akotawala10/NumLeak_ICML2026), the parser that produced
the paper's tables; docs/leak.md lists each rule with the paper's reference.

Value replies (`parse_value`; Variants A, B, D, E, the fabricated controls and the transmission prompt):
1. The text is normalized: Unicode NFKC, then the minus sign −, the en dash –, the em dash — and the hyphen ‐
   become "-".
2. Unit mentions win: every number written with the series' unit ("2.5%", "2.5 percent", "25 bps" / "25 basis
   points" read as 0.25 for a percent series) is collected, and the reply's value is their MEAN (a range
   "-5% to -3%" reads -4; a narrative that mentions several percentages reads their average). Numbers are
   `[-+]?digits[.digits]`; a sign written in words is not read ("a 3.12% loss" is +3.12).
3. Otherwise a bare number is read only from a short reply: at most 30 characters after stripping, its first
   number not touching a letter, and only when |value| <= the unit's plausibility bound (100 for percent: a
   year such as "1975" is not a return, and a refusal followed by a sentinel such as "-999.99" stays a
   refusal). Longer replies without a unit mention have no value: their numbers are years and counts.
4. No value: `refusal` when the reply declines (DECLINE), else `unparsed`; the reason says which rule.
The authors' rules are written for percent series. For the other units (our extension) the unit mentions are
°F / "degrees Fahrenheit", °C / "degrees Celsius", "points" for an index; the plausibility bounds are 150 °F,
70 °C and none for an index; thousands separators are read ("1,234.5" is 1234.5; the percent rules keep the
authors' number pattern, which reads "1"), and before the bare-number rule the probed date's own words (its period,
its year) are removed, so a short "1975 Q2: 104.2" reads 104.2. On the authors' released replies (all of them percent
series) removing the date words changes no decision (benchmarks/results/numleak_replay.md).

Two rules the authors' parser has not (both change no decision on their replies of complete answers):
5. A reply that ended at the answer-length limit (`truncated`) and whose bare number runs to the end of the
   text is `unparsed` ("cut off at the length limit"): "-0." or "-0.7" cut from "-0.75" is not a value.
6. `scale=(low, high)`: a value outside it is `unparsed` (the transmission prompt's -1.00 … +1.00 scale).

`parser="explicit_estimate"` (the option; `[leak] parser`): before rule 2, a number written right after an
explicit commitment ("best estimate", "final answer", "my estimate/answer/guess", "answer:", "estimate:") is the
value (the last such phrase when there are several), date words removed first and the unit's plausibility bound
applied; a reply without one falls back to rules 2-6. The authors' mean of all percentages reads "falling 22.6%
… Best estimate: -23%" as -0.2; this option reads -23.

Comparison replies (`parse_choice`, Variant C): App. J.1's endorsement-aware tiers, as the authors' code orders
them, with dates found in any wording of the series' frequency (month: "March 2020", "March, 2020"; quarter: "the
second quarter of 1975", "Q2 1975", "1975Q2"; year: "1975"; day and week: "3 March 2020", "March 3, 2020",
"2020-03-03"):
0. Only mentions of the two asked dates count; none: `unparsed`.
1. A refusal (REFUSAL) is `refusal` unless the reply also holds a strong endorsement (tier 3's phrases).
2. Only one of the two dates mentioned: that date.
3. Strong endorsement: the first "my answer is X", "answer: X", "I pick/choose/select X", "the answer/higher/winner
   is X", "higher return/value was in X", "had the higher return/value in X" names X when X is one of the two.
4. A reply that opens with an echo of the question ("Between", "Comparing", "Looking at", ...): the last date
   mentioned.
5. A reply whose first date mention starts within its first 5 characters: that date ("October 2008 was higher").
6. Otherwise the last date mentioned (a reasoning reply concludes with its pick).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

import pandas as pd

PARSERS = ("paper", "explicit_estimate")
"""`[leak] parser`: the authors' decisions (the default), or an explicit commitment first (module docstring)."""

_DASHES = {ord("−"): ord("-"), ord("–"): ord("-"), ord("—"): ord("-"), ord("‐"): ord("-")}
NUM = r"[-+]?\d+(?:\.\d+)?"
UNIT_MENTIONS = {
    "percent": [(re.compile(rf"({NUM})\s*%"), 1.0), (re.compile(rf"({NUM})\s*percent\b", re.IGNORECASE), 1.0),
                (re.compile(rf"({NUM})\s*(?:bps|basis\s*points?)\b", re.IGNORECASE), 0.01)],
    "degF": [(re.compile(rf"({NUM})\s*(?:°\s*F\b|°(?!\s*C)|degrees?\s+(?:fahrenheit|f)\b)", re.IGNORECASE), 1.0)],
    "degC": [(re.compile(rf"({NUM})\s*(?:°\s*C\b|°(?!\s*F)|degrees?\s+(?:celsius|centigrade|c)\b)", re.IGNORECASE),
              1.0)],
    "index": [(re.compile(rf"({NUM})\s*(?:index\s+)?points?\b", re.IGNORECASE), 1.0)],
}
"""Rule 2: (pattern, factor) per unit, in the authors' order (%, percent, then basis points / 100): the mean is
taken in this order, so it is the authors' float to the last bit."""
PLAUSIBLE = {"percent": 100.0, "degF": 150.0, "degC": 70.0, "index": math.inf}
"""Rule 3's plausibility bound on |value| per unit (percent: the authors' 100)."""
SHORT_REPLY = 30
"""Rule 3: the longest reply (characters, stripped) whose bare number is read."""
BARE = re.compile(rf"(?<![A-Za-z])({NUM})(?![A-Za-z])")
VALUE_LIKE = re.compile(r"(?<![\w.])([-+]\d+(?:\.\d+)?|\d+\.\d+)(?!\w)")
"""A number written as an answer would write it: signed or with decimals, not inside a word or a range."""
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
CUT_OFF = re.compile(r"\.?\s*$")
EXPLICIT = re.compile(
    rf"(?:best\s+estimate|final\s+answer|my\s+(?:best\s+)?(?:estimate|answer|guess)|\banswer\s*:|\bestimate\s*:)"
    rf"[^0-9+\-\n]{{0,40}}?(?<![\d.])({NUM})(?![\d.]*[A-Za-z])", re.IGNORECASE)
"""The option's commitment phrases, then up to 40 characters on the same line, then the number."""

REFUSAL = re.compile(
    r"(?:i\s+(?:do\s+not|don['’]?t|cannot|can['’]?t|am\s+not|'m\s+not|don['’]?t\s+have|do\s+not\s+have)\s+"
    r"(?:access|the|have|know|enough|specific|reliable|sufficient|exact|historical|confident|sure|precise|memorized|"
    r"memoriz|that)|no\s+access\s+to|unable\s+to|not\s+able\s+to|don['’]?t\s+have\s+access|i\s+don['’]?t\s+have"
    r"|i\s+cannot\s+(?:reliably|determine|provide|recall|answer|give)|cannot\s+reliably|would\s+require\s+access"
    r"|without\s+access|beyond\s+my\s+knowledge|outside\s+(?:of\s+)?my\s+training|i['’]?m\s+not\s+able"
    r"|i\s+can['’]?t\s+answer|i\s+need\s+to\s+be\s+(?:careful|straightforward|honest)|cannot\s+provide"
    r"|unavailable|not\s+available)",
    re.IGNORECASE,
)
"""The authors' refusal pattern (App. J.1): a comparison reply matching it is a refusal, not a pick."""
DECLINE = re.compile(
    REFUSAL.pattern + r"|can['’]?t\s+provide|\bsorry\b|not\s+(?:sure|certain)|no\s+(?:data|information|record)"
    r"|knowledge\s+cut-?off|\bunknown\b|\bn/a\b", re.IGNORECASE)
"""Rule 4: a value reply without a value is labelled `refusal` when it matches this (the authors' pattern and a few
more ways to decline); the label changes no number, only the refusal count."""

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_MONTH = "|".join(MONTHS)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_YEAR = r"(\d{4})"
DATE_MENTIONS = {
    "month": [(rf"\b({_MONTH})\b\s*,?\s*{_YEAR}", lambda m: f"{m[2]}-{MONTHS.index(m[1].title()) + 1:02d}")],
    "quarter": [(rf"\b(?:the\s+)?({'|'.join(_ORDINALS)})\s+quarter\s+(?:of\s+)?{_YEAR}",
                 lambda m: f"{m[2]}Q{_ORDINALS[m[1].lower()]}"),
                (rf"\bQ([1-4])\s*,?\s*{_YEAR}", lambda m: f"{m[2]}Q{m[1]}"),
                (rf"\b{_YEAR}\s*-?\s*Q([1-4])\b", lambda m: f"{m[1]}Q{m[2]}")],
    "year": [(rf"(?<![\d.]){_YEAR}(?![\d.])", lambda m: m[1])],
    "day": [(rf"\b(\d{{1,2}})\s+({_MONTH})\b\s*,?\s*{_YEAR}", lambda m: _day(m[3], m[2], m[1])),
            (rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*{_YEAR}", lambda m: _day(m[3], m[1], m[2])),
            (r"\b(\d{4})-(\d\d)-(\d\d)\b", lambda m: _day(m[1], int(m[2]), m[3]))],
}
"""Date mentions per frequency: (pattern, match -> the period as the probe panel writes it, e.g. "2020-03",
"1975Q2"). A week is named by a day in it (the day patterns, mapped to the week)."""
STRONG_ENDORSE = (r"(?:my\s+answer\s+is|answer\s*[:\-]|answer\s+is|i\s+(?:pick|picked|choose|chose|select)|"
                  r"the\s+(?:pick|answer|higher|winner)\s+is|higher\s+(?:return|value)\s+was\s+in|"
                  r"had\s+the\s+higher\s+(?:return|value)\s+in)\s+")
ECHO_PREFIX = re.compile(r"^\s*(between|comparing|compared\s+to|the\s+two\s+months|the\s+two\s+quarters|"
                         r"the\s+two\s+years|of\s+(?:the|these)\s+two|of\s+the\s+two\s+months|looking\s+at|"
                         r"considering)\b", re.IGNORECASE)
LEADING_ANSWER = 5
"""Tier 5: a first date mention starting within this many characters of the reply is the pick."""


def _day(year: str, month, day: str) -> str | None:
    number = month if isinstance(month, int) else MONTHS.index(month.title()) + 1
    try:
        return f"{int(year):04d}-{number:02d}-{int(day):02d}" if pd.Timestamp(int(year), number, int(day)) else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Parsed:
    """status: "parsed", "refusal" or "unparsed"; value is NaN unless parsed; reason says why not; numbers: the
    numbers of the reply the value was read from (the unit mentions averaged, or the one number)."""

    status: str
    value: float = math.nan
    reason: str = ""
    numbers: tuple[float, ...] = ()

    @property
    def parsed(self) -> bool:
        return self.status == "parsed"


def normalize(text: str | None) -> str:
    """Rule 1: NFKC, dash-like characters as "-", stripped ("" for no reply)."""
    return unicodedata.normalize("NFKC", text or "").translate(_DASHES).strip()


def _strip_dates(text: str, date_words: tuple[str, ...]) -> str:
    """The probed date's own words and its bare year, removed (for index and temperature series, rule 3)."""
    for words in sorted(date_words, key=len, reverse=True):
        if words:
            text = re.sub(re.escape(words), " ", text, flags=re.IGNORECASE)
    years = {m for words in date_words for m in re.findall(r"\b(1[5-9]\d\d|2[01]\d\d)\b", words)}
    for year in years:
        text = re.sub(rf"(?<![\d.]){year}(?:\s?Q[1-4])?(?![\d.])", " ", text)
    return text.strip()


def _none(text: str, reason: str) -> Parsed:
    return Parsed("refusal" if DECLINE.search(text) else "unparsed", reason=reason)


def parse_value(text: str | None, unit: str = "percent", date_words: tuple[str, ...] = (), parser: str = "paper",
                truncated: bool = False, scale: tuple[float, float] | None = None) -> Parsed:
    """One value reply -> Parsed (module docstring, rules 1-6 and the explicit_estimate option)."""
    stripped = normalize(text)
    if not stripped:
        return Parsed("unparsed", reason="empty reply")
    if unit != "percent":
        stripped = THOUSANDS.sub("", stripped)
    bound = PLAUSIBLE[unit]
    value, numbers = math.nan, ()
    if parser == "explicit_estimate":
        undated = _strip_dates(stripped, date_words)
        committed = [float(m[1]) for m in EXPLICIT.finditer(undated) if abs(float(m[1])) <= bound
                     and not (truncated and CUT_OFF.fullmatch(undated[m.end():]))]
        if committed:
            value, numbers = committed[-1], (committed[-1],)
    if math.isnan(value):
        hits = [float(m[1]) * factor for pattern, factor in UNIT_MENTIONS[unit] for m in pattern.finditer(stripped)]
        if hits:
            value, numbers = sum(hits) / len(hits), tuple(hits)
        elif len(stripped) > SHORT_REPLY:
            return _none(stripped, f"no number with a unit in a reply over {SHORT_REPLY} characters")
        else:
            short = stripped if unit == "percent" else _strip_dates(stripped, date_words)
            bare = BARE.search(short)
            if bare is None:
                return _none(stripped, "no number")
            if truncated and CUT_OFF.fullmatch(short[bare.end():]):
                return Parsed("unparsed", reason="number cut off at the length limit")
            value = float(bare[1])
            numbers = (value,)
            if abs(value) > bound:
                return _none(stripped, f"a bare number beyond the plausible ±{bound:g}")
    if scale is not None and not scale[0] <= value <= scale[1]:
        return Parsed("unparsed", reason=f"outside the scale {scale[0]:g} to {scale[1]:g}")
    return Parsed("parsed", value, numbers=numbers)


def prompt_echo(parsed: Parsed, prompt: str) -> bool:
    """A parsed value read only from numbers the prompt itself writes (its format example, "-0.75 for -0.75%"):
    an echo of the question, not an answer. Flagged and counted (the paper's definitions still count the value)."""
    if not parsed.parsed or not parsed.numbers:
        return False
    asked = {round(abs(float(m)), 9) for m in re.findall(NUM, normalize(prompt))}
    return all(round(abs(n), 9) in asked for n in parsed.numbers)


def unread_numbers(parsed: Parsed, text: str | None, words: tuple[str, ...], truncated: bool) -> tuple[float, ...]:
    """The values of an `unparsed` reply that the rules leave unread: a signed or decimal number (VALUE_LIKE; "-0.75",
    "+3", "2.41", not the "5" of "5-factor", a day or a count) that rule 3 does not read because the reply is over
    30 characters, or that lies beyond the plausibility bound. The series' name and the probed date's words (`words`)
    are removed first, and a number cut off at the length limit is not counted. Such a reply is no value by the
    authors' rules (it stays unparsed) but it is not a refusal: flagged and counted apart (`unread_number`), so that
    a rate of 0 is not read as a model that declines."""
    if parsed.status != "unparsed":
        return ()
    rest = _strip_dates(normalize(text), words)
    return tuple(float(m[1]) for m in VALUE_LIKE.finditer(rest)
                 if not (truncated and CUT_OFF.fullmatch(rest[m.end():])))


def date_mentions(text: str, frequency: str) -> list[tuple[int, str]]:
    """[(offset, period)] of every date the text names in the frequency's wordings, in order of appearance."""
    found = []
    for pattern, period in DATE_MENTIONS["day" if frequency == "week" else frequency]:
        for match in re.finditer(pattern, text, flags=re.IGNORECASE):
            key = period(match)
            if key and frequency == "week":
                key = str(pd.Period(key, freq="W"))
            if key:
                found.append((match.start(), key))
    return sorted(found)


def parse_choice(text: str | None, first: str, second: str, frequency: str) -> Parsed:
    """Variant C: value 0.0 = the first date (period `first`) picked, 1.0 = the second (module docstring, tiers
    0-6)."""
    reply = normalize(text)
    if not reply:
        return Parsed("unparsed", reason="empty reply")
    valid = [(offset, key) for offset, key in date_mentions(reply, frequency) if key in (first, second)]
    if not valid:
        return _none(reply, "names neither date")
    pick = {first: 0.0, second: 1.0}
    endorsed = None
    for offset, _ in date_mentions(reply, frequency):
        phrase = re.search(STRONG_ENDORSE + r"\Z", reply[:offset], flags=re.IGNORECASE)
        if phrase:
            endorsed = next(key for o, key in date_mentions(reply, frequency) if o == offset)
            break
    if REFUSAL.search(reply) and endorsed is None:
        return Parsed("refusal", reason="declines to answer")
    keys = {key for _, key in valid}
    if len(keys) == 1:
        return Parsed("parsed", pick[keys.pop()])
    if endorsed in pick:
        return Parsed("parsed", pick[endorsed])
    if ECHO_PREFIX.match(reply):
        return Parsed("parsed", pick[valid[-1][1]])
    if valid[0][0] <= LEADING_ANSWER:
        return Parsed("parsed", pick[valid[0][1]])
    return Parsed("parsed", pick[valid[-1][1]])
