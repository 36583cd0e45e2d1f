"""Reply parser of the NumLeak probes (paper §2: "a parser maps the model's reply to either a number or a
refusal"; App. J.1 for the comparison variant). A reply that none of the rules reads is `unparsed`: counted in
the parse rate, never guessed.

Value replies (`parse_value`), in this order:
1. Date words are removed first: the probed date as the prompt wrote it ("the second quarter of 1975") and any
   bare year of it, so "In 1975 Q2 it was 8.9%" reads 8.9, not 1975.
2. Numbers: an optional sign (+, -, the Unicode minus − or an en dash –), digits with optional thousands commas
   and decimals, then an optional unit: %, percent, per cent, percentage point(s), pp, bps / basis points
   (divided by 100 into percent), °F / °C / degrees. A decimal comma ("3,5") is not read as 3.5.
3. No number: `refusal` when the reply declines (REFUSAL words: "I don't know", "cannot", "not available",
   "knowledge cutoff", "unknown", ...), else `unparsed`.
4. A range ("between 5.1 and 5.4", "5.1-5.4%", "5.1 to 5.4") is not a committed value: `unparsed`.
5. A negative sign written in words within four words before or two after an unsigned number ("a 3.12% loss",
   "fell 2.1 percent") is `unparsed`: the sign is never inferred.
6. `mode="value"` (Variants A, E, controls, transmission) reads the first number; `mode="narrative"` (Variant B)
   the first number that carries a unit or a decimal point (prose also holds counts and ordinals);
   `mode="final"` (Variant D, step-by-step) the last number of the reply (the conclusion of the reasoning).
   In value and final mode a bare integer (no sign, decimals or unit) inside prose is not read ("over 20 years",
   or a year cut short by the answer-length limit, "in the second quarter of 1"); a reply that is only a
   number ("5") is.
7. `scale=(low, high)`: a number outside it is `unparsed` (the transmission prompt's −1.00 … +1.00 scale).

Comparison replies (`parse_choice`, Variant C): the reply names the date it picks. An echo of the question
("Between X and Y, ...") is stripped first; then the pick is the only date mentioned, or the date written
right before "had the higher"/"was higher"/"is higher". Both dates with no endorsement, or neither, is
`unparsed`; a declining reply is `refusal`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

SIGNS = {"+": 1.0, "-": -1.0, "−": -1.0, "–": -1.0}
_UNIT = (r"%|percentage\s+points?|percent|per\s+cent|pp\b|bps\b|basis\s+points?|°\s?[FC]|degrees?(?:\s+"
         r"(?:fahrenheit|celsius|f|c))?")
NUMBER = re.compile(
    r"(?<![\w.,])(?P<sign>[+\-−–]\s?)?(?P<digits>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<decimals>\.\d+)?(?![\d,]\d)"
    rf"\s*(?P<unit>{_UNIT})?",
    re.IGNORECASE,
)
RANGE = re.compile(
    r"\d(?:\.\d+)?\s*%?\s*(?:-|–|to)\s*[+\-−]?\d|between\s+[+\-−–]?\d[\d.,]*\s*%?\s+and\s+[+\-−–]?\d",
    re.IGNORECASE,
)
SIGN_WORDS = re.compile(r"(loss|losses|lost|decline[ds]?|declining|decrease[ds]?|negative|fell|fall|drop(?:ped)?|"
                        r"down)", re.IGNORECASE)
"""Words that make an unsigned number negative (rule 5); a positive reading is the default and needs none."""
REFUSAL = re.compile(
    r"\b(i\s+(?:do\s+not|don'?t|cannot|can'?t|am\s+unable|am\s+not\s+able|have\s+no)|unable\s+to|not\s+able\s+to|"
    r"cannot|can'?t|no\s+(?:data|information|record)|not\s+(?:available|sure|certain)|unknown|n/a|"
    r"knowledge\s+cut-?off|as\s+an\s+ai|i'?m\s+sorry|sorry|don'?t\s+have\s+access|do\s+not\s+have\s+access)",
    re.IGNORECASE,
)
ENDORSE = re.compile(r"\s*(?:had|has|was|is|with|showed|saw)\s+(?:a\s+|the\s+)?higher", re.IGNORECASE)


@dataclass(frozen=True)
class Parsed:
    """status: "parsed", "refusal" or "unparsed"; value is NaN unless parsed; reason says why not."""

    status: str
    value: float = math.nan
    reason: str = ""

    @property
    def parsed(self) -> bool:
        return self.status == "parsed"


def _strip_dates(text: str, date_words: tuple[str, ...]) -> str:
    for words in sorted(date_words, key=len, reverse=True):
        if words:
            text = re.sub(re.escape(words), " ", text, flags=re.IGNORECASE)
    years = {m for words in date_words for m in re.findall(r"\b(1[5-9]\d\d|2[01]\d\d)\b", words)}
    for year in years:
        text = re.sub(rf"(?<![\d.]){year}(?:\s?Q[1-4])?(?![\d.])", " ", text)
    return text


def _value(match: re.Match, unit: str) -> float:
    number = float(match["digits"].replace(",", "") + (match["decimals"] or ""))
    if match["sign"]:
        number *= SIGNS[match["sign"].strip()]
    found = (match["unit"] or "").lower()
    if unit == "percent" and (found.startswith("bps") or found.startswith("basis")):
        number /= 100.0
    return number


def _sign_in_words(text: str, match: re.Match) -> bool:
    if match["sign"]:
        return False
    before = text[max(0, match.start() - 40):match.start()].split()[-4:]
    after = text[match.end():match.end() + 30].split()[:2]
    return any(SIGN_WORDS.fullmatch(word.strip(".,;:!?()")) for word in before + after)


def parse_value(text: str, date_words: tuple[str, ...] = (), mode: str = "value", unit: str = "percent",
                scale: tuple[float, float] | None = None) -> Parsed:
    """One reply -> Parsed (module docstring, rules 1-7)."""
    if text is None or not str(text).strip():
        return Parsed("unparsed", reason="empty reply")
    cleaned = _strip_dates(str(text), date_words)
    matches = list(NUMBER.finditer(cleaned))
    if mode == "narrative":
        matches = [m for m in matches if m["unit"] or m["decimals"]]
    elif not NUMBER.fullmatch(cleaned.strip()):
        matches = [m for m in matches if m["unit"] or m["decimals"] or m["sign"]]
    if not matches:
        if REFUSAL.search(cleaned):
            return Parsed("refusal", reason="declines to answer")
        return Parsed("unparsed", reason="no number")
    if mode == "final":
        match = matches[-1]
    else:
        match = matches[0]
        if RANGE.search(cleaned[match.start():match.end() + 40]) or RANGE.search(cleaned[:match.end() + 40]):
            return Parsed("unparsed", reason="a range, not one value")
    if _sign_in_words(cleaned, match):
        return Parsed("unparsed", reason="sign written in words")
    value = _value(match, unit)
    if scale is not None and not scale[0] <= value <= scale[1]:
        return Parsed("unparsed", reason=f"outside the scale {scale[0]:g} to {scale[1]:g}")
    return Parsed("parsed", value)


def parse_choice(text: str, first: tuple[str, ...], second: tuple[str, ...]) -> Parsed:
    """Variant C: value 0.0 = the first date picked, 1.0 = the second. `first`/`second` are the ways the reply
    may name each date (the prompt's wording, the period label such as "1975Q2" or "1975 Q2")."""
    if text is None or not str(text).strip():
        return Parsed("unparsed", reason="empty reply")
    reply = str(text).strip()
    echo = re.match(r"\s*between\s+(.{1,80}?)\s+and\s+(.{1,80}?),", reply, flags=re.IGNORECASE)
    if echo:
        reply = reply[echo.end():]

    def positions(names: tuple[str, ...]) -> list[int]:
        return [m.start() for name in names for m in re.finditer(re.escape(name), reply, flags=re.IGNORECASE)]

    def ends_before_endorsement(names: tuple[str, ...]) -> bool:
        return any(ENDORSE.match(reply, m.end()) for name in names
                   for m in re.finditer(re.escape(name), reply, flags=re.IGNORECASE))

    in_first, in_second = positions(first), positions(second)
    if in_first and not in_second:
        return Parsed("parsed", 0.0)
    if in_second and not in_first:
        return Parsed("parsed", 1.0)
    if in_first and in_second:
        endorsed = (ends_before_endorsement(first), ends_before_endorsement(second))
        if endorsed == (True, False):
            return Parsed("parsed", 0.0)
        if endorsed == (False, True):
            return Parsed("parsed", 1.0)
        return Parsed("unparsed", reason="names both dates without picking one")
    if REFUSAL.search(reply):
        return Parsed("refusal", reason="declines to answer")
    return Parsed("unparsed", reason="names neither date")
