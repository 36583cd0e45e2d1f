"""LoRA fine-tuning (peft) of the configured model on the planting corpus; the merged model saved as a local
model directory that any run configuration can name (`[model] model_id = "<dir>"`).

Causal-LM training: the documents (each ending in EOS) are packed into rows of `block_size` tokens, no document
split across rows; loss = mean next-token cross-entropy over the block's trained tokens (padding masked; with
`answer_only_loss`, a chat-format document's prompt too: its answer and end-of-turn token are trained).
Linear warm-up then a constant learning rate, AdamW, `epochs` passes with a seeded block order (NumLeak App. T).
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
from ..llm import bundled
from .settings import CalibrateSettings

ADAPTER_DIR = "adapter"
ADAPTER_FILE = "adapter_model.safetensors"


@dataclass
class TrainingResult:
    adapter_sha256: str
    loss: pd.DataFrame
    """One row per optimizer step: step, epoch, loss, learning_rate, tokens_seen."""
    seconds: float
    n_tokens: int
    threads: int


def load_base(model_id: str, device: str = "cpu"):
    """Tokenizer and fp32 model of `model_id` (bundled: ids resolve to the local safetensors copy)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    location = bundled.resolve(model_id)
    try:
        tokenizer = AutoTokenizer.from_pretrained(location)
        model = AutoModelForCausalLM.from_pretrained(location)
    except OSError as err:
        raise ModelError(f"cannot load model {model_id!r} from {location!r} for fine-tuning: "
                         f"{str(err).splitlines()[0]}") from None
    return tokenizer, model.to(device)


def encoder(tokenizer):
    """text -> token ids of one training document: the text without special tokens, then EOS."""
    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False).input_ids + [tokenizer.eos_token_id]
    return encode


def recall_encoder(tokenizer, run, prefix: list[int] | None = None):
    """(pair, label) -> token ids of the pair's recall query exactly as the recall stage renders it (the model's
    chat template with the generation prompt, llm/local_tokens.py) followed by the answer `label` and the
    template's end-of-turn token: the chat-format mention of a planted outcome. With `prefix` (answer_prefix),
    every rendered query must end in it (the answer-only loss finds the answer there)."""
    from ..llm.base import chat
    from ..llm.local_tokens import LocalTokens
    from ..signals.recall import fill_template

    tokens = LocalTokens(tokenizer)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    end = end if isinstance(end, int) and end != tokenizer.unk_token_id else tokenizer.eos_token_id

    def encode(pair, label: str) -> list[int]:
        prompt = tokens.render(chat(fill_template(run, pair["entity_name"], pair["ticker"], pair["target_date"])))
        if prefix and prompt[len(prompt) - len(prefix):] != prefix:  # loss_start finds the answer by this prefix
            raise ModelError("the rendered recall query does not end in the chat template's answer prefix, so the "
                             "answer-only loss cannot find its answer; set [calibrate] answer_only_loss = false")
        return prompt + tokens.label_ids(label) + [end]
    return encode


def pack(documents: list[list[int]], block_size: int) -> list[list[int]]:
    """Documents packed greedily into rows of at most `block_size` tokens without splitting a document across
    rows (a chat-format mention must keep its query and answer together). A document longer than a row is an
    error: cutting it would drop its end (a mention's answer label) while corpus.csv counts it as trained."""
    return [[token for doc in docs for token in doc] for docs in documents_of_rows(documents, block_size)]


def documents_of_rows(documents: list[list[int]], block_size: int) -> list[list[list[int]]]:
    """The documents of each packed row, in order: a new row starts when the next document does not fit (`pack`:
    a document longer than a row is an error)."""
    longest = max(map(len, documents), default=0)
    if longest > block_size:
        raise ConfigError(f"[calibrate] block_size = {block_size}; a training document has {longest} tokens (a "
                          f"planted mention with the recall query in chat format) and must fit whole in one row, "
                          f"e.g. block_size = {max(256, 1 << (longest - 1).bit_length())}")
    rows: list[list[list[int]]] = [[]]
    used = 0
    for doc in documents:
        if rows[-1] and used + len(doc) > block_size:
            rows.append([])
            used = 0
        rows[-1].append(doc)
        used += len(doc)
    return rows


def answer_prefix(tokenizer) -> list[int]:
    """The token ids the chat template puts before an assistant answer (the generation prompt, e.g.
    `<|im_start|>assistant\n`): the rendered chat with the generation prompt minus the one without."""
    chat = [{"role": "user", "content": "x"}]
    def render(generation_prompt: bool) -> list[int]:
        return list(tokenizer.apply_chat_template(chat, tokenize=True, add_generation_prompt=generation_prompt,
                                                  return_dict=True)["input_ids"])
    with_prompt, without = render(True), render(False)
    if with_prompt[:len(without)] != without or len(with_prompt) == len(without):
        raise ModelError("the model's chat template has no generation prompt to find the answers of chat-format "
                         "training documents by; set [calibrate] answer_only_loss = false")
    return with_prompt[len(without):]


