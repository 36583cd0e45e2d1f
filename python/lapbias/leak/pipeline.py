"""The NumLeak audit end to end (`lapbias leak CONFIG`): sample dates, ask every probe (cached, resumable),
parse, score, attribute, and write the results; or (`--replies FILE`) score replies collected elsewhere
(replies.py) through the same parser, metrics, tables, figures and report, with no model queried.

Cache: data/raw/leak.jsonl, task "leak", one line per query; key = sha256(task | model_id | query_id | prompt |
params) (llm/cache.py) with query_id = variant|series|period[|second period]|draw, the prompt = the chat as
canonical JSON (so the adapted template is in the key) and params = probe, decoding, temperature, seed,
max_new_tokens, top_logprobs and the model's dtype. A cached answer holds the text, the number of generated tokens
and whether it ended at the length limit (`truncated`: max_new_tokens tokens and no end of sequence; unknown for an
answer cached before lapbias recorded it, or from an endpoint that does not say). Ranking queries: query_id
rank|series|period|kind, the scored raw text as prompt.

Writes:
  data/derived/leak/dates.csv        the probed (series, date, window, famous) rows and the seed
  data/derived/leak/probes.parquet   the probe panel: one row per query with reply, status, value, truth,
                                     truncated, prompt_echo, unread_number, first_token
  data/derived/leak/probes.dta       the same for Stata (replies cut to 244 characters)
  results/leak/summary.csv           one row per series × variant × window, every metric and interval
  results/leak/selectivity.csv       recall of each series vs the truth of each sibling series
  results/leak/famous.csv, cutoff_gradient.csv   §2's temporal controls (temporal.py)
  results/leak/ranking.csv           log-prob ranking by series × window (App. T)
  results/leak/entropy.csv           readout entropy by condition × window (App. R)
  results/leak/leakshare.csv         residualization and worst-case ceiling (App. N)
  results/leak/run_config.json       the configuration snapshot (and the replies file, its sha256 and model)
  results/figures/leak_calibration.png, leak_parse_rate.png
  results/leak/SECTION.md            the NumLeak section, which results/REPORT.md includes (report/sections.py)
Everything under results/ is staged and moved in together when the audit has finished, each CSV stamped with the
run's `run_id` and every file listed with its sha256 in results/.leak-manifest.json (lapbias/stage.py); the section
is then also put into an existing results/REPORT.md (report.update_report).
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
from ..stage import new_run_id, staged_outputs
from . import leakshare, metrics, readouts, replies, series, temporal
from .config import LeakRun, snapshot
from .draws import draw
from .parse import prompt_echo, unread_numbers
from .probes import REGISTRY, Item, Plan

TASK = "leak"
OPTIONAL = ("ranking", "leakshare", "famous", "cutoff_gradient", "entropy")
"""Tables written only when they apply; the one of an earlier run is removed when this run does not write it."""


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


def ended_at_limit(generation, max_new_tokens: int, backend) -> bool | None:
    """A greedy answer cut by the length limit: max_new_tokens tokens, the last not an end-of-sequence token (the
    backends count it); None when the endpoint returned no tokens."""
    if not generation.tokens:
        return None
    if len(generation.tokens) < max_new_tokens:
        return False
    special = set(getattr(getattr(backend, "tokenizer", None), "all_special_ids", None) or ())
    return generation.tokens[-1].token_id not in special


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
            drawn = draw(backend, [json.loads(batch[i].prompt) for i in indices],
                         [batch[i].params["seed"] for i in indices], temperature, length)
            answers.update({i: {"text": text, "truncated": cut} for i, (text, cut) in zip(indices, drawn)})
        for length, indices in greedy.items():
            generations = backend.generate([json.loads(batch[i].prompt) for i in indices], length,
                                           run.leak.top_logprobs)
            for i, generation in zip(indices, generations):
                answers[i] = {"text": generation.text, "first_top": [t.to_json() for t in generation.first_top],
                              "n_tokens": len(generation.tokens),
                              "truncated": ended_at_limit(generation, length, backend)}
        if scored:
            for i, tokens in zip(scored, backend.prompt_logprobs([batch[i].prompt for i in scored])):
                answers[i] = {"tokens": [t.to_json() for t in tokens]}
        return [answers[i] for i in range(len(batch))]

    return ask


def _panel_rows(items: list[Item], answers: list[dict], keys: list[str], parser: str) -> pd.DataFrame:
    """The probe panel: one row per item, its answer read by the variant's probe."""
    rows = []
    for item, answer, key in zip(items, answers, keys):
        truncated = answer.get("truncated")
        parsed = REGISTRY[item.variant].parse(item, answer["text"], bool(truncated), parser)
        top = answer.get("first_top")
        rows.append({
            "variant": item.variant, "series": item.series, "label": item.label, "date": item.date,
            "period": item.period, "window": item.window, "frequency": item.frequency, "unit": item.unit,
            "famous": item.famous, "truth": item.truth, "other_period": item.other.get("other_period", ""),
            "other_truth": item.other.get("other_truth", math.nan), "draw": item.draw, "seed": item.seed,
            "temperature": item.temperature, "prompt": item.prompt, "reply": answer["text"],
            "truncated": math.nan if truncated is None else float(truncated),
            "status": parsed.status, "value": parsed.value, "reason": parsed.reason,
            "prompt_echo": prompt_echo(parsed, item.prompt),
            "unread_number": item.variant != "C" and bool(unread_numbers(parsed, answer["text"],
                                                                         item.date_words + (item.label,),
                                                                         bool(truncated))),
            "entropy_bits": readouts.entropy_bits([t[2] for t in top]) if top else math.nan,
            "first_token": top[0][1] if top else "", "cache_key": key,
        })
    return pd.DataFrame(rows)


