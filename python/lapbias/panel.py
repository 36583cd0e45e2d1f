"""Build the estimation panel (protocol Step 3 preprocessing, done in Python, not Stata).

Merge the forecast on row_id and the recall on (entity_id, target_date) — many-to-one — and Min-K% on row_id
onto the validated input; fail if a merge changes the row count. Encode entity and realization period as integer
ids (entity_num, period_num), choose `lap`, compute the recalled direction ud_dir (`recall_direction`), flag
post-cutoff rows (leaving out the release-date gap, `split`), compute high_lap, and export panel.parquet,
panel_pre.dta and panel_post.dta (pyreadstat, labelled variables, Stata dates).

high_lap is computed within each sample (pre against the pre-cutoff median, post against the post-cutoff
median), because the validation regression is a median split of the sample it runs on (Step 3 on pre, Step 5
repeats it on post). "pooled": high_lap = 1{lap > median(lap)}; "entity_mean": high_lap = 1{mean_i(lap) > median
over entities of mean_i(lap)}. Ties at the median go to the low half; rows with a missing lap get a missing
high_lap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyreadstat

from .config import RunConfig
from .data import schema
from .data.cells import is_missing
from .data.derived import read_checked
from .errors import ConfigError, MergeError
from .io import Layout, atomic_write, write_parquet
from .signals import measures, provenance
from .stage import fingerprint, new_run_id, staged_outputs

LABELS = schema.PANEL_LABELS
DTA_EXCLUDED = ("text", "response", "label", "cache_key")
SIGNALS_KEY = "lapbias_signal_settings"
"""panel.parquet's metadata: the settings each signal file was derived under ({task: settings}; compared by
freshness.panel_current)."""
BUILT_FROM_KEY = "lapbias_built_from"
"""panel.parquet's metadata: the sha256 of input.parquet and of each signal file it merged ({file: sha256},
freshness.panel_current)."""
SIGNAL_FILES = ("forecast.parquet", "recall.parquet", "minkprob.parquet")
STATA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")


@dataclass
class PanelResult:
    panel: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        post = self.panel["post"] == 1
        gap = int(self.panel["release_gap"].sum())
        return (f"{len(self.panel)} rows ({int((self.panel['post'] == 0).sum())} pre-cutoff, {int(post.sum())} "
                f"post-cutoff{f', {gap} in the release-date gap (neither sample)' if gap else ''}), "
                f"{self.panel['entity_num'].max()} entities, {self.panel['period_num'].max()} periods")


def merge_checked(left: pd.DataFrame, right: pd.DataFrame, on: list[str], name: str) -> pd.DataFrame:
    """Many-to-one merge that must keep every left row exactly once (protocol Step 3: fail if N changes)."""
    duplicated = right[right.duplicated(on, keep=False)]
    if not duplicated.empty:
        example = duplicated.iloc[0][on].to_dict()
        raise MergeError(f"{name} has {len(duplicated)} rows with a repeated key {on} (example {example}); "
                         f"rerun `lapbias {name}` or `lapbias rebuild`")
    merged = left.merge(right, on=on, how="left", validate="many_to_one", indicator=True)
    unmatched = merged[merged["_merge"] != "both"]
    if not unmatched.empty:
        example = unmatched.iloc[0][on].to_dict()
        raise MergeError(f"{len(unmatched)} input rows have no match in {name} on {on} (example {example}); "
                         f"run `lapbias {name} --yes` for the current input")
    if len(merged) != len(left):
        raise MergeError(f"merging {name} changed the row count from {len(left)} to {len(merged)}")
    return merged.drop(columns="_merge")


def period_labels(dates: pd.Series, frequency: str) -> tuple[pd.Series, pd.Series]:
    """(label, start date) of the realization period of each date: day (the trading day itself), ISO week
    starting Monday, calendar month, calendar quarter or year."""
    if frequency == "day":
        return dates.dt.strftime("%Y-%m-%d"), dates
    if frequency == "week":
        start = dates - pd.to_timedelta(dates.dt.day_of_week, unit="D")
        iso = dates.dt.isocalendar()
        return iso["year"].astype(str) + "-W" + iso["week"].astype(str).str.zfill(2), start
    code = {"month": "M", "quarter": "Q", "year": "Y"}[frequency]
    periods = dates.dt.to_period(code)
    return periods.astype(str), periods.dt.start_time


def integer_ids(values: pd.Series) -> pd.Series:
    """1..K in sorted order of the distinct values (dense ranks)."""
    return values.rank(method="dense").astype("int32")


def recall_direction(ud: pd.Series, lap_recall: pd.Series) -> pd.Series:
    """ud_dir = (P(up) − P(down)) / (P(up) + P(down)) = ud / lap_recall: the direction the recall query gives when
    it answers up or down (protocol Step 2's U − D given the answer is a direction), in [−1, 1]; 0 where P(up) +
    P(down) = 0 (no directional mass), missing where ud is. The recall LAP, whatever `[estimate] lap_measure`
    chooses for `lap` (Min-K% is no probability mass). The high_minus_low validation test compares the halves' predictive
    content of this direction (estimate/protocol.py): |ud| <= LAP makes ud's size grow with LAP even where the
    recall is equally right at every LAP, ud_dir's does not."""
    return (ud / lap_recall).mask((lap_recall == 0) & ud.notna(), 0.0)


def high_lap_flags(sample: pd.DataFrame, rule: str) -> pd.Series:
    """Median split of LAP within one sample; ties go to the low half; missing LAP -> missing flag."""
    lap = sample["lap"]
    if rule == "entity_mean":
        entity_mean = lap.groupby(sample["entity_id"]).transform("mean")
        flag = (entity_mean > entity_mean.groupby(sample["entity_id"]).first().median()).astype("Int8")
        return flag.where(entity_mean.notna())
    return (lap > lap.median()).astype("Int8").where(lap.notna())


def read_signal(config: RunConfig, layout: Layout, task: str) -> pd.DataFrame:
    """data/derived/<task>.parquet, checked against its schema and against what it was derived from (the current
    input.parquet and config: signals/provenance.py)."""
    path = layout.derived_file(f"{task}.parquet")
    frame = read_checked(path)
    provenance.check(frame, config, layout, task, path)
    return frame


def _signals(config: RunConfig, layout: Layout) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, list[str]]:
    notes = []
    forecast = read_signal(config, layout, "forecast")
    recall = read_signal(config, layout, "recall")
    mink_path = layout.derived_file("minkprob.parquet")
    if mink_path.exists():
        minkprob = read_signal(config, layout, "minkprob")
    elif measures.configured(config).task == "minkprob":
        raise ConfigError(f"[estimate] lap_measure = \"{config.estimate.lap_measure}\" but data/derived/minkprob.parquet "
                          "does not exist: run `lapbias minkprob --yes` first")
    else:
        minkprob = None
        notes.append("no minkprob.parquet: lap_mink is missing (the recall LAP is used)")
    return forecast, recall, minkprob, notes


