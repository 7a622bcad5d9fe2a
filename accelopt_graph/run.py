"""Headless optimization runs: build the run's dependencies, drive the graph, keep the run directory.

A run is one LangGraph thread (thread id = run id) checkpointed to SQLite inside its run directory,
so `resume_optimization(run_dir)` continues a killed run from its last finished step. Finished LLM
calls and evaluations are never paid twice: the checkpointer keeps the writes of finished branches,
and the graph core's LLM and evaluation caches (also in the run directory) answer the rest.
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from accelopt_graph.graph import compile_graph
from accelopt_graph.llm import NoEndpointConfigured
from accelopt_graph.report import build_summary
from accelopt_graph.rundir import (EvaluationLog, LoggedBackend, RunDir, RunManifest, Session, utc_now,
                                   new_run_id, to_jsonable, write_json, write_jsonl)
from accelopt_graph.settings import Settings

ProgressCallback = Callable[[Mapping[str, Any]], None]

# Each round is a handful of supersteps (digest, plan, execute, evaluate, select); this bounds a
# run of a few hundred rounds, far beyond the paper's 16, without hiding a real cycle forever.
RECURSION_LIMIT = 10_000
_FINISHED = object()  # marker: the checkpointed run has already ended


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """What a finished (or interrupted) session leaves behind."""

    run_dir: RunDir
    summary: dict[str, Any]
    values: dict[str, Any]
    finished: bool

    @property
    def run_id(self) -> str:
        return self.run_dir.run_id


def create_run(settings: Settings, task_name: str, task_params: Mapping[str, Any] | None = None, *,
               run_dir: str | Path | None = None, config_path: str | Path | None = None) -> RunDir:
    """Create a run directory and its manifest (`run_dir` or `<settings.run.run_dir>/<run id>`)."""
    root = Path(run_dir) if run_dir is not None else Path(settings.run.run_dir) / new_run_id(task_name)
    run = RunDir(root.resolve()).create()
    run.write_manifest(RunManifest(
        run_id=run.run_id, task_name=task_name, task_params=dict(task_params or {}),
        settings=settings.model_dump(mode="json"),
        config_path=str(config_path) if config_path is not None else None))
    return run


def run_optimization(settings: Settings, task_name: str, task_params: Mapping[str, Any] | None = None, *,
                     run_dir: str | Path | None = None, config_path: str | Path | None = None,
                     models: Mapping[str, Any] | None = None, backend: Any = None, store: Any = None,
                     task: Any = None, on_event: ProgressCallback | None = None) -> RunOutcome:
    """Optimize one task from scratch and write the run directory; return its summary.

    Dependencies left as None are built from `settings`; `task` (a `KernelTask`) replaces the
    NKIBench task named `task_name`, for user tasks and tests.
    """
    return asyncio.run(arun_optimization(
        settings, task_name, task_params, run_dir=run_dir, config_path=config_path, models=models,
        backend=backend, store=store, task=task, on_event=on_event))


async def arun_optimization(settings: Settings, task_name: str, task_params: Mapping[str, Any] | None = None,
                            *, run_dir: str | Path | None = None, config_path: str | Path | None = None,
                            models: Mapping[str, Any] | None = None, backend: Any = None, store: Any = None,
                            task: Any = None, on_event: ProgressCallback | None = None) -> RunOutcome:
    """Async form of `run_optimization` (for callers that already run an event loop)."""
    try:
        run = create_run(settings, task_name, task_params, run_dir=run_dir, config_path=config_path)
    except FileExistsError as err:
        raise RunSetupError(str(err)) from err
    try:
        return await _drive(run, resumed=False, models=models, backend=backend, store=store, task=task,
                            on_event=on_event)
    except RunSetupError:
        shutil.rmtree(run.root, ignore_errors=True)  # nothing ran: leave no half-made run behind
        raise


def resume_optimization(run_dir: str | Path, *, models: Mapping[str, Any] | None = None, backend: Any = None,
                        store: Any = None, task: Any = None,
                        on_event: ProgressCallback | None = None) -> RunOutcome:
    """Continue a run from its last checkpoint; a finished run only has its artifacts rewritten."""
    return asyncio.run(aresume_optimization(run_dir, models=models, backend=backend, store=store, task=task,
                                            on_event=on_event))


async def aresume_optimization(run_dir: str | Path, *, models: Mapping[str, Any] | None = None,
                               backend: Any = None, store: Any = None, task: Any = None,
                               on_event: ProgressCallback | None = None) -> RunOutcome:
    """Async form of `resume_optimization`."""
    return await _drive(RunDir(Path(run_dir).resolve()), resumed=True, models=models, backend=backend,
                        store=store, task=task, on_event=on_event)


class RunSetupError(RuntimeError):
    """The run could not start: no endpoint, unknown task or backend, bad settings. Nothing ran."""


def _setup_message(err: Exception) -> str:
    return str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)


def build_context(manifest: RunManifest, run: RunDir, *, log: EvaluationLog, models: Mapping[str, Any] | None,
                  backend: Any, store: Any, task: Any = None) -> Any:
    """Build the graph's runtime context for this session, with the evaluation log in front of the backend."""
    from accelopt_graph.context import make_context
    from accelopt_graph.nkibench import load_task

    settings = Settings.model_validate(manifest.settings)
    if task is None:
        task = load_task(manifest.task_name, params=manifest.task_params or None)
    elif task.name != manifest.task_name:
        raise ValueError(f"{run.manifest}: the run optimizes task {manifest.task_name!r}, "
                         f"but task {task.name!r} was given")
    context = make_context(settings, task, models=dict(models) if models else None,
                           backend=LoggedBackend(backend, log) if backend is not None else None,
                           store=store, run_dir=run.root, run_id=run.run_id)
    if backend is None:
        context = dataclasses.replace(context, backend=LoggedBackend(context.backend, log))
    return context


