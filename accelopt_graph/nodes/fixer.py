"""The fixer agent: repair a failed sample from its error text; the last attempt is kept and the fix
chain recorded (algorithm.md, "Fix (optional)")."""
from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from accelopt_graph.context import OptimizerContext
from accelopt_graph.eval_cache import code_hash
from accelopt_graph.llm import call_role, messages_for
from accelopt_graph.nodes.evaluate import evaluate_code
from accelopt_graph.nodes.executor import extract_for, route_sample, task_prompt_vars
from accelopt_graph.prompting import render
from accelopt_graph.state import FixBranch
from accelopt_graph.tools.backend import EvalStatus
from accelopt_graph.types import FixAttempt


async def fix(state: FixBranch, runtime: Runtime[OptimizerContext]) -> Command[Literal["fix", "digest"]]:
    """Ask the fixer for a corrected kernel and evaluate it."""
    ctx = runtime.context
    failed, attempt = state["sample"], state["attempt"]
    user = render("fixer", kernel_code=failed.code, status=failed.result.status.value,
                  error=failed.result.error or "(no error text)", plan=state["plan"].text, **task_prompt_vars(ctx))
    outcome = await call_role(ctx, "fixer", messages_for(render("executor_system", knowledge=ctx.knowledge), user),
                              call_key=f"{failed.id}/fix{attempt}", iteration=state["iteration"],
                              parse=extract_for(ctx.kernel_name_of(failed.code)))
    if outcome.value is None:
        step = FixAttempt(attempt=attempt, error_seen=failed.result.error[-500:], status=EvalStatus.NO_CODE)
        sample = failed.model_copy(update={"fix_chain": (*failed.fix_chain, step)})
        return route_sample(ctx, state, sample, outcome.calls, attempt=ctx.settings.search.fixer_steps)
    result, cached = await evaluate_code(ctx, outcome.value)
    step = FixAttempt(attempt=attempt, error_seen=failed.result.error[-500:], status=result.status,
                      code_hash=code_hash(outcome.value))
    sample = failed.model_copy(update={"code": outcome.value, "code_hash": step.code_hash, "result": result,
                                       "cached": cached, "fix_chain": (*failed.fix_chain, step)})
    return route_sample(ctx, state, sample, outcome.calls, attempt=attempt)
