"""File layout and atomic writes (protocol Step 0: write to a temp path and rename atomically).

Every derived file is written to `<name>.tmp-<pid>` in the same directory, flushed, fsynced and renamed
over the target, so an interrupted run never leaves a half-written parquet, .dta, CSV or report.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .errors import LapbiasError


@dataclass(frozen=True)
class Layout:
    """Where a run reads and writes, relative to the project root (ARCHITECTURE.md, data flow)."""

    root: Path
    results_dir: Path | None = None
    """Where this stage writes results/ (a stage's fresh staging folder, lapbias/stage.py); None = root/results."""

    def staged(self, results_dir: Path) -> "Layout":
        """The same layout with results (and results/figures) in `results_dir`."""
        return Layout(self.root, Path(results_dir))

    @property
    def derived(self) -> Path:
        return self.root / "data" / "derived"

    @property
    def raw(self) -> Path:
        return self.root / "data" / "raw"

    @property
    def results(self) -> Path:
        return self.results_dir if self.results_dir is not None else self.root / "results"

    @property
    def figures(self) -> Path:
        return self.results / "figures"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def derived_file(self, name: str) -> Path:
        return self.derived / name

    def raw_file(self, task: str) -> Path:
        """JSONL cache of one task: data/raw/<task>.jsonl (one line per query)."""
        return self.raw / f"{task}.jsonl"

    def make_dirs(self) -> None:
        for directory in (self.derived, self.raw, self.results, self.figures, self.logs):
            directory.mkdir(parents=True, exist_ok=True)


class WriteError(LapbiasError):
    """A file or folder could not be written: permissions, a full disk, a folder where a file belongs (or the
    reverse). Its message names the path and the system's reason; nothing is left half-written."""


HINTS = {errno.ENOSPC: "free disk space, then rerun", errno.EDQUOT: "free disk space (quota), then rerun",
         errno.EACCES: "check the permissions of that folder, or set root in the config to a folder you can write",
         errno.EPERM: "check the permissions (and attributes, e.g. chattr +i) of that folder, or set another root",
         errno.EROFS: "the file system is read-only: set root in the config to a writable folder",
         errno.EISDIR: "a folder is in the way: move it away and rerun",
         errno.ENOTDIR: "a file is in the way of a folder: move it away and rerun"}


def os_reason(err: OSError) -> str:
    """The system's reason with its errno name, e.g. "No space left on device (ENOSPC)"."""
    name = errno.errorcode.get(err.errno or 0, "")
    return f"{err.strerror or err}{f' ({name})' if name else ''}"


def os_hint(err: OSError) -> str:
    return HINTS.get(err.errno or 0, "check that path, then rerun")


def write_error(err: OSError, path: Path | str, doing: str = "write") -> WriteError:
    """One line: what could not be done where, the system's reason with its errno name, and what to do."""
    return WriteError(f"cannot {doing} {err.filename or path}: {os_reason(err)}; {os_hint(err)}")


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp_path)`, fsync the temp file, then rename it over `path`; an OSError is a WriteError naming
    the path (the temp file is removed, the old file stays)."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        raise write_error(err, path) from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
    return path


def check_not_an_input(output: Path | str, inputs: dict[str, Path | str], option: str) -> None:
    """An output path of a command must not be one of its inputs (`--save data.csv` would write the coefficient table
    over the data): WriteError naming both."""
    output = Path(output)
    for role, path in inputs.items():
        path = Path(path)
        same = (output.exists() and path.exists() and os.path.samefile(output, path)) or \
            output.resolve() == path.resolve()
        if same:
            raise WriteError(f"{option} {output} is the {role} this command reads; it would be written over: choose "
                             "another path")


def write_text(path: Path, text: str) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_parquet(df: pd.DataFrame, path: Path) -> Path:
    """Deterministic parquet: no pandas index, no wall-clock metadata, so reruns are byte-comparable."""
    return atomic_write(path, lambda tmp: df.to_parquet(tmp, index=False, engine="pyarrow"))


def write_csv(df: pd.DataFrame, path: Path) -> Path:
    return atomic_write(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.10g"))


def read_parquet(path: Path) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise LapbiasError(f"{path} does not exist: run the step that writes it first (see `lapbias --help`)")
    if not path.is_file():
        raise LapbiasError(f"{path} is not a file (a folder?); move it away and rerun the step that writes it")
    try:
        return pd.read_parquet(path)
    except Exception as err:  # pyarrow.ArrowInvalid, OSError, ...: a truncated or foreign file
        raise LapbiasError(f"{path} is damaged or not a parquet file ({(str(err).splitlines() or [''])[0][:120]}); "
                           "rerun the step that writes it (`lapbias rebuild` rewrites every derived file)") from None
