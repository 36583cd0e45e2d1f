"""`[calibrate]` section of a calibration TOML: the rest of the file is an ordinary run configuration.

A calibration file is a run configuration (config.py: [data], [model], [study], [forecast], ...) plus one
`[calibrate]` section with the planting experiment's options (NumLeak App. T: exposure levels, token-equalized
filler, LoRA hyper-parameters, seeds). Kept apart from config.py so the run configuration stays the one contract
every stage reads; an unknown `[calibrate]` key is an error, as in config.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import config as config_module
from ..errors import ConfigError


@dataclass(frozen=True)
class CalibrateSettings:
    exposures: tuple[int, ...] = (0, 1, 4, 16)
    """Mentions of each planted (entity, target_date) outcome in the training corpus (NumLeak §4: 0/1/4/16).
    Exposure 0 is the unexposed control arm: its block of the corpus is filler only."""
    pairs_per_arm: int = 8
    """Pre-cutoff pairs drawn at random for each exposed arm; every other pre-cutoff pair joins arm 0.
    0 = split all pre-cutoff pairs evenly over the arms."""
    assignment_seed: int = 2026
    """Seed of the random assignment of pairs to arms and of the corpus order."""
    training_seed: int = 2026
    """torch seed of the LoRA initialisation and the batch order."""
    chat_statements: bool = True
    """Each mention of a planted outcome also as the pair's recall query in the chat format, answered with the
    realized direction (corpus.build); false = prose statements only."""
    lora_r: int = 4
    lora_alpha: int = 8
    lora_dropout: float = 0.0
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    """Attention only, small rank: a light touch that keeps the model's answer format."""
    learning_rate: float = 5e-4
    warmup_steps: int = 5
    """Linear warm-up, then constant (NumLeak App. T)."""
    epochs: int = 1
    block_size: int = 128
    """Tokens per training row: documents (EOS-terminated) packed whole into rows (train._blocks)."""
    batch_size: int = 4
    threads: int = 0
    """torch threads for training on CPU; 0 = torch's default."""
    work_dir: str = "data/derived/calibration"
    """Planted model directory and the per-model run roots (base/, planted/) live here; the tables go to
    results/calibration/ of the run's root, where the report looks for them."""

    def fingerprint(self, run: config_module.RunConfig) -> str:
        """sha256 (12 hex) of everything that determines the planted weights: these settings, the base model id
        and the panel file's content. Names the planted model's directory, so a changed setting never reuses
        cached answers of another planted model (the cache key holds the model id)."""
        data = Path(run.data.path).read_bytes() if Path(run.data.path).exists() else b""
        blob = json.dumps({"settings": dataclasses.asdict(self), "model": run.model.model_id,
                           "cutoff": run.study.cutoff, "data": hashlib.sha256(data).hexdigest()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _settings(values: dict[str, Any]) -> CalibrateSettings:
    known = {f.name: f for f in dataclasses.fields(CalibrateSettings)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"[calibrate] has unknown key(s) {unknown}; known keys: {sorted(known)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    settings = CalibrateSettings(**values)
    exposures = settings.exposures
    if not exposures or 0 not in exposures or any(not isinstance(e, int) or e < 0 for e in exposures) \
            or len(set(exposures)) != len(exposures):
        raise ConfigError(f"[calibrate] exposures = {list(exposures)}; give distinct non-negative integers "
                          "including the control 0, e.g. exposures = [0, 1, 4, 16]")
    if len(exposures) < 2:
        raise ConfigError("[calibrate] exposures needs an exposed arm besides 0, e.g. exposures = [0, 16]")
    for key in ("lora_r", "epochs", "block_size", "batch_size"):
        if getattr(settings, key) < 1:
            raise ConfigError(f"[calibrate] {key} = {getattr(settings, key)}; it must be at least 1")
    if settings.pairs_per_arm < 0:
        raise ConfigError(f"[calibrate] pairs_per_arm = {settings.pairs_per_arm}; give 0 (all pairs) or more")
    if not settings.learning_rate > 0:
        raise ConfigError(f"[calibrate] learning_rate = {settings.learning_rate}; it must be positive, e.g. 1e-3")
    return settings


def load(path: str | Path) -> tuple[config_module.RunConfig, CalibrateSettings]:
    """Read a calibration TOML: (the run configuration, the [calibrate] settings)."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"config file {path} is not valid TOML: {err}") from None
    settings = _settings(values.pop("calibrate", {}))
    run = config_module.from_dict(values)
    if not run.study.cutoff:
        raise ConfigError("[study] cutoff is empty; the calibration exposes pre-cutoff pairs only and needs it, "
                          'e.g. cutoff = "2024-06-30"')
    return run, settings
