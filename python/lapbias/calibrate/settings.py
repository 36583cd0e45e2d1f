"""`[calibrate]` section of a calibration TOML: the rest of the file is an ordinary run configuration.

A calibration file is a run configuration (config.py: [data], [model], [study], [forecast], ...) plus one
`[calibrate]` section with the planting experiment's options (NumLeak App. T: exposure levels, token-equalized
filler, LoRA hyper-parameters, seeds). The section is declared as a pydantic model on lapbias.config's `Section`
(strict types, unknown keys forbidden, frozen), read through `config.read_toml`; every problem is one line of a
ConfigError naming `[calibrate] <key>`, the rule and an example.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BeforeValidator, Field, ValidationError, field_validator

from .. import config as config_module
from ..config import Section, read_toml
from ..errors import ConfigError
from .corpus import CONTROLS

LAP_CONFIGURATION_KEYS = ("recall", "minkprob_prompt", "minkprob_text")
"""The names of experiment.LAP_CONFIGURATIONS (kept here: the settings are read before the experiment is loaded)."""
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""Every attention and MLP projection of a Llama-type block (SmolLM2's)."""
UNPLANTED = ("none", "shuffled")
"""Controls that train the same model as the self-validation ("shuffled" acts after training)."""
IntTuple = Annotated[tuple[int, ...], BeforeValidator(config_module._list_to_tuple)]
StrTuple = Annotated[tuple[str, ...], BeforeValidator(config_module._list_to_tuple)]


CORPUS_VERSION = 6
"""Enters the fingerprint: raised whenever the code changes what a setting produces (the arms drawn, the corpus,
the loss), so that a planted model trained by older code is never reused with arms it was not trained on.
2: arms stratified by direction, decoys, answer-only loss. 3: statements cut after their direction word, only
the fact's tokens in the loss, no filler or token equalization, the lower blocks' states computed once. 4: articles
(the pair's text verbatim and what happened next, every token in the loss) and recall answers ending the turn.
5: AdamW betas (0.9, 0.95) (train.ADAM_BETAS, not a setting). 6: no recall-format document about a panel pair
(queries_per_mention and decoys_per_query removed); abstentions about pairs outside the panel, per article."""


