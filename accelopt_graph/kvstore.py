"""A small thread-safe SQLite key -> text table in the run directory (the LLM and evaluation caches).

One connection per table, WAL journal and `synchronous=NORMAL`: a write costs microseconds instead
of an fsync, and a crash loses at most the last transactions, never the database (SQLite docs,
"Write-Ahead Logging"). A lost entry only means paying for that call or evaluation again.
"""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path


class KeyValueTable:
    """`get`/`put` of text values by key; in memory when `path` is None."""

    def __init__(self, path: str | Path | None, table: str) -> None:
        if not table.isidentifier():
            raise ValueError(f"KeyValueTable: table name must be an identifier, got {table!r}")
        self.path = Path(path) if path is not None else None
        self.table = table
        self._lock = threading.Lock()
        self._memory: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()

    def _check_open(self) -> None:
        if self.path is not None and self._db is None:
            raise RuntimeError(f"{self.path}: table {self.table!r} used after close()")

    def get(self, key: str) -> str | None:
        with self._lock:
            self._check_open()
            if key in self._memory or self._db is None:
                return self._memory.get(key)
            row = self._db.execute(f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
            if row is not None:
                self._memory[key] = row[0]
            return row[0] if row else None

    def put(self, key: str, value: str) -> None:
        with self._lock:
            self._check_open()
            self._memory[key] = value
            if self._db is not None:
                self._db.execute(f"INSERT OR REPLACE INTO {self.table} (key, value) VALUES (?, ?)", (key, value))
                self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return len(self._memory)
            return self._db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
