"""The LLM call wrapper: retries, failed calls recorded (never raised), the persistent reply cache,
the evaluation cache, and the missing-endpoint message."""
from __future__ import annotations

import asyncio

import pytest

from accelopt_graph.context import make_context
from accelopt_graph.eval_cache import EvalCache
from accelopt_graph.llm import NoEndpointConfigured, call_role, make_models, messages_for
from accelopt_graph.memory.store import NullExperienceStore
from accelopt_graph.parsing import parse_plan
from accelopt_graph.settings import Settings
from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus

from .conftest import marker_models, small_settings
from .fakes import MarkerBackend, ScriptedChatModel


class Flaky(ScriptedChatModel):
    """Fails the first `failures` calls with a connection error."""

    failures: int = 0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        if len(self.calls) < self.failures:
            self._calls.append("failed")
            raise ConnectionError("503 upstream unavailable")
        return super()._generate(messages, stop, run_manager, **kwargs)


def context(tmp_path, task, planner, **search):
    models = {**marker_models(), "planner": planner}
    return make_context(small_settings(tmp_path, **search), task, models=models, backend=MarkerBackend(),
                        store=NullExperienceStore(), run_dir=tmp_path / "run")


def ask(ctx, key="k"):
    return asyncio.run(call_role(ctx, "planner", messages_for("sys", "user"), call_key=key, iteration=0,
                                 parse=parse_plan))


def test_transient_errors_are_retried_then_succeed(tmp_path, marker_task):
    ctx = context(tmp_path, marker_task, Flaky(rules=[("user", "**Plan**\nDo it.")], failures=2), llm_retries=2)
    out = ask(ctx)
    assert out.ok and out.value.title == "Plan"
    assert [c.ok for c in out.calls] == [False, False, True]
    assert "ConnectionError" in out.calls[0].error


def test_exhausted_retries_become_a_failed_outcome_not_an_exception(tmp_path, marker_task):
    ctx = context(tmp_path, marker_task, Flaky(rules=[("user", "x")], failures=10), llm_retries=1)
    out = ask(ctx)
    assert not out.ok and len(out.calls) == 2 and not any(c.ok for c in out.calls)


def test_malformed_answers_are_re_asked(tmp_path, marker_task):
    ctx = context(tmp_path, marker_task, ScriptedChatModel(rules=[("user", "   ")]), malformed_retries=2)
    out = ask(ctx)
    assert not out.ok and out.error == "malformed answer" and len(out.calls) == 3


def test_cache_replays_finished_calls_with_their_usage(tmp_path, marker_task):
    first = ScriptedChatModel(rules=[("user", "**Plan**\nDo it.")])
    out1 = ask(context(tmp_path, marker_task, first))
    second = ScriptedChatModel(rules=[("user", "**Other**")])  # a new process, same run directory
    out2 = ask(context(tmp_path, marker_task, second))
    assert second.calls == [] and out2.value.title == "Plan"
    assert out2.calls[0].cached and out2.calls[0].prompt_tokens == out1.calls[0].prompt_tokens > 0
    out3 = ask(context(tmp_path, marker_task, second), key="another sample")
    assert len(second.calls) == 1 and out3.value.title == "Other"


def test_budget_stops_calls(tmp_path, marker_task):
    ctx = context(tmp_path, marker_task, ScriptedChatModel(rules=[("user", "**Plan**")]))
    ctx.settings = ctx.settings.with_overrides({"budget": {"tokens": 1}})
    ctx.ledger.budget = ctx.settings.budget
    assert ask(ctx).ok
    out = ask(ctx, key="second")
    assert not out.ok and out.error == "skipped: budget_tokens" and out.calls == ()


def test_no_endpoint_message_says_how_to_configure():
    with pytest.raises(NoEndpointConfigured, match=r"models\.planner\.base_url.*configs/vllm.yaml"):
        make_models(Settings())


def test_eval_cache_persists_and_keys_on_settings(tmp_path, marker_task):
    ok = EvalResult(status=EvalStatus.OK, latency_ms=1.0)
    cache = EvalCache(tmp_path / "e.sqlite")
    cache.put(marker_task, "x = 1  # comment", EvalSettings(), ok)
    reopened = EvalCache(tmp_path / "e.sqlite")
    assert reopened.get(marker_task, "x = 1", EvalSettings()) == ok  # normalised hash ignores comments
    assert reopened.get(marker_task, "x = 1", EvalSettings(seeds=(0,))) is None
    reopened.put(marker_task, "y = 2", EvalSettings(), EvalResult(status=EvalStatus.TIMEOUT))
    assert reopened.get(marker_task, "y = 2", EvalSettings()) is None  # timeouts are not replayed


def test_closed_cache_refuses_use(tmp_path, marker_task):
    cache = EvalCache(tmp_path / "e.sqlite")
    cache.close()
    with pytest.raises(RuntimeError, match="used after close"):
        cache.get(marker_task, "x = 1", EvalSettings())


def test_restore_counts_what_earlier_processes_spent(tmp_path, marker_task):
    from accelopt_graph.types import LLMCall

    ctx = context(tmp_path, marker_task, ScriptedChatModel(rules=[("user", "**Plan**")]))
    ctx.settings = ctx.settings.with_overrides({"budget": {"usd": 1.0, "wall_s": 100}})
    ctx.ledger.budget = ctx.settings.budget
    ctx.restore({"ledger": [LLMCall(role="planner", model="m", usd=0.6)], "history": [], "elapsed_s": 10.0})
    assert ctx.ledger.stop_reason() is None and ctx.ledger.wall_s() >= 10.0
    ctx.restore({"ledger": [LLMCall(role="planner", model="m", usd=0.6)] * 2, "history": [], "elapsed_s": 10.0})
    assert ctx.ledger.stop_reason() == "budget_usd"
    ctx.restore({"ledger": [], "history": [], "elapsed_s": 150.0})
    assert ctx.ledger.stop_reason() == "budget_wall_s"


def test_answer_after_a_transport_failure_is_replayed_on_resume(tmp_path, marker_task):
    flaky = Flaky(rules=[("user", "**Plan**\nDo it.")], failures=1)
    first = ask(context(tmp_path, marker_task, flaky))
    assert [c.ok for c in first.calls] == [False, True]
    fresh = ScriptedChatModel(rules=[("user", "**Other**")])
    again = ask(context(tmp_path, marker_task, fresh))  # a resumed process
    assert fresh.calls == [] and again.value.title == "Plan" and again.calls[0].cached
