"""Which column of a user's file is which protocol column, guessed from the header (`lapbias init`).

A header name is compared in a normal form: camelCase split, lower case, every run of other characters "_"
("Return next day" -> return_next_day, "nextDayReturn" -> next_day_return, "TIMESTAMP_UTC" -> timestamp_utc), and
as the words of that form. For each protocol column, in the order of GUESS_ORDER, the best unused header column wins:
a name of its list (EXACT, the list's order first: CRSP, Compustat, I/B/E/S, RavenPack, news-dataset and event-study
names), else one whose words say it (WORDS: a return word without a date word for the outcome, preferring forward
words such as "next"; a date word with a target word for target_date; ...); ties go to the leftmost column. Then two
fallbacks, each said in the guess: entity_id is the ticker column, else the name column, when no identifier is found;
entity_name is the entity_id column when no name column is found (the recall query then names the entity by its id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import PROTOCOL_COLUMNS

EXACT = {
    "row_id": ("row_id", "rowid", "id", "obs_id", "observation_id", "obs", "record_id", "uid"),
    "outcome": ("outcome", "y", "ret_next_day", "return_next_day", "next_day_return", "next_day_ret", "ret_next",
                "next_ret", "next_return", "fwd_ret", "ret_fwd", "forward_return", "fwd_return", "future_return",
                "future_ret", "ret_lead", "lead_ret", "ret_t1", "ret_tp1", "ret1", "ret_1d", "car", "car_0_1",
                "car01", "car3", "abnormal_return", "abret", "ar", "bhar", "excess_return", "exret", "xret"),
    "target_date": ("target_date", "outcome_date", "realization_date", "realized_date", "return_date", "ret_date",
                    "next_date", "next_trading_day", "target", "eval_date", "evaluation_date", "date_t1",
                    "resolution_date"),
    "text_date": ("text_date", "date", "rdq", "datadate", "pub_date", "publish_date", "publication_date", "published",
                  "published_at", "published_date", "publishdate", "timestamp", "timestamp_utc", "datetime", "time",
                  "date_time", "news_date", "headline_date", "story_date", "article_date", "event_date",
                  "announcement_date", "anndats", "ann_date", "anndate", "filing_date", "fdate", "filedate",
                  "call_date", "version_created", "versioncreated", "created_at", "created", "trade_date",
                  "trading_date"),
    "ticker": ("ticker", "tic", "symbol", "tsymbol", "ticker_symbol", "stock_symbol", "stock", "tickers", "sym",
               "oftic", "ric", "bloomberg_ticker", "security_ticker", "cashtag"),
    "entity_id": ("entity_id", "permno", "lpermno", "permco", "gvkey", "cik", "cusip", "ncusip", "cusip8", "cusip6",
                  "isin", "sedol", "figi", "rp_entity_id", "firm_id", "company_id", "companyid", "issuer_id", "secid",
                  "security_id", "stock_id", "asset_id", "instrument_id", "iso3", "iso_code", "country_code",
                  "entity", "firm", "company", "issuer", "corporation", "security", "country", "asset"),
    "entity_name": ("entity_name", "company_name", "firm_name", "comnam", "conm", "cname", "coname", "name",
                    "issuer_name", "security_name", "stock_name", "companyname", "firmname", "entityname",
                    "country_name", "company", "firm", "issuer", "corporation", "security", "country"),
    "text": ("text", "headline", "headlines", "title", "article_title", "news", "article", "body", "content",
             "sentence", "story", "summary", "abstract", "tweet", "message", "snippet", "transcript", "description",
             "statement", "full_text", "news_text", "headline_text", "lsa_summary", "press_release", "mdna", "mda",
             "md_a"),
}
"""Protocol column -> header names (normal form) that are it, most likely first. A plain same-period return (ret,
RET, retx, return) is an outcome by its words, below any name that says it is forward-looking (ret_lead1,
"Return next day"): a file often holds both."""

RETURN_WORDS = {"ret", "return", "returns", "retx", "car", "bhar", "abret", "exret", "xret", "ar", "rets"}
PLAIN_RETURN_WORDS = {"ret", "return", "returns", "retx", "rets"}
"""A return over a period (CRSP's RET on `date`), as opposed to an event window (car, bhar, abnormal)."""
FORWARD_WORDS = {"next", "fwd", "forward", "future", "lead", "ahead", "t1", "tp1", "f1", "1d", "subsequent"}
CHANGE_WORDS = {"growth", "change", "chg", "move", "direction", "surprise"}
"""An outcome other than a return (a country's GDP growth, a rate change) when a forward word comes with it."""
BACKWARD_WORDS = {"lag", "lagged", "prev", "previous", "past", "prior"}
MARKET_WORDS = {"mkt", "market", "index", "benchmark", "sp500", "rf", "riskfree"}
DATE_WORDS = {"date", "dates", "datetime", "timestamp", "time", "dt", "datadate", "pubdate", "day_date", "published",
              "posted"}
TARGET_WORDS = {"target", "outcome", "realization", "realized", "return", "ret", "next", "fwd", "forward", "future",
                "lead", "end", "exit", "resolution", "eval"}
TEXT_WORDS = {"text", "headline", "headlines", "title", "article", "news", "body", "content", "story", "summary",
              "sentence", "tweet", "transcript", "message", "abstract", "snippet", "statement"}
NOT_TEXT_WORDS = {"id", "url", "link", "count", "len", "length", "score", "type", "source", "author", "publisher",
                  "sentiment", "lang", "language", "category", "topic", "relevance", "novelty"}
ID_WORDS = {"id", "code", "number", "no", "num", "key"}
ENTITY_WORDS = {"firm", "company", "entity", "issuer", "stock", "security", "asset", "instrument", "corp"}
GUESS_ORDER = ("row_id", "outcome", "target_date", "text_date", "ticker", "entity_id", "entity_name", "text")
"""Protocol columns in the order they pick a header column: the outcome before the dates ("return_date" is a
target date, not an outcome), target_date before text_date, the ticker before entity_id (a ticker is an
identifier only when nothing better exists)."""


@dataclass
class Guess:
    column: str | None
    note: str = ""
    """Why the column, when it is a fallback (e.g. entity_name is the entity_id column)."""


def normal(name: str) -> str:
    """The header name's normal form (module docstring)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(name).strip())
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def _word_score(name: str, said: set[str]) -> int | None:
    """The score of a header name that is not in EXACT, from its words (None: not this column)."""
    if name == "outcome":
        forward = bool(said & FORWARD_WORDS)
        if said & DATE_WORDS or said & MARKET_WORDS or not (said & RETURN_WORDS or forward and said & CHANGE_WORDS):
            return None
        return 60 + 20 * forward - 30 * bool(said & BACKWARD_WORDS)
    if name == "target_date":
        return 60 if said & DATE_WORDS and said & TARGET_WORDS else None
    if name == "text_date":
        return 50 if said & DATE_WORDS else None
    if name == "ticker":
        return 50 if said & {"ticker", "symbol", "tic"} else None
    if name == "entity_id":
        return 50 if said & ID_WORDS and said & ENTITY_WORDS else None
    if name == "entity_name":
        return 50 if "name" in said and not said & {"user", "author", "publisher", "source", "file"} else None
    if name == "text":
        return 50 if said & TEXT_WORDS and not said & NOT_TEXT_WORDS else None
    return None


def words(form: str) -> set[str]:
    """The words of a normal form: its parts, their letter and digit runs ("lead1" -> lead, 1) and each two
    neighbouring parts joined ("t_1" -> t1)."""
    parts = form.split("_")
    return set(parts) | set(re.findall(r"[a-z]+|\d+", form)) | {a + b for a, b in zip(parts, parts[1:])}


MAX_WORDS = 6
"""A header matched by its words has at most this many: a long descriptive header ("Analyst comment on the headline
as exported by the news vendor, full field name kept") holds words such as "name" without naming the column."""


def _score(protocol: str, header: str) -> int | None:
    form = normal(header)
    if form in EXACT[protocol]:
        return 1000 - EXACT[protocol].index(form)
    if len(form.split("_")) > MAX_WORDS:
        return None
    return _word_score(protocol, words(form))


def same_period_return(header: str) -> bool:
    """A header naming a plain return with no forward word (RET, retx, "Return"; not ret_lead1, "Return next day",
    car_0_1): the return of the period its row is dated by, in CRSP's files the return on `date`."""
    said = words(normal(header))
    return bool(said & PLAIN_RETURN_WORDS) and not said & (FORWARD_WORDS | {"car", "bhar", "abret", "abnormal"})


def guess(columns: list[str], empty: set[str] = frozenset()) -> dict[str, Guess]:
    """Protocol column -> its guessed header column (Guess.column None when nothing matches), in protocol order.
    Columns in `empty` (every cell read missing) are never guessed: validate would drop every row."""
    columns = [c for c in columns if c not in empty]
    used: set[str] = set()
    guessed: dict[str, Guess] = {}
    for protocol in GUESS_ORDER:
        scored = [(score, -i, column) for i, column in enumerate(columns)
                  if column not in used and (score := _score(protocol, column)) is not None]
        column = max(scored)[2] if scored else None
        if column is not None:
            used.add(column)
        guessed[protocol] = Guess(column)
    if guessed["entity_id"].column is None:
        for fallback in ("ticker", "entity_name"):
            if guessed[fallback].column is not None:
                guessed["entity_id"] = Guess(guessed[fallback].column, f"the {fallback} column: no identifier "
                                                                       "column found")
                break
    if guessed["entity_name"].column is None and guessed["entity_id"].column is not None:
        guessed["entity_name"] = Guess(guessed["entity_id"].column, "the entity_id column: no name column found, so "
                                                                    "the recall query names each entity by it")
    return {name: guessed[name] for name in PROTOCOL_COLUMNS}


def guess_columns(columns: list[str]) -> dict[str, str | None]:
    """Protocol column -> the header column guessed for it (None when nothing matches)."""
    return {name: g.column for name, g in guess(columns).items()}
