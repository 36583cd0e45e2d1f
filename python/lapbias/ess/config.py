"""The `[ess]` section of a TOML file -> typed, frozen dataclasses (kept here, apart from lapbias/config.py).

`lapbias ess CONFIG` reads `root` and `[ess]` only, so the section can sit in a study's main config or in a
file of its own (data/demo/ess.toml). Every key has a default except the outcomes; an unknown key is an error
naming its path (e.g. `[ess.outcomes.0] unknown key 'los'`), never a silent default.

    [ess]
    data = "statsmodels:anes96"   # a CSV/parquet path, or statsmodels:<dataset> (a dataset bundled in statsmodels)
    rows = 0                      # random subsample of that many rows (0 = all)
    seed = 1                      # the subsample, the one block permutation, tuning subsets, forests
    covariates = [...]            # X; non-numeric ones must be listed in `categorical`
    categorical = []
    min_category_count = 50       # App. C: rarer levels pooled into "other"
    grid = [10, 20, 40]           # training sizes n_1 < … < n_J (§3.4)
    alpha = 0.05                  # level of Algorithm 3.1 (one-sided CI of the ESS)
    band_level = 0.95             # two-sided pointwise bands of the error curves
    comparators = ["lasso", "rf"] # default per outcome; built-ins by outcome type, or {name, class, params}
    test_variance = "difference"  # eq. (4.6) "difference" or the conservative (4.7) "sum" for Algorithm 3.1
    min_blocks = 20               # hybrid rule: fixed-n variance when K ≥ min_blocks (variance.py)
    trees = 300                   # random-forest trees (App. C)
    n_jobs = 1
    [ess.model]                   # the backend, as lapbias's [model] (backend, model_id, dtype, device, batch_size, ...)
    [ess.value_labels.<column>]   # code -> words, used when a covariate fills a persona prompt
    [[ess.outcomes]]              # one table per outcome: name, column, type, loss, and LLM predictions from
                                  # llm_column or prompt (+ labels for a discrete outcome); optional arm / cate
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ModelConfig, plain, read_toml
from ..errors import ConfigError
from .losses import DISCRETE_LOSSES, LOSSES

TYPES = ("continuous", "discrete")
TEST_VARIANCES = ("difference", "sum")


@dataclass(frozen=True)
class Outcome:
    name: str
    column: str
    type: str = "discrete"
    loss: str = ""
    """"" = squared for continuous, zero_one for discrete."""
    positive: Any = None
    """Positive class for loss = "f1_error" ("" = the larger value)."""
    llm_column: str = ""
    """A column holding the LLM's predictions already (then no prompt is sent)."""
    prompt: str = ""
    """Persona prompt template: {column} placeholders filled from the row (through [ess.value_labels])."""
    system_prompt: str = ""
    labels: dict = field(default_factory=dict)
    """Discrete outcome: answer word -> outcome value, e.g. {Clinton = 0, Dole = 1}."""
    max_new_tokens: int = 12
    """Continuous outcome: tokens generated; the first number in the answer is the prediction."""
    comparators: tuple = ()
    arm: dict = field(default_factory=dict)
    """§6 treatment-arm ESS: {treatment = "D", value = 1} keeps the rows with D = 1 (unconfoundedness assumed)."""
    cate: dict = field(default_factory=dict)
    """§6 CATE-ESS: {treatment = "D", propensity = 0.5 or "column"}: the outcome becomes the transformed
    outcome Y* = Y (D − e) / (e (1 − e)), the loss squared, and the LLM predicts the effect τ(x)."""

    @property
    def discrete(self) -> bool:
        return self.type == "discrete"


@dataclass(frozen=True)
class EssConfig:
    root: str = "."
    data: str = ""
    rows: int = 0
    seed: int = 1
    covariates: tuple = ()
    categorical: tuple = ()
    min_category_count: int = 50
    grid: tuple = ()
    alpha: float = 0.05
    band_level: float = 0.95
    comparators: tuple = ()
    test_variance: str = "difference"
    min_blocks: int = 20
    trees: int = 300
    n_jobs: int = 1
    value_labels: dict = field(default_factory=dict)
    model: ModelConfig = field(default_factory=ModelConfig)
    outcomes: tuple = ()


