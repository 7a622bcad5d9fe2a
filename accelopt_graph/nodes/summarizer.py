"""The summarizer agent: turn a (parent, sample) pair into a reusable experience (paper: summarizer)."""
from __future__ import annotations

from langgraph.runtime import Runtime

from accelopt_graph.context import OptimizerContext
from accelopt_graph.llm import call_role, messages_for, model_name
from accelopt_graph.memory.experience import Experience, Provenance
from accelopt_graph.parsing import ParsedSummary, parse_summary, says_no_optimization
from accelopt_graph.prompting import format_profile, render
from accelopt_graph.state import SummarizeBranch
from accelopt_graph.types import Candidate, ExperiencePair

SYSTEM = "You summarize kernel optimizations for AWS Trainium (NKI) so that they can be reused."
DECLINED = "no optimization found"  # a valid answer: the pair is dropped, not re-asked


def parse_answer(text: str) -> ParsedSummary | str | None:
    """Parse a summary; "No optimization found" is a valid answer (DECLINED), not a malformed one."""
    return DECLINED if says_no_optimization(text) else parse_summary(text)


def summary_view(pair: ExperiencePair, *, faithful: bool) -> tuple[Candidate, Candidate, str, str]:
    """Return (before, after, speedup line, instruction) as the summarizer sees the pair.

    Project default: before = parent, after = sample, the real speedup, negative steps explained as
    things to avoid. Faithful: a negative pair is flipped (the parent is labelled the fast kernel)
    and the speedup is hidden, as in the reference code.
    """
    reuse = "Summarize the optimization so that it can be reused on OTHER kernels."
    if faithful:
        before, after = (pair.parent, pair.sample) if pair.polarity == "positive" else (pair.sample, pair.parent)
        return before, after, "", reuse
    if pair.polarity == "positive":
        line = f"The step made the kernel {pair.speedup:.3f}x faster (before / after latency)."
        return pair.parent, pair.sample, line, reuse
    line = (f"The step made the kernel {1 / pair.speedup:.3f}x SLOWER (speedup {pair.speedup:.3f}); "
            "it is an example of what to avoid.")
    return pair.parent, pair.sample, line, (
        "Summarize what the step changed and why it made the kernel slower, so that others avoid it.")


async def summarize(state: SummarizeBranch, runtime: Runtime[OptimizerContext]) -> dict:
    """Summarize one pair; "No optimization found" and failed calls produce no experience."""
    ctx = runtime.context
    pair, iteration = state["pair"], state["iteration"]
    faithful = ctx.settings.search.faithful
    before, after, line, instruction = summary_view(pair, faithful=faithful)
    user = render("summarizer", plan=pair.plan or "(not recorded)", speedup_line=line,
                  before_code=before.code, before_profile=format_profile(before.result),
                  after_code=after.code, after_profile=format_profile(after.result), instruction=instruction)
    outcome = await call_role(ctx, "summarizer", messages_for(SYSTEM, user), call_key=f"{pair.sample.id}/summary",
                              iteration=iteration, parse=parse_answer)
    update: dict = {"ledger": list(outcome.calls)}
    parsed = outcome.value
    if parsed is None or parsed is DECLINED:
        return update
    polarity = "positive" if faithful else pair.polarity
    step_speedup = pair.speedup if pair.polarity == "positive" or not faithful else 1.0 / pair.speedup
    slow, fast = (before, after) if step_speedup >= 1 else (after, before)
    models = {role: model_name(m, ctx.settings.models.for_role(role)) for role, m in ctx.models.items()}
    experience = Experience(
        slow_code=slow.code, fast_code=fast.code, speedup=step_speedup, polarity=polarity, title=parsed.title,
        description=parsed.description, snippet_before=parsed.snippet_before, snippet_after=parsed.snippet_after,
        plan=pair.plan, task=ctx.task.name, family=getattr(ctx.task, "family", ""),
        hardware=ctx.settings.backend.hardware, backend=ctx.settings.backend.name,
        provenance=Provenance(run_id=ctx.run_id, iteration=iteration, parent_id=pair.parent.id,
                              plan_id=pair.sample.plan_id or "", sample_id=pair.sample.id, models=models),
    ).with_id()
    update["experiences"] = [experience]
    return update
