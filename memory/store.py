"""The persistent optimization memory on Chroma (algorithm.md, "Memory (ExpN)").

One collection per namespace (config prefix + hardware + backend), because an experience measured
on one accelerator or backend does not transfer to another. The store computes embeddings itself
(`memory.embedding`), so Chroma's model-downloading default embedding function is never used.
"""
from __future__ import annotations

import builtins
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlparse

import chromadb
import numpy as np
from accelopt_graph.memory.config import Eviction, MemoryConfig
from accelopt_graph.memory.embedding import Embedder, make_embedder
from accelopt_graph.memory.eviction import StoredItem, choose_evictions
from accelopt_graph.memory.experience import Experience, Polarity
from accelopt_graph.memory.retrieval import (
    RetrievalQuery,
    combine,
    combine_batch,
    experience_parts,
    mmr_select,
    query_parts,
)
from chromadb.config import Settings as ChromaSettings
from pydantic import ValidationError

__all__ = ["ChromaExperienceStore", "ExperienceStore", "NullExperienceStore", "RetrievalQuery", "open_store"]


@runtime_checkable
class ExperienceStore(Protocol):
    """What the graph and the CLI need from the optimization memory.

    add: store items durably; ids derive from content + provenance, so re-adding is a no-op.
    retrieve: the k (default ExpN) most useful items for one planner call (MMR, one per source,
    both polarities). search: plain similarity to free text, for people. get / list / count /
    delete: inspection and curation. export_jsonl / import_jsonl: sharing (JSON Lines, lossless).
    prune: apply a capacity policy; returns the evicted ids.
    """

    def add(self, items: Sequence[Experience]) -> list[str]: ...
    def retrieve(self, query: RetrievalQuery, k: int | None = None) -> list[Experience]: ...
    def search(self, text: str, k: int = 10, *, hardware: str | None = None,
               backend: str | None = None) -> list[tuple[Experience, float]]: ...
    def get(self, id: str) -> Experience: ...
    def list(self, *, task: str | None = None, polarity: Polarity | None = None, run_id: str | None = None,
             hardware: str | None = None, backend: str | None = None,
             limit: int | None = None) -> list[Experience]: ...
    def count(self) -> int: ...
    def delete(self, ids: Sequence[str]) -> int: ...
    def export_jsonl(self, path: str | Path) -> int: ...
    def import_jsonl(self, path: str | Path) -> list[str]: ...
    def prune(self, *, policy: Eviction | None = None, max_items: int | None = None,
              run_id: str | None = None, task: str | None = None, dry_run: bool = False) -> list[str]: ...


_PREFIX_KEY = "accelopt_prefix"
_NAME_CHARS = re.compile(r"[^a-zA-Z0-9._-]+")


def collection_name(prefix: str, hardware: str, backend: str) -> str:
    """Chroma collection name of a namespace (Chroma allows [a-zA-Z0-9._-], 3-512 characters)."""
    name = _NAME_CHARS.sub("-", f"{prefix}.{hardware}.{backend}").strip("._-")
    if len(name) < 3:
        raise ValueError(f"memory collection name {name!r} is too short; set memory.collection")
    return name[:512]


def _where(**equal: Any) -> dict[str, Any] | None:
    clauses = [{k: v} for k, v in equal.items() if v is not None]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _metadata(item: Experience) -> dict[str, Any]:
    """Chroma metadata: the whole item as JSON (lossless round trip) plus filterable scalars."""
    return {
        "json": item.model_dump_json(),
        "task": item.task, "family": item.family, "polarity": item.polarity, "speedup": item.speedup,
        "title": item.title, "hardware": item.hardware, "backend": item.backend,
        "run_id": item.provenance.run_id, "iteration": item.provenance.iteration,
        "parent_id": item.provenance.parent_id, "plan_id": item.provenance.plan_id,
        "created_at_s": item.created_at.timestamp(),
    }


def _decode(metadata: dict[str, Any]) -> Experience:
    return Experience.model_validate_json(metadata["json"])


def _source(item: Experience) -> tuple[str, str]:
    # Items without lineage (hand-written, imported) count as their own source.
    return item.source_key if any(item.source_key) else (item.id, "")


