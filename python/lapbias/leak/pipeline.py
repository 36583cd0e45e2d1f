"""The NumLeak audit end to end (`lapbias leak CONFIG`): sample dates, ask every probe (cached, resumable),
parse, score, attribute, and write the results.

Cache: data/raw/leak.jsonl, task "leak", one line per query; key = sha256(task | model_id | query_id | prompt |
params) (llm/cache.py) with query_id = variant|series|period[|second period]|draw, the prompt = the chat as
canonical JSON (so the adapted template is in the key) and params = probe, decoding, temperature, seed,
max_new_tokens, top_logprobs and the model's dtype. Ranking queries: query_id rank|series|period|kind, the
scored raw text as prompt.

Writes:
  data/derived/leak/dates.csv        the sampled (series, date, window) rows and the seed
  data/derived/leak/probes.parquet   the probe panel: one row per query with reply, status, value, truth
  data/derived/leak/probes.dta       the same for Stata (replies cut to 244 characters)
  results/leak/summary.csv           one row per series × variant × window, every metric and interval
  results/leak/selectivity.csv       recall of each series vs the truth of each sibling series
  results/leak/ranking.csv           log-prob ranking by series × window (App. T)
  results/leak/entropy.csv           readout entropy by condition × window (App. R)
  results/leak/leakshare.csv         residualization and worst-case ceiling (App. N)
  results/leak/run_config.json       the configuration snapshot
  results/figures/leak_calibration.png, leak_parse_rate.png, and the NumLeak section of results/REPORT.md
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyreadstat

from ..errors import InputDataError
from ..io import Layout, atomic_write, write_csv, write_parquet, write_text
from ..llm.base import chat
from ..llm.cache import Query, ResponseCache, canonical_json
from ..signals.batch import Confirm, ask_missing
from . import leakshare, metrics, readouts, series
from .config import LeakRun, snapshot
from .draws import draw
from .probes import REGISTRY, Item, Plan

TASK = "leak"


@dataclass
class LeakResult:
    panel: pd.DataFrame
    summary: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    n_asked: int = 0


def items_of(run: LeakRun, table: pd.DataFrame) -> tuple[pd.DataFrame, list[Item]]:
    """The sampled dates and every probe item, in registry order."""
    sampled = series.sample_dates(table, run.leak, run.cutoff_date)
    plan = Plan(sampled, table, run.leak)
    items = [item for name, probe in REGISTRY.items() if name in run.leak.variants for item in probe.items(plan)]
    return sampled, items


def probe_query(item: Item, run: LeakRun) -> Query:
    params = {"probe": item.variant, "decoding": "sampling" if item.seed >= 0 else "greedy",
              "temperature": item.temperature, "seed": item.seed, "max_new_tokens": item.max_new_tokens,
              "top_logprobs": run.leak.top_logprobs, "dtype": run.model.dtype}
    return Query(TASK, run.model.model_id, item.query_id, canonical_json(chat(item.prompt)), params)


def _asker(backend, run: LeakRun):
    """Answers a mixed batch: greedy chats grouped by answer length, seeded draws one by one, ranking texts
    scored together."""
    def ask(batch: list[Query]) -> list[dict]:
        answers: dict[int, dict] = {}
        greedy: dict[int, list[int]] = defaultdict(list)
        scored = [i for i, q in enumerate(batch) if q.params.get("probe") == "ranking"]
        sampled: dict[tuple, list[int]] = defaultdict(list)
        for i, query in enumerate(batch):
            if query.params.get("probe") == "ranking":
                continue
            if query.params["decoding"] == "sampling":
                sampled[(query.params["temperature"], query.params["max_new_tokens"])].append(i)
            else:
                greedy[query.params["max_new_tokens"]].append(i)
        for (temperature, length), indices in sampled.items():
            texts = draw(backend, [json.loads(batch[i].prompt) for i in indices],
                         [batch[i].params["seed"] for i in indices], temperature, length)
            answers.update({i: {"text": text} for i, text in zip(indices, texts)})
        for length, indices in greedy.items():
            generations = backend.generate([json.loads(batch[i].prompt) for i in indices], length,
                                           run.leak.top_logprobs)
            for i, generation in zip(indices, generations):
                answers[i] = {"text": generation.text, "first_top": [t.to_json() for t in generation.first_top]}
        if scored:
            for i, tokens in zip(scored, backend.prompt_logprobs([batch[i].prompt for i in scored])):
                answers[i] = {"tokens": [t.to_json() for t in tokens]}
        return [answers[i] for i in range(len(batch))]

    return ask


def _panel_rows(items: list[Item], run: LeakRun, cache: ResponseCache) -> pd.DataFrame:
    rows = []
    for item in items:
        query = probe_query(item, run)
        response = cache.response(query)
        parsed = REGISTRY[item.variant].parse(item, response["text"])
        top = response.get("first_top")
        rows.append({
            "variant": item.variant, "series": item.series, "label": item.label, "date": item.date,
            "period": item.period, "window": item.window, "frequency": item.frequency, "unit": item.unit,
            "truth": item.truth, "other_period": item.other.get("other_period", ""),
            "other_truth": item.other.get("other_truth", math.nan), "draw": item.draw, "seed": item.seed,
            "temperature": item.temperature, "prompt": item.prompt, "reply": response["text"],
            "status": parsed.status, "value": parsed.value, "reason": parsed.reason,
            "entropy_bits": readouts.entropy_bits([t[2] for t in top]) if top else math.nan,
            "cache_key": query.key,
        })
    return pd.DataFrame(rows)


def _ranking(run: LeakRun, sampled: pd.DataFrame, table: pd.DataFrame) -> tuple[pd.DataFrame, list[Query]]:
    if not run.leak.ranking:
        return pd.DataFrame(), []
    candidates = readouts.candidates(sampled, table, run.leak.seed)
    return candidates, readouts.queries(candidates, TASK, run.model.model_id, run.model.dtype)


def _attribution(run: LeakRun, panel: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    target = run.leak.transmission_series or table["series"].iloc[0]
    recall = panel[(panel["variant"] == "A") & (panel["series"] == target)]
    frame = recall[["date", "window", "truth"]].assign(recall=recall["value"].where(recall["status"] == "parsed"))
    if run.leak.signal_path:
        signal = series.read_signal(run.leak.signal_path)
        if "frequency" in recall and len(recall):  # a signal dated anywhere in the period counts for it
            signal["date"] = signal["date"].dt.to_period(series.FREQUENCIES[recall["frequency"].iloc[0]]).dt.start_time
        repeated = signal[signal["date"].duplicated()]
        if len(repeated):
            raise InputDataError(f"signal file {run.leak.signal_path}: two signals for the period starting "
                                 f"{repeated['date'].iloc[0]:%Y-%m-%d} (one signal per period of series {target})")
        source = f"user signal {run.leak.signal_path}"
        frame = frame.merge(signal, on="date", how="left")
    else:
        sent = panel[panel["variant"] == "transmission"]
        signal = sent[["date"]].assign(signal=sent["value"].where(sent["status"] == "parsed"))
        source = "transmission prompt (App. O)"
        frame = frame.merge(signal, on="date", how="left")
    rows = []
    for window, part in [("all", frame)] + list(frame.groupby("window", sort=True)):
        rows.append({"series": target, "signal": source, "window": window, **leakshare.attribute(part)})
    return pd.DataFrame(rows)


def write_dta(panel: pd.DataFrame, path: Path) -> None:
    """The probe panel for Stata: dates as %td, flags numeric, long text cut to Stata's str244."""
    frame = panel.drop(columns=["prompt"]).copy()
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            frame[column] = frame[column].astype(str).str.slice(0, 244)
    frame["date"] = frame["date"].dt.date
    labels = {"variant": "NumLeak probe variant (App. O)", "truth": "published value (C: 0 first date higher)",
              "value": "parsed reply (C: 0 = first date picked)", "status": "parsed / refusal / unparsed",
              "window": "pre = on or before the cutoff, holdout = after", "entropy_bits": "first-token entropy, bits"}
    atomic_write(path, lambda tmp: pyreadstat.write_dta(frame, str(tmp), column_labels=[labels.get(c, c) for c in
                                                                                         frame.columns],
                                                        variable_format={"date": "%td"}))


