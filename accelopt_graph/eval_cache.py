"""The evaluation cache: (task, normalised code hash, backend settings) -> EvalResult, in SQLite in
the run directory, so identical samples and resumed runs never pay for an evaluation twice."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from accelopt_graph.kvstore import KeyValueTable
from accelopt_graph.tools.backend import EvalResult, EvalSettings, KernelTask, normalized_code_hash
from accelopt_graph.types import short_hash

# Results that depend on the machine's load rather than on the kernel are not worth replaying.
_UNCACHED_STATUSES = frozenset({"timeout"})


def task_key(task: KernelTask) -> str:
    """Return a key naming the task, its version and its parameters (reduced sizes differ)."""
    params: Any = getattr(task, "parameters", None) or getattr(task, "params", None) or {}
    return f"{task.name}@v{task.version}:{json.dumps(params, sort_keys=True, default=str)}"


@lru_cache(maxsize=4096)
def code_hash(code: str) -> str:
    """Return the normalised code hash (memoised: the same sample is hashed by several nodes)."""
    return normalized_code_hash(code)


def cache_key(task: KernelTask, code: str, settings: EvalSettings) -> str:
    """Return the cache key of evaluating `code` on `task` under `settings`."""
    return short_hash(task_key(task), code_hash(code), settings.model_dump_json(), length=40)


class EvalCache:
    """A thread-safe SQLite map from `cache_key` to `EvalResult` (in memory when `path` is None)."""

    def __init__(self, path: str | Path | None) -> None:
        self._table = KeyValueTable(path, "results")
        self.path = self._table.path
        self.hits = 0
        self.misses = 0

    def get(self, task: KernelTask, code: str, settings: EvalSettings) -> EvalResult | None:
        value = self._table.get(cache_key(task, code, settings))
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return EvalResult.model_validate_json(value)

    def put(self, task: KernelTask, code: str, settings: EvalSettings, result: EvalResult) -> None:
        if result.status.value in _UNCACHED_STATUSES:
            return
        self._table.put(cache_key(task, code, settings), result.model_dump_json())

    def __len__(self) -> int:
        return len(self._table)

    def close(self) -> None:
        self._table.close()
