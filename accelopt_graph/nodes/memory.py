"""Optimization-memory nodes: retrieve experiences for a candidate's planner calls, store new ones."""
from __future__ import annotations

import asyncio
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from accelopt_graph.context import OptimizerContext
from accelopt_graph.memory.store import RetrievalQuery
from accelopt_graph.prompting import bottleneck_summary, format_experiences
from accelopt_graph.state import CandidateBranch, OptimizerState, PlanBranch


async def retrieve_experiences(state: CandidateBranch, runtime: Runtime[OptimizerContext]) -> Command[Literal["plan"]]:
    """Retrieve the ExpN most useful experiences for one beam candidate, then fan out its N plans."""
    ctx = runtime.context
    candidate = state["candidate"]
    experiences = []
    if ctx.store is not None and ctx.settings.memory.capacity > 0:
        query = RetrievalQuery(task=ctx.task.name, family=getattr(ctx.task, "family", ""),
                               semantics=getattr(ctx.task, "description", ""), code=candidate.code,
                               bottleneck=bottleneck_summary(candidate.result),
                               hardware=ctx.settings.backend.hardware, backend=ctx.settings.backend.name)
        try:
            experiences = await asyncio.to_thread(ctx.store.retrieve, query, ctx.settings.memory.capacity)
        except Exception as err:  # noqa: BLE001 - a memory outage degrades planning, it does not stop it
            ctx.emit({"event": "memory_error", "iteration": state["iteration"], "error": f"{type(err).__name__}: {err}"})
    rendered, ids = format_experiences(experiences), [e.id for e in experiences]
    sends = [Send("plan", PlanBranch(candidate=candidate, rank=state["rank"], iteration=state["iteration"],
                                     index=i, experiences=rendered, experience_ids=ids))
             for i in range(ctx.settings.search.plans_per_candidate)]
    return Command(goto=sends)


async def update_memory(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> dict:
    """Store this round's summarized experiences; their ids go to `experiences_added`."""
    ctx = runtime.context
    items = sorted(state.get("experiences") or [], key=lambda e: (e.provenance.sample_id, e.id))
    if not items or ctx.store is None:
        return {}
    try:
        ids = await asyncio.to_thread(ctx.store.add, items)
    except Exception as err:  # noqa: BLE001 - losing this round's experiences must not lose the run
        ctx.emit({"event": "memory_error", "iteration": state.get("iteration", 0),
                  "error": f"{type(err).__name__}: {err}"})
        return {}
    return {"experiences_added": list(ids)}