def run(leak_run: LeakRun, layout: Layout, backend, confirm: Confirm) -> LeakResult:
    """Ask what is not cached, then derive every output from the cache."""
    table = series.load(leak_run.leak)
    sampled, items = items_of(leak_run, table)
    candidates, ranking_queries = _ranking(leak_run, sampled, table)
    notes = []
    if ranking_queries and leak_run.model.backend == "openai":
        unavailable = backend.prompt_scoring_unavailable()
        if unavailable:
            notes.append(f"log-prob ranking skipped: {unavailable}")
            candidates, ranking_queries = pd.DataFrame(), []
    cache = ResponseCache(layout.raw_file(TASK))
    queries = [probe_query(item, leak_run) for item in items] + ranking_queries
    asked = ask_missing(TASK, queries, cache, _asker(backend, leak_run), leak_run.model.queries_per_batch,
                        lambda: leak_run.model.seconds_per_query or backend.seconds_per_query(TASK), confirm,
                        len(queries))
    return derive(leak_run, layout, table, sampled, items, candidates, ranking_queries, notes, asked)


def derive(leak_run: LeakRun, layout: Layout, table, sampled, items, candidates, ranking_queries, notes,
           asked: int = 0) -> LeakResult:
    cache = ResponseCache(layout.raw_file(TASK))
    leak = leak_run.leak
    panel = _panel_rows(items, leak_run, cache)
    summary = metrics.summarize(panel, leak.band, leak.bootstrap_reps, leak.shuffle_reps, leak.seed)
    tables = {"summary": summary, "selectivity": metrics.selectivity(panel, table),
              "entropy": readouts.summarize_entropy(panel)}
    if ranking_queries:
        scores = [readouts.candidate_score(cache.response(q)["tokens"], c)
                  for q, c in zip(ranking_queries, candidates["candidate"])]
        candidates = candidates.assign(score=[s for s, _ in scores], n_tokens=[n for _, n in scores])
        tables["ranking"] = readouts.summarize_ranking(readouts.rank(candidates))
    if "A" in leak.variants and ("transmission" in leak.variants or leak.signal_path):
        tables["leakshare"] = _attribution(leak_run, panel, table)
    derived = layout.derived / "leak"
    results = layout.results / "leak"
    write_csv(sampled.assign(seed=leak.seed)[["series", "date", "period", "window", "value", "seed"]],
              derived / "dates.csv")
    write_parquet(panel, derived / "probes.parquet")
    write_dta(panel, derived / "probes.dta")
    for name, frame in tables.items():
        write_csv(frame, results / f"{name}.csv")
    for name in {"ranking", "leakshare"} - set(tables):
        (results / f"{name}.csv").unlink(missing_ok=True)
    write_text(results / "run_config.json", json.dumps(snapshot(leak_run), indent=2, default=str) + "\n")
    write_text(results / "notes.txt", "\n".join(notes) + ("\n" if notes else ""))
    from .report import calibration_figure, parse_rate_figure, update_report

    calibration_figure(panel, layout.figures / "leak_calibration.png")
    parse_rate_figure(panel, layout.figures / "leak_parse_rate.png")
    update_report(layout.results, leak_run)
    print(f"leak: {len(panel)} probe replies, parse rate {(panel['status'] == 'parsed').mean():.1%}",
          file=sys.stderr)
    return LeakResult(panel, summary, tables, notes, asked)
