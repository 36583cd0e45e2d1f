"""The `[ess]` section of a TOML file -> typed, frozen, validated sections (kept here, apart from lapbias/config.py).

`lapbias ess CONFIG` reads `root` and `[ess]` only, so the section can sit in a study's main config or in a
file of its own (data/demo/ess.toml). Every key has a default except `data`, `covariates`, `grid` and the outcomes.

The schema has the discipline of the protocol's config (lapbias/config.py): pydantic models with strict types (no
"0.05" for 0.05, no true for 1), ranges, choices and unknown keys forbidden. Every problem is one line of a
ConfigError naming the key path and the value as the TOML file writes it, e.g. `[ess] rows = -5; it must be >= 0`,
`[ess] grid = [5, true]: element 2 (true) must be a whole number`, `[ess.outcomes.0] has unknown key(s) ['los']`.

    [ess]
    data = "statsmodels:anes96"   # a CSV/parquet/.dta path, or statsmodels:<dataset> (a dataset bundled in statsmodels)
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
    min_blocks = 20               # bands of R(n): the hybrid rule's threshold (variance.band)
    trees = 300                   # random-forest trees (App. C)
    n_jobs = 1
    [ess.model]                   # the backend, as lapbias's [model] (backend, model_id, dtype, device, batch_size, ...)
    [ess.value_labels.<column>]   # code -> words, used when a covariate fills a persona prompt
    [[ess.outcomes]]              # one table per outcome: name, column, type, loss, and LLM predictions from
                                  # llm_column or prompt (+ labels for a discrete outcome); optional arm / cate
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from ..config import ModelConfig, Section, _list_to_tuple, plain, read_toml
from ..errors import ConfigError
from .losses import DISCRETE_LOSSES

MAX_SEED = 2**32 - 1
"""numpy's seeds run 0 .. 2^32 − 1."""

Scalar = Union[bool, int, float, str]
ComparatorSpec = Union[str, dict[str, Any]]
Names = Annotated[tuple[str, ...], BeforeValidator(_list_to_tuple)]


class Outcome(Section):
    name: str = Field(min_length=1)
    """The outcome's name in the tables, e.g. "vote"."""
    column: str = Field(min_length=1)
    """The data column holding the outcome."""
    type: Literal["continuous", "discrete"] = "discrete"
    loss: Literal["squared", "zero_one", "balanced_error", "f1_error"] = "zero_one"
    """Unset: squared for a continuous outcome, zero_one for a discrete one."""
    positive: Scalar | None = None
    """Positive class for loss = "f1_error" (unset = the larger value)."""
    llm_column: str = ""
    """A column holding the LLM's predictions already (then no prompt is sent)."""
    prompt: str = ""
    """Persona prompt template: {column} placeholders filled from the row (through [ess.value_labels])."""
    system_prompt: str = ""
    labels: dict[str, Scalar] = Field(default_factory=dict)
    """Discrete outcome: answer word -> outcome value, e.g. {Clinton = 0, Dole = 1}; several words may share a value."""
    max_new_tokens: int = Field(12, ge=1)
    """Tokens of the model's greedy answer that are read (the label it begins with, or the first number)."""
    comparators: Annotated[tuple[ComparatorSpec, ...], BeforeValidator(_list_to_tuple)] = ()
    arm: dict[str, Any] = Field(default_factory=dict)
    """§6 treatment-arm ESS: {treatment = "D", value = 1} keeps the rows with D = 1 (unconfoundedness assumed)."""
    cate: dict[str, Any] = Field(default_factory=dict)
    """§6 CATE-ESS: {treatment = "D", propensity = 0.5 or "column"}: the outcome becomes the transformed
    outcome Y* = Y (D − e) / (e (1 − e)), the loss squared, and the LLM predicts the effect τ(x)."""

    @property
    def discrete(self) -> bool:
        return self.type == "discrete"

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, values: Any) -> Any:
        """A CATE outcome is the continuous transformed outcome (§6); the loss defaults by type."""
        if not isinstance(values, dict):
            return values
        values = dict(values)
        if values.get("cate"):
            values["type"] = "continuous"
        if not values.get("loss"):
            values["loss"] = "squared" if values.get("type", "discrete") == "continuous" else "zero_one"
        return values

    @model_validator(mode="after")
    def _consistent(self) -> "Outcome":
        cate, arm = self.cate, self.arm
        if cate and (set(cate) - {"treatment", "propensity"} or not isinstance(cate.get("treatment"), str)
                     or not isinstance(cate.get("propensity", 0.5), (float, int, str))
                     or isinstance(cate.get("propensity", 0.5), bool)):
            raise ValueError("cate must be {treatment = \"D\", propensity = 0.5} (propensity a number in (0, 1) or a "
                             "column name)")
        if cate and arm:
            raise ValueError("has both cate and arm; the CATE-ESS (§6) uses both treatment arms, so drop arm (or drop "
                             "cate for a treatment-arm ESS)")
        if arm and (set(arm) != {"treatment", "value"} or not isinstance(arm["treatment"], str)):
            raise ValueError("arm must be {treatment = \"D\", value = 1}")
        if (self.loss in DISCRETE_LOSSES) != self.discrete:
            raise ValueError(f"loss = {toml_text(self.loss)} does not fit type = {toml_text(self.type)}: squared is "
                             f"for continuous outcomes, {list(DISCRETE_LOSSES)} for discrete ones")
        if bool(self.llm_column) == bool(self.prompt):
            raise ValueError("needs exactly one of llm_column (predictions you have) or prompt (a persona template "
                             "filled from the covariates, e.g. \"You are {age} years old. ...\")")
        if self.prompt and self.discrete:
            if not self.labels:
                raise ValueError("prompt needs labels (answer word -> outcome value), e.g. labels = {Clinton = 0, "
                                 "Dole = 1}")
            words = [w.strip().lower() for w in self.labels]
            if "" in words or len(set(words)) != len(words):
                raise ValueError(f"labels {list(self.labels)} must be distinct, non-empty words (case is ignored when "
                                 "the answer is read)")
        return self


