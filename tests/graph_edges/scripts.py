"""Scripted LLM answers for the marker task (tests/graph): plans, kernel rewrites, summaries.

Every answer is a pure function of the prompt, so `Send` fan-out order never changes a run, and
the rules are plain strings so a subprocess can read them from a JSON file. A rewrite of a kernel
whose `LATENCY_MS` marker is x has marker round(0.8 x, 4): each round makes the best 20% faster.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .fake_openai import Rule

PLAN = {"title": "Fuse the passes", "bottleneck": "dma", "change": "fuse the two passes into one loop",
        "expected_effect": "fewer HBM round trips"}
SUMMARY = ("**Fuse passes**\nOne pass instead of two.\nOriginal:\n```python\na()\nb()\n```\n"
           "Optimized:\n```python\nab()\n```")


def marker_kernel(latency_ms: float) -> str:
    return f"@nki.jit\ndef kernel(x):\n    LATENCY_MS = {latency_ms}\n    return x\n"


def latency_ladder(start_ms: float = 10.0, levels: int = 8) -> list[float]:
    ladder = [start_ms]
    for _ in range(levels):
        ladder.append(round(ladder[-1] * 0.8, 4))
    return ladder


def marker_rules(start_ms: float = 10.0, levels: int = 8) -> list[Rule]:
    ladder = latency_ladder(start_ms, levels)
    rules = [Rule(match="Propose exactly one", reply=f"```json\n{json.dumps(PLAN)}\n```"),
             Rule(match="Kernel before the step", reply=SUMMARY)]
    rules += [Rule(match=["Plan to implement", f"LATENCY_MS = {slow}\n"],
                   reply=f"Here it is:\n```python\n{marker_kernel(fast)}```\n")
              for slow, fast in zip(ladder, ladder[1:])]
    return rules


def write_rules(path: Path, rules: list[Rule]) -> Path:
    path.write_text(json.dumps([asdict(r) for r in rules], indent=1))
    return path


# A real rewrite of the silu baseline (nkibench/tasks/silu): the baseline spends four instructions
# per 128x128 tile (negate, exp, add, divide); the rewrite computes silu in one ACT instruction.
# The same file the graph tests use.
SILU_FUSED = (Path(__file__).resolve().parents[1] / "graph" / "kernels" / "silu_fused.py").read_text()
SILU_PARAMS = {"M": 256, "N": 1024}  # reduced sizes: 2 rows per partition


def silu_rules() -> list[Rule]:
    """Planner: fuse; executor: the fused kernel for the baseline (recognised by its divide), nothing usable otherwise."""
    plan = {"title": "Fuse silu into one activation", "bottleneck": "vector and scalar engines",
            "change": "replace negate/exp/add/divide by nisa.activation(op=nl.silu)",
            "expected_effect": "one instruction per tile instead of four"}
    return [Rule(match="Propose exactly one", reply=f"```json\n{json.dumps(plan)}\n```"),
            Rule(match="Kernel before the step", reply=SUMMARY),
            Rule(match=["Plan to implement", "nl.divide(xt, d)"], reply=f"```python\n{SILU_FUSED}```\n")]
