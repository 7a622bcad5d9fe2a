"""The run directory: one folder per optimization run, enough to resume it and to report on it.

Layout (docs/running.md):
    run.json            manifest: run id, task, the fully resolved settings, sessions
    checkpoints.sqlite  LangGraph checkpointer (thread id = run id)
    best_kernel.py      the best kernel ever evaluated
    summary.json        report.build_summary(...)
    candidates.jsonl    every candidate (code, lineage, evaluation result)
    calls.jsonl         every LLM call of the cost ledger
    evaluations.jsonl   every evaluation this run actually paid for, per session (cache misses)
    plot.png            best % of peak and cumulative cost per iteration
The evaluation and LLM caches of the graph core live next to these files.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field


def to_jsonable(value: Any) -> Any:
    """Turn state values (pydantic models, tuples, enums) into plain JSON values."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


class Session(BaseModel):
    """One process that worked on the run (the first run, then each resume)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    pid: int
    started_at: str
    ended_at: str | None = None
    wall_s: float | None = None
    resumed: bool = False
    outcome: str = "running"  # running | finished | interrupted | failed


class RunManifest(BaseModel):
    """What `accelopt resume` needs to rebuild a run: task, settings, identity."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    task_name: str
    task_params: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any]
    config_path: str | None = None
    created_at: str = Field(default_factory=lambda: utc_now())
    sessions: list[Session] = Field(default_factory=list)

    @property
    def wall_s(self) -> float:
        return sum(s.wall_s or 0.0 for s in self.sessions)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_id(task_name: str) -> str:
    """Return a sortable, unique run id: task, UTC time, a few random hex digits."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{task_name}-{stamp}-{os.urandom(2).hex()}"


@dataclass(frozen=True)
class RunDir:
    """Paths inside one run directory."""

    root: Path

    @property
    def run_id(self) -> str:
        return self.root.name

    manifest = property(lambda self: self.root / "run.json")
    checkpoints = property(lambda self: self.root / "checkpoints.sqlite")
    best_kernel = property(lambda self: self.root / "best_kernel.py")
    summary = property(lambda self: self.root / "summary.json")
    candidates = property(lambda self: self.root / "candidates.jsonl")
    calls = property(lambda self: self.root / "calls.jsonl")
    evaluations = property(lambda self: self.root / "evaluations.jsonl")
    plot = property(lambda self: self.root / "plot.png")

    def create(self) -> RunDir:
        if self.manifest.exists():
            raise FileExistsError(
                f"{self.root} already holds a run (run.json); resume it with "
                f"`accelopt resume {self.root}` or choose another --run-dir")
        self.root.mkdir(parents=True, exist_ok=True)
        return self

    def read_manifest(self) -> RunManifest:
        if not self.manifest.is_file():
            raise FileNotFoundError(
                f"{self.root} is not a run directory: {self.manifest.name} is missing "
                "(runs are created by `accelopt optimize`)")
        return RunManifest.model_validate_json(self.manifest.read_text())

    def write_manifest(self, manifest: RunManifest) -> None:
        _atomic_write(self.manifest, manifest.model_dump_json(indent=2))

    def read_summary(self) -> dict[str, Any]:
        if not self.summary.is_file():
            raise FileNotFoundError(f"{self.summary} is missing: the run has not written a summary yet")
        return json.loads(self.summary.read_text())


def connect_sqlite(path: Path, *, timeout_s: float = 30.0) -> sqlite3.Connection:
    """Open one of the run directory's SQLite files (caches) for many small, durable writes.

    WAL + synchronous=NORMAL: a committed write survives a killed process, which is what resume
    needs, without an fsync per commit; only an OS crash may lose the last writes. The default
    (rollback journal, FULL) cost ~20 ms per LLM call here (benchmarks/graph_overhead.py).
    """
    db = sqlite3.connect(path, timeout=timeout_s)
    key = str(Path(path).resolve())
    if key not in _WAL_FILES:  # the journal mode is stored in the file: switch it once per process
        db.execute("PRAGMA journal_mode=WAL")
        _WAL_FILES.add(key)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


_WAL_FILES: set[str] = set()


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_jsonl(path: Path, records: Iterable[Any]) -> None:
    """Rewrite a JSON Lines file atomically (a killed run never leaves half a file)."""
    _atomic_write(path, "".join(json.dumps(to_jsonable(r), sort_keys=True) + "\n" for r in records))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not valid JSON ({err.msg})") from None
    return records


def write_json(path: Path, value: Any) -> None:
    _atomic_write(path, json.dumps(to_jsonable(value), indent=2, sort_keys=True) + "\n")


class EvaluationLog:
    """Append one line per evaluation actually run, flushed at once so a killed process loses
    nothing (no fsync: like the run's SQLite files, only an OS crash may lose the last lines)."""

    def __init__(self, path: Path, session: int):
        self.path = path
        self.session = session
        self._lock = threading.Lock()

    def record(self, *, code_hash: str, status: str, wall_s: float, task: str) -> None:
        line = json.dumps({"session": self.session, "task": task, "code_hash": code_hash,
                           "status": status, "wall_s": round(wall_s, 6), "at": time.time()})
        with self._lock, open(self.path, "a") as fh:
            fh.write(line + "\n")
            fh.flush()


class LoggedBackend:
    """A `KernelBackend` proxy that writes every evaluation it runs to the run's evaluation log.

    The graph's evaluation cache sits in front of the backend, so this log is exactly the set of
    evaluations the run paid for (device time); resume tests read it to prove nothing was redone.
    """

    def __init__(self, inner: Any, log: EvaluationLog):
        self._inner = inner
        self._log = log
        self.name = inner.name

    def evaluate(self, task: Any, code: str, settings: Any) -> Any:
        started = time.perf_counter()
        result = self._inner.evaluate(task, code, settings)
        code_hash = result.code_hash or hashlib.sha256(code.encode()).hexdigest()[:32]
        self._log.record(code_hash=code_hash, status=str(getattr(result.status, "value", result.status)),
                         wall_s=time.perf_counter() - started, task=task.name)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
