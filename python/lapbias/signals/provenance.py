"""What a derived signal file was derived from: the sha256 of data/derived/input.parquet and the config settings its
queries and its derivation read, kept in the file's parquet metadata (pandas `attrs`) by each signal's `derive`.

`panel` refuses a forecast, recall or Min-K% file whose record differs from the current input.parquet or config, and
passes the records on in panel.parquet, where `estimate` compares them with its config again. Without this, a label
map, prompt, model or K edited after the signal step, followed by `lapbias panel` (or `estimate`) alone, put the old
signals in the panel while results/run_config.json and REPORT.md named the new settings; so did a data file validated
again. A file without a record (written by an older version, or through the Python API) is not checked.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import RunConfig, settings_difference, snapshot, study_settings
from ..io import Layout
from ..llm import moments
from ..stage import RUN_ALL, StaleResultsError, fingerprint
from . import measures, recall_mode

ATTRS_KEY = "lapbias_derived_from"
RECALL_MODE = "[recall] label probabilities"
"""Not a config key: how the recall's label probabilities are asked ("sampled", "exact" on a local backend, "top-k"
from a server), which names its cache keys; the backend itself does not (transformers and vLLM are both exact)."""
MOMENTS = "[minkprob] next-token moments"
"""Not a config key: where the Min-K% pass's next-token moments come from ("vocabulary" on the transformers backend,
"top-20" on vLLM and servers, llm/moments.py), which names its cache keys."""
READS = {
    "forecast": ("[model] model_id", "[model] dtype", "[forecast] "),
    "recall": ("[model] model_id", "[model] dtype", RECALL_MODE, "[recall] ", "[study] outcome_description",
               "[study] reference_period"),
    "minkprob": ("[model] model_id", "[model] dtype", MOMENTS, "[minkprob] "),
}
"""The settings each signal's cache keys and derivation read (config.study_settings keys, or prefixes ending in a
space for a whole section): the model and precision named in every key, how the recall asks its label
probabilities (RECALL_MODE), the prompt, template, labels, parser and K. Min-K% also reads the forecast
prompt when it scores the prompt (`settings`). Other [model] settings (device, context length, tokenizer, served name,
where and how fast it is asked) change no cached answer that a rerun would read."""
CHECKS_ONLY = frozenset({"[recall] censoring_warning"})
"""Settings read by a check on the derived file, not by its derivation: changing one leaves the file as it is (the
parse-rate gate of the forecast is not a study setting at all: config.OPERATIONAL_SETTINGS)."""


def settings(config: RunConfig, task: str) -> dict:
    """The config settings that `task`'s derived file depends on ({"[section] key": value})."""
    reads = READS[task] + (("[forecast] prompt",) if task == "minkprob" and config.minkprob.scored_text == "prompt"
                           else ())
    current = {**study_settings(snapshot(config)), RECALL_MODE: recall_mode.mode(config),
               MOMENTS: moments.mode(config.model)}
    return {key: value for key, value in current.items()
            if key not in CHECKS_ONLY and any(key == prefix or prefix.endswith(" ") and key.startswith(prefix)
                                              for prefix in reads)}


def record(config: RunConfig, layout: Layout, task: str) -> dict:
    """The record `derive` stores: the input.parquet it read (sha256) and the settings it read."""
    return {"input_sha256": fingerprint(layout.derived_file("input.parquet")), "settings": settings(config, task)}


def stamp(frame: pd.DataFrame, config: RunConfig, layout: Layout, task: str) -> pd.DataFrame:
    frame.attrs[ATTRS_KEY] = record(config, layout, task)
    return frame


def settings_problem(recorded: dict, config: RunConfig, task: str, path: Path) -> str | None:
    """'PATH was derived with SETTING = ...' naming the first setting of `task` that the config no longer shares with
    `recorded`; None when it shares them all."""
    current = settings(config, task)
    differ = [key for key in sorted(set(current) | set(recorded)) if recorded.get(key) != current.get(key)]
    return f"{path} was derived with {settings_difference(recorded, current, differ)}" if differ else None


def check_settings(recorded: dict, config: RunConfig, task: str, path: Path, rerun: str) -> None:
    """StaleResultsError naming the first setting of `task` that the config no longer shares with `recorded`."""
    problem = settings_problem(recorded, config, task, path)
    if problem:
        raise StaleResultsError(f"{problem}: {rerun}")


def problem(frame: pd.DataFrame, config: RunConfig, layout: Layout, task: str, path: Path) -> str | None:
    """Why the derived file `path` of `task` is not current (derived from another input.parquet, or under other
    settings), or None."""
    derived_from = frame.attrs.get(ATTRS_KEY)
    if not derived_from:
        return None
    if derived_from.get("input_sha256") != fingerprint(layout.derived_file("input.parquet")):
        return (f"{path} was derived from another data/derived/input.parquet (`lapbias validate` ran again since "
                f"`lapbias {task}`)")
    return settings_problem(derived_from.get("settings", {}), config, task, path)


def check(frame: pd.DataFrame, config: RunConfig, layout: Layout, task: str, path: Path) -> None:
    """The derived file `path` of `task` was derived from input.parquet as it is now, under the config's settings."""
    found = problem(frame, config, layout, task, path)
    if not found:
        return
    rerun = f"rerun `lapbias {task} --yes` (it asks the model only what the cache does not hold), then " \
            f"`lapbias panel`, {RUN_ALL}"
    if task == "minkprob" and measures.configured(config).task != "minkprob":  # a backend without prompt log-probs cannot
        rerun += "; or remove data/derived/minkprob.parquet (this config estimates with the recall LAP)"
    raise StaleResultsError(f"{found}; {rerun}")
