"""The `graph` symbol that langgraph.json exposes to LangGraph Studio and `langgraph dev`.

The LangGraph server owns persistence, so this graph is compiled without a checkpointer. A server
run carries only JSON (`{"task_name": ..., "task_params": ...}`), while the optimizer needs live
objects (chat models, backend, memory store) in its runtime context; the `optimize` node builds
them from the config named by $ACCELOPT_CONFIG (once per process, on first use, never at import,
so the server starts even before an endpoint is configured), gives each run its own caches and
ledger, and runs the optimizer as a subgraph so its steps and custom progress events stream through.
"""
from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from accelopt_graph.state import OptimizerInput, RunResult

CONFIG_ENV = "ACCELOPT_CONFIG"
RUNS_DIR_ENV = "ACCELOPT_SERVER_RUNS"
OUTPUT_KEYS = tuple(RunResult.__annotations__)


class ServerState(RunResult, total=False):
    """The server graph's state: the run's input plus what the run reports (pydantic builds Studio's
    JSON schemas from these typing_extensions TypedDicts)."""

    task_name: str
    task_params: dict[str, Any] | None


_shared: dict[str, Any] = {}
_lock = threading.Lock()


def server_settings() -> Any:
    """Load the server's settings from $ACCELOPT_CONFIG (project defaults when it is unset)."""
    from accelopt_graph.settings import Settings

    path = os.environ.get(CONFIG_ENV)
    return Settings.from_yaml(path) if path else Settings()


def _shared_deps() -> dict[str, Any]:
    """Build the process-wide dependencies once: settings, chat models, backend, memory store."""
    from accelopt_graph.context import _make_backend
    from accelopt_graph.llm import make_models
    from accelopt_graph.memory.store import open_store

    with _lock:
        if not _shared:
            settings = server_settings()
            _shared.update(settings=settings, models=make_models(settings), backend=_make_backend(settings),
                           store=open_store(settings.memory) if settings.memory.enabled else None)
        return _shared


def context_for(task_name: str, task_params: dict[str, Any] | None, run_id: str) -> Any:
    """Return a fresh run context (own caches and ledger in its own folder) over the shared deps."""
    from accelopt_graph.context import make_context
    from accelopt_graph.nkibench import load_task

    deps = _shared_deps()
    settings = deps["settings"]
    runs = Path(os.environ.get(RUNS_DIR_ENV) or Path(settings.run.run_dir) / "server")
    return make_context(settings, load_task(task_name, params=task_params or None), models=deps["models"],
                        backend=deps["backend"], store=deps["store"], run_dir=runs / run_id, run_id=run_id)


async def optimize(state: ServerState, config: RunnableConfig) -> dict[str, Any]:
    """Run the AccelOpt optimizer on the requested task and return its result."""
    from accelopt_graph.graph import compile_graph

    run_id = str((config.get("metadata") or {}).get("run_id") or uuid.uuid4().hex[:12])
    context = context_for(state["task_name"], state.get("task_params"), run_id)
    result = await compile_graph().ainvoke(
        {"task_name": state["task_name"], "task_params": state.get("task_params")}, config,
        context=context)
    return {key: result.get(key) for key in OUTPUT_KEYS if key in result}


def build_server_graph() -> Any:
    """Compile the server's graph (no checkpointer: the LangGraph server supplies persistence)."""
    builder = StateGraph(ServerState, input_schema=OptimizerInput)
    builder.add_node(optimize)
    builder.add_edge(START, "optimize")
    builder.add_edge("optimize", END)
    return builder.compile(name="accelopt")


graph = build_server_graph()
