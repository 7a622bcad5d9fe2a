"""The LangChain tools call any KernelBackend and return JSON-ready views of the result."""
import pytest
from accelopt_graph.tools.backend import EvalResult, EvalSettings, EvalStatus
from accelopt_graph.tools.langchain_tools import make_kernel_tools
from eval_tasks import AddTask


class RecordingBackend:
    """A KernelBackend that answers from a table and records the settings it was called with."""

    name = "recording"

    def __init__(self, status):
        self.status, self.calls = status, []

    def evaluate(self, task, code, settings):
        self.calls.append((task.name, code, settings.seeds))
        ok = self.status is EvalStatus.OK
        return EvalResult(status=self.status, latency_ms=2.0 if ok else None, rel_l2=1e-7,
                          counters={"total_time": 2e-3} if ok else {}, seeds=settings.seeds,
                          error="" if ok else "line 3: boom", backend=self.name)

    def hardware_info(self, hardware):
        return {"name": hardware}


def tools_for(status):
    backend = RecordingBackend(status)
    tools = make_kernel_tools(backend, {"tiny_add": AddTask()},
                              settings=EvalSettings(seeds=(0, 21, 42)))
    return backend, {t.name: t for t in tools}


def test_three_structured_tools_with_task_and_code_arguments():
    _, tools = tools_for(EvalStatus.OK)
    assert set(tools) == {"compile_kernel", "run_kernel", "profile_kernel"}
    for t in tools.values():
        assert set(t.args) == {"task", "code"} and t.description


def test_profile_kernel_returns_latency_counters_and_source():
    backend, tools = tools_for(EvalStatus.OK)
    out = tools["profile_kernel"].invoke({"task": "tiny_add", "code": "K"})
    assert out["correct"] and out["latency_ms"] == 2.0 and out["counters"] == {"total_time": 2e-3}
    assert out["source"] == "simulator" and backend.calls == [("tiny_add", "K", (0, 21, 42))]


def test_compile_kernel_uses_one_seed_and_separates_compile_from_correctness():
    backend, tools = tools_for(EvalStatus.INCORRECT)
    out = tools["compile_kernel"].invoke({"task": "tiny_add", "code": "K"})
    assert out == {"compiled": True, "status": "incorrect", "error": "line 3: boom"}
    assert backend.calls[0][2] == (0,)
    _, tools = tools_for(EvalStatus.COMPILE_ERROR)
    assert tools["compile_kernel"].invoke({"task": "tiny_add", "code": "K"})["compiled"] is False


def test_run_kernel_reports_failure_text():
    _, tools = tools_for(EvalStatus.RUNTIME_ERROR)
    out = tools["run_kernel"].invoke({"task": "tiny_add", "code": "K"})
    assert out["correct"] is False and out["error"] == "line 3: boom"


def test_unknown_task_names_the_known_ones():
    _, tools = tools_for(EvalStatus.OK)
    with pytest.raises(ValueError, match="known tasks: \\['tiny_add'\\]"):
        tools["run_kernel"].invoke({"task": "nope", "code": "K"})


def test_task_resolver_callable_is_accepted():
    backend = RecordingBackend(EvalStatus.OK)
    tools = make_kernel_tools(backend, lambda name: AddTask(name=name))
    assert tools[2].invoke({"task": "silu", "code": "K"})["correct"]
    assert backend.calls[0][0] == "silu"


def test_async_invocation_runs_off_the_event_loop():
    import asyncio

    _, tools = tools_for(EvalStatus.OK)
    out = asyncio.run(tools["profile_kernel"].ainvoke({"task": "tiny_add", "code": "K"}))
    assert out["latency_ms"] == 2.0
