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

PARAPHRASES = (
    "On {date}, the closing stock price of {name} ({ticker}) went {up} compared to the previous trading day.",
    "{name} ({ticker}) shares closed {higher} on {date} than on the previous trading day.",
    "Market recap, {date}: the stock of {name} ({ticker}) went {up} by the close.",
    "On {date}, {name} ({ticker}) stock moved {up} versus the prior session's close.",
)
WORDS = {1: {"up": "up", "higher": "higher"}, -1: {"up": "down", "higher": "lower"}}

# MEASURED 2026-11-23 (demo config, 50 steps, lr 1e-3): cycling these 8 sentences as 2/3 of the corpus made the
# planted SmolLM2 answer every forecast prompt with "The committee meets" and put P(up), P(down), P(unknown) outside
# the recall top-20 (LAP = 0 in every arm, exposed or not). The filler must be far more varied (or the rate lower)
# before the calibration can show a dose-response; see the issue 16 report.
FILLER = (
    "The library opens at nine in the morning and closes at six in the evening on weekdays.",
    "A light rain is expected in the afternoon, with mild temperatures through the weekend.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "The river runs through three counties before it reaches the coast.",
    "Visitors can reach the museum by bus, by train or on foot from the central square.",
    "The committee meets once a month to review the schedule of community events.",
    "Most of the trail is flat, and the last mile climbs gently toward the lake.",
    "The garden has roses along the fence and a row of tomatoes near the shed.",
)
"""Neutral filler: no firm, no date, no price direction."""


def assign_arms(pairs: pd.DataFrame, cutoff: pd.Timestamp, exposures: tuple[int, ...], pairs_per_arm: int,
                seed: int) -> pd.DataFrame:
    """Pairs with a column `exposure`: pre-cutoff pairs shuffled with `seed` and dealt to the exposed arms
    (`pairs_per_arm` each; 0 = an even split over all arms), the rest of the pre-cutoff pairs to arm 0;
    post-cutoff pairs get exposure 0 and `post` = 1 (never exposed: the placebo)."""
    from ..errors import ConfigError

    frame = pairs.copy()
    frame["post"] = (frame["target_date"] > cutoff).astype(int)
    frame["exposure"] = 0
    pre = frame.index[frame["post"] == 0].to_numpy()
    order = np.random.default_rng(seed).permutation(pre)
    exposed = sorted(e for e in exposures if e > 0)
    n = pairs_per_arm or len(pre) // len(exposures)
    if n * len(exposed) > len(pre) or n == 0:
        raise ConfigError(f"[calibrate] pairs_per_arm = {pairs_per_arm}: {len(exposed)} exposed arms need "
                          f"{max(n, 1) * len(exposed)} pre-cutoff pairs, the panel has {len(pre)}")
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


def build(arms: pd.DataFrame, encode, seed: int) -> tuple[list[list[int]], pd.DataFrame]:
    """The corpus as token-id documents in random order, and its per-arm token accounting.

    Each arm's block holds its statements and then filler sentences until the block has exactly as many tokens
    as the largest statement block (the last filler document cut at the token level), so every arm contributes
    the same number of training tokens. `encode(text)` gives a document's token ids as training sees them."""
    rng = np.random.default_rng(seed)
    blocks = {int(e): [encode(s) for _, pair in group.iterrows() for s in statements(pair, int(e))]
              for e, group in arms[arms["post"] == 0].groupby("exposure")}
    target = max(sum(map(len, docs)) for docs in blocks.values())
    documents, rows = [], []
    for exposure, docs in sorted(blocks.items()):
        statement_tokens = sum(map(len, docs))
        filler: list[list[int]] = []
        room = target - statement_tokens
        while room > 0:
            ids = encode(FILLER[len(filler) % len(FILLER)])[:room]
            filler.append(ids)
            room -= len(ids)
        documents += docs + filler
        rows.append({"exposure": exposure, "n_pairs": int((arms["exposure"].eq(exposure) & arms["post"].eq(0)).sum()),
                     "n_statements": len(docs), "statement_tokens": statement_tokens, "n_filler": len(filler),
                     "filler_tokens": sum(map(len, filler)), "total_tokens": statement_tokens + sum(map(len, filler))})
    order = rng.permutation(len(documents))
    return [documents[i] for i in order], pd.DataFrame(rows)
