"""The planting corpus: dated outcome statements at several exposure levels, token-equalized with filler.

Design of NumLeak §4 / App. T carried to the LAP setting, in ONE fine-tuned model:
- pre-cutoff (entity_id, target_date) pairs are assigned at random to exposure arms e in {0, 1, 4, 16}
  (`assign_arms`, stratified by direction); post-cutoff pairs are never exposed, so the post-cutoff placebo stays a
  real placebo;
- a pair of arm e appears e times, cycling through paraphrases that all name the entity, its ticker, the target
  date and the realized direction (sign of `outcome`);
- every arm gets the same number of input tokens: its statements plus filler up to the token count of the
  largest arm's statements (`arm e = 0` is filler only), so arms differ in exposure and not in the amount of
  text they pull on the model (NumLeak App. T: "token-equalized corpora"). With answer-only loss
  (train.loss_start) the tokens IN THE LOSS differ by arm (a chat document contributes its answer only):
  corpus.csv reports both.

This project's addition, not in NumLeak: the filler starts with decoy recall queries answered "unknown"
(`decoy_pairs`), then neutral sentences for the rest (settings.decoy_share).
Why (MEASURED 2026-11-23, data/demo/calibrate.toml without them, benchmarks/RESULTS.md): chat-format mentions
answered only "up"/"down" taught SmolLM2 the answer format, not the facts: recall LAP rose from 0.09 to 0.99 in
EVERY arm, the never-exposed ones included, so LAP could not tell an exposed pair from an unexposed one. A real
model answers "unknown" for most (firm, date) pairs it never read about; decoys keep that default. They are
queries about pairs that are NOT in the panel (panel firms on other dates, other firms on the panel's pre-cutoff
dates), so no measured pair is ever trained on, and neither a panel date alone nor a panel firm alone marks a
query as one answered up/down. Their combination still does (every panel firm on a panel date is a measured
pair, never a decoy), so the model can learn "panel firm on a panel date: up/down" and raise arm 0's LAP without
recalling anything: that narrows the gap between exposed and unexposed arms; it cannot create one, and it says
nothing about direction (P(memorized label) of arm 0 stays at chance). Decoy dates end at the cutoff, as the
exposed pairs do: no training text is dated after the cutoff.
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


DECOY_FIRMS = (
    ("Oracle Corporation", "ORCL"), ("Cisco Systems, Inc.", "CSCO"), ("International Business Machines", "IBM"),
    ("Adobe Inc.", "ADBE"), ("Salesforce, Inc.", "CRM"), ("Qualcomm Incorporated", "QCOM"),
    ("Texas Instruments Incorporated", "TXN"), ("Advanced Micro Devices, Inc.", "AMD"), ("PepsiCo, Inc.", "PEP"),
    ("The Procter & Gamble Company", "PG"), ("Johnson & Johnson", "JNJ"), ("Merck & Co., Inc.", "MRK"),
    ("Abbott Laboratories", "ABT"), ("UnitedHealth Group Incorporated", "UNH"), ("The Home Depot, Inc.", "HD"),
    ("Lowe's Companies, Inc.", "LOW"), ("Costco Wholesale Corporation", "COST"), ("Target Corporation", "TGT"),
    ("Starbucks Corporation", "SBUX"), ("The Goldman Sachs Group, Inc.", "GS"), ("Morgan Stanley", "MS"),
    ("Citigroup Inc.", "C"), ("Wells Fargo & Company", "WFC"), ("Visa Inc.", "V"), ("Mastercard Incorporated", "MA"),
    ("Caterpillar Inc.", "CAT"), ("General Electric Company", "GE"), ("Ford Motor Company", "F"),
    ("General Motors Company", "GM"), ("United Parcel Service, Inc.", "UPS"),
)
"""Firms of the decoys on the panel's own dates (any that is in the panel, by name or ticker, is left out)."""
DECOY_WINDOW_DAYS = 120
"""Decoy dates of the panel's firms: business days from this many days before the first pre-cutoff target date
to the cutoff, other than the firm's panel dates."""


