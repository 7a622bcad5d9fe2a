"""`langgraph dev` serves the repository's langgraph.json; a tiny job runs through langgraph-sdk."""
import asyncio

import pytest

from .conftest import langgraph_dev, run_config, write_config
from .scripts import SILU_PARAMS, silu_rules

SEARCH = {"iterations": 1, "beam_width": 1, "plans_per_candidate": 1, "samples_per_plan": 1,
          "fixer_steps": 0, "retry_backoff_s": 0.0, "malformed_retries": 0}


async def run_job(url: str) -> tuple[list, dict, list]:
    from langgraph_sdk import get_client

    client = get_client(url=url)
    assistants = await client.assistants.search(graph_id="accelopt")
    assert len(assistants) == 1
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    assert schemas["input_schema"]["required"] == ["task_name"]  # what Studio's input form shows
    thread = await client.threads.create()
    parts = []
    async with asyncio.timeout(240):
        async for part in client.runs.stream(thread["thread_id"], assistants[0]["assistant_id"],
                                             input={"task_name": "silu", "task_params": SILU_PARAMS},
                                             stream_mode=["custom", "values"], stream_subgraphs=True):
            parts.append(part)
    state = await client.threads.get_state(thread["thread_id"])
    return assistants, state, parts


@pytest.mark.slow
def test_langgraph_dev_serves_the_graph_and_runs_a_tiny_job(tmp_path, fake_openai):
    server = fake_openai(silu_rules())
    config = write_config(tmp_path / "server.yaml", run_config(
        tmp_path, server.base_url, search=SEARCH, backend={"workers": 1, "seeds": [0]}))
    env = {"ACCELOPT_CONFIG": str(config), "ACCELOPT_SERVER_RUNS": str(tmp_path / "server-runs"),
           "FAKE_OPENAI_KEY": "sk-test", "LANGSMITH_TRACING": "false"}
    with langgraph_dev(tmp_path, env) as url:
        assistants, state, parts = asyncio.run(run_job(url))

    assert assistants[0]["graph_id"] == "accelopt"
    values = state["values"]
    assert not state["next"], "the run finished"
    assert values["stop_reason"] == "iterations_done"
    baseline, best = values["baseline"], values["best"]
    assert baseline["result"]["status"] == "ok" and best["result"]["status"] == "ok"
    assert best["result"]["latency_ms"] < baseline["result"]["latency_ms"]  # the fused rewrite won
    assert best["result"]["source"] == "simulator"
    assert "nl.silu" in best["code"]
    assert len(values["ledger"]) == len(server.calls) > 0
    custom = [p.data for p in parts if p.event.startswith("custom")]
    assert any(e.get("event") == "iteration_done" for e in custom)
    assert any(e.get("event") == "llm_call" for e in custom)
