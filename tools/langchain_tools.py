"""`compile_kernel`, `run_kernel`, `profile_kernel` as structured LangChain tools over any backend.

Other agents (a ReAct agent, another LangGraph graph) call them with a task name and kernel source;
each goes through `KernelBackend.evaluate`, so the sandbox, the device slots and the verdicts are
the same as in the optimizer. Tasks come from a mapping or a resolver such as
`accelopt_graph.nkibench.load_task` (tools may not import nkibench; the caller passes it in).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus, KernelBackend, KernelTask
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

TaskSource = Mapping[str, KernelTask] | Callable[[str], KernelTask]
_NOT_COMPILED = {EvalStatus.NO_CODE, EvalStatus.COMPILE_ERROR, EvalStatus.REJECTED}


class KernelInput(BaseModel):
    """Arguments of every kernel tool."""

    task: str = Field(description="Benchmark task name, e.g. 'silu' or 'matmul'.")
    code: str = Field(description="Full Python source of the NKI kernel file; the kernel "
                                  "function must be named `kernel`.")


def _resolve(tasks: TaskSource, name: str) -> KernelTask:
    if callable(tasks) and not isinstance(tasks, Mapping):
        return tasks(name)
    if name not in tasks:
        raise ValueError(f"unknown task {name!r}; known tasks: {sorted(tasks)}")
    return tasks[name]


def _compile_view(r: EvalResult) -> dict[str, Any]:
    return {"compiled": r.status not in _NOT_COMPILED, "status": r.status.value, "error": r.error}


def _run_view(r: EvalResult) -> dict[str, Any]:
    return {"correct": r.status is EvalStatus.OK, "status": r.status.value, "error": r.error,
            "rel_l2": r.rel_l2, "seeds": list(r.seeds)}


def _profile_view(r: EvalResult) -> dict[str, Any]:
    return {**_run_view(r), "latency_ms": r.latency_ms, "latency_stats": r.latency_stats,
            "percent_of_peak": r.percent_of_peak, "peak_latency_ms": r.peak_latency_ms,
            "counters": r.counters, "source": r.source, "hardware": r.hardware,
            "backend": r.backend}


def make_kernel_tools(backend: KernelBackend, tasks: TaskSource, *,
                      settings: EvalSettings | None = None) -> list[StructuredTool]:
    """Build the three tools bound to `backend`, the task source and evaluation settings.

    `compile_kernel` checks on the first seed only (cheap); `run_kernel` and `profile_kernel` run
    the full check; `profile_kernel` also returns latency and counters, labelled with `source`
    ("simulator" estimates are never measurements).
    """
    settings = settings or EvalSettings(backend=backend.name)
    first_seed = settings.model_copy(update={"seeds": settings.seeds[:1]})

    def tool(name: str, description: str, view: Callable[[EvalResult], dict],
             tool_settings: EvalSettings) -> StructuredTool:
        def call(task: str, code: str) -> dict[str, Any]:
            return view(backend.evaluate(_resolve(tasks, task), code, tool_settings))

        async def acall(task: str, code: str) -> dict[str, Any]:
            # evaluate blocks on a device slot and a sandbox: keep it off the event loop
            return await asyncio.to_thread(call, task, code)

        call.__name__ = acall.__name__ = name
        return StructuredTool.from_function(func=call, coroutine=acall, name=name,
                                            description=description, args_schema=KernelInput)

    return [
        tool("compile_kernel", "Check that an NKI kernel compiles (and loads) for a task; "
             "returns the compiler error otherwise.", _compile_view, first_seed),
        tool("run_kernel", "Run an NKI kernel on the task's correctness seeds and adversarial "
             "cases; returns whether it is correct and the worst relative L2 error.",
             _run_view, settings),
        tool("profile_kernel", "Check, time and profile an NKI kernel; returns latency, percent "
             "of the task's peak and neuron-profile counters.", _profile_view, settings),
    ]