class ChromaExperienceStore:
    """`ExperienceStore` on a Chroma client (embedded `PersistentClient` or `HttpClient`)."""

    def __init__(self, client: Any, *, embedder: Embedder, config: MemoryConfig | None = None) -> None:
        self.client = client
        self.embedder = embedder
        self.config = config or MemoryConfig()
        self.prefix = ".".join(p for p in (self.config.collection, self.config.namespace) if p)
        self._collections: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        where = self.config.server_url or str(self.config.path)
        return f"memory store {where} (collection prefix {self.prefix!r}, embedding {self.embedder.spec})"

    def _collection(self, hardware: str, backend: str, *, create: bool) -> Any | None:
        key = (hardware, backend)
        with self._lock:
            if key in self._collections:
                return self._collections[key]
            name = collection_name(self.prefix, hardware, backend)
            meta = {_PREFIX_KEY: self.prefix, "hardware": hardware, "backend": backend,
                    "embedding": self.embedder.spec}
            if create:
                col = self.client.get_or_create_collection(
                    name, embedding_function=None, metadata=meta, configuration={"hnsw": {"space": "cosine"}})
            else:
                found = [c for c in self.client.list_collections() if c.name == name]
                if not found:
                    return None
                col = self.client.get_collection(name, embedding_function=None)
            stored = (col.metadata or {}).get("embedding")
            if stored != self.embedder.spec:
                raise ValueError(f"{self.describe()}: collection {name!r} was built with embedding {stored!r}, "
                                 f"not {self.embedder.spec!r}; set memory.embedding to match or use another "
                                 "memory.collection")
            self._collections[key] = col
            return col

    def _all_collections(self, hardware: str | None = None, backend: str | None = None) -> builtins.list[Any]:
        cols = []
        for c in self.client.list_collections():
            meta = c.metadata or {}
            if meta.get(_PREFIX_KEY) != self.prefix:
                continue
            if hardware is not None and meta.get("hardware") != hardware:
                continue
            if backend is not None and meta.get("backend") != backend:
                continue
            cols.append(self._collection(meta["hardware"], meta["backend"], create=False))
        return cols

    def _vectors(self, items: Sequence[Experience]) -> np.ndarray:
        parts = [experience_parts(i) for i in items]
        flat = self.embedder.embed([p for ps in parts for p in ps])
        return combine_batch(flat.reshape(len(items), len(parts[0]), -1))

    def add(self, items: Sequence[Experience]) -> list[str]:
        """Store items (ids from content + provenance); an id already stored is left untouched."""
        with_ids = [i.with_id() for i in items]
        groups: dict[tuple[str, str], dict[str, Experience]] = {}
        for item in with_ids:
            groups.setdefault((item.hardware, item.backend), {})[item.id] = item
        batch = self.client.get_max_batch_size()
        for (hardware, backend), by_id in groups.items():
            col = self._collection(hardware, backend, create=True)
            existing = set(col.get(ids=list(by_id), include=[])["ids"])
            new = [i for i in by_id.values() if i.id not in existing]
            for start in range(0, len(new), batch):
                chunk = new[start:start + batch]
                col.add(ids=[i.id for i in chunk], embeddings=self._vectors(chunk),
                        documents=[f"{i.title}\n{i.description}" for i in chunk],
                        metadatas=[_metadata(i) for i in chunk])
            if new and self.config.eviction != "unlimited":
                self._evict(col, policy=self.config.eviction, max_items=self.config.max_items, where=None,
                            protect={i.id for i in new})
        return [i.id for i in with_ids]

    def retrieve(self, query: RetrievalQuery, k: int | None = None) -> list[Experience]:
        """Return up to k (default: capacity, ExpN) diverse, relevant items for one planner call."""
        k = self.config.capacity if k is None else k
        col = self._collection(query.hardware, query.backend, create=False)
        total = col.count() if col is not None else 0
        if k <= 0 or total == 0:
            return []
        q = combine(self.embedder.embed(query_parts(query)))
        pool = min(total, max(self.config.candidate_pool, 4 * k) + len(query.exclude_ids))
        found = col.query(query_embeddings=q[None, :], n_results=pool, include=["metadatas", "embeddings"])
        excluded = set(query.exclude_ids)
        rows = [(id_, m, e) for id_, m, e in zip(found["ids"][0], found["metadatas"][0], found["embeddings"][0])
                if id_ not in excluded]
        if not rows:
            return []
        vectors = np.asarray([e for _, _, e in rows], dtype=np.float32)
        relevance = vectors @ q
        floor = self.config.min_relevance
        keep = relevance >= floor if floor > -1.0 else np.ones(len(relevance), dtype=bool)  # -1: no floor
        if not keep.any():
            return []
        items = [_decode(m) for (_, m, _), kept in zip(rows, keep) if kept]
        vectors, relevance = vectors[keep], relevance[keep]
        picked = mmr_select(relevance, vectors @ vectors.T, k=k, lambda_=self.config.mmr_lambda,
                            sources=[_source(i) for i in items], polarities=[i.polarity for i in items],
                            recency=[i.created_at.timestamp() for i in items],
                            min_polarity_share=self.config.min_polarity_share)
        return [items[i] for i in picked]

    def search(self, text: str, k: int = 10, *, hardware: str | None = None,
               backend: str | None = None) -> list[tuple[Experience, float]]:
        """Rank stored items by plain similarity to free text (for people; the planner uses `retrieve`)."""
        q = combine(self.embedder.embed([text]))
        hits: list[tuple[Experience, float]] = []
        for col in self._all_collections(hardware, backend):
            n = col.count()
            if n == 0:
                continue
            found = col.query(query_embeddings=q[None, :], n_results=min(k, n), include=["metadatas", "distances"])
            hits += [(_decode(m), 1.0 - d) for m, d in zip(found["metadatas"][0], found["distances"][0])]
        return sorted(hits, key=lambda h: -h[1])[:k]

    def get(self, id: str) -> Experience:
        for col in self._all_collections():
            found = col.get(ids=[id], include=["metadatas"])
            if found["ids"]:
                return _decode(found["metadatas"][0])
        raise KeyError(f"no experience with id {id!r} in {self.describe()}")

    def list(self, *, task: str | None = None, polarity: Polarity | None = None, run_id: str | None = None,
             hardware: str | None = None, backend: str | None = None,
             limit: int | None = None) -> list[Experience]:
        """Return matching items, newest first."""
        where = _where(task=task, polarity=polarity, run_id=run_id)
        items = [_decode(m) for col in self._all_collections(hardware, backend)
                 for m in col.get(where=where, include=["metadatas"])["metadatas"]]
        items.sort(key=lambda i: (i.created_at, i.id), reverse=True)
        return items if limit is None else items[:limit]

    def count(self) -> int:
        return sum(col.count() for col in self._all_collections())

    def delete(self, ids: Sequence[str]) -> int:
        removed = 0
        for col in self._all_collections():
            present = col.get(ids=list(ids), include=[])["ids"]
            if present:
                col.delete(ids=present)
                removed += len(present)
        return removed

    def export_jsonl(self, path: str | Path) -> int:
        """Write every item, oldest first, one JSON object per line; return how many."""
        items = sorted(self.list(), key=lambda i: (i.created_at, i.id))
        Path(path).write_text("".join(i.model_dump_json() + "\n" for i in items))
        return len(items)

    def import_jsonl(self, path: str | Path) -> list[str]:
        """Add the items of a JSON Lines file (ids and timestamps preserved; known ids skipped)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"memory import: no such file {path}")
        items = []
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(Experience.model_validate_json(line))
            except ValidationError as err:
                raise ValueError(f"{path}:{number}: not an experience item: {err}") from err
        return self.add(items)

    def prune(self, *, policy: Eviction | None = None, max_items: int | None = None,
              run_id: str | None = None, task: str | None = None, dry_run: bool = False) -> list[str]:
        """Apply an eviction policy (default: the configured one) within each namespace, optionally
        restricted to one run or task (FIFO per run is the paper's text); return the evicted ids
        (with `dry_run`, only say which ids would go)."""
        policy = policy or self.config.eviction
        max_items = self.config.max_items if max_items is None else max_items
        deleted = []
        for col in self._all_collections():
            deleted += self._evict(col, policy=policy, max_items=max_items, where=_where(run_id=run_id, task=task),
                                   dry_run=dry_run)
        return deleted

    def _evict(self, col: Any, *, policy: Eviction, max_items: int | None,
               where: dict[str, Any] | None, dry_run: bool = False, protect: frozenset[str] | set[str] = frozenset(),
               ) -> list[str]:
        metas = col.get(where=where, include=["metadatas"])
        stored = [StoredItem(id=i, created_at_s=m["created_at_s"], speedup=m["speedup"])
                  for i, m in zip(metas["ids"], metas["metadatas"])]
        doomed = choose_evictions(stored, policy=policy, max_items=max_items, seed=self.config.seed,
                                  now_s=time.time(), half_life_days=self.config.score_half_life_days,
                                  protect=protect)
        if doomed and not dry_run:
            col.delete(ids=doomed)
        return doomed


class NullExperienceStore:
    """The memory switched off (`memory.enabled: false`, the paper's no-memory ablation): stores and
    retrieves nothing."""

    def add(self, items: Sequence[Experience]) -> list[str]:
        return [i.with_id().id for i in items]

    def retrieve(self, query: RetrievalQuery, k: int | None = None) -> list[Experience]:
        return []

    def search(self, text: str, k: int = 10, **_: Any) -> list[tuple[Experience, float]]:
        return []

    def get(self, id: str) -> Experience:
        raise KeyError(f"no experience with id {id!r}: the memory is disabled (memory.enabled=false)")

    def list(self, **_: Any) -> list[Experience]:
        return []

    def count(self) -> int:
        return 0

    def delete(self, ids: Sequence[str]) -> int:
        return 0

    def export_jsonl(self, path: str | Path) -> int:
        Path(path).write_text("")
        return 0

    def import_jsonl(self, path: str | Path) -> list[str]:
        raise RuntimeError("memory import: the memory is disabled (memory.enabled=false)")

    def prune(self, **_: Any) -> list[str]:
        return []


def make_client(config: MemoryConfig) -> Any:
    """Build the Chroma client the config names: HttpClient for `server_url`, else PersistentClient."""
    settings = ChromaSettings(anonymized_telemetry=False)
    if config.server_url:
        url = urlparse(config.server_url if "://" in config.server_url else f"http://{config.server_url}")
        if not url.hostname:
            raise ValueError(f"memory.server_url={config.server_url!r}: expected http://HOST:PORT")
        return chromadb.HttpClient(host=url.hostname, port=url.port or (443 if url.scheme == "https" else 8000),
                                   ssl=url.scheme == "https", settings=settings)
    config.path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(config.path), settings=settings)


def open_store(config: MemoryConfig) -> ExperienceStore:
    """Open the experience store a `MemoryConfig` describes."""
    if not config.enabled:
        return NullExperienceStore()
    return ChromaExperienceStore(make_client(config), embedder=make_embedder(config.embedding), config=config)
