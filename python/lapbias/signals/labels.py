"""Label-token checks and label probability mass (protocol Step 2).

"Check label tokenization first on the exact tokenizer ... Do not assume the labels are single tokens:
verify. If a label is multi-token, pick a synonymous single-token label; if none exists, stop and ask the user."
"Compute P(up), P(down), P(unknown) by summing exp(logprob) over the returned tokens whose decoded string —
stripped of whitespace and lowercased — equals the label. Deduplicate by token ID. Do not renormalize."
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from ..errors import ModelError
from ..llm.base import Backend, TokenLogprob


def check_single_token(backend: Backend, labels: Sequence[str]) -> dict[str, int]:
    """The single token id of every label on the backend's own tokenizer; ModelError if any is multi-token."""
    ids = {}
    for label in labels:
        token_ids = backend.label_token_ids(label)
        if len(token_ids) != 1:
            raise ModelError(
                f"recall label {label!r} is {len(token_ids)} tokens {token_ids} on the tokenizer of "
                f"{backend.model_id}; the recall query needs single-token labels: set a synonymous single-token "
                "label in [recall] labels (up, down, unknown order), or stop here"
            )
        ids[label] = token_ids[0]
    return ids


def label_mass(top: Iterable[TokenLogprob], label: str) -> tuple[float, bool]:
    """(P(label), censored): sum of exp(logprob) over candidates whose stripped, lower-cased decoded string
    equals the label, each token id counted once; censored = the label is absent from the candidates (its
    mass is then unknown, not zero, and reported as 0 with the censoring flag)."""
    seen: set[int] = set()
    mass, found = 0.0, False
    label = label.strip().lower()  # "Up" in the config matches the decoded "up", " Up", "UP" alike
    for candidate in top:
        if candidate.token_id in seen:
            continue
        seen.add(candidate.token_id)
        if candidate.token.strip().lower() == label:
            mass += math.exp(candidate.logprob)
            found = True
    return mass, not found