def _ranking(run: LeakRun, sampled: pd.DataFrame, table: pd.DataFrame) -> tuple[pd.DataFrame, list[Query]]:
    if not run.leak.ranking:
        return pd.DataFrame(), []
    candidates = readouts.candidates(sampled, table, run.leak.seed)
    return candidates, readouts.queries(candidates, TASK, run.model.model_id, run.model.dtype)


def attribution_target(run: LeakRun, table: pd.DataFrame) -> str:
    """The series whose recall the attribution reads: [leak] transmission_series, else the series file's first."""
    return run.leak.transmission_series or table["series"].iloc[0]


def user_signal(run: LeakRun, target: str, items: list[Item]) -> pd.DataFrame | None:
    """The signal of [leak] signal_path (None without one), checked (series.read_signal) and dated by the period of
    the target series' frequency (a signal dated anywhere in the period counts for it), one per period. Read before
    the model is asked, so that a bad file stops the run before its queries."""
    if not run.leak.signal_path:
        return None
    signal = series.read_signal(run.leak.signal_path, run.leak.date_format)
    frequency = next((item.frequency for item in items if item.series == target), None)
    if frequency:
        signal["date"] = signal["date"].dt.to_period(series.FREQUENCIES[frequency]).dt.start_time
    repeated = signal[signal["date"].duplicated()]
    if len(repeated):
        raise InputDataError(f"signal file {run.leak.signal_path}: two signals for the period starting "
                             f"{repeated['date'].iloc[0]:%Y-%m-%d} (one signal per period of series {target})")
    return signal


def _attribution(run: LeakRun, panel: pd.DataFrame, table: pd.DataFrame, signal: pd.DataFrame | None
                 ) -> pd.DataFrame:
    """Leak attribution (App. N) of the target series' recall: against the user's `signal` (user_signal), else
    against the transmission prompt's answers."""
    target = attribution_target(run, table)
    recall = panel[(panel["variant"] == "A") & (panel["series"] == target)]
    frame = recall[["date", "window", "truth"]].assign(recall=recall["value"].where(recall["status"] == "parsed"))
    frame = frame.groupby(["date", "window"], as_index=False).mean()  # repeated queries of a date: their mean
    if signal is not None:
        source = f"user signal {run.leak.signal_path}"
    else:
        sent = panel[panel["variant"] == "transmission"]
        signal = sent[["date"]].assign(signal=sent["value"].where(sent["status"] == "parsed"))
        signal = signal.groupby("date", as_index=False).mean()
        source = "transmission prompt (App. O)"
    frame = frame.merge(signal, on="date", how="left")
    rows = []
    for window, part in [("all", frame)] + list(frame.groupby("window", sort=True)):
        rows.append({"series": target, "signal": source, "window": window, **leakshare.attribute(part)})
    return pd.DataFrame(rows)


