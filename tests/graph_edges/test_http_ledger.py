"""The graph over HTTP against a local OpenAI-compatible server: the ledger equals the server's usage."""
from collections import Counter

import pytest

from accelopt_graph.memory.store import NullExperienceStore
from accelopt_graph.rundir import read_jsonl
from accelopt_graph.run import resume_optimization, run_optimization
from accelopt_graph.settings import Settings
from graph.conftest import MarkerTask
from graph.fakes import MarkerBackend

from .conftest import FAKE_PRICE, run_config
from .scripts import marker_rules

SEARCH = {"iterations": 2, "beam_width": 2, "plans_per_candidate": 2, "samples_per_plan": 2,
          "fixer_steps": 0, "retry_backoff_s": 0.0, "max_concurrency": 4}


def test_ledger_tokens_equal_the_servers_usage_exactly(tmp_path, fake_openai, monkeypatch):
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    # The first request gets a 500: the call is recorded as failed, retried, and billed nothing.
    server = fake_openai(marker_rules(), fail_statuses=[500])
    settings = Settings.model_validate(run_config(tmp_path, server.base_url, search=SEARCH))
    task = MarkerTask()
    outcome = run_optimization(settings, task.name, task=task, backend=MarkerBackend(),
                               store=NullExperienceStore(), run_dir=tmp_path / "run")

    assert outcome.finished and outcome.values["stop_reason"] == "iterations_done"
    assert outcome.values["best"].latency_ms == pytest.approx(5.12)  # 10 -> 8 -> 6.4 -> 5.12
    ledger = outcome.values["ledger"]
    billed = [c for c in server.calls if c.status == 200]
    assert all(c.finished for c in billed)
    answered = [c for c in ledger if c.prompt_tokens or c.completion_tokens]
    transport_failures = [c for c in ledger if not c.ok and not c.prompt_tokens]
    assert len(transport_failures) == 1 and "500" in transport_failures[0].error
    assert len(answered) == len(billed) and len(ledger) == len(server.calls)
    server_usage = Counter((c.usage["prompt_tokens"], c.usage["completion_tokens"],
                            c.usage["completion_tokens_details"]["reasoning_tokens"]) for c in billed)
    ledger_usage = Counter((c.prompt_tokens, c.completion_tokens, c.reasoning_tokens) for c in answered)
    assert ledger_usage == server_usage
    assert all(c.reasoning_tokens > 0 for c in answered)
    assert {c.model for c in ledger} == {"fake-gpt"}

    prompt = sum(c.usage["prompt_tokens"] for c in billed)
    completion = sum(c.usage["completion_tokens"] for c in billed)
    usd = (prompt * FAKE_PRICE["input_per_mtok"] + completion * FAKE_PRICE["output_per_mtok"]) / 1e6
    cost = outcome.summary["cost"]
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (prompt, completion)
    assert cost["reasoning_tokens"] == sum(c.usage["completion_tokens_details"]["reasoning_tokens"] for c in billed)
    assert cost["usd"] == pytest.approx(usd, rel=1e-12)
    assert cost["failed_calls"] == 1 and cost["cached_calls"] == 0

    run = outcome.run_dir
    assert len(read_jsonl(run.calls)) == len(ledger)
    assert len(read_jsonl(run.candidates)) == len(outcome.values["history"])
    assert run.best_kernel.read_text() == outcome.values["best"].code
    assert run.plot.read_bytes()[:4] == b"\x89PNG"
    assert [p["best_latency_ms"] for p in outcome.summary["series"]] == pytest.approx([8.0, 6.4, 5.12])

    # Resuming a finished run rewrites its artifacts and calls nobody.
    served = len(server.calls)
    again = resume_optimization(run.root, task=task, backend=MarkerBackend(), store=NullExperienceStore())
    assert again.finished and len(server.calls) == served
    assert again.summary["cost"] == outcome.summary["cost"] and again.summary["best"] == outcome.summary["best"]
    assert [s.outcome for s in run.read_manifest().sessions] == ["finished", "finished"]


def test_a_run_that_a_live_process_works_on_is_not_resumed(tmp_path):
    import os

    from accelopt_graph.run import RunSetupError
    from accelopt_graph.rundir import RunDir, RunManifest, Session

    run = RunDir(tmp_path / "busy").create()
    run.write_manifest(RunManifest(run_id="busy", task_name="toy", settings={}, sessions=[
        Session(index=0, pid=os.getppid(), started_at="2026-01-01T00:00:00+00:00")]))
    with pytest.raises(RunSetupError, match=f"process {os.getppid()}"):
        resume_optimization(run.root, task=MarkerTask(), backend=MarkerBackend())
