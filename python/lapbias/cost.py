"""Whole-study time and memory estimate for `lapbias run --dry-run CONFIG`.

Nothing is asked of the study's rows and nothing is written under the run's folders. The estimate is
    seconds(stage) = tokens(stage) / rate(stage),
tokens(stage) = the prompt tokens (plus max_new_tokens per forecast answer) of the stage's real queries, counted
with the model's tokenizer on a sample of SAMPLE_ROWS rows and scaled to the study; rate(stage) = tokens per
second measured by a short timed probe of the configured backend on the first `probe` queries of each stage (one
untimed warm-up), cached per machine, backend, model, precision, device and batch size in
~/.cache/lapbias/probe_rates.json ($LAPBIAS_CACHE_DIR overrides), so that a second dry run probes nothing. Memory
= the process's peak resident set (and GPU peak allocation) during the probe. The estimate stage is probed the
same way: a few bootstrap draws and one detection regression on a synthetic panel of the study's size.

The GPU line uses the H100 throughput recorded in benchmarks/RESULTS.md, not this machine: prompt
tokens/s of the transformers backend, bundled model (44,834 tokens/s) or an 8B-shaped bf16 model (25,233 tokens/s,
scaled by parameters for other sizes). Generation on the GPU was not measured; forecast tokens are costed at the
prompt-scoring rate, a lower bound of its time.
"""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .config import RunConfig
from .io import write_text

SAMPLE_ROWS = 200
H100_TOKENS_PER_S = {"small": 44_834, "8B": 25_233}
"""benchmarks/RESULTS.md, Min-K% scoring on NVIDIA H100 80GB HBM3: bundled SmolLM2-135M fp32 batch 32; Llama-3-8B
architecture bf16 batch 256 (7.18e9 parameters without the input embedding)."""
H100_8B_PARAMETERS = 7.18e9
HOUR = 3600.0


@dataclass
class StageCost:
    stage: str
    queries: int
    tokens: float
    tokens_per_s: float
    peak_gb: float
    basis: str
    work: str = ""
    """What the stage computes, when it is not model queries (the estimate: regressions and bootstrap draws)."""

    @property
    def seconds(self) -> float:
        return self.tokens / self.tokens_per_s if self.tokens_per_s > 0 else 0.0


def _cache_file() -> Path:
    return Path(os.environ.get("LAPBIAS_CACHE_DIR", Path.home() / ".cache" / "lapbias")) / "probe_rates.json"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown CPU" elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown CPU"


def machine() -> str:
    return f"{platform.node()} ({os.cpu_count()} cores, {cpu_model()})"


def _peak_gb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    try:
        import torch

        if torch.cuda.is_available():
            peak += torch.cuda.max_memory_allocated() / 1e9
    except ImportError:
        pass
    return peak


def stage_queries(frame: pd.DataFrame, config: RunConfig) -> dict[str, list]:
    """The real queries of the three model stages for `frame` (validated input rows)."""
    from .signals import forecast, minkprob, recall

    pairs = frame.drop_duplicates(["entity_id", "target_date"])
    return {"forecast": forecast.queries(frame, config), "recall": recall.queries(pairs, config),
            "minkprob": minkprob.queries(frame, config)}