def _known(cls) -> list[str]:
    """Field names of a dataclass, or of a pydantic model (lapbias.config's sections after its rewrite)."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return list(cls.model_fields)


def _fields(cls, values: dict, where: str) -> dict:
    if not isinstance(values, dict):
        raise ConfigError(f"{where} must be a table, e.g. {where} {{ ... }}")
    known = _known(cls)
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {unknown}; known keys: {sorted(known)}")
    return values


def _outcome(values: dict, index: int, defaults: tuple) -> Outcome:
    where = f"[ess.outcomes.{index}]"
    values = dict(_fields(Outcome, values, where))
    for key in ("name", "column"):
        if not isinstance(values.get(key), str) or not values.get(key):
            raise ConfigError(f"{where} needs `{key}`, e.g. name = \"vote\", column = \"vote\"")
    kind = values.get("type", "discrete")
    if kind not in TYPES:
        raise ConfigError(f"{where} type = {kind!r}; choose one of {list(TYPES)}")
    if values.get("cate"):
        kind = values["type"] = "continuous"
        if set(values["cate"]) - {"treatment", "propensity"} or "treatment" not in values["cate"]:
            raise ConfigError(f"{where} cate must be {{treatment = \"D\", propensity = 0.5}} (propensity a number in "
                              "(0, 1) or a column name)")
    if values.get("cate") and values.get("arm"):
        raise ConfigError(f"{where} has both cate and arm; the CATE-ESS (§6) uses both treatment arms, so drop arm "
                          "(or drop cate for a treatment-arm ESS)")
    if values.get("arm") and (set(values["arm"]) != {"treatment", "value"}):
        raise ConfigError(f"{where} arm must be {{treatment = \"D\", value = 1}}")
    loss = values.get("loss") or ("zero_one" if kind == "discrete" else "squared")
    if loss not in LOSSES:
        raise ConfigError(f"{where} loss = {loss!r}; choose one of {list(LOSSES)}")
    if (loss in DISCRETE_LOSSES) != (kind == "discrete"):
        raise ConfigError(f"{where} loss = {loss!r} does not fit type = {kind!r}: squared is for continuous "
                          f"outcomes, {list(DISCRETE_LOSSES)} for discrete ones")
    values["loss"] = loss
    if bool(values.get("llm_column")) == bool(values.get("prompt")):
        raise ConfigError(f"{where} needs exactly one of llm_column (predictions you have) or prompt (a persona "
                          "template filled from the covariates, e.g. \"You are {age} years old. ...\")")
    if values.get("prompt") and kind == "discrete" and not values.get("labels"):
        raise ConfigError(f"{where} prompt needs labels (answer word -> outcome value), e.g. "
                          "labels = {Clinton = 0, Dole = 1}")
    values["comparators"] = tuple(values.get("comparators") or defaults or
                                  (("l1logit", "rf") if kind == "discrete" else ("lasso", "rf")))
    return Outcome(**values)


def from_dict(values: dict, root: str = ".") -> EssConfig:
    values = dict(_fields(EssConfig, values, "[ess]"))
    values.pop("root", None)
    outcomes = values.pop("outcomes", None)
    if not outcomes or not isinstance(outcomes, list):
        raise ConfigError("[ess] needs at least one [[ess.outcomes]] table, e.g. name = \"vote\", column = \"vote\", "
                          "type = \"discrete\", llm_column = \"llm_vote\"")
    model = values.pop("model", {})
    try:
        model = ModelConfig(**_fields(ModelConfig, model, "[ess.model]"))
    except (TypeError, ValueError) as err:           # pydantic's ValidationError is a ValueError
        raise ConfigError(f"[ess.model] is invalid: {str(err).splitlines()[0]}") from None
    for key in ("covariates", "categorical", "grid", "comparators"):
        if key in values:
            if isinstance(values[key], str) or not isinstance(values[key], list):
                raise ConfigError(f"[ess] {key} must be a list, e.g. {key} = [...]")
            values[key] = tuple(values[key])
    if not values.get("data"):
        raise ConfigError("[ess] needs `data`: a CSV/parquet path or statsmodels:<dataset>, e.g. data = \"statsmodels:anes96\"")
    if not values.get("covariates"):
        raise ConfigError("[ess] needs `covariates`, the columns X, e.g. covariates = [\"age\", \"educ\"]")
    grid = values.get("grid", ())
    if not grid or any(not isinstance(n, int) or n < 1 for n in grid) or list(grid) != sorted(set(grid)):
        raise ConfigError(f"[ess] grid = {list(grid)}; it must be increasing positive integers, e.g. grid = [10, 20, 40, 80]")
    if not 0 < values.get("alpha", 0.05) < 0.5:
        raise ConfigError(f"[ess] alpha = {values['alpha']}; it is a one-sided level in (0, 0.5), e.g. 0.05")
    if not 0 < values.get("band_level", 0.95) < 1:
        raise ConfigError(f"[ess] band_level = {values['band_level']}; it is a coverage in (0, 1), e.g. 0.95")
    if values.get("test_variance", "difference") not in TEST_VARIANCES:
        raise ConfigError(f"[ess] test_variance = {values['test_variance']!r}; choose one of {list(TEST_VARIANCES)}")
    if values.get("min_blocks", 20) < 2:
        raise ConfigError(f"[ess] min_blocks = {values['min_blocks']}; the fixed-n variance needs at least 2 blocks")
    labels = values.get("value_labels", {})
    values["value_labels"] = {col: {str(k): str(v) for k, v in _fields_any(m, f"[ess.value_labels.{col}]").items()}
                              for col, m in labels.items()}
    outcome_objs = tuple(_outcome(o, i, values.get("comparators", ())) for i, o in enumerate(outcomes))
    for index, outcome in enumerate(outcome_objs):
        # §6: the ML model predicts Y* from X alone; with D or e(X) among the covariates it learns E[Y* | X, D] ≠ τ(X).
        for role in ("treatment", "propensity"):
            column = outcome.cate.get(role) if outcome.cate else None
            if isinstance(column, str) and column in values["covariates"]:
                raise ConfigError(f"[ess.outcomes.{index}] cate: covariate {column!r} is the {role}; the CATE-ESS "
                                  f"predicts the transformed outcome from X alone (§6), so remove {column!r} from "
                                  "[ess] covariates")
    names = [o.name for o in outcome_objs]
    if len(set(names)) != len(names):
        raise ConfigError(f"[ess.outcomes] names must be distinct; got {names}")
    return EssConfig(root=str(root), model=model, outcomes=outcome_objs, **values)


def _fields_any(values: Any, where: str) -> dict:
    if not isinstance(values, dict):
        raise ConfigError(f"{where} must be a table of code = \"words\", e.g. 1 = \"grade school\"")
    return values


def load(path: str | Path) -> EssConfig:
    """Read `root` and `[ess]` from a TOML file; other sections are left to their own loaders."""
    path = Path(path)
    values = read_toml(path)
    if "ess" not in values:
        raise ConfigError(f"config file {path} has no [ess] section; see data/demo/ess.toml for an example")
    return from_dict(values["ess"], values.get("root", "."))


def snapshot(config: EssConfig) -> dict:
    return plain(config)
