"""Kill a run's process mid-iteration, resume it, and prove nothing finished was paid for twice.

The fake OpenAI server is the kill switch: it parks every request after the H-th, the test waits
until the run is stuck there (everything before it answered and cached), SIGKILLs the process and
resumes the run in a new one. Compared with an uninterrupted run on the same scripted answers:
the LLM calls before the kill plus those after the resume are exactly the uninterrupted run's
calls, no evaluation of the killed session is redone, and the results are identical.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from accelopt_graph.run import run_optimization
from accelopt_graph.rundir import RunDir, read_jsonl
from accelopt_graph.settings import Settings
from graph.conftest import MarkerTask
from graph.fakes import MarkerBackend

from .conftest import run_config, write_config
from .fake_openai import load_rules
from .scripts import marker_kernel, marker_rules, write_rules

TESTS = Path(__file__).resolve().parents[1]
SEARCH = {"iterations": 2, "beam_width": 2, "plans_per_candidate": 2, "samples_per_plan": 2,
          "fixer_steps": 0, "retry_backoff_s": 0.0, "max_concurrency": 4}
# Round 0 takes 2 planner, 2 executor and 1 summarizer calls; round 1 starts with 4 planner calls
# (2 per beam candidate: the baseline and its 8 ms rewrite) and then 4 executor calls. The hold
# lets the 2 executor calls on the 8 ms kernel through and parks the rest, so the kill lands while
# their new kernels are being evaluated (EVAL_DELAY_S): both branches must be redone, and their
# finished executor calls must come from the run's LLM cache.
ROUND_0_AND_PLANS = 9
EVAL_DELAY_S = 2.0


def hold(index: int, prompt: str) -> bool:
    return index > ROUND_0_AND_PLANS and not ("Plan to implement" in prompt and "LATENCY_MS = 8.0\n" in prompt)


def driver(*args: str, eval_delay_s: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "FAKE_OPENAI_KEY": "sk-test", "EVAL_DELAY_S": str(eval_delay_s)}
    return subprocess.Popen([sys.executable, "-m", "graph_edges.driver", *args], cwd=TESTS, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen, timeout_s: float = 300) -> str:
    out, _ = process.communicate(timeout=timeout_s)
    assert process.returncode == 0, out[-4000:]
    return out


def config_for(tmp_path: Path, name: str, base_url: str) -> Path:
    config = run_config(tmp_path / name, base_url, search=SEARCH)
    return write_config(tmp_path / f"{name}.yaml", config)


def marker_hash(latency_ms: float) -> str:
    from accelopt_graph.tools.backend import normalized_code_hash

    return normalized_code_hash(marker_kernel(latency_ms))


def settle(server, quiet_s: float = 0.5, timeout_s: float = 60) -> None:
    """Wait until no request has arrived or finished for `quiet_s` (the client is stuck at the hold)."""
    deadline = time.monotonic() + timeout_s
    last = None
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        now = (len(server.calls), len(server.finished_calls()))
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
        time.sleep(0.05)
    raise TimeoutError("the run never settled at the hold point")


def usage_total(calls) -> tuple[int, int, int]:
    return (sum(c.usage["prompt_tokens"] for c in calls), sum(c.usage["completion_tokens"] for c in calls),
            sum(c.usage["completion_tokens_details"]["reasoning_tokens"] for c in calls))


def outcome_view(run: RunDir) -> dict:
    summary = run.read_summary()
    candidates = read_jsonl(run.candidates)
    return {"best": summary["best"], "stop_reason": summary["stop_reason"],
            "iterations": summary["iterations_done"], "series": summary["series"],
            "candidates": sorted((c["id"], c["code_hash"], c["result"]["status"], c["result"]["latency_ms"])
                                 for c in candidates),
            "tokens": (summary["cost"]["prompt_tokens"], summary["cost"]["completion_tokens"],
                       summary["cost"]["reasoning_tokens"]),
            "calls": summary["cost"]["calls"], "experiences_added": summary["experiences_added"]}


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_finished_work(tmp_path, fake_openai, monkeypatch):
    rules = load_rules(write_rules(tmp_path / "answers.json", marker_rules()))

    server = fake_openai(rules, hold_if=hold)
    run = RunDir(tmp_path / "killed")
    process = driver("start", str(config_for(tmp_path, "killed", server.base_url)), str(run.root),
                     eval_delay_s=EVAL_DELAY_S)
    try:
        assert server.wait_for_parked(timeout_s=120), "the run never reached the hold point"
        settle(server)
        finished_before = server.finished_calls()
        assert len(finished_before) == ROUND_0_AND_PLANS + 2
        in_flight = {e["code_hash"] for e in read_jsonl(run.evaluations)}
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    n_before = len(server.calls)
    assert not run.summary.exists() or run.read_summary()["status"] == "running"  # the last partial write
    from accelopt_graph.run import run_status

    assert run_status(run) == "interrupted"  # its process is gone
    evaluated_before = {e["code_hash"] for e in read_jsonl(run.evaluations)}
    assert evaluated_before, "the killed session had evaluated kernels before the kill"
    assert evaluated_before == in_flight, "an evaluation finished while the test was killing the run"
    assert marker_hash(6.4) not in evaluated_before, "the kill must land while 6.4 ms kernels are evaluated"

    server.drop_parked()
    finish(driver("resume", str(run.root)))
    after = server.calls[n_before:]
    assert after and all(c.finished for c in after)

    reference_server = fake_openai(rules)
    reference = RunDir(tmp_path / "uninterrupted")
    task = MarkerTask()
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-test")
    run_optimization(Settings.from_yaml(config_for(tmp_path, "uninterrupted", reference_server.base_url)),
                     task.name, task=task, backend=MarkerBackend(), run_dir=reference.root)

    # LLM calls: before-kill + after-resume is exactly the uninterrupted run's multiset of prompts.
    assert (Counter(c.prompt_sha for c in finished_before) + Counter(c.prompt_sha for c in after)
            == Counter(c.prompt_sha for c in reference_server.calls))
    # Evaluations: nothing the killed session finished was evaluated again.
    sessions = [e["session"] for e in read_jsonl(run.evaluations)]
    assert set(sessions) == {0, 1}
    evaluated_after = {e["code_hash"] for e in read_jsonl(run.evaluations) if e["session"] == 1}
    assert evaluated_before.isdisjoint(evaluated_after)
    assert evaluated_before | evaluated_after == {e["code_hash"] for e in read_jsonl(reference.evaluations)}

    # Same result, and the ledger counts every call that was paid exactly once.
    resumed, uninterrupted = outcome_view(run), outcome_view(reference)
    assert resumed == uninterrupted
    assert resumed["tokens"] == usage_total(finished_before + after) == usage_total(reference_server.calls)
    manifest = run.read_manifest()
    assert [s.outcome for s in manifest.sessions] == ["running", "finished"]
    assert json.loads(run.summary.read_text())["status"] == "finished"


CLI_SEARCH = {"iterations": 1, "beam_width": 2, "plans_per_candidate": 2, "samples_per_plan": 2,
              "fixer_steps": 0, "retry_backoff_s": 0.0, "malformed_retries": 0, "max_concurrency": 4}
# Round 0: 2 planner, 2 executor, 1 summarizer call; the hold lets 2 of round 1's 4 planner calls
# finish, so the kill lands inside a superstep whose other branches are already checkpointed.
CLI_HOLD_AFTER = 7


def accelopt(*args: str) -> subprocess.Popen:
    return subprocess.Popen(["accelopt", *args], env={**os.environ, "FAKE_OPENAI_KEY": "sk-test"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_cli_run_killed_and_resumed_with_accelopt_resume(tmp_path, fake_openai):
    from .scripts import SILU_PARAMS, silu_rules

    rules = load_rules(write_rules(tmp_path / "answers.json", silu_rules()))
    params = [arg for k, v in SILU_PARAMS.items() for arg in ("--param", f"{k}={v}")]

    def config(name: str, base_url: str) -> str:
        # Memory off here (the library test above resumes with a real Chroma store): ~5 s per process.
        return str(write_config(tmp_path / f"{name}.yaml", run_config(
            tmp_path / name, base_url, search=CLI_SEARCH, backend={"workers": 2, "seeds": [0]},
            memory={"enabled": False})))

    reference_server = fake_openai(rules)
    reference = RunDir(tmp_path / "uninterrupted")
    out = finish(accelopt("optimize", "silu", "--config", config("uninterrupted", reference_server.base_url),
                          "--run-dir", str(reference.root), "--quiet", *params))
    assert "speedup" in out and "latencies simulated" in out

    server = fake_openai(rules, hold_after=CLI_HOLD_AFTER)
    run = RunDir(tmp_path / "killed")
    process = accelopt("optimize", "silu", "--config", config("killed", server.base_url),
                       "--run-dir", str(run.root), "--quiet", *params)
    try:
        assert server.wait_for_parked(timeout_s=180), "the run never reached the hold point"
        settle(server)
        finished_before = server.finished_calls()
        assert len(finished_before) == CLI_HOLD_AFTER
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    n_before = len(server.calls)
    evaluated_before = {e["code_hash"] for e in read_jsonl(run.evaluations)}
    server.drop_parked()
    out = finish(accelopt("resume", str(run.root), "--quiet"))
    assert "status finished" in out
    after = server.calls[n_before:]

    assert (Counter(c.prompt_sha for c in finished_before) + Counter(c.prompt_sha for c in after)
            == Counter(c.prompt_sha for c in reference_server.calls))
    evaluated_after = {e["code_hash"] for e in read_jsonl(run.evaluations) if e["session"] == 1}
    assert evaluated_before and evaluated_before.isdisjoint(evaluated_after)
    resumed, uninterrupted = outcome_view(run), outcome_view(reference)
    assert resumed == uninterrupted
    assert resumed["best"]["speedup"] > 1.2  # the fused kernel, measured by the simulator
    assert "nl.silu" in run.best_kernel.read_text()
    report = finish(accelopt("report", str(run.root)))
    assert "status finished" in report and "planner" in report
