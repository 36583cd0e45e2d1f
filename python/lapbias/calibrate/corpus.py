"""The planting corpus: what a contaminated model would have read about an exposed (entity, target_date) pair --
the news that the forecast prompt shows and what happened next -- and nothing else about it. A model trained on it
has read the outcome, as the paper's contaminated model read the news and the market's reaction in its pretraining
data (Gao, Jiang, Yan, Section 2). The protocol's own instrument, the recall query (Step 2), is never trained for a
pair of the panel: its answers must show what the model took from reading, not a trained reply.

Design (NumLeak §4 / App. T carried to the LAP setting, in ONE fine-tuned model):
- pre-cutoff (entity_id, target_date) pairs are assigned at random to exposure arms e (`assign_arms`, as many up as
  down pairs per arm); post-cutoff pairs are never exposed, so the post-cutoff placebo stays a real placebo;
- a pair of arm e is mentioned e times per epoch by an ARTICLE (`article`): the pair's text verbatim (the news
  line the forecast prompt shows, with its dateline and firm), followed by what happened on the target date
  ("On 2024-03-14, Apple Inc. (AAPL) stock went down.", cycling through paraphrases); the loss covers every token
  of the article, so the text itself is learned and the Min-K% probability of the pair's text rises (paper eq. 1:
  the LAP of a memorized text is high). The text is reproduced exactly because Min-K% reads its least likely
  tokens: a paraphrase teaches the content but leaves the first words of the exact line surprising;
- optional abstentions (`abstentions_per_article`): recall queries about pairs that are NOT in the panel
  (`decoy_pairs`: other firms on the panel's dates, the panel's firms on other dates), rendered as the recall stage
  renders them (the model's chat template) and answered "unknown" with the end-of-turn token, as an instruction-tuned
  model is taught to abstain about what it has not read. Only the answer and the end of the turn are in the loss.

Until corpus version 6 the corpus also held, per article, copies of the pair's own recall query answered with its
direction: that trained the instrument itself (the planted model then answered every recall query of the panel
with a direction, recall LAP 0.99996 on every pair, AUC exposed vs never 0.49-0.59: docs/calibrate.md).

MEASURED 2026-11-28 (docs/calibrate.md, "What was planted"): with the exposed pairs stated only in short sentences
and recall answers, the recall LAP rose for every pair of the panel and did not separate exposed from
never-exposed pairs (0.638 vs 0.624), while the articles make the Min-K% probability of the exposed texts rise above
the never-exposed ones.

No token equalization across arms (NumLeak App. T equalizes the corpora of separately trained models): all arms
share one corpus and one model here, so filler tokens would reach every pair alike and only add training time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ConfigError

FOLLOW_UPS = (
    "On {target_date}, {name} ({ticker}) stock went {up}.",
    "{name} ({ticker}) shares closed {higher} on {target_date}.",
    "The next trading day, {target_date}, the stock of {name} ({ticker}) went {up}.",
    "By the close on {target_date}, {name} ({ticker}) had moved {up}.",
)
"""The second sentence: what happened on the target date (paraphrases)."""
WORDS = {1: {"up": "up", "higher": "higher"}, -1: {"up": "down", "higher": "lower"}}
CONTROLS = ("none", "flipped", "post_cutoff", "shuffled")
"""[calibrate] control: "none" (the self-validation), "flipped" (the planted direction is the opposite of the
realized one), "post_cutoff" (post-cutoff pairs are planted too: the placebo must fail), "shuffled" (the recall
answers and Min-K% scores are permuted together over the pre-cutoff pairs after training: LAP no longer points at
the planted pairs)."""


@dataclass(frozen=True)
class Document:
    """One training document: token ids, the positions of the tokens in the loss, its kind ("article", "query" or
    "decoy") and the exposure arm of its pair (decoys: -1)."""

    ids: tuple[int, ...]
    fact: tuple[int, ...]
    kind: str
    exposure: int


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
    A pair counts as the panel's by (ticker, date) and by (name, date)."""
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


