"""Run-scoped dependencies of the graph (the LangGraph runtime context): chat models, backend,
memory store, caches and the ledger sink. They travel in the context, never in the state."""
from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from accelopt_graph.eval_cache import EvalCache
from accelopt_graph.ledger import LedgerSink, count_evaluations
from accelopt_graph.llm import LLMCache, make_models
from accelopt_graph.memory.embedding import Embedder, make_embedder
from accelopt_graph.memory.store import ExperienceStore, open_store
from accelopt_graph.parsing import kernel_function_name
from accelopt_graph.prompting import knowledge_pack
from accelopt_graph.settings import Settings
from accelopt_graph.tools.backend import EvalSettings, KernelBackend, KernelTask
from accelopt_graph.types import ROLES

EVAL_CACHE_FILE = "eval_cache.sqlite"
LLM_CACHE_FILE = "llm_cache.sqlite"


@dataclass(kw_only=True)
class OptimizerContext:
    """Everything a run needs besides its state. Build it with `make_context`."""

    settings: Settings
    task: KernelTask
    models: Mapping[str, BaseChatModel]
    backend: KernelBackend
    store: ExperienceStore | None = None
    eval_cache: EvalCache = field(default_factory=lambda: EvalCache(None))
    llm_cache: LLMCache = field(default_factory=lambda: LLMCache(None))
    ledger: LedgerSink | None = None
    run_id: str = ""
    run_dir: Path | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None  # extra event sink besides the stream
    owns_backend: bool = False  # make_context built the backend, so `close` shuts it down

    def __post_init__(self) -> None:
        missing = [role for role in ROLES if role not in self.models]
        if missing:
            raise ValueError(f"OptimizerContext.models: no chat model for roles {missing}")
        if self.ledger is None:
            self.ledger = LedgerSink(self.settings.budget)
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._embedder: Embedder | None = None
        self.evaluations_in_flight: dict[str, asyncio.Future] = {}  # cache key -> pending result
        # Evaluations block a thread until a device slot frees; one thread per slot (asyncio's
        # default pool stops at min(32, cpus + 4), fewer than a Ray cluster's slots).
        self.eval_threads = ThreadPoolExecutor(max_workers=max(4, self.settings.backend.workers),
                                               thread_name_prefix="accelopt-eval")

    @property
    def llm_semaphore(self) -> asyncio.Semaphore:
        """The cap on concurrent LLM calls, one per event loop (a context may outlive a loop)."""
        loop = id(asyncio.get_running_loop())
        if loop not in self._semaphores:
            self._semaphores = {loop: asyncio.Semaphore(self.settings.search.max_concurrency)}
        return self._semaphores[loop]

    @property
    def eval_settings(self) -> EvalSettings:
        """The backend settings that are part of every evaluation's cache key."""
        b = self.settings.backend
        return EvalSettings(backend=b.name, hardware=b.hardware, seeds=b.seeds, timeout_s=b.timeout_s,
                            memory_limit_mb=b.memory_limit_mb)

    def kernel_name_of(self, code: str) -> str | None:
        """The kernel function's name a rewrite must keep: the task's, else the one `code` defines."""
        return getattr(self.task, "kernel_name", None) or kernel_function_name(code)

    @property
    def knowledge(self) -> str:
        """The hardware knowledge pack the backend names (default: the NKI pack)."""
        info = self.backend.hardware_info(self.settings.backend.hardware)
        return knowledge_pack(str(info.get("knowledge_pack", "nki")))

    @property
    def embedder(self) -> Embedder:
        """The memory's text embedder (offline hashing by default), also used to merge similar plans."""
        if self._embedder is None:
            self._embedder = make_embedder(self.settings.memory.embedding)
        return self._embedder

    def restore(self, values: Mapping[str, Any]) -> None:
        """Seed the ledger sink from a checkpoint's state before resuming a run, so budget caps count
        what earlier processes spent (LLM calls, evaluations, wall time)."""
        self.ledger.sync(values.get("ledger") or [], evaluations=count_evaluations(values.get("history") or []),
                         wall_s=float(values.get("elapsed_s") or 0.0))

    def close(self) -> None:
        """Close the caches' databases and a backend this context built (its worker processes)."""
        self.eval_threads.shutdown(wait=False, cancel_futures=True)
        self.eval_cache.close()
        self.llm_cache.close()
        if self.owns_backend and hasattr(self.backend, "close"):
            self.backend.close()

    def emit(self, event: dict[str, Any]) -> None:
        """Send a custom stream event (ignored outside a graph run) and to `on_event`."""
        from langgraph.config import get_stream_writer

        try:
            writer = get_stream_writer()
        except RuntimeError:
            writer = None
        if writer is not None:
            writer(event)
        if self.on_event is not None:
            self.on_event(event)


def make_context(settings: Settings, task: KernelTask, *, models: Mapping[str, BaseChatModel] | None = None,
                 backend: KernelBackend | None = None, store: ExperienceStore | None = None,
                 run_dir: str | Path | None = None, run_id: str | None = None) -> OptimizerContext:
    """Build a run's context, creating from `settings` whatever is not given.

    Raises `accelopt_graph.llm.NoEndpointConfigured` when `models` is None and a role has no endpoint.
    """
    run_id = run_id or uuid.uuid4().hex[:12]
    run_path = Path(run_dir) if run_dir is not None else Path(settings.run.run_dir) / run_id
    run_path.mkdir(parents=True, exist_ok=True)
    if models is None:
        models = make_models(settings)
    owns_backend = backend is None
    if backend is None:
        backend = _make_backend(settings)
    if store is None and settings.memory.enabled:
        store = open_store(settings.memory)
    return OptimizerContext(settings=settings, task=task, models=models, backend=backend, store=store,
                            eval_cache=EvalCache(run_path / EVAL_CACHE_FILE),
                            llm_cache=LLMCache(run_path / LLM_CACHE_FILE),
                            run_id=run_id, run_dir=run_path, owns_backend=owns_backend)


def _make_backend(settings: Settings) -> KernelBackend:
    from accelopt_graph.tools.registry import make_backend

    b = settings.backend
    return make_backend(name=b.name, hardware=b.hardware, executor=b.executor, workers=b.workers,
                        ray_address=b.ray_address)