def assemble(config: RunConfig, inputs: pd.DataFrame, forecast: pd.DataFrame, recall: pd.DataFrame,
             minkprob: pd.DataFrame | None) -> pd.DataFrame:
    """The merged panel with ids, lap, post and high_lap (no file written)."""
    if not config.study.cutoff:
        raise ConfigError("[study] cutoff is not set: the training cutoff of the exact model version is needed "
                          "to split pre/post (protocol item 3)")
    panel = merge_checked(inputs, forecast[["row_id", "mu_hat", "label", "parsed", "p_first", "confidence"]],
                          ["row_id"], "forecast")
    recall_columns = ["entity_id", "target_date", "p_up", "p_down", "p_unknown", "ud", "residual_mass", "lap",
                      "censored_up", "censored_down", "censored_unknown", "censoring_bound"]
    # A recall.parquet from before exact label probabilities: top-k sums, censoring bound unknown.
    recall = recall.assign(lap_approximated=recall.get("approximated", False), lap_exact=recall.get("exact", False),
                           censoring_bound=recall.get("censoring_bound", np.nan)
                           ).astype({"lap_approximated": bool, "lap_exact": bool})
    recall_columns += ["lap_approximated", "lap_exact"]
    panel = merge_checked(panel, recall[recall_columns].rename(columns={"lap": "lap_recall"}),
                          ["entity_id", "target_date"], "recall")
    text_columns = [m.column for m in measures.TEXT_MEASURES.values()]
    if minkprob is not None:
        kept = [c for c in (*text_columns, "moments_top_k") if c in minkprob]
        panel = merge_checked(panel, minkprob[["row_id", *kept]], ["row_id"], "minkprob")
    panel = panel.assign(**{column: np.nan for column in text_columns if column not in panel})
    configured = measures.configured(config)
    panel["lap"] = panel[configured.column]
    if configured.name == "ref" and panel["lap"].isna().all():
        raise ConfigError("[estimate] lap_measure = \"ref\" (Min-K% against a reference model) needs [minkprob] "
                          "reference_model, the model to score the same texts with (a local model folder, a hub id "
                          "in the local cache or bundled:SmolLM2-135M-Instruct); set it, then rerun `lapbias "
                          "minkprob --yes` and `lapbias panel`")
    if configured.task == "minkprob" and not configured.needs_moments and panel["lap"].isna().all():
        raise ConfigError(f"[estimate] lap_measure = \"{configured.name}\" ({configured.title}): "
                          f"data/derived/minkprob.parquet has no {configured.column} (written by an earlier lapbias?): "
                          "rerun `lapbias minkprob --yes`, then `lapbias panel`")
    if configured.task == "minkprob" and panel["lap"].isna().all() and panel["lap_mink"].notna().any():
        raise ConfigError(f"[estimate] lap_measure = \"{configured.name}\" ({configured.title}) needs the next-token "
                          "distribution's moments at every scored token, which the backend did not return "
                          "(data/derived/minkprob.parquet has Min-K% prob but no "
                          f"{configured.column}): a vLLM server returns them with `logprobs`; or choose "
                          "lap_measure = \"minkprob\", \"zlib\" or \"loss\", which need only the tokens' log-probs")
    panel["ud_dir"] = recall_direction(panel["ud"], panel["lap_recall"])
    panel["entity_num"] = integer_ids(panel["entity_id"])
    panel["date_num"] = integer_ids(panel["target_date"])
    panel["period"], start = period_labels(panel["target_date"], config.study.frequency)
    panel["period_num"] = integer_ids(start)
    panel["release_gap"], panel["post"] = split(panel["target_date"], config)
    panel["high_lap"] = high_lap_column(panel, config.panel.high_lap)
    return panel


