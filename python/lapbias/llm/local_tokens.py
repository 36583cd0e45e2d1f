"""How the two local backends (transformers, vLLM offline) turn chats into token ids and token ids into text.

Both must see exactly the same tokens for the parity tests (issue "backends", item 6), so both use this one
class: a chat is rendered with the tokenizer's own chat template (`add_generation_prompt=True`), raw text
(Min-K%) is tokenized as the tokenizer does by default, and a candidate's string is `tokenizer.decode([id])`.
"""

from __future__ import annotations

from .base import Chat


class LocalTokens:
    """A Hugging Face tokenizer seen through the backend interface's conventions."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self._texts: dict[int, str] = {}
        self._vocabulary: list[str] | None = None

    def render(self, chat: Chat) -> list[int]:
        """The prompt's token ids: the model's chat template, ending where the answer starts."""
        return list(self.tokenizer.apply_chat_template(chat, tokenize=True, add_generation_prompt=True,
                                                       return_dict=True)["input_ids"])

    def encode(self, text: str) -> list[int]:
        """Raw text as the tokenizer encodes it by default (special tokens such as BOS included)."""
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def label_ids(self, label: str) -> list[int]:
        """A recall label as the model would emit it: no special tokens."""
        return list(self.tokenizer.encode(label, add_special_tokens=False))

    def label_variants(self, label: str) -> list[int]:
        """Every token id whose `decode([id])`, stripped and lower-cased, equals the label stripped and lower-cased
        (protocol Step 2's matching rule, applied to the whole vocabulary instead of the top-20). The vocabulary
        is decoded once per tokenizer (`batch_decode`, ≈ 0.5 s for 49k tokens)."""
        if self._vocabulary is None:
            self._vocabulary = self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])
        wanted = label.strip().lower()
        return [i for i, text in enumerate(self._vocabulary) if text.strip().lower() == wanted]

    def text(self, token_id: int) -> str:
        """`tokenizer.decode([id])`, memoised per id (the same few thousand ids recur across every text)."""
        token_id = int(token_id)
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = self.tokenizer.decode([token_id])
        return text
