"""Full optimizer runs on NKIBench tasks in the NKI simulator, with scripted models whose answers are
real kernel rewrites (tests/graph/kernels/): the best kernel is correct and strictly faster than the
baseline, lineage and costs are recorded, and the memory received experiences (issue 5, done-when 1)."""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from accelopt_graph.context import make_context
from accelopt_graph.graph import compile_graph
from accelopt_graph.memory.store import open_store
from accelopt_graph.nkibench import load_task
from accelopt_graph.tools.registry import make_backend

from .conftest import small_settings
from .fakes import ScriptedChatModel

KERNELS = Path(__file__).parent / "kernels"


def kernel(name: str) -> str:
    return (KERNELS / f"{name}.py").read_text()


def fenced(code: str) -> str:
    return f"Here is the kernel.\n```python\n{code}```\n"


@dataclass(frozen=True)
class Step:
    """A plan the scripted planner proposes and the kernel the scripted executor writes for it."""

    title: str
    change: str
    kernel: str
    buggy: str | None = None  # the executor first writes this; the fixer answers with `kernel`


@dataclass(frozen=True)
class Script:
    task: str
    params: dict
    improvements: tuple[tuple[str, Step], ...]  # (marker absent from the current kernel -> step)
    worse: Step  # what proposal 2 suggests: a real rewrite that is slower

    def plan_for(self, prompt: str) -> Step:
        code = prompt.split("## Current kernel", 1)[1].split("## Its profile", 1)[0]
        proposal = int(re.search(r"proposal (\d+) of", prompt).group(1))
        if proposal == 1:
            for marker, step in self.improvements:
                if marker not in code:
                    return step
        return self.worse

    def steps(self) -> list[Step]:
        return [s for _, s in self.improvements] + [self.worse]

    def models(self) -> dict[str, ScriptedChatModel]:
        def planner(prompt: str) -> str:
            step = self.plan_for(prompt)
            plan = {"title": step.title, "bottleneck": "see profile", "change": step.change,
                    "expected_effect": "lower latency"}
            return f"```json\n{json.dumps(plan)}\n```"

        executor_rules = [(f"Title: {s.title}\n", fenced(kernel(s.buggy or s.kernel))) for s in self.steps()]
        fixer_rules = [(f"The optimization this kernel attempted: Title: {s.title}\n", fenced(kernel(s.kernel)))
                       for s in self.steps()]
        summary = ("**{title}**\nApply the change in general form; it changes how work is tiled or fused.\n"
                   "Original:\n```python\nbefore()\n```\nOptimized:\n```python\nafter()\n```")
        summarizer_rules = [(f"Title: {s.title}\n", summary.format(title=s.title)) for s in self.steps()]
        return {"planner": ScriptedChatModel(rules=[("Propose exactly one", planner)]),
                "executor": ScriptedChatModel(rules=executor_rules),
                "fixer": ScriptedChatModel(rules=fixer_rules),
                "summarizer": ScriptedChatModel(rules=summarizer_rules)}


# Simulated latencies at these sizes (ms, trn1, seed 0): silu 0.0215 -> fused 0.0115 -> 256-wide 0.0107,
# sigmoid+multiply 0.0123; matmul 0.0263 -> pre-transposed 0.0163 -> 512-wide stripes 0.0151,
# transpose-in-loop 0.0232 (the baselines are the 128x128-tile first pass since session 2).
SILU = Script(
    task="silu", params={"M": 256, "N": 2048},
    improvements=(
        ("nl.silu", Step("Fuse SiLU into one activation", "replace negate/exp/add/divide by one "
                         "nisa.activation(op=nl.silu)", "silu_fused")),
        ("TILE = 256", Step("Use 256-wide tiles", "more, smaller tiles so loads, activations and stores "
                            "overlap", "silu_small_tiles")),
    ),
    worse=Step("Compute sigmoid then multiply", "sigmoid activation, then multiply by x on the vector engine",
               "silu_sigmoid_mul", buggy="silu_sigmoid_mul_bug"),
)

