"""Whole-graph logic with an in-process marker backend: rounds, beam, ledger, stop rules, events."""
from __future__ import annotations

import asyncio
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from accelopt_graph.context import OptimizerContext, make_context
from accelopt_graph.graph import build_graph, compile_graph
from accelopt_graph.memory.store import NullExperienceStore, open_store
from accelopt_graph.types import Candidate

from .conftest import marker_models, small_settings
from .fakes import MarkerBackend


class Parent(TypedDict, total=False):
    """A parent graph's state that shares `task_name` and `best` with the optimizer."""

    task_name: str
    best: Candidate
    report: str


def run(ctx, task):
    async def go():
        events = []
        final = None
        async for mode, chunk in compile_graph().astream({"task_name": task.name}, context=ctx,
                                                          stream_mode=["custom", "values"]):
            if mode == "custom":
                events.append(chunk)
            else:
                final = chunk
        return final, events
    return asyncio.run(go())


def test_rounds_improve_and_record(tmp_path, marker_task):
    settings = small_settings(tmp_path)
    models = marker_models()
    ctx = make_context(settings, marker_task, models=models, backend=MarkerBackend(), store=NullExperienceStore(),
                       run_dir=tmp_path / "run")
    out, events = run(ctx, marker_task)
    assert out["stop_reason"] == "iterations_done"
    assert out["iteration"] == 2
    # each round multiplies the beam's best latency by 0.8: 10 -> 8 -> 6.4 -> 5.12
    assert abs(out["best"].latency_ms - 5.12) < 1e-9
    assert out["best"].lineage[0] == "baseline" and len(out["best"].lineage) == 3
    roles = {c.role for c in out["ledger"]}
    assert {"planner", "executor", "summarizer"} <= roles
    assert all(c.usd > 0 for c in out["ledger"] if c.ok)
    done = [e for e in events if e["event"] == "iteration_done"]
    assert [e["iteration"] for e in done] == [0, 1, 2]


def test_checkpointed_state_restores_typed_values(tmp_path, marker_task):
    from langgraph.checkpoint.memory import InMemorySaver

    from accelopt_graph.graph import CHECKPOINT_TYPES
    from accelopt_graph.types import Candidate, LLMCall

    ctx = make_context(small_settings(tmp_path, iterations=0), marker_task, models=marker_models(),
                       backend=MarkerBackend(), store=NullExperienceStore(), run_dir=tmp_path / "run")
    saver = InMemorySaver()
    graph = compile_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    asyncio.run(graph.ainvoke({"task_name": marker_task.name}, config=config, context=ctx))
    values = graph.get_state(config).values
    assert isinstance(values["best"], Candidate) and isinstance(values["ledger"][0], LLMCall)
    assert ("accelopt_graph.types", "Candidate") in CHECKPOINT_TYPES


def test_optimizer_composes_as_a_subgraph(tmp_path, marker_task):
    def report(state: Parent) -> dict:
        return {"report": f"{state['task_name']}: {state['best'].latency_ms} ms"}

    parent = StateGraph(Parent, context_schema=OptimizerContext)
    parent.add_node("optimize", build_graph().compile())
    parent.add_node(report)
    parent.add_edge(START, "optimize")
    parent.add_edge("optimize", "report")
    parent.add_edge("report", END)
    ctx = make_context(small_settings(tmp_path, iterations=1), marker_task, models=marker_models(),
                       backend=MarkerBackend(), store=NullExperienceStore(), run_dir=tmp_path / "run")
    out = asyncio.run(parent.compile().ainvoke({"task_name": marker_task.name}, context=ctx))
    assert out["report"] == "toy: 6.4 ms"


