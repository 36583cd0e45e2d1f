"""Whole-study time and memory estimate for `lapbias run --dry-run CONFIG`: the time of the `lapbias run` that
follows it, on this machine.

The study's rows are validated (data/derived and results are not written), and each model stage's queries
missing from its cache are counted (an answer in the cache costs no model call). When one is missing, the model is
loaded (its time measured) and the first batches of each stage's missing queries, timing.first_size(batch size) of
them (32 at batch size 16), are asked with the stage's own ask function and appended to its cache,
data/raw/<task>.jsonl, timed batch by batch: real queries of the study, which the run does not ask again. The time of
the rest of each stage is estimated from them by signals/timing.py, the function the stage's own confirmation and
progress line use, range included; the forecast's first answers have their parse rate shown (protocol Step 1). The
whole run takes

    start-up + validate + model load + sum over stages of (queries left x s_stage) + deriving the signal files
    + estimate + panel and report,

start-up (this process's imports, to the start of the dry run), validate and model load measured now; deriving the
signal files taken as DERIVE times the reading of the caches (measured: reading is most of it, the label parsing and
the parquet files the rest); the estimate stage probed on a synthetic panel of the study's size (two detection
regressions, the first paying for loading the estimator, and a few bootstrap draws); panel and report by their bulk
on a synthetic panel of the study's rows (the parquet and .dta files, the two figures).
Memory = the process's peak resident set (and GPU peak allocation) during the probes.

The GPU line uses the H100 throughput recorded in benchmarks/RESULTS.md, not this machine: prompt
tokens/s of the transformers backend, bundled model (44,834 tokens/s) or an 8B-shaped bf16 model (25,233 tokens/s,
scaled by parameters for other sizes). Generation on the GPU was not measured; forecast tokens are costed at the
prompt-scoring rate, a lower bound of its time.
"""

from __future__ import annotations

import json
import math
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .config import RunConfig
from .io import Layout
from .signals import measures, timing
from .signals.timing import Estimate, Timing, duration, machine

H100_TOKENS_PER_S = {"small": 44_834, "8B": 25_233}
"""benchmarks/RESULTS.md, Min-K% scoring on NVIDIA H100 80GB HBM3: bundled SmolLM2-135M fp32 batch 32; Llama-3-8B
architecture bf16 batch 256 (7.18e9 parameters without the input embedding)."""
H100_8B_PARAMETERS = 7.18e9
HOUR = 3600.0
DERIVE = 3.0
"""Deriving the three signal files from their caches, in times the reading of the caches (module docstring; on the
demo, 2 cores under load: 1.1 s to derive, 0.3 s to read)."""


@dataclass
class StageCost:
    stage: str
    queries: int
    """Queries the run will ask (missing from the cache after the probe)."""
    estimate: Estimate
    peak_gb: float
    cached: int = 0
    probed: int = 0
    tokens: float = 0.0
    """Tokens of the queries left (the GPU line)."""
    work: str = ""
    """What the stage computes, when it is not model queries (the estimate: regressions and bootstrap draws)."""
    note: str = ""


def _peak_gb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    try:
        import torch

        if torch.cuda.is_available():
            peak += torch.cuda.max_memory_allocated() / 1e9
    except ImportError:
        pass
    return peak


def start_up_seconds() -> float:
    """Seconds since this process started (/proc/self/stat; 0 where there is no /proc)."""
    try:
        with open("/proc/self/stat", encoding="utf-8") as handle:
            started = float(handle.read().rpartition(")")[2].split()[19]) / os.sysconf("SC_CLK_TCK")
        with open("/proc/uptime", encoding="utf-8") as handle:
            return max(0.0, float(handle.read().split()[0]) - started)
    except (OSError, ValueError, IndexError):
        return 0.0


