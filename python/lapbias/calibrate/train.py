"""LoRA fine-tuning (peft) of the configured model on the planting corpus, trained on the facts' tokens only; the
merged model saved as a local model directory that any run configuration can name (`[model] model_id = "<dir>"`).

The computation is ordinary causal-LM fine-tuning of LoRA adapters on the last `top_layers` blocks, arranged so
that a CPU does only the work that can change:
- the blocks below the adapted ones are frozen, so their output for a document never changes during training:
  it is computed once per distinct document (`frozen_states`: one forward pass of the lower blocks without
  gradients) and every step runs the top blocks on it (`fact_logits`), the same arithmetic as a full forward pass
  (tests: logits equal to float rounding);
- every document is its own row (no packing: its tokens attend to its own tokens only, as when the recall stage
  asks its query alone), right-padded in batches of documents of similar length (`batches`);
- loss = mean next-token cross-entropy over the fact tokens of the batch (corpus.Document.fact: every token of an
  article but its first, a query's answer and end of turn), and the language-model head is applied at those
  positions only;
- AdamW with betas ADAM_BETAS, gradients clipped to norm CLIP_NORM, linear warm-up then a linearly decaying or
  constant learning rate (`lr_schedule`; NumLeak App. T: constant), `epochs` passes in a seeded order, torch threads
  fixed and deterministic algorithms on.
Cost in floating-point operations: 2 P_low T_distinct for the cache, then per epoch 4 P_top T (forward 2 P_top T;
backward 2 P_top T through the frozen weights down to the lowest adapter; weight gradients only for the LoRA
factors), P = the parameters of the blocks' projections, T = tokens; LoRA's own and the attention scores' FLOPs
are left out (a few percent at these lengths). training.json records tokens per second, these FLOPs per second
and the machine's matmul throughput measured just before training (`matmul_throughput`).
The adapter is saved beside the merged model and hashed (sha256 of adapter_model.safetensors).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import ConfigError, ModelError
from ..llm import bundled, require_device
from .corpus import Document
from .settings import CalibrateSettings

ADAPTER_DIR = "adapter"
ADAPTER_FILE = "adapter_model.safetensors"
CLIP_NORM = 1.0
"""Gradients are clipped to this global L2 norm before each step. MEASURED 2026-11-25 (calibration panel, top 4
blocks, lr 5e-3, no clipping): the loss rose from 0.9 to 5.9 in the second epoch and the model answered "down" to
every forecast prompt and the same LAP (0.81) to every recall query."""
ADAM_BETAS = (0.9, 0.95)
"""AdamW's (beta1, beta2). beta2 = 0.95 instead of torch's 0.999, as in GPT-3 and LLaMA pre-training: the second
moment follows the recent gradients, so a step after many near-zero-loss steps is not divided by a stale, tiny
estimate. MEASURED 2026-11-28 with 0.999 (80 exposed pairs, lr 6e-3, constant rate): loss spikes to 9.9-18.0
after it had reached 0.2 (settings.lr_schedule)."""
WINDOW = 32
"""Batches per window of the shuffled corpus that are formed among documents of similar length (`batches`)."""


@dataclass
class TrainingResult:
    adapter_sha256: str
    loss: pd.DataFrame
    """One row per optimizer step: step, epoch, loss, learning_rate (the rate the step used), tokens_seen."""
    seconds: float
    """Wall-clock seconds of the training steps (the frozen blocks' pass excluded: `cache_seconds`)."""
    cpu_seconds: float
    """CPU seconds of the training steps (all threads): the measure that other jobs on the machine distort least."""
    cache_seconds: float
    tokens: int
    """Tokens run through the top blocks over all epochs."""
    distinct_tokens: int
    """Tokens of the distinct documents run once through the frozen blocks."""
    flops: float
    """Floating-point operations of the training steps (module docstring)."""
    matmul_flops_per_second: float
    threads: int


def load_base(model_id: str, device: str = "cpu"):
    """Tokenizer and fp32 model of `model_id` (bundled: ids resolve to the local safetensors copy), on `device`, which
    the machine must have (llm.require_device)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    require_device(device)
    location = bundled.resolve(model_id)
    try:
        tokenizer = AutoTokenizer.from_pretrained(location)
        model = AutoModelForCausalLM.from_pretrained(location)
    except OSError as err:
        raise ModelError(f"cannot load model {model_id!r} from {location!r} for fine-tuning: "
                         f"{str(err).splitlines()[0]}") from None
    return tokenizer, model.to(device)


def check_target_modules(model, target_modules) -> None:
    """Every name of `[calibrate] target_modules` must name a module of the model's decoder blocks (as peft matches
    it: the module's name, or the end of its dotted path): peft adapts the names it finds and drops the others
    without a word, so a misspelt name would train fewer adapters than the settings (and the fingerprint) say.
    ConfigError listing the blocks' linear modules, what LoRA can adapt."""
    import difflib

    import torch

    inner, _ = decoder(model)
    names = [name for layer in inner.layers for name, _ in layer.named_modules() if name]
    unknown = [target for target in target_modules
               if not any(name == target or name.endswith(f".{target}") for name in names)]
    if unknown:
        linear = sorted({name.rsplit(".", 1)[-1] for layer in inner.layers for name, module in layer.named_modules()
                         if isinstance(module, torch.nn.Linear)})
        close = difflib.get_close_matches(unknown[0], linear, n=1)
        guess = f' (did you mean "{close[0]}"?)' if close else ""
        listed = ", ".join(f'"{name}"' for name in linear)
        given = ", ".join(f'"{target}"' for target in target_modules)
        raise ConfigError(f'[calibrate] target_modules = [{given}]: "{unknown[0]}" is not a module of '
                          f"{type(model).__name__}'s blocks{guess}; its linear modules, which LoRA adapts, are "
                          f"[{listed}]")


def query_encoder(tokenizer, run):
    """pair -> token ids of the pair's recall query exactly as the recall stage renders it (the model's chat
    template with the generation prompt, llm/local_tokens.py); the answer follows it in a training document."""
    from ..llm.base import chat
    from ..llm.local_tokens import LocalTokens
    from ..signals.recall import fill_template

    tokens = LocalTokens(tokenizer)
    return lambda pair: tokens.render(chat(fill_template(run, pair["entity_name"], pair["ticker"],
                                                         pair["target_date"])))


def decoder(model):
    """(the decoder stack with `.layers` and `.norm`, the language-model head) of a causal LM of the Llama family
    (Llama, Qwen2, Mistral, SmolLM, ...): what `only_blocks` needs."""
    inner = getattr(model, "model", None)
    if inner is None or not hasattr(inner, "layers") or not hasattr(inner, "norm"):
        raise ModelError(f"{type(model).__name__} has no decoder stack `.model.layers` with a final `.model.norm`; "
                         "the calibration's training runs the top blocks of a Llama-family model only")
    return inner, model.get_output_embeddings()


@contextmanager
def only_blocks(model, first: int, last: int, final_norm: bool):
    """The model's decoder stack running blocks first..last-1 only (the model's own forward code, attention mask
    and rotary positions), with or without its final norm; restored on exit."""
    import torch

    inner, _ = decoder(model)
    layers, norm = inner.layers, inner.norm
    inner.layers = torch.nn.ModuleList(list(layers)[first:last])
    if not final_norm:
        inner.norm = torch.nn.Identity()
    try:
        yield inner
    finally:
        inner.layers, inner.norm = layers, norm


def _padded(rows: list, width: int, fill):
    import torch

    out = torch.full((len(rows), width) + tuple(fill.shape), 0, dtype=fill.dtype)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        out[r, :len(row)] = row
        mask[r, :len(row)] = 1
    return out, mask


def frozen_states(model, documents: list[Document], n_frozen: int, batch_size: int, device: str = "cpu") -> dict:
    """{document ids: the input of block `n_frozen` at each of its positions} for every distinct document, from
    the base weights (blocks 0..n_frozen-1 are never trained), computed in length-sorted batches; kept on CPU."""
    import torch

    distinct = sorted({doc.ids for doc in documents}, key=len)
    states = {}
    with torch.inference_mode(), only_blocks(model, 0, n_frozen, final_norm=False) as inner:
        for start in range(0, len(distinct), batch_size):
            rows = distinct[start:start + batch_size]
            ids, mask = _padded([torch.tensor(r) for r in rows], len(rows[-1]), torch.tensor(0))
            hidden = inner(input_ids=ids.to(device), attention_mask=mask.to(device), use_cache=False).last_hidden_state
            for r, row in enumerate(rows):
                states[row] = hidden[r, :len(row)].to("cpu").clone()
    return states


def fact_logits(model, states: dict, batch: list[Document], n_frozen: int, device: str = "cpu"):
    """(logits at the position before each fact token, the fact tokens) of a batch: the top blocks run on the
    cached inputs of block `n_frozen`, the head applied at those positions only."""
    import torch

    inner, head = decoder(model)
    rows = [states[doc.ids] for doc in batch]
    hidden, mask = _padded(rows, max(len(r) for r in rows), rows[0][0])
    with only_blocks(model, n_frozen, len(inner.layers), final_norm=True) as top:
        out = top(inputs_embeds=hidden.to(device), attention_mask=mask.to(device), use_cache=False).last_hidden_state
    where_row = torch.tensor([r for r, doc in enumerate(batch) for _ in doc.fact])
    where_col = torch.tensor([p - 1 for doc in batch for p in doc.fact])
    targets = torch.tensor([doc.ids[p] for doc in batch for p in doc.fact])
    return head(out[where_row.to(device), where_col.to(device)]), targets.to(device)


def batches(lengths: list[int], batch_size: int, generator) -> list[list[int]]:
    """One epoch's batches of document indices: a seeded random order, cut into windows of WINDOW batches, sorted
    by length within each window and cut into batches (similar lengths: little padding), the batches in a seeded
    random order."""
    import torch

    order = torch.randperm(len(lengths), generator=generator).tolist()
    out = []
    for start in range(0, len(order), batch_size * WINDOW):
        window = sorted(order[start:start + batch_size * WINDOW], key=lambda i: lengths[i])
        out += [window[j:j + batch_size] for j in range(0, len(window), batch_size)]
    return [out[i] for i in torch.randperm(len(out), generator=generator).tolist()]


def projection_parameters(model, first: int, last: int) -> int:
    """Parameters of the linear projections of blocks first..last-1 (the P of the module docstring)."""
    import torch

    inner, _ = decoder(model)
    return sum(module.weight.numel() for layer in list(inner.layers)[first:last] for module in layer.modules()
               if isinstance(module, torch.nn.Linear))


def matmul_throughput(size: int, seconds: float = 0.5) -> float:
    """FLOP/s of float32 matrix products of `size` x `size` matrices on this machine now (torch, current threads)."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b  # warm-up
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        count += 1
    return 2 * size ** 3 * count / (time.perf_counter() - start)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def torch_threads(threads: int):
    """torch's thread count set to `threads` (0 = left as it is) and deterministic algorithms on inside the
    block, both restored after it: they are for training; the protocol stages that run next in the same process
    keep theirs."""
    import torch

    previous, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    if threads:
        torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
        torch.use_deterministic_algorithms(deterministic)


def train(documents: list[Document], settings: CalibrateSettings, out_dir: Path, tokenizer, model,
          device: str = "cpu", progress: bool = True) -> TrainingResult:
    """Fine-tune LoRA adapters of the last `top_layers` blocks on the fact tokens of `documents`, merge them into
    the weights and save to `out_dir` (atomically: a temp directory renamed at the end). Run it inside
    `torch_threads(settings.threads)`."""
    import torch
    from peft import LoraConfig, get_peft_model
    from tqdm import tqdm
    from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

    torch.manual_seed(settings.training_seed)
    inner, _ = decoder(model)
    n_layers = len(inner.layers)
    n_frozen = max(0, n_layers - settings.top_layers) if settings.top_layers else 0
    matmul = matmul_throughput(int(model.config.hidden_size) * 2)
    clock = time.perf_counter()
    model.eval()  # no dropout anywhere (lora_dropout acts inside peft's layers)
    states = frozen_states(model, documents, n_frozen, settings.batch_size, device)
    cache_seconds = time.perf_counter() - clock
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    lora = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                      target_modules=list(settings.target_modules),
                      layers_to_transform=list(range(n_frozen, n_layers)), task_type="CAUSAL_LM")
    try:
        peft_model = get_peft_model(model, lora)
    except ValueError as err:  # peft: a target module of a type it cannot adapt (e.g. "mlp", a whole block)
        raise ConfigError(f"[calibrate] target_modules = {list(settings.target_modules)}: {str(err).splitlines()[0]} "
                          f"(e.g. target_modules = [\"q_proj\", \"v_proj\"])") from None
    if settings.lora_dropout:
        peft_model.train()
    trainable = [p for p in peft_model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=settings.learning_rate, betas=ADAM_BETAS)
    generator = torch.Generator().manual_seed(settings.training_seed)
    lengths = [len(doc.ids) for doc in documents]
    steps_per_epoch = -(-len(documents) // settings.batch_size)
    if settings.lr_schedule == "linear":
        scheduler = get_linear_schedule_with_warmup(optimizer, settings.warmup_steps,
                                                    steps_per_epoch * settings.epochs)
    else:
        scheduler = get_constant_schedule_with_warmup(optimizer, settings.warmup_steps)
    rows, seen, start, cpu_start = [], 0, time.perf_counter(), time.process_time()
    bar = tqdm(total=steps_per_epoch * settings.epochs, desc="calibrate: LoRA training", unit="step",
               disable=not progress)
    for epoch in range(settings.epochs):
        for batch in batches(lengths, settings.batch_size, generator):
            logits, targets = fact_logits(model, states, [documents[i] for i in batch], n_frozen, device)
            loss = torch.nn.functional.cross_entropy(logits.float(), targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, CLIP_NORM)
            rate = scheduler.get_last_lr()[0]  # the rate this step uses
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            seen += sum(lengths[i] for i in batch)
            rows.append({"step": len(rows) + 1, "epoch": epoch + 1, "loss": float(loss.detach()),
                         "learning_rate": rate, "tokens_seen": seen})
            bar.set_postfix(loss=f"{rows[-1]['loss']:.3f}")
            bar.update()
    bar.close()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start

    out_dir = Path(out_dir)
    tmp = out_dir.with_name(f"{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    peft_model.save_pretrained(tmp / ADAPTER_DIR)
    adapter_hash = sha256_file(tmp / ADAPTER_DIR / ADAPTER_FILE)
    merged = peft_model.merge_and_unload()
    merged.eval()
    merged.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, out_dir)
    flops = 4.0 * projection_parameters(merged, n_frozen, n_layers) * seen
    return TrainingResult(adapter_hash, pd.DataFrame(rows), seconds, cpu_seconds, cache_seconds, seen,
                          sum(len(ids) for ids in states), flops, matmul, torch.get_num_threads())
