"""The beam-search supervisor: evaluate the baseline, fan out plans and samples with `Send`, digest
each round (experience pairs), select the next beam and decide when to stop (algorithm.md)."""
from __future__ import annotations

import asyncio
from typing import Literal

from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite, Send

from accelopt_graph.context import OptimizerContext
from accelopt_graph.eval_cache import code_hash
from accelopt_graph.ledger import count_evaluations
from accelopt_graph.memory.embedding import normalize_rows
from accelopt_graph.memory.selection import PairCandidate, select_pairs
from accelopt_graph.nodes.evaluate import evaluate_code
from accelopt_graph.search.beam import best_candidate, select_beam
from accelopt_graph.search.plans import merge_duplicate_plans, plan_text
from accelopt_graph.search.stopping import stop_reason
from accelopt_graph.state import CandidateBranch, ExecuteBranch, OptimizerState, SummarizeBranch
from accelopt_graph.types import Candidate, ExperiencePair, Plan, speedup

BASELINE_ID = "baseline"


async def start(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> dict:
    """Round 0: evaluate the baseline; it is the whole beam."""
    ctx = runtime.context
    if state["task_name"] != ctx.task.name:
        raise ValueError(f"input task_name {state['task_name']!r} does not match the context's task "
                         f"{ctx.task.name!r}; build the context with make_context(settings, task)")
    code = getattr(ctx.task, "baseline_code", None)
    if not code:
        raise ValueError(f"task {ctx.task.name!r} has no baseline_code to start from")
    result, cached = await evaluate_code(ctx, code)
    baseline = Candidate(id=BASELINE_ID, code=code, code_hash=code_hash(code), result=result,
                         iteration=0, order=(0,), cached=cached)
    ctx.emit({"event": "candidate", "iteration": 0, "id": baseline.id, "parent_id": None,
              "status": result.status.value, "latency_ms": result.latency_ms,
              "percent_of_peak": result.percent_of_peak, "cached": cached, "fix_attempts": 0})
    reason = None if baseline.is_correct else f"baseline_failed: {result.status.value}"
    return {"baseline": baseline, "beam": [baseline], "best": baseline if baseline.is_correct else None,
            "history": [baseline], "iteration": 0, "stop_reason": reason, "rounds_without_improvement": 0,
            "elapsed_s": 0.0}


def sync_ledger(ctx: OptimizerContext, state: OptimizerState) -> float:
    """Re-seed the ledger sink from the state at a join (every branch has reported, so the state's
    ledger is complete); this also makes a resumed process count earlier spending. Returns wall_s."""
    wall_s = state.get("elapsed_s", 0.0) + ctx.ledger.since_sync_s()
    ctx.ledger.sync(state.get("ledger") or [], evaluations=count_evaluations(state.get("history") or []),
                    wall_s=wall_s)
    return wall_s


def route_to_candidates(state: OptimizerState) -> list[Send] | Literal["__end__"]:
    """Fan out one retrieval per beam candidate, or end the run once a stop reason is set."""
    if state.get("stop_reason"):
        return END
    return [Send("retrieve_experiences", CandidateBranch(candidate=c, rank=rank, iteration=state["iteration"]))
            for rank, c in enumerate(state["beam"])]


def executable(plans: list[Plan]) -> list[Plan]:
    """Return the plans that get executor samples: parsed and not merged into another plan."""
    return sorted((p for p in plans if p.ok and p.merged_into is None), key=lambda p: (p.rank, p.index))


async def dispatch_plans(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> dict:
    """Join the round's plans, merge near-duplicates of one candidate (project default), and record
    how many execute branches the round sends (the digest's barrier)."""
    ctx = runtime.context
    search = ctx.settings.search
    plans = state.get("plans") or []
    elapsed_s = sync_ledger(ctx, state)
    if search.dedup_plans and plans:
        vectors = normalize_rows(await asyncio.to_thread(ctx.embedder.embed, [plan_text(p) for p in plans]))
        plans = merge_duplicate_plans(plans, vectors, threshold=search.plan_similarity)
    return {"plans": Overwrite(plans), "dispatched": len(executable(plans)) * search.samples_per_plan,
            "elapsed_s": elapsed_s}


def route_to_samples(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> list[Send] | Literal["digest"]:
    """Fan out K executor samples for every usable plan."""
    k = runtime.context.settings.search.samples_per_plan
    beam = state["beam"]
    sends = [Send("execute", ExecuteBranch(candidate=beam[p.rank], rank=p.rank, iteration=state["iteration"],
                                           plan=p, sample_index=s))
             for p in executable(state.get("plans") or []) for s in range(k)]
    return sends or "digest"


def experience_pairs(beam: list[Candidate], samples: list[Candidate], *, top_k: int, max_threshold: float,
                     min_threshold: float, faithful: bool) -> list[ExperiencePair]:
    """Choose the round's experience pairs through the memory's TopK selection."""
    parents = {c.id: c for c in beam}
    offers = []
    for sample in sorted(samples, key=lambda c: c.order):
        parent = parents.get(sample.parent_id or "")
        ratio = speedup(parent.latency_ms if parent else None, sample.latency_ms)
        if parent is None or ratio is None:
            continue
        offers.append(PairCandidate(parent_id=parent.id, plan_id=sample.plan_id or "", sample_id=sample.id,
                                    speedup=ratio, payload=(parent, sample)))
    chosen = select_pairs(offers, top_k=top_k, max_threshold=max_threshold, min_threshold=min_threshold,
                          faithful=faithful)
    return [ExperiencePair(parent=c.payload[0], sample=c.payload[1], speedup=c.speedup, polarity=c.polarity,
                           plan=c.payload[1].plan) for c in chosen]


async def digest(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> Command[Literal["summarize", "update_memory"]]:
    """Join the round, record it, and summarize its pairs.

    LangGraph's `defer` postpones this node only past the tasks of the current step, so a branch
    still in its fixer chain can trigger it early; it then waits (no update, no successor) until
    every dispatched branch has reported a sample or a skip.
    """
    ctx = runtime.context
    search = ctx.settings.search
    samples = sorted(state.get("samples") or [], key=lambda c: c.order)
    if len(samples) + state.get("skipped", 0) < state.get("dispatched", 0):
        return Command(goto=[])
    update: dict = {"history": samples, "elapsed_s": sync_ledger(ctx, state)}
    if ctx.ledger.stop_reason() is not None or search.top_k == 0:
        return Command(update=update, goto="update_memory")
    pairs = experience_pairs(state["beam"], samples, top_k=search.top_k, max_threshold=search.max_threshold,
                             min_threshold=search.min_threshold, faithful=search.faithful)
    if not pairs:
        return Command(update=update, goto="update_memory")
    sends = [Send("summarize", SummarizeBranch(pair=p, iteration=state["iteration"])) for p in pairs]
    return Command(update=update, goto=sends)


async def select(state: OptimizerState, runtime: Runtime[OptimizerContext]) -> dict:
    """Select the next beam, update the best kernel, decide whether to stop, reset the round."""
    ctx = runtime.context
    search = ctx.settings.search
    iteration = state["iteration"]
    samples = [c for c in state.get("samples") or []]
    beam = select_beam(state["beam"], samples, width=search.beam_width,
                       policy="reference" if search.reference_beam else "project")
    previous = state.get("best")
    contenders = [c for c in (previous, best_candidate(samples)) if c is not None]
    best = best_candidate(contenders)
    improved = best is not None and (previous is None or best.id != previous.id)
    stale = 0 if improved else state.get("rounds_without_improvement", 0) + 1
    history = state.get("history") or []
    wall_s = sync_ledger(ctx, state)
    percent = best.result.percent_of_peak if best is not None else None
    fraction = percent / 100.0 if percent is not None else None
    reason = stop_reason(round_done=iteration, iterations=search.iterations, budget_reason=ctx.ledger.stop_reason(),
                         best_fraction_of_peak=fraction, target_fraction_of_peak=search.target_fraction_of_peak,
                         rounds_without_improvement=stale, patience=search.patience)
    ctx.emit({"event": "iteration_done", "iteration": iteration, "evaluated": len(history),
              "best_latency_ms": best.latency_ms if best else None, "best_percent_of_peak": percent,
              "usd_total": ctx.ledger.spent.usd, "beam": [c.id for c in beam], "stop_reason": reason})
    return {"beam": beam, "best": best, "rounds_without_improvement": stale, "stop_reason": reason,
            "iteration": iteration if reason else iteration + 1, "elapsed_s": wall_s,
            "plans": Overwrite([]), "samples": Overwrite([]), "experiences": Overwrite([]), "skipped": Overwrite(0),
            "dispatched": 0}