async def _drive(run: RunDir, *, resumed: bool, models: Mapping[str, Any] | None, backend: Any,
                 store: Any, task: Any, on_event: ProgressCallback | None) -> RunOutcome:
    manifest = run.read_manifest()
    live = [s for s in manifest.sessions if s.outcome == "running" and s.pid != os.getpid() and _alive(s.pid)]
    if live:
        raise RunSetupError(f"{run.root} is being worked on by process {live[-1].pid} (session "
                            f"{live[-1].index}); stop it first, or wait for it to finish")
    session = Session(index=len(manifest.sessions), pid=os.getpid(), started_at=utc_now(), resumed=resumed)
    try:
        context = build_context(manifest, run, log=EvaluationLog(run.evaluations, session.index),
                                models=models, backend=backend, store=store, task=task)
    except (NoEndpointConfigured, KeyError, ValueError, FileNotFoundError, ImportError) as err:
        raise RunSetupError(f"cannot start the run in {run.root}: {_setup_message(err)}") from err
    manifest.sessions.append(session)
    run.write_manifest(manifest)
    started = time.perf_counter()
    config = {"configurable": {"thread_id": run.run_id}, "recursion_limit": RECURSION_LIMIT}
    values: dict[str, Any] = {}
    try:
        async with AsyncSqliteSaver.from_conn_string(str(run.checkpoints)) as saver:
            await saver.setup()
            # WAL (set by the saver) + synchronous=NORMAL: a commit survives a killed process, which
            # is what resume needs; only an OS crash may lose the last steps. FULL would fsync on
            # every checkpoint write, i.e. several times per LLM call at paper fan-out.
            await saver.conn.execute("PRAGMA synchronous=NORMAL")
            graph = compile_graph(checkpointer=saver)
            snapshot = await graph.aget_state(config)
            values = dict(snapshot.values or {})
            if not values:
                graph_input: Any = {"task_name": manifest.task_name,
                                    "task_params": manifest.task_params or None}
            elif snapshot.next:
                graph_input = None  # continue from the last checkpoint
                context.restore(values)  # budget caps count what earlier sessions spent
            else:
                graph_input = _FINISHED
            if graph_input is not _FINISHED:
                written_iteration = values.get("iteration")
                async for _namespace, mode, chunk in graph.astream(
                        graph_input, config, context=context, stream_mode=["custom", "values"],
                        subgraphs=True):
                    if mode == "custom":
                        if on_event is not None and isinstance(chunk, Mapping):
                            on_event(chunk)
                    elif not _namespace and isinstance(chunk, Mapping):
                        values = dict(chunk)
                        if values.get("iteration") != written_iteration and values.get("history"):
                            # Once per round: partial artifacts, and the session's wall time so far
                            # (a killed session keeps the last value).
                            written_iteration = values.get("iteration")
                            session.wall_s = time.perf_counter() - started
                            run.write_manifest(manifest)
                            write_artifacts(run, manifest, values, status="running", plot=False)
                snapshot = await graph.aget_state(config)
                values = dict(snapshot.values or values)
            finished = not snapshot.next
    except BaseException as err:
        session.outcome = "failed" if isinstance(err, Exception) else "interrupted"
        _close_session(run, manifest, session, started)
        if values.get("history"):
            write_artifacts(run, manifest, values, status=session.outcome, plot=False)
        raise
    session.outcome = "finished" if finished else "interrupted"
    _close_session(run, manifest, session, started)
    summary = write_artifacts(run, manifest, values, status="finished" if finished else "interrupted")
    return RunOutcome(run_dir=run, summary=summary, values=values, finished=finished)


def run_status(run: RunDir) -> str:
    """Return the run's status: finished, running (a live process works on it), failed or interrupted."""
    manifest = run.read_manifest()
    if not manifest.sessions:
        return "interrupted"
    last = manifest.sessions[-1]
    if last.outcome == "running":
        return "running" if _alive(last.pid) else "interrupted"
    return last.outcome


def _alive(pid: int) -> bool:
    """Return True if a process with this pid exists on this machine (sessions run locally)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _close_session(run: RunDir, manifest: RunManifest, session: Session, started: float) -> None:
    session.ended_at = utc_now()
    session.wall_s = time.perf_counter() - started
    run.write_manifest(manifest)


def write_artifacts(run: RunDir, manifest: RunManifest, values: Mapping[str, Any], *, status: str,
                    plot: bool = True) -> dict[str, Any]:
    """Write best kernel, summary, candidates, calls (and the plot) from the graph's state."""
    from accelopt_graph.plot import plot_series

    candidates = to_jsonable(values.get("history") or [])
    calls = to_jsonable(values.get("ledger") or [])
    best = to_jsonable(values.get("best"))
    summary = build_summary(
        run_id=run.run_id, task_name=manifest.task_name, task_params=manifest.task_params,
        candidates=candidates, calls=calls, baseline=to_jsonable(values.get("baseline")), best=best,
        stop_reason=values.get("stop_reason"), iteration=values.get("iteration"),
        experiences_added=values.get("experiences_added") or (),
        status=status, wall_s=manifest.wall_s,
        sessions=[s.model_dump() for s in manifest.sessions])
    write_jsonl(run.candidates, candidates)
    write_jsonl(run.calls, calls)
    if best and best.get("code"):
        run.best_kernel.write_text(best["code"])
    if plot and summary["series"]:
        plot_series(summary["series"], run.plot, title=f"{manifest.task_name} ({run.run_id})",
                    simulated=summary.get("source") != "hardware",
                    baseline_percent_of_peak=(summary.get("baseline") or {}).get("percent_of_peak"))
    write_json(run.summary, summary)
    return summary
