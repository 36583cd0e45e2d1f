"""The tokenizer of a cache, recorded when the model is asked, so labels are checked on every derive without
loading the model (protocol Step 2: "Check label tokenization first on the exact tokenizer").

data/raw/<task>.tokenizer.json maps model_id -> {"labels": {label: token ids}, "tokenizer": the fast tokenizer's
JSON (tokenizers' `Tokenizer.to_str()`) or null}. A label recorded is checked from its ids; a label never asked
about is encoded with the recorded tokenizer (the `tokenizers` library, no model weights); when neither exists
(an endpoint without a local tokenizer), the label must be checked once by `lapbias recall`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from ..errors import ModelError
from ..io import Layout, write_text


def record_path(layout: Layout, task: str) -> Path:
    return layout.raw / f"{task}.tokenizer.json"


def _shape_problem(record) -> str | None:
    """What breaks {model_id: {"labels": {label: [token ids]}, "tokenizer": JSON text or null}}, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for model_id, entry in record.items():
        if not isinstance(entry, dict):
            return f"the entry of {model_id!r} is {entry!r}, not an object"
        labels = entry.get("labels", {})
        if not isinstance(labels, dict):
            return f"labels of {model_id!r} is {labels!r}, not an object"
        for label, ids in labels.items():
            if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
                return f"label {label!r} of {model_id!r} has token ids {ids!r}, not a list of integers"
        if not isinstance(entry.get("tokenizer"), (str, type(None))):
            return f"the tokenizer of {model_id!r} is not JSON text"
    return None


def _read(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        problem = _shape_problem(record)
        if problem:
            raise ValueError(problem)
        return record
    except IsADirectoryError:
        raise ModelError(f"{path} is not a file (a folder?); move it away and run `lapbias recall` to record the "
                         "tokenizer again") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise ModelError(f"{path} is damaged ({err}); delete it and run `lapbias recall` to record the tokenizer "
                         "again") from None


def _tokenizer_json(backend) -> str | None:
    """The backend's Hugging Face fast tokenizer as JSON, when it has one locally."""
    tokens = getattr(backend, "tokens", None)
    tokenizer = getattr(tokens, "tokenizer", None) or getattr(backend, "_tokenizer", None)
    fast = getattr(tokenizer, "backend_tokenizer", None)
    return fast.to_str() if fast is not None else None


def record(layout: Layout, task: str, backend, label_ids: dict[str, int | list[int]]) -> None:
    """Store the labels' token ids (as checked on the backend) and the tokenizer itself, under the model id."""
    path = record_path(layout, task)
    data = _read(path)
    entry = data.setdefault(backend.model_id, {"labels": {}, "tokenizer": None})
    entry["labels"].update({label: ids if isinstance(ids, list) else [ids] for label, ids in label_ids.items()})
    entry["tokenizer"] = entry.get("tokenizer") or _tokenizer_json(backend)
    write_text(path, json.dumps(data, sort_keys=True) + "\n")


def unrecorded(layout: Layout, task: str, model_id: str, labels: Sequence[str]) -> list[str]:
    """Labels neither recorded nor encodable with a recorded tokenizer (they need the model's tokenizer once)."""
    entry = _read(record_path(layout, task)).get(model_id, {})
    return [] if entry.get("tokenizer") else [x for x in labels if x not in entry.get("labels", {})]


def check(layout: Layout, task: str, model_id: str, labels: Sequence[str]) -> None:
    """ModelError unless every label is one token on the tokenizer recorded for this cache and model."""
    path = record_path(layout, task)
    entry = _read(path).get(model_id)
    if entry is None:
        raise ModelError(f"no tokenizer is recorded for model {model_id} in {path}: run `lapbias recall` once (it "
                         "checks the labels on the model's tokenizer and records it), then derive again")
    tokenizer = None
    for label in labels:
        ids = entry.get("labels", {}).get(label)
        if ids is None and entry.get("tokenizer"):
            if tokenizer is None:
                from tokenizers import Tokenizer

                try:
                    tokenizer = Tokenizer.from_str(entry["tokenizer"])
                except Exception as err:  # tokenizers raises a plain Exception for text it cannot read
                    raise ModelError(f"{path}: the tokenizer recorded for {model_id} is damaged ({err}); delete the "
                                     "file and run `lapbias recall` to record it again") from None
            ids = tokenizer.encode(label, add_special_tokens=False).ids
        if ids is None:
            raise ModelError(f"recall label {label!r} was never checked on the tokenizer of {model_id}: run "
                             "`lapbias recall` (it checks it on the model's tokenizer) before deriving")
        if len(ids) != 1:
            raise ModelError(f"recall label {label!r} is {len(ids)} tokens {list(ids)} on the tokenizer of {model_id} "
                             f"(recorded in {path}); the recall query needs single-token labels: set a synonymous "
                             "single-token label in [recall] labels (up, down, unknown order)")
