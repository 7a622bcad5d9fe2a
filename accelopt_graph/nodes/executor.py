"""The executor agent: implement one plan as a full kernel, then evaluate it (paper: executor)."""
from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from accelopt_graph.context import OptimizerContext
from accelopt_graph.eval_cache import code_hash
from accelopt_graph.llm import call_role, messages_for
from accelopt_graph.nodes.evaluate import evaluate_code
from accelopt_graph.parsing import extract_kernel
from accelopt_graph.prompting import render
from accelopt_graph.state import ExecuteBranch, FixBranch
from accelopt_graph.tools.backend import EvalResult, EvalStatus
from accelopt_graph.types import Candidate, LLMCall, short_hash

# Failures the fixer can act on (algorithm.md, "Fix"); `no_code` and `rejected` are not repairable.
FIXABLE = frozenset({EvalStatus.COMPILE_ERROR, EvalStatus.RUNTIME_ERROR, EvalStatus.INCORRECT, EvalStatus.TIMEOUT})


def sample_id(parent_id: str, iteration: int, rank: int, plan_index: int, sample_index: int) -> str:
    return f"c{iteration}-{short_hash(parent_id, rank, plan_index, sample_index)}"


def task_prompt_vars(ctx: OptimizerContext) -> dict[str, str]:
    """Variables every code-writing prompt shares: the task, how it is called, the correctness rule."""
    task = ctx.task
    rule = getattr(task, "correctness_rule", None) or (
        f"relative L2 error ||out - ref|| / ||ref|| below {task.rtol:g}, computed in float64; NaN/Inf fail")
    return {"task_name": task.name, "task_description": getattr(task, "description", ""),
            "call_info": getattr(task, "kernel_signature", "") or "see the current kernel's signature",
            "correctness_rule": rule}


def extract_for(kernel_name: str | None):
    """Return the parser of a code-writing answer: the fenced block defining `kernel_name`."""
    return lambda text: extract_kernel(text, kernel_name)


async def execute(state: ExecuteBranch, runtime: Runtime[OptimizerContext]) -> Command[Literal["fix", "digest"]]:
    """Ask the executor for the kernel that implements the plan, evaluate it, and route the sample."""
    ctx = runtime.context
    parent, plan, iteration = state["candidate"], state["plan"], state["iteration"]
    user = render("executor", kernel_code=parent.code, plan=plan.text, **task_prompt_vars(ctx))
    sid = sample_id(parent.id, iteration, state["rank"], plan.index, state["sample_index"])
    outcome = await call_role(ctx, "executor", messages_for(render("executor_system", knowledge=ctx.knowledge), user),
                              call_key=sid, iteration=iteration, parse=extract_for(ctx.kernel_name_of(parent.code)))
    if outcome.error.startswith("skipped"):
        return Command(update={"ledger": list(outcome.calls), "skipped": 1}, goto="digest")
    code = outcome.value
    cached = False
    if code is None:
        result = EvalResult(status=EvalStatus.NO_CODE, error=outcome.error or "no fenced block defines the kernel",
                            backend=ctx.eval_settings.backend, hardware=ctx.eval_settings.hardware)
        code = ""
    else:
        result, cached = await evaluate_code(ctx, code)
    sample = Candidate(id=sid, parent_id=parent.id, plan_id=plan.id, plan=plan.text, code=code,
                       code_hash=code_hash(code) if code else "", result=result, iteration=iteration,
                       lineage=(*parent.lineage, parent.id),
                       order=(iteration + 1, state["rank"], plan.index, state["sample_index"]), cached=cached)
    return route_sample(ctx, state, sample, outcome.calls, attempt=0)


def route_sample(ctx: OptimizerContext, state: ExecuteBranch, sample: Candidate, calls: tuple[LLMCall, ...],
                 *, attempt: int) -> Command:
    """Send a failed sample to the fixer while attempts remain, else hand it to the round's digest."""
    if sample.result.status in FIXABLE and attempt < ctx.settings.search.fixer_steps and ctx.ledger.stop_reason() is None:
        branch = FixBranch(candidate=state["candidate"], rank=state["rank"], iteration=state["iteration"],
                           plan=state["plan"], sample_index=state["sample_index"], sample=sample, attempt=attempt + 1)
        return Command(update={"ledger": list(calls)}, goto=Send("fix", branch))
    ctx.emit({"event": "candidate", "iteration": sample.iteration, "id": sample.id, "parent_id": sample.parent_id,
              "status": sample.result.status.value, "latency_ms": sample.result.latency_ms,
              "percent_of_peak": sample.result.percent_of_peak, "cached": sample.cached,
              "fix_attempts": len(sample.fix_chain)})
    return Command(update={"samples": [sample], "ledger": list(calls)}, goto="digest")
