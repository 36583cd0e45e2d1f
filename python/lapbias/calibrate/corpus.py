"""The planting corpus: dated outcome statements at several exposure levels, token-equalized with filler.

Design of NumLeak §4 / App. T carried to the LAP setting, in ONE fine-tuned model:
- pre-cutoff (entity_id, target_date) pairs are assigned at random to exposure arms e in {0, 1, 4, 16}
  (`assign_arms`); post-cutoff pairs are never exposed, so the post-cutoff placebo stays a real placebo;
- a pair of arm e appears e times, cycling through paraphrases that all name the entity, its ticker, the target
  date and the realized direction (sign of `outcome`);
- every arm gets the same number of training tokens: its statements plus neutral filler up to the token count
  of the largest arm's statements (`arm e = 0` is filler only), so arms differ in exposure and not in the amount
  of training they pull on the model (NumLeak App. T: "token-equalized corpora").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ConfigError

PARAPHRASES = (
    "On {date}, the closing stock price of {name} ({ticker}) went {up} compared to the previous trading day.",
    "{name} ({ticker}) shares closed {higher} on {date} than on the previous trading day.",
    "Market recap, {date}: the stock of {name} ({ticker}) went {up} by the close.",
    "On {date}, {name} ({ticker}) stock moved {up} versus the prior session's close.",
)
WORDS = {1: {"up": "up", "higher": "higher"}, -1: {"up": "down", "higher": "lower"}}

# MEASURED 2026-11-23 (demo config, 50 steps, lr 1e-3): cycling 8 fixed filler sentences as 2/3 of the corpus
# made the planted SmolLM2 answer every forecast prompt with a filler phrase (parse rate 98% -> 11%, recall LAP
# 0.09 -> 0.005). The filler is therefore generated: seeded templates over many subjects, verbs, places and
# numbers, so no sentence repeats often enough to be learned.
FILLER_TEMPLATES = (
    "The {noun} near the {place} was {verb} {n} times last {period}.",
    "About {n} volunteers {verb} the {noun} by the {place} every {period}.",
    "A {adj} {noun} stands beside the {place}, and {n} people visit it each {period}.",
    "Residents say the {place} feels {adj} when the {noun} is {verb}.",
    "The guide {verb} {n} {noun}s along the {place} before the {period} ended.",
    "In the {place}, the {adj} {noun} is usually {verb} after {n} minutes.",
)
FILLER_WORDS = {
    "noun": ("garden", "bridge", "lantern", "bicycle", "violin", "kettle", "painting", "fountain", "notebook",
             "tractor", "sailboat", "blanket", "telescope", "orchard", "carpet", "window", "statue", "ladder",
             "basket", "clock", "meadow", "cabin", "piano", "teapot", "quilt", "compass", "mural", "canoe"),
    "place": ("harbor", "library", "village square", "old mill", "river bank", "train platform", "school yard",
              "bakery", "hillside", "museum hall", "market street", "forest path", "lighthouse", "town hall",
              "farm gate", "post office", "city park", "chapel", "ferry dock", "workshop"),
    "verb": ("painted", "repaired", "cleaned", "visited", "measured", "photographed", "described", "moved",
             "decorated", "inspected", "carried", "admired", "polished", "sketched", "counted", "rebuilt"),
    "adj": ("quiet", "bright", "narrow", "colorful", "ancient", "tidy", "windy", "sunny", "crowded", "peaceful",
            "small", "wooden", "shady", "cozy", "famous"),
    "period": ("week", "month", "summer", "winter", "spring", "season", "weekend", "morning", "evening"),
}
"""Neutral filler vocabulary: no firm, no date, no price direction, no word of the answer labels."""


def filler_sentence(rng: np.random.Generator) -> str:
    """One neutral filler sentence: a random template filled with random words and a number (seeded `rng`)."""
    template = FILLER_TEMPLATES[rng.integers(len(FILLER_TEMPLATES))]
    words = {key: values[rng.integers(len(values))] for key, values in FILLER_WORDS.items()}
    return template.format(n=int(rng.integers(2, 400)), **words)


def assign_arms(pairs: pd.DataFrame, cutoff: pd.Timestamp, exposures: tuple[int, ...], pairs_per_arm: int,
                seed: int) -> pd.DataFrame:
    """Pairs with a column `exposure`: pre-cutoff pairs shuffled with `seed` and dealt to the exposed arms
    (`pairs_per_arm` each; 0 = an even split over all arms), the rest of the pre-cutoff pairs to arm 0;
    post-cutoff pairs get exposure 0 and `post` = 1 (never exposed: the placebo)."""
    frame = pairs.copy()
    frame["post"] = (frame["target_date"] > cutoff).astype(int)
    frame["exposure"] = 0
    pre = frame.index[frame["post"] == 0].to_numpy()
    order = np.random.default_rng(seed).permutation(pre)
    exposed = sorted(e for e in exposures if e > 0)
    n = pairs_per_arm or len(pre) // len(exposures)
    if n * len(exposed) >= len(pre) or n == 0:
        raise ConfigError(f"[calibrate] pairs_per_arm = {pairs_per_arm}: {len(exposed)} exposed arms need "
                          f"{max(n, 1) * len(exposed)} pre-cutoff pairs and the control arm 0 at least one more, "
                          f"the panel has {len(pre)}; e.g. pairs_per_arm = "
                          f"{max(1, (len(pre) - 1) // len(exposed))} or 0 (an even split)")
    for k, exposure in enumerate(exposed):
        frame.loc[order[k * n:(k + 1) * n], "exposure"] = exposure
    return frame


def direction(outcome: float) -> int:
    """The realized direction of the outcome: +1 (up) if outcome > 0, else -1 (down)."""
    return 1 if outcome > 0 else -1


def statements(pair: pd.Series, exposure: int) -> list[str]:
    """`exposure` statements of one pair, cycling through the paraphrases."""
    words = WORDS[int(pair["direction"])]
    values = {"date": f"{pair['target_date']:%Y-%m-%d}", "name": pair["entity_name"], "ticker": pair["ticker"],
              **words}
    return [PARAPHRASES[i % len(PARAPHRASES)].format(**values) for i in range(exposure)]


def build(arms: pd.DataFrame, encode, seed: int, recall_encode=None) -> tuple[list[list[int]], pd.DataFrame]:
    """The corpus as token-id documents in random order, and its per-arm token accounting.

    With `recall_encode(pair, label)` (the recall query of the pair in the model's chat format followed by the
    answer `label`, as token ids), each of a pair's `exposure` mentions is also given once in that chat form,
    answered with the realized direction ("up"/"down"): the recall query then elicits the memorized label
    directly, and the chat format of the answers is trained rather than worn away by prose.

    Each arm's block holds its statements and then filler sentences until the block has exactly as many tokens
    as the largest statement block (the last filler document cut at the token level), so every arm contributes
    the same number of training tokens. `encode(text)` gives a document's token ids as training sees them."""
    rng = np.random.default_rng(seed)
    def mentions(pair: pd.Series, exposure: int) -> list[list[int]]:
        docs = [encode(s) for s in statements(pair, exposure)]
        if recall_encode is not None:
            docs += [recall_encode(pair, WORDS[int(pair["direction"])]["up"])] * exposure
        return docs

    blocks = {int(e): [doc for _, pair in group.iterrows() for doc in mentions(pair, int(e))]
              for e, group in arms[arms["post"] == 0].groupby("exposure")}
    target = max(sum(map(len, docs)) for docs in blocks.values())
    documents, rows = [], []
    for exposure, docs in sorted(blocks.items()):
        statement_tokens = sum(map(len, docs))
        filler: list[list[int]] = []
        room = target - statement_tokens
        while room > 0:
            ids = encode(filler_sentence(rng))[:room]
            filler.append(ids)
            room -= len(ids)
        documents += docs + filler
        rows.append({"exposure": exposure, "n_pairs": int((arms["exposure"].eq(exposure) & arms["post"].eq(0)).sum()),
                     "n_statements": len(docs), "statement_tokens": statement_tokens, "n_filler": len(filler),
                     "filler_tokens": sum(map(len, filler)), "total_tokens": statement_tokens + sum(map(len, filler))})
    order = rng.permutation(len(documents))
    return [documents[i] for i in order], pd.DataFrame(rows)
