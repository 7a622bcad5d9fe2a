"""Graph-level optimization memory across runs and tasks: a run on task A leaves experiences in a
real (embedded Chroma) store; a run on a related task B retrieves them into its planner prompt."""
from __future__ import annotations

import asyncio

from accelopt_graph.context import make_context
from accelopt_graph.graph import compile_graph
from accelopt_graph.memory.store import open_store

from .conftest import MarkerTask, marker_models, small_settings
from .fakes import MarkerBackend


def optimize(settings, task, models, store, run_dir):
    ctx = make_context(settings, task, models=models, backend=MarkerBackend(), store=store, run_dir=run_dir,
                       run_id=run_dir.name)
    async def go():
        plans, final = [], None
        async for mode, chunk in compile_graph().astream({"task_name": task.name}, context=ctx,
                                                          stream_mode=["updates", "values"]):
            if mode == "updates" and "plan" in chunk:
                plans += chunk["plan"]["plans"]
            elif mode == "values":
                final = chunk
        return {**final, "plans_seen": plans}
    return asyncio.run(go())


def test_run_on_a_leaves_experiences_that_b_retrieves(tmp_path):
    settings = small_settings(tmp_path, iterations=1)
    store = open_store(settings.memory)
    task_a, task_b = MarkerTask("toy_a"), MarkerTask("toy_b")
    out_a = optimize(settings, task_a, marker_models(), store, tmp_path / "run_a")
    assert out_a["experiences_added"], "run A stored no experience"
    stored = [store.get(i) for i in out_a["experiences_added"]]
    assert all(e.task == "toy_a" and e.polarity == "positive" and e.speedup > 1.04 for e in stored)
    assert {e.provenance.run_id for e in stored} == {"run_a"}

    reopened = open_store(settings.memory)  # a later process, same memory directory
    models_b = marker_models()
    out_b = optimize(settings.with_overrides({"search": {"iterations": 0}}), task_b, models_b, reopened,
                     tmp_path / "run_b")
    first_prompts = [p for p in models_b["planner"].calls]
    assert first_prompts and all("Fuse passes" in p and "made the kernel" in p for p in first_prompts)
    assert all("(no experiences yet)" not in p for p in first_prompts)
    assert out_b["plans_seen"] and all(set(p.experience_ids) == set(out_a["experiences_added"])
                                       for p in out_b["plans_seen"])