def write_dta(panel: pd.DataFrame, path: Path) -> None:
    """The probe panel for Stata: dates as %td, flags numeric, long text cut to Stata's str244."""
    frame = panel.drop(columns=["prompt"]).copy()
    flags = ["famous", "prompt_echo", "unread_number"]
    frame[flags] = frame[flags].astype(float)
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            frame[column] = frame[column].astype(str).str.slice(0, 244)
    frame["date"] = frame["date"].dt.date
    labels = {"variant": "NumLeak probe variant (App. O)", "truth": "published value (C: 0 first date higher)",
              "value": "parsed reply (C: 0 = first date picked)", "status": "parsed / refusal / unparsed",
              "window": "pre = on or before the cutoff, holdout = after", "entropy_bits": "first-token entropy, bits",
              "truncated": "1 = reply ended at the length limit (. = unknown)", "famous": "1 = a famous_dates period",
              "prompt_echo": "1 = the value is only numbers the prompt writes",
              "unread_number": "1 = unparsed, but holds a number the rules do not read"}
    atomic_write(path, lambda tmp: pyreadstat.write_dta(frame, str(tmp), column_labels=[labels.get(c, c) for c in
                                                                                         frame.columns],
                                                        variable_format={"date": "%td"}))


def audit(leak_run: LeakRun, layout: Layout, backend, confirm: Confirm, replies_path: str | None = None,
          model: str | None = None) -> LeakResult:
    """The `lapbias leak` stage: ask the model (run) or, with a replies file, score its replies (score_replies)."""
    if replies_path is not None:
        return score_replies(leak_run, layout, replies_path, model)
    if model is not None:
        raise InputDataError("--model selects a model of a replies file; give --replies FILE with it")
    return run(leak_run, layout, backend, confirm)


def run(leak_run: LeakRun, layout: Layout, backend, confirm: Confirm) -> LeakResult:
    """Ask what is not cached, then derive every output from the cache."""
    table = series.load(leak_run.leak)
    series.check_transmission(leak_run.leak, table["series"])
    sampled, items = items_of(leak_run, table)
    signal = user_signal(leak_run, attribution_target(leak_run, table), items)
    candidates, ranking_queries = _ranking(leak_run, sampled, table)
    notes = []
    if ranking_queries and leak_run.model.backend == "openai":
        unavailable = backend.prompt_scoring_unavailable()
        if unavailable:
            notes.append(f"log-prob ranking skipped: {unavailable}")
            candidates, ranking_queries = pd.DataFrame(), []
    cache = ResponseCache(layout.raw_file(TASK))
    queries = [probe_query(item, leak_run) for item in items]
    asked = ask_missing(TASK, queries + ranking_queries, cache, _asker(backend, leak_run),
                        leak_run.model, confirm, len(queries) + len(ranking_queries))
    cache = ResponseCache(layout.raw_file(TASK))
    panel = _panel_rows(items, [cache.response(q) for q in queries], [q.key for q in queries], leak_run.leak.parser)
    tables = {}
    if ranking_queries:
        scores = [readouts.candidate_score(cache.response(q)["tokens"], c)
                  for q, c in zip(ranking_queries, candidates["candidate"])]
        candidates = candidates.assign(score=[s for s, _ in scores], n_tokens=[n for _, n in scores])
        tables["ranking"] = readouts.summarize_ranking(readouts.rank(candidates))
    return derive(leak_run, layout, table, sampled, panel, tables, notes, asked, {}, signal)


