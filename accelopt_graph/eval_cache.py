"""The evaluation cache: (task, normalised code hash, backend settings) -> EvalResult, in SQLite in
the run directory, so identical samples and resumed runs never pay for an evaluation twice."""
from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from accelopt_graph.tools.backend import EvalResult, EvalSettings, KernelTask, normalized_code_hash
from accelopt_graph.types import short_hash

# Results that depend on the machine's load rather than on the kernel are not worth replaying.
_UNCACHED_STATUSES = frozenset({"timeout"})


def task_key(task: KernelTask) -> str:
    """Return a key naming the task, its version and its parameters (reduced sizes differ)."""
    params: Any = getattr(task, "parameters", None) or getattr(task, "params", None) or {}
    return f"{task.name}@v{task.version}:{json.dumps(params, sort_keys=True, default=str)}"


def cache_key(task: KernelTask, code: str, settings: EvalSettings) -> str:
    """Return the cache key of evaluating `code` on `task` under `settings`."""
    return short_hash(task_key(task), normalized_code_hash(code), settings.model_dump_json(), length=40)


class EvalCache:
    """A thread-safe SQLite map from `cache_key` to `EvalResult` (in memory when `path` is None)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._memory: dict[str, EvalResult] = {}
        self.hits = 0
        self.misses = 0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, task TEXT NOT NULL, "
                           "code_hash TEXT NOT NULL, result TEXT NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        from accelopt_graph.rundir import connect_sqlite

        return connect_sqlite(self.path)

    def get(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult | None:
        key = cache_key(task, code, settings)
        with self._lock:
            result = self._memory.get(key)
            if result is None and self.path is not None:
                with self._connect() as db:
                    row = db.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
                if row:
                    result = EvalResult.model_validate_json(row[0])
                    self._memory[key] = result
            if result is None:
                self.misses += 1
            else:
                self.hits += 1
            return result

    def put(self, task: KernelTask, code: str, settings: EvalSettings, result: EvalResult) -> None:
        if result.status.value in _UNCACHED_STATUSES:
            return
        key = cache_key(task, code, settings)
        with self._lock:
            self._memory[key] = result
            if self.path is None:
                return
            with self._connect() as db:
                db.execute("INSERT OR REPLACE INTO results (key, task, code_hash, result) VALUES (?, ?, ?, ?)",
                           (key, task_key(task), normalized_code_hash(code), result.model_dump_json()))

    def __len__(self) -> int:
        if self.path is None:
            return len(self._memory)
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
