"""Fixtures for graph tests: small settings, a marker task, scripted models."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from accelopt_graph.settings import Settings

from .fakes import ScriptedChatModel


class MarkerTask:
    """A task for graph-logic tests with MarkerBackend (no kernel is ever run)."""

    def __init__(self, name: str = "toy", family: str = "elementwise", latency_ms: float = 10.0) -> None:
        self.name = name
        self.version = 1
        self.rtol = 2e-5
        self.family = family
        self.description = f"toy task {name}: out = f(x)"
        self.parameters = {"M": 128}
        self.kernel_signature = "kernel(x)"
        self.correctness_rule = "relative L2 error below 2e-05"
        self.baseline_code = f"@nki.jit\ndef kernel(x):\n    LATENCY_MS = {latency_ms}\n    return x\n"

    def kernel_inputs(self, seed, case=None):
        return []

    def reference_outputs(self, seed, case=None):
        return []

    def check_cases(self):
        return [(0, None)]

    def peak_latency_ms(self, hardware: str) -> float:
        return 1.0


def small_settings(tmp_path: Path, **search) -> Settings:
    return Settings().with_overrides({
        "search": {"iterations": 2, "beam_width": 2, "plans_per_candidate": 2, "samples_per_plan": 2,
                   "fixer_steps": 1, "retry_backoff_s": 0.0, **search},
        "memory": {"path": str(tmp_path / "memory")},
        "run": {"run_dir": str(tmp_path / "runs")},
        "prices": {"scripted": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
    })


def current_latency(prompt: str) -> float:
    """The latency marker of the kernel shown in a prompt (the last one: the current kernel)."""
    found = re.findall(r"LATENCY_MS = ([0-9.]+)", prompt.split("## Plan to implement")[0])
    return float(found[-1])


def marker_models() -> dict[str, ScriptedChatModel]:
    plan = json.dumps({"title": "Fuse the passes", "bottleneck": "dma", "change": "fuse passes into one loop",
                       "expected_effect": "fewer HBM round trips"})
    planner = ScriptedChatModel(rules=[("Propose exactly one", f"```json\n{plan}\n```")])

    def rewrite(prompt: str) -> str:
        latency = round(current_latency(prompt) * 0.8, 4)
        return f"Here it is:\n```python\n@nki.jit\ndef kernel(x):\n    LATENCY_MS = {latency}\n    return x\n```\n"

    executor = ScriptedChatModel(rules=[("Plan to implement", rewrite)])
    summarizer = ScriptedChatModel(rules=[("Kernel before the step", "**Fuse passes**\nOne pass instead of two.\n"
                                           "Original:\n```python\na()\nb()\n```\nOptimized:\n```python\nab()\n```")])
    fixer = ScriptedChatModel(rules=[], default="no idea")
    return {"planner": planner, "executor": executor, "summarizer": summarizer, "fixer": fixer}


@pytest.fixture
def marker_task() -> MarkerTask:
    return MarkerTask()