def test_target_fraction_of_peak_stops_the_run(tmp_path, marker_task):
    ctx = make_context(small_settings(tmp_path, iterations=5, target_fraction_of_peak=0.12), marker_task,
                       models=marker_models(), backend=MarkerBackend(), store=NullExperienceStore(),
                       run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    assert out["stop_reason"] == "target_reached" and out["iteration"] == 0  # 8 ms = 12.5% of a 1 ms peak


def test_budget_stops_cleanly_mid_run(tmp_path, marker_task):
    settings = small_settings(tmp_path, iterations=5).with_overrides({"budget": {"usd": 0.002}})
    ctx = make_context(settings, marker_task, models=marker_models(), backend=MarkerBackend(),
                       store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, events = run(ctx, marker_task)
    assert out["stop_reason"] == "budget_usd"
    assert out["iteration"] < 5 and events[-1]["event"] == "iteration_done"
    spent = sum(c.usd for c in out["ledger"])
    one_call = max(c.usd for c in out["ledger"])
    assert 0.002 <= spent < 0.002 + 2 * 2 * one_call  # at most the calls already in flight overshoot


def test_failed_samples_go_to_the_fixer_and_keep_the_chain(tmp_path, marker_task):
    models = marker_models()
    fixed = "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = 7.0\n    return x\n```"
    models["executor"] = type(models["executor"])(rules=[("Plan to implement", "```python\n@nki.jit\ndef kernel(x):\n"
                                                          "    LATENCY_MS = 1.0  # BROKEN\n    return x\n```")])
    models["fixer"] = type(models["fixer"])(rules=[("SyntaxError: marker says broken", fixed)])
    ctx = make_context(small_settings(tmp_path, iterations=0), marker_task, models=models, backend=MarkerBackend(),
                       store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    fixed_samples = [c for c in out["history"] if c.fix_chain]
    assert fixed_samples and all(c.is_correct and c.latency_ms == 7.0 for c in fixed_samples)
    assert fixed_samples[0].fix_chain[0].status.value == "ok"
    assert out["best"].latency_ms == 7.0 and any(c.role == "fixer" for c in out["ledger"])


def test_round_waits_for_fixer_chains_of_any_length(tmp_path, marker_task):
    """A branch two fixer hops deep must not let the round's digest run early (or twice)."""
    models = marker_models()
    broken = "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = {}  # BROKEN\n    return x\n```"
    scripted = type(models["executor"])
    models["planner"] = scripted(rules=[("proposal 1 of", '{"title": "Risky rewrite", "change": "tricky"}'),
                                        ("proposal 2 of", '{"title": "Safe rewrite", "change": "simple"}')])
    models["executor"] = scripted(rules=[
        ("Title: Risky rewrite", broken.format(1.0)),
        ("Title: Safe rewrite", "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = 9.0\n    return x\n```")])
    models["fixer"] = scripted(rules=[
        ("LATENCY_MS = 1.0  # BROKEN", broken.format(2.0)),
        ("LATENCY_MS = 2.0  # BROKEN", "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = 7.0\n    return x\n```")])
    ctx = make_context(small_settings(tmp_path, iterations=1, fixer_steps=2), marker_task, models=models,
                       backend=MarkerBackend(), store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, events = run(ctx, marker_task)
    assert [e["iteration"] for e in events if e["event"] == "iteration_done"] == [0, 1]
    assert sorted(len(c.fix_chain) for c in out["history"] if c.iteration == 0 and c.parent_id) == [0, 0, 2, 2]
    assert out["best"].latency_ms == 7.0


def test_faithful_run_flips_negative_pairs_and_hides_the_speedup(tmp_path, marker_task):
    models = marker_models()
    scripted = type(models["executor"])
    models["planner"] = scripted(rules=[("proposal 1 of", '{"title": "Good idea", "change": "a"}'),
                                        ("proposal 2 of", '{"title": "Bad idea", "change": "b"}')])
    models["executor"] = scripted(rules=[
        ("Title: Good idea", "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = 8.0\n    return x\n```"),
        ("Title: Bad idea", "```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = 20.0\n    return x\n```")])
    store = open_store(small_settings(tmp_path).memory)
    settings = small_settings(tmp_path, iterations=0, faithful=True)
    ctx = make_context(settings, marker_task, models=models, backend=MarkerBackend(), store=store,
                       run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    stored = [store.get(i) for i in out["experiences_added"]]
    assert sorted(round(e.speedup, 3) for e in stored) == [1.25, 2.0]  # 10 -> 8, and 20 -> 10 flipped
    assert all(e.polarity == "positive" for e in stored)
    prompts = models["summarizer"].calls
    assert len(prompts) == 2 and not any("faster (before / after" in p or "SLOWER" in p for p in prompts)
    flipped = next(p for p in prompts if "LATENCY_MS = 20.0" in p)
    assert flipped.index("LATENCY_MS = 20.0") < flipped.index("LATENCY_MS = 10.0")  # slow sample shown first


def test_declined_summaries_are_dropped_without_re_asking(tmp_path, marker_task):
    models = marker_models()
    models["summarizer"] = type(models["summarizer"])(rules=[("Kernel before the step", "No optimization found")])
    store = open_store(small_settings(tmp_path).memory)
    ctx = make_context(small_settings(tmp_path, iterations=0, malformed_retries=2), marker_task, models=models,
                       backend=MarkerBackend(), store=store, run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    assert out["experiences_added"] == [] and store.count() == 0
    summaries = [c for c in out["ledger"] if c.role == "summarizer"]
    assert len(summaries) == 1 and summaries[0].ok


def test_graph_topology_snapshot():
    """Pins the wiring; after an intended change, regenerate tests/graph/graph.mmd from draw_mermaid()."""
    from pathlib import Path

    snapshot = (Path(__file__).parent / "graph.mmd").read_text()
    assert build_graph().compile().get_graph().draw_mermaid() == snapshot


def test_identical_samples_are_evaluated_once(tmp_path, marker_task):
    backend = MarkerBackend()
    ctx = make_context(small_settings(tmp_path, iterations=0, samples_per_plan=4), marker_task,
                       models=marker_models(), backend=backend, store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    samples = [c for c in out["history"] if c.parent_id]
    assert len(samples) == 4 and len({c.code for c in samples}) == 1
    assert len(backend.evaluated) == 2  # the baseline and one of the four identical samples
    assert sum(not c.cached for c in samples) == 1


def test_a_failing_baseline_stops_the_run_with_its_status(tmp_path, marker_task):
    marker_task.baseline_code = "@nki.jit\ndef kernel(x):\n    return x  # BROKEN\n"
    models = marker_models()
    ctx = make_context(small_settings(tmp_path), marker_task, models=models, backend=MarkerBackend(),
                       store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    assert out["stop_reason"] == "baseline_failed: compile_error" and out["best"] is None
    assert out["ledger"] == [] and models["planner"].calls == []


def test_llm_outages_become_failed_samples_not_a_crash(tmp_path, marker_task):
    class Down(type(marker_models()["executor"])):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            raise TimeoutError("upstream timed out")

    models = {**marker_models(), "executor": Down(rules=[])}
    ctx = make_context(small_settings(tmp_path, iterations=1, llm_retries=1), marker_task, models=models,
                       backend=MarkerBackend(), store=NullExperienceStore(), run_dir=tmp_path / "run")
    out, _ = run(ctx, marker_task)
    samples = [c for c in out["history"] if c.parent_id]
    assert out["stop_reason"] == "iterations_done" and samples
    assert all(c.result.status.value == "no_code" and "TimeoutError" in c.result.error for c in samples)
    failed = [c for c in out["ledger"] if c.role == "executor"]
    assert failed and not any(c.ok for c in failed) and out["best"].id == "baseline"


def test_memory_outage_degrades_planning_but_not_the_run(tmp_path, marker_task):
    class BrokenStore(NullExperienceStore):
        def retrieve(self, query, k=None):
            raise ConnectionError("chroma server unreachable")

        def add(self, items):
            raise ConnectionError("chroma server unreachable")

    ctx = make_context(small_settings(tmp_path, iterations=1), marker_task, models=marker_models(),
                       backend=MarkerBackend(), store=BrokenStore(), run_dir=tmp_path / "run")
    out, events = run(ctx, marker_task)
    assert out["stop_reason"] == "iterations_done" and out["best"].latency_ms < 10.0
    errors = [e for e in events if e["event"] == "memory_error"]
    assert errors and all("unreachable" in e["error"] for e in errors)
    assert out["experiences_added"] == []
