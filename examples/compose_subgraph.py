"""Embed the AccelOpt optimizer as one node of a larger LangGraph graph.

The parent graph below is a small "kernel pipeline": it picks the task, runs the optimizer as a
subgraph node, then gates the result (publish only a kernel that is correct and at least
`min_speedup` times faster than the baseline). The optimizer shares the parent's runtime context
(`OptimizerContext`) and checkpointer, and hands back only its output keys (best, baseline, stop
reason, ledger), so its internal per-round channels never leak into the parent's state.

    python examples/compose_subgraph.py silu --config my-endpoints.yaml [--min-speedup 1.1]
"""
from __future__ import annotations

import argparse
import asyncio
from typing import Any, Literal

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict  # pydantic (Studio's JSON schemas) needs it on Python < 3.12

from accelopt_graph.context import OptimizerContext, make_context
from accelopt_graph.graph import build_graph
from accelopt_graph.types import Candidate, LLMCall


class PipelineState(TypedDict, total=False):
    task_name: str
    task_params: dict[str, Any] | None
    min_speedup: float
    baseline: Candidate | None  # written by the optimizer subgraph
    best: Candidate | None
    stop_reason: str | None
    ledger: list[LLMCall]
    decision: Literal["publish", "reject"]
    message: str


def gate(state: PipelineState) -> dict[str, Any]:
    """Accept the optimized kernel only if it is correct and fast enough."""
    best, baseline = state.get("best"), state.get("baseline")
    if best is None or baseline is None or baseline.latency_ms is None or best.latency_ms is None:
        return {"decision": "reject", "message": f"no correct kernel ({state.get('stop_reason')})"}
    gain = baseline.latency_ms / best.latency_ms
    usd = sum(call.usd for call in state.get("ledger") or [])
    verdict = "publish" if gain >= state.get("min_speedup", 1.0) else "reject"
    return {"decision": verdict,
            "message": f"{state['task_name']}: {baseline.latency_ms:.4g} ms -> {best.latency_ms:.4g} ms "
                       f"({gain:.3f}x, {best.id}) for ${usd:.4f}; {verdict}"}


def route_after_gate(state: PipelineState) -> Literal["publish", "__end__"]:
    return "publish" if state["decision"] == "publish" else END


def publish(state: PipelineState) -> dict[str, Any]:
    """Stand-in for the parent's real work (open a pull request, ship the kernel, ...)."""
    return {"message": state["message"] + f"; published {len(state['best'].code.splitlines())} lines"}


def build_pipeline() -> StateGraph:
    """Return the parent graph with the optimizer as its `optimize` node."""
    builder = StateGraph(PipelineState, context_schema=OptimizerContext)
    builder.add_node("optimize", build_graph().compile())
    builder.add_node(gate)
    builder.add_node(publish)
    builder.add_edge(START, "optimize")
    builder.add_edge("optimize", "gate")
    builder.add_conditional_edges("gate", route_after_gate, ["publish", END])
    builder.add_edge("publish", END)
    return builder


async def run_pipeline(context: OptimizerContext, *, min_speedup: float = 1.0,
                       thread_id: str = "pipeline") -> dict[str, Any]:
    """Run the pipeline for the context's task (checkpointed in memory) and return its final state."""
    pipeline = build_pipeline().compile(checkpointer=InMemorySaver())
    return await pipeline.ainvoke(
        {"task_name": context.task.name, "task_params": getattr(context.task, "parameters", None),
         "min_speedup": min_speedup},
        {"configurable": {"thread_id": thread_id}, "recursion_limit": 10_000}, context=context)


def main() -> None:
    from accelopt_graph.nkibench import load_task
    from accelopt_graph.settings import Settings

    parser = argparse.ArgumentParser(description="Optimize a kernel inside a parent LangGraph pipeline.")
    parser.add_argument("task", help="NKIBench task name, e.g. silu")
    parser.add_argument("--config", required=True, help="run config with the model endpoints")
    parser.add_argument("--min-speedup", type=float, default=1.05)
    parser.add_argument("--run-dir", default=None)
    args = parser.parse_args()
    settings = Settings.from_yaml(args.config)
    context = make_context(settings, load_task(args.task), run_dir=args.run_dir)
    final = asyncio.run(run_pipeline(context, min_speedup=args.min_speedup))
    print(final["message"])


if __name__ == "__main__":
    main()
