"""The calibration experiment around the ordinary pipeline: plant (assign arms, build the corpus, fine-tune,
write one run configuration per model) and measure (read each model's ordinary stage outputs, tabulate by arm).

The per-model runs between the two are the unchanged stages (validate ... report) on generated configurations
that differ only in `[model] model_id` and `root`; no stage knows it is part of a calibration.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import tomli_w

from .. import config as config_module
from ..config import RunConfig
from ..data.validate import validate_file
from ..errors import ConfirmationDeclined, EstimationError
from ..io import Layout, atomic_write, read_parquet, write_csv, write_text
from ..llm.cache import canonical_json
from ..signals.measures import REGISTRY, configured
from ..signals.recall import recall_pairs
from . import corpus
from .settings import CalibrateSettings

MODELS = ("base", "planted")
SHUFFLED = "planted_shuffled"
"""The third run of control = "shuffled": the planted model with its recall answers permuted."""
MEASURES = (*((m.column, m.calibration_prefix) for m in REGISTRY.values()), ("p_memorized", "p_memorized"))
"""Panel column -> column prefix in lap_by_arm.csv: every LAP measure (signals/measures), and p_memorized."""
LAP_PREFIX = {m.name: m.calibration_prefix for m in REGISTRY.values()}
"""[estimate] lap_measure -> the prefix of its columns in lap_by_arm.csv."""
PAIR_LEVEL = {*(m.column for m in REGISTRY.values() if m.task == "recall"), "p_memorized", "ud"}
"""Answers of the recall query, asked once per (entity_id, target_date): one observation per pair however many
headline rows the pair has (Min-K% scores each row's prompt, the forecast each row: per row)."""
PAIR = ["entity_id", "target_date"]
PROBABILITIES = {*(m.column for m in REGISTRY.values() if m.probability), "p_memorized"}
"""Measures that are probabilities (Min-K% prob is a geometric mean of token probabilities): their intervals are
cut to [0, 1]."""
UNIT, UNBOUNDED = (0.0, 1.0), (-math.inf, math.inf)
LOG_SCALE = {m.column for m in REGISTRY.values() if m.log_scale}
"""Measures whose gap from arm 0 is taken on the log scale (each measure's `log_scale`: Min-K% prob and the loss, both
probabilities): Min-K% prob spans orders of magnitude (about 1e-4 for an unread text, 0.1 for a memorized one), so
on its own scale the SD of the exposed arm alone sets the gap. The others stay as they are: the recall LAP (a
probability of a few labels, between 0 and 1 without spanning magnitudes) and the log-probability scores."""


LAP_CONFIGURATIONS = {
    "recall": {"estimate": {"lap_measure": "recall"}},
    "minkprob_prompt": {"estimate": {"lap_measure": "minkprob"}, "minkprob": {"scored_text": "prompt"}},
    "minkprob_text": {"estimate": {"lap_measure": "minkprob"}, "minkprob": {"scored_text": "text"}},
}
"""Every LAP configuration a user can choose ([estimate] lap_measure, and for Min-K% [minkprob] scored_text; named
in settings.LAP_CONFIGURATION_KEYS, [calibrate] lap_configurations): the
protocol's recall LAP P(up) + P(down) (Step 2), Min-K% prob (paper eq. 1) of the filled forecast prompt, and of the
text alone. The calibration reads base and planted model under each, from the same answers (`lap_configuration`)."""


def lap_configuration(config: RunConfig) -> str:
    """The key of LAP_CONFIGURATIONS that `config` runs: "recall" whatever Min-K% scores (it does not enter the
    regressions then), else "<measure>_<scored_text>" for a measure of the Min-K% pass ("minkprob_prompt")."""
    measure = configured(config)
    return measure.name if measure.task != "minkprob" else f"{measure.name}_{config.minkprob.scored_text}"


def alternative_config(config: RunConfig, key: str) -> RunConfig:
    """`config` under LAP configuration `key`, with its own root `<root>/lap-<key>/` beside the model's run: the
    same model, prompts and panel, only the LAP the regressions read (and what Min-K% scores) changed."""
    return config.replace(**LAP_CONFIGURATIONS[key], root=str(Path(config.root) / f"lap-{key}"))


def seed_answers(source: RunConfig, target: RunConfig) -> list[Path]:
    """The model's cached answers (data/raw/*.jsonl of its run) added under `target`'s root, so that the
    alternative configuration's stages answer every query they share from the cache (forecast, recall; Min-K% of
    the same text) and ask the model only what is new (Min-K% of the other text). Lines whose key the target's
    cache already holds are not repeated, and nothing the target holds is removed (a rerun keeps what it paid for)."""
    source_raw, target_layout = Layout(Path(source.root)).raw, Layout(Path(target.root))
    target_layout.make_dirs()
    written = []
    for path in sorted(source_raw.glob("*.jsonl")):
        target = target_layout.raw / path.name
        held = target.read_text(encoding="utf-8") if target.exists() else ""
        keys = {json.loads(line).get("key") for line in held.splitlines() if line.strip()}
        new = [line for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip() and json.loads(line).get("key") not in keys]
        if new:
            text = held + ("" if not held or held.endswith("\n") else "\n") + "\n".join(new) + "\n"
            written.append(write_text(target, text))
    return written


@dataclass
class Plan:
    arms: pd.DataFrame
    configs: dict[str, RunConfig] = field(default_factory=dict)
    """The configured run of each model (base, planted; the shuffled answers under control = "shuffled")."""
    lap_configs: dict[tuple[str, str], RunConfig] = field(default_factory=dict)
    """(model, LAP configuration) -> the run of base and planted under every other LAP_CONFIGURATIONS entry."""
    config_files: dict[str, Path] = field(default_factory=dict)
    training: dict = field(default_factory=dict)
    model_dir: Path | None = None
    decoys: pd.DataFrame | None = None
    """The decoy pairs trained with the answer "unknown" (corpus.decoy_pairs), in the order the corpus took them
    (the corpus itself is shuffled)."""


class EncodedRows(Sequence):
    """`encode(row)` of each row of `frame`, computed when first indexed: the demo has ~7,500 decoy pairs and its
    corpus takes a few hundred (encoding all of them costs about a minute)."""

    def __init__(self, frame: pd.DataFrame, encode):
        self.frame, self.encode, self.done = frame, encode, {}

    def __len__(self) -> int:
        return len(self.frame)

    def __getitem__(self, k: int) -> list[int]:
        if k not in self.done:
            self.done[k] = self.encode(self.frame.iloc[k])
        return self.done[k]


def pairs_with_outcomes(run: RunConfig) -> pd.DataFrame:
    """Unique (entity_id, target_date) pairs of the validated panel with their realized direction and their news
    (`news`: the texts of the pair's rows, in panel order, which its articles cycle through)."""
    frame = validate_file(run.data.path, run).frame
    pairs = recall_pairs(frame)
    grouped = frame.groupby(["entity_id", "target_date"], sort=False)
    pairs = pairs.join(grouped["outcome"].first(), on=["entity_id", "target_date"])
    news = grouped["text"].agg(tuple)
    pairs = pairs.join(news.rename("news"), on=["entity_id", "target_date"])
    pairs["direction"] = pairs["outcome"].map(corpus.direction)
    return pairs


def model_config(run: RunConfig, settings: CalibrateSettings, name: str, model_id: str) -> RunConfig:
    """The run configuration of one model: the calibration's own, with model_id and root replaced."""
    root = Path(run.root) / settings.work_dir / name
    return run.replace(model={"model_id": model_id}, root=str(root))


def write_config(config: RunConfig, path: Path) -> Path:
    """A TOML any `lapbias` command reads (e.g. `lapbias run <path> --yes`)."""
    return write_text(path, f"# generated by `lapbias calibrate`: the {Path(path).stem} model's run\n"
                            + tomli_w.dumps(config_module.snapshot(config)))


def plant(run: RunConfig, settings: CalibrateSettings, confirm, log, progress: bool = True) -> Plan:
    """Assign pairs to arms, build the corpus, fine-tune (or reuse the planted model of the same fingerprint), and
    write the per-model configurations under the work directory. `confirm(message)` must agree before training.
    Nothing is written under results/ here (pipeline.run stages the tables at the end)."""
    from . import train as training

    pairs = pairs_with_outcomes(run)
    cutoff = pd.Timestamp(run.study.cutoff_date)
    arms = corpus.assign_arms(pairs, cutoff, settings.exposures, settings.pairs_per_arm, settings.assignment_seed,
                              post_cutoff=settings.control == "post_cutoff")
    plan = Plan(arms)
    fingerprint = settings.fingerprint(run)
    work = Path(run.root) / settings.work_dir
    model_dir = work / f"planted-{fingerprint}"
    record = model_dir / "calibration.json"
    if record.exists() and (model_dir / "model.safetensors").exists():
        plan.training = json.loads(record.read_text(encoding="utf-8"))
        log(f"calibrate: planted model {model_dir} exists for these settings (fingerprint {fingerprint}); reused")
    else:
        tokenizer, model = training.load_base(run.model.model_id, run.model.device)
        training.check_target_modules(model, settings.target_modules)  # before the corpus and the confirmation
        documents, accounting, plan.decoys = corpus_documents(run, settings, arms, pairs, tokenizer)
        n_tokens = sum(len(doc.ids) for doc in documents)
        steps = settings.epochs * -(-len(documents) // settings.batch_size)
        if not confirm(f"calibrate: LoRA fine-tuning of the last {settings.top_layers or 'all'} blocks of "
                       f"{run.model.model_id} on {len(documents)} documents ({n_tokens} tokens) x {settings.epochs} "
                       f"epoch(s) = {steps} steps of {settings.batch_size} documents"):
            raise ConfirmationDeclined("calibrate: fine-tuning not confirmed; nothing was trained")
        with training.torch_threads(settings.threads):
            result = training.train(documents, settings, model_dir, tokenizer, model, run.model.device, progress)
        write_csv(result.loss, model_dir / "training_loss.csv")
        write_csv(accounting, model_dir / "corpus.csv")
        if plan.decoys is not None:
            write_csv(plan.decoys.assign(target_date=plan.decoys["target_date"].dt.strftime("%Y-%m-%d")),
                      model_dir / "decoys.csv")
        plan.training = training_record(run, settings, fingerprint, model_dir, result)
        write_text(record, json.dumps(plan.training, indent=2) + "\n")
        log(f"calibrate: trained {len(result.loss)} steps in {result.seconds:.0f} s ({result.cpu_seconds:.0f} CPU s, "
            f"{plan.training['tokens_per_second']:.0f} tokens/s, {plan.training['matmul_share']:.0%} of this "
            f"machine's matmul throughput), loss {plan.training['loss_first']:.3f} -> "
            f"{plan.training['loss_last']:.3f}; adapter sha256 {result.adapter_sha256[:12]}; merged model -> "
            f"{model_dir}")
    plan.model_dir = model_dir
    models = {"base": run.model.model_id, "planted": str(model_dir)}
    if settings.control == "shuffled":
        models[SHUFFLED] = str(model_dir)
    for name, model_id in models.items():
        plan.configs[name] = model_config(run, settings, name, model_id)
        plan.config_files[name] = write_config(plan.configs[name], work / f"{name}.toml")
    configured = lap_configuration(run)
    for name in MODELS:
        for key in (k for k in settings.lap_configurations if k != configured):
            plan.lap_configs[(name, key)] = alternative_config(plan.configs[name], key)
    return plan


def corpus_documents(run: RunConfig, settings: CalibrateSettings, arms: pd.DataFrame, pairs: pd.DataFrame,
                     tokenizer) -> tuple[list, pd.DataFrame, pd.DataFrame | None]:
    """The training documents (corpus.build, with the model's tokenizer and chat template), their accounting and
    the pairs outside the panel whose recall query was answered "unknown" (None without abstentions)."""
    from ..llm.local_tokens import LocalTokens
    from . import train as training

    tokens = LocalTokens(tokenizer)
    unknown = run.recall.labels[2]
    end = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    answers = {0: tokens.label_ids(unknown) + end}
    encode_query = training.query_encoder(tokenizer, run)
    queries: dict[tuple, list[int]] = {}

    def query(pair: pd.Series) -> list[int]:
        key = (pair["entity_name"], pair["ticker"], pair["target_date"])
        if key not in queries:
            queries[key] = encode_query(pair)
        return queries[key]

    decoys = corpus.decoy_pairs(pairs, pd.Timestamp(run.study.cutoff_date), settings.assignment_seed)
    decoy_docs = EncodedRows(decoys, lambda pair: corpus.query_document(query(pair), answers[0], "decoy", -1))
    documents, accounting = corpus.build(
        arms, lambda pair, k, planted: corpus.article_document(tokenizer, pair, k, planted, int(pair["exposure"])),
        decoy_docs, {e: e for e in settings.exposures}, settings.abstentions_per_article, settings.control)
    n_decoys = sum(doc.kind == "decoy" for doc in documents)
    return documents, accounting, decoys.head(n_decoys) if n_decoys else None


def training_record(run: RunConfig, settings: CalibrateSettings, fingerprint: str, model_dir: Path, result) -> dict:
    """training.json: what was trained, how long it took (wall and CPU seconds, tokens/s, FLOP/s against the
    machine's matmul throughput measured just before) and on what (torch version, threads, CPU instruction set)."""
    import torch

    return {"fingerprint": fingerprint, "base_model": run.model.model_id, "model_dir": str(model_dir),
            "adapter_sha256": result.adapter_sha256, "training_seconds": round(result.seconds, 1),
            "training_cpu_seconds": round(result.cpu_seconds, 1), "cache_seconds": round(result.cache_seconds, 1),
            "torch_threads": result.threads, "torch": torch.__version__,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "tokens_trained": result.tokens, "distinct_tokens_cached": result.distinct_tokens,
            "tokens_per_second": round(result.tokens / max(result.seconds, 1e-9), 1),
            "training_flops": result.flops, "flops_per_second": round(result.flops / max(result.seconds, 1e-9)),
            "matmul_flops_per_second": round(result.matmul_flops_per_second),
            "matmul_share": round(result.flops / max(result.seconds, 1e-9) / result.matmul_flops_per_second, 3),
            "steps": len(result.loss), "loss_first": float(result.loss["loss"].iloc[0]),
            "loss_last": float(result.loss["loss"].iloc[-1]), "settings": settings.model_dump(mode="json")}


SHUFFLE_STREAM = 1
"""The "shuffled" control's permutation is drawn from its own stream, `default_rng([seed, SHUFFLE_STREAM])`: the
assignment deals the pairs with `default_rng(seed)`, and the same generator repeated the assignment's shuffle, so
that the pairs receiving an exposed pair's answers were those dealt first, the panel's first months (MEASURED on
the 6-epoch run's shuffled control: 40, 40, 31, 9, 1, 0 of 40 pairs in Nov 2023 - Apr 2024) rather than a random
37.5% of every month."""


def shuffle_order(n: int, seed: int) -> np.ndarray:
    """The permutation pi of the "shuffled" control over `n` pre-cutoff pairs: pair i carries the answers of pair
    pi(i) (`SHUFFLE_STREAM`: independent of the assignment's draw with the same seed)."""
    return np.random.default_rng([seed, SHUFFLE_STREAM]).permutation(n)


def shuffled_answers(planted: RunConfig, shuffled: RunConfig, arms: pd.DataFrame, seed: int) -> list[Path]:
    """control = "shuffled": the planted model's cached answers copied to the shuffled run's root with the answers
    that give LAP -- the recall answers (LAP and U - D) and the Min-K% scores -- permuted (seeded) over the
    pre-cutoff pairs: pair i carries the recall answer of pair pi(i) and each of its rows the Min-K% score of
    pair pi(i)'s first row, the two measures moved together, so that the exposure assignment is shuffled after
    training and LAP is no longer aligned with what was planted. With [minkprob] reference_model the reference
    model's pass moves with the model's (each model's answers permuted alike: the log-ratio compares one text's
    two passes). Every measure of the Min-K% pass is derived from the moved pass, so the rows of a pair carry
    copies; the zlib ratio divides the moved pass's log-likelihood by the zlib bytes of the row's own text (the
    text is not cached with the answer), a hybrid that is as unaligned with the planting as the rest. Forecasts
    stay with their rows; the stages then derive everything from this cache as from any other (no model is
    loaded). Returns the shuffled caches."""
    from ..signals import minkprob, recall

    source, target = Layout(Path(planted.root)), Layout(Path(shuffled.root))
    target.make_dirs()
    permuted = (recall.TASK, minkprob.TASK)
    for path in source.raw.iterdir():
        if path.is_file() and not path.name.startswith(tuple(f"{task}.jsonl" for task in permuted)):
            atomic_write(target.raw / path.name, lambda tmp, data=path.read_bytes(): tmp.write_bytes(data))
    pre = arms[arms["post"] == 0]
    pairs = list(zip(pre["entity_id"], pre["target_date"]))
    order = shuffle_order(len(pairs), seed)
    source_of = {pair: pairs[j] for pair, j in zip(pairs, order)}
    rows = validate_file(planted.data.path, planted).frame
    row_pair = {str(r): (e, d) for r, e, d in zip(rows["row_id"], rows["entity_id"], rows["target_date"])}
    recalled = recall_pairs(rows)
    query_pair = {recall.query_id(e, d): (e, d) for e, d in zip(recalled["entity_id"], recalled["target_date"])}
    scored = minkprob.queries(rows, planted)
    if planted.minkprob.reference_model:
        scored += minkprob.queries(rows, planted, planted.minkprob.reference_model)
    # key -> (model, pair): each model's answers are permuted among its own
    current = {recall.TASK: {q.key: (q.model_id, query_pair[q.query_id]) for q in recall.queries(recalled, planted)},
               minkprob.TASK: {q.key: (q.model_id, row_pair[q.query_id]) for q in scored}}
    # the pair's answer is its first row's in the data's order (the same row for every model, whatever order the
    # cache holds the lines in): (model, pair) -> that row's key
    first_key: dict[str, dict[tuple, str]] = {task: {} for task in permuted}
    for task in permuted:
        for key, model_pair in current[task].items():  # queries are built in the data's row order
            first_key[task].setdefault(model_pair, key)
    written = []
    for task in permuted:
        cache = source.raw_file(task)
        if not cache.exists():
            continue
        lines = [json.loads(line) for line in cache.read_text(encoding="utf-8").splitlines()]
        # only this planted model's answers to this configuration's queries (a cache can hold earlier models' and
        # earlier prompts' answers): the first row of each pair gives the pair's answer
        pair_of = {line["key"]: current[task][line["key"]] for line in lines if line.get("key") in current[task]}
        first = {pair_of[line["key"]]: line["response"] for line in lines
                 if line.get("key") in pair_of and first_key[task][pair_of[line["key"]]] == line["key"]}
        for line in lines:
            model, pair = pair_of.get(line.get("key"), ("", None))
            if pair in source_of and (model, source_of[pair]) in first:
                line["response"] = first[(model, source_of[pair])]
        written.append(write_text(target.raw_file(task), "".join(canonical_json(line) + "\n" for line in lines)))
    return written


# ---- measurement --------------------------------------------------------------------------------------------
def arm_label(frame: pd.DataFrame) -> pd.Series:
    """The arm of each row: its exposure ("0", "16", ...) before the cutoff; "post" for a never-exposed
    post-cutoff pair (the placebo), "post 16" for one planted under control = "post_cutoff"."""
    exposure = frame["exposure"].astype(int).astype(str)
    return exposure.where(frame["post"] == 0, ("post " + exposure).where(frame["exposure"] > 0, "post"))


def _mean_ci(values: pd.Series, bounds: tuple[float, float] = UNBOUNDED) -> tuple[float, ...]:
    """(mean, SE, 95% interval) of an arm's mean: mean ± t_{n-1, 0.975} SE, SE = SD / sqrt(n) (Student t, not the
    normal 1.96: an arm may hold few pairs), intersected with `bounds`, the range the mean cannot leave
    (probabilities: [0, 1]; coverage is unchanged)."""
    from scipy import stats

    values = values.dropna()
    mean = float(values.mean()) if len(values) else math.nan
    if len(values) < 2:
        return mean, math.nan, math.nan, math.nan
    se = float(values.std(ddof=1) / math.sqrt(len(values)))
    half = float(stats.t.ppf(0.975, len(values) - 1)) * se
    return mean, se, max(mean - half, bounds[0]), min(mean + half, bounds[1])


def _auc(frame: pd.DataFrame, column: str) -> float:
    """ROC AUC of `column` separating exposed (exposure > 0) from unexposed pre-cutoff rows (scikit-learn)."""
    from sklearn.metrics import roc_auc_score

    part = frame[[column, "exposure"]].dropna()
    exposed = part["exposure"] > 0
    if exposed.all() or not exposed.any():
        return math.nan
    return float(roc_auc_score(exposed, part[column]))


def _gap_sd(arm: pd.Series, control: pd.Series, column: str) -> float:
    """(mean of the arm - mean of arm 0) / sqrt((var_arm + var_0) / 2), the two arms' variances weighted equally
    whatever their sizes, on the log scale for a LOG_SCALE column: how many SDs a measure moves an arm away from the
    never-exposed pairs (the separation the calibration's LAP must show)."""
    arm, control = arm.dropna(), control.dropna()
    if column in LOG_SCALE:
        arm, control = np.log(arm), np.log(control)
    if len(arm) < 2 or len(control) < 2:
        return math.nan
    pooled = math.sqrt((arm.var(ddof=1) + control.var(ddof=1)) / 2)
    return float((arm.mean() - control.mean()) / pooled) if pooled > 0 else math.nan


def model_panel(config: RunConfig, arms: pd.DataFrame) -> pd.DataFrame:
    """The model's ordinary panel (data/derived/panel.parquet of its root) with each row's arm, realized
    direction and P(memorized label) (the recall query's exact probability of the label of the realized
    direction: p_up if it went up, else p_down)."""
    panel = read_parquet(Layout(Path(config.root)).derived_file("panel.parquet"))
    keys = arms[["entity_id", "target_date", "exposure", "direction"]]
    panel = panel.merge(keys, on=["entity_id", "target_date"], how="left", validate="many_to_one")
    return panel.assign(p_memorized=panel["p_up"].where(panel["direction"] > 0, panel["p_down"]))


def lap_by_arm(panel: pd.DataFrame, model: str) -> pd.DataFrame:
    """Per arm (arm_label): mean recall LAP, Min-K% prob and P(memorized label) with 95% intervals, AUC of each
    against arm 0 and its gap from arm 0 in pooled SDs (`_gap_sd`), the share of recall answers "unknown" (mean
    p_unknown), the recalled direction's agreement
    with the truth (mean ud x direction), the forecast parse rate and the forecast's hit rate (sign of mu_hat =
    realized direction, among parsed forecasts). Recall measures are taken once per pair (PAIR_LEVEL), the
    others per row; rows in the release-date gap (post missing) are left out, as the protocol's regressions
    leave them out. A last row `exposed_vs_unexposed` holds the AUCs of every exposed pre-cutoff pair against
    arm 0."""
    rows = []
    panel = panel[panel["post"].notna()]  # release-date gap rows: in neither sample (panel.split)
    pre = panel[panel["post"] == 0]
    control = pre[pre["exposure"] == 0]

    def unit(frame: pd.DataFrame, column: str) -> pd.DataFrame:
        return frame.drop_duplicates(PAIR) if column in PAIR_LEVEL else frame

    for arm, part in panel.groupby(arm_label(panel), sort=False):
        row = {"model": model, "arm": arm, "exposure": int(part["exposure"].iloc[0]), "post": int(part["post"].iloc[0]),
               "N": len(part), "N_pairs": len(part.drop_duplicates(PAIR))}
        for column, name in MEASURES:
            if column in part:
                row[f"{name}_mean"], row[f"{name}_se"], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = \
                    _mean_ci(unit(part, column)[column], UNIT if column in PROBABILITIES else UNBOUNDED)
                row[f"{name}_auc_vs_arm0"] = _auc(pd.concat([unit(control, column), unit(part, column)]), column) \
                    if arm != "0" else math.nan
                row[f"{name}_gap_sd_vs_arm0"] = _gap_sd(unit(part, column)[column], unit(control, column)[column],
                                                        column) if arm != "0" else math.nan
        pairs = unit(part, "ud")
        row["p_unknown_mean"] = float(pairs["p_unknown"].mean())
        row["ud_agreement"] = float((pairs["ud"] * pairs["direction"]).mean())
        parsed = part[part["mu_hat"].notna()]
        row["forecast_parse_rate"] = len(parsed) / len(part)
        row["forecast_hit_rate"] = float((np.sign(parsed["mu_hat"]) == parsed["direction"]).mean())
        rows.append(row)
    exposed = {"model": model, "arm": "exposed_vs_unexposed", "exposure": -1, "post": 0, "N": len(pre),
               "N_pairs": len(pre.drop_duplicates(PAIR))}
    for column, name in MEASURES:
        if column in pre:
            exposed[f"{name}_auc_vs_arm0"] = _auc(unit(pre, column), column)
            exposed[f"{name}_gap_sd_vs_arm0"] = _gap_sd(unit(pre[pre["exposure"] > 0], column)[column],
                                                        unit(control, column)[column], column)
    rows.append(exposed)
    frame = pd.DataFrame(rows)
    rank = frame["post"] * 1000 + frame["exposure"].clip(lower=0) + (frame["arm"] == "exposed_vs_unexposed") * 10 ** 6
    return frame.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)


def beta3_by_arm(panel: pd.DataFrame, config: RunConfig, model: str) -> pd.DataFrame:
    """beta_3 (c.mu_hat#c.lap, one-sided p for > 0) of the ordinary detection regression: on the whole pre-cutoff
    panel (results/detection.csv of the model's run), on arm k plus the control arm 0 for each exposed arm
    (estimate.protocol.estimate_panel on that subsample: the dose-response), and the post-cutoff placebo
    (results/placebo.csv)."""
    from ..estimate.protocol import BETA3, estimate_panel

    results = Layout(Path(config.root)).results
    rows = []

    def add(sample: str, table: pd.DataFrame | None, exposure: int) -> None:
        hit = None if table is None else table[table["term"] == BETA3]
        if hit is None or hit.empty:
            rows.append({"model": model, "sample": sample, "exposure": exposure})
        else:
            rows.append({"model": model, "sample": sample, "exposure": exposure,
                         **hit.iloc[0][["coef", "se", "t", "p_one_sided", "ci_low", "ci_high", "N"]].to_dict()})

    add("pre_all", pd.read_csv(results / "detection.csv"), -1)
    pre = panel[panel["post"] == 0]
    exposures = sorted(e for e in pre["exposure"].unique() if e > 0)
    for exposure in exposures if len(exposures) > 1 else []:  # one exposed arm: that is pre_all
        sample = pre[pre["exposure"].isin([0, exposure])]
        try:
            table = estimate_panel(sample, None, newey_lag=config.estimate.newey_lag).tables["detection"]
        except EstimationError:
            table = None
        add(f"arm0+arm{exposure}", table, int(exposure))
    placebo = results / "placebo.csv"
    add("post_placebo", pd.read_csv(placebo) if placebo.exists() else None, 0)
    return pd.DataFrame(rows)


def read_p(table: pd.DataFrame | None, sample: str, config: RunConfig) -> float:
    """The one-sided p-value of beta_3 > 0 that the verdict reads (report.verdict.inference): the CRV1 t test's, or
    with fewer entity clusters than wild_below_clusters the wild cluster bootstrap's; NaN without beta_3."""
    from ..report.verdict import BETA3, inference, term_row

    row = term_row(table, sample, BETA3)
    if row is None or pd.isna(row["coef"]):
        return math.nan
    return inference(row, config.estimate.wild_below_clusters, config.estimate.wild_bootstrap_reps).p_one_sided


def verdict_row(config: RunConfig, model: str) -> dict:
    """The protocol's verdict of the model's ordinary run: report.verdict.decide on its results/*.csv, as
    `lapbias report` decides it (detection, validation, placebo, power, estimation notes); `placebo_passes` is
    the verdict's own placebo judgement (report.verdict.placebo_check), None where the placebo is infeasible."""
    from ..report.verdict import BETA3, DIFFERENCE, DIFFERENCE_MODEL, decide, placebo_judgement, term_row

    results = Layout(Path(config.root)).results
    tables = {name: pd.read_csv(results / f"{name}.csv") if (results / f"{name}.csv").exists() else None
              for name in ("detection", "validation", "placebo", "power", "estimation_notes", "placebo_validation")}
    verdict = decide(tables["detection"], tables["validation"], tables["placebo"], tables["power"],
                     config.estimate, tables["estimation_notes"])

    def get(table: pd.DataFrame | None, sample: str, term: str, column: str) -> float:
        row = term_row(table, sample, term)
        return math.nan if row is None or column not in row else float(row[column])

    placebo_feasible, placebo_passes, _ = placebo_judgement(tables["placebo"], tables["estimation_notes"],
                                                            tables["power"], config.estimate)
    return {"model": model, "model_id": config.model.model_id, "verdict": verdict.label,
            "failed": "; ".join(verdict.failed),
            "beta3": get(tables["detection"], "pre", BETA3, "coef"),
            "beta3_t": get(tables["detection"], "pre", BETA3, "t"),
            "beta3_p_one_sided": get(tables["detection"], "pre", BETA3, "p_one_sided"),
            "beta3_p_verdict": read_p(tables["detection"], "pre", config),
            "placebo_beta3": get(tables["placebo"], "post", BETA3, "coef"),
            "placebo_p_one_sided": get(tables["placebo"], "post", BETA3, "p_one_sided"),
            "placebo_p_verdict": read_p(tables["placebo"], "post", config),
            "placebo_passes": bool(placebo_passes) if placebo_feasible else None,
            "validation_high_theta": get(tables["validation"], "high_lap", "ud", "coef"),
            "validation_high_p": get(tables["validation"], "high_lap", "ud", "p"),
            "validation_low_theta": get(tables["validation"], "low_lap", "ud", "coef"),
            "validation_low_p": get(tables["validation"], "low_lap", "ud", "p"),
            # protocol Step 5 re-estimates Step 3 after the cutoff: a diagnostic, outside the verdict
            "post_validation_high_theta": get(tables["placebo_validation"], "high_lap", "ud", "coef"),
            "post_validation_high_p": get(tables["placebo_validation"], "high_lap", "ud", "p"),
            "post_validation_diff_p": get(tables["placebo_validation"], DIFFERENCE_MODEL, DIFFERENCE, "p_one_sided")}


PAIR_COLUMNS = ["model", "row_id", "entity_id", "target_date", "arm", "exposure", "post", "direction", "outcome",
                "lap_mink", "lap_recall", "p_up", "p_down", "p_unknown", "ud", "mu_hat"]
"""pairs.csv: one row per model and panel row, what the power calculation (calibrate/power.py) draws from;
`lap_mink` is the configured Min-K% (measure adds lap_mink_prompt and lap_mink_text)."""


def pair_records(panel: pd.DataFrame, model: str) -> pd.DataFrame:
    """The model's answers row by row (PAIR_COLUMNS), `arm` as calibrate/power.py names the arms: "exposed"
    (a pre-cutoff pair planted at any exposure), "never" (a pre-cutoff pair never mentioned), "post" (a post-cutoff
    pair; "post exposed" under control = "post_cutoff"); rows in the release-date gap are left out."""
    frame = panel[panel["post"].notna()].copy()
    exposed, post = frame["exposure"] > 0, frame["post"] == 1
    frame["arm"] = np.where(post, np.where(exposed, "post exposed", "post"), np.where(exposed, "exposed", "never"))
    frame["model"] = model
    frame["target_date"] = pd.to_datetime(frame["target_date"]).dt.strftime("%Y-%m-%d")
    return frame.reindex(columns=PAIR_COLUMNS)


def measure(plan: Plan, seconds: dict[str, float]) -> dict[str, pd.DataFrame]:
    """Tabulate every model's ordinary outputs: lap_by_arm, beta3_by_arm, verdicts, pairs and timing (no file
    written). `verdicts` holds one row per model run and LAP configuration (`lap_configuration`; `configured` marks
    the calibration's own, which lap_by_arm, beta3_by_arm and the expectations read: `configured_verdicts`); pairs
    carries Min-K% of the prompt and of the text (`lap_mink_prompt`, `lap_mink_text`) from whichever run scored
    each."""
    laps, betas, verdicts, pairs = [], [], [], []
    for name, config in plan.configs.items():
        panel = model_panel(config, plan.arms)
        laps.append(lap_by_arm(panel, name))
        betas.append(beta3_by_arm(panel, config, name))
        verdicts.append({**verdict_row(config, name), "lap_configuration": lap_configuration(config),
                         "configured": True})
        records = pair_records(panel, name)
        scored = {config.minkprob.scored_text: panel}
        for (model, key), alternative in plan.lap_configs.items():
            if model != name:
                continue
            verdicts.append({**verdict_row(alternative, name), "lap_configuration": key, "configured": False})
            if alternative.minkprob.scored_text not in scored:
                scored[alternative.minkprob.scored_text] = model_panel(alternative, plan.arms)
        for text in ("prompt", "text"):
            records[f"lap_mink_{text}"] = (records["row_id"].map(scored[text].set_index("row_id")["lap_mink"])
                                           if text in scored else math.nan)
        pairs.append(records)
    lap = pd.concat(laps, ignore_index=True)
    return {"lap_by_arm": lap, "beta3_by_arm": pd.concat(betas, ignore_index=True),
            "measures": measure_table(lap, plan),
            "verdicts": pd.DataFrame(verdicts), "pairs": pd.concat(pairs, ignore_index=True),
            "timing": pd.DataFrame([{"phase": k, "seconds": round(v, 1)} for k, v in seconds.items()])}


def measure_table(lap: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """results/calibration/measures.csv, the table of which detector finds the memorization known to be there: per LAP
    measure (signals/measures), per model, the AUC and the gap in SDs (`_gap_sd`, on the log scale for LOG_SCALE) of
    every exposed pre-cutoff pair against the never-exposed ones (lap_by_arm's exposed_vs_unexposed row), and the
    beta_3, the p the verdict reads and the verdict of the model's own run under that measure (its
    results/lap_measures.csv: Steps 3-5 again with LAP = the measure, report/measures.py)."""
    columns = ["measure", "title"] + [f"{model}_{what}" for model in plan.configs
                                      for what in ("auc", "gap_sd", "beta3", "p_one_sided", "verdict", "failed")]
    rows = []
    for name, measure in REGISTRY.items():
        row = {"measure": name, "title": measure.title}
        for model, config in plan.configs.items():
            exposed = lap[(lap["model"] == model) & (lap["arm"] == "exposed_vs_unexposed")]
            prefix = measure.calibration_prefix
            for what in ("auc", "gap_sd"):
                column = f"{prefix}_{what}_vs_arm0"
                row[f"{model}_{what}"] = float(exposed[column].iloc[0]) if column in exposed and len(exposed) \
                    else math.nan
            path = Layout(Path(config.root)).results / "lap_measures.csv"
            found = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["measure"])
            mine = found[found["measure"] == name]
            for column in ("beta3", "p_one_sided", "verdict", "failed"):
                row[f"{model}_{column}"] = mine[column].iloc[0] if len(mine) and column in mine else math.nan
        if any(isinstance(row.get(f"{model}_verdict"), str) for model in plan.configs):  # a measure no run computed
            rows.append(row)                                                                # (ref without a reference)
    return pd.DataFrame(rows, columns=columns)  # the header even when no run wrote lap_measures.csv


def configured_verdicts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The rows of verdicts.csv under the calibration's own LAP configuration, indexed by model (a verdicts.csv
    written before `configured` existed holds those rows only)."""
    rows = verdicts[verdicts["configured"].astype(bool)] if "configured" in verdicts else verdicts
    return rows.set_index("model")