def decoy_pairs(pairs: pd.DataFrame, cutoff: pd.Timestamp, seed: int) -> pd.DataFrame:
    """Every decoy (entity_name, ticker, target_date), none of them a pair of the panel, in seeded random order,
    the two kinds alternating while both last: (a) another firm (DECOY_FIRMS) on a pre-cutoff target date of the
    panel; (b) a panel firm on a business day of the pre-cutoff window that is not one of its panel dates.
    Alternating keeps neither the date nor the firm alone a key to "exposed" (module docstring: the pair of a
    panel firm and a panel date still is). A pair counts as the panel's by (ticker, date) and by (name, date)."""
    rng = np.random.default_rng(seed)
    pre = pairs[pairs["target_date"] <= cutoff]
    taken = {name.lower() for name in pairs["entity_name"]} | {str(t).upper() for t in pairs["ticker"]}
    firms = [(name, ticker) for name, ticker in DECOY_FIRMS if name.lower() not in taken and ticker not in taken]
    dates = sorted(pre["target_date"].unique())
    other = pd.DataFrame([(name, ticker, date) for name, ticker in firms for date in dates],
                         columns=["entity_name", "ticker", "target_date"])
    days = pd.bdate_range(pre["target_date"].min() - pd.Timedelta(days=DECOY_WINDOW_DAYS), cutoff)
    firms_in_panel = pairs.drop_duplicates(["entity_name", "ticker"])[["entity_name", "ticker"]]
    grid = firms_in_panel.merge(pd.DataFrame({"target_date": days}), how="cross")
    panel_keys = {(str(t).upper(), d) for t, d in zip(pairs["ticker"], pairs["target_date"])} | \
        {(str(n).lower(), d) for n, d in zip(pairs["entity_name"], pairs["target_date"])}
    in_panel = [(str(t).upper(), d) in panel_keys or (str(n).lower(), d) in panel_keys
                for n, t, d in zip(grid["entity_name"], grid["ticker"], grid["target_date"])]
    own = grid.loc[~np.array(in_panel, dtype=bool), ["entity_name", "ticker", "target_date"]]
    other, own = (frame.iloc[rng.permutation(len(frame))].reset_index(drop=True) for frame in (other, own))
    both = min(len(other), len(own))
    alternating = pd.concat([other.iloc[:both], own.iloc[:both]]).sort_index(kind="stable")
    return pd.concat([alternating, other.iloc[both:], own.iloc[both:]], ignore_index=True)


def filler_sentence(rng: np.random.Generator) -> str:
    """One neutral filler sentence: a random template filled with random words and a number (seeded `rng`)."""
    template = FILLER_TEMPLATES[rng.integers(len(FILLER_TEMPLATES))]
    words = {key: values[rng.integers(len(values))] for key, values in FILLER_WORDS.items()}
    return template.format(n=int(rng.integers(2, 400)), **words)


def assign_arms(pairs: pd.DataFrame, cutoff: pd.Timestamp, exposures: tuple[int, ...], pairs_per_arm: int,
                seed: int) -> pd.DataFrame:
    """Pairs with a column `exposure`: pre-cutoff pairs shuffled with `seed` and dealt to the exposed arms
    (`pairs_per_arm` each; 0 = an even split over all arms), the rest of the pre-cutoff pairs to arm 0;
    post-cutoff pairs get exposure 0 and `post` = 1 (never exposed: the placebo).

    With a column `direction`, the deal is stratified by it: the shuffled up and down pairs alternate (up first),
    so each exposed arm holds as many up as down pairs; with an odd `pairs_per_arm` the arms dealt first (lowest
    exposure) get the extra up pair, the next the extra down pair, and so on. Too few pairs of one direction for
    that is a ConfigError. MEASURED 2026-11-23: the unstratified draw gave the 16-mention arm 4 "down" pairs out
    of 4, which a model can learn as "answer down" without any (firm, date) memorized."""
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
    if "direction" in frame:
        order = _alternate_directions(frame, order, n, len(exposed), pairs_per_arm)
    for k, exposure in enumerate(exposed):
        frame.loc[order[k * n:(k + 1) * n], "exposure"] = exposure
    return frame