def score_replies(leak_run: LeakRun, layout: Layout, path: str, model: str | None = None) -> LeakResult:
    """Score a replies file (replies.py) as if its replies were the model's own; no model is loaded."""
    table = series.load(leak_run.leak)
    frame, name = replies.select_model(replies.read(path), model, path)
    items, answers, notes = replies.items_of(frame, table, leak_run.leak, leak_run.cutoff_date, path)
    panel = _panel_rows(items, answers, [""] * len(items), leak_run.leak.parser)
    values = panel[panel["variant"].isin(metrics.VALUE_VARIANTS)]
    series.check_transmission(leak_run.leak, values["series"])
    sampled = values[["series", "date", "period", "window", "famous", "truth"]].drop_duplicates(["series", "period"])
    sampled = sampled.rename(columns={"truth": "value"})
    # the truth of the replies' series: the series file's where it has them, else the replies' own
    known = table[table["series"].isin(set(values["series"]))]
    table = pd.concat([known, sampled[~sampled["series"].isin(set(known["series"]))][["series", "date", "value"]]],
                      ignore_index=True) if len(values) else table
    notes = [f"replies scored from {path} (model {name or 'not named'}, {len(panel)} replies); no model was queried, "
             "so the log-prob readouts (App. R, T) are not available"] + notes
    source = {"replies": str(path), "replies_sha256": replies.sha256(path), "replies_model": name}
    signal = user_signal(leak_run, attribution_target(leak_run, table), items)
    return derive(leak_run, layout, table, sampled, panel, {}, notes, 0, source, signal)


def derive(leak_run: LeakRun, layout: Layout, table, sampled, panel: pd.DataFrame, tables: dict, notes: list[str],
           asked: int, source: dict, signal: pd.DataFrame | None) -> LeakResult:
    """Every table, file, figure and the report section from the probe panel (and the user's signal, user_signal)."""
    leak = leak_run.leak
    levels = metrics.level_series(pd.concat([table[["series", "value"]], panel.loc[
        ~panel["series"].isin(set(table["series"])) & panel["variant"].isin(metrics.VALUE_VARIANTS),
        ["series", "truth"]].rename(columns={"truth": "value"})]))
    summary = metrics.summarize(panel, leak.band, leak.fine_band, levels, leak.bootstrap_reps, leak.shuffle_reps,
                                leak.permutation_reps, leak.seed)
    tables = {"summary": summary, "selectivity": metrics.selectivity(panel, table),
              "entropy": readouts.summarize_entropy(panel), "famous": temporal.famous_split(panel, leak.band),
              "cutoff_gradient": temporal.cutoff_gradient(panel, leak_run.cutoff_date, leak.band), **tables}
    if "A" in set(panel["variant"]) and ("transmission" in set(panel["variant"]) or leak.signal_path):
        tables["leakshare"] = _attribution(leak_run, panel, table, signal)
    if not (panel["window"] == "pre").any():
        notes.append(f"no pre-window dates: every probed period ends after the cutoff {leak.cutoff}; the fabricated "
                     "controls are asked in the pre window only, so none were asked")
    derived = layout.derived / "leak"
    write_csv(sampled.assign(seed=leak.seed)[["series", "date", "period", "window", "famous", "value", "seed"]],
              derived / "dates.csv")
    write_parquet(panel, derived / "probes.parquet")
    write_dta(panel, derived / "probes.dta")
    from ..report import sections
    from .report import calibration_figure, parse_rate_figure, section, update_report

    # results/leak/, the figures and the section are moved in together and listed in results/.leak-manifest.json
    with staged_outputs(layout.results, TASK, new_run_id(), known=[f"leak/{name}.csv" for name in OPTIONAL]) as folder:
        out = layout.staged(folder)
        results = out.results / "leak"
        for name, frame in tables.items():
            if len(frame.columns):  # a table that does not apply has none (and is not written)
                write_csv(frame, results / f"{name}.csv")
        write_text(results / "run_config.json",
                   json.dumps({**snapshot(leak_run), **source}, indent=2, default=str) + "\n")
        write_text(results / "notes.txt", "\n".join(notes) + ("\n" if notes else ""))
        calibration_figure(panel, out.figures / "leak_calibration.png")
        parse_rate_figure(panel, out.figures / "leak_parse_rate.png")
        sections.write(out.results, TASK, lambda: section(out.results))
    update_report(layout.results)
    print(f"leak: {len(panel)} probe replies, parse rate {(panel['status'] == 'parsed').mean():.1%}",
          file=sys.stderr)
    return LeakResult(panel, summary, tables, notes, asked)