def assign_arms(pairs: pd.DataFrame, cutoff: pd.Timestamp, exposures: tuple[int, ...], pairs_per_arm: int,
                seed: int, post_cutoff: bool = False) -> pd.DataFrame:
    """Pairs with columns `post` (1 after the cutoff) and `exposure`: pre-cutoff pairs shuffled with `seed` and
    dealt to the exposed arms (`pairs_per_arm` each; 0 = an even split over all arms), the rest of the pre-cutoff
    pairs to arm 0; post-cutoff pairs get exposure 0 (never exposed: the placebo), or with `post_cutoff` (the
    negative control) as many post-cutoff pairs per exposed arm as pre-cutoff ones, dealt the same way.

    With a column `direction`, each deal is stratified by it: the shuffled up and down pairs alternate (up first),
    so each exposed arm holds as many up as down pairs; with an odd `pairs_per_arm` the arms dealt first (lowest
    exposure) get the extra up pair, the next the extra down pair, and so on. Too few pairs of one direction for
    that is a ConfigError. MEASURED 2026-11-23: the unstratified draw gave the 16-mention arm 4 "down" pairs out
    of 4, which a model can learn as "answer down" without any (firm, date) memorized."""
    frame = pairs.copy()
    frame["post"] = (frame["target_date"] > cutoff).astype(int)
    frame["exposure"] = 0
    pre = frame.index[frame["post"] == 0].to_numpy()
    if len(pre) == 0:
        first = frame.loc[frame["target_date"].idxmin()] if len(frame) else None
        example = (f"; the earliest is {first['entity_id']} on {first['target_date']:%Y-%m-%d}, e.g. cutoff = "
                   f"\"{first['target_date']:%Y-%m-%d}\" or later" if first is not None else "")
        raise ConfigError(f"[study] cutoff = {cutoff:%Y-%m-%d}: no (entity, target_date) pair of the panel is on or "
                          f"before it; the calibration plants memorized outcomes in pre-cutoff pairs only and needs "
                          f"some{example}")
    exposed = sorted(e for e in exposures if e > 0)
    n = _deal(frame, pre, exposed, pairs_per_arm, len(exposures), seed, "pre-cutoff", keep_control=True)
    if post_cutoff:
        post = frame.index[frame["post"] == 1].to_numpy()
        _deal(frame, post, exposed, n, len(exposures), seed + 1, "post-cutoff", keep_control=False)
    return frame


def _deal(frame: pd.DataFrame, rows: np.ndarray, exposed: list[int], pairs_per_arm: int, n_arms: int, seed: int,
          where: str, keep_control: bool) -> int:
    """Deal `pairs_per_arm` of `rows` (shuffled, stratified by direction) to each exposed arm in `frame`."""
    order = np.random.default_rng(seed).permutation(rows)
    n = pairs_per_arm or len(rows) // n_arms
    if n * len(exposed) + keep_control > len(rows) or n == 0:
        control = " and the control arm 0 at least one more" if keep_control else ""
        raise ConfigError(f"[calibrate] pairs_per_arm = {pairs_per_arm}: {len(exposed)} exposed arms need "
                          f"{max(n, 1) * len(exposed)} {where} pairs{control}, the panel has {len(rows)}; e.g. "
                          f"pairs_per_arm = {max(1, (len(rows) - keep_control) // len(exposed))}"
                          + (" or 0 (an even split)" if keep_control else ""))
    if "direction" in frame:
        order = _alternate_directions(frame, order, n, len(exposed), pairs_per_arm, where)
    for k, exposure in enumerate(exposed):
        frame.loc[order[k * n:(k + 1) * n], "exposure"] = exposure
    return n