def stage_queries(frame: pd.DataFrame, config: RunConfig) -> dict[str, list]:
    """The real queries of the three model stages for `frame` (validated input rows)."""
    from .signals import forecast, minkprob, recall

    return {"forecast": forecast.queries(frame, config), "recall": recall.queries(recall.recall_pairs(frame), config),
            "minkprob": minkprob.queries(frame, config)}


def _count_tokens(backend, stage: str, prompts: list[str]) -> list[int]:
    tokens = getattr(backend, "tokens", None)
    if tokens is None:  # an HTTP backend has no tokenizer here: about 4 characters per token
        return [max(1, len(p) // 4) for p in prompts]
    if stage == "minkprob":
        return [len(tokens.encode(p)) for p in prompts]
    return [len(tokens.render(json.loads(p))) for p in prompts]


def _asker(stage: str, config: RunConfig, layout: Layout, backend):
    """(ask, check) of the stage, as its `run` builds them."""
    from .signals import forecast, label_record, minkprob, recall

    if stage == "recall":
        label_record.record(layout, recall.TASK, backend, recall.check_single_token(backend, config.recall.labels))
    signal = {"forecast": forecast, "recall": recall, "minkprob": minkprob}[stage]
    return signal.asker(config, backend), signal.context_check(config, backend)


def probe_stage(stage: str, stage_list: list, config: RunConfig, layout: Layout, backend) -> StageCost:
    """Ask and time the first batches of the stage's missing queries (kept in its cache); the rest estimated from
    them (timing.Timing.estimate), with its tokens for the GPU line."""
    from .llm.cache import ResponseCache
    from .signals.recall_mode import uses_sampling

    cache = ResponseCache(layout.raw_file(stage))
    todo = cache.missing(stage_list)
    n_total = len({q.key for q in stage_list})
    if not todo:
        return StageCost(stage, 0, Estimate(0, 0.0, 0.0, 0.0, "every answer cached"), _peak_gb(), cached=n_total)
    if stage == "recall" and uses_sampling(config):
        earlier = timing.recorded(config.model, stage, todo)
        return StageCost(stage, len(todo), earlier.estimate(len(todo)) if earlier else Estimate(
            len(todo), math.nan, math.nan, math.nan, "not probed"), _peak_gb(), cached=n_total - len(todo),
            note="the sampling fallback is not probed (it needs its own confirmation, --yes-sampling)")
    ask, check = _asker(stage, config, layout, backend)
    if check is not None:
        check(todo)
    batch_size = config.model.queries_per_batch
    first, rest = todo[:timing.first_size(batch_size)], todo[timing.first_size(batch_size):]
    measured = timing.ask_timed(first, cache, ask, batch_size, Timing(batch_size))
    timing.record(config.model, stage, todo, measured)
    note = ""
    if stage == "forecast":
        note = _parse_note(first, cache, config)
    tokens = sum(_count_tokens(backend, stage, [q.prompt for q in rest]))
    tokens += config.forecast.max_new_tokens * len(rest) if stage == "forecast" else 0
    return StageCost(stage, len(rest), measured.estimate(len(rest)), _peak_gb(), cached=n_total - len(todo),
                     probed=len(first), tokens=tokens, note=note)


def _parse_note(first: list, cache, config: RunConfig) -> str:
    """The parse rate of the probed forecast answers, and what `lapbias forecast` will do with it (Step 1)."""
    from .errors import ParseRateError
    from .signals import forecast

    answers, _ = forecast.answers_table(first, cache, config)
    rate = float(answers["parsed"].mean())
    try:
        forecast.check_first_answers(first, cache, config)
    except ParseRateError as err:
        return (f"parse rate of these {len(first)} answers {rate:.1%}: `lapbias forecast` would stop after its first "
                "answers with:\n" + "\n".join(f"              {line}" for line in str(err).splitlines()))
    return f"parse rate of these {len(first)} answers {rate:.1%}"


def planned_estimation(frame: pd.DataFrame, config: RunConfig, text_measures: bool = True) -> tuple[int, int]:
    """(regressions, bootstrap draws) the Python engine's `estimate` runs on the validated rows `frame`: on each
    sample with rows (pre-cutoff; post-cutoff, target dates split as `panel` splits them), the four validation
    regressions (pooled, high-LAP, low-LAP and their difference, high_minus_low) and the detection regression
    (protocol Steps 3-5) and paper Table V's two columns; on a pre-cutoff sample with rows the power's standalone
    regression (estimate/power.py), paper Table II's two columns, Table III's two when the [estimate] moderator
    column exists, Table IV's two with p(w_N+1) and two more with a stated confidence ([forecast] confidence_regex);
    when both samples have rows and [estimate] bootstrap_reps > 0, the bootstrap's
    in-sample beta_3 and its draws (paper Figure III); and for the report's robustness table, the validation,
    detection and power regressions again under every other LAP measure (estimate/measures.py: all of them, as the
    Min-K% pass gives every measure of the text; the reference measure only with [minkprob] reference_model), and
    the text-drift diagnostics' two detection regressions per text measure (estimate/text_drift.py). Without a
    cutoff, both samples are counted. `text_measures` False: the Min-K% pass does not run (a server without prompt
    log-probs, the recall LAP configured), so no text measure is estimated."""
    from .panel import split

    if config.study.cutoff:
        post = split(frame["target_date"], config)[1]
        pre_rows, post_rows = bool((post == 0).any()), bool((post == 1).any())
    else:
        pre_rows = post_rows = True
    reps = config.estimate.bootstrap_reps if pre_rows and post_rows else 0
    pre_only = 1 + 2 + 2 * (config.estimate.moderator in frame.columns) + 2 + 2 * bool(config.forecast.confidence_regex)
    per_measure = (pre_rows + post_rows) * 5 + pre_rows
    text = [m for m in measures.TEXT_MEASURES if text_measures and (m != "ref" or config.minkprob.reference_model)]
    others = [m for m in measures.REGISTRY if m != config.estimate.lap_measure
              and (m in text or measures.REGISTRY[m].task != "minkprob")]
    regressions = (pre_rows + post_rows) * (5 + 2) + pre_rows * pre_only + (reps > 0) + len(others) * per_measure \
        + pre_rows * 2 * len(text)  # text drift: each text measure's beta_3 as is and residualised
    return regressions, reps


def estimate_stage(frame: pd.DataFrame, config: RunConfig, text_measures: bool = True) -> StageCost:
    """Time and memory of `estimate` (planned_estimation's regressions and bootstrap draws) measured on a synthetic
    panel of the study's size: bootstrap draws as the run computes them (blocks of four, one per SIMD vector of the C
    kernel, in one thread per core), 32 blocks per thread, scaled to the draws; one reghdfe fit times the
    regressions."""
    from .estimate.bootstrap import pairs_bootstrap, threads as bootstrap_threads
    from .estimate.reghdfe import reghdfe

    regressions, reps = planned_estimation(frame, config, text_measures)
    rng = np.random.default_rng(0)
    n = len(frame)
    entities, periods = frame["entity_id"].nunique(), max(frame["text_date"].nunique(), 2)
    panel = pd.DataFrame({"entity_num": rng.integers(0, max(entities, 2), n), "period_num": rng.integers(0, periods, n),
                          "mu_hat": rng.choice([-1.0, 1.0], n), "lap": rng.uniform(size=n), "outcome": rng.normal(size=n)})
    fits, fit_ok = [], True
    for _ in range(2):  # the first fit in a process also pays for loading and compiling the estimator
        start = time.perf_counter()
        try:
            reghdfe(panel, "outcome", ["mu_hat", "lap", "c.mu_hat#c.lap"], absorb=["entity_num", "period_num"])
        except Exception:  # a degenerate synthetic panel (tiny study): only the time matters here
            fit_ok = False
        fits.append(time.perf_counter() - start)
    first, fit = fits
    per_draw = 0.0
    threads = bootstrap_threads()
    draws = 128 * threads  # enough draws that starting the threads is a small part of their time
    if n >= 10 and reps:  # the bootstrap needs 10 rows
        pairs_bootstrap(panel, 0.0, B=1, progress=False)  # compiles or loads the kernel, untimed
        start = time.perf_counter()
        pairs_bootstrap(panel, 0.0, B=draws, block=4, progress=False)
        per_draw = (time.perf_counter() - start) / draws
    seconds = first + (regressions - 1) * fit + per_draw * reps
    why_none = "[estimate] bootstrap_reps = 0" if config.estimate.bootstrap_reps <= 0 else "one sample has no rows"
    measured = f" (measured on {draws} in {threads} threads)" if reps else f" (no bootstrap: {why_none})"
    failed = "" if fit_ok else " (synthetic fit failed)"
    basis = f"{regressions} regressions at {fit:.2f} s (the first {first:.2f} s){failed} + {reps:,} bootstrap draws " \
            f"at {per_draw * 1e3:.2f} ms{measured}"
    return StageCost("estimate", 0, _spread(seconds, basis), _peak_gb(),
                     work=f"{regressions} regressions + {reps:,} bootstrap draws")


def panel_and_report_stage(n: int) -> StageCost:
    """Time of the bulk of `panel` and `report` beyond reading the study's files, measured on a synthetic panel of
    the study's n rows in a temporary folder: panel.parquet and the two .dta files, the report's two figures."""
    import tempfile

    from .io import write_parquet
    from .panel import write_dta
    from .report.figures import lap_histogram

    rng = np.random.default_rng(0)
    panel = pd.DataFrame({"row_id": [f"r{i}" for i in range(n)], "post": rng.integers(0, 2, n),
                          "lap": rng.uniform(size=n), "outcome": rng.normal(size=n),
                          "target_date": pd.Timestamp("2024-06-28") + pd.to_timedelta(rng.integers(0, 9, n), unit="D")})
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lapbias-dry-run-") as folder:
        write_parquet(panel, Path(folder) / "panel.parquet")
        for name in ("panel_pre", "panel_post", "lap_hist", "bootstrap"):
            if name.startswith("panel"):
                write_dta(panel, Path(folder) / f"{name}.dta")
            else:
                lap_histogram(panel, Path(folder) / f"{name}.png")
    seconds = time.perf_counter() - start
    return StageCost("panel, report", 0, _spread(seconds, "measured on a synthetic panel of the study's rows"),
                     _peak_gb(), work="panel.parquet, 2 .dta files, 2 figures")


def _spread(seconds: float, basis: str) -> Estimate:
    return Estimate(0, seconds, seconds * timing.SPREAD[0], seconds * timing.SPREAD[1], basis)


def h100_tokens_per_s(backend) -> tuple[float, str]:
    parameters = getattr(backend, "n_parameters", None)
    if parameters is not None and parameters < 1e9:
        return H100_TOKENS_PER_S["small"], "bundled-size model"
    parameters = parameters or 8e9
    rate = H100_TOKENS_PER_S["8B"] * H100_8B_PARAMETERS / parameters
    return rate, f"8B-shaped bf16 rate scaled to {parameters / 1e9:.1f}B parameters"


def dry_run(config: RunConfig, layout: Layout) -> str:
    """The dry-run report: rows; per stage the queries cached, probed and left, their time and its range, memory;
    the whole run's time and range; the GPU line (module docstring)."""
    from .data.validate import validate_file
    from .llm import make_backend

    start_up = start_up_seconds()
    began = time.perf_counter()
    frame = validate_file(config.data.path, config).frame
    validate = time.perf_counter() - began
    began = time.perf_counter()
    queries = stage_queries(frame, config)
    from .llm.cache import ResponseCache

    missing = {stage: ResponseCache(layout.raw_file(stage)).missing(stage_list)
               for stage, stage_list in queries.items()}
    reading = time.perf_counter() - began
    load, backend, stages = 0.0, None, []
    if any(missing.values()):
        began = time.perf_counter()
        backend = make_backend(config.model)
        load = time.perf_counter() - began
    text_measures = True
    for stage, stage_list in queries.items():
        if stage == "minkprob" and missing[stage] and _prompt_scoring_unavailable(config, backend):
            text_measures = False
            continue
        stages.append(probe_stage(stage, stage_list, config, layout, backend))
    asks = any(s.queries for s in stages)  # the run loads the model only for queries the probe left
    stages += [estimate_stage(frame, config, text_measures), panel_and_report_stage(len(frame))]
    fixed = start_up + validate + DERIVE * reading + load * asks
    total = Estimate(0, *(fixed + sum(_or0(getattr(s.estimate, part)) for s in stages)
                          for part in ("seconds", "low", "high")), "")
    lines = [f"dry run of `lapbias run`: {len(frame):,} rows, model {config.model.model_id} ({config.model.backend}, "
             f"{config.model.dtype}, {config.model.device}, batch size {config.model.queries_per_batch}) on "
             f"{machine()}, load average {timing.load_average():.1f}"]
    for s in stages:
        if s.work:
            lines.append(f"  {s.stage:9s} {s.work}: {s.estimate.text()}, peak {s.peak_gb:.1f} GB")
            lines.append(f"            {s.estimate.basis}")
            continue
        total_queries = s.cached + s.probed + s.queries
        if not s.queries:
            lines.append(f"  {s.stage:9s} 0 of {total_queries:,} queries to ask: no model call"
                         + (f" ({s.probed} asked now to time them, kept in {layout.raw_file(s.stage)})" if s.probed
                            else ""))
        else:
            said = s.estimate.text() if math.isfinite(s.estimate.seconds) else "time not measured"
            lines.append(f"  {s.stage:9s} {s.queries:,} of {total_queries:,} queries to ask: {said}, peak "
                         f"{s.peak_gb:.1f} GB" + (f" ({s.probed} asked now to time them, kept in "
                                                  f"{layout.raw_file(s.stage)})" if s.probed else ""))
            lines.append(f"            {s.estimate.basis}")
        if s.note:
            lines.append(f"            {s.note}")
    loaded = (f"loading the model {load:.0f} s" if asks else "no model load (every query is cached)" if backend is None
              else f"no model load (the {sum(s.probed for s in stages)} queries asked now were the last)")
    lines.append(f"  other     start-up {start_up:.1f} s, validate {validate:.1f} s, deriving the signals from the "
                 f"caches about {DERIVE * reading:.1f} s, {loaded}")
    lines.append(f"  total     {total.text()} for `lapbias run` on this machine at this load")
    if backend is not None:
        lines.append(_gpu_line(backend, stages, total.seconds))
    return "\n".join(lines)


def _or0(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _prompt_scoring_unavailable(config: RunConfig, backend) -> bool:
    """As `run`: an HTTP endpoint without prompt log-probs skips Min-K% when the recall LAP is the measure."""
    return config.model.backend == "openai" and measures.configured(config).task != "minkprob" \
        and bool(backend.prompt_scoring_unavailable())


def _gpu_line(backend, stages: list[StageCost], total: float) -> str:
    rate, label = h100_tokens_per_s(backend)
    tokens = sum(s.tokens for s in stages)
    model_seconds = sum(_or0(s.estimate.seconds) for s in stages if not s.work)
    gpu = tokens / rate + (total - model_seconds)
    servers = max(1, math.ceil(tokens / rate / max(HOUR - (total - model_seconds), 60.0)))
    verdict = "under an hour" if gpu < HOUR else f"over an hour; about {servers} servers (README, backend = " \
                                                 "\"openai\" with several base_urls) would bring it under"
    return (f"  one H100 (benchmarks/RESULTS.md, {label}: {rate:,.0f} tokens/s; not this machine): about "
            f"{duration(gpu)}, {verdict}; forecast generation costed at the prompt rate (a lower bound)")
