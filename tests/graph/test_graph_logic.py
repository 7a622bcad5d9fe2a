"""Whole-graph logic with an in-process marker backend: rounds, beam, ledger, stop rules, events."""
from __future__ import annotations

import asyncio

from accelopt_graph.context import make_context
from accelopt_graph.graph import compile_graph
from accelopt_graph.memory.store import NullExperienceStore

from .conftest import marker_models, small_settings
from .fakes import MarkerBackend


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