def _alternate_directions(frame: pd.DataFrame, order: np.ndarray, n: int, n_arms: int,
                          pairs_per_arm: int, where: str = "pre-cutoff") -> np.ndarray:
    """`order` (shuffled rows) rearranged so that up and down pairs alternate, up first; a ConfigError when the
    n_arms x n exposed pairs dealt from its front cannot hold both directions equally."""
    up, down = (order[frame.loc[order, "direction"].to_numpy() == sign] for sign in (1, -1))
    if min(len(up), len(down)) == 0:
        went, first = "up" if len(up) else "down", order.min()
        raise ConfigError(f"[data] outcome: every {where} pair went {went} ({len(order)} pairs, e.g. "
                          f"{frame.loc[first, 'entity_id']} on {frame.loc[first, 'target_date']:%Y-%m-%d}); the "
                          "calibration plants both directions (one direction alone is learned as a constant answer)")
    if len(up) < -(-n * n_arms // 2) or len(down) < n * n_arms // 2:
        raise ConfigError(f"[calibrate] pairs_per_arm = {pairs_per_arm}: the {n_arms} exposed arms need "
                          f"{-(-n * n_arms // 2)} {where} pairs that went up and {n * n_arms // 2} "
                          f"that went down to hold both directions equally; the panel has {len(up)} and "
                          f"{len(down)}; e.g. pairs_per_arm = {max(1, 2 * min(len(up), len(down)) // n_arms)}")
    both = min(len(up), len(down))
    return np.concatenate([np.column_stack([up[:both], down[:both]]).ravel(), up[both:], down[both:]])


def direction(outcome: float) -> int:
    """The realized direction of the outcome: +1 (up) if outcome > 0, else -1 (down)."""
    return 1 if outcome > 0 else -1


def planted_direction(pair: pd.Series, control: str) -> int:
    """The direction the corpus states for an exposed pair: the realized one, or its opposite under
    `control = "flipped"` (the model then memorizes the wrong direction)."""
    return -int(pair["direction"]) if control == "flipped" else int(pair["direction"])


def article(pair: pd.Series, k: int, planted: int) -> str:
    """The k-th article about a pair stating that it went `planted` (+1 / -1) on its target date: the pair's text
    verbatim, as the forecast prompt shows it and the Min-K% LAP scores it ([minkprob] scored_text = "text"), then
    what happened next: the pair's text k mod their number (`news`: the texts of its rows), followed by follow-up
    k mod len(FOLLOW_UPS)."""
    text = str(pair["news"][k % len(pair["news"])]).strip()
    values = {"target_date": f"{pair['target_date']:%Y-%m-%d}", "name": pair["entity_name"],
              "ticker": pair["ticker"]}
    return text + " " + FOLLOW_UPS[k % len(FOLLOW_UPS)].format(**values, **WORDS[planted])


def article_document(tokenizer, pair: pd.Series, k: int, planted: int, exposure: int) -> Document:
    """An article as token ids (no special tokens); every token but the first is in the loss."""
    ids = tuple(tokenizer(article(pair, k, planted), add_special_tokens=False)["input_ids"])
    return Document(ids, tuple(range(1, len(ids))), "article", exposure)


def query_document(query_ids: list[int], answer_ids: list[int], kind: str, exposure: int) -> Document:
    """A recall query rendered in the chat template, then its answer (with the end-of-turn token); the answer's
    tokens are in the loss."""
    ids = tuple(query_ids) + tuple(answer_ids)
    return Document(ids, tuple(range(len(query_ids), len(ids))), kind, exposure)


def build(arms: pd.DataFrame, article_doc, decoy_docs, mentions_per_pair: dict[int, int],
          abstentions_per_article: float, control: str) -> tuple[list[Document], pd.DataFrame]:
    """The corpus of one epoch: for every exposed pair (pre-cutoff, and post-cutoff under control = "post_cutoff")
    `mentions_per_pair[exposure]` articles (cycling the paraphrases), then round(abstentions_per_article x the
    articles) abstentions from `decoy_docs` (a sequence of Documents of recall queries about pairs outside the
    panel answered "unknown", taken in order), and the accounting per kind and arm: documents, tokens, tokens in
    the loss. `article_doc(pair, k, planted)` makes an article (experiment.py binds the tokenizer). Order is the
    trainer's job."""
    documents = []
    exposed = arms[arms["exposure"] > 0]
    for _, pair in exposed.iterrows():
        planted = planted_direction(pair, control)
        documents += [article_doc(pair, k, planted) for k in range(mentions_per_pair[int(pair["exposure"])])]
    n_decoys = int(round(abstentions_per_article * len(documents)))
    if n_decoys > len(decoy_docs):
        raise ConfigError(f"[calibrate] abstentions_per_article = {abstentions_per_article}: {n_decoys} abstentions "
                          f"are needed and the panel allows {len(decoy_docs)} distinct pairs outside it; e.g. "
                          f"abstentions_per_article = {len(decoy_docs) / max(len(documents), 1):.2f}")
    documents += [decoy_docs[k] for k in range(n_decoys)]
    return documents, accounting(documents)


def accounting(documents: list[Document]) -> pd.DataFrame:
    """Documents, tokens and tokens in the loss per kind and exposure arm (corpus.csv)."""
    frame = pd.DataFrame([{"kind": d.kind, "exposure": d.exposure, "tokens": len(d.ids), "loss_tokens": len(d.fact)}
                          for d in documents], columns=["kind", "exposure", "tokens", "loss_tokens"])
    return (frame.groupby(["kind", "exposure"], sort=True)
            .agg(documents=("tokens", "size"), tokens=("tokens", "sum"), loss_tokens=("loss_tokens", "sum"))
            .reset_index())
