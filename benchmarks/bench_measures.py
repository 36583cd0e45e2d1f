"""The Min-K% stage with every LAP measure against the Min-K% stage alone, in one run on one machine, on the same
texts (the demo panel's forecast prompts, the default scored text) with the bundled SmolLM2-135M-Instruct in fp32:
(a) the stage as it was before the measures (the baseline): `prompt_logprobs` (the realised token's log-prob only),
    the answers appended to a JSONL cache, Min-K% derived;
(b) the stage with every measure: `prompt_scores` (the whole vocabulary's moments and top-1 in float64 as well), the
    answers with their moments appended, Min-K%, Min-K%++, Gap-K%, the zlib ratio and the loss derived.
Each is timed REPEATS times, alternating, the model warm; the ratio of medians is the cost of the measures (they may
cost at most 1.15x the Min-K% stage alone). Then the top-20 approximations of the moments (llm/moments.py: what vLLM
and servers return) against the exact ones on the same texts: per text, Min-K%++ and Gap-K% from the top-20 with the
rest of the probability spread evenly over the other tokens (vLLM, or a server with `[model] tokenizer`) and from the top-20 renormalised
(a server without), against the whole vocabulary's.

    .venv/bin/python benchmarks/bench_measures.py

Writes benchmarks/results/measures.md; `--smoke --out FILE` runs 4 texts once (the test suite's smoke test).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.config import ForecastConfig, from_dict  # noqa: E402
from lapbias.llm import moments  # noqa: E402
from lapbias.llm.cache import Query, ResponseCache  # noqa: E402
from lapbias.llm.transformers_backend import TransformersBackend  # noqa: E402
from lapbias.signals.forecast import fill_prompt  # noqa: E402
from lapbias.signals.measures import TEXT_MEASURES, ScoredText  # noqa: E402
from lapbias.signals.measures.minkprob import min_k_prob  # noqa: E402

MODEL = "bundled:SmolLM2-135M-Instruct"
ROOT = Path(__file__).resolve().parent.parent
N_TEXTS, BATCH_SIZE, REPEATS = 128, 32, 5


def texts() -> list[str]:
    frame = pd.read_csv(ROOT / "data" / "demo" / "demo_panel.csv", parse_dates=["text_date", "target_date"])
    frame["ticker"] = frame["ticker"].fillna("")
    prompt = ForecastConfig().prompt
    return [fill_prompt(prompt, row) for _, row in frame.head(N_TEXTS).iterrows()]


def baseline_stage(backend, batch: list[str], folder: Path) -> list[float]:
    cache = ResponseCache(folder / "baseline.jsonl")
    scored = backend.prompt_logprobs(batch)
    queries = [Query("minkprob", MODEL, str(i), text, {"run": time.perf_counter()}) for i, text in enumerate(batch)]
    cache.append((q, {"tokens": [t.to_json() for t in tokens]}) for q, tokens in zip(queries, scored))
    return [min_k_prob([t[2] for t in cache.response(q)["tokens"]], 0.2)[0] for q in queries]


def measures_stage(backend, batch: list[str], folder: Path, config) -> list[dict]:
    from lapbias.signals.minkprob import scored as as_scored

    cache = ResponseCache(folder / "measures.jsonl")
    scores = backend.prompt_scores(batch)
    queries = [Query("minkprob", MODEL, str(i), text, {"run": time.perf_counter()}) for i, text in enumerate(batch)]
    cache.append((q, {"tokens": [t.to_json() for t in s.tokens], "moments": [list(m) for m in s.moments],
                      "top_k": s.top_k}) for q, s in zip(queries, scores))
    return [{m.column: m.score(as_scored(cache.response(q), q.prompt), config) for m in TEXT_MEASURES.values()}
            for q in queries]


@torch.inference_mode()
def approximations(backend, batch: list[str], config) -> dict[str, dict[str, np.ndarray]]:
    """Per text, Min-K%++ and Gap-K% from the exact moments and from the top-20 both ways (llm/moments.py)."""
    vocabulary = int(backend.model.config.vocab_size)
    found = {way: {"lap_minkpp": [], "lap_gapk": []} for way in ("exact", "rest spread", "renormalised")}
    for text, score in zip(batch, backend.prompt_scores(batch)):
        ids = torch.tensor([backend.tokens.encode(text)])
        log_probs = torch.log_softmax(backend.model(input_ids=ids).logits[0, :-1].double(), -1)
        top = torch.topk(log_probs, moments.MOMENT_TOP_K, -1)
        lp = np.array([t.logprob for t in score.tokens])
        candidates = []
        for j, token in enumerate(score.tokens):
            values = top.values[j].tolist()
            if token.token_id not in top.indices[j].tolist():
                values.append(token.logprob)
            candidates.append(values)
        ways = {"exact": np.array(score.moments),
                "rest spread": np.array([moments.from_top(v, vocabulary) for v in candidates]),
                "renormalised": np.array([moments.from_top(v) for v in candidates])}
        for way, stats in ways.items():
            scored = ScoredText(text, lp, stats[:, 0], stats[:, 1], stats[:, 2])
            for column in found[way]:
                measure = next(m for m in TEXT_MEASURES.values() if m.column == column)
                found[way][column].append(measure.score(scored, config))
    return {way: {c: np.array(v) for c, v in columns.items()} for way, columns in found.items()}


def main(argv: list[str] | None = None) -> None:
    global N_TEXTS, BATCH_SIZE, REPEATS
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true", help="4 texts, once: checks that the benchmark runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.smoke:
        N_TEXTS, BATCH_SIZE, REPEATS = 4, 4, 1
    out = args.out or ROOT / "benchmarks" / "results" / "measures.md"
    batch = texts()
    torch.set_num_threads(os.cpu_count() or 1)
    backend = TransformersBackend(MODEL, batch_size=BATCH_SIZE)
    config = from_dict({})
    backend.prompt_scores(batch[:4])  # warm-up
    times = {"baseline": [], "measures": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(REPEATS):
            for name, stage in (("baseline", lambda: baseline_stage(backend, batch, Path(folder))),
                                ("measures", lambda: measures_stage(backend, batch, Path(folder), config))):
                start = time.perf_counter()
                stage()
                times[name].append(time.perf_counter() - start)
    base, full = statistics.median(times["baseline"]), statistics.median(times["measures"])
    n_tokens = sum(len(s.tokens) for s in backend.prompt_scores(batch[:8])) * len(batch) / min(8, len(batch))
    found = approximations(backend, batch, config)
    lines = [
        "## The Min-K% stage with every LAP measure, and the top-20 moments", "",
        f"Machine: {describe()}; torch {torch.__version__}, {torch.get_num_threads()} threads, no GPU. Bundled "
        f"SmolLM2-135M-Instruct, fp32, {len(batch)} texts (demo forecast prompts, about {n_tokens:,.0f} scored "
        f"tokens), batch {BATCH_SIZE}; each stage timed {REPEATS} times, alternating, the model warm (medians).", "",
        "| stage | median seconds | all timings (s) | vs the baseline |", "|---|---|---|---|",
        f"| (a) Min-K% alone (baseline: prompt_logprobs, cache, Min-K%) | {base:.3f} | "
        f"{', '.join(f'{t:.2f}' for t in times['baseline'])} | 1.00x |",
        f"| (b) every measure (prompt_scores in float64, cache, five measures) | {full:.3f} | "
        f"{', '.join(f'{t:.2f}' for t in times['measures'])} | {full / base:.2f}x |", "",
        "Moments from the top-20 (what vLLM and a server return) against the whole vocabulary's, per text:", "",
        "| measure | top-20 moments | Pearson r | Spearman rho | mean abs difference | exact mean |",
        "|---|---|---|---|---|---|"]
    for column in ("lap_minkpp", "lap_gapk"):
        exact = found["exact"][column]
        for way, used in (("rest spread", "vLLM; a server with [model] tokenizer"), ("renormalised", "a server "
                                                                                              "without")):
            approx = found[way][column]
            spearman = pd.Series(exact).corr(pd.Series(approx), method="spearman")
            lines.append(f"| {column} | {way} ({used}) | "
                         f"{np.corrcoef(exact, approx)[0, 1]:.4f} | {spearman:.4f} | "
                         f"{np.abs(exact - approx).mean():.4g} | {exact.mean():.4g} |")
    write_report(out, lines)


if __name__ == "__main__":
    main()
