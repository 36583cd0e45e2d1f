"""All-or-nothing stage outputs and run ids (protocol Step 0: atomic writes).

A stage that writes several files (panel: panel.parquet + panel_pre.dta + panel_post.dta; estimate: every
results/*.csv, figure and run_config.json; report: REPORT.md, .tex twins, descriptives, figures) writes them
into a fresh hidden folder beside their target (`results/.estimate-staging-<run id>/`). Only when the stage has
finished are they moved in: the files the stage wrote last time (its manifest, `.<stage>-manifest.json`) and no
longer writes are removed, the new ones are renamed over the old, and the manifest is rewritten. A stage that
fails removes its staging folder and leaves the previous outputs untouched, so no later stage reads a mix.

Every CSV a stage stages gets a `run_id` column; the estimate stage writes the same id, with the fingerprint of
the panel it read, into results/run_config.json. The report refuses tables whose run ids differ from it, or a
panel that changed since (`check_run`), so a mix left by hand, by an old version or by a crash between two
renames is refused rather than reported. The mechanism knows nothing of the engine: an engine writes into the
folder it is given (`Layout.staged`).
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import json
import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd

from .errors import LapbiasError
from .io import atomic_write, write_error, write_text

RUN_ID = "run_id"
RUN_RECORD = "run_config.json"
VALIDATED = "validated"
"""run_config.json's record of what `validate` had read (validate.validated_record)."""
RUN_ALL = ("or `lapbias run CONFIG` (every step, with the --sample you validated with, if any; queries already "
           "asked are answered from the cache)")
RERUN_AFTER_VALIDATE = ("rerun the steps after `lapbias validate` (the signal steps, `panel`, `estimate`, then "
                        f"`report`), {RUN_ALL}")
RAW_EXPORT_PREFIX = "stata_"
"""Engine-specific raw exports (esttab layout, read only by the Stata driver) are not stamped."""


class StaleResultsError(LapbiasError):
    """Results files from different runs, or from an input that changed since they were estimated."""