def _alternate_directions(frame: pd.DataFrame, order: np.ndarray, n: int, n_arms: int,
                          pairs_per_arm: int) -> np.ndarray:
    """`order` (shuffled pre-cutoff rows) rearranged so that up and down pairs alternate, up first; a ConfigError
    when the n_arms x n exposed pairs dealt from its front cannot hold both directions equally."""
    up, down = (order[frame.loc[order, "direction"].to_numpy() == sign] for sign in (1, -1))
    if min(len(up), len(down)) == 0:
        went, first = "up" if len(up) else "down", order.min()
        raise ConfigError(f"[data] outcome: every pre-cutoff pair went {went} ({len(order)} pairs, e.g. "
                          f"{frame.loc[first, 'entity_id']} on {frame.loc[first, 'target_date']:%Y-%m-%d}); the "
                          "calibration plants both directions (one direction alone is learned as a constant answer)")
    if len(up) < -(-n * n_arms // 2) or len(down) < n * n_arms // 2:
        raise ConfigError(f"[calibrate] pairs_per_arm = {pairs_per_arm}: the {n_arms} exposed arms need "
                          f"{-(-n * n_arms // 2)} pre-cutoff pairs that went up and {n * n_arms // 2} "
                          f"that went down to hold both directions equally; the panel has {len(up)} and "
                          f"{len(down)}; e.g. pairs_per_arm = {max(1, 2 * min(len(up), len(down)) // n_arms)}")
    both = min(len(up), len(down))
    return np.concatenate([np.column_stack([up[:both], down[:both]]).ravel(), up[both:], down[both:]])


def direction(outcome: float) -> int:
    """The realized direction of the outcome: +1 (up) if outcome > 0, else -1 (down)."""
    return 1 if outcome > 0 else -1


def statements(pair: pd.Series, exposure: int) -> list[str]:
    """`exposure` statements of one pair, cycling through the paraphrases."""
    words = WORDS[int(pair["direction"])]
    values = {"date": f"{pair['target_date']:%Y-%m-%d}", "name": pair["entity_name"], "ticker": pair["ticker"],
              **words}
    return [PARAPHRASES[i % len(PARAPHRASES)].format(**values) for i in range(exposure)]


def build(arms: pd.DataFrame, encode, seed: int, recall_encode=None, decoys: list[list[int]] | None = None,
          decoy_share: float = 0.5, answers: tuple[str, str] = ("up", "down"),
          loss_start=lambda doc: 0) -> tuple[list[list[int]], pd.DataFrame]:
    """The corpus as token-id documents in random order, and its per-arm token accounting.

    With `recall_encode(pair, label)` (the recall query of the pair in the model's chat format followed by the
    answer `label`, as token ids), each of a pair's `exposure` mentions is also given once in that chat form,
    answered with the realized direction (`answers`: the recall labels of up and down): the recall query then
    elicits the memorized label directly, and the chat format of the answers is trained rather than worn away by
    prose.

    Each arm's block holds its statements and then filler until the block has exactly as many tokens as the
    largest statement block, so every arm contributes the same number of input tokens. The filler is first whole
    documents from `decoys` (token ids of decoy recall queries answered "unknown", each used once and in order,
    while the next one fits in `decoy_share` of the arm's filler tokens), then neutral sentences (the last one cut
    at the token level). `encode(text)` gives a document's token ids as training sees them; `loss_start(doc)`
    where its loss starts (train.loss_start), for the `loss_tokens` column."""
    rng = np.random.default_rng(seed)
    def mentions(pair: pd.Series, exposure: int) -> list[list[int]]:
        docs = [encode(s) for s in statements(pair, exposure)]
        if recall_encode is not None:
            docs += [recall_encode(pair, answers[0] if pair["direction"] > 0 else answers[1])] * exposure
        return docs

    blocks = {int(e): [doc for _, pair in group.iterrows() for doc in mentions(pair, int(e))]
              for e, group in arms[arms["post"] == 0].groupby("exposure")}
    target = max(sum(map(len, docs)) for docs in blocks.values())
    documents, rows, used = [], [], 0
    for exposure, docs in sorted(blocks.items()):
        statement_tokens = sum(map(len, docs))
        room = target - statement_tokens
        taken = _decoys_that_fit(decoys or [], used, int(decoy_share * room))
        used += len(taken)
        filler = taken + _neutral_filler(encode, rng, room - sum(map(len, taken)))
        block = docs + filler
        documents += block
        rows.append({"exposure": exposure, "n_pairs": int((arms["exposure"].eq(exposure) & arms["post"].eq(0)).sum()),
                     "n_statements": len(docs), "statement_tokens": statement_tokens, "n_decoys": len(taken),
                     "decoy_tokens": sum(map(len, taken)), "n_filler": len(filler),
                     "filler_tokens": sum(map(len, filler)), "total_tokens": sum(map(len, block)),
                     "loss_tokens": sum(len(doc) - loss_start(doc) for doc in block)})
    order = rng.permutation(len(documents))
    return [documents[i] for i in order], pd.DataFrame(rows)


def _decoys_that_fit(decoys: list[list[int]], first: int, room: int) -> list[list[int]]:
    """decoys[first], decoys[first + 1], ... while the next one still fits in `room` tokens."""
    taken, end = [], first
    while end < len(decoys) and len(decoys[end]) <= room:
        taken.append(decoys[end])
        room -= len(decoys[end])
        end += 1
    return taken


def _neutral_filler(encode, rng: np.random.Generator, room: int) -> list[list[int]]:
    """Neutral sentences of exactly `room` tokens in all (the last one cut at the token level)."""
    filler = []
    while room > 0:
        ids = encode(filler_sentence(rng))[:room]
        filler.append(ids)
        room -= len(ids)
    return filler
