"""The AccelOpt graph (AccelOpt paper: beam search over planner -> executor -> summarizer, with an
optimization memory), as a LangGraph `StateGraph` with `Send` fan-out and reducer joins.

    start -> retrieve_experiences (per beam candidate) -> plan (N per candidate) -> dispatch_plans
          -> execute (K per plan) [-> fix ...] -> digest (deferred join) -> summarize (per pair)
          -> update_memory -> select -> retrieve_experiences ... | END

Nodes are async: run the compiled graph with `ainvoke` / `astream`. Dependencies travel in the
runtime context (`OptimizerContext`, built by `accelopt_graph.context.make_context`).
"""
from __future__ import annotations

import sqlite3

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy

from accelopt_graph.context import OptimizerContext
from accelopt_graph.nodes.executor import execute
from accelopt_graph.nodes.fixer import fix
from accelopt_graph.nodes.memory import retrieve_experiences, update_memory
from accelopt_graph.nodes.planner import plan
from accelopt_graph.nodes.summarizer import summarize
from accelopt_graph.nodes.supervisor import dispatch_plans, digest, route_to_candidates, route_to_samples, select, start
from accelopt_graph.memory.experience import Experience, Provenance
from accelopt_graph.state import OptimizerInput, OptimizerOutput, OptimizerState
from accelopt_graph.tools.backend import EvalResult, EvalStatus
from accelopt_graph.types import Candidate, ExperiencePair, FixAttempt, LLMCall, Plan

# LLM failures are handled inside the nodes (recorded as failed samples); what is left to retry at
# node level is a transiently locked cache database in the run directory.
CACHE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, retry_on=sqlite3.OperationalError)


# Types the state holds; checkpoint deserialization allows exactly these (LangGraph's msgpack allowlist).
CHECKPOINT_TYPES: tuple[tuple[str, str], ...] = tuple(
    (cls.__module__, cls.__name__)
    for cls in (Candidate, Plan, LLMCall, FixAttempt, ExperiencePair, EvalResult, EvalStatus, Experience, Provenance)
)


def checkpoint_serde() -> JsonPlusSerializer:
    """Return a checkpoint serializer that restores the graph's state types (pass as `serde=`)."""
    return JsonPlusSerializer(allowed_msgpack_modules=CHECKPOINT_TYPES)


def build_graph() -> StateGraph:
    """Return the uncompiled optimizer graph (composable as a subgraph of a parent graph)."""
    builder = StateGraph(OptimizerState, context_schema=OptimizerContext, input_schema=OptimizerInput,
                         output_schema=OptimizerOutput)
    builder.add_node(start, retry_policy=CACHE_RETRY)
    builder.add_node(retrieve_experiences, destinations=("plan",))
    builder.add_node(plan, retry_policy=CACHE_RETRY)
    builder.add_node(dispatch_plans)
    builder.add_node(execute, retry_policy=CACHE_RETRY, destinations=("fix", "digest"))
    builder.add_node(fix, retry_policy=CACHE_RETRY, destinations=("fix", "digest"))
    builder.add_node(digest, defer=True, destinations=("summarize", "update_memory"))
    builder.add_node(summarize, retry_policy=CACHE_RETRY)
    builder.add_node(update_memory)
    builder.add_node(select)
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", route_to_candidates, ["retrieve_experiences", "__end__"])
    builder.add_edge("plan", "dispatch_plans")
    builder.add_conditional_edges("dispatch_plans", route_to_samples, ["execute", "digest"])
    builder.add_edge("summarize", "update_memory")
    builder.add_edge("update_memory", "select")
    builder.add_conditional_edges("select", route_to_candidates, ["retrieve_experiences", "__end__"])
    return builder


def compile_graph(checkpointer=None, **kwargs) -> CompiledStateGraph:
    """Compile `build_graph()`; pass a checkpointer (e.g. SqliteSaver) to make runs resumable.

    A checkpointer with LangGraph's default serializer gets `checkpoint_serde()`, which allows the
    state's own types, so strict msgpack deserialization (LANGGRAPH_STRICT_MSGPACK) restores them.
    """
    if checkpointer is not None and type(getattr(checkpointer, "serde", None)) is JsonPlusSerializer:
        checkpointer.serde = checkpoint_serde()
    return build_graph().compile(checkpointer=checkpointer, name="accelopt", **kwargs)