def high_lap_column(panel: pd.DataFrame, rule: str) -> pd.Series:
    """high_lap of every row, within its own sample (pre- or post-cutoff, protocol Step 3); missing in the release gap."""
    flags = pd.Series(pd.NA, index=panel.index, dtype="Int8")
    for _, sample in panel.groupby("post"):  # release-gap rows (post missing) are in no group
        flags.loc[sample.index] = high_lap_flags(sample, rule)
    return flags


def split(target_date: pd.Series, config: RunConfig) -> tuple[pd.Series, pd.Series]:
    """(release_gap, post): post = 0 if target_date <= cutoff, 1 if target_date > release_date (> cutoff when no
    release date is set), missing in the release-date gap cutoff < target_date <= release_date, whose rows
    belong to neither sample (paper Table A.1); release_gap (int8) flags them."""
    cutoff = pd.Timestamp(config.study.cutoff_date)
    release = config.study.release_date_value
    if release is None:
        gap = pd.Series(False, index=target_date.index)
    else:
        gap = (target_date > cutoff) & (target_date <= pd.Timestamp(release))
    post = (target_date > cutoff).astype("Int8").mask(gap)
    return gap.astype("int8"), post


STATA_RESERVED = frozenset({"_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long",
                            "_n", "_N", "_pi", "_pred", "_rc", "_se", "_skip", "str", "strL", "using", "with"})
"""Names Stata reserves ([U] 11.3 Naming conventions); str1..str2045 too (`stata_names`)."""


STATA_LABEL_LENGTH = 80
"""Characters of a .dta variable label (Stata's limit; pyreadstat refuses a longer one)."""


def stata_names(columns) -> dict[str, str]:
    """{column: its .dta name} for the columns whose name Stata cannot hold ([U] 11.3: 1-32 characters of letters,
    digits and _, not starting with a digit, not reserved): characters outside [A-Za-z0-9_] become _, a leading digit
    gets a _ prefix, the name is cut to 32 characters and numbered when taken (as Stata's `import delimited` renames
    such headers). The original name becomes the variable's label, cut to STATA_LABEL_LENGTH characters."""
    taken = {c for c in columns if STATA_NAME.match(c) and not _reserved(c)}
    renamed = {}
    for column in columns:
        if column in taken:
            continue
        base = re.sub(r"[^A-Za-z0-9_]", "_", str(column).encode("ascii", "replace").decode()) or "_"
        base = ("_" + base if base[0].isdigit() or _reserved(base) else base)[:32]
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base[:32 - len(str(number)) - 1]}_{number}"
        taken.add(name)
        renamed[column] = name
    return renamed


def _reserved(name: str) -> bool:
    return name in STATA_RESERVED or re.fullmatch(r"str(?:[1-9]\d{0,3})", name) is not None


