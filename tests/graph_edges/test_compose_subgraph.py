"""examples/compose_subgraph.py: the optimizer as one node of a parent graph."""
import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from accelopt_graph.context import make_context
from accelopt_graph.memory.store import NullExperienceStore
from graph.conftest import MarkerTask, marker_models, small_settings
from graph.fakes import MarkerBackend

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compose_subgraph.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("compose_subgraph_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # typing resolves the state's annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def context(tmp_path, task):
    return make_context(small_settings(tmp_path, fixer_steps=0), task, models=marker_models(),
                        backend=MarkerBackend(), store=NullExperienceStore(), run_dir=tmp_path / "run")


def test_parent_graph_runs_the_optimizer_as_a_node(tmp_path, example):
    task = MarkerTask()
    final = asyncio.run(example.run_pipeline(context(tmp_path, task), min_speedup=1.5))
    assert final["decision"] == "publish"
    assert final["best"].latency_ms == pytest.approx(5.12)  # two rounds of 0.8x after round 0
    assert final["baseline"].latency_ms == pytest.approx(10.0)
    assert final["stop_reason"] == "iterations_done"
    assert final["ledger"] and all(call.role in {"planner", "executor", "summarizer"} for call in final["ledger"])
    assert "1.953x" in final["message"] and "published" in final["message"]
    # Only the optimizer's output keys reach the parent: no per-round channels, no history.
    assert not {"beam", "history", "plans", "samples"} & set(final)


def test_parent_graph_gate_rejects_a_small_gain_and_draws_the_subgraph(tmp_path, example):
    final = asyncio.run(example.run_pipeline(context(tmp_path, MarkerTask()), min_speedup=3.0))
    assert final["decision"] == "reject" and "published" not in final["message"]
    drawing = example.build_pipeline().compile().get_graph(xray=1).draw_mermaid()
    assert "optimize" in drawing and "gate" in drawing and "plan" in drawing


@pytest.mark.slow
def test_example_script_runs_against_an_openai_compatible_endpoint(tmp_path, fake_openai):
    import os
    import subprocess

    from .conftest import run_config, write_config
    from .scripts import silu_rules

    server = fake_openai(silu_rules())
    config = write_config(tmp_path / "cfg.yaml", run_config(
        tmp_path, server.base_url, memory={"enabled": False}, backend={"workers": 1, "seeds": [0]},
        search={"iterations": 0, "beam_width": 1, "plans_per_candidate": 1, "samples_per_plan": 1,
                "fixer_steps": 0}))
    out = subprocess.run([sys.executable, str(EXAMPLE), "silu", "--config", str(config), "--min-speedup", "1.1",
                          "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "FAKE_OPENAI_KEY": "sk-test"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("silu: ") and out.stdout.rstrip().endswith("lines")  # published
    assert [c.rule for c in server.calls] == [0, 2, 1]  # planner, executor (fused rewrite), summarizer