def new_run_id() -> str:
    """UTC time stamp + 8 random hex digits, e.g. 20261123T104512Z-3fa9c2d1."""
    return f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def fingerprint(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def manifest_path(target: Path, stage: str) -> Path:
    return Path(target) / f".{stage}-manifest.json"


def manifest_files(target: Path, stage: str) -> set[str]:
    """Files (relative to target) the stage wrote last time; empty when it never ran (or the manifest is bad)."""
    path = manifest_path(target, stage)
    try:
        return set(json.loads(path.read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def stamp_csv(path: Path, run_id: str) -> None:
    """Add (or overwrite) the `run_id` column; values are kept as the text they were written as."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        table = pd.DataFrame()
    table[RUN_ID] = run_id
    atomic_write(path, lambda tmp: table.to_csv(tmp, index=False))


def _stamped(name: str) -> bool:
    return name.endswith(".csv") and not Path(name).name.startswith(RAW_EXPORT_PREFIX)


@contextmanager
def staged_outputs(target: Path, stage: str, run_id: str, known: Iterable[str] = (),
                   retire: Iterable[str] = ()) -> Iterator[Path]:
    """Yield a fresh folder to write the stage's outputs in; on success move them into `target`.

    `known`: files the stage may have written before manifests existed (removed when not rewritten).
    `retire`: other stages whose outputs describe this stage's old outputs (e.g. the report of an earlier
    estimate) and are removed with them."""
    target = Path(target)
    for leftover in target.glob(f".{stage}-staging-*"):  # a run killed before it could clean up, never a live one
        if not _alive(leftover.name.rpartition(".")[2]):
            shutil.rmtree(leftover, ignore_errors=True)
    folder = target / f".{stage}-staging-{run_id}.{os.getpid()}"
    try:
        folder.mkdir(parents=True)
    except OSError as err:
        raise write_error(err, folder, "make the staging folder") from None
    try:
        yield folder
        _commit(target, stage, run_id, folder, set(known), tuple(retire))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: str) -> bool:
    """Whether the process that named a staging folder `<...>.<pid>` still runs (folders of older versions carry no
    pid: not alive)."""
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


LOCK_FILE = ".lapbias.lock"
"""logs/.lapbias.lock: held (flock) by the lapbias command working on the project, with its pid, command and start."""


class ProjectBusy(LapbiasError):
    """Another lapbias command is working on the same project folder."""


@contextmanager
def project_lock(logs: Path, command: str) -> Iterator[None]:
    """Hold the project's lock for the whole command: two commands on one project would delete each other's staging
    folders and interleave their outputs. The lock is an flock on logs/.lapbias.lock, released by the kernel when
    the process ends, however it ends; a second command stops at once with a ProjectBusy naming the first."""
    import fcntl

    path = Path(logs) / LOCK_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")
    except OSError as err:
        raise write_error(err, path, "take the project lock") from None
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise ProjectBusy(f"another lapbias run is using this folder ({Path(logs).parent}): {holder}; wait for it "
                              "to finish (or stop it), or give this run its own root in the config") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"`lapbias {command}` (pid {os.getpid()}, started {dt.datetime.now():%Y-%m-%d %H:%M:%S})\n")
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock


def _check_destination(target: Path, name: str) -> None:
    """WriteError when `target/name` cannot be written because a folder stands where the file goes, or a file where
    one of its folders goes."""
    destination = target / name
    if destination.is_dir():
        raise write_error(OSError(errno.EISDIR, os.strerror(errno.EISDIR), str(destination)), destination)
    for folder in destination.relative_to(target).parents:
        if (target / folder).exists() and not (target / folder).is_dir():
            raise write_error(OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(target / folder)), target / folder)


def _commit(target: Path, stage: str, run_id: str, folder: Path, known: set[str], retire: tuple[str, ...]) -> None:
    produced = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    for name in produced:  # something in the way is found before anything moves, not after half the files did
        _check_destination(target, name)
    for name in produced:
        if _stamped(name):
            stamp_csv(folder / name, run_id)
    old = manifest_files(target, stage) | known
    for other in retire:
        old |= manifest_files(target, other)
    for name in sorted(old - set(produced)):
        (target / name).unlink(missing_ok=True)
    for other in retire:
        manifest_path(target, other).unlink(missing_ok=True)
    files = {}
    for name in produced:
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        files[name] = fingerprint(folder / name)
        os.replace(folder / name, destination)
    write_text(manifest_path(target, stage), json.dumps({"stage": stage, RUN_ID: run_id, "files": files},
                                                        indent=1, sort_keys=True) + "\n")


def check_manifest(target: Path, stage: str, run_id: str | None, then: str = "report") -> None:
    """Every file the stage's last run wrote (its manifest: name and sha256) is still there unchanged, and that run is
    `run_id` (when given): a results file deleted, emptied or edited since the estimate would otherwise be read as that
    run's (a missing placebo.csv reads as "placebo infeasible"), a panel_pre.dta re-saved since `lapbias panel` be
    estimated by Stata. Nothing to compare without a manifest (the Python API)."""
    path = manifest_path(target, stage)
    if not path.exists():
        return
    rerun = f"rerun `lapbias {stage}` (then `lapbias {then}`)"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files, manifest_run = dict(manifest["files"]), manifest[RUN_ID]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise StaleResultsError(f"{path} is damaged; {rerun}") from None
    if run_id is not None and manifest_run != run_id:
        raise StaleResultsError(f"{path} lists the files of {stage} run {manifest_run}, {RUN_RECORD} names run "
                                f"{run_id}: files from different runs; {rerun}")
    shown = Path(target).name
    for name, digest in sorted(files.items()):
        file = Path(target) / name
        if not file.is_file():
            raise StaleResultsError(f"{shown}/{name} is missing: {stage} run {manifest_run} wrote it; {rerun}")
        if fingerprint(file) != digest:
            raise StaleResultsError(f"{shown}/{name} changed since {stage} run {manifest_run} wrote it (edited, or "
                                    f"emptied?); {rerun}")


def _rerun_after_change(relative: str, rerun_estimate: str) -> str:
    """What to rerun once an input of the estimate changed: the estimate (the panel), the steps after `validate` (its
    outputs), or `validate` and the steps after it (the data file)."""
    if relative in ("data/derived/input.parquet", "data/derived/validation_report.csv"):
        return RERUN_AFTER_VALIDATE
    if relative.startswith("data/derived/"):
        return rerun_estimate
    return f"rerun `lapbias validate` (with its --sample, if you used one) and the steps after it, {RUN_ALL}"


def run_record(snapshot: dict, run_id: str, inputs: dict[str, Path], root: Path, validated: dict | None = None) -> str:
    """results/run_config.json: the configuration snapshot, the run id, the sha256 of each input read and what
    `validate` had read (`validated`: data/derived/data_source.json less the data path's spelling)."""
    record = dict(snapshot)
    record[RUN_ID] = run_id
    record[VALIDATED] = validated
    record["inputs"] = {os.path.relpath(Path(p).resolve(), Path(root).resolve()).replace(os.sep, "/"): fingerprint(p)
                        for p in inputs.values() if Path(p).exists()}
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def read_run_record(results: Path) -> dict | None:
    path = Path(results) / RUN_RECORD
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as err:
        raise StaleResultsError(f"{path} is damaged ({err}); rerun `lapbias estimate`") from None
    return record


def check_run(results: Path, tables: dict[str, pd.DataFrame], root: Path) -> str | None:
    """The run id every table shares with results/run_config.json (None for tables written through the Python
    API, with no run ids at all); StaleResultsError for a mix, or when an input changed since the estimate."""
    record = read_run_record(results)
    run_id = record.get(RUN_ID) if record else None
    rerun = "rerun `lapbias estimate` (then `lapbias report`)"
    for name, table in tables.items():
        if RUN_ID in table.columns and table[RUN_ID].isna().any():
            raise StaleResultsError(f"results/{name}.csv has {int(table[RUN_ID].isna().sum())} row(s) with an empty "
                                    f"run_id (edited by hand?), so they are not from one run; {rerun}")
        ids = sorted({str(v) for v in table[RUN_ID]}) if RUN_ID in table.columns else None
        if run_id is None and ids is None:
            continue
        if run_id is None:
            raise StaleResultsError(f"results/{name}.csv is from run {ids[0]} but results/{RUN_RECORD} names no "
                                    f"run: tables from different runs; {rerun}")
        if ids is None:
            raise StaleResultsError(f"results/{name}.csv has no run_id column, so it is not from run {run_id} of "
                                    f"results/{RUN_RECORD} (left by an older run or edited); {rerun}")
        if ids and ids != [run_id]:  # a table with no rows carries the column only
            raise StaleResultsError(f"results/{name}.csv is from run {', '.join(ids)}, results/{RUN_RECORD} from "
                                    f"run {run_id}: tables from different runs; {rerun}")
    for relative, digest in (record or {}).get("inputs", {}).items():
        path = Path(root) / relative
        if not path.exists() or fingerprint(path) != digest:
            raise StaleResultsError(f"{relative} changed since estimate run {run_id} read it; "
                                    f"{_rerun_after_change(relative, rerun)}")
    return run_id