class EssConfig(Section):
    root: str = "."
    data: str = Field(min_length=1)
    """A CSV/parquet/.dta path, or statsmodels:<dataset>, e.g. data = "statsmodels:anes96"."""
    rows: int = Field(0, ge=0)
    """Random subsample of that many rows (0 = all)."""
    seed: int = Field(1, ge=0, le=MAX_SEED)
    """The subsample, the one block permutation, tuning subsets, forests."""
    covariates: Names = Field(min_length=1)
    """The columns X, e.g. covariates = ["age", "educ"]."""
    categorical: Names = ()
    min_category_count: int = Field(50, ge=1)
    grid: Annotated[tuple[Annotated[int, Field(ge=1)], ...], BeforeValidator(_list_to_tuple)] = Field(min_length=1)
    """Training sizes n_1 < … < n_J, e.g. grid = [10, 20, 40, 80]."""
    alpha: float = Field(0.05, gt=0, lt=0.5)
    """The one-sided level of Algorithm 3.1, e.g. 0.05."""
    band_level: float = Field(0.95, gt=0, lt=1)
    """The coverage of the pointwise bands, e.g. 0.95."""
    comparators: Annotated[tuple[ComparatorSpec, ...], BeforeValidator(_list_to_tuple)] = ()
    test_variance: Literal["difference", "sum"] = "difference"
    min_blocks: int = Field(20, ge=3)
    """The bands' hybrid rule: the finite-K variance when K ≥ min_blocks, the larger of it and the fixed-K variance
    (eq. B.2) below (variance.band)."""
    trees: int = Field(300, ge=1)
    n_jobs: int = Field(1, ge=1)
    value_labels: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Per column: code -> words, e.g. [ess.value_labels.educ] 1 = "grade school"."""
    model: ModelConfig = Field(default_factory=ModelConfig)
    outcomes: Annotated[tuple[Outcome, ...], BeforeValidator(_list_to_tuple)] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _outcome_comparators(cls, values: Any) -> Any:
        """An outcome without comparators takes [ess] comparators, else the built-ins of its type (App. C)."""
        if not isinstance(values, dict) or not isinstance(values.get("outcomes"), list):
            return values
        default = values.get("comparators") or None
        if not (isinstance(default, list) and all(isinstance(c, (str, dict)) for c in default)):
            default = None                              # [ess] comparators has its own error
        outcomes = []
        for outcome in values["outcomes"]:
            if isinstance(outcome, dict) and not outcome.get("comparators"):
                continuous = outcome.get("cate") or outcome.get("type") == "continuous"
                outcome = {**outcome, "comparators": default or (["lasso", "rf"] if continuous else ["l1logit", "rf"])}
            outcomes.append(outcome)
        return {**values, "outcomes": outcomes}

    @field_validator("grid")
    @classmethod
    def _increasing(cls, grid: tuple) -> tuple:
        if list(grid) != sorted(set(grid)):
            raise ValueError(f"grid = {toml_text(grid)}; it must be increasing positive integers, e.g. grid = "
                             "[10, 20, 40, 80]")
        return grid

    @model_validator(mode="after")
    def _consistent(self) -> "EssConfig":
        names = [o.name for o in self.outcomes]
        if len(set(names)) != len(names):
            raise ValueError(f"outcome names must be distinct; got {toml_text(names)}")
        for index, outcome in enumerate(self.outcomes):
            where = f"[ess.outcomes.{index}]"
            if outcome.column in self.covariates:
                raise ValueError(f"{where} column = {toml_text(outcome.column)} is also among [ess] covariates: the "
                                 "comparators would be given the outcome they predict; remove it from covariates")
            # §6: the ML model predicts Y* from X alone; with D or e(X) among the covariates it learns E[Y* | X, D].
            for role in ("treatment", "propensity"):
                column = outcome.cate.get(role)
                if isinstance(column, str) and column in self.covariates:
                    raise ValueError(f"{where} cate: covariate {toml_text(column)} is the {role}; the CATE-ESS "
                                     f"predicts the transformed outcome from X alone (§6), so remove it from [ess] "
                                     "covariates")
        return self


def toml_text(value: Any) -> str:
    """A value as the TOML file writes it: "text", true, 0.05, [5, true], 2024-06-30."""
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False, default=str)


TYPE_WORDS = {
    "bool_type": "it must be true or false (no quotes)",
    "int_type": "it must be a whole number (no quotes, no decimal point)",
    "float_type": "it must be a number (no quotes)",
    "string_type": "it must be text in quotes",
    "dict_type": "it must be a table of key = value pairs",
    "tuple_type": "it must be a list in brackets, e.g. [10, 20] or [\"a\", \"b\"]",
    "model_type": "it must be a table of key = value pairs",
    "model_attributes_type": "it must be a table of key = value pairs",
    "string_too_short": "it must not be empty",
    "too_short": "it must not be empty",
}
MEMBER_WORDS = {"bool_type": "true or false", "int_type": "a whole number", "float_type": "a number",
                "string_type": "text in quotes", "dict_type": "a table", "none_required": "unset"}
RANGE_WORDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}


UNION_TAGS = {"str", "int", "float", "bool", "none"}


def _place(values: Any, loc: tuple) -> tuple:
    """The error location as keys of the TOML table: pydantic's union-member tags (e.g. 'str', 'dict[str,any]')
    are not keys of the input and are dropped; a missing key is kept."""
    place, here = [], values
    for part in loc:
        if isinstance(here, dict) and part in here:
            here = here[part]
        elif isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
            here = here[part]
        elif isinstance(part, str) and ("[" in part or part in UNION_TAGS) or not isinstance(here, dict):
            continue
        else:
            here = None
        place.append(part)
    return tuple(place)


def _value(values: Any, place: tuple) -> tuple[bool, Any]:
    for part in place:
        try:
            values = values[part]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, values


def _section(place: tuple) -> tuple[str, tuple]:
    """("outcomes", 0, "loss") -> ("[ess.outcomes.0]", ("loss",)); ("model", "dtype") -> ("[ess.model]", ...)."""
    if place[:1] == ("model",):
        return "[ess.model]", place[1:]
    if place[:1] in (("outcomes",), ("value_labels",)) and len(place) >= 2:
        return f"[ess.{place[0]}.{place[1]}]", place[2:]
    return "[ess]", place


def _explain(error: dict, values: dict) -> str:
    """One line per pydantic error: key path, the value as the file writes it, the rule."""
    kind = error["type"]
    place = _place(values, tuple(error["loc"]))
    section, keys = _section(place)
    if kind == "value_error":
        rule = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
        return rule if rule.startswith("[ess") else f"{section} {rule}"
    element = bool(keys) and isinstance(keys[-1], int)
    key = ".".join(str(k) for k in (keys[:-1] if element else keys))
    if kind == "missing":
        return f"{section} needs `{key}`"
    if kind == "literal_error":
        rule = f"choose one of {error['ctx']['expected']}".replace("'", '"')
    elif kind == "union":
        rule = error["msg"]
    elif kind in RANGE_WORDS:
        (bound,) = error["ctx"].values()
        rule = f"it must be {RANGE_WORDS[kind]} {bound}"
    else:
        rule = TYPE_WORDS.get(kind, error["msg"][:1].lower() + error["msg"][1:])
    found, whole = _value(values, place[:-1] if element else place)
    shown = toml_text(whole if found else error.get("input"))
    if element:
        return f"{section} {key} = {shown}: element {keys[-1] + 1} ({toml_text(error.get('input'))}) " \
               f"{rule.replace('it must', 'must')}"
    return f"{section} {key} = {shown}; {rule}"


def _unknown(errors: list[dict], values: dict) -> list[str]:
    """Unknown keys grouped per table, with the known keys (a typo must not silently fall back to a default)."""
    grouped: dict[str, list[str]] = {}
    for error in errors:
        section, _ = _section(_place(values, tuple(error["loc"])))
        grouped.setdefault(section, []).append(str(error["loc"][-1]))
    lines = []
    for section, keys in grouped.items():
        model = ModelConfig if section == "[ess.model]" else Outcome if section.startswith("[ess.outcomes") \
            else EssConfig
        known = sorted(set(model.model_fields) - {"root"})
        lines.append(f"{section} has unknown key(s) {sorted(keys)}; known keys: {known}")
    return lines


def from_dict(values: dict, root: str = ".") -> EssConfig:
    """Validate an [ess] table (and the file's `root`); every problem is one line of a single ConfigError."""
    if not isinstance(values, dict):
        raise ConfigError(f"[ess] must be a table of key = value lines, not {toml_text(values)}")
    if "root" in values:
        raise ConfigError("[ess] has unknown key(s) ['root']; `root` is set at the top of the file, above [ess]")
    if not values.get("outcomes"):
        raise ConfigError("[ess] needs at least one [[ess.outcomes]] table, e.g. name = \"vote\", column = \"vote\", "
                          "type = \"discrete\", llm_column = \"llm_vote\"")
    try:
        return EssConfig.model_validate({**values, "root": str(root)})
    except ValidationError as err:
        errors = err.errors(include_url=False)
        lines = _unknown([e for e in errors if e["type"] == "extra_forbidden"], values)
        grouped: dict[tuple, list[dict]] = {}
        for error in errors:
            grouped.setdefault(_place(values, tuple(error["loc"])), []).append(error)
        for place, group in grouped.items():
            if group[0]["type"] == "extra_forbidden" or any(
                    other[:len(place)] == place and other != place for other in grouped):
                continue                            # a table whose own entry failed: that entry's line says why
            lines.append(_explain(_union(group), values))
        raise ConfigError("\n".join(lines)) from None


def _union(group: list[dict]) -> dict:
    """The errors of one place: a value that fits no member of a union gets one error naming every member."""
    kinds = [e["type"] for e in group]
    if len(group) == 1 or not all(k in MEMBER_WORDS for k in kinds):
        return group[0]
    words = list(dict.fromkeys(MEMBER_WORDS[k] for k in kinds if not (k == "int_type" and "float_type" in kinds)))
    return {**group[0], "type": "union", "msg": "it must be " + ", ".join(words[:-1]) + " or " + words[-1]}


def load(path: str | Path) -> EssConfig:
    """Read `root` and `[ess]` from a TOML file; other sections are left to their own loaders."""
    path = Path(path)
    values = read_toml(path)
    if "ess" not in values:
        raise ConfigError(f"config file {path} has no [ess] section; see data/demo/ess.toml for an example")
    root = values.get("root", ".")
    if not isinstance(root, str) or not root:
        raise ConfigError(f"root = {toml_text(root)}; it must be the project folder in quotes, e.g. root = \".\"")
    return from_dict(values["ess"], root)


def snapshot(config: EssConfig) -> dict:
    return plain(config)