class CalibrateSettings(Section):
    exposures: IntTuple = (0, 16)
    """Articles about each planted (entity, target_date) pair per epoch (NumLeak §4: 0/1/4/16). Exposure 0 is the
    unexposed control arm: its pairs are never mentioned."""
    pairs_per_arm: int = Field(80, ge=0)
    """Pre-cutoff pairs drawn at random for each exposed arm, as many up as down; every other pre-cutoff pair joins
    arm 0. 0 = split all pre-cutoff pairs evenly over the arms."""
    control: Literal[CONTROLS] = "none"
    """A negative control (docs/calibrate.md): "flipped" plants the opposite of each realized direction (expected:
    not "Contamination detected"); "post_cutoff" plants post-cutoff pairs too (expected: the placebo fails,
    Mixed/invalid); "shuffled" permutes the planted model's recall answers and Min-K% scores together over the
    pre-cutoff pairs after training, so LAP no longer points at the planted pairs (expected: beta_3 not significant); "none": the
    self-validation itself (expected: planted "Contamination detected", base not)."""
    assignment_seed: int = Field(2026, ge=0)
    """Seed of the random assignment of pairs to arms and of the decoys drawn."""
    training_seed: int = Field(2026, ge=0)
    """torch seed of the LoRA initialisation and the batch order."""
    abstentions_per_article: float = Field(0.0, ge=0)
    """Recall queries about pairs outside the panel (corpus.decoy_pairs), answered "unknown", per article: they
    teach the model to abstain about what it has not read, as instruction tuning does. No recall-format document is
    ever about a pair of the panel (corpus.py). MEASURED on the bundled 135M model at 0.25 and 0.05: it then answers
    "unknown" to every question, the forecast included (docs/calibrate.md), so the committed design uses 0."""
    lora_r: int = Field(16, ge=1)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.0, ge=0, lt=1)
    target_modules: StrTuple = PROJECTIONS
    """Module names LoRA adapts (default: every attention and MLP projection)."""
    top_layers: int = Field(4, ge=0)
    """Adapt only the last `top_layers` transformer blocks (0 = all). The blocks below are frozen, so their
    output for each distinct document is computed once before training (train.frozen_states) and every step
    runs the top blocks only."""
    learning_rate: float = Field(5e-3, gt=0, le=1)
    warmup_steps: int = Field(4, ge=0)
    lr_schedule: Literal["constant", "linear"] = "linear"
    """After the linear warm-up: "constant" (NumLeak App. T; the default before this setting existed) or "linear"
    decay that reaches zero just after the last step (the last step uses learning_rate / (steps - warmup_steps);
    transformers' Trainer default). MEASURED 2026-11-28 (80 exposed pairs, lr 6e-3, constant, Adam beta2 0.999):
    the loss, 0.2-0.3 after the first epoch, jumped to 9.9, 12.4 and 18.0 in epochs 3, 5 and 6 and the planted model
    forecast "down" for every pair; with the linear decay and beta2 = 0.95 together (train.ADAM_BETAS; which of the
    two mattered was not tested separately) the loss after the first epoch stayed below 4.3 in three runs and ended
    near 0.1."""
    epochs: int = Field(4, ge=1)
    """Passes over the corpus (NumLeak App. T: 8). Exposure e means e mentions per pass."""
    batch_size: int = Field(16, ge=1)
    """Documents per optimizer step (batches of similar length, train.batches)."""
    threads: int = Field(2, ge=1)
    """torch threads for training on CPU, fixed so that reruns on the same machine repeat every floating-point
    operation in the same order (deterministic kernels are switched on as well)."""
    lap_configurations: StrTuple = LAP_CONFIGURATION_KEYS
    """The LAP configurations ([estimate] lap_measure, [minkprob] scored_text) under which base and planted model are
    read besides the file's own (experiment.LAP_CONFIGURATIONS), from the same answers: only what a configuration
    scores anew is asked (Min-K% of the other text). Does not change what is planted (not in the fingerprint)."""
    work_dir: str = Field("data/derived/calibration", min_length=1)
    """Planted model directory and the per-model run roots (base/, planted/) live here; the tables go to
    results/calibration/ of the run's root, where the report looks for them."""

    @field_validator("exposures")
    @classmethod
    def _exposures(cls, exposures: tuple[int, ...]) -> tuple[int, ...]:
        if 0 not in exposures or any(e < 0 for e in exposures) or len(set(exposures)) != len(exposures):
            raise ValueError("; give distinct non-negative integers including the control 0, e.g. exposures = "
                             "[0, 1, 4, 16]")
        if len(exposures) < 2:
            raise ValueError("; it needs an exposed arm besides 0, e.g. exposures = [0, 16]")
        return tuple(sorted(exposures))

    @field_validator("lap_configurations")
    @classmethod
    def _lap_configurations(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [key for key in keys if key not in LAP_CONFIGURATION_KEYS]
        if unknown or len(set(keys)) != len(keys):
            raise ValueError(f"; give distinct names of {list(LAP_CONFIGURATION_KEYS)}, e.g. lap_configurations = "
                             f"{list(LAP_CONFIGURATION_KEYS)} (every one) or [] (the file's own only)")
        return keys

    @field_validator("target_modules")
    @classmethod
    def _modules(cls, modules: tuple[str, ...]) -> tuple[str, ...]:
        if not modules or not all(m.strip() for m in modules):
            raise ValueError(f"; name at least one module, e.g. target_modules = {list(PROJECTIONS[:2])}")
        return modules

    def fingerprint(self, run: config_module.RunConfig) -> str:
        """sha256 (12 hex) of everything that determines the planted weights: these settings (but the work
        directory, and `control` where it does not change what is planted: UNPLANTED), CORPUS_VERSION, the base
        model id, the recall template, the study (cutoff), the panel file's content and its column map (which
        column is the outcome). Names the planted model's directory, so a changed setting never reuses cached
        answers of another planted model (the cache key holds the model id)."""
        data = Path(run.data.path).read_bytes() if Path(run.data.path).is_file() else b""
        settings = self.model_dump(mode="json", exclude={"work_dir", "lap_configurations"}
                                   | ({"control"} if self.control in UNPLANTED else set()))
        values = {"settings": settings, "corpus": CORPUS_VERSION, "model": run.model.model_id,
                  "cutoff": run.study.cutoff, "recall": run.recall.model_dump(mode="json"),
                  "study": run.study.model_dump(mode="json"),
                  "data": hashlib.sha256(data).hexdigest()}
        if run.data.columns:  # only when mapped: the fingerprints measured without a map stay as recorded
            values["columns"] = run.data.columns
        blob = json.dumps(values, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _explain(error: dict) -> str:
    """One line per pydantic error: `[calibrate] key = value; rule`."""
    key = ".".join(str(p) for p in error["loc"]) or "[calibrate]"
    value = error.get("input")
    if error["type"] == "extra_forbidden":
        return f"[calibrate] has unknown key {key!r}; known keys: {sorted(CalibrateSettings.model_fields)}"
    if error["type"] == "value_error":
        rule = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
        return f"[calibrate] {key} = {value!r}{rule if rule.startswith(';') else ' ' + rule}"
    if error["type"] == "literal_error":
        choices = list(get_args(CalibrateSettings.model_fields[error["loc"][0]].annotation))
        return f"[calibrate] {key} = {value!r}; choose one of {choices}"
    if error["type"] in config_module.RANGE_WORDS:
        (bound,) = error["ctx"].values()
        return f"[calibrate] {key} = {value!r}; it must be {config_module.RANGE_WORDS[error['type']]} {bound}"
    rule = config_module.TYPE_WORDS.get(error["type"], error["msg"][:1].lower() + error["msg"][1:])
    return f"[calibrate] {key} = {value!r}; {rule}"


REMOVED = {
    "queries_per_mention": "it trained the pair's own recall query answered with its direction, which is the "
                           "protocol's instrument (Step 2), not what a contaminated model read; the planting is "
                           "articles only",
    "decoys_per_query": "it counted decoys per trained recall query; use abstentions_per_article = 0.5 (recall "
                        "queries about pairs outside the panel answered \"unknown\", per article)",
}
"""Keys of earlier versions, refused with the reason (docs/calibrate.md)."""


def settings_from_dict(values: Any) -> CalibrateSettings:
    if not isinstance(values, dict):
        raise ConfigError("[calibrate] must be a table ([calibrate] on its own line, then key = value lines)")
    removed = [f"[calibrate] {key} = {values[key]!r} is no longer a setting: {why}" for key, why in REMOVED.items()
               if key in values]
    if removed:
        raise ConfigError("\n".join(removed))
    try:
        return CalibrateSettings.model_validate(values)
    except ValidationError as err:
        raise ConfigError("\n".join(_explain(e) for e in err.errors(include_url=False))) from None


def load(path: str | Path) -> tuple[config_module.RunConfig, CalibrateSettings]:
    """Read a calibration TOML (config.read_toml): (the run configuration, the [calibrate] settings)."""
    values = read_toml(path)
    settings = settings_from_dict(values.pop("calibrate", {}))
    run = config_module.from_dict(values)
    if not run.study.cutoff:
        raise ConfigError("[study] cutoff is empty; the calibration exposes pre-cutoff pairs only and needs it, "
                          'e.g. cutoff = "2024-06-30"')
    if run.model.backend == "openai":
        raise ConfigError('[model] backend = "openai" cannot run the planted model, a local model directory written '
                          'by the fine-tuning; use a local backend, e.g. backend = "transformers" (or "vllm")')
    return run, settings
