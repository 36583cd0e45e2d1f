"""Raw-response cache (protocol Step 0): one JSONL line per query, reused only on an exact key match.

Line: {"key", "task", "model_id", "query_id", "prompt", "params", "response", "created"} (ARCHITECTURE.md).
key = sha256(task | model_id | query_id | prompt | canonical-json(params)), where query_id is the row_id
(forecast, Min-K%) or entity_id + target_date (recall) and prompt is the exact text sent (a chat as canonical
JSON). The endpoint, API key and backend never enter the key or the line, so a run interrupted on one backend
resumes on another serving the same model.

Appends are flushed and fsynced per batch. A line cut short by a crash is the only possible damage; it is
detected on open, reported, and dropped by an atomic rewrite of the file (temp + rename), so the query is
simply asked again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import CacheError
from ..io import atomic_write


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
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        good_lines, damaged = [], 0
        with open(self.path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    damaged += 1
                    continue
                expected = cache_key(record["task"], record["model_id"], record["query_id"],
                                     record["prompt"], record["params"])
                if record["key"] != expected:
                    raise CacheError(
                        f"{self.path} line {number}: stored key does not match its task, model, query, prompt "
                        "and params (edited by hand?); remove the line or the file to re-query"
                    )
                self._records[record["key"]] = record
                good_lines.append(line if line.endswith("\n") else line + "\n")
        if damaged:
            warnings.warn(f"{self.path}: dropped {damaged} damaged line(s) from an interrupted write; "
                          "those queries will be asked again")
            atomic_write(self.path, lambda tmp: tmp.write_text("".join(good_lines), encoding="utf-8"))

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
                f"run `lapbias {query.task}` to ask the model"
            )
        return record["response"]

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("".join(lines))
            handle.flush()
            os.fsync(handle.fileno())
        for record in records:
            self._records[record["key"]] = record
