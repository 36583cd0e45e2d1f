"""The audits' sections of results/REPORT.md: written by each audit, read back (checked) by the report.

Each audit (`lapbias leak`, `lapbias ess`, `lapbias calibrate`) writes its REPORT.md section as
`results/<folder>/SECTION.md` when it runs, through the staging machinery of the protocol's stages
(lapbias/stage.py): the section and the tables it quotes are moved in together and listed, with their sha256, in the
audit's manifest (`results/.<stage>-manifest.json`). The report never computes an audit's section; for each folder of
`AUDITS` that exists it checks the section against the manifests (present, recorded, unchanged, UTF-8, and every
other file the audit wrote into that folder unchanged) and includes it, or puts one line in its place naming the
damaged file, the reason and the command that rewrites it (`section_lines`). So a damaged or half-written audit
never takes the protocol's report down, and the report depends on no audit's code (the audits depend on report/, not
the other way round).

SECTION.md's links (figures) are relative to results/, the folder of the REPORT.md that includes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import LapbiasError
from ..io import write_text
from ..stage import fingerprint, manifest_path, new_run_id, staged_outputs

SECTION = "SECTION.md"


@dataclass(frozen=True)
class Audit:
    command: str
    """The `lapbias` command that runs the audit (and rewrites its section)."""
    folder: str
    """Its folder under results/."""
    stages: tuple[str, ...]
    """The stages whose manifests (results/.<stage>-manifest.json) list its files, the section's stage first."""


AUDITS = (Audit("leak", "leak", ("leak",)), Audit("ess", "ess", ("ess",)),
          Audit("calibrate", "calibration", ("calibrate-section", "calibrate")))
"""The audits whose sections REPORT.md includes, in this order, after the protocol's six sections. `calibrate`'s
tables are staged by its pipeline (stage `calibrate`), its section afterwards from them (stage `calibrate-section`)."""


def audit(command: str) -> Audit:
    return next(a for a in AUDITS if a.command == command)


class AuditTableError(LapbiasError):
    """A table an audit's section quotes cannot be read (not UTF-8, not CSV, a column missing)."""


def read_table(path: Path, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """An audit's CSV for its section, with `columns` required; AuditTableError naming the file and the reason."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise AuditTableError(f"{path} is damaged (not UTF-8)") from None
    except OSError as err:
        raise AuditTableError(f"{path} cannot be read ({err.strerror})") from None
    try:
        table = pd.read_csv(StringIO(text))
    except pd.errors.EmptyDataError:
        raise AuditTableError(f"{path} is damaged (empty)") from None
    except ValueError as err:  # pandas' ParserError
        raise AuditTableError(f"{path} is damaged (not CSV: {str(err).splitlines()[0]})") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise AuditTableError(f"{path} is damaged (column(s) {', '.join(missing)} missing)")
    return table


def damaged(relative: str, reason: str, command: str) -> str:
    """The one line that stands for an audit section that cannot be included."""
    return f"_results/{relative} is damaged ({reason}): rerun `lapbias {command} CONFIG`._"


def build(results: Path, command: str, lines: Callable[[], list[str]]) -> str:
    """SECTION.md's text: `lines()` (the audit's section, read from its tables under `results`), or, when a table is
    damaged at that moment, the one line naming it."""
    try:
        return "\n".join(lines()).rstrip("\n") + "\n"
    except AuditTableError as err:
        shown = str(err).replace(f"{Path(results)}/", "results/", 1)
        return f"_{shown}: rerun `lapbias {command} CONFIG`._\n"


def write(results: Path, command: str, lines: Callable[[], list[str]]) -> Path:
    """Write results/<folder>/SECTION.md (build) into `results`, e.g. an audit's staging folder, beside the tables
    the audit has just written there."""
    return write_text(Path(results) / audit(command).folder / SECTION, build(results, command, lines))


def write_staged(results: Path, command: str, lines: Callable[[], list[str]]) -> Path:
    """Write SECTION.md as a stage of its own (`<command>-section`), for an audit whose pipeline moved its tables into
    results/ before the section is built from them (calibrate): tables changed or damaged since (checked against the
    pipeline's manifest) give the one line naming the file instead of the section."""
    entry = audit(command)
    results = Path(results)
    problem = _files_problem(results, entry, entry.stages[1:], ())
    text = damaged(*problem, command) + "\n" if problem else build(results, command, lines)
    with staged_outputs(results, entry.stages[0], new_run_id()) as folder:
        write_text(folder / entry.folder / SECTION, text)
    return results / entry.folder / SECTION


def _manifest(results: Path, stage: str) -> dict[str, str] | str:
    """The manifest's files (name -> sha256), or why it cannot be read."""
    path = manifest_path(results, stage)
    if not path.exists():
        return f"its manifest results/{path.name} is missing"
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return f"its manifest results/{path.name} cannot be read"


TEXT = (".md", ".csv", ".json", ".txt", ".toml")
"""Files checked to be UTF-8 before their sha256 (the plainer reason to give)."""


def _files_problem(results: Path, entry: Audit, stages: tuple[str, ...],
                   first: tuple[str, ...]) -> tuple[str, str] | None:
    """(file, reason) for the first of `first`, then of the files the manifests of `stages` list under the audit's
    folder (the tables its section quotes; its figures may be looked at, not read), that is not as the manifest
    records it: the manifest missing or unreadable, the file not recorded, missing, not UTF-8 or changed."""
    recorded: dict[str, str] = {}
    for stage in stages:
        files = _manifest(results, stage)
        if isinstance(files, str):
            return (first or (f"{entry.folder}/",))[0], files
        recorded.update(files)
    for name in first:
        if name not in recorded:
            return name, f"not among the files of results/{manifest_path(results, stages[0]).name}"
    quoted = sorted(name for name in recorded if name.startswith(f"{entry.folder}/") and name not in first)
    for name in (*first, *quoted):
        path = results / name
        if not path.is_file():
            return name, "missing"
        if path.suffix in TEXT:
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return name, "not UTF-8"
        if fingerprint(path) != recorded[name]:
            return name, f"changed since `lapbias {entry.command}` wrote it: its sha256 differs from the manifest's"
    return None


def section_lines(results: Path) -> list[str]:
    """The sections of the audits that ran under `results` (AUDITS order), each checked against its manifests; a
    section that cannot be included is one line naming the file and why."""
    results = Path(results)
    lines: list[str] = []
    for entry in AUDITS:
        if not (results / entry.folder).is_dir():
            continue
        problem = _files_problem(results, entry, entry.stages, (f"{entry.folder}/{SECTION}",))
        if problem:
            lines += [damaged(*problem, entry.command), ""]
        else:
            lines += [(results / entry.folder / SECTION).read_text(encoding="utf-8").rstrip("\n"), ""]
    return lines