MATMUL = Script(
    task="matmul", params={"M": 256, "N": 2048, "K": 256},
    improvements=(
        ("lhs_t[a, t]", Step("Transpose lhs once before the N loop", "transpose every lhs block once into a "
                             "resident SBUF buffer instead of once per N chunk", "matmul_pretransposed")),
        ("NW = 512", Step("Use 512-wide rhs stripes", "narrower N chunks so the first matmuls start after a "
                          "smaller rhs load", "matmul_pretransposed_narrow")),
    ),
    worse=Step("Transpose inside the K loop", "transpose lhs blocks next to each matmul and load rhs tiles there",
               "matmul_transpose_in_loop", buggy="matmul_transpose_in_loop_bug"),
)


@pytest.fixture(scope="module")
def backend():
    backend = make_backend("nkisim", workers=2)
    yield backend
    backend.close()


@pytest.mark.slow
@pytest.mark.parametrize("script", [SILU, MATMUL], ids=lambda s: s.task)
def test_full_run_finds_a_faster_correct_kernel(script: Script, backend, tmp_path):
    task = load_task(script.task, params=script.params)
    settings = small_settings(tmp_path, iterations=2, beam_width=2, plans_per_candidate=2, samples_per_plan=2,
                              fixer_steps=1)
    store = open_store(settings.memory)
    models = script.models()
    ctx = make_context(settings, task, models=models, backend=backend, store=store, run_dir=tmp_path / "run",
                       run_id="sim-run")
    out = asyncio.run(compile_graph().ainvoke({"task_name": task.name}, context=ctx))

    baseline, best = out["baseline"], out["best"]
    assert baseline.is_correct and baseline.result.source == "simulator"
    assert best.is_correct and best.latency_ms < baseline.latency_ms
    assert out["stop_reason"] == "iterations_done" and out["iteration"] == 2
    history = out["history"]
    assert best.latency_ms == min(c.latency_ms for c in history if c.is_correct)
    assert best.code in {kernel(step.kernel) for step in script.steps()}

    by_id = {c.id: c for c in history}
    assert best.lineage[0] == "baseline" and best.lineage[-1] == best.parent_id
    assert all(a in by_id for a in best.lineage)
    rounds = {c.iteration for c in history if c.parent_id}
    assert rounds == {0, 1, 2}

    fixed = [c for c in history if c.fix_chain]
    assert fixed and all(c.is_correct and c.code == kernel(script.worse.kernel) for c in fixed)
    assert all(c.fix_chain[0].status.value == "ok" for c in fixed)

    ledger = out["ledger"]
    assert {c.role for c in ledger} == {"planner", "executor", "fixer", "summarizer"}
    assert all(c.ok and c.prompt_tokens > 0 and c.completion_tokens > 0 and c.usd > 0 for c in ledger)
    assert sum(c.role == "fixer" for c in ledger) == len({c.id for c in fixed})

    stored = [store.get(i) for i in out["experiences_added"]]
    assert stored and all(e.task == script.task and e.provenance.run_id == "sim-run" for e in stored)
    assert store.count() == len(set(out["experiences_added"]))
    assert any(e.polarity == "positive" and e.speedup > 1.04 for e in stored)
    # a negative experience exists exactly when some sample was > 15% slower than its parent
    slower = any(c.is_correct and by_id[c.parent_id].latency_ms / c.latency_ms < 1 / 1.15
                 for c in history if c.parent_id)
    assert any(e.polarity == "negative" for e in stored) == slower

    planner_prompt = models["planner"].calls[0]
    assert "latency_ms:" in planner_prompt and "simulated" in planner_prompt and "hbm_read_bytes" in planner_prompt
    assert "24 MiB" in planner_prompt  # the trn1 knowledge pack
    executor_prompt = models["executor"].calls[0]
    assert task.kernel_signature in executor_prompt and task.correctness_rule in executor_prompt
    later_planner = [p for p in models["planner"].calls if "Experience 1" in p]
    assert later_planner, "no planner call of a later round saw the run's own experiences"
