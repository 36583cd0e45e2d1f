"""Forecast generation throughput (answers per second, issue 17) on the bundled SmolLM2-135M-Instruct, in one run on
one machine, on the same chats (the demo panel's forecast prompts, greedy, max_new_tokens of the default config):
(a) reference loop: one chat at a time, greedy decoding without a KV cache (each new token recomputes the whole
    sequence: `model(ids).logits[:, -1].argmax()`), stopping at the end-of-sequence token;
(b) the transformers backend's `generate` (length-sorted left-padded batches, transformers' KV cache), as the
    forecast stage calls it.
The answers of (b) are compared with (a) (share of identical answer texts). Runs on CPU; `cuda` as first argument
runs it on a GPU.

    python benchmarks/bench_generation.py [cpu|cuda] [--smoke] [--out FILE]

Writes benchmarks/results/generation.md (CPU) or generation_cuda.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.config import ForecastConfig  # noqa: E402
from lapbias.estimate.bootstrap import threads  # noqa: E402
from lapbias.llm.transformers_backend import TransformersBackend  # noqa: E402
from lapbias.signals.forecast import chat, fill_prompt  # noqa: E402

MODEL = "bundled:SmolLM2-135M-Instruct"
ROOT = Path(__file__).resolve().parent.parent


def chats(n: int) -> list:
    frame = pd.read_csv(ROOT / "data" / "demo" / "demo_panel.csv", parse_dates=["text_date", "target_date"])
    frame["ticker"] = frame["ticker"].fillna("")
    config = ForecastConfig()
    rows = [row for _, row in frame.iterrows()]
    return [chat(fill_prompt(config.prompt, rows[i % len(rows)]), config.system_prompt) for i in range(n)]


@torch.inference_mode()
def reference(backend: TransformersBackend, batch: list, max_new_tokens: int) -> list[str]:
    """(a): one chat at a time, no KV cache: every step runs the model on the whole sequence so far."""
    out = []
    for one in batch:
        ids = torch.tensor([backend.tokens.render(one)], device=backend.device)
        new: list[int] = []
        for _ in range(max_new_tokens):
            token = int(backend.model(ids).logits[0, -1].argmax())
            if token == backend.tokenizer.eos_token_id:
                break
            new.append(token)
            ids = torch.cat([ids, torch.tensor([[token]], device=backend.device)], dim=1)
        out.append(backend.tokenizer.decode(new, skip_special_tokens=True))
    return out


def timed(generate, batch: list) -> tuple[list[str], float]:
    generate(batch[:2])  # warm-up: first-call allocations are not throughput
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    answers = generate(batch)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return answers, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("device", nargs="?", default="cpu")
    parser.add_argument("--smoke", action="store_true", help="4 chats: checks that the benchmark runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    n_chats, batch_size = (4, 4) if args.smoke else (32, 32)
    out = args.out or ROOT / "benchmarks" / "results" / ("generation.md" if args.device == "cpu" else
                                                        f"generation_{args.device}.md")
    torch.set_num_threads(threads())
    max_new_tokens = ForecastConfig().max_new_tokens
    backend = TransformersBackend(MODEL, batch_size=batch_size, device=args.device)
    batch = chats(n_chats)
    ref, t_ref = timed(lambda b: reference(backend, b, max_new_tokens), batch)
    fast, t_fast = timed(lambda b: [g.text for g in backend.generate(b, max_new_tokens, 20)], batch)
    same = sum(a.strip() == b.strip() for a, b in zip(ref, fast))
    load = os.getloadavg()
    lines = [
        f"## Forecast generation throughput on {args.device} (issue 17)", "",
        f"Machine: {describe()}; torch {torch.__version__}, {torch.get_num_threads()} threads; load average "
        f"{load[0]:.1f} (1 min) when the run ended. Bundled SmolLM2-135M-Instruct, fp32, greedy, "
        f"max_new_tokens = {max_new_tokens}, {n_chats} demo forecast chats; one warm-up call of 2 chats per method "
        "is not timed.", "",
        "| method | seconds | answers/s | speed-up vs (a) | answers identical to (a) |",
        "|---|---|---|---|---|",
        f"| (a) reference loop: one chat, no KV cache | {t_ref:.2f} | {n_chats / t_ref:.2f} | 1.0x | — |",
        f"| (b) transformers backend generate, batch {batch_size}, KV cache | {t_fast:.2f} | {n_chats / t_fast:.2f} | "
        f"{t_ref / t_fast:.1f}x | {same}/{n_chats} |",
    ]
    write_report(out, lines)


if __name__ == "__main__":
    main()
