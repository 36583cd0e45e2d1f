"""`lapbias init` maps the headers users have (data/header_map.py): one row per real-world header set -- CRSP,
Compustat, I/B/E/S, RavenPack, Refinitiv, Bloomberg, FNSPID, Kaggle, StockTwits, SEC-filing and event-study layouts --
with the header column each protocol column should map to (none for the protocol columns not listed)."""

from __future__ import annotations

import pytest

from lapbias.data.header_map import guess

COLUMNS = ("row_id", "entity_id", "entity_name", "ticker", "text", "text_date", "target_date", "outcome")

HEADER_SETS = [  # (name, "header|columns|as|written", "protocol column=header column; ...")
    ("issue_example", "Firm|Date|Headline|Return next day",
     "entity_id=Firm; entity_name=Firm; text=Headline; text_date=Date; outcome=Return next day"),
    ("issue_example_symbol", "Firm|Symbol|Date|Headline|Return next day",
     "entity_id=Firm; entity_name=Firm; ticker=Symbol; text=Headline; text_date=Date; outcome=Return next day"),
    ("crsp_daily", "PERMNO|date|SHRCD|EXCHCD|COMNAM|TICKER|CUSIP|PRC|VOL|RET|RETX|SHROUT|vwretd",
     "entity_id=PERMNO; entity_name=COMNAM; ticker=TICKER; text_date=date; outcome=RET"),
    ("crsp_with_headlines", "permno|date|comnam|ticker|headline|ret",
     "entity_id=permno; entity_name=comnam; ticker=ticker; text=headline; text_date=date; outcome=ret"),
    ("crsp_lead_return", "permno|ticker|comnam|news_date|headline|ret|ret_lead1",
     "entity_id=permno; entity_name=comnam; ticker=ticker; text=headline; text_date=news_date; outcome=ret_lead1"),
    ("crsp_lagged_return", "PERMNO|DATE|TICKER|HEADLINE|RET_LAG1|RET",
     "entity_id=PERMNO; entity_name=PERMNO; ticker=TICKER; text=HEADLINE; text_date=DATE; outcome=RET"),
    ("compustat_quarterly", "gvkey|datadate|fyearq|fqtr|conm|tic|cusip|rdq|epspxq|atq",  # rdq: the report date
     "entity_id=gvkey; entity_name=conm; ticker=tic; text_date=rdq"),                   # datadate: the period end
    ("compustat_mdna", "gvkey|datadate|conm|tic|mdna|car_0_1",
     "entity_id=gvkey; entity_name=conm; ticker=tic; text=mdna; text_date=datadate; outcome=car_0_1"),
    ("news_published_utc", "Firm|Symbol|Published (UTC)|Headline|Return next day",
     "entity_id=Firm; entity_name=Firm; ticker=Symbol; text=Headline; text_date=Published (UTC); "
     "outcome=Return next day"),
    ("event_press_release", "PERMNO|Company|Event Date|Press Release|CAR[-1,+1]",
     "entity_id=PERMNO; entity_name=Company; text=Press Release; text_date=Event Date; outcome=CAR[-1,+1]"),
    ("compustat_calls", "gvkey|conm|tic|rdq|car_0_1|transcript",
     "entity_id=gvkey; entity_name=conm; ticker=tic; text=transcript; text_date=rdq; outcome=car_0_1"),
    ("ravenpack", "TIMESTAMP_UTC|RP_STORY_ID|RP_ENTITY_ID|ENTITY_TYPE|ENTITY_NAME|HEADLINE|EVENT_SENTIMENT_SCORE|"
                  "RELEVANCE|ret_next_day",
     "entity_id=RP_ENTITY_ID; entity_name=ENTITY_NAME; text=HEADLINE; text_date=TIMESTAMP_UTC; outcome=ret_next_day"),
    ("ravenpack_dj", "RPNA_DATE_UTC|RPNA_TIME_UTC|RP_ENTITY_ID|COMPANY|ISIN|HEADLINE|ESS|next_day_return",
     "entity_id=ISIN; entity_name=COMPANY; text=HEADLINE; text_date=RPNA_DATE_UTC; outcome=next_day_return"),
    ("ibes", "TICKER|CUSIP|OFTIC|CNAME|ANNDATS|VALUE|ACTUAL",
     "entity_id=CUSIP; entity_name=CNAME; ticker=TICKER; text_date=ANNDATS"),
    ("kaggle_analyst_ratings", "|title|date|stock",
     "entity_id=stock; entity_name=stock; ticker=stock; text=title; text_date=date"),
    ("fnspid", "Date|Article_title|Stock_symbol|Url|Publisher|Author|Article|Lsa_summary|Luhn_summary|"
               "Textrank_summary|Lexrank_summary",
     "entity_id=Stock_symbol; entity_name=Stock_symbol; ticker=Stock_symbol; text=Article_title; text_date=Date"),
    ("lopez_lira_tang", "date|ticker|headline|ret_t1",
     "entity_id=ticker; entity_name=ticker; ticker=ticker; text=headline; text_date=date; outcome=ret_t1"),
    ("event_study", "permno|event_date|car|comnam|ticker|press_release_text",
     "entity_id=permno; entity_name=comnam; ticker=ticker; text=press_release_text; text_date=event_date; outcome=car"),
    ("refinitiv", "versionCreated|storyId|headline|RIC|ret_fwd",
     "entity_id=RIC; entity_name=RIC; ticker=RIC; text=headline; text_date=versionCreated; outcome=ret_fwd"),
    ("bloomberg", "Security|Date|Headline|Next Day Return",
     "entity_id=Security; entity_name=Security; text=Headline; text_date=Date; outcome=Next Day Return"),
    ("earnings_calls", "gvkey|company_name|call_date|transcript|car3",
     "entity_id=gvkey; entity_name=company_name; text=transcript; text_date=call_date; outcome=car3"),
    ("generic", "id|entity|name|text|date|target_date|y",
     "row_id=id; entity_id=entity; entity_name=name; text=text; text_date=date; target_date=target_date; outcome=y"),
    ("protocol_names", "row_id|entity_id|entity_name|ticker|text|text_date|target_date|outcome",
     "row_id=row_id; entity_id=entity_id; entity_name=entity_name; ticker=ticker; text=text; text_date=text_date; "
     "target_date=target_date; outcome=outcome"),
    ("camel_case", "companyId|companyName|publishedAt|newsTitle|nextDayReturn",
     "entity_id=companyId; entity_name=companyName; text=newsTitle; text_date=publishedAt; outcome=nextDayReturn"),
    ("tweets", "tweet_id|created_at|text|cashtag|ret_1d",
     "entity_id=cashtag; entity_name=cashtag; ticker=cashtag; text=text; text_date=created_at; outcome=ret_1d"),
    ("stocktwits", "id|body|created_at|symbol|sentiment|return_next_day",
     "row_id=id; entity_id=symbol; entity_name=symbol; ticker=symbol; text=body; text_date=created_at; "
     "outcome=return_next_day"),
    ("sec_filings", "cik|company_name|filing_date|form_type|mdna_text|abnormal_return",
     "entity_id=cik; entity_name=company_name; text=mdna_text; text_date=filing_date; outcome=abnormal_return"),
    ("countries", "country|iso3|date|statement|gdp_growth_next",
     "entity_id=iso3; entity_name=country; text=statement; text_date=date; outcome=gdp_growth_next"),
    ("crypto", "asset|symbol|timestamp|title|ret_next",
     "entity_id=asset; entity_name=asset; ticker=symbol; text=title; text_date=timestamp; outcome=ret_next"),
    ("newswires", "accession_number|display_date|headline|body|ticker|company|ret_next_day",
     "entity_id=company; entity_name=company; ticker=ticker; text=headline; text_date=display_date; "
     "outcome=ret_next_day"),
    ("both_dates", "permno|text_date|ret_date|headline|ret",
     "entity_id=permno; entity_name=permno; text=headline; text_date=text_date; target_date=ret_date; outcome=ret"),
    ("next_date", "Ticker|Company|Date|Next Date|Title|Ret",
     "entity_id=Company; entity_name=Company; ticker=Ticker; text=Title; text_date=Date; target_date=Next Date; "
     "outcome=Ret"),
    ("obs_ids", "obs_id|gvkey|conm|anndate|text|car_m1_p1",
     "row_id=obs_id; entity_id=gvkey; entity_name=conm; text=text; text_date=anndate; outcome=car_m1_p1"),
    ("excel_spacing", "  TICKER |DATE|HEADLINE TEXT|RET (t+1)",
     "entity_id=  TICKER ; entity_name=  TICKER ; ticker=  TICKER ; text=HEADLINE TEXT; text_date=DATE; "
     "outcome=RET (t+1)"),
    ("market_return_is_not_the_outcome", "permno|date|headline|mkt_ret|excess_ret",
     "entity_id=permno; entity_name=permno; text=headline; text_date=date; outcome=excess_ret"),
    ("sentiment_only", "Sentence|Sentiment", "text=Sentence"),
]


@pytest.mark.parametrize("name, header, expected", HEADER_SETS, ids=[h[0] for h in HEADER_SETS])
def test_real_world_headers_map_to_the_protocol_columns(name, header, expected):
    guessed = guess(header.split("|"))
    mapping = dict(pair.split("=", 1) for pair in expected.split("; "))
    assert {c: guessed[c].column for c in COLUMNS} == {c: mapping.get(c) for c in COLUMNS}


def test_at_least_thirty_header_sets():
    assert len(HEADER_SETS) >= 30


def test_fallbacks_are_said():
    guessed = guess(["Firm", "Date", "Headline", "Return next day"])
    assert guessed["entity_name"].column == "Firm" and "the entity_id column: no name column found" in \
        guessed["entity_name"].note
    assert guess(["ticker", "date", "headline", "ret"])["entity_id"].note == \
        "the ticker column: no identifier column found"
