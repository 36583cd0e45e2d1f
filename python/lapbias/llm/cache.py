"""Raw-response cache (protocol Step 0): one JSONL line per query, reused only on an exact key match.

Line: {"key", "task", "model_id", "query_id", "prompt", "params", "response", "created"} (ARCHITECTURE.md).
key = sha256(task | model_id | query_id | prompt | canonical-json(params)), where query_id is the row_id
(forecast, Min-K%) or entity_id + target_date (recall) and prompt is the exact text sent (a chat as canonical
JSON). The endpoint, API key and backend never enter the key or the line, so a run interrupted on one backend
resumes on another serving the same model (Min-K% only between backends whose next-token moments come from the same
distribution: its params name it, llm/moments.py mode).

Appends are flushed and fsynced per batch. A last line cut short by a crash (no newline) is an interrupted
write: it is reported and dropped by an atomic rewrite (temp + rename), the original kept as *.damaged-<time>,
so the query is simply asked again. Any other damage (a blank or broken line mid-file, a line of the wrong
shape, a response breaking its laws, llm/responses.py, a key repeated with a different response) stops with the
line number; the file is not touched. A key repeated with the same response (two runs appending) is harmless.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import CacheError, CacheWriteError
from ..io import atomic_write, os_hint, os_reason, write_error
from .responses import check_line, check_response


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: the same value always gives the same string."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(task: str, model_id: str, query_id: str, prompt: str, params: dict[str, Any]) -> str:
    material = "|".join([task, model_id, query_id, prompt, canonical_json(params)])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Query:
    """One model query, fully determined by its fields (and so by its key)."""

    task: str
    model_id: str
    query_id: str
    prompt: str
    params: dict[str, Any]

    @property
    def key(self) -> str:
        return cache_key(self.task, self.model_id, self.query_id, self.prompt, self.params)


class ResponseCache:
    """The JSONL file of one task, loaded into memory by key."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._records: dict[str, dict[str, Any]] = {}
        if self.path.is_symlink() and not self.path.exists():
            raise CacheError(f"cache {self.path} is a symbolic link to {os.readlink(self.path)}, which does not exist "
                             "(a shared drive not mounted?): mount it, or remove the link, before any query is asked "
                             "(their answers could not be saved)")
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        """Read every line; a line is trusted only when it is JSON of the cache line's shape, its key matches its
        content and its response obeys its task's laws (llm/responses.py). Only a last line cut short without
        its newline is an interrupted write: it is dropped, the original file kept beside as *.damaged-<time>."""
        if not self.path.is_file():
            raise CacheError(f"cache {self.path} is not a file (a folder?); move it away so lapbias can write the "
                             "cache there")
        raw_lines = self.path.read_bytes().splitlines(keepends=True)
        good_lines = []
        lines_of: dict[str, int] = {}  # key -> the line it was first read from (a repeat must say the same)
        for number, raw in enumerate(raw_lines, start=1):
            last = number == len(raw_lines)
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                if last and not raw.endswith(b"\n") and raw.strip():
                    self._drop_interrupted_line(good_lines, number)
                    return
                what = "is blank" if not raw.strip() else f"is not UTF-8 JSON ({str(err).splitlines()[0][:80]})"
                raise CacheError(self._where(number, len(raw_lines), what)) from None
            problem = check_line(record)
            if problem is None:
                problem = check_response(record["task"], record["response"])
            if problem:
                raise CacheError(self._where(number, len(raw_lines), problem))
            expected = cache_key(record["task"], record["model_id"], record["query_id"],
                                 record["prompt"], record["params"])
            if record["key"] != expected:
                raise CacheError(
                    f"{self.path} line {number}: stored key does not match its task, model, query, prompt "
                    "and params (edited by hand?); remove the line or the file to re-query"
                )
            earlier = self._records.get(record["key"])
            if earlier is not None and canonical_json(earlier["response"]) != canonical_json(record["response"]):
                raise CacheError(self._where(number, len(raw_lines), f"repeats the key of line {lines_of[record['key']]} "
                                 f"({record['task']} query {record['query_id']!r}) with a different response; "
                                 "which answer is right cannot be told"))
            lines_of.setdefault(record["key"], number)
            self._records[record["key"]] = record
            good_lines.append(raw.decode("utf-8"))

    def _where(self, number: int, total: int, problem: str) -> str:
        return (f"{self.path} line {number} of {total} {problem}; the file holds {total} lines of cached answers "
                "and was not changed: fix or delete that line (its query is then asked again)")

    def _drop_interrupted_line(self, good_lines: list[str], number: int) -> None:
        """The file itself is rewritten (for a symbolic link, the file it points to, beside which the backup is
        kept): replacing the link by a file would leave the shared cache it points to damaged."""
        target = self.path.resolve()
        backup = target.with_name(f"{target.name}.damaged-{dt.datetime.now():%Y%m%dT%H%M%S}")
        try:
            shutil.copy2(target, backup)
        except OSError as err:
            raise write_error(err, backup, "keep a copy of the damaged cache as") from None
        warnings.warn(f"{self.path}: dropped damaged line {number}, cut short by an interrupted write (its query will be "
                      f"asked again); the original file is kept as {backup}")
        atomic_write(target, lambda tmp: tmp.write_text("".join(good_lines), encoding="utf-8"))

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def response(self, query: Query) -> Any:
        record = self._records.get(query.key)
        if record is None:
            raise CacheError(
                f"{self.path} has no response for {query.task} query {query.query_id!r}; "
                f"run `lapbias {query.task.split()[0]} --yes` to ask the model"
            )
        return record["response"]

    def unused(self, queries: Sequence[Query]) -> int:
        """Cached answers of the queries' task and model that none of `queries` asks for: answers orphaned when the
        prompts changed (a column no longer read, an edited template or text). They stay in the cache."""
        if not queries:
            return 0
        keys, task, model = {q.key for q in queries}, queries[0].task, queries[0].model_id
        return sum(1 for key, record in self._records.items()
                   if key not in keys and record.get("task") == task and record.get("model_id") == model)

    def missing(self, queries: Iterable[Query]) -> list[Query]:
        """Queries without a cached response, first occurrence of each key, in input order."""
        seen: set[str] = set()
        todo = []
        for query in queries:
            key = query.key
            if key not in self._records and key not in seen:
                seen.add(key)
                todo.append(query)
        return todo

    def append(self, answered: Iterable[tuple[Query, Any]]) -> None:
        """Append one line per (query, response), then flush and fsync (one batch at a time)."""
        created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        lines, records = [], []
        for query, response in answered:
            record = {
                "key": query.key, "task": query.task, "model_id": query.model_id, "query_id": query.query_id,
                "prompt": query.prompt, "params": query.params, "response": response, "created": created,
            }
            records.append(record)
            lines.append(canonical_json(record) + "\n")
        if not lines:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size:
                with open(self.path, "rb") as handle:  # a last line complete but for its newline: end it first
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        lines.insert(0, "\n")
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write("".join(lines))
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as err:
            raise CacheWriteError(self._unsaved(err, [line for line in lines if line.strip()])) from None
        for record in records:
            self._records[record["key"]] = record

    def _unsaved(self, err: OSError, lines: list[str]) -> str:
        """Answers already paid for are never dropped silently: when the cache cannot take them, they are written
        to a file in the system's temporary folder (another file system, as a rule) with how to restore them, or the
        message says how many are lost. The cache keeps what it held (a cut last line is dropped on the next read)."""
        reason, held = f"{self.path} ({os_reason(err)})", f"the {len(self._records)} answers cached before are kept"
        try:
            handle, kept = tempfile.mkstemp(prefix=f"lapbias-unsaved-{self.path.stem}-", suffix=".jsonl")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write("".join(lines))
        except OSError:
            return (f"cannot append {len(lines)} new answer(s) to the cache {reason}; they could not be kept "
                    f"elsewhere either, so these {len(lines)} answers are lost ({held}); {os_hint(err)}")
        return (f"cannot append {len(lines)} new answer(s) to the cache {reason}; they are kept in {kept}: "
                f"{os_hint(err).removesuffix(', then rerun').removesuffix(' and rerun')}, run `cat {kept} >> "
                f"{self.path}`, then rerun (cached answers are not asked again; {held})")