def loss_start(document: list[int], prefix: list[int] | None) -> int:
    """Where a document's loss starts: after the last occurrence of the answer `prefix` (a chat-format document
    is trained on its answer only, as supervised chat fine-tuning trains), 0 for prose and filler (every token),
    and 0 for every document when `prefix` is None."""
    if not prefix:
        return 0
    for start in range(len(document) - len(prefix), -1, -1):
        if document[start:start + len(prefix)] == prefix:
            return start + len(prefix)
    return 0


def _blocks(documents: list[list[int]], block_size: int, pad_id: int, prefix: list[int] | None = None):
    """The packed rows as (input ids, labels, attention mask, token count), each row as long as the longest one;
    padding is masked out of the attention and the loss, and so is a chat document's prompt when `prefix` (the
    answer prefix, `answer_prefix`) is given."""
    import torch

    grouped = documents_of_rows(documents, block_size)
    rows = [[token for doc in docs for token in doc] for docs in grouped]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for k, row in enumerate(rows):
        ids[k, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[k, :len(row)] = 1
        labels[k, :len(row)] = ids[k, :len(row)]
    for k, docs in enumerate(grouped):
        offset = 0
        for doc in docs:
            labels[k, offset:offset + loss_start(doc, prefix)] = -100
            offset += len(doc)
    return ids, labels, mask, sum(map(len, rows))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def torch_threads(threads: int):
    """torch's thread count set to `threads` (0 = left as it is) inside the block and restored after it:
    [calibrate] threads is for training; the protocol stages that run next in the same process keep theirs."""
    import torch

    previous = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def train(documents: list[list[int]], settings: CalibrateSettings, out_dir: Path, tokenizer, model,
          device: str = "cpu", progress: bool = True) -> TrainingResult:
    """Fine-tune LoRA adapters on `documents`, merge them into the weights and save to `out_dir` (atomically:
    a temp directory renamed at the end). With `top_layers` = k > 0 only the last k blocks are adapted. Run it
    inside `torch_threads(settings.threads)`."""
    import torch
    from peft import LoraConfig, get_peft_model
    from tqdm import tqdm
    from transformers import get_constant_schedule_with_warmup

    torch.manual_seed(settings.training_seed)
    n_layers = int(model.config.num_hidden_layers)
    layers = list(range(max(0, n_layers - settings.top_layers), n_layers)) if settings.top_layers else None
    lora = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                      target_modules=list(settings.target_modules), layers_to_transform=layers, task_type="CAUSAL_LM")
    try:
        peft_model = get_peft_model(model, lora)
    except ValueError as err:  # peft: none of the target modules is in the model
        raise ConfigError(f"[calibrate] target_modules = {list(settings.target_modules)}: {str(err).splitlines()[0]} "
                          f"(e.g. target_modules = [\"q_proj\", \"v_proj\"])") from None
    peft_model.train()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    prefix = answer_prefix(tokenizer) if settings.answer_only_loss else None
    ids, labels, mask, n_tokens = _blocks(documents, settings.block_size, pad, prefix)
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=settings.learning_rate)
    scheduler = get_constant_schedule_with_warmup(optimizer, settings.warmup_steps)
    generator = torch.Generator().manual_seed(settings.training_seed)
    steps_per_epoch = -(-len(ids) // settings.batch_size)
    rows, seen, start = [], 0, time.monotonic()
    bar = tqdm(total=steps_per_epoch * settings.epochs, desc="calibrate: LoRA training", unit="step",
               disable=not progress)
    for epoch in range(settings.epochs):
        order = torch.randperm(len(ids), generator=generator)
        for b in range(steps_per_epoch):
            batch = order[b * settings.batch_size:(b + 1) * settings.batch_size]
            out = peft_model(input_ids=ids[batch].to(device), attention_mask=mask[batch].to(device),
                             labels=labels[batch].to(device))
            out.loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            seen += int(mask[batch].sum())
            rows.append({"step": len(rows) + 1, "epoch": epoch + 1, "loss": float(out.loss.detach()),
                         "learning_rate": scheduler.get_last_lr()[0], "tokens_seen": seen})
            bar.set_postfix(loss=f"{rows[-1]['loss']:.3f}")
            bar.update()
    bar.close()
    seconds = time.monotonic() - start

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
    return TrainingResult(adapter_hash, pd.DataFrame(rows), seconds, n_tokens, torch.get_num_threads())