def to_stata(panel: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The .dta version: no long text columns, numeric flags (a nullable one as 0/1 with Stata's missing), dates as
    Stata dates (%td), valid names (a column whose name Stata cannot hold is renamed, its name kept as its label, cut
    to STATA_LABEL_LENGTH characters: `stata_names`)."""
    frame = panel.drop(columns=[c for c in DTA_EXCLUDED if c in panel.columns])
    renamed = stata_names(list(frame.columns))
    original = {new: old for old, new in renamed.items()}
    frame = frame.rename(columns=renamed)
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_datetime64_any_dtype(values):
            frame[column] = values.dt.date
        elif isinstance(values.dtype, (pd.Int8Dtype, pd.BooleanDtype)):
            frame[column] = values.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)
        elif pd.api.types.is_bool_dtype(values):
            frame[column] = values.astype("int8")
        elif values.dtype == object or pd.api.types.is_string_dtype(values):
            numbers = user_numbers(values) if original.get(column, column) not in LABELS else None
            frame[column] = (values.astype(object).where(values.notna(), "").astype(str) if numbers is None
                             else numbers)
    labels = {c: LABELS.get(c, original.get(c, c))[:STATA_LABEL_LENGTH] for c in frame.columns}
    return frame, labels


def user_numbers(values: pd.Series) -> pd.Series | None:
    """A column of the user's file read as text (CSV) as float64 when every cell is a finite number or missing
    (cells.MISSING_TOKENS), so that Stata gets numbers, not strings to destring; None otherwise, and for identifiers
    written with leading zeros (a CUSIP "03783310" keeps its zeros as text)."""
    missing = is_missing(values)
    text = values[~missing].astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    if text.empty or numbers.isna().any() or not np.isfinite(numbers).all() or text.str.match(r"^[+-]?0\d").any():
        return None
    return pd.to_numeric(values.where(~missing), errors="coerce").astype("float64")


def write_dta(panel: pd.DataFrame, path, rows: pd.Series | None = None) -> None:
    """`panel` (only `rows`, a boolean mask, when given) as a .dta file. Each column's type is decided by
    `to_stata` on the whole of `panel` before the rows are chosen, so panel_pre.dta and panel_post.dta give every
    column the same type and Stata's `append` joins them (it refuses a str/numeric mismatch, r(106))."""
    frame, labels = to_stata(panel)
    if rows is not None:
        frame = frame[rows.to_numpy(dtype=bool, na_value=False)]  # post is missing in the release gap
    formats = {c: "%td" for c in ("text_date", "target_date") if c in frame.columns}
    atomic_write(path, lambda tmp: pyreadstat.write_dta(frame, str(tmp), column_labels=labels,
                                                        variable_format=formats))


PANEL_FILES = ("panel.parquet", "panel_pre.dta", "panel_post.dta")


def build(config: RunConfig, layout: Layout) -> PanelResult:
    """Write data/derived/panel.parquet, panel_pre.dta and panel_post.dta (each .dta only when its sample has
    rows), all or nothing: a rerun without pre- (post-) cutoff rows removes the old panel_pre.dta
    (panel_post.dta), so do/master.do never estimates on a stale file (lapbias/stage.py)."""
    inputs = read_checked(layout.derived_file("input.parquet"))
    forecast, recall, minkprob, notes = _signals(config, layout)
    panel = assemble(config, inputs, forecast, recall, minkprob)
    signals = {"forecast": forecast, "recall": recall, "minkprob": minkprob}
    panel.attrs = {SIGNALS_KEY: {task: frame.attrs[provenance.ATTRS_KEY]["settings"] for task, frame in signals.items()
                                 if frame is not None and provenance.ATTRS_KEY in frame.attrs},
                   BUILT_FROM_KEY: {name: fingerprint(layout.derived_file(name))
                                    for name in ("input.parquet", *SIGNAL_FILES)
                                    if name == "input.parquet" or signals[name.split(".")[0]] is not None}}
    result = PanelResult(panel, notes=notes)
    renamed = stata_names([c for c in panel.columns if c not in DTA_EXCLUDED])
    if renamed:
        result.warnings.append("column(s) renamed in panel_pre.dta / panel_post.dta, whose names Stata cannot hold "
                               f"(the original name is the variable label, cut to {STATA_LABEL_LENGTH} characters): "
                               + ", ".join(f"{old!r} -> {new}" for old, new in renamed.items()))
    pre, post = panel[panel["post"] == 0], panel[panel["post"] == 1]
    with staged_outputs(layout.derived, "panel", new_run_id(), known=PANEL_FILES) as folder:
        write_parquet(panel, folder / "panel.parquet")
        if pre.empty:
            result.warnings.append("no pre-cutoff rows: there is no in-sample period to test")
        else:
            write_dta(panel, folder / "panel_pre.dta", rows=panel["post"] == 0)
        if post.empty:
            result.warnings.append("no post-cutoff rows: the placebo (Step 5) is infeasible; Steps 1-4 only")
        else:
            write_dta(panel, folder / "panel_post.dta", rows=panel["post"] == 1)
    return result
