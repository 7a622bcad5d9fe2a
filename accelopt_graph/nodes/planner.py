"""The planner agent: one single-step optimization plan for a beam candidate (paper: planner)."""
from __future__ import annotations

from langgraph.runtime import Runtime

from accelopt_graph.context import OptimizerContext
from accelopt_graph.llm import call_role, messages_for
from accelopt_graph.parsing import parse_plan
from accelopt_graph.prompting import format_profile, render
from accelopt_graph.state import PlanBranch
from accelopt_graph.types import Plan, short_hash


def plan_id(candidate_id: str, iteration: int, rank: int, index: int) -> str:
    return f"p{iteration}-{short_hash(candidate_id, rank, index)}"


async def plan(state: PlanBranch, runtime: Runtime[OptimizerContext]) -> dict:
    """Ask the planner model for one plan; a failed call is recorded as a failed plan."""
    ctx = runtime.context
    candidate, iteration = state["candidate"], state["iteration"]
    system = render("planner_system", knowledge=ctx.knowledge,
                    experiences=state["experiences"])
    user = render("planner", task_name=ctx.task.name, task_description=getattr(ctx.task, "description", ""),
                  kernel_code=candidate.code, profile=format_profile(candidate.result), rel_tol=f"{ctx.task.rtol:g}",
                  proposal=state["index"] + 1, proposals=ctx.settings.search.plans_per_candidate)
    pid = plan_id(candidate.id, iteration, state["rank"], state["index"])
    outcome = await call_role(ctx, "planner", messages_for(system, user), call_key=pid, iteration=iteration,
                              parse=parse_plan)
    parsed = outcome.value
    result = Plan(id=pid, candidate_id=candidate.id, iteration=iteration, rank=state["rank"], index=state["index"],
                  ok=parsed is not None, error=outcome.error, experience_ids=tuple(state["experience_ids"]),
                  **({} if parsed is None else {"title": parsed.title, "bottleneck": parsed.bottleneck,
                                                "change": parsed.change, "expected_effect": parsed.expected_effect,
                                                "text": parsed.text}))
    return {"plans": [result], "ledger": list(outcome.calls)}
