"""Min-K% scoring on a GPU with a larger model: scored tokens/s and model FLOP utilisation (MFU).

Runs only where CUDA is available (the lent H100 of this workplace); elsewhere it prints why and leaves
benchmarks/results/minkprob_gpu.md as it was, so RESULTS.md keeps the last GPU measurement with its machine.

Model: the Llama-3-8B architecture (32 layers, d = 4096, 32 query / 8 key-value heads, MLP 14336) with the
bundled SmolLM2 tokenizer (vocabulary 49152), randomly initialised in bfloat16: no 8B weights can be brought
to a machine without network access, and throughput and MFU do not depend on the weights' values. It is saved
and loaded through the transformers backend like any local model. Texts: the demo panel's forecast prompts
(the default Min-K% scored text), repeated to N_TEXTS.

(a) the reference Min-K% loop (Shi et al., min-k-prob): one text at a time, full softmax and log-softmax;
(b) this project's transformers backend: length-sorted padded batches, logsumexp and the target logit only.

FLOPs per processed token (forward only; Kaplan et al. 2020, eq. 2.2 without the backward pass):
2 * N + 2 * n_layer * n_ctx * d_model, N = parameters without the input embedding (the LM head counted), n_ctx
the text's length (causal attention over the whole prompt, an upper bound). MFU = achieved FLOP/s / the
GPU's dense bf16 peak (H100 SXM: 989.4 TFLOP/s; H200: the same chip). Padding tokens are not counted as work.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "minkprob_gpu.md"
N_TEXTS, BATCH_SIZES, N_REFERENCE = 2048, (64, 256), 128
PEAK_BF16 = {"H100": 989.4e12, "H200": 989.4e12}
LLAMA3_8B_SHAPE = dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                       intermediate_size=14336, max_position_embeddings=8192, rope_theta=500000.0,
                       tie_word_embeddings=False)


def texts(n: int) -> list[str]:
    import pandas as pd

    from lapbias.config import ForecastConfig
    from lapbias.signals.forecast import fill_prompt

    frame = pd.read_csv(ROOT / "data" / "demo" / "demo_panel.csv", parse_dates=["text_date", "target_date"])
    frame = frame.dropna(subset=["text_date", "target_date"])
    frame["ticker"] = frame["ticker"].fillna("")
    prompts = [fill_prompt(ForecastConfig().prompt, row) for _, row in frame.iterrows()]
    return [prompts[i % len(prompts)] + ("" if i < len(prompts) else f" ({i // len(prompts)})") for i in range(n)]


def build_model(tokenizer_dir: Path, target: Path) -> int:
    """The random Llama-3-8B-shaped model saved to `target` with the tokenizer; returns N (see docstring)."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = LlamaConfig(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         **LLAMA3_8B_SHAPE)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    n = sum(p.numel() for p in model.parameters()) - model.get_input_embeddings().weight.numel()
    del model
    torch.cuda.empty_cache()
    return n


@torch.inference_mode()
def reference(backend, batch: list[str]) -> None:
    """(a): the reference loop, one text at a time with the full softmax and log-softmax."""
    for text in batch:
        input_ids = torch.tensor(backend.tokenizer(text)["input_ids"], device="cuda").unsqueeze(0)
        logits = backend.model(input_ids).logits
        torch.softmax(logits[0, :-1], dim=-1)
        log_probs = torch.log_softmax(logits[0, :-1], dim=-1)
        log_probs.gather(dim=-1, index=input_ids[0][1:].unsqueeze(-1)).squeeze(-1).tolist()


def timed(score, batch: list[str]) -> float:
    score(batch[:8])  # warm-up: allocations, kernel selection
    torch.cuda.synchronize()
    start = time.perf_counter()
    score(batch)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> int:
    if not torch.cuda.is_available():
        print("bench_minkprob_gpu: no CUDA device here; results/minkprob_gpu.md left as it was")
        return 0
    from lapbias.llm import bundled
    from lapbias.llm.transformers_backend import TransformersBackend

    tokenizer_dir = Path(os.environ.get("LAPBIAS_TOKENIZER_DIR", "") or bundled.resolve(bundled.BUNDLED_PREFIX
                                                                                       + "SmolLM2-135M-Instruct"))
    target = Path(os.environ.get("TMPDIR", "/tmp")) / "lapbias-llama3-8b-shape"
    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    n_params = build_model(tokenizer_dir, target)
    backend = TransformersBackend(str(target), dtype="bfloat16", device="cuda", batch_size=BATCH_SIZES[0])
    setup_seconds = time.perf_counter() - start
    batch = texts(N_TEXTS)
    lengths = [len(backend.tokenizer(t)["input_ids"]) for t in batch]
    d_model, n_layer = LLAMA3_8B_SHAPE["hidden_size"], LLAMA3_8B_SHAPE["num_hidden_layers"]

    def flops(count: int) -> float:
        return sum(2 * n_params * n + 2 * n_layer * n * n * d_model for n in lengths[:count])

    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAK_BF16.items() if k in name), float("nan"))
    t_ref = timed(lambda b: reference(backend, b), batch[:N_REFERENCE])
    measured = [("(a) reference loop: one text, full softmax + log-softmax", t_ref, N_REFERENCE)]
    for size in BATCH_SIZES:
        backend.batch_size = size
        measured.append((f"(b) transformers backend, batch {size}", timed(backend.prompt_logprobs, batch), N_TEXTS))
    rows = []
    for label, seconds, count in measured:
        scored = sum(n - 1 for n in lengths[:count])
        achieved = flops(count) / seconds
        rows.append(f"| {label} | {count} | {seconds:.2f} | {scored / seconds:,.0f} | {achieved / 1e12:.1f} | "
                    f"{achieved / peak:.1%} |")
    best = min(seconds for _, seconds, count in measured[1:])
    ratio = (sum(n - 1 for n in lengths) / best) / (sum(n - 1 for n in lengths[:N_REFERENCE]) / t_ref)
    lines = [
        "## Min-K% scoring on a GPU (issue 5)", "",
        f"Machine: {name}, torch {torch.__version__} (CUDA {torch.version.cuda}), {os.cpu_count()} CPU cores. "
        f"Model: Llama-3-8B architecture, random bf16 weights ({n_params / 1e9:.2f} B parameters without the input "
        f"embedding), SmolLM2 tokenizer; saved and loaded through the transformers backend in {setup_seconds:.0f} s. "
        f"Texts: demo forecast prompts, {min(lengths)}-{max(lengths)} tokens. One warm-up call per method untimed.", "",
        "| method | texts | seconds | scored tokens/s | achieved TFLOP/s | MFU (bf16 dense peak) |",
        "|---|---|---|---|---|---|", *rows, "",
        f"Speed-up of the best (b) over (a): {ratio:.1f}x in scored tokens/s. FLOPs per token: 2N + 2·n_layer·n_ctx·d_model "
        "(forward); padding not counted.",
        "vLLM on CUDA was not measured: the lent GPU machine has no vLLM, reaches no package registry, and a vLLM "
        "CUDA wheel is far above the 64 MiB that can be carried to it per call.",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    shutil.rmtree(target, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