def _count_tokens(backend, stage: str, prompts: list[str]) -> list[int]:
    tokens = getattr(backend, "tokens", None)
    if tokens is None:  # an HTTP backend has no tokenizer here: about 4 characters per token
        return [max(1, len(p) // 4) for p in prompts]
    if stage == "minkprob":
        return [len(tokens.encode(p)) for p in prompts]
    return [len(tokens.render(json.loads(p))) for p in prompts]


def _call(backend, stage: str, prompts: list[str], config: RunConfig) -> None:
    if stage == "forecast":
        backend.generate([json.loads(p) for p in prompts], config.forecast.max_new_tokens, 20)
    elif stage == "recall":
        backend.next_token_logprobs([json.loads(p) for p in prompts], config.recall.top_logprobs)
    else:
        backend.prompt_logprobs(prompts)


def probe_rates(backend, config: RunConfig, queries: dict[str, list], probe: int) -> tuple[dict, bool]:
    """Tokens/s and peak memory per stage from timing `probe` queries of each stage; (rates, from_cache)."""
    key = "|".join([machine(), config.model.backend, config.model.model_id, config.model.dtype, config.model.device,
                    str(config.model.batch_size), str(probe)])
    path = _cache_file()
    cached = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if key in cached:
        return cached[key], True
    rates = {}
    for stage, stage_list in queries.items():
        prompts = [q.prompt for q in stage_list[:probe]]
        if not prompts:
            continue
        _call(backend, stage, prompts[:1], config)  # warm-up, untimed
        tokens = sum(_count_tokens(backend, stage, prompts))
        tokens += config.forecast.max_new_tokens * len(prompts) if stage == "forecast" else 0
        start = time.perf_counter()
        _call(backend, stage, prompts, config)
        rates[stage] = {"tokens_per_s": tokens / (time.perf_counter() - start), "peak_gb": _peak_gb(),
                        "probed": len(prompts)}
    cached[key] = rates
    write_text(path, json.dumps(cached, indent=1, sort_keys=True) + "\n")
    return rates, False


def planned_estimation(frame: pd.DataFrame, config: RunConfig) -> tuple[int, int]:
    """(regressions, bootstrap draws) the Python engine's `estimate` runs on the validated rows `frame`: on each
    sample with rows (pre-cutoff; post-cutoff, target dates split as `panel` splits them), the four validation
    regressions (pooled, high-LAP, low-LAP and their difference, high_minus_low) and the detection regression
    (protocol Steps 3-5) and paper Table V's two columns; on a pre-cutoff sample with rows the power's standalone
    regression (estimate/power.py), paper Table II's two columns, Table III's two when the [estimate] moderator
    column exists, Table IV's two with p(w_N+1) and two more with a stated confidence ([forecast] confidence_regex);
    when both samples have rows and [estimate] bootstrap_reps > 0, the bootstrap's
    in-sample beta_3 and its draws (paper Figure III). Without a cutoff, both samples are counted."""
    from .panel import split

    if config.study.cutoff:
        post = split(frame["target_date"], config)[1]
        pre_rows, post_rows = bool((post == 0).any()), bool((post == 1).any())
    else:
        pre_rows = post_rows = True
    reps = config.estimate.bootstrap_reps if pre_rows and post_rows else 0
    pre_only = 1 + 2 + 2 * (config.estimate.moderator in frame.columns) + 2 + 2 * bool(config.forecast.confidence_regex)
    regressions = (pre_rows + post_rows) * (5 + 2) + pre_rows * pre_only + (reps > 0)
    return regressions, reps


def estimate_stage(frame: pd.DataFrame, config: RunConfig) -> StageCost:
    """Time and memory of `estimate` (planned_estimation's regressions and bootstrap draws) measured on a synthetic
    panel of the study's size: bootstrap draws as the run computes them (blocks of four, one per SIMD vector of the C
    kernel, in one thread per core), two blocks per thread, scaled to the draws; one reghdfe fit times the
    regressions."""
    from .estimate.bootstrap import pairs_bootstrap, threads as bootstrap_threads
    from .estimate.reghdfe import reghdfe

    regressions, reps = planned_estimation(frame, config)
    rng = np.random.default_rng(0)
    n = len(frame)
    entities, periods = frame["entity_id"].nunique(), max(frame["text_date"].nunique(), 2)
    panel = pd.DataFrame({"entity_num": rng.integers(0, max(entities, 2), n), "period_num": rng.integers(0, periods, n),
                          "mu_hat": rng.choice([-1.0, 1.0], n), "lap": rng.uniform(size=n), "outcome": rng.normal(size=n)})
    start = time.perf_counter()
    fit_ok = True
    try:
        reghdfe(panel, "outcome", ["mu_hat", "lap", "c.mu_hat#c.lap"], absorb=["entity_num", "period_num"])
    except Exception:  # a degenerate synthetic panel (tiny study): only the time matters here
        fit_ok = False
    fit = time.perf_counter() - start
    per_draw = 0.0
    threads = bootstrap_threads()
    draws = 8 * threads
    if n >= 10 and reps:  # the bootstrap needs 10 rows
        pairs_bootstrap(panel, 0.0, B=1, progress=False)  # compiles or loads the kernel, untimed
        start = time.perf_counter()
        pairs_bootstrap(panel, 0.0, B=draws, block=4, progress=False)
        per_draw = (time.perf_counter() - start) / draws
    seconds = regressions * fit + per_draw * reps
    why_none = "[estimate] bootstrap_reps = 0" if config.estimate.bootstrap_reps <= 0 else "one sample has no rows"
    measured = f" (measured on {draws} in {threads} threads)" if reps else f" (no bootstrap: {why_none})"
    basis = f"{regressions} regressions at {fit:.2f} s{'' if fit_ok else ' (synthetic fit failed)'} + {reps:,} " \
            f"bootstrap draws at {per_draw * 1e3:.2f} ms{measured}"
    return StageCost("estimate", 0, seconds, 1.0, _peak_gb(), basis,
                     work=f"{regressions} regressions + {reps:,} bootstrap draws")


def h100_tokens_per_s(backend) -> tuple[float, str]:
    parameters = getattr(backend, "n_parameters", None)
    if parameters is not None and parameters < 1e9:
        return H100_TOKENS_PER_S["small"], "bundled-size model"
    parameters = parameters or 8e9
    rate = H100_TOKENS_PER_S["8B"] * H100_8B_PARAMETERS / parameters
    return rate, f"8B-shaped bf16 rate scaled to {parameters / 1e9:.1f}B parameters"


def dry_run(config: RunConfig, probe: int = 4) -> str:
    """The dry-run report: rows, per-stage tokens, measured rate, time and memory; the total; the GPU line."""
    from .data.validate import validate_file
    from .llm import make_backend

    frame = validate_file(config.data.path, config).frame
    queries = stage_queries(frame, config)
    backend = make_backend(config.model)
    rates, from_cache = probe_rates(backend, config, queries, probe)
    stages = []
    for stage, stage_list in queries.items():
        sample = [q.prompt for q in stage_list[:SAMPLE_ROWS]]
        if not sample or stage not in rates:
            continue
        per_query = float(np.mean(_count_tokens(backend, stage, sample)))
        per_query += config.forecast.max_new_tokens if stage == "forecast" else 0
        rate = rates[stage]
        stages.append(StageCost(stage, len(stage_list), per_query * len(stage_list), rate["tokens_per_s"],
                                rate["peak_gb"], f"{per_query:.0f} tokens/query, {rate['tokens_per_s']:,.0f} "
                                f"tokens/s measured on {rate['probed']} queries"))
    model_seconds = sum(s.seconds for s in stages)
    stages.append(estimate_stage(frame, config))
    total = sum(s.seconds for s in stages)
    lines = [f"dry run: {len(frame):,} rows, model {config.model.model_id} ({config.model.backend}, "
             f"{config.model.dtype}, {config.model.device}) on {machine()}; rates "
             f"{'from the cache of an earlier probe' if from_cache else 'measured now'} ({_cache_file()})"]
    for s in stages:
        work = s.work or f"{s.queries:>9,} queries"
        lines.append(f"  {s.stage:9s} {work}  {_duration(s.seconds):>10s}  peak {s.peak_gb:.1f} GB  ({s.basis})")
    lines.append(f"  total     {_duration(total)} on this machine")
    rate, label = h100_tokens_per_s(backend)
    tokens = sum(s.tokens for s in stages if s.stage != "estimate")
    gpu = tokens / rate + (total - model_seconds)
    servers = max(1, math.ceil(tokens / rate / max(HOUR - (total - model_seconds), 60.0)))
    verdict = "under an hour" if gpu < HOUR else f"over an hour; about {servers} servers (README, backend = " \
                                                 "\"openai\" with several base_urls) would bring it under"
    lines.append(f"  one H100 (benchmarks/RESULTS.md, {label}: {rate:,.0f} tokens/s; not this machine): about "
                 f"{_duration(gpu)}, {verdict}; forecast generation costed at the prompt rate (a lower bound)")
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * HOUR:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / HOUR:.1f} h"
